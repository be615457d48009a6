// What every bench script shares: its arguments, the corpus, the addon, the
// case runner (interleaved rounds, targets judged from the per-round ratio
// medians) and the results file.
//
//   --corpus linux|small   linux: $PI_UTILS_CORPUS, default ~/.cache/pi-utils-bench/linux-source-6.12
//                          (made by bench/corpus-linux.sh); small: a generated tree, removed afterwards
//   --runs N               rounds per case (default 9)
//   --only substring       only the cases whose name contains it
import { createRequire } from "node:module";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { interleaved } from "./interleave.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, "../..");
export const indexJs = path.join(root, "index.js");
export const native = createRequire(import.meta.url)(indexJs);

const args = process.argv.slice(2);
/** The value after `--name` on the command line, or `dflt`. */
export const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
export const corpusName = opt("--corpus", "small");
export const runs = Number(opt("--runs", "9"));
export const only = opt("--only", "");

function makeSmallTree() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-bench-"));
  const words = ["static", "int", "return", "struct", "void", "kmalloc", "if", "else"];
  for (let i = 0; i < 3000; i++) {
    const sub = path.join(dir, `d${i % 40}`, `e${i % 7}`);
    fs.mkdirSync(sub, { recursive: true });
    let body = "";
    for (let l = 0; l < 200; l++) body += `${words[(i + l) % words.length]} line ${l} of file ${i}\n`;
    if (i === 2999) body += "sched_clock_irqtime irqtime_account_irq(\n";
    fs.writeFileSync(path.join(sub, `f${i}.${i % 3 === 0 ? "c" : "h"}`), body);
  }
  return dir;
}

const linuxCorpus = process.env.PI_UTILS_CORPUS || path.join(os.homedir(), ".cache", "pi-utils-bench", "linux-source-6.12");
export const corpus = corpusName === "linux" ? linuxCorpus : makeSmallTree();
if (!fs.existsSync(corpus)) {
  console.error(`corpus missing: ${corpus}\nrun: sh bench/corpus-linux.sh`);
  process.exit(2);
}

/**
 * Drains one native search; resolves the number of hits. The scan benches pass `index: false` (a search
 * would otherwise start building the live index of the corpus and, once ready, answer from it);
 * bench/index.mjs passes `index: true` where it measures the index.
 */
export async function nativeGrep(opts) {
  const s = native.grep({ path: corpus, index: false, ...opts });
  let n = 0;
  for (let b = await s.nextBatch(); b; b = await s.nextBatch()) n += b.length;
  return n;
}

export const rows = [];
const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));

/**
 * One case: `variants` are [label, fn] pairs run interleaved; `targets` are
 * [a, b, max]: the median of the per-round ratio a/b must be <= max, or,
 * with b null, a's median time must be <= max ms.
 */
export async function bench(name, variants, targets, rounds = runs) {
  if (only && !name.includes(only)) return null;
  const live = variants.filter(Boolean);
  targets = targets.filter(Boolean);
  const pairs = targets.filter(([a, b]) => b !== null && live.some(([l]) => l === a) && live.some(([l]) => l === b));
  const { medians, ratios } = await interleaved(live, pairs.map(([a, b]) => [a, b]), rounds);
  const judged = targets
    .filter(([a, b]) => a in medians && (b === null || b in medians))
    .map(([a, b, max]) => {
      const value = b === null ? medians[a] : ratios.find((r) => r.a === a && r.b === b).ratio;
      return { a, b, max, value, met: value <= max };
    });
  rows.push({ case: name, medians, targets: judged });
  const times = Object.entries(medians).map(([l, ms]) => `${l} ${fmt(ms)} ms`).join("; ");
  const verdicts = judged.map((t) => (t.b === null ? `${t.a} ${fmt(t.value)} ms (target <= ${t.max} ms: ${t.met ? "met" : "MISSED"})` : `${t.a} / ${t.b} = ${t.value.toFixed(2)} (target <= ${t.max}: ${t.met ? "met" : "MISSED"})`));
  console.log(`\n${name}\n  ${times}${verdicts.length ? `\n  ${verdicts.join("\n  ")}` : ""}`);
  return { medians, judged };
}

export function saveResults(script, extra = {}) {
  const outDir = path.join(root, "bench", "results");
  fs.mkdirSync(outDir, { recursive: true });
  const meta = {
    date: new Date().toISOString(),
    corpus: corpusName,
    runs,
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    loadavg: os.loadavg(),
    node: process.version,
    rg: spawnSync("rg", ["--version"], { encoding: "utf8" }).stdout.split("\n")[0],
  };
  const suffix = only ? `-${only.replace(/[^A-Za-z0-9]+/g, "_")}` : "";
  fs.writeFileSync(path.join(outDir, `${script}-${corpusName}${suffix}.json`), JSON.stringify({ meta, rows, ...extra }, null, 2));
  if (corpusName === "small") fs.rmSync(corpus, { recursive: true, force: true });
}
