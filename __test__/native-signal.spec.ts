// The native functions and a caller's AbortSignal: each call removes the
// abort listener it added once it ends, so one long-lived signal can serve
// any number of calls; the signal still cancels a running search; errors
// carry a `code` from the fixed list.
import { test } from "node:test";
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { native, collect, settledListenerCount } from "./helpers/native.ts";
import { makeTree } from "./helpers/tree.ts";

test("1,000 searches and some globs on one signal leave its listeners as they were", async (t) => {
  const tree = makeTree({ "a.txt": "needle\n", "b/c.txt": "no\nneedle\n" });
  t.after(tree.cleanup);
  const controller = new AbortController();
  const { signal } = controller;
  signal.addEventListener("abort", () => {});
  const before = getEventListeners(signal, "abort").length;
  for (let i = 0; i < 1000; i++) {
    const { hits } = await collect(native.grep({ pattern: "needle", path: tree.root, signal }));
    assert.equal(hits.length, 2);
  }
  for (let i = 0; i < 50; i++) {
    const r = await native.glob({ pattern: "*.txt", path: tree.root, signal });
    assert.equal(r.entries.length, 2);
  }
  // A call rejected before it starts adds nothing either.
  assert.throws(() => native.grep({ pattern: "(", path: tree.root, signal }));
  assert.equal(await settledListenerCount(signal, before), before);
  assert.equal(signal.aborted, false, "removing our listeners never aborts the caller's signal");
});

test("an abort still cancels a running search on a long-lived signal", async (t) => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 300; i++) files[`f${String(i).padStart(3, "0")}.txt`] = "needle\n".repeat(50);
  const tree = makeTree(files);
  t.after(tree.cleanup);
  const controller = new AbortController();
  // Used for earlier calls first: the listener bookkeeping must not break the abort.
  for (let i = 0; i < 20; i++) await collect(native.grep({ pattern: "needle", path: tree.root, signal: controller.signal, maxCount: 1 }));
  const search = native.grep({ pattern: "needle", path: tree.root, signal: controller.signal });
  const first = await search.nextBatch();
  assert.ok(first && first.length > 0);
  controller.abort();
  while (await search.nextBatch());
  const summary = search.summary();
  assert.ok(summary);
  assert.equal(summary.cancelled, true);
  assert.ok(summary.matches < 300 * 50, "the search stopped before the end");
  assert.equal(await settledListenerCount(controller.signal, 0), 0);
});

test("native errors carry a code from the fixed list and keep their message", async (t) => {
  const tree = makeTree({ "a.txt": "x\n" });
  t.after(tree.cleanup);
  const code = (f: () => unknown): unknown => {
    try {
      f();
    } catch (e) {
      return [(e as { code?: unknown }).code, (e as Error).message];
    }
    return "no error";
  };
  assert.deepEqual(code(() => native.grep({ pattern: "" })), ["INVALID_PATTERN", "Pattern must not be empty"]);
  assert.equal((code(() => native.grep({ pattern: "(", path: tree.root })) as unknown[])[0], "INVALID_PATTERN");
  assert.deepEqual(code(() => native.grep({ pattern: "x", mode: "lines" as never })), [
    "INVALID_OPTION",
    "Invalid mode: lines (expected content, files, count)",
  ]);
  assert.deepEqual(code(() => native.grep({ pattern: "x", path: "/definitely/not/here" })), [
    "PATH_NOT_FOUND",
    "Path not found: /definitely/not/here",
  ]);
  assert.equal((code(() => native.glob({ pattern: "a[", path: tree.root })) as unknown[])[0], "INVALID_PATTERN");
  assert.deepEqual(code(() => native.grep({ pattern: "x", path: tree.root, signal: AbortSignal.abort() })), [
    "CANCELLED",
    "AbortError: The operation was aborted",
  ]);
  await assert.rejects(native.outline({ path: tree.root }), { code: "NOT_A_FILE" });
  await assert.rejects(native.outline({ path: "missing.rs", cwd: tree.root }), { code: "PATH_NOT_FOUND", message: "File not found: missing.rs" });
});

test("coreDefaults() gives the defaults the native functions apply", async (t) => {
  const d = native.coreDefaults();
  assert.equal(d.grep.maxLineLength, 500);
  assert.equal(d.glob.limit, 200);
  assert.equal(d.outline.maxItems, 1000);
  assert.ok(d.grep.threads >= 1 && d.grep.threads <= 9);
  // The glob limit is what a call without one applies.
  const files: Record<string, string> = {};
  for (let i = 0; i < d.glob.limit + 5; i++) files[`f${i}.txt`] = "";
  const tree = makeTree(files);
  t.after(tree.cleanup);
  const r = await native.glob({ pattern: "*.txt", path: tree.root });
  assert.equal(r.entries.length, d.glob.limit);
});
