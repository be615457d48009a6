#!/usr/bin/env node
// Characters of repeated `outline` and `trace` answers with and without a harness context (issue 46): the
// context says the model read each file in full and records its facts (fingerprint()), as a harness would
// after a `read`. Also checks that every region left out is still named with its range.
// Usage: node bench/harness-context.mjs [repo dir] (default: this repository). Needs the release addon.
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const native = require("../index.js");
const cwd = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, ".."));

async function readInFull(paths) {
  const known_files = [];
  for (const p of paths) {
    const f = await native.fingerprint({ path: p, cwd });
    known_files.push({
      path: p,
      structure_confidence: 1,
      body_confidence: 1,
      current_version_confidence: 1,
      prune_confidence: 1,
      source_strength: "full_file",
      size: f.size,
      content_hash: f.contentHash,
    });
  }
  return { version: 1, known_files };
}

const pct = (a, b) => `${Math.round(100 - (100 * b) / a)}%`;
const OUTLINES = ["src/discover/trace.rs", "src/discover/locate.rs", "src/search/outline_file.rs", "README.md", "extensions/lib/search/grep.mjs"];
const TRACES = ["subject:outline_file relation:called_from", "subject:render relation:defined", "subject:CancelToken relation:implementation"];
let failures = 0;
for (const p of OUTLINES) {
  const first = await native.outline({ path: p, cwd });
  const again = await native.outline({ path: p, cwd, context: await readInFull([p]) });
  console.log(`outline ${p}: ${first.text.length} -> ${again.text.length} chars (${pct(first.text.length, again.text.length)} shorter; ${again.context})`);
}
for (const q of TRACES) {
  const first = await native.trace({ query: q, cwd, index: false });
  const again = await native.trace({ query: q, cwd, index: false, context: await readInFull(first.files.map((f) => f.path)) });
  const left = again.files.flatMap((f) => f.regions.filter((g) => g.alreadyShown).map((g) => `${f.path}:${g.startLine}-${g.endLine}`));
  const unnamed = left.filter((r) => !again.text.includes(r));
  failures += unnamed.length;
  console.log(
    `trace ${q}: ${first.text.length} -> ${again.text.length} chars (${pct(first.text.length, again.text.length)} shorter); ` +
      `${left.length} regions named by range, not inlined${unnamed.length ? `; NOT NAMED: ${unnamed.join(", ")}` : ""}`,
  );
}
process.exitCode = failures > 0 ? 1 : 0;
