// The trace tool: one call for where a subject is defined, called, rendered, assigned... ("the smallest
// useful context packet"), shared by the Pi extension and `pi-utils trace`. Probes, regions and text come
// from the native core (src/discover).

import { DEFAULTS } from "../defaults.mjs";
import { callNative, finishText, freshnessNotices, seenOf, withFamiliarity } from "./discover-kit.mjs";

export const DEFAULT_TRACE_MAX_FILES = DEFAULTS.trace.maxFiles;
export const DEFAULT_TRACE_MAX_REGIONS = DEFAULTS.trace.maxRegions;

const positive = (n, fallback) => (typeof n === "number" && Number.isFinite(n) ? Math.max(1, Math.floor(n)) : fallback);

export function traceOptionsFor(params, config) {
  const opts = {
    query: typeof params.query === "string" ? params.query : "",
    cwd: config.cwd,
    maxFiles: positive(params.maxFiles, config.defaultMaxFiles ?? DEFAULT_TRACE_MAX_FILES),
    maxRegions: positive(params.maxRegions, config.defaultMaxRegions ?? DEFAULT_TRACE_MAX_REGIONS),
  };
  if (params.path) opts.path = params.path;
  return opts;
}

export async function runTraceTool(backend, params, config) {
  const opts = traceOptionsFor(params, config);
  const known = withFamiliarity(opts, config);
  const result = await callNative((o) => backend.trace(o), opts, config);
  const files = result?.files ?? [];
  let body;
  if (result === null) body = "No results before the trace timed out";
  else if (params.pathsOnly && files.length > 0) body = files.map((f) => f.path).join("\n");
  else body = result.text;
  const { text, extra } = finishText(body, result, config, {
    truncated: "Use maxFiles or maxRegions for a smaller packet",
    timedOut: "Narrow the path with path:P or kind:code",
  }, freshnessNotices(result, known));
  const details = {
    files: files.length,
    regions: result?.totalRegions ?? 0,
    bestFile: result?.bestFile ?? null,
    structureFound: result?.structureFound ?? false,
    index: result?.index ?? "off",
    ...extra,
    ...(known ? { seen: seenOf(result, params.pathsOnly === true || extra.truncation !== undefined) } : {}),
  };
  return { text, details, result };
}
