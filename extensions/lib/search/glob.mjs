// The glob tool: backend options, text and notices, shared by the Pi extension and the CLI. Output and
// notices follow Pi's built-in `find` (core/tools/find.ts, MIT) except that paths come newest first and the
// project's own entries precede those the ignore rules would exclude.

import { DEFAULTS } from "../defaults.mjs";
import { formatSize, truncateHead } from "../truncate.mjs";
import { formatResultLines, shortenPath } from "./render.mjs";
import { abortError, ALL_IGNORED_MARK, createNotices, effectiveLimit, errorsNotice, formatSeconds, pruned, raceCall, withNotice } from "./toolkit.mjs";

/**
 * @param {import("./glob.d.mts").GlobToolParams} params
 * @param {import("./glob.d.mts").GlobRunConfig} config
 * @returns {import("../../../index.d.ts").GlobOptions}
 */
export function globOptionsFor(params, config) {
  /** @type {import("../../../index.d.ts").GlobOptions} */
  const opts = {
    pattern: params.pattern,
    cwd: config.cwd,
    limit: effectiveLimit(params.limit, config.defaultLimit),
    hidden: params.hidden ?? DEFAULTS.walk.hidden,
    noIgnore: params.noIgnore ?? config.noIgnore,
    // Like fd behind Pi's find: directories match too (shown with a trailing `/`).
    kind: "any",
    sort: "mtime",
    timeoutMs: config.timeoutMs,
  };
  if (params.path) opts.path = params.path;
  if (config.index === false) opts.index = false;
  return opts;
}

/**
 * @param {import("./glob.d.mts").GlobBackend} backend
 * @param {import("./glob.d.mts").GlobToolParams} params
 * @param {import("./glob.d.mts").GlobRunConfig} config
 * @returns {Promise<import("./glob.d.mts").GlobToolResult>}
 */
export async function runGlobTool(backend, params, config) {
  if (config.signal?.aborted) throw abortError();
  const opts = globOptionsFor(params, config);
  const limit = /** @type {number} */ (opts.limit);
  const result = await raceCall((o) => backend.glob(o), opts, config);
  const timedOut = result === null || result.timedOut === true;
  const entries = result?.entries ?? [];
  const errors = result ? errorsNotice(result.errorCount, result.errors) : null;
  const timeoutAdvice = "narrow the path or pattern, or raise glob.timeoutMs";

  if (entries.length === 0) {
    if (timedOut) {
      const text =
        `No files found before the search timed out after ${formatSeconds(config.timeoutMs)}. ` +
        `The result is incomplete and not proof of absence: ${timeoutAdvice}`;
      return { text: withNotice(text, errors), details: { timedOut: true } };
    }
    const text = "No files found matching pattern";
    return { text: withNotice(text, errors), details: undefined };
  }

  const raw = entries.map((e) => (e.isDir && !e.path.endsWith("/") ? `${e.path}/` : e.path)).join("\n");
  const truncation = truncateHead(raw, { maxLines: Number.MAX_SAFE_INTEGER, maxBytes: config.maxBytes });
  /** @type {import("./glob.d.mts").GlobToolDetails} */
  const details = {};
  const notices = createNotices(details);

  const limitReached = result?.limitReached === true || (result === null && entries.length >= limit);
  if (limitReached) {
    notices.push(`${limit} results limit reached. Use limit=${limit * 2} for more, or refine pattern`);
    details.resultLimitReached = limit;
  }
  if (truncation.truncated) await notices.truncated(truncation, raw, "pi-glob", config);
  if (timedOut) {
    notices.push(
      `Search timed out after ${formatSeconds(config.timeoutMs)}: the list is incomplete ` +
        `(${entries.length} found so far). Narrow the path or pattern, or raise glob.timeoutMs`,
    );
    details.timedOut = true;
  }
  if (result && entries.some((e) => !e.ignored)) {
    const listed = entries.filter((e) => e.ignored).length;
    notices.ignored(result.ignored.map((r) => ({ path: r.path, value: r.matches })), listed, "matches", params.path);
  }
  if (result && (limitReached || timedOut)) notices.unsearched(result.ignoredUnsearched, timedOut);
  if (errors) notices.push(errors);

  // Only ignored files matched: they are listed like any others, so say what they are (as grep does).
  const body = entries.every((e) => e.ignored) ? `${truncation.content}\n\n${ALL_IGNORED_MARK}` : truncation.content;
  return { text: notices.appendTo(body), details: pruned(details) };
}

/** The tool's parameters as plain data (see `grepParameters`); `s` is the glob settings. */
export function globParameters(s) {
  return {
    pattern: {
      type: "string",
      description: "Glob; without '/' it matches file names at any depth ('*.ts'), with '/' the path ('src/**/*.spec.ts')",
    },
    path: { type: "string", optional: true, description: "Directory to search in (default: current directory)" },
    limit: { type: "number", optional: true, description: `Maximum number of results (default: ${s.limit})` },
    noIgnore: {
      type: "boolean",
      optional: true,
      description: `Also list files ignore rules exclude, after the project's own (default: ${s.noIgnore}); false skips them`,
    },
    hidden: { type: "boolean", optional: true, description: `Include dot-files and dot-directories (default: ${DEFAULTS.walk.hidden})` },
  };
}

/** The call line: `glob <pattern> in <path> (limit N)`. */
export function formatGlobCall(args, theme) {
  const invalid = theme.fg("error", "[invalid arg]");
  const pattern = args?.pattern;
  const rawPath = args?.path ?? "";
  let text =
    theme.fg("toolTitle", theme.bold("glob")) +
    " " +
    (typeof pattern === "string" ? theme.fg("accent", pattern) : invalid) +
    theme.fg("toolOutput", ` in ${typeof rawPath === "string" ? shortenPath(rawPath || ".") : invalid}`);
  if (args?.limit !== undefined) text += theme.fg("toolOutput", ` (limit ${String(args.limit)})`);
  return text;
}

/** The result in Pi's find look (20 lines collapsed), with its one notice always visible. */
export function formatGlobResult(result, expanded, theme, expandHint) {
  const d = result.details;
  const warnings = [];
  if (d?.timedOut) warnings.push("timed out, partial");
  if (d?.resultLimitReached) warnings.push(`${d.resultLimitReached} results limit`);
  if (d?.truncation?.truncated) warnings.push(`${formatSize(d.truncation.maxBytes)} limit`);
  return formatResultLines(result, { expanded, maxLines: 20, expandHint, warnings }, theme);
}
