// The locate tool: ranked file discovery ("you know roughly what a file is about, not its name"), shared by
// the Pi extension and `pi-utils locate`. Ranking and text come from the native core (src/discover).

import { effectiveLimit } from "./toolkit.mjs";
import { DEFAULTS } from "../defaults.mjs";
import { callNative, finishText, freshnessNotices, seenOf, withFamiliarity } from "./discover-kit.mjs";

export const DEFAULT_LOCATE_LIMIT = DEFAULTS.locate.limit;

export function locateOptionsFor(params, config) {
  const opts = {
    query: typeof params.query === "string" ? params.query : "",
    cwd: config.cwd,
    limit: effectiveLimit(params.limit, config.defaultLimit ?? DEFAULT_LOCATE_LIMIT),
    noIgnore: params.noIgnore ?? DEFAULTS.walk.noIgnore,
  };
  if (params.path) opts.path = params.path;
  if (params.type) opts.type = params.type;
  if (params.glob) opts.glob = [params.glob];
  return opts;
}

export async function runLocateTool(backend, params, config) {
  const opts = locateOptionsFor(params, config);
  const known = withFamiliarity(opts, config);
  const result = await callNative((o) => backend.locate(o), opts, config);
  const files = result?.files ?? [];
  let body;
  if (files.length === 0) {
    body = result === null ? "No files found before the search timed out" : `No files found for query: ${opts.query.trim()}`;
  } else if (params.pathsOnly) {
    body = files.map((f) => f.path).join("\n");
  } else {
    body = result.text;
  }
  const { text, extra } = finishText(body, result, config, {
    truncated: "Use limit or pathsOnly for a shorter list",
    timedOut: "Narrow the path or add a type or glob filter",
  }, freshnessNotices(result, known));
  const details = { files: files.length, candidates: result?.candidates ?? 0, index: result?.index ?? "off", ...extra, ...(known ? { seen: seenOf(result, params.pathsOnly === true || extra.truncation !== undefined) } : {}) };
  return { text, details, result };
}
