// The native API as npm consumers and the extensions see it, including every bad input the core rejects
// (bad patterns, empty patterns, missing paths) and the file-system oddities it must survive.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { native, collect, packageRoot } from "./helpers/native.ts";
import { makeTree } from "./helpers/tree.ts";

test("content search returns ordered hits with merged context and a summary", async (t) => {
  const tree = makeTree({ "b.txt": "one\nneedle\nthree\nneedle\nfive\n", "a.txt": "needle\n" });
  t.after(tree.cleanup);
  const { hits, summary } = await collect(native.grep({ pattern: "needle", path: tree.root, context: 1 }));
  assert.deepEqual(hits.map((h) => `${h.path}:${h.line}`), ["a.txt:1", "b.txt:2", "b.txt:4"]);
  const shown = hits.flatMap((h) => [...h.contextBefore, ...h.contextAfter].map((c) => `${h.path}:${c.line}`));
  assert.deepEqual(shown, ["b.txt:1", "b.txt:3", "b.txt:5"], "line 3 sits in two windows but appears once");
  assert.equal(summary.matches, 3);
  assert.equal(summary.filesWithMatches, 2);
  assert.equal(summary.limitReached, false);
});

test("relative path resolves against cwd", async (t) => {
  const tree = makeTree({ "sub/x.rs": "fn main() {}\n" });
  t.after(tree.cleanup);
  const { hits } = await collect(native.grep({ pattern: "main", path: "sub", cwd: tree.root }));
  assert.deepEqual(hits.map((h) => h.path), ["x.rs"]);
});

test("invalid regex error carries the engine's explanation", () => {
  assert.throws(() => native.grep({ pattern: "foo(", path: "." }), /unclosed group/);
});

test("empty pattern and missing path are clear errors", () => {
  assert.throws(() => native.grep({ pattern: "" }), /Pattern must not be empty/);
  assert.throws(() => native.grep({ pattern: "x", path: "/definitely/not/here" }), /^Error: Path not found: \/definitely\/not\/here$/);
  assert.throws(() => native.grep({ pattern: "x", mode: "lines" as never }), /Invalid mode: lines/);
  assert.throws(() => native.grep({ pattern: "x", type: "nosuchlang" }), /Unknown file type: nosuchlang/);
});

test("an already aborted signal rejects at once", async () => {
  const ac = new AbortController();
  ac.abort();
  assert.throws(() => native.grep({ pattern: "x", signal: ac.signal }), /AbortError/);
  assert.throws(() => native.glob({ pattern: "*", signal: ac.signal }), /AbortError/);
});

test("a FIFO and a symlink loop in the tree neither hang nor error", async (t) => {
  const tree = makeTree({ "a.txt": "needle\n" });
  t.after(tree.cleanup);
  assert.equal(spawnSync("mkfifo", [path.join(tree.root, "pipe")]).status, 0);
  fs.symlinkSync(tree.root, path.join(tree.root, "loop"));
  const { hits, summary } = await collect(native.grep({ pattern: "needle", path: tree.root }));
  assert.deepEqual(hits.map((h) => h.path), ["a.txt"]);
  assert.equal(summary.errorCount, 0);
  assert.throws(() => native.grep({ pattern: "x", path: path.join(tree.root, "pipe") }), /FIFO/);
});

test("unreadable entries are counted and the search goes on", async (t) => {
  const tree = makeTree({ "a.txt": "needle\n", "b.txt": "needle\n", "locked/c.txt": "needle\n", "secret.txt": "needle\n" });
  t.after(tree.cleanup);
  fs.chmodSync(tree.root, 0o755);
  fs.chmodSync(path.join(tree.root, "locked"), 0o000);
  fs.chmodSync(path.join(tree.root, "secret.txt"), 0o000);
  // Root reads everything, so run the search as an unprivileged user. That user may not be able to
  // reach this checkout (a clone under a 0700 mktemp dir), so it loads a copy of the loader and addon.
  const loader = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-loader-"));
  t.after(() => fs.rmSync(loader, { recursive: true, force: true }));
  fs.chmodSync(loader, 0o755);
  for (const f of fs.readdirSync(packageRoot).filter((f) => f === "index.js" || f.endsWith(".node"))) {
    fs.copyFileSync(path.join(packageRoot, f), path.join(loader, f));
    fs.chmodSync(path.join(loader, f), 0o755);
  }
  const script = `const n = require(${JSON.stringify(loader + "/index.js")});
    const s = n.grep({ pattern: "needle", path: ${JSON.stringify(tree.root)} });
    (async () => { const hits = []; for (let b; (b = await s.nextBatch()); ) hits.push(...b);
      console.log(JSON.stringify({ paths: hits.map((h) => h.path), summary: s.summary() })); })();`;
  const asRoot = process.getuid?.() === 0;
  const cmd = asRoot ? "setpriv" : process.execPath;
  const args = asRoot ? ["--reuid=nobody", "--regid=nogroup", "--clear-groups", process.execPath, "-e", script] : ["-e", script];
  const run = spawnSync(cmd, args, { encoding: "utf8", timeout: 20_000 });
  assert.equal(run.status, 0, run.stderr);
  const { paths, summary } = JSON.parse(run.stdout);
  assert.deepEqual(paths, ["a.txt", "b.txt"]);
  assert.equal(summary.errorCount, 2);
  assert.ok(summary.errors.some((e: string) => /Permission denied/.test(e)), summary.errors.join("; "));
});

test("binary files are skipped and counted", async (t) => {
  const tree = makeTree({ "bin.dat": Buffer.from("needle\0\u0001"), "t.txt": "needle\n" });
  t.after(tree.cleanup);
  const { hits, summary } = await collect(native.grep({ pattern: "needle", path: tree.root }));
  assert.deepEqual(hits.map((h) => h.path), ["t.txt"]);
  assert.equal(summary.binarySkipped, 1);
});

test("non-UTF-8 names get the #b= display and raw pathBytes", async (t) => {
  const tree = makeTree({});
  t.after(tree.cleanup);
  fs.writeFileSync(Buffer.concat([Buffer.from(tree.root + "/a"), Buffer.from([0xff]), Buffer.from(".txt")]), "needle\n");
  fs.writeFileSync(Buffer.concat([Buffer.from(tree.root + "/a"), Buffer.from([0xfe]), Buffer.from(".txt")]), "needle\n");
  const { hits } = await collect(native.grep({ pattern: "needle", path: tree.root }));
  assert.deepEqual(hits.map((h) => h.path), ["a\uFFFD.txt#b=fe", "a\uFFFD.txt#b=ff"]);
  assert.deepEqual(hits.map((h) => h.pathBytes), ["61fe2e747874", "61ff2e747874"]);
  const files = await native.glob({ pattern: "*.txt", path: tree.root, sort: "path" });
  assert.deepEqual(files.entries.map((e) => e.path), ["a\uFFFD.txt#b=fe", "a\uFFFD.txt#b=ff"]);
});

test("a huge single-line file is windowed inside Rust", async (t) => {
  const line = "a".repeat(20_000_000) + "needle" + "b".repeat(20_000_000);
  const tree = makeTree({ "min.js": line });
  t.after(tree.cleanup);
  const { hits } = await collect(native.grep({ pattern: "needle", path: tree.root, maxLineLength: 300 }));
  assert.equal(hits.length, 1);
  assert.equal(hits[0].text.length, 300);
  assert.ok(hits[0].text.includes("needle"));
  assert.equal(hits[0].cutBefore + 300 + hits[0].cutAfter, line.length);
});

function bigTree(files: number, linesPerFile: number) {
  const body = "match me\n".repeat(linesPerFile);
  const spec: Record<string, string> = {};
  for (let i = 0; i < files; i++) spec[`d${i % 20}/f${i}.txt`] = body;
  return makeTree(spec);
}

test("abort during a search stops it with partial results, every hit it counted delivered", async (t) => {
  const tree = bigTree(3000, 200);
  t.after(tree.cleanup);
  const ac = new AbortController();
  const search = native.grep({ pattern: "match", path: tree.root, signal: ac.signal, threads: 1 });
  const first = await search.nextBatch();
  assert.ok(first && first.length > 0);
  ac.abort();
  let more = 0;
  for (let b = await search.nextBatch(); b; b = await search.nextBatch()) more += b.length;
  const summary = search.summary()!;
  assert.equal(summary.cancelled, true);
  assert.equal(summary.timedOut, false);
  assert.ok(summary.filesSearched < 3000, `searched ${summary.filesSearched}`);
  // The search stopped short of the whole tree, and the hits delivered are exactly the ones it counted.
  assert.ok(summary.matches < 3000 * 200, `matched ${summary.matches}`);
  assert.equal(first.length + more, summary.matches);
});

test("timeoutMs returns partial results flagged timedOut", async (t) => {
  const tree = bigTree(3000, 200);
  t.after(tree.cleanup);
  const search = native.grep({ pattern: "match", path: tree.root, timeoutMs: 30, threads: 1 });
  // A slow consumer: the deadline must still end the search, and the stream with it.
  let delivered = 0;
  for (let b = await search.nextBatch(); b; b = await search.nextBatch()) {
    delivered += b.length;
    await new Promise((r) => setTimeout(r, 5));
  }
  const summary = search.summary()!;
  assert.equal(summary.timedOut, true);
  assert.equal(summary.cancelled, false);
  assert.ok(summary.filesSearched < 3000, `searched ${summary.filesSearched}`);
  assert.equal(delivered, summary.matches);
});

test("four long searches do not stall fs.readFile (work is off libuv's pool)", async (t) => {
  const tree = bigTree(400, 500);
  t.after(tree.cleanup);
  // Nobody pulls these: they fill their channels and wait. Were they on
  // libuv's 4-thread pool, every fs call in the process would wait behind
  // them forever; a generous bound keeps the check immune to machine load.
  const searches = Array.from({ length: 4 }, () => native.grep({ pattern: "match", path: tree.root }));
  await new Promise((r) => setTimeout(r, 50));
  const read = fs.promises.readFile(path.join(tree.root, "d0/f0.txt")).then(() => "read");
  const stall = new Promise((r) => setTimeout(() => r("stalled"), 5000));
  const winner = await Promise.race([read, stall]);
  const stillRunning = searches.every((s) => s.summary() === null);
  searches.forEach((s) => s.cancel());
  for (const s of searches) while (await s.nextBatch());
  assert.equal(winner, "read");
  assert.ok(stillRunning, "the searches were still holding their threads while readFile ran");
});

test("glob lists newest first, project before ignored, with totals", async (t) => {
  const tree = makeTree({ ".gitignore": "node_modules/\n", "node_modules/p/new.js": "", "src/a.js": "", "src/b.js": "" });
  t.after(tree.cleanup);
  const now = Date.now() / 1000;
  fs.utimesSync(path.join(tree.root, "src/a.js"), now - 300, now - 300);
  fs.utimesSync(path.join(tree.root, "src/b.js"), now - 100, now - 100);
  const r = await native.glob({ pattern: "*.js", path: tree.root });
  assert.deepEqual(r.entries.map((e) => [e.path, e.ignored]), [["src/b.js", false], ["src/a.js", false], ["node_modules/p/new.js", true]]);
  assert.equal(r.total, 3);
  assert.deepEqual(r.ignored, [{ path: "node_modules/", matches: 1 }]);
  const respected = await native.glob({ pattern: "*.js", path: tree.root, noIgnore: false });
  assert.deepEqual(respected.entries.map((e) => e.path), ["src/b.js", "src/a.js"]);
});

test("glob rejects bad input clearly", () => {
  assert.throws(() => native.glob({ pattern: "" }), /pattern must not be empty/);
  assert.throws(() => native.glob({ pattern: "a[" }), /Invalid glob/);
  assert.throws(() => native.glob({ pattern: "*", path: "/no/such/dir" }), /Path not found: \/no\/such\/dir/);
});

// A panic must reach JS as an error and leave the host running. Each case
// runs in its own Node process with the fault injected through the env.
for (const [point, expectation] of [
  ["grep-call", "the call throws"],
  ["grep-file", "the summary reports the failure"],
] as const) {
  test(`a Rust panic at ${point} becomes a JS error (${expectation}), not an abort`, async (t) => {
    const tree = makeTree({ "a.txt": "needle\n" });
    t.after(tree.cleanup);
    const script = `const n = require(${JSON.stringify(packageRoot + "/index.js")});
      (async () => {
        let outcome;
        try {
          const s = n.grep({ pattern: "needle", path: ${JSON.stringify(tree.root)} });
          while (await s.nextBatch());
          outcome = { summary: s.summary() };
        } catch (e) { outcome = { thrown: String(e && e.message) }; }
        await new Promise((r) => setTimeout(r, 20));
        console.log(JSON.stringify({ ...outcome, alive: true }));
      })();`;
    const run = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 20_000, env: { ...process.env, PI_UTILS_FAULT: point } });
    assert.equal(run.status, 0, `node must not abort: ${run.stderr}`);
    const out = JSON.parse(run.stdout);
    assert.equal(out.alive, true);
    if (point === "grep-call") {
      assert.match(out.thrown, /panic|injected fault/i);
    } else {
      assert.ok(out.summary.errors.some((e: string) => /panicked/.test(e)), JSON.stringify(out.summary));
    }
  });
}
