// Interleaved timing: every variant of a case runs once per round, in an order
// shuffled per round, and ratios are taken within a round before the median.
// This machine drifts by 10-25 % within minutes; timing all of ours and then
// all of a peer's would fold that drift into the ratio.

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function shuffled(n) {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/**
 * Times one call. A variant may return `{ ms }` to report a time it measured
 * itself (a peer in a child process times its own call, without the IPC hop).
 */
async function once(fn) {
  const t = performance.now();
  const r = await fn();
  const wall = performance.now() - t;
  return r && typeof r === "object" && typeof r.ms === "number" ? r.ms : wall;
}

/**
 * Runs `variants` ([label, fn] pairs) for `rounds` rounds after one warm-up
 * call each, and returns per-variant medians and, for each [a, b] label pair
 * in `ratios`, the median over rounds of a/b.
 */
export async function interleaved(variants, ratios, rounds) {
  for (const [, fn] of variants) await fn();
  const samples = variants.map(() => []);
  const perRound = ratios.map(() => []);
  const index = new Map(variants.map(([label], i) => [label, i]));
  for (let r = 0; r < rounds; r++) {
    const round = new Array(variants.length);
    for (const i of shuffled(variants.length)) round[i] = await once(variants[i][1]);
    round.forEach((ms, i) => samples[i].push(ms));
    ratios.forEach(([a, b], k) => perRound[k].push(round[index.get(a)] / round[index.get(b)]));
  }
  return {
    medians: Object.fromEntries(variants.map(([label], i) => [label, median(samples[i])])),
    ratios: ratios.map(([a, b], k) => ({ a, b, ratio: median(perRound[k]) })),
  };
}
