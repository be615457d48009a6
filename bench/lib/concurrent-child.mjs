// One process running N full-tree greps, all at once or one after another
// (Pi runs a turn's tool calls in parallel): prints {wallMs, maxRssMb}.
//
//   node concurrent-child.mjs <index.js> <corpus> <concurrent|sequential> <n> <pattern>
import { createRequire } from "node:module";

const [indexJs, corpus, how, n, pattern] = process.argv.slice(2);
const native = createRequire(import.meta.url)(indexJs);

async function one() {
  const s = native.grep({ path: corpus, index: false, pattern, literal: true, maxCount: 100, ignoredCountOnly: true, maxLineLength: 500 });
  let hits = 0;
  for (let b = await s.nextBatch(); b; b = await s.nextBatch()) hits += b.length;
  return hits;
}

const t = performance.now();
if (how === "concurrent") await Promise.all(Array.from({ length: Number(n) }, one));
else for (let i = 0; i < Number(n); i++) await one();
const wallMs = performance.now() - t;
console.log(JSON.stringify({ wallMs, maxRssMb: process.resourceUsage().maxRSS / 1024 }));
