#!/usr/bin/env node
// Index build from scratch, two addons side by side (A B, then B A, ...), each build in a fresh process
// with an empty store, and one rg pass over the tree after each build, all in one run: the build's
// ratio to the other addon and to rg, as medians of per-round ratios. Also checks that both addons
// wrote the same postings (blob, keys and offsets of the generation, byte for byte).
//
//   node bench/build-ab.mjs --corpus linux [--runs 5] --base /path/to/old.node [--new /path/to/new.node]
//
// Build the old addon from another checkout, e.g. `git worktree add /tmp/base <commit>` and
// `CARGO_TARGET_DIR=/tmp/base-target cargo build --release --lib` there (never share a target dir
// between checkouts: cargo may reuse the other one's binary).
import { execFileSync, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { median } from "./lib/interleave.mjs";
import { corpus, opt, root, runs } from "./lib/setup.mjs";

const addons = { base: opt("--base", ""), new: opt("--new", path.join(root, "pi-utils.linux-x64-gnu.node")) };
if (!addons.base || !fs.existsSync(addons.base)) throw new Error("--base <addon .node file> is required");
const child = path.join(root, "bench/lib/build-child.mjs");

/** The postings part of the store's generation file: from the table's end to the block sums. */
function postingsHash(store) {
  const gen = fs.readdirSync(store, { recursive: true }).map(String).find((f) => /(^|\/)gen-\d+$/.test(f));
  const bytes = fs.readFileSync(path.join(store, gen));
  const trailer = bytes.subarray(bytes.length - 48);
  const [at, blob, keys] = [0, 8, 16].map((o) => Number(trailer.readBigUInt64LE(o)));
  return crypto.createHash("sha256").update(bytes.subarray(at, at + blob + 4 * keys + 8 * (keys + 1))).digest("hex");
}

function build(name) {
  const store = fs.mkdtempSync(path.join(os.tmpdir(), `pi-utils-build-ab-${name}-`));
  try {
    const out = execFileSync(process.execPath, [child, addons[name], corpus, store], { encoding: "utf8" });
    const row = JSON.parse(out.trim().split("\n").pop());
    if (row.state !== "ready") throw new Error(`${name}: the index is ${row.state}`);
    return { ...row, postings: postingsHash(store) };
  } finally {
    fs.rmSync(store, { recursive: true, force: true });
  }
}

function rgPass() {
  const t = performance.now();
  spawnSync("rg", ["-uu", "-c", "sched_clock_irqtime", corpus]);
  return performance.now() - t;
}

const seen = { base: [], new: [], rg: [], ratio: [], postings: new Set() };
for (let round = 0; round < runs; round++) {
  const got = {};
  for (const name of round % 2 ? ["new", "base"] : ["base", "new"]) {
    got[name] = build(name);
    seen[name].push(got[name]);
    seen.rg.push(rgPass());
    seen.postings.add(got[name].postings);
  }
  seen.ratio.push(got.new.ms / got.base.ms);
  const f = (r) => `${r.ms.toFixed(0)} ms (user ${r.user.toFixed(2)} s, sys ${r.sys.toFixed(2)} s)`;
  console.log(`round ${round + 1}: base ${f(got.base)}; new ${f(got.new)}`);
}
const ms = (name) => median(seen[name].map((r) => r.ms));
const rg = median(seen.rg);
console.log(
  `\nbuild from scratch, ${seen.new[0].files} files, ${runs} rounds: base ${ms("base").toFixed(0)} ms, new ${ms("new").toFixed(0)} ms; ` +
    `new / base ${median(seen.ratio).toFixed(2)} (median of per-round ratios)` +
    `\none rg pass after each build: ${rg.toFixed(0)} ms; new ${(ms("new") / rg).toFixed(1)} x, base ${(ms("base") / rg).toFixed(1)} x (target <= 5 x)` +
    `\npostings of both addons ${seen.postings.size === 1 ? "identical, byte for byte" : "DIFFERENT"}`,
);
if (seen.postings.size !== 1) process.exitCode = 1;
