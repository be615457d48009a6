import type { TraceOptions, TraceResult } from "../../../index.d.ts";
import type { DiscoverExtraDetails, DiscoverRunConfig } from "./discover-kit.mjs";

/** The `trace` tool's parameters. */
export interface TraceToolParams {
  /** `subject:X relation:R [support:S]... [kind:code|docs|tests] [path:P]`. */
  query: string;
  /** Directory to search. */
  path?: string;
  maxFiles?: number;
  maxRegions?: number;
  pathsOnly?: boolean;
}

export interface TraceBackend {
  trace(opts: TraceOptions): Promise<TraceResult>;
}

export interface TraceToolDetails extends DiscoverExtraDetails {
  files: number;
  regions: number;
  bestFile: string | null;
  structureFound: boolean;
  /** `used`: only the files the live index allows were read (`off` when the call timed out). */
  index: TraceResult["index"];
}

export declare const DEFAULT_TRACE_MAX_FILES: number;
export declare const DEFAULT_TRACE_MAX_REGIONS: number;

export interface TraceRunConfig extends DiscoverRunConfig {
  /** Used when `params.maxFiles` / `params.maxRegions` are not given (settings `trace.maxFiles` / `trace.maxRegions`). */
  defaultMaxFiles?: number;
  defaultMaxRegions?: number;
}

export declare function traceOptionsFor(params: TraceToolParams, config: TraceRunConfig): TraceOptions;

/** Throws `Error("Operation aborted")` on abort and rethrows DSL errors (with a valid example). */
export declare function runTraceTool(
  backend: TraceBackend,
  params: TraceToolParams,
  config: TraceRunConfig,
): Promise<{ text: string; details: TraceToolDetails; result: TraceResult | null }>;
