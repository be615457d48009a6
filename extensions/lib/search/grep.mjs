// The grep tool: backend options, text and notices, shared by the Pi extension and the CLI (which must run
// on plain Node 20, hence JavaScript). Format and notices follow Pi 0.73.1's built-in grep
// (core/tools/grep.ts, MIT) so Pi's renderer, the model's habits and users' eyes keep working; the additions
// (timeout, ignored paths, spill file) are appended as further notices in the same bracket. Content hits in
// files the core could outline are grouped under their enclosing symbol (a file header with language, size
// and symbol count, a heading per enclosing symbol, the file's other top-level symbols), with the hit lines
// themselves still in Pi's format; group:false gives Pi's flat text exactly.

import { formatSize, truncateHead } from "../truncate.mjs";
import { formatResultLines, shortenPath } from "./render.mjs";
import { abortError, ALL_IGNORED_MARK, asError, createNotices, effectiveLimit, errorsNotice, formatSeconds, pruned, raceDeadline, searchFailure, withNotice } from "./toolkit.mjs";

const UPDATE_INTERVAL_MS = 100;
/** @type {Record<string, "content" | "files" | "count">} */
const NATIVE_MODE = { content: "content", files_with_matches: "files", count: "count" };

/**
 * @param {import("./grep.d.mts").GrepToolParams} params
 * @param {import("./grep.d.mts").GrepRunConfig} config
 * @returns {import("../../../index.d.ts").GrepOptions}
 */
export function grepOptionsFor(params, config) {
  const globs = [params.glob, params.include].filter(/** @returns {g is string} */ (g) => typeof g === "string" && g.length > 0);
  const context = typeof params.context === "number" && params.context > 0 ? Math.floor(params.context) : 0;
  /** @type {import("../../../index.d.ts").GrepOptions} */
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
  if (config.index === false) opts.index = false;
  if (config.signal) opts.signal = config.signal;
  return opts;
}

function windowed(line) {
  let text = line.text;
  if (line.cutBefore > 0) text = `[truncated] ...${text}`;
  if (line.cutAfter > 0) text = `${text}... [truncated]`;
  return { text, cut: line.cutBefore > 0 || line.cutAfter > 0 };
}

/** The grouped header of a file whose structure the model already has, unchanged. */
export const KNOWN_HEADING = "known, unchanged";
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
  const known = options.known;
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
    // Symbols the model already has, unchanged, are not hinted again.
    const have = known ? known.symbols(path) : null;
    const others = have ? block.others.filter((s) => !have.has(symbolLabel(s))) : block.others;
    if (others.length > 0 || block.othersOmitted > 0) {
      const more = block.othersOmitted > 0 ? `${others.length > 0 ? "; " : ""}+${block.othersOmitted} more` : "";
      emit(`  other: ${others.map(symbolLabel).join("; ")}${more}`);
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
        // A file whose structure the model has, unchanged: its size and symbol count are not repeated.
        if (known?.structure(hit.path)) emit(`${hit.path} (${KNOWN_HEADING})`);
        else emit(`${hit.path} (${st.language}, ${plural(st.totalLines, "line")}, ${plural(st.totalSymbols, "symbol")})`);
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

/**
 * @param {import("./grep.d.mts").GrepBackend} backend
 * @param {import("./grep.d.mts").GrepToolParams} params
 * @param {import("./grep.d.mts").GrepRunConfig} config
 * @returns {Promise<import("./grep.d.mts").GrepToolResult>}
 */
export async function runGrepTool(backend, params, config) {
  if (config.signal?.aborted) throw abortError();
  const opts = grepOptionsFor(params, config);
  const limit = /** @type {number} */ (opts.maxCount);
  const mode = opts.mode;

  let handle;
  try {
    handle = backend.grep(opts);
  } catch (e) {
    if (config.signal?.aborted) throw abortError();
    throw asError(e);
  }

  const hits = [];
  const formatter = createHitFormatter(mode, { group: opts.group === true, known: config.known });
  const { lines } = formatter;
  let lastUpdate = Date.now();
  // The backend enforces maxCount (the native core before anything crosses into JS, the rg fallback as it
  // reads rg's records) and says so in the summary's limitReached: every hit it hands over is shown.
  const { summary, gaveUp } = await collect(handle, config, (batch) => {
    hits.push(...batch);
    formatter.add(batch);
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
  // Unreadable paths, and once per index that it could not be saved for the next process.
  const errors = [summary ? errorsNotice(summary.errorCount, summary.errors) : null, summary?.indexNotice]
    .filter(Boolean)
    .join(". ") || null;

  // Files whose hits stop at a NUL byte (rg's binary rule): matches past it are not shown.
  const stopped = summary?.binaryStopped ?? [];
  const binary = stopped.length
    ? `Binary ${stopped.length === 1 ? "file" : "files"} (NUL byte), matches past it not shown: ` +
      stopped.slice(0, 3).map((b) => `${b.path} (byte ${b.offset})`).join(", ") +
      (stopped.length > 3 ? ` and ${stopped.length - 3} more` : "")
    : null;

  if (hits.length === 0) {
    if (binary) return { text: withNotice("No text matches shown", [binary, errors].filter(Boolean).join(". ")), details: undefined };
    if (timedOut || cancelled) {
      const text = timedOut
        ? `No matches found before the search timed out after ${formatSeconds(config.timeoutMs)}${searched}. ` +
          "This is not proof of absence: narrow the path, add a glob or type filter, or raise grep.timeoutMs"
        : `No matches found before the search was cancelled${searched}. This is not proof of absence`;
      const details = { timedOut: timedOut || undefined, filesSearched: summary?.filesSearched };
      return { text: withNotice(text, errors), details: pruned(details) };
    }
    return { text: withNotice("No matches found", errors), details: undefined };
  }

  formatter.finish();
  const linesTruncated = formatter.linesTruncated;
  const raw = lines.join("\n");
  const truncation = truncateHead(raw, { maxLines: Number.MAX_SAFE_INTEGER, maxBytes: config.maxBytes });
  let text = truncation.content;
  /** @type {import("./grep.d.mts").GrepToolDetails} */
  const details = {};
  const notices = createNotices(details);

  const limitReached = summary?.limitReached === true;
  if (limitReached) {
    const unit = mode === "content" ? "matches" : "files";
    notices.push(`${limit} ${unit} limit reached. Use limit=${limit * 2} for more, or refine pattern`);
    details.matchLimitReached = limit;
  }
  if (truncation.truncated) await notices.truncated(truncation, raw, "pi-grep", config);
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
  // Only ignored files matched: they are listed like any others, so say what they are.
  if (projectHits.length === 0) text = `${text}\n\n${ALL_IGNORED_MARK}`;
  if (summary && projectHits.length > 0) {
    const listedIgnored = hits.filter((h) => h.ignored);
    const roots = summary.ignored.map((r) => ({ path: r.path, value: mode === "files" ? r.files : r.matches }));
    const listed = mode === "count" ? listedIgnored.reduce((s, h) => s + h.count, 0) : listedIgnored.length;
    notices.ignored(roots, listed, mode === "files" ? "files" : "matches", params.path);
  }
  if (summary && (limitReached || timedOut)) notices.unsearched(summary.ignoredUnsearched, timedOut);
  if (binary) notices.push(binary);
  if (errors) notices.push(errors);
  const fresh = freshnessNotice(hits, config.known);
  if (fresh) notices.push(fresh);

  text = notices.appendTo(text);
  return { text, details: pruned(details) };
}


/** Files among the hits that changed on disk since the model read them: `a.ts changed since you read it at turn 3`. */
export function freshnessNotice(hits, known) {
  if (!known) return null;
  const said = [];
  const seen = new Set();
  for (const h of hits) {
    if (seen.has(h.path)) continue;
    seen.add(h.path);
    const note = known.changed(h.path);
    if (note) said.push(`${h.path} ${note}`);
  }
  return said.length > 0 ? said.join("; ") : null;
}

/**
 * The tool's parameters as plain data (fs-search turns them into a typebox schema; the CLI and tests read
 * them without Pi). `s` is the grep settings, whose defaults the descriptions name.
 */
export function grepParameters(s) {
  return {
    pattern: { type: "string", description: "Regex (ripgrep syntax), or a plain string with literal:true" },
    path: { type: "string", optional: true, description: "Directory or file to search (default: current directory)" },
    glob: { type: "string", optional: true, description: "Only files matching this glob, e.g. '*.ts' or 'src/**/*.spec.ts'" },
    include: { type: "string", optional: true, description: "Alias of glob; if both are given, both apply" },
    ignoreCase: { type: "boolean", optional: true, description: "Case-insensitive search (default: false)" },
    literal: { type: "boolean", optional: true, description: "Treat pattern as a literal string, not a regex (default: false)" },
    context: { type: "number", optional: true, description: "Lines to show before and after each match (default: 0)" },
    limit: { type: "number", optional: true, description: `Maximum matches, or files in the other output modes (default: ${s.limit})` },
    noIgnore: {
      type: "boolean",
      optional: true,
      description: `Also search files ignore rules exclude, listed after the project's own (default: ${s.noIgnore}); false skips them`,
    },
    type: { type: "string", optional: true, description: "Only files of this ripgrep type, e.g. ts, rust, py" },
    outputMode: {
      type: "string",
      enum: ["content", "files_with_matches", "count"],
      optional: true,
      description: "content: matching lines (default); files_with_matches: file paths; count: matches per file",
    },
    group: {
      type: "boolean",
      optional: true,
      description:
        "content mode: show each code file's matches under the function, class or section enclosing them, " +
        "with the file's other top-level symbols (default: true); false prints plain path:line: text lines",
    },
  };
}

/** The call line, as Pi's grep draws it: `grep /pattern/ in <path> (<glob>) limit N`. */
export function formatGrepCall(args, theme) {
  const invalid = theme.fg("error", "[invalid arg]");
  const pattern = args?.pattern ?? "";
  const rawPath = args?.path ?? "";
  const glob = args?.glob ?? args?.include;
  let text =
    theme.fg("toolTitle", theme.bold("grep")) +
    " " +
    (typeof pattern === "string" ? theme.fg("accent", `/${pattern}/`) : invalid) +
    theme.fg("toolOutput", ` in ${typeof rawPath === "string" ? shortenPath(rawPath || ".") : invalid}`);
  if (typeof glob === "string" && glob) text += theme.fg("toolOutput", ` (${glob})`);
  if (args?.limit !== undefined) text += theme.fg("toolOutput", ` limit ${String(args.limit)}`);
  return text;
}

/** A grouped file's heading, as createHitFormatter writes it: `src/a.ts (typescript, 40 lines, 3 symbols)`. */
const FILE_HEADING = new RegExp(String.raw`^(.+) \((?:[^,()]+, \d+ lines?, \d+ symbols?|${KNOWN_HEADING})\)$`);
/** A hit or context line in Pi's format, `path:12: text` or `path-13- text` (the path is what comes first). */
const HIT_LINE = /^(.+?)([:-])\d+\2 /;
/** Prose rather than code: a reader looking for code wants it after the project's sources. */
const isDoc = (path) => /\.(md|mdx|markdown|rst|txt|adoc|org)$/i.test(path) || /(^|\/)docs?\//.test(path);

/**
 * The collapsed view of content hits: the hit lines only (the grouped files' headings, symbol headings and
 * `other:` hints are for the model and the expanded view), code files before docs, each in path order. A
 * text with lines of another shape (files or count mode) is listed as it is.
 *
 * It reads the text because a renderer has nothing else: Pi hands it the recorded result (the text and
 * `details`, whose shape is Pi's grep's), and a session restored from disk has only that record. The line
 * shapes it reads are the ones createHitFormatter above writes.
 */
export function hitsFirst(lines) {
  const code = [];
  const docs = [];
  let file;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line === "" || line.startsWith("  ")) continue;
    const heading = FILE_HEADING.exec(line);
    if (heading && lines[i + 1]?.startsWith("  ")) {
      file = heading[1];
      continue;
    }
    const hit = line.startsWith(`${file}:`) || line.startsWith(`${file}-`) ? [line, file] : HIT_LINE.exec(line);
    if (!hit) return lines;
    (isDoc(hit[1]) ? docs : code).push(line);
  }
  return [...code, ...docs];
}

/** The result in Pi's grep look (15 lines collapsed), with the notices always visible. */
export function formatGrepResult(result, expanded, theme, expandHint) {
  const d = result.details;
  const warnings = [];
  if (d?.matchLimitReached) warnings.push(`${d.matchLimitReached} matches limit`);
  if (d?.truncation?.truncated) warnings.push(`${formatSize(d.truncation.maxBytes)} limit`);
  if (d?.linesTruncated) warnings.push("some lines truncated");
  return formatResultLines(result, { expanded, maxLines: 15, expandHint, warnings, collapse: hitsFirst }, theme);
}
