export interface GrepDefaults {
  timeoutMs: number;
  graceMs: number;
  noIgnore: boolean;
  limit: number;
  maxLineLength: number;
  maxBytes: number;
}
export interface GlobDefaults {
  timeoutMs: number;
  graceMs: number;
  limit: number;
  noIgnore: boolean;
}
export interface LocateDefaults {
  timeoutMs: number;
  graceMs: number;
  /** Files returned when the call gives no `limit`. */
  limit: number;
}
export interface TraceDefaults {
  timeoutMs: number;
  graceMs: number;
  /** Files and regions shown when the call gives no `maxFiles` / `maxRegions`. */
  maxFiles: number;
  maxRegions: number;
}
export interface OutlineDefaults {
  maxItems: number;
}
export interface WalkDefaults {
  /** Dot-files and dot-directories are searched when the call does not say (`.git` never is). */
  hidden: boolean;
  /** Ignored files are searched after the project's own when the call does not say (locate; the rg fallback). */
  noIgnore: boolean;
}
export interface ShellDefaults {
  foregroundTimeoutSec: number;
  autoBackgroundAfterSec: number;
  maxBackgroundJobs: number;
  killGraceMs: number;
  onQuit: "kill" | "keep";
  /** Bound of one job's log; past it the log keeps its first MiB, a marker line and its newest output. */
  maxLogBytes: number;
  /** Job directories of sessions that no longer exist are removed once this many days old. */
  logRetentionDays: number;
}
export interface IndexDefaults {
  enabled: boolean;
  minFiles: number;
  maxFiles: number;
  maxDiskMB: number;
}
export interface Defaults {
  readonly grep: Readonly<GrepDefaults>;
  readonly glob: Readonly<GlobDefaults>;
  readonly locate: Readonly<LocateDefaults>;
  readonly trace: Readonly<TraceDefaults>;
  readonly outline: Readonly<OutlineDefaults>;
  readonly walk: Readonly<WalkDefaults>;
  readonly shell: Readonly<ShellDefaults>;
  readonly index: Readonly<IndexDefaults>;
}

/** A default the native core also owns: its path here (`section.key`) and in `coreDefaults()`. */
export type CoreOwned = readonly (readonly [mine: string, core: string])[];

/**
 * Every default, frozen. The settings file's keys are `grep`, `glob`, `locate`, `trace`, `shell` and `index`;
 * `outline` and `walk` are not settings. Where the addon loads, the CORE_OWNED values are the core's.
 */
export declare const DEFAULTS: Defaults;
/** The literals: what DEFAULTS is without the addon. */
export declare const FALLBACK_DEFAULTS: Defaults;
/** The defaults `coreDefaults()` also gives (a spec checks each literal against it). */
export declare const CORE_OWNED: CoreOwned;
/** `defaults` with the CORE_OWNED values `core` gives (with the fallback's type) taken from it. */
export declare function withCoreDefaults(defaults: Defaults, core: unknown): Defaults;

/** src/shell/defaults.json: the shell's numbers the core compiles in. */
export interface ShellCoreDefaults {
  killGraceMs: number;
  readBytes: number;
  maxReadBytes: number;
  maxLogBytes: number;
}
export declare const SHELL_CORE: ShellCoreDefaults;
