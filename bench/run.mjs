#!/usr/bin/env node
// Side-by-side benchmark: the addon (in-process) against the peers, in one
// run, on the same tree. Prints medians and ratios ours/peer.
//
//   node bench/run.mjs [--corpus linux|small] [--runs N] [--only substring]
//
// linux: $PI_UTILS_CORPUS, default ~/.cache/pi-utils-bench/linux-source-6.12
//        (apt-get install linux-source-6.12, then
//        tar xJf /usr/src/linux-source-6.12.tar.xz -C ~/.cache/pi-utils-bench).
//        Keep it outside any git checkout: rg applies the checkout's
//        .gitignore to it, which silently skews the comparison.
// small: a generated tree (made on the fly, removed afterwards).
import { createRequire } from "node:module";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const native = createRequire(import.meta.url)(path.join(root, "index.js"));

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const corpusName = opt("--corpus", "small");
const runs = Number(opt("--runs", "15"));
const only = opt("--only", "");

function makeSmallTree() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-bench-"));
  const words = ["static", "int", "return", "struct", "void", "kmalloc", "if", "else"];
  for (let i = 0; i < 3000; i++) {
    const sub = path.join(dir, `d${i % 40}`, `e${i % 7}`);
    fs.mkdirSync(sub, { recursive: true });
    let body = "";
    for (let l = 0; l < 200; l++) body += `${words[(i + l) % words.length]} line ${l} of file ${i}\n`;
    if (i === 2999) body += "kmalloc_array_node_rare\n";
    fs.writeFileSync(path.join(sub, `f${i}.${i % 3 === 0 ? "c" : "h"}`), body);
  }
  return dir;
}

const linuxCorpus = process.env.PI_UTILS_CORPUS || path.join(os.homedir(), ".cache", "pi-utils-bench", "linux-source-6.12");
const corpus = corpusName === "linux" ? linuxCorpus : makeSmallTree();
if (!fs.existsSync(corpus)) {
  console.error(`corpus missing: ${corpus}\nsee the header of bench/run.mjs`);
  process.exit(2);
}
const fd = ["fd", "fdfind"].find((c) => spawnSync(c, ["--version"]).status === 0);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

async function time(fn) {
  await fn(); // warm-up
  const xs = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    xs.push(performance.now() - t);
  }
  return median(xs);
}

async function nativeGrep(opts) {
  const s = native.grep({ path: corpus, ...opts });
  let n = 0;
  for (let b = await s.nextBatch(); b; b = await s.nextBatch()) n += b.length;
  return n;
}

/** rg spawned the way Pi 0.73's grep tool does: --json, parsed in JS, killed at the limit. */
function piStyleRg(pattern, limit, extra = []) {
  return new Promise((resolve, reject) => {
    const child = spawn("rg", ["--json", "--line-number", "--color=never", "--hidden", ...extra, "--", pattern, corpus], { stdio: ["ignore", "pipe", "pipe"] });
    let buf = "";
    let matches = 0;
    let killed = false;
    child.stdout.on("data", (chunk) => {
      if (killed) return;
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const ev = JSON.parse(line);
        if (ev.type === "match" && ++matches >= limit) {
          killed = true;
          child.kill();
          return;
        }
      }
    });
    child.on("error", reject);
    child.on("close", () => resolve(matches));
  });
}

function cli(cmd, argv) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { cwd: corpus, stdio: ["ignore", "pipe", "ignore"] });
    let bytes = 0;
    child.stdout.on("data", (c) => (bytes += c.length));
    child.on("error", reject);
    child.on("close", () => resolve(bytes));
  });
}

function peakRss(code) {
  const script = `const n = require(${JSON.stringify(path.join(root, "index.js"))});
    (async () => { ${code}; console.log(process.resourceUsage().maxRSS); })();`;
  const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
  return Number(r.stdout.trim()) / 1024; // MB
}

const rows = [];
async function caseRow(name, target, ours, peers) {
  if (only && !name.includes(only)) return;
  const o = await time(ours);
  const row = { case: name, target, ours: o, peers: [] };
  for (const [peerName, fn] of peers) {
    const p = await time(fn);
    row.peers.push({ peer: peerName, ms: p, ratio: o / p });
  }
  rows.push(row);
  const peerText = row.peers.map((p) => `${p.peer} ${p.ms.toFixed(1)} ms (ratio ${p.ratio.toFixed(2)})`).join("; ");
  console.log(`${name}: ours ${o.toFixed(1)} ms; ${peerText} [target ${target}]`);
}

const rare = "kmalloc_array_node";
await caseRow("rare literal, limit 100", "<= 0.9 x Pi-style rg", () => nativeGrep({ pattern: rare, literal: true, maxCount: 100 }), [["Pi-style rg spawn", () => piStyleRg(rare, 100, ["--fixed-strings"])]]);
await caseRow("common literal `static`, limit 100", "<= 2 ms", () => nativeGrep({ pattern: "static", literal: true, maxCount: 100 }), [["Pi-style rg spawn", () => piStyleRg("static", 100, ["--fixed-strings"])]]);
await caseRow("regex count over the whole tree", "<= 1.0 x rg CLI", () => nativeGrep({ pattern: "[A-Z]+_SUSPEND", mode: "count" }), [["rg -c", () => cli("rg", ["--no-config", "--no-ignore", "--hidden", "-g", "!.git", "-c", "[A-Z]+_SUSPEND"])]]);
const { runGrepTool } = await import(path.join(root, "extensions/lib/grep-tool.mjs"));
const toolConfig = { cwd: corpus, timeoutMs: 30000, graceMs: 3000, noIgnore: true, maxLineLength: 500, maxBytes: 51200, defaultLimit: 100 };
await caseRow(
  "grep tool call, common word, limit 100",
  "< 10 ms; tool layer adds < 2 ms",
  () => runGrepTool(native, { pattern: "static", literal: true }, toolConfig),
  [["bare native call, same options", () => nativeGrep({ pattern: "static", literal: true, maxCount: 100, ignoredCountOnly: true, maxLineLength: 500 })]],
);
const globPeers = [["rg --files --sortr=modified", () => cli("rg", ["--no-config", "--no-ignore", "--hidden", "--files", "--sortr=modified", "-g", "*.c"])]];
if (fd) globPeers.push([`${fd} -e c`, () => cli(fd, ["-HI", "-e", "c"])]);
await caseRow("glob *.c newest 100", "<= 0.7 x rg sorted, <= 1.0 x fd", () => native.glob({ pattern: "*.c", path: corpus, limit: 100 }), globPeers);

if (!only || "rss".includes(only)) {
  const drain = `const s = n.grep({ pattern: "e", path: ${JSON.stringify(corpus)}, OPTS }); for (let b; (b = await s.nextBatch()); );`;
  const limited = peakRss(drain.replace("OPTS", "maxCount: 100"));
  const counted = peakRss(drain.replace("OPTS", 'mode: "count"'));
  const baseline = peakRss("");
  console.log(`peak RSS: node alone ${baseline.toFixed(0)} MB; pattern e limit 100 ${limited.toFixed(0)} MB (target < 100); count over the tree ${counted.toFixed(0)} MB (target < 150)`);
  rows.push({ case: "peak RSS (MB)", baseline, limited, counted });
}

const outDir = path.join(here, "results");
fs.mkdirSync(outDir, { recursive: true });
const meta = { date: new Date().toISOString(), corpus: corpusName, runs, cpus: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version, rg: spawnSync("rg", ["--version"], { encoding: "utf8" }).stdout.split("\n")[0] };
fs.writeFileSync(path.join(outDir, `grep-${corpusName}.json`), JSON.stringify({ meta, rows }, null, 2));
if (corpusName === "small") fs.rmSync(corpus, { recursive: true, force: true });
