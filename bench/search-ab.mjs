#!/usr/bin/env node
// One search, two addons loaded in this process, alternated (A B A B ...): the median time of each and
// the median of the per-round ratios B / A. With --index each addon first builds (or re-validates) its
// own index of the corpus, each in a store of its own under a temp folder (a store one addon wrote can
// carry decisions the other would not make).
//
//   node bench/search-ab.mjs --corpus linux --base /path/to/old.node [--new /path/to/new.node]
//        --pattern sched_clock_irqtime [--index] [--limit 100] [--runs 51]
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { corpus, root } from "./lib/setup.mjs";

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const base = opt("--base", "");
if (!base || !fs.existsSync(base)) throw new Error("--base <addon .node file> is required");
const addons = [base, opt("--new", path.join(root, "pi-utils.linux-x64-gnu.node"))].map((f) =>
  createRequire(import.meta.url)(path.resolve(f)),
);
const index = args.includes("--index");
const runs = Number(opt("--runs", "51"));
const search = { pattern: opt("--pattern", "sched_clock_irqtime"), literal: true, maxCount: Number(opt("--limit", "100")), index };

const stores = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-search-ab-"));
try {
  if (index) {
    for (const [i, n] of addons.entries()) {
      process.env.PI_UTILS_INDEX_DIR = path.join(stores, String(i));
      n.indexStart({ path: corpus });
      const status = await n.indexWarm({ path: corpus });
      if (status.state !== "ready") throw new Error(`addon ${i}: the index is ${status.state}`);
    }
  }
  const once = async (n) => {
    const t = performance.now();
    const s = n.grep({ path: corpus, ignoredCountOnly: true, maxLineLength: 500, ...search });
    while (await s.nextBatch());
    const summary = s.summary();
    if (index && summary.index !== "used") throw new Error(`the index was not used: ${summary.index}`);
    return performance.now() - t;
  };
  const [a, b, ratio] = [[], [], []];
  for (let i = 0; i < runs; i++) {
    const x = await once(addons[0]);
    const y = await once(addons[1]);
    a.push(x);
    b.push(y);
    ratio.push(y / x);
  }
  const median = (xs) => [...xs].sort((p, q) => p - q)[xs.length >> 1];
  console.log(`${JSON.stringify(search)}, ${runs} rounds`);
  console.log(`  base ${median(a).toFixed(2)} ms, new ${median(b).toFixed(2)} ms, new / base ${median(ratio).toFixed(3)}`);
} finally {
  fs.rmSync(stores, { recursive: true, force: true });
}
