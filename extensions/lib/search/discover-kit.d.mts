import type { TruncationResult } from "../truncate.mjs";

export declare const DISCOVER_DEFAULTS: Readonly<{ timeoutMs: number; graceMs: number; maxBytes: number }>;

export interface DiscoverRunConfig {
  /** Base for a relative `params.path`. */
  cwd: string;
  /** Passed to the core; default 30000. */
  timeoutMs?: number;
  /** After `timeoutMs + graceMs` we stop waiting and say so; default 3000. */
  graceMs?: number;
  /** Byte cap of the returned text; default 51200. */
  maxBytes?: number;
  signal?: AbortSignal;
  /** What the model already has, for a search of `path` (Pi sessions; the CLI has none). */
  known?: (path: string) => DiscoverKnown | null;
}

/** The session's familiarity for one locate/trace call. */
export interface DiscoverKnown {
  /** The agentgrep harness context, keyed by paths relative to the searched directory. */
  context?: object;
  /** "changed since you read it at turn N" for a path as the answer prints it, or null. */
  changed?: (path: string) => string | null;
}

/** What an answer showed of one file (kept in `details.seen`). */
export interface SeenFile {
  path: string;
  pathBytes?: string;
  /** `[kind, name, startLine, endLine]`. */
  symbols: Array<[string, string, number, number]>;
  /** `[startLine, endLine, whole]`: regions inlined in this answer. */
  regions: Array<[number, number, boolean]>;
}

export declare function withFamiliarity(opts: { path?: string; context?: object; query: string }, config: DiscoverRunConfig): DiscoverKnown | null;
export declare function seenOf(result: { files?: Array<{ path: string; pathBytes?: string; structure?: Array<{ kind: string; name: string; startLine: number; endLine: number }>; regions?: Array<{ startLine: number; endLine: number; fullRegion?: boolean; alreadyShown?: boolean }> }> } | null, pathsOnly?: boolean): SeenFile[];
export declare function freshnessNotices(result: { files?: Array<{ path: string; changedSinceSeen?: boolean }> } | null, known: DiscoverKnown | null): string[];

export interface DiscoverExtraDetails {
  truncation?: TruncationResult;
  timedOut?: boolean;
  /** In a Pi session: what this answer showed of each file (the familiarity picture reads it back). */
  seen?: SeenFile[];
}

export declare function callNative<O, R>(call: (opts: O) => Promise<R>, opts: O, config: DiscoverRunConfig): Promise<R | null>;

export declare function finishText(
  body: string,
  result: { timedOut?: boolean; errorCount?: number; errors?: string[] } | null,
  config: DiscoverRunConfig,
  advice: { truncated: string; timedOut: string },
  more?: string[],
): { text: string; extra: DiscoverExtraDetails };

/** The lines a collapsed locate or trace answer lists: the ranked files and, for trace, the best region. */
export declare function rankedFirst(lines: string[]): string[];
