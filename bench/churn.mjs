#!/usr/bin/env node
// The live index while the tree is being written (issue 44): the first search after each kind of change,
// with the change applied where it happened, against a scan of the same tree; a writer creating a file
// every 50 ms while searches run every 200 ms; the glob tool's listing from the table after a change; and a
// burst of 5,000 new files, searched every 250 ms, then left without searches until they are folded into a
// new generation. Every search's hits are checked against the scan's (same files, same count) where the case
// says so, and the glob's entries against a walk's.
//
//   node bench/churn.mjs --corpus linux [--copies 4] [--runs 9]
//
// --copies N searches a tree of N copies of the corpus (made once beside it with `cp -r`, not hard links:
// a file with more than one link is never trusted to the postings). The postings go to a temp folder.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { corpus as baseCorpus, native, opt, runs, saveResults } from "./lib/setup.mjs";

const copies = Number(opt("--copies", "1"));
const store = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-churn-bench-"));
process.env.PI_UTILS_INDEX_DIR = store;

/** The tree to search: the corpus, or N copies of it side by side (made once, kept for the next run). */
function treeOf(n) {
  if (n <= 1) return baseCorpus;
  const dir = `${baseCorpus}-x${n}`;
  if (!fs.existsSync(dir)) {
    fs.mkdirSync(`${dir}.partial`, { recursive: true });
    for (let i = 0; i < n; i++) spawnSync("cp", ["-r", baseCorpus, path.join(`${dir}.partial`, `copy${i}`)]);
    fs.renameSync(`${dir}.partial`, dir);
  }
  return dir;
}
const tree = treeOf(copies);
const top = copies > 1 ? path.join(tree, "copy0") : tree;

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const RARE = "sched_clock_irqtime";

/** One search through the index: ms, the files it found, and how the index served it. */
async function search(pattern, index = true) {
  const t = performance.now();
  const s = native.grep({ path: tree, pattern, literal: true, mode: "files", ignoredCountOnly: true, index });
  const files = [];
  for (let b = await s.nextBatch(); b; b = await s.nextBatch()) files.push(...b.map((h) => h.path));
  return { ms: performance.now() - t, files: files.sort().join("\n"), how: s.summary().index };
}

const t0 = performance.now();
native.indexStart({ path: tree });
const built = await native.indexWarm({ path: tree });
const buildMs = performance.now() - t0;
const rg = (() => {
  const t = performance.now();
  spawnSync("rg", ["-uu", "-c", RARE, tree], { encoding: "utf8", maxBuffer: 1 << 26 });
  return performance.now() - t;
})();
console.log(`tree ${tree}: ${built.files} files; index built in ${fmt(buildMs)} ms (${fmt(buildMs / rg)} x one rg -uu pass of ${fmt(rg)} ms)`);
const rssMB = process.memoryUsage().rss / 1048576;
const anonMB = Number(/RssAnon:\s+(\d+)/.exec(fs.readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0) / 1024;
console.log(`RSS ${fmt(rssMB)} MB, anonymous ${fmt(anonMB)} MB after the build`);

const results = {};
let wrong = 0;
/** Runs `change` then one search, `runs` times (with `undo` after each); reports median and p90. */
async function timed(name, change, undo, { token = RARE, check = true } = {}) {
  const ms = [];
  const scanMs = [];
  for (let i = 0; i < runs; i++) {
    await change(i);
    const r = await search(token);
    ms.push(r.ms);
    if (r.how !== "used") console.log(`  ${name}: round ${i} answered by ${r.how}`);
    if (check) {
      const scan = await search(token, false);
      scanMs.push(scan.ms);
      if (scan.files !== r.files) {
        wrong++;
        console.log(`  ${name}: round ${i} DIFFERS from the scan`);
      }
    }
    await undo?.(i);
    await search(token); // the undo applied before the next round
  }
  const row = { median: quantile(ms, 0.5), p90: quantile(ms, 0.9), scanMedian: scanMs.length ? quantile(scanMs, 0.5) : undefined };
  results[name] = row;
  console.log(`${name.padEnd(58)} median ${fmt(row.median).padStart(6)} ms  p90 ${fmt(row.p90).padStart(6)} ms${row.scanMedian ? `   (scan ${fmt(row.scanMedian)} ms)` : ""}`);
}

const kernel = path.join(top, "kernel");
const token = (i) => `churn_token_${process.pid}_${i}`;
await timed("nothing changed", () => {}, null);
await timed(
  "one file created in kernel/",
  (i) => fs.writeFileSync(path.join(kernel, `churn-${i}.c`), `/* ${RARE} ${token(i)} */\n`),
  (i) => fs.rmSync(path.join(kernel, `churn-${i}.c`)),
);
{
  const victim = path.join(kernel, "churn-victim.c");
  await timed(
    "that file deleted",
    (i) => {
      fs.writeFileSync(victim, `/* ${RARE} ${i} */\n`);
      return search(RARE).then(() => fs.rmSync(victim));
    },
    null,
  );
}
{
  const appended = path.join(kernel, "sched/cputime.c");
  const original = fs.readFileSync(appended);
  try {
    await timed("an existing file appended to", (i) => fs.appendFileSync(appended, `\n/* ${RARE} append ${i} */\n`), null);
  } finally {
    fs.writeFileSync(appended, original);
  }
}
const build = path.join(top, ".churn-build");
await timed(
  "20 files created in a gitignored build folder",
  (i) => {
    fs.mkdirSync(build, { recursive: true });
    for (let f = 0; f < 20; f++) fs.writeFileSync(path.join(build, `o${i}-${f}.o`), `${RARE} obj ${f}\n`);
  },
  () => fs.rmSync(build, { recursive: true, force: true }),
);
await timed(
  "mkdir -p a/b/c + one file",
  (i) => {
    fs.mkdirSync(path.join(top, `churn-a${i}/b/c`), { recursive: true });
    fs.writeFileSync(path.join(top, `churn-a${i}/b/c/f.c`), `${RARE}\n`);
  },
  (i) => fs.rmSync(path.join(top, `churn-a${i}`), { recursive: true, force: true }),
);
{
  // A folder of about a hundred files, renamed and back.
  const folder = path.join(top, "drivers/net/ethernet/intel/e1000e");
  const count = fs.readdirSync(folder).length;
  await timed(
    `a ${count}-file folder renamed`,
    () => fs.renameSync(folder, `${folder}-renamed`),
    () => fs.renameSync(`${folder}-renamed`, folder),
  );
}

// The glob tool's listing (`kind: "any"`, newest first, limit 100) after one file created: from the live
// table (no directory is named `*.c`, so the table answers) against a walk; same entries, times and sizes.
{
  const ms = [];
  const walkMs = [];
  const text = (r) => `${r.total}\n${r.entries.map((e) => `${e.path} ${e.isDir} ${e.mtimeMs} ${e.size} ${e.ignored}`).join("\n")}`;
  for (let i = 0; i < runs; i++) {
    const f = path.join(kernel, `churn-glob-${i}.c`);
    fs.writeFileSync(f, `/* ${i} */\n`);
    const options = { path: tree, pattern: "*.c", kind: "any", limit: 100 };
    let t = performance.now();
    const via = await native.glob({ ...options, index: true });
    ms.push(performance.now() - t);
    t = performance.now();
    const walk = await native.glob({ ...options, index: false });
    walkMs.push(performance.now() - t);
    if (via.index !== "used") console.log(`  glob: round ${i} answered by ${via.index}`);
    if (text(via) !== text(walk)) {
      wrong++;
      console.log(`  glob: round ${i} DIFFERS from the walk`);
    }
    fs.rmSync(f);
    await search(RARE);
  }
  const row = { median: quantile(ms, 0.5), p90: quantile(ms, 0.9), scanMedian: quantile(walkMs, 0.5) };
  results.glob = row;
  console.log(`${"glob *.c, kind any, newest 100, after one file created".padEnd(58)} median ${fmt(row.median).padStart(6)} ms  p90 ${fmt(row.p90).padStart(6)} ms   (walk ${fmt(row.scanMedian)} ms)`);
}

// A writer creating one file every 50 ms in a gitignored folder; a search every 200 ms.
{
  const dir = path.join(top, ".churn-writer");
  fs.mkdirSync(dir, { recursive: true });
  let k = 0;
  const writer = setInterval(() => fs.writeFileSync(path.join(dir, `w${k++}.txt`), `${RARE} ${k}\n`), 50);
  const ms = [];
  for (let i = 0; i < Math.max(20, runs * 3); i++) {
    await new Promise((r) => setTimeout(r, 200));
    const r = await search(RARE);
    ms.push(r.ms);
    if (r.how !== "used") console.log(`  writer: search ${i} answered by ${r.how}`);
  }
  clearInterval(writer);
  const scan = await search(RARE, false);
  const via = await search(RARE);
  if (scan.files !== via.files) {
    wrong++;
    console.log("  writer: the last search DIFFERS from the scan");
  }
  results.writer = { median: quantile(ms, 0.5), p90: quantile(ms, 0.9), files: k };
  console.log(`${"a writer, one file per 50 ms; a search per 200 ms".padEnd(58)} median ${fmt(results.writer.median).padStart(6)} ms  p90 ${fmt(results.writer.p90).padStart(6)} ms`);
  fs.rmSync(dir, { recursive: true, force: true });
  await search(RARE);
}

// 5,000 new files in 250 new (ignored) folders, then searches until they are back under 2 ms.
{
  const dir = path.join(top, ".churn-burst");
  const builtAt = () => native.indexStatus({ path: tree }).builtAtMs;
  const before = builtAt();
  for (let d = 0; d < 250; d++) {
    fs.mkdirSync(path.join(dir, `d${d}`), { recursive: true });
    for (let f = 0; f < 20; f++) fs.writeFileSync(path.join(dir, `d${d}`, `f${f}.txt`), `burst ${d} ${f}\n`);
  }
  const first = await search(RARE);
  const t = performance.now();
  const after = [];
  let back = null;
  while (performance.now() - t < 30_000) {
    await new Promise((r) => setTimeout(r, 250));
    const r = await search(RARE);
    after.push(r.ms);
    if (r.ms < 2 && back === null) back = performance.now() - t;
    if (back !== null && after.length > 5) break;
  }
  const scan = await search(RARE, false);
  if (scan.files !== (await search(RARE)).files) {
    wrong++;
    console.log("  burst: DIFFERS from the scan");
  }
  results.burst = { first: first.ms, median: quantile(after, 0.5), backUnder2msAfterMs: back };
  console.log(
    `${"5,000 files in 250 new ignored folders".padEnd(58)} first ${fmt(first.ms)} ms, then median ${fmt(results.burst.median)} ms; under 2 ms after ${back === null ? "never (30 s)" : `${fmt(back)} ms`}`,
  );
  // Then no search for a while: the files the delta holds are folded into a new generation once the searches
  // stop (the index's idle time, 5 s), which `builtAtMs` shows (a rebuild started by the burst itself shows
  // the same, sooner); then searches again.
  const idle = performance.now();
  while (builtAt() === before && performance.now() - idle < 120_000) await new Promise((r) => setTimeout(r, 250));
  const foldedMs = builtAt() === before ? null : performance.now() - idle;
  const later = [];
  for (let i = 0; i < Math.max(9, runs); i++) {
    await new Promise((r) => setTimeout(r, 250));
    later.push((await search(RARE)).ms);
  }
  const scan2 = await search(RARE, false);
  if (scan2.files !== (await search(RARE)).files) {
    wrong++;
    console.log("  burst, after the idle time: DIFFERS from the scan");
  }
  Object.assign(results.burst, { foldedAfterIdleMs: foldedMs, afterFold: quantile(later, 0.5), afterFoldP90: quantile(later, 0.9) });
  console.log(
    `${"  then no search: a new generation holds them".padEnd(58)} ${foldedMs === null ? "not within 120 s" : `after ${fmt(foldedMs)} ms`}; then median ${fmt(results.burst.afterFold)} ms  p90 ${fmt(results.burst.afterFoldP90)} ms`,
  );
  fs.rmSync(dir, { recursive: true, force: true });
}

console.log(`\nanswers that differed from the scan: ${wrong}`);
native.indexDrop({ path: tree });
fs.rmSync(store, { recursive: true, force: true });
saveResults(`churn-x${copies}`, { tree, files: built.files, buildMs, rgMs: rg, rssMB, anonMB, results, wrong });
