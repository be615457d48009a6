#!/usr/bin/env node
// The scan path side by side with what it replaces: the grep and
// glob tools and the native calls against Pi's own grep tool (both hosts),
// rg spawned the Pi way, rg/fd as whole processes, oh-my-pi's natives, and
// the CLI as a whole process. Every case runs its variants interleaved and
// judges its targets on the median of the per-round ratios.
//
//   node bench/run.mjs --corpus linux [--runs 9] [--only substring]
//
// Grouping and outline cases are in bench/structure.mjs.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { bench, corpus, indexJs, native, nativeGrep, root, rows, runs, only, saveResults } from "./lib/setup.mjs";
import { median } from "./lib/interleave.mjs";
import { NODE22, PI_HOSTS, RG_ALL, ompNatives, piGrepTool, piStyleRg, processRun } from "./lib/peers.mjs";

const { runGrepTool } = await import(path.join(root, "extensions/lib/search/grep.mjs"));
const toolConfig = { cwd: corpus, timeoutMs: 30000, graceMs: 3000, noIgnore: true, maxLineLength: 500, maxBytes: 51200, defaultLimit: 100, index: false };
const ourTool = (params) => () => runGrepTool(native, params, toolConfig);
// What the tool asks of the core, as a bare call.
const ourNative = (opts) => () => nativeGrep({ ignoredCountOnly: true, maxLineLength: 500, ...opts });

const piTools = [];
for (const dir of PI_HOSTS) {
  if (!fs.existsSync(dir)) continue;
  const t = await piGrepTool(dir, corpus, NODE22);
  if (t) piTools.push(t);
}
const piVariants = (params) => piTools.map((t) => [t.label, () => t.run(params)]);
const piTargets = (ours, max) => piTools.map((t) => [ours, t.label, max]);
const omp = ompNatives();
const ompLabel = omp && `oh-my-pi natives ${omp.version}`;
const ompGrep = (opts) => omp && [ompLabel, () => omp.native.grep({ path: corpus, hidden: true, gitignore: false, ...opts })];
const inCorpus = (cmd, argv) => () => processRun(corpus, cmd, argv);
// The CLI runs on the Node that Pi 1.6's users have (22; the bench's own where that binary is absent). Node 20
// reads NODE_EXTRA_CA_CERTS at start-up (this machine sets it: +37 ms to every process, ours or not); Node 22
// reads it when TLS first needs it. The count case also shows the CLI on the bench's Node, as is.
const CLI_NODE = fs.existsSync(NODE22) ? NODE22 : process.execPath;
const cliOn = (node) => (...argv) => inCorpus(node, [path.join(root, "bin/pi-utils.mjs"), ...argv]);
const cli = cliOn(CLI_NODE);
const fd = ["fd", "fdfind"].find((c) => spawnSync(c, ["--version"]).status === 0);

const TOOL = "grep tool (ours)";
const NATIVE = "native grep (ours)";
const RG_PI = "rg spawned the Pi way";

// Full walks: a pattern with fewer hits than the limit reads the whole tree.
const rare = "sched_clock_irqtime";
await bench(
  `rare literal \`${rare}\`, limit 100 (full walk)`,
  [[TOOL, ourTool({ pattern: rare, literal: true })], [NATIVE, ourNative({ pattern: rare, literal: true, maxCount: 100 })], ...piVariants({ pattern: rare, literal: true }), [RG_PI, () => piStyleRg(corpus, rare, 100, ["--fixed-strings"])]],
  [...piTargets(TOOL, 0.9), [NATIVE, RG_PI, 0.9]],
);
const ctxRegex = "irqtime_account_[a-z]+\\(";
await bench(
  `regex \`${ctxRegex}\` with context 2, limit 100 (full walk)`,
  [[TOOL, ourTool({ pattern: ctxRegex, context: 2 })], [NATIVE, ourNative({ pattern: ctxRegex, context: 2, maxCount: 100 })], ...piVariants({ pattern: ctxRegex, context: 2 }), [RG_PI, () => piStyleRg(corpus, ctxRegex, 100)]],
  [...piTargets(TOOL, 0.9), [NATIVE, RG_PI, 0.9]],
);

const countRegex = "[A-Z]+_SUSPEND";
// Count and files over the whole tree, ours by scan (`index: false`) or through a ready index.
const wholeTree = [
  ["count", "-c", "count"],
  ["files", "-l", "filesWithMatches"],
];
async function wholeTreeCases(suffix, index) {
  for (const [mode, rgFlag, ompMode] of wholeTree) {
    await bench(
      `${mode} \`${countRegex}\`, whole tree${suffix}`,
      [[NATIVE, () => nativeGrep({ pattern: countRegex, mode, index })], [`rg ${rgFlag}`, inCorpus("rg", [...RG_ALL, rgFlag, countRegex])], ompGrep({ pattern: countRegex, mode: ompMode })],
      [[NATIVE, `rg ${rgFlag}`, 1.0], omp && [NATIVE, ompLabel, 1.0]],
    );
  }
}
await wholeTreeCases("", false);

// The same two searches as a Pi user runs them by default once the live index of the tree is ready
// (built here into a temp store first): oh-my-pi keeps a listing cache between calls; this is ours.
const indexed = ", index ready";
if (wholeTree.some(([mode]) => !only || `${mode} \`${countRegex}\`, whole tree${indexed}`.includes(only))) {
  const store = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-bench-index-"));
  process.env.PI_UTILS_INDEX_DIR = store;
  await native.indexWarm({ path: corpus });
  await wholeTreeCases(indexed, true);
  native.indexDrop({ path: corpus });
  fs.rmSync(store, { recursive: true, force: true });
  delete process.env.PI_UTILS_INDEX_DIR;
}

// Whole processes. `--json -c` lists every file like `rg -c` (the text
// output stops at the tool's 100-file default, as `-c` below).
const empty = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-bench-empty-"));
const bare = "node -e 0";
const nodeVersion = (node) => spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
const cliNodeNote = `, CLI and \`${bare}\` on Node ${nodeVersion(CLI_NODE)}`;
const benchNode = `CLI --json -c on Node ${process.version}${process.env.NODE_EXTRA_CA_CERTS ? " (NODE_EXTRA_CA_CERTS set)" : ""}`;
await bench(
  `CLI \`pi-utils grep --json -c ${countRegex} .\`, whole process${cliNodeNote}`,
  [["CLI --json -c", cli("grep", "--json", "-c", countRegex, ".")], ["CLI -c (text, 100 files)", cli("grep", "-c", countRegex, ".")], ["rg -c", inCorpus("rg", [...RG_ALL, "-c", countRegex])], [NATIVE, () => nativeGrep({ pattern: countRegex, mode: "count" })], [bare, inCorpus(CLI_NODE, ["-e", "0"])], ...(CLI_NODE === process.execPath ? [] : [[benchNode, cliOn(process.execPath)("grep", "--json", "-c", countRegex, ".")]])],
  [["CLI --json -c", "rg -c", 1.1]],
);
// The same CLI count where a Pi session has left a saved index of the tree (made here by another process, which
// exits first): the CLI re-validates that picture, never builds one, and reads the candidates; `--no-index` scans.
const savedCase = `CLI \`pi-utils grep --json -c ${countRegex} .\` with a saved index, whole process`;
if (!only || savedCase.includes(only)) {
  const store = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-bench-saved-"));
  const warm = `require(${JSON.stringify(indexJs)}).indexWarm({ path: ${JSON.stringify(corpus)} }).then(() => process.exit(0))`;
  spawnSync(process.execPath, ["-e", warm], { env: { ...process.env, PI_UTILS_INDEX_DIR: store }, stdio: "inherit" });
  process.env.PI_UTILS_INDEX_DIR = store;
  const summary = spawnSync(process.execPath, [path.join(root, "bin/pi-utils.mjs"), "grep", "--json", "-c", countRegex, "."], { cwd: corpus, encoding: "utf8", maxBuffer: 64 << 20 });
  console.log(`  the CLI's summary with the saved index: ${summary.stdout.trim().split("\n").at(-1)}`);
  await bench(
    savedCase + cliNodeNote,
    [["CLI --json -c, saved index", cli("grep", "--json", "-c", countRegex, ".")], ["CLI --json -c --no-index", cli("grep", "--json", "-c", "--no-index", countRegex, ".")], ["rg -c", inCorpus("rg", [...RG_ALL, "-c", countRegex])]],
    [["CLI --json -c, saved index", "rg -c", 1.1], ["CLI --json -c, saved index", "CLI --json -c --no-index", 1.0]],
  );
  delete process.env.PI_UTILS_INDEX_DIR;
  fs.rmSync(store, { recursive: true, force: true });
}
const glob = "*.c";
const rgSorted = "rg --files --sortr=modified";
await bench(
  `CLI \`pi-utils glob --limit 100 '${glob}' .\`, whole process; CLI start-up${cliNodeNote}`,
  [["CLI glob", cli("glob", "--limit", "100", glob, ".")], [rgSorted, inCorpus("rg", [...RG_ALL, "--files", "--sortr=modified", "-g", glob])], ["CLI glob, empty dir", cli("glob", "--limit", "1", glob, empty)], [bare, inCorpus(CLI_NODE, ["-e", "0"])]],
  [["CLI glob", rgSorted, 1.2]],
);

// Early exits: the limit is reached in the tree's first files.
await bench(
  "early exit `static`, limit 100",
  [[TOOL, ourTool({ pattern: "static", literal: true })], [NATIVE, ourNative({ pattern: "static", literal: true, maxCount: 100 })], ...piVariants({ pattern: "static", literal: true })],
  piTargets(TOOL, 0.5),
);
await bench(
  "early exit `static`, limit 1",
  [[TOOL, ourTool({ pattern: "static", literal: true, limit: 1 })], [NATIVE, ourNative({ pattern: "static", literal: true, maxCount: 1 })], ...piVariants({ pattern: "static", literal: true, limit: 1 })],
  [[NATIVE, null, 2], [TOOL, null, 2]],
);

await bench(
  `glob \`${glob}\` newest 100`,
  [
    ["native glob (ours)", () => native.glob({ pattern: glob, path: corpus, limit: 100 })],
    [rgSorted, inCorpus("rg", [...RG_ALL, "--files", "--sortr=modified", "-g", glob])],
    fd && [`${fd} -HI -e c`, inCorpus(fd, ["-HI", "-e", "c"])],
    omp && [ompLabel, () => omp.native.glob({ pattern: glob, path: corpus, maxResults: 100, sortByMtime: true, hidden: true, gitignore: false })],
  ],
  [["native glob (ours)", rgSorted, 0.6], fd && ["native glob (ours)", `${fd} -HI -e c`, 1.5]],
);

// Pi runs a turn's tool calls in parallel: 12 full-tree greps in one process.
function childRun(how, n) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, "bench/lib/concurrent-child.mjs"), indexJs, corpus, how, String(n), rare], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (c) => (out += c));
    child.on("error", reject);
    child.on("close", () => resolve(JSON.parse(out)));
  });
}
const concurrentName = "12 concurrent full-tree greps in one process";
if (!only || concurrentName.includes(only)) {
  const rss = { concurrent: [], sequential: [] };
  const run = (how) => async () => {
    const r = await childRun(how, 12);
    rss[how].push(r.maxRssMb);
    return { ms: r.wallMs };
  };
  await bench(concurrentName, [["12 at once", run("concurrent")], ["12 one after another", run("sequential")]], [["12 at once", "12 one after another", 1.1]], Math.min(runs, 3));
  const peak = { concurrent: median(rss.concurrent), sequential: median(rss.sequential) };
  console.log(`  peak RSS: 12 at once ${peak.concurrent.toFixed(0)} MB (target <= 150), one after another ${peak.sequential.toFixed(0)} MB`);
  rows.push({ case: `${concurrentName}: peak RSS (MB)`, medians: peak, targets: [{ a: "12 at once", b: null, max: 150, value: peak.concurrent, met: peak.concurrent <= 150 }] });
}

for (const t of piTools) t.close();
fs.rmSync(empty, { recursive: true, force: true });
saveResults("scan", { runs, only });
