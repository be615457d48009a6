#!/usr/bin/env node
// Side-by-side benchmark: the addon (in-process) against the peers, in one
// run, on the same tree. Prints medians and ratios ours/peer.
//
//   node bench/run.mjs [--corpus linux|small] [--runs N] [--only substring]
//
// --only group: grouped vs flat grep; --only outline: outline of a
// generated ~100 KB TypeScript file. A filtered run writes its own results file.
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
const { runGrepTool } = await import(path.join(root, "extensions/lib/search/grep.mjs"));
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

// Grouping on dense queries over C sources (the tree's first files
// in path order are Documentation/, which has no grammar): many matching
// files, so structure is extracted for as many files as the limit lets through.
for (const [word, limit, target] of [["return", 100, 1.2], ["return", 1000, 2], ["static", 100, 1.2], ["static", 1000, 2]]) {
  await caseRow(
    `group: dense \`${word}\`, limit ${limit}, native`,
    `<= ${target} x ungrouped`,
    () => nativeGrep({ pattern: word, literal: true, maxCount: limit, type: "c", group: true }),
    [["ungrouped", () => nativeGrep({ pattern: word, literal: true, maxCount: limit, type: "c" })]],
  );
}
// Cold: the first grouped search in a fresh process (outline cache empty; the
// C and C++ grammars and queries already loaded, as after a session's first
// grep; `.h` files with C++ markers are read as C++).
function coldGroupRatio(word, limit) {
  const script = `const n = require(${JSON.stringify(path.join(root, "index.js"))});
    const fs = require("fs"), os = require("os"), path = require("path");
    (async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-bench-c-"));
      fs.writeFileSync(path.join(dir, "x.c"), "int f(void) { return 0; }\\n");
      fs.writeFileSync(path.join(dir, "x.h"), "namespace a { int g(void); }\\n");
      await n.outline({ path: path.join(dir, "x.c") });
      await n.outline({ path: path.join(dir, "x.h") });
      fs.rmSync(dir, { recursive: true, force: true });
      const run = async (group) => {
        const t = performance.now();
        const s = n.grep({ path: ${JSON.stringify(corpus)}, pattern: ${JSON.stringify(word)}, literal: true, maxCount: ${limit}, type: "c", group });
        for (let b; (b = await s.nextBatch()); );
        return performance.now() - t;
      };
      await run(false);
      const flat = await run(false);
      const grouped = await run(true);
      console.log(JSON.stringify({ flat, grouped }));
    })();`;
  const samples = [];
  for (let i = 0; i < Math.min(runs, 7); i++) {
    const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
    samples.push(JSON.parse(r.stdout.trim()));
  }
  return { flat: median(samples.map((x) => x.flat)), grouped: median(samples.map((x) => x.grouped)) };
}
if (!only || "group: cold".includes(only)) {
  for (const [word, limit, target] of [["return", 100, 1.2], ["return", 1000, 2], ["static", 100, 1.2], ["static", 1000, 2]]) {
    const c = coldGroupRatio(word, limit);
    console.log(`group: cold (first search in a process) \`${word}\`, limit ${limit}: grouped ${c.grouped.toFixed(1)} ms; ungrouped ${c.flat.toFixed(1)} ms (ratio ${(c.grouped / c.flat).toFixed(2)}) [target <= ${target} x ungrouped]`);
    rows.push({ case: `group: cold \`${word}\`, limit ${limit}`, target: `<= ${target} x ungrouped`, ours: c.grouped, peers: [{ peer: "ungrouped", ms: c.flat, ratio: c.grouped / c.flat }] });
  }
}
await caseRow(
  "group: dense `return`, limit 100, grep tool text",
  "<= 1.2 x group:false",
  () => runGrepTool(native, { pattern: "return", literal: true, type: "c" }, toolConfig),
  [["group:false", () => runGrepTool(native, { pattern: "return", literal: true, type: "c", group: false }, toolConfig)]],
);
if (!only || "group: structure share".includes(only)) {
  // How much of the output the grouping reaches: files grouped among files shown.
  for (const [word, limit] of [["return", 100], ["return", 1000]]) {
    const s = native.grep({ path: corpus, pattern: word, literal: true, maxCount: limit, type: "c", group: true });
    const files = new Set();
    let grouped = 0;
    for (let b = await s.nextBatch(); b; b = await s.nextBatch()) {
      for (const h of b) {
        files.add(h.path);
        if (h.fileStructure) grouped++;
      }
    }
    console.log(`group: \`${word}\` limit ${limit}: ${grouped} of ${files.size} files shown are grouped`);
  }
}

function generatedTypeScript(bytes) {
  let src = "";
  for (let i = 0; src.length < bytes; i++) {
    src +=
      `export interface Shape${i} {\n  area(): number;\n  name: string;\n}\n\n` +
      `export class Widget${i} implements Shape${i} {\n  private count = ${i};\n  handle = (e: Event) => {\n    this.count += 1;\n  };\n\n` +
      `  area(): number {\n    const inner = (n: number) => n * 2;\n    return inner(this.count) + Math.max(1, 2);\n  }\n\n` +
      `  get name(): string {\n    return \`w\${this.count}\`;\n  }\n}\n\n` +
      `export const make${i} = async (id: number): Promise<Widget${i}> => {\n  const w = new Widget${i}();\n  if (id > 3) { return w; }\n  return w;\n};\n\n`;
  }
  return src;
}
if (!only || "outline 100 KB TypeScript".includes(only)) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-bench-outline-"));
  try {
    const file = path.join(dir, "generated.ts");
    fs.writeFileSync(file, generatedTypeScript(100 * 1024));
    const zod = path.join(root, "node_modules/zod/src/v4/classic/schemas.ts");
    const peers = fs.existsSync(zod) ? [["zod schemas.ts (real file, same call)", () => native.outline({ path: zod })]] : [];
    await caseRow(`outline 100 KB TypeScript (${fs.statSync(file).size} B)`, "< 20 ms", () => native.outline({ path: file }), peers);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

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
const suffix = only ? `-${only.replace(/[^A-Za-z0-9]+/g, "_")}` : "";
fs.writeFileSync(path.join(outDir, `grep-${corpusName}${suffix}.json`), JSON.stringify({ meta, rows }, null, 2));
if (corpusName === "small") fs.rmSync(corpus, { recursive: true, force: true });
