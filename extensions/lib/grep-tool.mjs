// The grep tool's text, shared by the Pi extension and the CLI (which must run on plain Node 20,
// hence JavaScript). Format and notices follow Pi 0.73.1's built-in grep (core/tools/grep.ts, MIT)
// so Pi's renderer, the model's habits and users' eyes keep working; the additions (timeout,
// ignored paths, spill file) are appended as further notices in the same bracket. Content hits
// in files the core could outline are grouped under their enclosing symbol (agentgrep's packet),
// with the hit lines themselves still in Pi's format; group:false gives Pi's flat text exactly.

import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatSize, truncateHead } from "./truncate.mjs";

const UPDATE_INTERVAL_MS = 100;
const LISTED_ROOTS = 5;
const NATIVE_MODE = { content: "content", files_with_matches: "files", count: "count" };

export function abortError() {
  return new Error("Operation aborted");
}

export function asError(e) {
  return e instanceof Error ? e : new Error(String(e));
}

/** A count the model gave us, or the default; Pi's `Math.max(1, limit)`, kept integral for the backend. */
export function effectiveLimit(limit, fallback) {
  const n = typeof limit === "number" && Number.isFinite(limit) ? limit : fallback;
  return Math.max(1, Math.floor(n));
}

/** timeout + grace as a timer delay; Node fires over-long delays at once, so clamp them. */
export function hardDeadlineMs(config) {
  const ms = config.timeoutMs + config.graceMs;
  return Number.isFinite(ms) ? Math.min(Math.max(0, ms), 2 ** 31 - 1) : 2 ** 31 - 1;
}

export function formatSeconds(ms) {
  return `${Number((ms / 1000).toFixed(3))}s`;
}

/** Writes the untruncated text next to the other temp files (decision D5); null when that fails. */
export async function spillFullOutput(text, prefix, dir) {
  const file = join(dir ?? tmpdir(), `${prefix}-${randomBytes(8).toString("hex")}.txt`);
  try {
    await writeFile(file, text, "utf-8");
    return file;
  } catch {
    return null;
  }
}

function listPaths(paths) {
  const shown = paths.slice(0, LISTED_ROOTS).join(", ");
  return paths.length > LISTED_ROOTS ? `${shown}, +${paths.length - LISTED_ROOTS} more` : shown;
}

/**
 * The summary of results under ignored roots that were not listed because the project had its
 * own. Returns null when there is nothing to say. `roots` are `{path, value}`; `listed` is how
 * many of them already appear in the output.
 */
export function ignoredNotice(roots, listed, unit) {
  const counted = roots.filter((r) => r.value > 0).sort((a, b) => b.value - a.value || (a.path < b.path ? -1 : 1));
  const total = counted.reduce((sum, r) => sum + r.value, 0);
  if (total === 0) return null;
  const head = `+${total} ${unit} in ignored paths: ${listPaths(counted.map((r) => `${r.path} (${r.value})`))}`;
  if (listed <= 0) return { text: `${head}. Not listed: pass one of these as path to see them, or noIgnore:false to skip them`, unlisted: total };
  if (listed >= total) return { text: `${head}. They are listed after the project's results; noIgnore:false hides them`, unlisted: 0 };
  return {
    text: `${head}. ${listed} of them are listed after the project's results; noIgnore:false hides them`,
    unlisted: total - listed,
  };
}

export function unsearchedNotice(unsearched, why) {
  if (!unsearched || unsearched.length === 0) return null;
  return `Ignored paths not searched (${why}): ${listPaths(unsearched)}`;
}

export function errorsNotice(errorCount, errors) {
  if (!errorCount) return null;
  const first = errors && errors.length > 0 ? ` (${errors[0]})` : "";
  return `${errorCount} ${errorCount === 1 ? "path" : "paths"} could not be read${first}`;
}

export function grepOptionsFor(params, config) {
  const globs = [params.glob, params.include].filter((g) => typeof g === "string" && g.length > 0);
  const context = typeof params.context === "number" && params.context > 0 ? Math.floor(params.context) : 0;
  const opts = {
    pattern: params.pattern,
    cwd: config.cwd,
    literal: params.literal === true,
    ignoreCase: params.ignoreCase === true,
    context,
    noIgnore: params.noIgnore ?? config.noIgnore,
    ignoredCountOnly: true,
    maxCount: effectiveLimit(params.limit, config.defaultLimit),
    maxLineLength: config.maxLineLength,
    mode: NATIVE_MODE[params.outputMode ?? "content"] ?? "content",
    timeoutMs: config.timeoutMs,
  };
  if (opts.mode === "content" && params.group !== false) opts.group = true;
  if (params.path) opts.path = params.path;
  if (globs.length > 0) opts.glob = globs;
  if (params.type) opts.type = params.type;
  if (config.signal) opts.signal = config.signal;
  return opts;
}

function windowed(line) {
  let text = line.text;
  if (line.cutBefore > 0) text = `[truncated] ...${text}`;
  if (line.cutAfter > 0) text = `${text}... [truncated]`;
  return { text, cut: line.cutBefore > 0 || line.cutAfter > 0 };
}

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
const symbolLabel = (s) => `${s.kind} ${s.name} @ ${s.startLine}-${s.endLine}`;
const symbolKey = (s) => (s ? `${s.kind}\0${s.name}\0${s.startLine}\0${s.endLine}` : "");

/**
 * Hit lines, batch by batch (lines are only ever appended, so partial text is a prefix of the final).
 * Flat: Pi's lines. With `group`, a file whose first hit carries `fileStructure` prints as a block: a
 * header, a heading before each run of hits under one symbol, the hits in Pi's line format, and the
 * `other:` hint; blocks are set off by blank lines. Files without it (unknown language, dense, rg) stay flat.
 */
export function createHitFormatter(mode, options = {}) {
  const group = options.group === true && mode === "content";
  const lines = [];
  let linesTruncated = false;
  let path;
  let block = null; // fileStructure of the grouped file being printed
  let scope; // symbolKey of the run being printed
  let gap = false; // a block ended: a blank line before whatever comes next
  const emit = (line) => {
    if (gap) lines.push("");
    gap = false;
    lines.push(line);
  };
  const push = (sep, p, line) => {
    const w = windowed(line);
    if (w.cut) linesTruncated = true;
    emit(`${p}${sep}${line.line}${sep} ${w.text}`);
  };
  const endFile = () => {
    if (!block) return;
    if (block.others.length > 0) {
      const more = block.othersOmitted > 0 ? `; +${block.othersOmitted} more` : "";
      emit(`  other: ${block.others.map(symbolLabel).join("; ")}${more}`);
    }
    block = null;
    gap = true;
  };
  const add = (hit) => {
    if (mode === "files") return emit(hit.path);
    if (mode === "count") return emit(`${hit.path}:${hit.count}`);
    if (hit.path !== path || hit.fileStructure) {
      endFile();
      path = hit.path;
      const st = group ? hit.fileStructure : undefined;
      if (st) {
        gap = lines.length > 0;
        emit(`${hit.path} (${st.language}, ${plural(st.totalLines, "line")}, ${plural(st.totalSymbols, "symbol")})`);
        block = st;
        scope = undefined;
      }
    }
    if (block) {
      const key = symbolKey(hit.symbol);
      if (key !== scope) emit(`  ${hit.symbol ? symbolLabel(hit.symbol) : "<file scope>"}`);
      scope = key;
    }
    for (const c of hit.contextBefore ?? []) push("-", hit.path, c);
    push(":", hit.path, hit);
    for (const c of hit.contextAfter ?? []) push("-", hit.path, c);
  };
  return {
    lines,
    get linesTruncated() {
      return linesTruncated;
    },
    add(hits) {
      for (const hit of hits) add(hit);
    },
    finish: endFile,
  };
}

export function formatGrepHits(hits, mode, options = {}) {
  const f = createHitFormatter(mode, options);
  f.add(hits);
  f.finish();
  return { lines: f.lines, linesTruncated: f.linesTruncated };
}

/**
 * The one race every search tool runs against Pi's abort signal and the hard deadline (timeout + grace):
 * `work(settle, settled)` starts the search and calls `settle((resolve, reject) => ...)` with its outcome.
 * Whichever comes first wins; an abort or the deadline first calls `stop()` so the backend stops too, then
 * an abort rejects with Pi's "Operation aborted" and the deadline resolves `onDeadline`. The tool never
 * waits past the deadline, whatever the backend does.
 */
export function raceDeadline(config, stop, onDeadline, work) {
  const { signal } = config;
  return new Promise((resolve, reject) => {
    let done = false;
    const settle = (fn) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      fn(resolve, reject);
    };
    const halt = () => {
      try {
        stop();
      } catch {
        // The search is being abandoned; a failing stop changes nothing for the caller.
      }
    };
    const onAbort = () => {
      halt();
      settle((_, rej) => rej(abortError()));
    };
    const timer = setTimeout(() => {
      halt();
      settle((res) => res(onDeadline));
    }, hardDeadlineMs(config));
    signal?.addEventListener("abort", onAbort, { once: true });
    work(settle, () => done);
  });
}

/** A failure while searching: Pi's abort text if the caller aborted, else the error itself. */
export function searchFailure(e, signal) {
  return signal?.aborted ? abortError() : asError(e);
}

/** Pulls every batch unless abort or the hard deadline comes first. */
function collect(handle, config, onBatch) {
  return raceDeadline(config, () => handle.cancel(), { summary: null, gaveUp: true }, (settle, settled) => {
    (async () => {
      for (;;) {
        const batch = await handle.nextBatch();
        if (settled()) return;
        if (batch === null) break;
        onBatch(batch);
      }
      const summary = handle.summary();
      settle((res) => res({ summary, gaveUp: false }));
    })().catch((e) => settle((_, rej) => rej(searchFailure(e, config.signal))));
  });
}

export async function runGrepTool(backend, params, config) {
  if (config.signal?.aborted) throw abortError();
  const opts = grepOptionsFor(params, config);
  const limit = opts.maxCount;
  const mode = opts.mode;

  let handle;
  try {
    handle = backend.grep(opts);
  } catch (e) {
    if (config.signal?.aborted) throw abortError();
    throw asError(e);
  }

  const hits = [];
  const formatter = createHitFormatter(mode, { group: opts.group === true });
  const { lines } = formatter;
  let dropped = false;
  let lastUpdate = Date.now();
  const { summary, gaveUp } = await collect(handle, config, (batch) => {
    const room = limit - hits.length;
    // The backend enforces maxCount; this only guards against one that overshoots.
    const kept = batch.length > room ? batch.slice(0, Math.max(0, room)) : batch;
    dropped ||= kept !== batch;
    hits.push(...kept);
    formatter.add(kept);
    if (config.onUpdate && Date.now() - lastUpdate >= UPDATE_INTERVAL_MS) {
      lastUpdate = Date.now();
      try {
        const partial = truncateHead(lines.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER, maxBytes: config.maxBytes });
        config.onUpdate({ text: partial.content, details: undefined });
      } catch {
        // A failing progress callback must not lose the search.
      }
    }
  });

  const timedOut = gaveUp || summary?.timedOut === true;
  const cancelled = !timedOut && summary?.cancelled === true;
  const searched = summary ? ` (searched ${summary.filesSearched} ${summary.filesSearched === 1 ? "file" : "files"})` : "";
  const errors = summary ? errorsNotice(summary.errorCount, summary.errors) : null;

  if (hits.length === 0) {
    if (timedOut || cancelled) {
      const text = timedOut
        ? `No matches found before the search timed out after ${formatSeconds(config.timeoutMs)}${searched}. ` +
          "This is not proof of absence: narrow the path, add a glob or type filter, or raise grep.timeoutMs"
        : `No matches found before the search was cancelled${searched}. This is not proof of absence`;
      const details = { timedOut: timedOut || undefined, filesSearched: summary?.filesSearched };
      return { text: errors ? `${text}\n\n[${errors}]` : text, details: pruned(details) };
    }
    return { text: errors ? `No matches found\n\n[${errors}]` : "No matches found", details: undefined };
  }

  formatter.finish();
  const linesTruncated = formatter.linesTruncated;
  const raw = lines.join("\n");
  const truncation = truncateHead(raw, { maxLines: Number.MAX_SAFE_INTEGER, maxBytes: config.maxBytes });
  let text = truncation.content;
  const details = {};
  const notices = [];

  const limitReached = dropped || (summary ? summary.limitReached : hits.length >= limit);
  if (limitReached) {
    const unit = mode === "content" ? "matches" : "files";
    notices.push(`${limit} ${unit} limit reached. Use limit=${limit * 2} for more, or refine pattern`);
    details.matchLimitReached = limit;
  }
  if (truncation.truncated) {
    const file = await spillFullOutput(raw, "pi-grep", config.tmpDir);
    notices.push(`${formatSize(config.maxBytes)} limit reached${file ? `. Full output: ${file}` : ""}`);
    details.truncation = truncation;
    if (file) details.fullOutputPath = file;
  }
  if (linesTruncated) {
    notices.push(`Some lines truncated to ${config.maxLineLength} chars. Use read tool to see full lines`);
    details.linesTruncated = true;
  }
  if (timedOut) {
    notices.push(
      `Search timed out after ${formatSeconds(config.timeoutMs)}: results are partial${searched}. ` +
        "Narrow the path, add a glob or type filter, or raise grep.timeoutMs",
    );
    details.timedOut = true;
  } else if (cancelled) {
    notices.push(`Search was cancelled: results are partial${searched}`);
  }
  if (summary && (timedOut || cancelled)) details.filesSearched = summary.filesSearched;

  const projectHits = hits.filter((h) => !h.ignored);
  if (summary && projectHits.length > 0) {
    const listedIgnored = hits.filter((h) => h.ignored);
    const roots = summary.ignored.map((r) => ({ path: r.path, value: mode === "files" ? r.files : r.matches }));
    const listed = mode === "count" ? listedIgnored.reduce((s, h) => s + h.count, 0) : listedIgnored.length;
    const notice = ignoredNotice(roots, listed, mode === "files" ? "files" : "matches");
    if (notice) {
      notices.push(notice.text);
      if (notice.unlisted > 0) details.ignoredMatches = notice.unlisted;
    }
  }
  if (summary && (limitReached || timedOut)) {
    const n = unsearchedNotice(summary.ignoredUnsearched, timedOut ? "the search timed out first" : "the limit was reached first");
    if (n) notices.push(n);
  }
  if (errors) notices.push(errors);

  if (notices.length > 0) text += `\n\n[${notices.join(". ")}]`;
  return { text, details: pruned(details) };
}

function pruned(details) {
  for (const k of Object.keys(details)) if (details[k] === undefined) delete details[k];
  return Object.keys(details).length > 0 ? details : undefined;
}
