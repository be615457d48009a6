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
  readonly shell: Readonly<ShellDefaults>;
  readonly index: Readonly<IndexDefaults>;
}

/** Every default, frozen. The settings file's keys are `grep`, `glob`, `locate`, `trace`, `shell` and `index`; `outline` is not a setting. */
export declare const DEFAULTS: Defaults;
