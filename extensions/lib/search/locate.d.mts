import type { LocateOptions, LocateResult } from "../../../index.d.ts";
import type { DiscoverExtraDetails, DiscoverRunConfig } from "./discover-kit.mjs";

/** The `locate` tool's parameters. */
export interface LocateToolParams {
  query: string;
  path?: string;
  limit?: number;
  type?: string;
  glob?: string;
  noIgnore?: boolean;
  /** One path per line instead of the ranked report. */
  pathsOnly?: boolean;
}

export interface LocateBackend {
  locate(opts: LocateOptions): Promise<LocateResult>;
}

export interface LocateRunConfig extends DiscoverRunConfig {
  /** Used when `params.limit` is not given. Default {@link DEFAULT_LOCATE_LIMIT}. */
  defaultLimit?: number;
}

export interface LocateToolDetails extends DiscoverExtraDetails {
  files: number;
  /** Files whose path matched the query at all. */
  candidates: number;
  /** `used`: the paths came from the live index's table, no walk (`off` when the call timed out). */
  index: LocateResult["index"];
}

export declare const DEFAULT_LOCATE_LIMIT: number;

export declare function locateOptionsFor(params: LocateToolParams, config: LocateRunConfig): LocateOptions;

/** Throws `Error("Operation aborted")` on abort and rethrows bad-input errors (empty query, missing path). */
export declare function runLocateTool(
  backend: LocateBackend,
  params: LocateToolParams,
  config: LocateRunConfig,
): Promise<{ text: string; details: LocateToolDetails; result: LocateResult | null }>;
