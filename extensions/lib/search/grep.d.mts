// Types of the grep tool module (grep.mjs).
import type { GrepHit, GrepOptions, GrepSummary } from "../../../index.d.ts";
import type { ParameterSpecs } from "./toolkit.d.mts";
import type { RenderedResult, RenderTheme } from "./render.d.mts";
import type { TruncationResult } from "../truncate.mjs";

/** The `grep` tool's parameters (a superset of Pi's built-in grep schema). */
export interface GrepToolParams {
  pattern: string;
  path?: string;
  glob?: string;
  /** Alias of `glob`; when both are given both are passed as include globs. */
  include?: string;
  ignoreCase?: boolean;
  literal?: boolean;
  context?: number;
  limit?: number;
  noIgnore?: boolean;
  type?: string;
  outputMode?: "content" | "files_with_matches" | "count";
  /**
   * Content mode: group each file's matches under the symbol enclosing them (default true). false gives
   * Pi's flat format. Backends without structure (the rg fallback) always print flat.
   */
  group?: boolean;
}

/** A running search: the part of the native `GrepSearch` the tools use; the rg fallback returns the same shape. */
export interface SearchHandle {
  nextBatch(): Promise<GrepHit[] | null>;
  summary(): GrepSummary | null;
  cancel(): void;
}

/** The native module satisfies this; so does the rg fallback. `grep` may throw synchronously on bad input. */
export interface GrepBackend {
  grep(opts: GrepOptions): SearchHandle;
}

export interface GrepRunConfig {
  /** Base for a relative `params.path`. */
  cwd: string;
  /** Passed to the backend as `timeoutMs`. */
  timeoutMs: number;
  /** After `timeoutMs + graceMs` we stop waiting for the backend and return what we have. */
  graceMs: number;
  /** Used when `params.noIgnore` is not given. */
  noIgnore: boolean;
  maxLineLength: number;
  /** Byte cap of the returned text (Pi: 51200). */
  maxBytes: number;
  /** Used when `params.limit` is not given (Pi: 100). */
  defaultLimit: number;
  /** False (setting `index.enabled`): the native search always scans and builds no index. */
  index?: boolean;
  signal?: AbortSignal;
  /** Partial results, at most every 100 ms while batches arrive. */
  onUpdate?: (partial: { text: string; details: GrepToolDetails | undefined }) => void;
  /** Where the full output is written when the byte cap cuts it. Default `os.tmpdir()`. */
  tmpDir?: string;
  /** What the model already has (Pi sessions); the CLI has none. */
  known?: GrepKnown;
}

/** Pi's grep `details` shape plus our own optional fields. */
export interface GrepToolDetails {
  truncation?: TruncationResult;
  matchLimitReached?: number;
  linesTruncated?: boolean;
  /** The untruncated text, when the byte cap cut it. */
  fullOutputPath?: string;
  timedOut?: boolean;
  filesSearched?: number;
  /** Matches in ignored files that were counted but not listed. */
  ignoredMatches?: number;
}

export interface GrepToolResult {
  text: string;
  details: GrepToolDetails | undefined;
}

/**
 * Runs one grep tool call: maps params to backend options, collects batches, renders Pi's text
 * format and notices. Throws `Error("Operation aborted")` on abort and rethrows bad-input errors.
 */
export declare function runGrepTool(
  backend: GrepBackend,
  params: GrepToolParams,
  config: GrepRunConfig,
): Promise<GrepToolResult>;

/** The backend options `runGrepTool` would pass for these params (exposed for the CLI and tests). */
export declare function grepOptionsFor(params: GrepToolParams, config: GrepRunConfig): GrepOptions;

export interface HitFormatOptions {
  /**
   * Print the files the backend grouped (first hit carries `fileStructure`) as blocks:
   * `path (language, N lines, M symbols)`, then `  kind name @ start-end` (or `  <file scope>`) before
   * each run of hits under one symbol, the hits as Pi's lines, and `  other: ...` with the file's
   * top-level symbols that hold no hit; blocks are set off by blank lines. Default false: all flat.
   */
  group?: boolean;
  /** What the model already has (the session's familiarity), by the path as the hits show it. */
  known?: GrepKnown;
}

/**
 * The session's familiarity as grep uses it, by path as displayed: known symbols are left out of the `other:`
 * hint, a file whose structure the model has unchanged gets a short header, and a file changed on disk since
 * the model read it gets a freshness notice. Hits are always shown.
 */
export interface GrepKnown {
  /** `kind name @ start-end` labels the model has, unchanged. */
  symbols(path: string): Set<string>;
  /** The model has the file's whole structure, unchanged. */
  structure(path: string): boolean;
  /** "changed since you read it at turn N", or null. */
  changed(path: string): string | null;
}

/** The grouped header's text for a file whose structure the model already has, unchanged. */
export declare const KNOWN_HEADING: string;
/** Files among the hits that changed on disk since the model read them, as one notice. */
export declare function freshnessNotice(hits: readonly { path: string }[], known: GrepKnown | undefined): string | null;

/**
 * Renders hits as Pi's lines: `path:N: text`, context `path-N- text`; `files` mode one path per
 * line; `count` mode `path:N`. Lines the backend windowed (`cutBefore`/`cutAfter`) get Pi's
 * `... [truncated]` marker (and `[truncated] ...` in front when cut before); `linesTruncated` says so.
 */
export declare function formatGrepHits(
  hits: readonly GrepHit[],
  mode: "content" | "files" | "count",
  options?: HitFormatOptions,
): { lines: string[]; linesTruncated: boolean };

/**
 * `formatGrepHits` batch by batch: `add` appends to `lines` (never rewrites them, so text taken
 * between batches is a prefix of the final text); `finish` closes the last grouped file.
 */
export declare function createHitFormatter(
  mode: "content" | "files" | "count",
  options?: HitFormatOptions,
): { readonly lines: string[]; readonly linesTruncated: boolean; add(hits: readonly GrepHit[]): void; finish(): void };

/** The tool's parameters as plain data; the descriptions name the defaults in `settings`. */
export declare function grepParameters(settings: { limit: number; noIgnore: boolean }): ParameterSpecs;
export declare function formatGrepCall(
  args: { pattern?: unknown; path?: unknown; glob?: unknown; include?: unknown; limit?: unknown } | undefined,
  theme: RenderTheme,
): string;
/** Collapsed: 15 lines without the `  other:` hints; the notices on the last lines in the warning colour. */
/** Content hits as the collapsed view lists them: hit lines only, code files before docs. */
export declare function hitsFirst(lines: string[]): string[];
export declare function formatGrepResult(
  result: RenderedResult & { details?: GrepToolDetails },
  expanded: boolean,
  theme: RenderTheme,
  expandHint: string,
): string;
