// The JS home of every default: the settings file's defaults (grep.*, glob.*, locate.*, trace.*, shell.*, index.*) and the tool
// defaults that are not settings (outline.maxItems). settings.ts, the tools, the rg fallback and the CLI
// all read them from here, so a default is written once.

const freeze = (o) => {
  for (const v of Object.values(o)) if (v && typeof v === "object") freeze(v);
  return Object.freeze(o);
};

/** @type {import("./defaults.d.mts").Defaults} */
export const DEFAULTS = freeze({
  grep: { timeoutMs: 30000, graceMs: 3000, noIgnore: true, limit: 100, maxLineLength: 500, maxBytes: 51200 },
  glob: { timeoutMs: 10000, graceMs: 2000, limit: 200, noIgnore: true },
  locate: { timeoutMs: 30000, graceMs: 3000, limit: 10 },
  trace: { timeoutMs: 30000, graceMs: 3000, maxFiles: 5, maxRegions: 6 },
  outline: { maxItems: 200 },
  shell: { foregroundTimeoutSec: 600, autoBackgroundAfterSec: 120, maxBackgroundJobs: 8, killGraceMs: 3000, onQuit: "kill", maxLogBytes: 67108864, logRetentionDays: 7 },
  // The live index's bounds; the same numbers are the core's IndexConfig defaults.
  index: { enabled: true, minFiles: 1000, maxFiles: 500000, maxDiskMB: 2048 },
});
