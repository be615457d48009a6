// Types of the glob tool module (glob.mjs).
import type { GlobOptions, GlobResult } from "../../../index.d.ts";
import type { RenderedResult, RenderTheme } from "./render.d.mts";
import type { ParameterSpecs } from "./toolkit.d.mts";
import type { TruncationResult } from "../truncate.mjs";

export interface GlobToolParams {
  pattern: string;
  path?: string;
  limit?: number;
  noIgnore?: boolean;
  hidden?: boolean;
}

/** The native module satisfies this; so does the rg fallback. `glob` may throw synchronously on bad input. */
export interface GlobBackend {
  glob(opts: GlobOptions): Promise<GlobResult>;
}

export interface GlobRunConfig {
  cwd: string;
  timeoutMs: number;
  /** After `timeoutMs + graceMs` we stop waiting for the backend. */
  graceMs: number;
  noIgnore: boolean;
  /** Used when `params.limit` is not given (200). */
  defaultLimit: number;
  /** False (setting `index.enabled`): glob reports `index: "off"`. */
  index?: boolean;
  maxBytes: number;
  signal?: AbortSignal;
  /** Where the full output is written when the byte cap cuts it. Default `os.tmpdir()`. */
  tmpDir?: string;
}

/** Pi's find `details` shape plus our own optional fields. */
export interface GlobToolDetails {
  truncation?: TruncationResult;
  resultLimitReached?: number;
  timedOut?: boolean;
  fullOutputPath?: string;
  /** Entries in ignored paths that matched but were not listed. */
  ignoredMatches?: number;
}

export interface GlobToolResult {
  text: string;
  details: GlobToolDetails | undefined;
}

/** The backend options `runGlobTool` would pass for these params. */
export declare function globOptionsFor(params: GlobToolParams, config: GlobRunConfig): GlobOptions;

/**
 * Runs one glob tool call: relative paths newest first (directories end in `/`), project
 * entries before ignored ones, Pi's find notices. Throws `Error("Operation aborted")` on abort.
 */
export declare function runGlobTool(
  backend: GlobBackend,
  params: GlobToolParams,
  config: GlobRunConfig,
): Promise<GlobToolResult>;

/** The tool's parameters as plain data; the descriptions name the defaults in `settings`. */
export declare function globParameters(settings: { limit: number; noIgnore: boolean }): ParameterSpecs;
export declare function formatGlobCall(args: { pattern?: unknown; path?: unknown; limit?: unknown } | undefined, theme: RenderTheme): string;
export declare function formatGlobResult(
  result: RenderedResult & { details?: GlobToolDetails },
  expanded: boolean,
  theme: RenderTheme,
  expandHint: string,
): string;
