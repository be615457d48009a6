// Loads the built addon the way an npm consumer would (through index.js).
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { getEventListeners } from "node:events";
import { setImmediate as nextTurn } from "node:timers/promises";
import type * as Native from "../../index.d.ts";

export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const native: typeof Native = createRequire(import.meta.url)(path.join(packageRoot, "index.js"));

export async function collect(search: Native.GrepSearch): Promise<{ hits: Native.GrepHit[]; summary: Native.GrepSummary }> {
  const hits: Native.GrepHit[] = [];
  for (let batch = await search.nextBatch(); batch; batch = await search.nextBatch()) hits.push(...batch);
  const summary = search.summary();
  if (!summary) throw new Error("summary missing after the last batch");
  return { hits, summary };
}

/** Abort listeners are removed from the JS thread after a call ends: gives the queued removals up to 1,000
 * event-loop turns to reach `expected`, and returns the count then. */
export async function settledListenerCount(signal: AbortSignal, expected: number): Promise<number> {
  let count = getEventListeners(signal, "abort").length;
  for (let turn = 0; turn < 1000 && count !== expected; turn++) {
    await nextTurn();
    count = getEventListeners(signal, "abort").length;
  }
  return count;
}
