// The one renderer behind the grep/glob tools and the CLI: Pi-compatible text, notices,
// truncation and spill files, and the timeout/abort rules. Content cases run the real native
// core; the hand-written backends below only stand in for the native side's timing.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import fc from "fast-check";
import {
  createGrepToolDefinition,
  formatSize as piFormatSize,
  truncateHead as piTruncateHead,
} from "@mariozechner/pi-coding-agent";
import type { GlobResult, GrepHit, GrepOptions, GrepSummary } from "../index.d.ts";
import { formatSize, truncateHead } from "../extensions/lib/truncate.mjs";
import { formatGrepHits, runGrepTool, type GrepBackend, type GrepRunConfig } from "../extensions/lib/search/grep.mjs";
import { runGlobTool, type GlobBackend, type GlobRunConfig } from "../extensions/lib/search/glob.mjs";
import { SPILL_RETENTION_MS, sweepSpillFiles } from "../extensions/lib/search/toolkit.mjs";
import { native } from "./helpers/native.ts";
import { makeTree } from "./helpers/tree.ts";

const grepConfig = (cwd: string, over: Partial<GrepRunConfig> = {}): GrepRunConfig => ({
  cwd,
  timeoutMs: 30000,
  graceMs: 3000,
  noIgnore: true,
  maxLineLength: 500,
  maxBytes: 51200,
  defaultLimit: 100,
  ...over,
});
const globConfig = (cwd: string, over: Partial<GlobRunConfig> = {}): GlobRunConfig => ({
  cwd,
  timeoutMs: 10000,
  graceMs: 2000,
  noIgnore: true,
  defaultLimit: 200,
  maxBytes: 51200,
  ...over,
});

function hit(p: string, line: number, text: string, extra: Partial<GrepHit> = {}): GrepHit {
  return { path: p, ignored: false, line, column: 1, text, cutBefore: 0, cutAfter: 0, contextBefore: [], contextAfter: [], count: 1, ...extra };
}

function summaryOf(over: Partial<GrepSummary> = {}): GrepSummary {
  return {
    matches: 0, filesWithMatches: 0, filesSearched: 0, limitReached: false, timedOut: false, cancelled: false,
    binarySkipped: 0, binaryStopped: [], errorCount: 0, errors: [], ignored: [], ignoredUnsearched: [], elapsedMs: 1, index: "off", ...over,
  };
}

/** Delivers `batches`, then either ends with `summary` or, when `hang`, never answers again. */
function scriptedBackend(batches: GrepHit[][], opts: { hang?: boolean; summary?: GrepSummary } = {}) {
  const state = { cancelled: 0, calls: [] as GrepOptions[] };
  const backend: GrepBackend = {
    grep(o) {
      state.calls.push(o);
      let i = 0;
      return {
        async nextBatch() {
          if (i < batches.length) return batches[i++];
          if (opts.hang) return new Promise<never>(() => {});
          return null;
        },
        summary: () => opts.summary ?? summaryOf({ matches: batches.flat().length }),
        cancel: () => void state.cancelled++,
      };
    },
  };
  return { backend, state };
}

test("truncateHead and formatSize match Pi's own implementation", async () => {
  const piece = fc.oneof(fc.constantFrom("\n", "\n\n", "é", "😀", "abc"), fc.string({ maxLength: 30 }));
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 40 }), fc.integer({ min: 0, max: 200 }), fc.integer({ min: 1, max: 20 }), (parts, maxBytes, maxLines) => {
      const s = parts.join("");
      assert.equal(JSON.stringify(truncateHead(s, { maxBytes, maxLines })), JSON.stringify(piTruncateHead(s, { maxBytes, maxLines })));
      assert.deepEqual(truncateHead(s), piTruncateHead(s));
    }),
    { numRuns: 300 },
  );
  for (const n of [0, 1023, 1024, 51200, 1048575, 1048576, 5 * 1024 * 1024]) assert.equal(formatSize(n), piFormatSize(n));
  assert.equal(truncateHead("x".repeat(10) + "\nshort", { maxBytes: 5 }).firstLineExceedsLimit, true);
});

test("content with context: Pi's line format, overlapping windows merged, no line twice", async (t) => {
  const tree = makeTree({ "src/a.ts": "one\nneedle\nthree\nneedle\nfive\nsix\n", "b.md": "needle\n" });
  t.after(tree.cleanup);
  const r = await runGrepTool(native, { pattern: "needle", context: 1 }, grepConfig(tree.root));
  assert.equal(r.text, ["b.md:1: needle", "src/a.ts-1- one", "src/a.ts:2: needle", "src/a.ts-3- three", "src/a.ts:4: needle", "src/a.ts-5- five"].join("\n"));
  assert.equal(r.details, undefined);
});

test("the limit keeps the last match's after-context, a match inside it printed as rg -m1 -C2 prints it", async (t) => {
  const tree = makeTree({ m: "a\nb\nc\nd\ne\nd\ne\nd\ne\n" });
  t.after(tree.cleanup);
  const r = await runGrepTool(native, { pattern: "d", context: 2, limit: 1 }, grepConfig(tree.root));
  assert.equal(
    r.text,
    ["m-2- b", "m-3- c", "m:4: d", "m-5- e", "m:6: d", "", "[1 matches limit reached. Use limit=2 for more, or refine pattern]"].join("\n"),
  );
  assert.deepEqual(r.details, { matchLimitReached: 1 });
});

test("files and count modes print one path per line and path:N", async (t) => {
  const tree = makeTree({ "a.txt": "x\nx\n", "sub/b.txt": "x\n", "c.txt": "nothing\n" });
  t.after(tree.cleanup);
  const files = await runGrepTool(native, { pattern: "x", outputMode: "files_with_matches" }, grepConfig(tree.root));
  assert.equal(files.text, "a.txt\nsub/b.txt");
  const counts = await runGrepTool(native, { pattern: "x", outputMode: "count" }, grepConfig(tree.root));
  assert.equal(counts.text, "a.txt:2\nsub/b.txt:1");
  const limited = await runGrepTool(native, { pattern: "x", outputMode: "files_with_matches", limit: 1 }, grepConfig(tree.root));
  assert.equal(limited.text, "a.txt\n\n[1 files limit reached. Use limit=2 for more, or refine pattern]");
  assert.deepEqual(limited.details, { matchLimitReached: 1 });
});

test("glob and include both become include globs; literal and ignoreCase reach the search", async (t) => {
  const tree = makeTree({ "a.ts": "A.B\n", "b.md": "a.b\n", "c.rs": "a.b\n", "d.ts": "axb\n" });
  t.after(tree.cleanup);
  const r = await runGrepTool(native, { pattern: "a.b", glob: "*.ts", include: "*.md", literal: true, ignoreCase: true }, grepConfig(tree.root));
  assert.equal(r.text, "a.ts:1: A.B\nb.md:1: a.b");
});

test("a single-file path shows the file name, as Pi does", async (t) => {
  const tree = makeTree({ "deep/dir/f.txt": "hello\n" });
  t.after(tree.cleanup);
  const r = await runGrepTool(native, { pattern: "hello", path: "deep/dir/f.txt" }, grepConfig(tree.root));
  assert.equal(r.text, "f.txt:1: hello");
});

test("match limit and long lines give Pi's notices and details", async (t) => {
  const long = `needle ${"x".repeat(600)}`;
  const tree = makeTree({ "f.txt": [long, long, "needle", "needle"].join("\n") });
  t.after(tree.cleanup);
  const r = await runGrepTool(native, { pattern: "needle", limit: 3 }, grepConfig(tree.root));
  const cut = `needle ${"x".repeat(493)}... [truncated]`;
  assert.equal(
    r.text,
    `f.txt:1: ${cut}\nf.txt:2: ${cut}\nf.txt:3: needle\n\n` +
      "[3 matches limit reached. Use limit=6 for more, or refine pattern. Some lines truncated to 500 chars. Use read tool to see full lines]",
  );
  assert.deepEqual(r.details, { matchLimitReached: 3, linesTruncated: true });

  const zero = await runGrepTool(native, { pattern: "needle", limit: 0 }, grepConfig(tree.root, { maxLineLength: 20 }));
  assert.match(zero.text, /^f\.txt:1: needle x{13}\.\.\. \[truncated\]\n\n\[1 matches limit reached\. Use limit=2 .* Some lines truncated to 20 chars\./);
  const byDefault = await runGrepTool(native, { pattern: "needle" }, grepConfig(tree.root, { defaultLimit: 2 }));
  assert.equal(byDefault.details?.matchLimitReached, 2);
});

test("a line cut before the match is marked at its start", async (t) => {
  const tree = makeTree({ "f.txt": `${"y".repeat(300)} needle ${"z".repeat(300)}\n` });
  t.after(tree.cleanup);
  const r = await runGrepTool(native, { pattern: "needle" }, grepConfig(tree.root, { maxLineLength: 50 }));
  assert.match(r.text, /^f\.txt:1: \[truncated\] \.\.\.y* needle z*\.\.\. \[truncated\]\n\n\[Some lines truncated to 50 chars/);
});

test("no match is exactly Pi's text with undefined details", async (t) => {
  const tree = makeTree({ "a.txt": "hello\n" });
  t.after(tree.cleanup);
  assert.deepEqual(await runGrepTool(native, { pattern: "absent" }, grepConfig(tree.root)), { text: "No matches found", details: undefined });
});

test("ignored paths: summarised when the project matches, shown when only they match, hidden by noIgnore:false", async (t) => {
  const tree = makeTree({
    ".gitignore": "vendor/\ndist/\n",
    "src/main.ts": "use(shared)\n",
    "vendor/lib/x.js": "shared\nshared\nonlyVendor\n",
    "dist/out.js": "shared\n",
  });
  t.after(tree.cleanup);
  const cfg = grepConfig(tree.root);
  const both = await runGrepTool(native, { pattern: "shared" }, cfg);
  assert.equal(
    both.text,
    "src/main.ts:1: use(shared)\n\n[+3 matches in ignored paths (vendor/ 2, dist/ 1) not shown — " +
      'search path "vendor" (or another of these) to see them; noIgnore: false leaves ignored files out entirely]',
  );
  assert.deepEqual(both.details, { ignoredMatches: 3 });

  const onlyIgnored = await runGrepTool(native, { pattern: "onlyVendor" }, cfg);
  assert.deepEqual(onlyIgnored, { text: "vendor/lib/x.js:3: onlyVendor\n\n(all matches are in ignored paths)", details: undefined });

  assert.deepEqual(await runGrepTool(native, { pattern: "shared", noIgnore: false }, cfg), { text: "src/main.ts:1: use(shared)", details: undefined });
  // The advice names the root from the working directory, where `path` is resolved.
  const nested = makeTree({ "pkg/.gitignore": "vendor/\n", "pkg/a.ts": "shared\n", "pkg/vendor/x.js": "shared\n" });
  t.after(nested.cleanup);
  assert.match((await runGrepTool(native, { pattern: "shared", path: "pkg/" }, grepConfig(nested.root))).text, /\(vendor\/ 1\) not shown — search path "pkg\/vendor" to see them;/);
  assert.equal((await runGrepTool(native, { pattern: "onlyVendor" }, grepConfig(tree.root, { noIgnore: false }))).text, "No matches found");

  const limited = await runGrepTool(native, { pattern: "shared", limit: 1 }, cfg);
  assert.equal(
    limited.text,
    "src/main.ts:1: use(shared)\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern. " +
      "Ignored paths not searched (the limit was reached first): dist/, vendor/]",
  );
});

test("byte cap keeps whole lines and spills the full text to a temp file named in the notice", async (t) => {
  const body = Array.from({ length: 40 }, (_, i) => `needle line ${i} ${"p".repeat(20)}`).join("\n");
  const tree = makeTree({ "f.txt": body });
  const spill = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-spill-"));
  t.after(() => {
    tree.cleanup();
    fs.rmSync(spill, { recursive: true, force: true });
  });
  const full = await runGrepTool(native, { pattern: "needle" }, grepConfig(tree.root));
  const r = await runGrepTool(native, { pattern: "needle" }, grepConfig(tree.root, { maxBytes: 300, tmpDir: spill }));
  const file = r.details?.fullOutputPath;
  assert.ok(file, "details name the spill file");
  assert.match(path.basename(file), /^pi-grep-[0-9a-f]{16}\.txt$/);
  assert.equal(path.dirname(file), spill);
  assert.equal(fs.readFileSync(file, "utf-8"), full.text, "the spill file holds the untruncated text");
  assert.equal(fs.statSync(file).mode & 0o777, 0o600, "only the user may read their code from the shared temp folder");
  const expected = truncateHead(full.text, { maxLines: Number.MAX_SAFE_INTEGER, maxBytes: 300 });
  assert.equal(r.text, `${expected.content}\n\n[300B limit reached. Full output: ${file}]`);
  assert.deepEqual(r.details?.truncation, expected);
  assert.ok(full.text.startsWith(expected.content) && expected.outputLines > 0);
});

test("the spill sweep removes only our own old spill files", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-sweep-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const old = (Date.now() - SPILL_RETENTION_MS - 60_000) / 1000;
  const put = (name: string, age: "old" | "new") => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, "x");
    if (age === "old") fs.utimesSync(file, old, old);
    return file;
  };
  const gone = [put("pi-grep-0123456789abcdef.txt", "old"), put("pi-glob-fedcba9876543210.txt", "old")];
  const kept = [
    put("pi-grep-0123456789abcdee.txt", "new"), // still within the retention
    put("pi-grep-notours.txt", "old"), // not a name we give
    put("pi-grep-0123456789abcdef.txt.bak", "old"),
    put("pi-bash-0123456789abcdef.txt", "old"), // Pi's own spill files are Pi's
  ];
  const target = put("target.txt", "old");
  const link = path.join(dir, "pi-grep-aaaaaaaaaaaaaaaa.txt");
  fs.symlinkSync(target, link);
  fs.lutimesSync(link, old, old);
  fs.mkdirSync(path.join(dir, "pi-glob-bbbbbbbbbbbbbbbb.txt"));
  assert.equal(await sweepSpillFiles({ dir }), 2);
  for (const f of gone) assert.equal(fs.existsSync(f), false, `${f} removed`);
  for (const f of [...kept, target, link, path.join(dir, "pi-glob-bbbbbbbbbbbbbbbb.txt")]) {
    assert.doesNotThrow(() => fs.lstatSync(f), `${f} kept`);
  }
  assert.equal(await sweepSpillFiles({ dir: path.join(dir, "missing") }), 0, "a folder it cannot read: nothing, no throw");
});

test("bad input from the backend is rethrown with its message", async (t) => {
  const tree = makeTree({ "a.txt": "x\n" });
  t.after(tree.cleanup);
  await assert.rejects(runGrepTool(native, { pattern: "foo(" }, grepConfig(tree.root)), /regex parse error[\s\S]*unclosed group/);
  await assert.rejects(runGrepTool(native, { pattern: "x", path: "nope" }, grepConfig(tree.root)), {
    message: `Path not found: ${path.join(tree.root, "nope")}`,
  });
});

test("output equals Pi's built-in grep where their behaviour is meant to agree", async (t) => {
  if (spawnSync("rg", ["--version"]).status !== 0) return t.skip("rg not installed");
  const prevOffline = process.env.PI_OFFLINE;
  process.env.PI_OFFLINE = "1";
  const long = `match ${"q".repeat(700)}`;
  const tree = makeTree({ "one.txt": ["a", "match 1", "b", "c", "d", "match 2\r", long, "e", "f", "g", "match 3", "h"].join("\n") + "\n" });
  t.after(() => {
    tree.cleanup();
    if (prevOffline === undefined) delete process.env.PI_OFFLINE;
    else process.env.PI_OFFLINE = prevOffline;
  });
  const pi = createGrepToolDefinition(tree.root);
  for (const params of [{ pattern: "match" }, { pattern: "match", limit: 2 }, { pattern: "MATCH \\d", ignoreCase: true, context: 1 }, { pattern: "nothing" }]) {
    const theirs = await pi.execute("call", params, undefined, undefined, undefined as never);
    const ours = await runGrepTool(native, params, grepConfig(tree.root));
    const theirText = theirs.content[0]?.type === "text" ? theirs.content[0].text : "";
    assert.equal(ours.text, theirText, JSON.stringify(params));
    assert.deepEqual(ours.details, theirs.details, JSON.stringify(params));
  }
});

test("formatGrepHits renders what the backend merged and nothing more", () => {
  const h = hit("p.ts", 5, "five", {
    contextBefore: [{ line: 4, text: "four", cutBefore: 0, cutAfter: 0 }],
    contextAfter: [{ line: 6, text: "six", cutBefore: 0, cutAfter: 3 }],
  });
  const next = hit("p.ts", 7, "seven", { contextAfter: [{ line: 8, text: "", cutBefore: 0, cutAfter: 0 }] });
  assert.deepEqual(formatGrepHits([h, next], "content"), {
    lines: ["p.ts-4- four", "p.ts:5: five", "p.ts-6- six... [truncated]", "p.ts:7: seven", "p.ts-8- "],
    linesTruncated: true,
  });
});

// The backend never answers after its first batch, so only the timeout + grace deadline can end these calls
// (a hang fails the test by its own timeout); the deadline's text and the cancel show that it did.
test("the tool returns by timeout + grace with what it has when the backend never answers", { timeout: 20_000 }, async () => {
  const { backend, state } = scriptedBackend([[hit("a.ts", 1, "found early")]], { hang: true });
  const r = await runGrepTool(backend, { pattern: "x" }, grepConfig("/", { timeoutMs: 100, graceMs: 100 }));
  assert.equal(state.cancelled, 1, "the stuck search is cancelled");
  assert.equal(state.calls[0].timeoutMs, 100, "the native side gets the timeout itself");
  assert.equal(
    r.text,
    "a.ts:1: found early\n\n[Search timed out after 0.1s: results are partial. Narrow the path, add a glob or type filter, or raise grep.timeoutMs]",
  );
  assert.deepEqual(r.details, { timedOut: true });

  const none = await runGrepTool(scriptedBackend([], { hang: true }).backend, { pattern: "x" }, grepConfig("/", { timeoutMs: 50, graceMs: 50 }));
  assert.equal(
    none.text,
    "No matches found before the search timed out after 0.05s. This is not proof of absence: narrow the path, add a glob or type filter, or raise grep.timeoutMs",
  );
  assert.deepEqual(none.details, { timedOut: true });
});

test("a native timeout is reported with the number of files searched", async () => {
  const summary = summaryOf({ matches: 1, filesSearched: 7, timedOut: true, ignoredUnsearched: ["node_modules/"] });
  const r = await runGrepTool(scriptedBackend([[hit("a.ts", 3, "x")]], { summary }).backend, { pattern: "x" }, grepConfig("/", { timeoutMs: 30000 }));
  assert.equal(
    r.text,
    "a.ts:3: x\n\n[Search timed out after 30s: results are partial (searched 7 files). Narrow the path, add a glob or type filter, " +
      "or raise grep.timeoutMs. Ignored paths not searched (the search timed out first): node_modules/]",
  );
  assert.deepEqual(r.details, { timedOut: true, filesSearched: 7 });
  const empty = await runGrepTool(scriptedBackend([], { summary: summaryOf({ filesSearched: 1, timedOut: true }) }).backend, { pattern: "x" }, grepConfig("/"));
  assert.match(empty.text, /^No matches found before the search timed out after 30s \(searched 1 file\)\. This is not proof of absence/);
});

test("a file whose hits stop at a NUL byte says so; a named file that matched only past it is not 'no matches'", async (t) => {
  const late = "needle first\n" + "filler line\n".repeat(8000) + "needle late\u0000\n";
  const tree = makeTree({ hay: late, file: "foo\u0000bar\n" });
  t.after(tree.cleanup);
  const r = await runGrepTool(native, { pattern: "needle" }, grepConfig(tree.root));
  assert.equal(r.text, "hay:1: needle first\n\n[Binary file (NUL byte), matches past it not shown: hay (byte 96024)]");
  const named = await runGrepTool(native, { pattern: "foo", path: "file" }, grepConfig(tree.root));
  assert.equal(named.text, "No text matches shown\n\n[Binary file (NUL byte), matches past it not shown: file (byte 3)]");
});

test("abort: before the start nothing runs; during the run the search is cancelled", { timeout: 20_000 }, async () => {
  const before = scriptedBackend([]);
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(runGrepTool(before.backend, { pattern: "x" }, grepConfig("/", { signal: ac.signal })), { message: "Operation aborted" });
  assert.equal(before.state.calls.length, 0);

  const during = scriptedBackend([[hit("a", 1, "x")]], { hang: true });
  const ac2 = new AbortController();
  setTimeout(() => ac2.abort(), 50);
  // The backend hangs and the deadline is 33 s away: only the abort can end this call.
  await assert.rejects(runGrepTool(during.backend, { pattern: "x" }, grepConfig("/", { signal: ac2.signal })), { message: "Operation aborted" });
  assert.equal(during.state.cancelled, 1);
  assert.equal(during.state.calls[0].signal, ac2.signal, "the native side gets the signal too");
});

test("onUpdate streams partial text at most every 100 ms", async (t) => {
  // A mocked clock that moves 30 ms per batch: batches arrive at 30, 60, ..., 360 ms, so the updates fall on the
  // first batch at least 100 ms after the previous update (120, 240, 360), whatever the machine's speed.
  t.mock.timers.enable({ apis: ["Date"], now: 0 });
  const batches = Array.from({ length: 12 }, (_, i) => [hit("f.txt", i + 1, `line ${i + 1}`)]);
  const { backend } = scriptedBackend(batches);
  const ticking: GrepBackend = {
    grep(o) {
      const handle = backend.grep(o);
      return { ...handle, nextBatch: () => (t.mock.timers.tick(30), handle.nextBatch()) };
    },
  };
  const updates: { at: number; text: string }[] = [];
  const r = await runGrepTool(ticking, { pattern: "x" }, grepConfig("/", {
    onUpdate: (p) => updates.push({ at: Date.now(), text: p.text }),
  }));
  const linesUpTo = (n: number) => batches.slice(0, n).map(([h]) => `f.txt:${h.line}: ${h.text}`).join("\n");
  assert.deepEqual(updates, [
    { at: 120, text: linesUpTo(4) },
    { at: 240, text: linesUpTo(8) },
    { at: 360, text: linesUpTo(12) },
  ]);
  for (const u of updates) assert.ok(r.text.startsWith(u.text));
});

test("glob: newest first, directories with /, project before ignored, Pi's find notices", async (t) => {
  const tree = makeTree({
    ".gitignore": "build/\n",
    "old.txt": "",
    "new.txt": "",
    "logs.txt/keep": "",
    "build/gen.txt": "",
  });
  t.after(tree.cleanup);
  const at = (rel: string, secondsAgo: number) => {
    const when = new Date(Date.now() - secondsAgo * 1000);
    fs.utimesSync(path.join(tree.root, rel), when, when);
  };
  at("old.txt", 300);
  at("new.txt", 10);
  at("logs.txt", 100);
  at("build/gen.txt", 1);
  const cfg = globConfig(tree.root);
  const r = await runGlobTool(native, { pattern: "*.txt" }, cfg);
  assert.equal(
    r.text,
    "new.txt\nlogs.txt/\nold.txt\nbuild/gen.txt\n\n[+1 match in ignored paths (build/ 1), listed after the project's results; noIgnore: false leaves ignored files out entirely]",
  );
  assert.equal(r.details, undefined);

  const limited = await runGlobTool(native, { pattern: "*.txt", limit: 2 }, cfg);
  assert.equal(
    limited.text,
    "new.txt\nlogs.txt/\n\n[2 results limit reached. Use limit=4 for more, or refine pattern. Ignored paths not searched (the limit was reached first): build/]",
  );
  assert.deepEqual(limited.details, { resultLimitReached: 2 });

  assert.equal((await runGlobTool(native, { pattern: "*.txt", noIgnore: false }, cfg)).text, "new.txt\nlogs.txt/\nold.txt");
  assert.deepEqual(await runGlobTool(native, { pattern: "*.none" }, cfg), { text: "No files found matching pattern", details: undefined });
  // Only ignored files matched: said, as grep says it.
  assert.deepEqual(await runGlobTool(native, { pattern: "gen.*" }, cfg), { text: "build/gen.txt\n\n(all matches are in ignored paths)", details: undefined });
});

test("glob: byte cap spills the full list", async (t) => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 30; i++) files[`file-${String(i).padStart(2, "0")}.log`] = "";
  const tree = makeTree(files);
  const spill = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-spill-"));
  t.after(() => {
    tree.cleanup();
    fs.rmSync(spill, { recursive: true, force: true });
  });
  const r = await runGlobTool(native, { pattern: "*.log" }, globConfig(tree.root, { maxBytes: 100, tmpDir: spill }));
  const file = r.details?.fullOutputPath;
  assert.ok(file && path.basename(file).startsWith("pi-glob-"));
  const all = fs.readFileSync(file, "utf-8").split("\n");
  assert.equal(all.length, 30);
  const shown = r.text.split("\n\n")[0].split("\n");
  assert.deepEqual(shown, all.slice(0, shown.length));
  assert.ok(r.text.endsWith(`[100B limit reached. Full output: ${file}]`));
});

test("glob: a backend that never answers still returns by timeout + grace, flagged incomplete", { timeout: 20_000 }, async () => {
  let seen: AbortSignal | undefined;
  const backend: GlobBackend = {
    glob(o) {
      seen = o.signal;
      return new Promise<GlobResult>(() => {});
    },
  };
  const r = await runGlobTool(backend, { pattern: "*.ts" }, globConfig("/", { timeoutMs: 60, graceMs: 60 }));
  assert.equal(
    r.text,
    "No files found before the search timed out after 0.06s. The result is incomplete and not proof of absence: narrow the path or pattern, or raise glob.timeoutMs",
  );
  assert.deepEqual(r.details, { timedOut: true });
  assert.equal(seen?.aborted, true, "the walk is told to stop");

  const ac = new AbortController();
  setTimeout(() => ac.abort(), 30);
  await assert.rejects(runGlobTool(backend, { pattern: "*.ts" }, globConfig("/", { signal: ac.signal })), { message: "Operation aborted" });
});
