// What the locate and trace tools share: one native call raced against abort and a hard deadline
// (timeout + grace), and the finishing of the core's text (byte cap, timeout and error notices).
// The text itself is rendered by the native core, so the CLI and the Pi tools print the same bytes.

import { DEFAULTS } from "../defaults.mjs";
import { formatSize, truncateHead } from "../truncate.mjs";
import { abortError, errorsNotice, formatSeconds, raceCall } from "./toolkit.mjs";

/** What a call without its own timing or byte cap gets (the settings `locate.*` / `trace.*` set the timing). */
export const DISCOVER_DEFAULTS = Object.freeze({ timeoutMs: DEFAULTS.locate.timeoutMs, graceMs: DEFAULTS.locate.graceMs, maxBytes: DEFAULTS.grep.maxBytes });

/** Resolves with the native result, or null when the hard deadline passes first; rejects on abort or bad input. */
export function callNative(call, opts, config) {
  if (config.signal?.aborted) return Promise.reject(abortError());
  const timing = { timeoutMs: config.timeoutMs ?? DISCOVER_DEFAULTS.timeoutMs, graceMs: config.graceMs ?? DISCOVER_DEFAULTS.graceMs };
  return raceCall(call, { ...opts, timeoutMs: timing.timeoutMs }, { ...timing, signal: config.signal });
}

/**
 * What the session's familiarity adds to a locate or trace call: the harness context for the core (keyed by
 * paths relative to the searched directory), and `seen`, what this answer showed of each file (its structure
 * list, and the regions it inlined rather than named as already shown), kept in `details` so that a session
 * rebuilt from its entries knows it. A core that does not read the context (files without `changedSinceSeen`)
 * still must not hide a change: those files get a freshness notice from us.
 */
export function withFamiliarity(opts, config) {
  const known = config.known?.(opts.path ?? ".");
  if (known?.context) opts.context = known.context;
  return known ?? null;
}

/**
 * What the answer showed, for `details.seen`: `[kind, name, start, end]` symbols and `[start, end, whole]`
 * regions. `pathsOnly` (paths listed, or a text the byte cap cut) claims nothing beyond the paths.
 */
export function seenOf(result, pathsOnly = false) {
  if (pathsOnly) return [];
  return (result?.files ?? []).map((f) => ({
    path: f.path,
    ...(f.pathBytes ? { pathBytes: f.pathBytes } : {}),
    symbols: (f.structure ?? []).map((s) => [s.kind, s.name, s.startLine, s.endLine]),
    regions: (f.regions ?? []).filter((r) => !r.alreadyShown).map((r) => [r.startLine, r.endLine, r.fullRegion === true]),
  }));
}

/** Files of the answer that changed since the model saw them, when the core did not say so itself. */
export function freshnessNotices(result, known) {
  if (!known?.changed || !result) return [];
  const out = [];
  for (const f of result.files ?? []) {
    if (f.changedSinceSeen !== undefined) continue;
    const note = known.changed(f.path);
    if (note) out.push(`${f.path} ${note}`);
  }
  return out.length > 0 ? [out.join("; ")] : [];
}

/** The core's text with the byte cap applied and the notices appended in one bracket, as the other tools do. */
export function finishText(body, result, config, advice, more = []) {
  const maxBytes = config.maxBytes ?? DISCOVER_DEFAULTS.maxBytes;
  const truncation = truncateHead(body.replace(/\n$/, ""), { maxLines: Number.MAX_SAFE_INTEGER, maxBytes });
  const notices = [];
  const extra = {};
  if (truncation.truncated) {
    notices.push(`${formatSize(maxBytes)} limit reached. ${advice.truncated}`);
    extra.truncation = truncation;
  }
  const timeoutMs = config.timeoutMs ?? DISCOVER_DEFAULTS.timeoutMs;
  if (result === null || result.timedOut) {
    notices.push(`Search timed out after ${formatSeconds(timeoutMs)}: results are partial. ${advice.timedOut}`);
    extra.timedOut = true;
  }
  const errors = result ? errorsNotice(result.errorCount, result.errors) : null;
  if (errors) notices.push(errors);
  notices.push(...more);
  const text = notices.length > 0 ? `${truncation.content}\n\n[${notices.join(". ")}]` : truncation.content;
  return { text, extra };
}

/**
 * The collapsed view of a locate or trace answer: its head (the query, the counts, trace's best file and the
 * ranked files, one line each) and, for trace, the best region (the first region listed, with its kind, why
 * and lines, under its file's heading). The per-file reasons and structure lists are for the model and the expanded view: listing
 * them in order stopped the collapsed view partway through the first file. A text of another shape (paths
 * only, an error) is listed as it is.
 */
export function rankedFirst(lines) {
  const head = lines.indexOf("");
  if (head <= 0) return lines;
  const regions = lines.indexOf("   regions:", head);
  if (regions < 0) return lines.slice(0, head);
  const region = [];
  for (let i = regions + 1; i < lines.length; i++) {
    const line = lines[i];
    if (region.length > 0 && !line.startsWith("     ")) break;
    if (region.length === 0 && !line.startsWith("   - ")) break;
    region.push(line);
  }
  if (region.length === 0) return lines.slice(0, head);
  // The region under its file's heading line (`1. src/ui/status_bar.rs`), both as the text has them.
  let file = regions;
  while (file > head && !/^\d+\. /.test(lines[file])) file--;
  return [...lines.slice(0, head + 1), ...(file > head ? [lines[file]] : []), ...region];
}
