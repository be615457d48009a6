// The JS home of every default: the settings file's defaults (grep.*, glob.*, locate.*, trace.*, shell.*, index.*) and the tool
// defaults that are not settings (outline.*, walk.*). settings.ts, the tools, the rg fallback and the CLI
// all read them from here, so a default is written once.
//
// Some of them the native core owns too (CORE_OWNED): where the addon loads, DEFAULTS takes those from its
// coreDefaults(), so the core is their one source; the literals below are what the rg fallback and an
// addon-less CLI get, and __test__/defaults.spec.ts fails when one of them drifts from the core's.
//
// The shell's kill grace and log bound are owned by src/shell/defaults.json, which the core compiles in and
// this module reads as data (as the addon-less shell fallback does), so no literal repeats them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadNative, packageDir } from "./native.mjs";
import { DEFAULT_MAX_BYTES } from "./truncate.mjs";

/** The file read once here; the addon-less shell fallback takes its numbers from this export.
 * @type {import("./defaults.d.mts").ShellCoreDefaults} */
export const SHELL_CORE = JSON.parse(readFileSync(join(packageDir, "src/shell/defaults.json"), "utf8"));

const freeze = (o) => {
  for (const v of Object.values(o)) if (v && typeof v === "object") freeze(v);
  return Object.freeze(o);
};

/** @type {import("./defaults.d.mts").Defaults} */
export const FALLBACK_DEFAULTS = freeze({
  grep: { timeoutMs: 30000, graceMs: 3000, noIgnore: true, limit: 100, maxLineLength: 500, maxBytes: DEFAULT_MAX_BYTES },
  glob: { timeoutMs: 10000, graceMs: 2000, limit: 200, noIgnore: true },
  locate: { timeoutMs: 30000, graceMs: 3000, limit: 10 },
  trace: { timeoutMs: 30000, graceMs: 3000, maxFiles: 5, maxRegions: 6 },
  // The tool's own budget, below the core's (a call to the library without maxItems gets more).
  outline: { maxItems: 200 },
  // What a call (or an rg fallback search) that says nothing walks: dot-files, and ignored files after the
  // project's own. The settings grep.noIgnore and glob.noIgnore start from the same value; locate has no setting.
  walk: { hidden: true, noIgnore: true },
  shell: { foregroundTimeoutSec: 600, autoBackgroundAfterSec: 120, maxBackgroundJobs: 8, killGraceMs: SHELL_CORE.killGraceMs, onQuit: "kill", maxLogBytes: SHELL_CORE.maxLogBytes, logRetentionDays: 7 },
  index: { enabled: true, minFiles: 1000, maxFiles: 500000, maxDiskMB: 2048 },
});

/** @type {import("./defaults.d.mts").CoreOwned} */
export const CORE_OWNED = freeze([
  ["grep.noIgnore", "grep.noIgnore"],
  ["grep.maxLineLength", "grep.maxLineLength"],
  ["glob.noIgnore", "glob.noIgnore"],
  ["glob.limit", "glob.limit"],
  ["locate.limit", "locate.limit"],
  ["walk.hidden", "grep.hidden"],
  ["walk.hidden", "glob.hidden"],
  ["walk.noIgnore", "grep.noIgnore"],
  ["walk.noIgnore", "glob.noIgnore"],
  ["walk.noIgnore", "locate.noIgnore"],
  ["trace.maxFiles", "trace.maxFiles"],
  ["trace.maxRegions", "trace.maxRegions"],
  ["index.minFiles", "index.minFiles"],
  ["index.maxFiles", "index.maxFiles"],
  ["index.maxDiskMB", "index.maxDiskMb"],
]);

/**
 * `defaults` with every CORE_OWNED value taken from `core` (a coreDefaults() result). A value the core does
 * not give, or gives with another type (an older binary), keeps the fallback.
 * @param {import("./defaults.d.mts").Defaults} defaults
 * @param {unknown} core
 * @returns {import("./defaults.d.mts").Defaults}
 */
export function withCoreDefaults(defaults, core) {
  /** @type {Record<string, Record<string, unknown>>} */
  const merged = JSON.parse(JSON.stringify(defaults));
  for (const [mine, theirs] of CORE_OWNED) {
    const [section, key] = mine.split(".");
    const [coreSection, coreKey] = theirs.split(".");
    const value = /** @type {Record<string, Record<string, unknown> | undefined> | undefined} */ (core)?.[coreSection]?.[coreKey];
    if (typeof value === typeof merged[section][key]) merged[section][key] = value;
  }
  return freeze(/** @type {import("./defaults.d.mts").Defaults} */ (/** @type {unknown} */ (merged)));
}

/** The core's defaults, or undefined without the addon (never throws). */
function coreDefaults() {
  const load = loadNative();
  if (!("native" in load)) return undefined;
  try {
    return load.native.coreDefaults();
  } catch {
    return undefined;
  }
}

/** @type {import("./defaults.d.mts").Defaults} */
export const DEFAULTS = withCoreDefaults(FALLBACK_DEFAULTS, coreDefaults());
