// The glob tool's text, shared by the Pi extension and the CLI. Output and notices follow Pi's
// built-in `find` (core/tools/find.ts, MIT) except that paths come newest first and the project's
// own entries precede those the ignore rules would exclude.

import { formatSize, truncateHead } from "./truncate.mjs";
import {
  abortError,
  asError,
  effectiveLimit,
  errorsNotice,
  formatSeconds,
  ignoredNotice,
  raceDeadline,
  searchFailure,
  spillFullOutput,
  unsearchedNotice,
} from "./grep-tool.mjs";

export function globOptionsFor(params, config) {
  const opts = {
    pattern: params.pattern,
    cwd: config.cwd,
    limit: effectiveLimit(params.limit, config.defaultLimit),
    hidden: params.hidden ?? true,
    noIgnore: params.noIgnore ?? config.noIgnore,
    // Like fd behind Pi's find: directories match too (shown with a trailing `/`).
    kind: "any",
    sort: "mtime",
    timeoutMs: config.timeoutMs,
  };
  if (params.path) opts.path = params.path;
  return opts;
}

/** Resolves with the backend's result, or null when the hard deadline passes first. */
function awaitGlob(backend, opts, config) {
  // Our own controller lets the deadline stop the native walk, not just our waiting.
  const stopper = new AbortController();
  return raceDeadline(config, () => stopper.abort(), null, (settle) => {
    let pending;
    try {
      pending = backend.glob({ ...opts, signal: stopper.signal });
    } catch (e) {
      settle((_, rej) => rej(asError(e)));
      return;
    }
    Promise.resolve(pending).then(
      (result) => settle((res) => res(result)),
      (e) => settle((_, rej) => rej(searchFailure(e, config.signal))),
    );
  });
}

export async function runGlobTool(backend, params, config) {
  if (config.signal?.aborted) throw abortError();
  const opts = globOptionsFor(params, config);
  const limit = opts.limit;
  const result = await awaitGlob(backend, opts, config);
  const timedOut = result === null || result.timedOut === true;
  const entries = result?.entries ?? [];
  const errors = result ? errorsNotice(result.errorCount, result.errors) : null;
  const timeoutAdvice = "narrow the path or pattern, or raise glob.timeoutMs";

  if (entries.length === 0) {
    if (timedOut) {
      const text =
        `No files found before the search timed out after ${formatSeconds(config.timeoutMs)}. ` +
        `The result is incomplete and not proof of absence: ${timeoutAdvice}`;
      return { text: errors ? `${text}\n\n[${errors}]` : text, details: { timedOut: true } };
    }
    const text = "No files found matching pattern";
    return { text: errors ? `${text}\n\n[${errors}]` : text, details: undefined };
  }

  const raw = entries.map((e) => (e.isDir && !e.path.endsWith("/") ? `${e.path}/` : e.path)).join("\n");
  const truncation = truncateHead(raw, { maxLines: Number.MAX_SAFE_INTEGER, maxBytes: config.maxBytes });
  let text = truncation.content;
  const details = {};
  const notices = [];

  const limitReached = result?.limitReached === true || (result === null && entries.length >= limit);
  if (limitReached) {
    notices.push(`${limit} results limit reached. Use limit=${limit * 2} for more, or refine pattern`);
    details.resultLimitReached = limit;
  }
  if (truncation.truncated) {
    const file = await spillFullOutput(raw, "pi-glob", config.tmpDir);
    notices.push(`${formatSize(config.maxBytes)} limit reached${file ? `. Full output: ${file}` : ""}`);
    details.truncation = truncation;
    if (file) details.fullOutputPath = file;
  }
  if (timedOut) {
    notices.push(
      `Search timed out after ${formatSeconds(config.timeoutMs)}: the list is incomplete ` +
        `(${entries.length} found so far). Narrow the path or pattern, or raise glob.timeoutMs`,
    );
    details.timedOut = true;
  }
  if (result && entries.some((e) => !e.ignored)) {
    const listed = entries.filter((e) => e.ignored).length;
    const roots = result.ignored.map((r) => ({ path: r.path, value: r.matches }));
    const notice = ignoredNotice(roots, listed, "matches");
    if (notice) {
      notices.push(notice.text);
      if (notice.unlisted > 0) details.ignoredMatches = notice.unlisted;
    }
  }
  if (result && (limitReached || timedOut)) {
    const n = unsearchedNotice(result.ignoredUnsearched, timedOut ? "the search timed out first" : "the limit was reached first");
    if (n) notices.push(n);
  }
  if (errors) notices.push(errors);

  if (notices.length > 0) text += `\n\n[${notices.join(". ")}]`;
  return { text, details: Object.keys(details).length > 0 ? details : undefined };
}
