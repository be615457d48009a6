#!/usr/bin/env node
// Grouping, outline and peak-RSS cases, split from bench/run.mjs
// (the scan cases). Same arguments: --corpus linux|small, --runs N, --only substring.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { bench, corpus, native, nativeGrep, root, rows, runs, only, saveResults } from "./lib/setup.mjs";
import { median } from "./lib/interleave.mjs";

const { runGrepTool } = await import(path.join(root, "extensions/lib/search/grep.mjs"));
const toolConfig = { cwd: corpus, timeoutMs: 30000, graceMs: 3000, noIgnore: true, maxLineLength: 500, maxBytes: 51200, defaultLimit: 100, index: false };

function peakRss(code) {
  const script = `const n = require(${JSON.stringify(path.join(root, "index.js"))});
    (async () => { ${code}; console.log(process.resourceUsage().maxRSS); })();`;
  const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
  return Number(r.stdout.trim()) / 1024; // MB
}

// Grouping on dense queries over C sources (the tree's first files
// in path order are Documentation/, which has no grammar): many matching
// files, so structure is extracted for as many files as the limit lets through.
for (const [word, limit, target] of [["return", 100, 1.2], ["return", 1000, 2], ["static", 100, 1.2], ["static", 1000, 2]]) {
  await bench(
    `group: dense \`${word}\`, limit ${limit}, native`,
    [["grouped", () => nativeGrep({ pattern: word, literal: true, maxCount: limit, type: "c", group: true })], ["ungrouped", () => nativeGrep({ pattern: word, literal: true, maxCount: limit, type: "c" })]],
    [["grouped", "ungrouped", target]],
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
    const ratio = c.grouped / c.flat;
    rows.push({ case: `group: cold \`${word}\`, limit ${limit}`, medians: { grouped: c.grouped, ungrouped: c.flat }, targets: [{ a: "grouped", b: "ungrouped", max: target, value: ratio, met: ratio <= target }] });
  }
}
await bench(
  "group: dense `return`, limit 100, grep tool text",
  [["grouped", () => runGrepTool(native, { pattern: "return", literal: true, type: "c" }, toolConfig)], ["group:false", () => runGrepTool(native, { pattern: "return", literal: true, type: "c", group: false }, toolConfig)]],
  [["grouped", "group:false", 1.2]],
);
if (!only || "group: structure share".includes(only)) {
  // How much of the output the grouping reaches: files grouped among files shown.
  for (const [word, limit] of [["return", 100], ["return", 1000]]) {
    const s = native.grep({ path: corpus, index: false, pattern: word, literal: true, maxCount: limit, type: "c", group: true });
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
    await bench(`outline 100 KB TypeScript (${fs.statSync(file).size} B)`, [["generated file", () => native.outline({ path: file })], ...peers], [["generated file", null, 20]]);
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

saveResults("structure");
