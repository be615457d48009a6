// grep hits grouped by their enclosing symbol: the text the grep tool (and the CLI) prints by default,
// Pi's flat text with group:false, the native API's flat default, and the backends without structure.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { GrepHit } from "../index.d.ts";
import { createHitFormatter, formatGrepHits, runGrepTool, type GrepRunConfig } from "../extensions/lib/search/grep.mjs";
import { findRg, rgBackend } from "../extensions/lib/search/rg/index.mjs";
import { collect, native } from "./helpers/native.ts";
import { makeTree } from "./helpers/tree.ts";

const LIB_RS = `use std::fmt;

pub fn outer() -> u32 {
    let needle = 1;
    fn inner() -> u32 {
        needle_in_inner()
    }
    needle + inner()
}

struct Unhit;
fn unhit_a() {}
fn unhit_b() {}
fn unhit_c() {}
fn unhit_d() {}
// needle at file scope
`;

const files = { "a.txt": "needle here\n", "lib.rs": LIB_RS, "z.md": "needle too\n" };

const config = (cwd: string, over: Partial<GrepRunConfig> = {}): GrepRunConfig => ({
  cwd, timeoutMs: 30000, graceMs: 3000, noIgnore: true, maxLineLength: 500, maxBytes: 51200, defaultLimit: 100, ...over,
});

const FLAT = [
  "a.txt:1: needle here",
  "lib.rs:4:     let needle = 1;",
  "lib.rs:6:         needle_in_inner()",
  "lib.rs:8:     needle + inner()",
  "lib.rs:16: // needle at file scope",
  "z.md:1: needle too",
].join("\n");

const GROUPED = [
  "a.txt:1: needle here",
  "",
  "lib.rs (rust, 16 lines, 7 symbols)",
  "  function outer @ 3-9",
  "lib.rs:4:     let needle = 1;",
  "  function inner @ 5-7",
  "lib.rs:6:         needle_in_inner()",
  "  function outer @ 3-9",
  "lib.rs:8:     needle + inner()",
  "  <file scope>",
  "lib.rs:16: // needle at file scope",
  "  other: struct Unhit @ 11-11; function unhit_a @ 12-12; function unhit_b @ 13-13; function unhit_c @ 14-14; +1 more",
  "",
  "z.md:1: needle too",
].join("\n");

test("by default a code file's hits print under their innermost symbol; other files stay flat", async (t) => {
  const tree = makeTree(files);
  t.after(tree.cleanup);
  const r = await runGrepTool(native, { pattern: "needle" }, config(tree.root));
  assert.equal(r.text, GROUPED);
  assert.equal(r.details, undefined);
});

test("group:false prints exactly Pi's flat lines", async (t) => {
  const tree = makeTree(files);
  t.after(tree.cleanup);
  assert.deepEqual(await runGrepTool(native, { pattern: "needle", group: false }, config(tree.root)), { text: FLAT, details: undefined });
});

test("context lines follow the symbol heading; notices and details keep Pi's shape", async (t) => {
  const tree = makeTree(files);
  t.after(tree.cleanup);
  const r = await runGrepTool(native, { pattern: "needle", path: "lib.rs", context: 1, limit: 2 }, config(tree.root));
  assert.equal(
    r.text,
    [
      "lib.rs (rust, 16 lines, 7 symbols)",
      "  function outer @ 3-9",
      "lib.rs-3- pub fn outer() -> u32 {",
      "lib.rs:4:     let needle = 1;",
      "lib.rs-5-     fn inner() -> u32 {",
      "  function inner @ 5-7",
      "lib.rs:6:         needle_in_inner()",
      "lib.rs-7-     }",
      "  other: struct Unhit @ 11-11; function unhit_a @ 12-12; function unhit_b @ 13-13; function unhit_c @ 14-14; +1 more",
      "",
      "[2 matches limit reached. Use limit=4 for more, or refine pattern]",
    ].join("\n"),
  );
  assert.deepEqual(r.details, { matchLimitReached: 2 });
});

test("a dense file (24 hits or more) prints flat", async (t) => {
  const dense = `fn f() {\n${"    needle();\n".repeat(24)}}\n`;
  const tree = makeTree({ "dense.rs": dense, "sparse.rs": "fn g() {\n    needle();\n}\n" });
  t.after(tree.cleanup);
  const r = await runGrepTool(native, { pattern: "needle" }, config(tree.root));
  const lines = r.text.split("\n");
  assert.deepEqual(lines.slice(0, 24), Array.from({ length: 24 }, (_, i) => `dense.rs:${i + 2}:     needle();`));
  assert.deepEqual(lines.slice(24), ["", "sparse.rs (rust, 3 lines, 1 symbol)", "  function g @ 1-3", "sparse.rs:2:     needle();"]);
});

test("the native API is flat unless asked: no symbol fields for npm consumers by default", async (t) => {
  const tree = makeTree(files);
  t.after(tree.cleanup);
  const plain = await collect(native.grep({ pattern: "needle", cwd: tree.root }));
  assert.ok(plain.hits.every((h) => !("symbol" in h) && !("fileStructure" in h)));
  const grouped = await collect(native.grep({ pattern: "needle", cwd: tree.root, group: true }));
  const lib = grouped.hits.filter((h) => h.path === "lib.rs");
  assert.deepEqual(lib.map((h) => h.symbol?.name ?? null), ["outer", "inner", "outer", null]);
  assert.deepEqual(lib[0].symbol, { kind: "function", name: "outer", startLine: 3, endLine: 9 });
  assert.deepEqual(lib[0].fileStructure, {
    language: "rust",
    totalLines: 16,
    totalSymbols: 7,
    others: [
      { kind: "struct", name: "Unhit", startLine: 11, endLine: 11 },
      { kind: "function", name: "unhit_a", startLine: 12, endLine: 12 },
      { kind: "function", name: "unhit_b", startLine: 13, endLine: 13 },
      { kind: "function", name: "unhit_c", startLine: 14, endLine: 14 },
    ],
    othersOmitted: 1,
  });
  assert.ok(lib.slice(1).every((h) => h.fileStructure === undefined));
});

test("the rg fallback has no structure and keeps printing flat", { skip: findRg() ? false : "rg not installed" }, async (t) => {
  const tree = makeTree(files);
  t.after(tree.cleanup);
  const r = await runGrepTool(rgBackend, { pattern: "needle" }, config(tree.root));
  assert.equal(r.text, FLAT);
});

test("batch by batch, the text only grows, and equals the text of all hits at once", async (t) => {
  const tree = makeTree(files);
  t.after(tree.cleanup);
  const { hits } = await collect(native.grep({ pattern: "needle", cwd: tree.root, group: true }));
  const whole = formatGrepHits(hits, "content", { group: true }).lines.join("\n");
  assert.equal(whole, GROUPED);
  for (let cut = 0; cut <= hits.length; cut++) {
    const f = createHitFormatter("content", { group: true });
    f.add(hits.slice(0, cut));
    const partial = f.lines.join("\n");
    f.add(hits.slice(cut));
    f.finish();
    assert.equal(f.lines.join("\n"), whole, `split at ${cut}`);
    assert.ok(whole.startsWith(partial), `split at ${cut}: partial text is a prefix`);
  }
  const flat = formatGrepHits(hits as GrepHit[], "content").lines.join("\n");
  assert.equal(flat, FLAT, "without the group option the structure fields are ignored");
});
