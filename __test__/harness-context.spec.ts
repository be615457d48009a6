// Harness context (issue 46) and the debug flags through the real addon and the CLI: the seed's JSON as the
// `context` object, the `contextJson` string and `--context-json FILE`; `fingerprint()` gives the facts a
// harness records, and a file changed on disk after them is never shown as unchanged.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { native, packageRoot } from "./helpers/native.ts";
import { makeTree } from "./helpers/tree.ts";

const cli = path.join(packageRoot, "bin", "pi-utils.mjs");
const UI = "pub fn render_status() {\n    let s = auth_status();\n    draw(s);\n}\n\nfn draw<T>(_: T) {}\n";
const AUTH = "pub enum AuthStatus { Ok }\n\npub fn auth_status() -> AuthStatus {\n    AuthStatus::Ok\n}\n";
const MANY = Array.from({ length: 20 }, (_, i) => `fn f${i}() {\n    ${i};\n}\n`).join("\n");
const QUERY = "subject:auth_status relation:called_from";

function cliRun(cwd: string, args: string[]) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, env, encoding: "utf-8", timeout: 30000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A known_files entry saying the model read `rel` in full, with the facts fingerprint() gives now. */
async function readInFull(root: string, rel: string) {
  const f = await native.fingerprint({ path: rel, cwd: root });
  return {
    path: rel,
    structure_confidence: 1,
    body_confidence: 1,
    current_version_confidence: 1,
    prune_confidence: 1,
    source_strength: "full_file",
    size: f.size,
    content_hash: f.contentHash,
    reasons: ["read at turn 1"],
  };
}

describe("harness context", () => {
  let tree: ReturnType<typeof makeTree>;
  before(() => {
    tree = makeTree({ "src/ui.rs": UI, "src/auth.rs": AUTH, "src/many.rs": MANY });
  });
  after(() => tree.cleanup());

  test("fingerprint gives the size, the whole file's hash and the hashes of line ranges", async () => {
    const f = await native.fingerprint({ path: "src/ui.rs", cwd: tree.root, regions: [{ startLine: 1, endLine: 4 }] });
    assert.equal(f.size, Buffer.byteLength(UI));
    assert.match(f.contentHash, /^xxh3:[0-9a-f]{16}$/);
    assert.equal(f.totalLines, 6);
    assert.equal(f.regions.length, 1);
    assert.notEqual(f.regions[0].contentHash, f.contentHash);
    await assert.rejects(native.fingerprint({ path: "missing.rs", cwd: tree.root }), { code: "PATH_NOT_FOUND" });
  });

  test("outline of a file read in full and unchanged is compact and at least half as long", async () => {
    const context = { version: 1, known_files: [await readInFull(tree.root, "src/many.rs")] };
    const plain = await native.outline({ path: "src/many.rs", cwd: tree.root });
    const known = await native.outline({ path: "src/many.rs", cwd: tree.root, context });
    assert.equal(plain.context, "none");
    assert.equal(known.context, "unchanged");
    assert.match(known.text, /^symbols: 20 \(unchanged since you last read it; compact form\)\nstructure: function f0; function f1; function f2; function f3; function f4; function f5; function f6; function f7; \.\.\. 12 more\n$/m);
    assert.ok(known.text.length * 2 <= plain.text.length, `${known.text.length} vs ${plain.text.length}`);
    // The same as a JSON string; symbols are still returned in full.
    const viaJson = await native.outline({ path: "src/many.rs", cwd: tree.root, contextJson: JSON.stringify(context) });
    assert.equal(viaJson.text, known.text);
    assert.equal(viaJson.symbols.length, 20);
  });

  test("a file changed on disk after the harness recorded it is flagged, never shown as unchanged", async (t) => {
    const t2 = makeTree({ "a.rs": AUTH });
    t.after(t2.cleanup);
    const entry = await readInFull(t2.root, "a.rs");
    fs.writeFileSync(path.join(t2.root, "a.rs"), AUTH + "\npub fn fresh() {}\n");
    const r = await native.outline({ path: "a.rs", cwd: t2.root, context: { known_files: [entry] } });
    assert.equal(r.context, "changed");
    assert.match(r.text, /^changed since you last saw it: size differs from what you saw \(\d+ -> \d+ bytes\); content differs from what you saw$/m);
    assert.doesNotMatch(r.text, /unchanged/);
    assert.match(r.text, /^- function fresh @ 7-7/m);
  });

  test("trace names regions the model has by their range, with empty bodies, and flags changed files", async () => {
    const context = { known_files: [await readInFull(tree.root, "src/ui.rs")] };
    const plain = await native.trace({ query: QUERY, cwd: tree.root, index: false });
    const r = await native.trace({ query: QUERY, cwd: tree.root, index: false, context });
    const ui = r.files.find((f) => f.path === "src/ui.rs");
    assert.ok(ui && ui.regions.length > 0, r.text);
    for (const g of ui.regions) {
      assert.equal(g.alreadyShown, true);
      assert.deepEqual(g.body, []);
      assert.ok(r.text.includes(`(already shown: src/ui.rs:${g.startLine}-${g.endLine}, unchanged)`), r.text);
    }
    assert.equal(ui.knownSymbolsOmitted, ui.structure.length);
    assert.ok(r.text.length < plain.text.length);
    const stale = { known_files: [{ path: "src/ui.rs", current_version_confidence: 0, reasons: ["changed since you read it at turn 3"] }] };
    const s = await native.trace({ query: QUERY, cwd: tree.root, index: false, context: stale });
    assert.equal(s.files.find((f) => f.path === "src/ui.rs")?.changedSinceSeen, true);
    assert.match(s.text, /^ {3}changed since you last saw it: changed since you read it at turn 3$/m);
  });

  test("locate skips known symbols and flags changed files", async () => {
    const context = { known_symbols: [{ path: "src/ui.rs", symbol: "draw", kind: "function", structure_confidence: 1, current_version_confidence: 1 }] };
    // The structure list shows the symbols that bear on the question (issue 45): "draw" would be listed.
    const r = await native.locate({ query: "ui draw", cwd: tree.root, index: false, context });
    const ui = r.files.find((f) => f.path === "src/ui.rs");
    assert.equal(ui?.knownSymbolsOmitted, 1, r.text);
    assert.equal(ui?.changedSinceSeen, false);
    assert.match(r.text, /\(1 symbol you already have not repeated\)/);
    assert.doesNotMatch(r.text, /- function draw @/);
  });

  test("a bad context is INVALID_OPTION naming the field; an unknown version is ignored with a note", async () => {
    // Wrong on purpose, so typed loosely.
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ context: { known_files: [{ path: 1 }] } }, /context\.known_files\[0\]\.path: expected a string, got 1/],
      [{ contextJson: "{nope" }, /context: not valid JSON/],
      [{ context: {}, contextJson: "{}" }, /give context or contextJson, not both/],
      [{ context: { known_regions: [{ path: "a", start_line: 0, end_line: 2 }] } }, /start_line: expected a line number/],
    ];
    for (const [opts, message] of bad) {
      for (const call of [
        () => native.outline({ path: "src/ui.rs", cwd: tree.root, ...opts } as never),
        () => native.trace({ query: QUERY, cwd: tree.root, ...opts } as never),
        () => native.locate({ query: "ui", cwd: tree.root, ...opts } as never),
      ]) {
        await assert.rejects(async () => call(), (e: Error & { code?: string }) => e.code === "INVALID_OPTION" && message.test(e.message));
      }
    }
    const r = await native.outline({ path: "src/ui.rs", cwd: tree.root, context: { version: 9 } });
    assert.match(r.text, /note: harness context version 9 is not understood \(this build reads 1\); ignored\n$/);
  });

  test("debug flags append their sections to the text", async () => {
    const t1 = await native.trace({ query: QUERY, cwd: tree.root, index: false, debugPlan: true, debugScore: true });
    assert.match(t1.text, /\ndebug plan:\n {2}probe 1 \(subject\): regex /);
    assert.match(t1.text, /\ndebug score:\n {2}1\. src\//);
    const l = await native.locate({ query: "auth", cwd: tree.root, index: false, debugScore: true });
    assert.match(l.text, /\ndebug score:\n {2}1\. src\/auth\.rs: [\d.]+ \(code\)\n( {5}\+ .*\n)* {5}\+ file name matches auth\n/);
    const o = await native.outline({ path: "src/ui.rs", cwd: tree.root, debugStructure: true });
    assert.match(o.text, /\ndebug structure:\n {2}opened: .*src\/ui\.rs\n {2}bytes: \d+, lines: 6\n {2}language: rust \(from the file name\)\n {2}parsed: true\n/);
  });

  test("the CLI takes --context-json FILE and the three debug flags", async (t) => {
    const file = path.join(tree.root, "..", `ctx-${process.pid}.json`);
    fs.writeFileSync(file, JSON.stringify({ version: 1, known_files: [await readInFull(tree.root, "src/many.rs"), await readInFull(tree.root, "src/ui.rs")] }));
    t.after(() => fs.rmSync(file, { force: true }));
    const o = cliRun(tree.root, ["outline", "--context-json", file, "src/many.rs"]);
    assert.equal(o.code, 0, o.stderr);
    assert.match(o.stdout, /^symbols: 20 \(unchanged since you last read it; compact form\)$/m);
    const tr = cliRun(tree.root, ["trace", "--context-json", file, "--debug-plan", "--debug-score", ...QUERY.split(" ")]);
    assert.equal(tr.code, 0, tr.stderr);
    assert.match(tr.stdout, /\(already shown: src\/ui\.rs:1-4, unchanged\)/);
    assert.match(tr.stdout, /\ndebug plan:\n/);
    assert.match(tr.stdout, /\ndebug score:\n/);
    const lo = cliRun(tree.root, ["locate", "--debug-score", "auth"]);
    assert.match(lo.stdout, /\ndebug score:\n/);
    const ds = cliRun(tree.root, ["outline", "--debug-structure", "src/ui.rs"]);
    assert.match(ds.stdout, /\ndebug structure:\n/);
    const missing = cliRun(tree.root, ["outline", "--context-json", "/nonexistent/ctx.json", "src/ui.rs"]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--context-json: cannot read \/nonexistent\/ctx\.json/);
    fs.writeFileSync(file, '{"known_files": 3}');
    const bad = cliRun(tree.root, ["outline", "--context-json", file, "src/ui.rs"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /context\.known_files: expected an array, got 3/);
    const misuse = cliRun(tree.root, ["locate", "--debug-plan", "auth"]);
    assert.equal(misuse.code, 2);
  });
});
