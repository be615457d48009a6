// Types of the search tools' shared kit (toolkit.mjs).
import type { TruncationResult } from "../truncate.mjs";

export declare function abortError(): Error;
export declare function asError(e: unknown): Error;
/** Pi's abort error when `signal` is aborted, else `e` as an Error. */
export declare function searchFailure(e: unknown, signal: AbortSignal | undefined): Error;
export declare function effectiveLimit(limit: unknown, fallback: number): number;
export declare function hardDeadlineMs(config: { timeoutMs: number; graceMs: number }): number;
export declare function formatSeconds(ms: number): string;
export declare function spillFullOutput(text: string, prefix: string, dir?: string): Promise<string | null>;
export declare const SPILL_PREFIXES: string[];
export declare const SPILL_RETENTION_MS: number;
export declare function sweepSpillFiles(options?: { dir?: string; maxAgeMs?: number; now?: number }): Promise<number>;
export interface IgnoredRootCount {
  path: string;
  value: number;
}
/** `searched` is the call's `path` (roots are relative to it; the advice names them from the working directory). */
export declare function ignoredNotice(roots: IgnoredRootCount[], listed: number, unit: string, searched?: string): { text: string; unlisted: number } | null;
export declare const ALL_IGNORED_MARK: string;
export declare function unsearchedNotice(unsearched: string[] | undefined, why: string): string | null;
export declare function errorsNotice(errorCount: number | undefined, errors: string[] | undefined): string | null;
export declare function withNotice(text: string, notice: string | null | undefined): string;
export interface NoticeDetails {
  truncation?: TruncationResult;
  fullOutputPath?: string;
  ignoredMatches?: number;
}
export interface Notices {
  push(text: string): void;
  truncated(truncation: TruncationResult, raw: string, prefix: string, config: { maxBytes: number; tmpDir?: string }): Promise<void>;
  ignored(roots: IgnoredRootCount[], listed: number, unit: string, searched?: string): void;
  unsearched(unsearched: string[] | undefined, timedOut: boolean): void;
  appendTo(text: string): string;
}
/** `details` is the tool's own details object; the notices add `truncation`, `fullOutputPath` and `ignoredMatches` to it. */
export declare function createNotices(details: NoticeDetails): Notices;
export declare function pruned<T extends object>(details: T): T | undefined;
export declare function raceDeadline<T, D>(
  config: { timeoutMs: number; graceMs: number; signal?: AbortSignal },
  stop: () => void,
  onDeadline: D,
  work: (settle: (fn: (resolve: (v: T | D) => void, reject: (e: unknown) => void) => void) => void, settled: () => boolean) => void,
): Promise<T | D>;

/**
 * `raceDeadline` for a backend that answers with one promise: `call` gets `opts` plus a signal the deadline
 * aborts. Resolves with its result, or null when the hard deadline passes first; rejects on abort or error.
 */
export declare function raceCall<O extends object, T>(
  call: (opts: O & { signal: AbortSignal }) => T | Promise<T>,
  opts: O,
  config: { timeoutMs: number; graceMs: number; signal?: AbortSignal },
): Promise<T | null>;

/** One tool parameter as plain data; fs-search turns a record of them into the tool's typebox schema. */
export interface ParameterSpec {
  type: "string" | "number" | "boolean";
  description: string;
  optional?: true;
  /** The allowed strings (Pi's `StringEnum`). */
  enum?: readonly string[];
}
export type ParameterSpecs = Record<string, ParameterSpec>;
