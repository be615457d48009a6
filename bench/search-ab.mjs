#!/usr/bin/env node
// One search, two addons loaded in this process, interleaved (bench/lib/interleave.mjs): the median
// time of each and the median of the per-round ratios new / base. With --index each addon first builds
// (or re-validates) its own index of the corpus, each in a store of its own under a temp folder (a
// store one addon wrote can carry decisions the other would not make).
//
//   node bench/search-ab.mjs --corpus linux --base /path/to/old.node [--new /path/to/new.node]
//        --pattern sched_clock_irqtime [--regex] [--mode content|count|files] [--no-ignore] [--ignore-case] [--index] [--limit 100 (0: none)]
//        [--runs 9]
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { interleaved } from "./lib/interleave.mjs";
import { corpus, opt, root, runs } from "./lib/setup.mjs";

const base = opt("--base", "");
if (!base || !fs.existsSync(base)) throw new Error("--base <addon .node file> is required");
const addons = [base, opt("--new", path.join(root, "pi-utils.linux-x64-gnu.node"))].map((f) =>
  createRequire(import.meta.url)(path.resolve(f)),
);
const index = process.argv.includes("--index");
const limit = Number(opt("--limit", "100"));
const search = {
  pattern: opt("--pattern", "sched_clock_irqtime"),
  literal: !process.argv.includes("--regex"),
  mode: opt("--mode", "content"),
  ...(process.argv.includes("--no-ignore") ? { noIgnore: true } : {}),
  ...(process.argv.includes("--ignore-case") ? { ignoreCase: true } : {}),
  ...(limit > 0 ? { maxCount: limit } : {}),
  index,
};

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
    const s = n.grep({ path: corpus, ignoredCountOnly: true, maxLineLength: 500, ...search });
    while (await s.nextBatch());
    const summary = s.summary();
    if (index && summary.index !== "used") throw new Error(`the index was not used: ${summary.index}`);
  };
  const variants = [
    ["base", () => once(addons[0])],
    ["new", () => once(addons[1])],
  ];
  const { medians, ratios } = await interleaved(variants, [["new", "base"]], runs);
  console.log(`${JSON.stringify(search)}, ${runs} rounds`);
  console.log(`  base ${medians.base.toFixed(2)} ms, new ${medians.new.toFixed(2)} ms, new / base ${ratios[0].ratio.toFixed(3)}`);
} finally {
  fs.rmSync(stores, { recursive: true, force: true });
}
