// The outline tool's text (shared with `pi-utils outline`): the native core's outline (a header, then one indented line per symbol),
// maxItems with its note, the byte cap, Pi-style paths, errors and abort.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runOutlineTool, type OutlineBackend, type OutlineRunConfig } from "../extensions/lib/search/outline.mjs";
import { native } from "./helpers/native.ts";
import { makeTree } from "./helpers/tree.ts";

const TS = `export class Widget {
  area(): number {
    const inner = (n: number) => n * 2;
    return inner(1);
  }
}

export const make = () => new Widget();
`;

const config = (cwd: string, over: Partial<OutlineRunConfig> = {}): OutlineRunConfig => ({ cwd, maxBytes: 51200, ...over });

test("the text is the native outline: header, then one indented line per symbol", async (t) => {
  const tree = makeTree({ "src/widget.ts": TS });
  t.after(tree.cleanup);
  const r = await runOutlineTool(native, { path: "src/widget.ts" }, config(tree.root));
  assert.equal(
    r.text,
    [
      "file: src/widget.ts",
      "language: typescript",
      "lines: 8",
      "symbols: 4",
      "structure:",
      "- class Widget @ 1-6 (6 lines)",
      "  - method area @ 2-5 (4 lines)",
      "    - function inner @ 3-3 (1 line)",
      "- function make @ 8-8 (1 line)",
    ].join("\n"),
  );
  assert.deepEqual(r.details, { language: "typescript", totalLines: 8, symbols: 4, shown: 4 });
});

test("maxItems drops the deepest symbols first and says how many", async (t) => {
  const tree = makeTree({ "w.ts": TS });
  t.after(tree.cleanup);
  const r = await runOutlineTool(native, { path: "w.ts", maxItems: 3 }, config(tree.root));
  assert.ok(r.text.endsWith("- function make @ 8-8 (1 line)\n... 1 more symbols omitted (deepest first; maxItems=3)"), r.text);
  assert.doesNotMatch(r.text, /inner/);
  assert.deepEqual(r.details, { language: "typescript", totalLines: 8, symbols: 4, shown: 3 });
  const byDefault = await runOutlineTool(native, { path: "w.ts" }, config(tree.root, { defaultMaxItems: 1 }));
  assert.match(byDefault.text, /\.\.\. 3 more symbols omitted \(deepest first; maxItems=1\)$/);
});

test("@path and absolute paths work as in Pi's read tool; unknown languages say so", async (t) => {
  const tree = makeTree({ "w.ts": TS, "notes.txt": "plain\n" });
  t.after(tree.cleanup);
  const at = await runOutlineTool(native, { path: "@w.ts" }, config(tree.root));
  assert.match(at.text, /^file: w\.ts\nlanguage: typescript/);
  const abs = await runOutlineTool(native, { path: `${tree.root}/w.ts` }, config("/"));
  assert.match(abs.text, /- class Widget @ 1-6/);
  const txt = await runOutlineTool(native, { path: "notes.txt" }, config(tree.root));
  assert.equal(txt.text, "file: notes.txt\nlanguage: unknown\nsymbols: none (no grammar for this file type)");
  assert.deepEqual(txt.details, { language: null, totalLines: 1, symbols: 0, shown: 0 });
});

test("a missing file is an error that names near files", async (t) => {
  const tree = makeTree({ "src/widget.ts": TS });
  t.after(tree.cleanup);
  await assert.rejects(runOutlineTool(native, { path: "src/widgt.ts" }, config(tree.root)), {
    message: "File not found: src/widgt.ts. Did you mean: src/widget.ts?",
  });
  await assert.rejects(runOutlineTool(native, { path: "" }, config(tree.root)), /path must not be empty/);
});

test("the byte cap keeps whole lines and says to lower maxItems", async (t) => {
  const body = Array.from({ length: 200 }, (_, i) => `export function fn_${i}() {}\n`).join("");
  const tree = makeTree({ "many.ts": body });
  t.after(tree.cleanup);
  const r = await runOutlineTool(native, { path: "many.ts" }, config(tree.root, { maxBytes: 500 }));
  const [shown, notice] = r.text.split("\n\n");
  assert.equal(notice, "[500B limit reached. Use maxItems to show fewer symbols]");
  assert.ok(Buffer.byteLength(shown) <= 500);
  assert.match(shown.split("\n").at(-1)!, /^- function fn_\d+ @ \d+-\d+ \(1 line\)$/);
  assert.equal(r.details.truncation?.truncated, true);
});

test("abort: before the call nothing runs; during it the tool stops waiting", async () => {
  let calls = 0;
  const never: OutlineBackend = {
    outline() {
      calls++;
      return new Promise(() => {});
    },
  };
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(runOutlineTool(never, { path: "x.ts" }, config("/", { signal: ac.signal })), { message: "Operation aborted" });
  assert.equal(calls, 0);
  const ac2 = new AbortController();
  setTimeout(() => ac2.abort(), 20);
  await assert.rejects(runOutlineTool(never, { path: "x.ts" }, config("/", { signal: ac2.signal })), { message: "Operation aborted" });
  assert.equal(calls, 1);
});
