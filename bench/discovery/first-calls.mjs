// Every locate and trace question of queries.json asked twice in one process, tree by tree, each tree's index
// ready and then a pause (what a Pi session has before its first tool call: the model's first reply; the
// index's start also starts parsing the tree's largest files, `src/discover/warm.rs`), to count the calls
// over the 100 ms issue 45 allows: the first call pays its files' first parses, the second finds them cached.
//
//   node bench/discovery/first-calls.mjs [--pause MS] [--set NAME] [--show N]
//
// Times depend on the machine, its load and its page cache; the count of second calls over 100 ms is the one
// that says what a warm tree costs. Trees are found as eval.mjs finds them (trees.mjs).
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { treePaths } from "./trees.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const native = createRequire(import.meta.url)(path.join(root, "index.js"));
const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const pause = Number(opt("--pause", "1000"));
const onlySet = opt("--set", "");
const show = Number(opt("--show", "10"));
const trees = treePaths(root);
const questions = JSON.parse(fs.readFileSync(path.join(here, "queries.json"), "utf8"));

// A tree's questions are asked together, right after its index is ready and the pause, as in a session on
// it: asked in queries.json's order, a tree's trace questions came after forty other trees' locate questions
// had pushed its files out of the outline caches.
const byTree = new Map();
for (const kind of ["locate", "trace"]) {
  for (const [i, q] of questions[kind].entries()) {
    if (!trees[q.tree] || (onlySet && q.set !== onlySet)) continue;
    if (!byTree.has(q.tree)) byTree.set(q.tree, []);
    byTree.get(q.tree).push({ kind, i, q });
  }
}
const rows = [];
for (const [tree, asked] of byTree) {
  const cwd = trees[tree];
  await native.indexWarm({ path: cwd, minFiles: 1 });
  await new Promise((r) => setTimeout(r, pause));
  for (const { kind, i, q } of asked) {
    const ask = () => (kind === "trace" ? native.trace({ query: q.query, cwd }) : native.locate({ query: q.query, cwd, limit: 10 }));
    const times = [];
    for (let round = 0; round < 2; round++) {
      const t = performance.now();
      await ask();
      times.push(performance.now() - t);
    }
    rows.push({ first: times[0], again: times[1], name: `${kind} ${String(i).padStart(3, "0")} ${q.tree}` });
  }
}
const over = (key) => rows.filter((r) => r[key] > 100).length;
console.log(`${rows.length} calls; over 100 ms: ${over("first")} first calls, ${over("again")} second calls (pause ${pause} ms)`);
rows.sort((a, b) => b.first - a.first);
for (const r of rows.slice(0, show)) console.log(`${r.first.toFixed(0).padStart(5)} ms first, ${r.again.toFixed(0).padStart(4)} ms again  ${r.name}`);
