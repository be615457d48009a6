// Types of the outline tool module (outline.mjs).
import type { OutlineOptions, OutlineResult } from "../../../index.d.ts";
import type { RenderedResult, RenderTheme } from "./render.d.mts";
import type { ParameterSpecs } from "./toolkit.d.mts";
import type { TruncationResult } from "../truncate.mjs";

/** The `outline` tool's parameters. */
export interface OutlineToolParams {
  path: string;
  /** Most symbols shown; the deepest levels are dropped first, with a note. */
  maxItems?: number;
}

/** The native module satisfies this. `outline` rejects on a missing file (with near names), a directory, etc. */
export interface OutlineBackend {
  outline(opts: OutlineOptions): Promise<OutlineResult>;
}

export interface OutlineRunConfig {
  /** Base for a relative `params.path`. */
  cwd: string;
  /** Byte cap of the returned text. */
  maxBytes: number;
  /** Used when `params.maxItems` is not given. Default {@link DEFAULT_OUTLINE_MAX_ITEMS}. */
  defaultMaxItems?: number;
  signal?: AbortSignal;
  /** What the model already has of the file, by the path as passed to the core (Pi sessions; the CLI has none). */
  known?: (path: string) => KnownFor | null;
}

/** The session's familiarity for one call: the harness context to pass, and a change the core may not report. */
export interface KnownFor {
  /** The agentgrep harness context (omitted when the model has seen nothing relevant). */
  context?: object;
  /** "changed since you read it at turn N": said by us when the core does not read the context. */
  changed?: string | null;
}

export interface OutlineToolDetails {
  /** `null` when no grammar reads this file type. */
  language: string | null;
  totalLines: number;
  /** Symbols in the file. */
  symbols: number;
  /** Symbols listed (the rest were cut by maxItems). */
  shown: number;
  hasErrors?: boolean;
  truncation?: TruncationResult;
}

export interface OutlineToolResult {
  text: string;
  details: OutlineToolDetails;
}

export declare const DEFAULT_OUTLINE_MAX_ITEMS: number;

/** `@path` and `~/path` as Pi's read tool takes them. */
export declare function outlinePath(path: string): string;

/**
 * Runs one outline tool call: the native outline's text, capped at `maxBytes`. Throws
 * `Error("Operation aborted")` on abort and rethrows the backend's errors (`File not found: x. Did you mean: ...?`).
 */
export declare function runOutlineTool(
  backend: OutlineBackend,
  params: OutlineToolParams,
  config: OutlineRunConfig,
): Promise<OutlineToolResult>;

/** The tool's parameters as plain data. */
export declare function outlineParameters(): ParameterSpecs;
export declare function formatOutlineCall(args: { path?: unknown; maxItems?: unknown } | undefined, theme: RenderTheme): string;
export declare function formatOutlineResult(
  result: RenderedResult & { details?: OutlineToolDetails },
  expanded: boolean,
  theme: RenderTheme,
  expandHint: string,
): string;
/** The outline's header lines folded into one, without the path (the collapsed view). */
export declare function oneLineHeader(lines: string[]): string[];
