// Types of observe.mjs: what a session's tool calls showed the model.

export type SourceStrength = "full_region" | "snippet" | "match_line_only";

export interface ShownRegion {
  start: number;
  end: number;
  strength: SourceStrength;
  /** The exact text a read showed (freshness hashes it). */
  text?: string;
}

export interface ShownSymbol {
  kind: string;
  name: string;
  start: number;
  end: number;
}

export interface ShownItem {
  /** Display path relative to the session's cwd. */
  path: string;
  /** Hex of the raw relative path bytes, for a non-UTF-8 name. */
  pathBytes?: string;
  kind: "read" | "edit" | "write" | "outline" | "trace" | "locate" | "grep";
  regions: ShownRegion[];
  /** A read from line 1 to the end of the file. */
  full?: boolean;
  symbols?: ShownSymbol[];
  /** An outline that listed every symbol of the file. */
  structure?: boolean;
}

export interface ToolResultLike {
  toolName: string;
  input: Record<string, unknown> | undefined;
  content: unknown;
  details: unknown;
  isError: boolean;
}

export interface ObserveEnv {
  cwd: string;
  home?: string;
  isFile?: (abs: string) => boolean;
}

export interface BranchCall extends ToolResultLike {
  toolCallId: string;
  /** The count of assistant messages up to the one that made the call. */
  turn: number;
  /** A later compaction left it out of what the model still has. */
  lowered: boolean;
}

export declare function canonicalPath(cwd: string, p: string): string;
export declare function itemsOfResult(r: ToolResultLike, env: ObserveEnv): ShownItem[];
export declare function callsOfBranch(entries: unknown): { calls: BranchCall[]; turns: number; compactions: number[] };
