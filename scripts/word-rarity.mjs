// Makes src/discover/word_rarity.tsv: for each common code word, the share of a project's files whose text
// holds it (as an identifier token, or the start of one: `respon` in `responseHeaders` counts for `respon`),
// averaged over projects so a big tree does not outweigh a small one. locate weighs a question's words by it
// (a word most files hold, `get` or `value`, says less about which file is meant than `csrf`), and the table
// is fixed so a walked tree and an indexed one rank alike.
//
//   node scripts/word-rarity.mjs DIR... > src/discover/word_rarity.tsv
//
// Each DIR is one project; its files are what `rg --files` lists (ignore rules honoured).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const MIN_SHARE = 0.01; // words held by fewer files than this are rare: they are left out
const MIN_PROJECTS = 3; // ... and so are words only a couple of projects say
const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  console.error("usage: node scripts/word-rarity.mjs DIR...");
  process.exit(2);
}

/** Lower-case word tokens of an identifier, split as locate splits (`HTTPServer` -> http, server). */
function splitIdent(id, out) {
  const re = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;
  for (const m of id.matchAll(re)) {
    if (/^[A-Za-z]{3,}$/.test(m[0])) out.add(m[0].toLowerCase());
  }
}

const shares = new Map(); // word -> [sum of per-project shares, projects saying it]
for (const dir of dirs) {
  const list = spawnSync("rg", ["--files", "--no-config"], { cwd: dir, encoding: "utf8", maxBuffer: 1 << 30 });
  const files = list.stdout.split("\n").filter(Boolean);
  const held = new Map(); // prefix -> files holding it
  const whole = new Set(); // words met whole somewhere in the project
  let read = 0;
  for (const rel of files) {
    let buf;
    try {
      const st = fs.statSync(path.join(dir, rel));
      if (!st.isFile() || st.size > 1 << 20) continue;
      buf = fs.readFileSync(path.join(dir, rel));
    } catch {
      continue;
    }
    if (buf.subarray(0, 8192).includes(0)) continue;
    read += 1;
    const toks = new Set();
    for (const m of buf.toString("latin1").matchAll(/[A-Za-z][A-Za-z0-9]*/g)) splitIdent(m[0], toks);
    const prefixes = new Set();
    for (const t of toks) {
      whole.add(t);
      for (let n = 3; n <= Math.min(t.length, 16); n++) prefixes.add(t.slice(0, n));
    }
    for (const p of prefixes) held.set(p, (held.get(p) ?? 0) + 1);
  }
  for (const [p, n] of held) {
    if (!whole.has(p) || n / read < MIN_SHARE / 4) continue;
    const s = shares.get(p) ?? [0, 0];
    s[0] += n / read;
    s[1] += 1;
    shares.set(p, s);
  }
  console.error(`${dir}: ${read} files`);
}
const rows = [...shares]
  .map(([w, [sum, projects]]) => [w, sum / dirs.length, projects])
  .filter(([, share, projects]) => share >= MIN_SHARE && projects >= MIN_PROJECTS)
  .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
console.log(`# word\tpermille of a project's files holding it (scripts/word-rarity.mjs over ${dirs.length} projects)`);
for (const [w, share] of rows) console.log(`${w}\t${Math.round(share * 1000)}`);
