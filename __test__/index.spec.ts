// The live index through the addon as a Node program sees it: grep answers from the index once it is ready
// (summary.index says so) with the scan's hits, sees a write made just before the call, `index: false`
// forces the scan, and the status / warm / drop calls and the CLI's `index` command report what they did.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { native, collect, packageRoot } from "./helpers/native.ts";
import { makeTree } from "./helpers/tree.ts";
import { grepOptionsFor, runGrepTool } from "../extensions/lib/search/grep.mjs";

// The index's postings files go to a folder of this run, never the user's cache (read at each build).
const store = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-index-store-"));
process.env.PI_UTILS_INDEX_DIR = store;
after(() => fs.rmSync(store, { recursive: true, force: true }));

function tree() {
  const files: Record<string, string> = { ".gitignore": "dist/\n", "dist/out.js": "needle built\n", "src/a.ts": "const needle = 1;\n" };
  for (let i = 0; i < 60; i++) files[`src/f${i}.ts`] = `export const hay${i} = ${i};\n`;
  return makeTree(files);
}

async function search(root: string, opts: Record<string, unknown> = {}) {
  const { hits, summary } = await collect(native.grep({ pattern: "needle", path: root, ...opts }));
  return { hits: hits.map((h) => `${h.path}:${h.line}${h.ignored ? " (ignored)" : ""}`), index: summary.index };
}

test("a ready index answers with the scan's hits, sees a write made just before, and index:false scans", async (t) => {
  const { root, cleanup } = tree();
  t.after(() => { native.indexDrop({ path: root }); cleanup(); });
  assert.equal(native.indexStatus({ path: root }).state, "none");
  const ready = await native.indexWarm({ path: root, minFiles: 0 });
  assert.equal(ready.state, "ready");
  assert.equal(ready.files, 63);
  assert.equal(ready.mapped, true, "the postings are a mapped file");
  assert.ok(typeof ready.builtAtMs === "number" && ready.builtAtMs > 0);
  const scan = await search(root, { index: false });
  assert.deepEqual(scan, { hits: ["src/a.ts:1", "dist/out.js:1 (ignored)"], index: "off" });
  assert.deepEqual(await search(root), { ...scan, index: "used" });

  fs.writeFileSync(path.join(root, "src/f7.ts"), "// needle now here\n");
  fs.mkdirSync(path.join(root, "src/new"));
  fs.writeFileSync(path.join(root, "src/new/n.ts"), "needle in a new directory\n");
  const after = await search(root);
  assert.deepEqual(after, { hits: ["src/a.ts:1", "src/f7.ts:1", "src/new/n.ts:1", "dist/out.js:1 (ignored)"], index: "used" });
  assert.deepEqual((await search(root, { index: false })).hits, after.hits);

  // A pattern with no three-byte literal cannot be narrowed: with a limit it walks (it ends in the first
  // files either way); without one the table's files are read in walk order (no directory walk).
  const broad = await collect(native.grep({ pattern: "e", path: root, maxCount: 1 }));
  assert.equal(broad.summary.index, "scan");
  assert.deepEqual(broad.hits.map((h) => h.path), (await collect(native.grep({ pattern: "e", path: root, maxCount: 1, index: false }))).hits.map((h) => h.path));
  const counted = await collect(native.grep({ pattern: "e", path: root, mode: "count" }));
  assert.equal(counted.summary.index, "used");
  assert.deepEqual(counted.hits, (await collect(native.grep({ pattern: "e", path: root, mode: "count", index: false }))).hits);
  // glob lists the file table instead of walking, with the walk's answer (elapsed time aside),
  // and sees a write made just before it: the touched file comes first, newest first.
  const past = new Date(Date.now() - 60_000);
  fs.utimesSync(path.join(root, "src/f3.ts"), past, past);
  fs.writeFileSync(path.join(root, "src/f9.ts"), "export const hay9 = 'rewritten';\n");
  const globBoth = async (opts: { pattern: string } & Record<string, unknown>) => {
    const [via, walked] = [await native.glob({ path: root, ...opts }), await native.glob({ path: root, ...opts, index: false })];
    const strip = (r: typeof via) => ({ ...r, elapsedMs: 0, index: "" });
    assert.deepEqual(strip(via), strip(walked));
    return { via, walked };
  };
  const { via: listed, walked } = await globBoth({ pattern: "*.ts", limit: 5 });
  assert.equal(listed.index, "used");
  assert.equal(walked.index, "off");
  assert.equal(listed.entries[0].path, "src/f9.ts");
  assert.equal(listed.entries[0].size, "export const hay9 = 'rewritten';\n".length);
  assert.equal((await globBoth({ pattern: "*.js" })).via.entries[0].ignored, true);
  // A directory below the root is answered from the root's table too. The table knows directories by path
  // only: a listing of files and directories (the glob tool's) is served when no directory matches, walked
  // when one does.
  assert.equal((await globBoth({ pattern: "*.ts", path: path.join(root, "src/new") })).via.index, "used");
  assert.equal((await globBoth({ pattern: "*.ts", kind: "any" })).via.index, "used");
  const withDir = await globBoth({ pattern: "new", kind: "any" });
  assert.equal(withDir.via.index, "scan");
  assert.deepEqual(withDir.walked.entries.map((e) => e.path), ["src/new"]);
  assert.equal((await globBoth({ pattern: "*", kind: "dir" })).via.index, "scan");

  const folders = fs.readdirSync(store);
  assert.equal(folders.length, 1, "one folder for the root");
  assert.equal((fs.statSync(path.join(store, folders[0])).mode & 0o777), 0o700);
  const folder = path.join(store, folders[0]);
  assert.deepEqual(fs.readdirSync(folder).sort(), ["gen-1", "last-used", "lock"], "one complete generation, the lock, the use mark");
  for (const f of fs.readdirSync(folder)) assert.equal(fs.statSync(path.join(folder, f)).mode & 0o777, 0o600, f);
  assert.equal(ready.reread, undefined, "built from scratch");
  assert.equal(ready.unsaved, undefined, "saved");
  assert.equal(native.indexDrop({ path: root }), true);
  assert.equal(native.indexStatus({ path: root }).state, "none");
  assert.deepEqual(fs.readdirSync(store), [], "drop removed the root's folder");
  assert.equal(native.indexDrop({ path: root }), false);
});

test("an index that cannot be saved still answers, in memory, and the grep tool says so once", async (t) => {
  const { root, cleanup } = tree();
  // A regular file where the store folder should be: nothing can be written there.
  const blocked = path.join(store, "not-a-folder");
  fs.writeFileSync(blocked, "");
  process.env.PI_UTILS_INDEX_DIR = blocked;
  t.after(() => { native.indexDrop({ path: root }); process.env.PI_UTILS_INDEX_DIR = store; fs.rmSync(blocked); cleanup(); });
  const ready = await native.indexWarm({ path: root, minFiles: 0 });
  assert.equal(ready.state, "ready");
  assert.equal(ready.mapped, false, "held in memory");
  assert.match(ready.unsaved ?? "", /cannot create .*Not a directory/);
  const config = { cwd: root, timeoutMs: 30000, graceMs: 3000, noIgnore: true, maxLineLength: 500, maxBytes: 51200, defaultLimit: 100 };
  const first = await runGrepTool(native, { pattern: "needle", group: false }, config);
  assert.ok(first.text.startsWith("src/a.ts:1: const needle = 1;\n\n["), first.text);
  assert.match(first.text, /\[.*The index of this directory could not be saved \(cannot create .*\): it is kept in memory and rebuilt by the next process\]$/s);
  const second = await runGrepTool(native, { pattern: "needle", group: false }, config);
  assert.doesNotMatch(second.text, /could not be saved/, "told once");
  assert.deepEqual((await search(root)).index, "used");
});

test("PI_UTILS_INDEX_DIR naming a folder that does not exist yet: it is created private, as any cache folder, and the index is saved", async (t) => {
  const { root, cleanup } = tree();
  const fresh = path.join(store, "not-yet", "index");
  process.env.PI_UTILS_INDEX_DIR = fresh;
  t.after(() => { native.indexDrop({ path: root }); process.env.PI_UTILS_INDEX_DIR = store; cleanup(); });
  const ready = await native.indexWarm({ path: root, minFiles: 0 });
  assert.equal(ready.unsaved, undefined, "saved");
  assert.equal(ready.mapped, true);
  assert.equal(fs.statSync(fresh).mode & 0o777, 0o700);
  assert.equal(fs.readdirSync(fresh).length, 1, "the root's folder in it");
});

test("a tree below index.minFiles is not indexed, and warm rejects with the reason", async (t) => {
  const { root, cleanup } = tree();
  t.after(() => { native.indexDrop({ path: root }); cleanup(); });
  await assert.rejects(native.indexWarm({ path: root, minFiles: 1000 }), /63 files, fewer than index.minFiles \(1000\)/);
  const status = native.indexStatus({ path: root });
  assert.equal(status.state, "off");
  assert.match(status.reason ?? "", /fewer than index.minFiles/);
  assert.equal((await search(root)).index, "off");
  await assert.rejects(native.indexWarm({ path: root, maxFiles: 10, minFiles: 0 }), /more files than index.maxFiles \(10\)/);
});

test("the first search of a directory starts its index, searches scan until it is ready", async (t) => {
  const { root, cleanup } = tree();
  t.after(() => { native.indexDrop({ path: root }); cleanup(); });
  native.indexStart({ path: root, minFiles: 0 });
  const first = await search(root);
  assert.ok(["building", "used"].includes(first.index), first.index);
  await native.indexWarm({ path: root, minFiles: 0 });
  assert.equal((await search(root)).index, "used");
});

test("indexWarm stops waiting when its signal aborts, and an aborted signal is refused at once", async (t) => {
  const { root, cleanup } = tree();
  t.after(() => { native.indexDrop({ path: root }); cleanup(); });
  const aborted = AbortSignal.abort();
  assert.throws(() => native.indexWarm({ path: root, minFiles: 0, signal: aborted }), { code: "CANCELLED" });
});

test("the index.enabled setting off makes the grep tool pass index:false", () => {
  const opts = grepOptionsFor({ pattern: "x" }, { cwd: "/", timeoutMs: 1, graceMs: 1, noIgnore: true, maxLineLength: 10, maxBytes: 10, defaultLimit: 1, index: false });
  assert.equal(opts.index, false);
  const on = grepOptionsFor({ pattern: "x" }, { cwd: "/", timeoutMs: 1, graceMs: 1, noIgnore: true, maxLineLength: 10, maxBytes: 10, defaultLimit: 1, index: true });
  assert.equal(on.index, undefined);
});

test("pi-utils index warm|status|drop", (t) => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 1001; i++) files[`d${i % 10}/f${i}.txt`] = `line ${i}\n`;
  const { root, cleanup } = makeTree(files);
  t.after(cleanup);
  const cli = path.join(packageRoot, "bin/pi-utils.mjs");
  const run = (...args: string[]) => spawnSync(process.execPath, [cli, "index", ...args], { cwd: root, encoding: "utf-8", timeout: 60000 });
  // Files stamped within 2 s of a build are read again by the next process (coarse filesystem clocks):
  // let the tree age past that so the second warm shows a pure re-validation.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2100);
  const warm = run("warm");
  assert.equal(warm.status, 0, warm.stderr);
  assert.match(warm.stdout, /^ready: 1001 files, [\d.]+ MB of postings mapped from the store, built in \d+ ms\n$/);
  // The next process takes the saved index over: one walk, nothing read again.
  const again = run("warm");
  assert.equal(again.status, 0, again.stderr);
  assert.match(again.stdout, /^ready: 1001 files, [\d.]+ MB of postings mapped from the store, re-validated \(0 files read again\) in \d+ ms\n$/);
  const status = run("status", root);
  assert.equal(status.status, 1);
  assert.equal(status.stdout, "none\n");
  const drop = run("drop");
  assert.equal(drop.status, 0, drop.stdout);
  assert.equal(drop.stdout, "dropped\n");
  const dropAgain = run("drop");
  assert.equal(dropAgain.status, 1);
  assert.equal(dropAgain.stdout, "no index of this directory, in this process or in the store\n");
  const bad = run("rebuild");
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /index takes status, warm or drop/);
});

test("a build in progress does not keep Node running: a process that starts one exits at once", (t) => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 3000; i++) files[`d${i % 30}/f${i}.txt`] = `line ${i} `.repeat(200);
  const { root, cleanup } = makeTree(files);
  t.after(cleanup);
  const script = `const m = require(${JSON.stringify(path.join(packageRoot, "index.js"))}); console.log(m.indexStart({ path: ${JSON.stringify(root)}, minFiles: 0 }).state);`;
  const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf-8", timeout: 20000, env: { ...process.env, PI_UTILS_INDEX_DIR: store } });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, "building\n", "it returned while the build was still running, and the process ended");
});

test("locate and trace list a ready index's table instead of walking, with the walk's text, and see a write made just before", async (t) => {
  const { root, cleanup } = tree();
  t.after(() => { native.indexDrop({ path: root }); cleanup(); });
  // No index of its own: discovery walks until one is ready.
  assert.equal((await native.locate({ query: "f7", cwd: root })).index, "off");
  assert.equal(native.indexStatus({ path: root }).state, "none", "locate started no index");
  await native.indexWarm({ path: root, minFiles: 0 });

  fs.writeFileSync(path.join(root, "src/authStatus.ts"), "export function renderAuthStatus() { return needle; }\nrenderAuthStatus();\n");
  for (const query of ["auth status", "f7", "out"]) {
    const via = await native.locate({ query, cwd: root });
    const walked = await native.locate({ query, cwd: root, index: false });
    assert.equal(via.index, "used");
    assert.equal(walked.index, "off");
    assert.equal(via.text, walked.text, query);
    assert.deepEqual([via.candidates, via.filesSeen, via.ignoredUnsearched], [walked.candidates, walked.filesSeen, walked.ignoredUnsearched]);
  }
  assert.equal((await native.locate({ query: "auth status", cwd: root })).files[0].path, "src/authStatus.ts");

  const query = "subject:AuthStatus relation:called_from";
  const via = await native.trace({ query, cwd: root });
  const walked = await native.trace({ query, cwd: root, index: false });
  assert.equal(via.index, "used");
  assert.equal(via.text, walked.text);
  assert.equal(via.filesScanned, walked.filesScanned, "files the postings rule out still count as searched");
  assert.equal(via.bestFile, "src/authStatus.ts");
});

test("a reader thread that panics mid-build leaves its files unindexed: the index is ready, answers as the scan does, and Node lives", (t) => {
  const files: Record<string, string> = { "src/a.ts": "const needle = 1;\n" };
  for (let i = 0; i < 40; i++) files[`src/f${i}.ts`] = i % 7 ? `export const hay${i} = ${i};\n` : `// needle ${i}\n`;
  const { root, cleanup } = makeTree(files);
  const own = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-index-fault-"));
  t.after(() => { cleanup(); fs.rmSync(own, { recursive: true, force: true }); });
  const script = `(async () => {
    const m = require(${JSON.stringify(path.join(packageRoot, "index.js"))});
    const hits = async (index) => {
      const s = m.grep({ path: ${JSON.stringify(root)}, pattern: "needle", index });
      const out = [];
      for (let b = await s.nextBatch(); b; b = await s.nextBatch()) out.push(...b.map((h) => h.path + ":" + h.line));
      return { out, index: s.summary().index };
    };
    const status = await m.indexWarm({ path: ${JSON.stringify(root)}, minFiles: 0 });
    console.log(JSON.stringify({ state: status.state, files: status.files, viaIndex: await hits(true), scan: await hits(false) }));
  })();`;
  const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf-8", timeout: 30000, env: { ...process.env, PI_UTILS_INDEX_DIR: own, PI_UTILS_FAULT: "index-read" } });
  assert.equal(r.status, 0, `node must not abort: ${r.stderr}`);
  assert.match(r.stderr, /injected fault at index-read/, "the fault was hit");
  const out = JSON.parse(r.stdout);
  assert.equal(out.state, "ready");
  assert.equal(out.files, 41);
  assert.equal(out.viaIndex.index, "used");
  assert.equal(out.scan.index, "off");
  assert.deepEqual(out.viaIndex.out, out.scan.out);
  assert.equal(out.scan.out.length, 7, JSON.stringify(out.scan.out));
});
