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
}

export interface DiscoverExtraDetails {
  truncation?: TruncationResult;
  timedOut?: boolean;
}

export declare function callNative<O, R>(call: (opts: O) => Promise<R>, opts: O, config: DiscoverRunConfig): Promise<R | null>;

export declare function finishText(
  body: string,
  result: { timedOut?: boolean; errorCount?: number; errors?: string[] } | null,
  config: DiscoverRunConfig,
  advice: { truncated: string; timedOut: string },
): { text: string; extra: DiscoverExtraDetails };

/** The lines a collapsed locate or trace answer lists: the ranked files and, for trace, the best region. */
export declare function rankedFirst(lines: string[]): string[];
