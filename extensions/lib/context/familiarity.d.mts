// Types of familiarity.mjs: the picture of what the model has seen, and the harness context made from it.
import type { Disk, FileFacts } from "./disk.mjs";
import type { BranchCall, ObserveEnv, ShownItem } from "./observe.mjs";

export declare const CONTEXT_VERSION: number;

/** Facts of a file as captured: `{ missing: true }` or stat signature, size, hash and the hashes of shown regions. */
export type Captured = { missing: true } | { sig: string; size: number; hash: string | null; regions?: Record<string, string> };

export interface CallCapture {
  /** By display path: the facts right after the result was shown. */
  after?: Record<string, Captured>;
  /** Before an edit or write touched the file. */
  before?: Captured;
}

interface Confidences {
  structure_confidence: number;
  body_confidence: number;
  current_version_confidence: number;
  prune_confidence: number;
  source_strength: string;
  reasons: string[];
}

export interface HarnessContext {
  version: number;
  known_files: Array<{ path: string; size?: number } & Confidences>;
  known_regions: Array<{ path: string; start_line: number; end_line: number } & Confidences>;
  known_symbols: Array<{ path: string; symbol: string; kind: string; start_line: number; end_line: number } & Confidences>;
  focus_files: string[];
}

export interface FileView {
  path: string;
  pathBytes?: string;
  /** "changed since you read it at turn N" when something other than the model changed the file since. */
  reason: string | null;
  missing: boolean;
  file: { size?: number } & Confidences;
  regions: Array<{ start_line: number; end_line: number } & Confidences>;
  symbols: Array<{ symbol: string; kind: string; start_line: number; end_line: number } & Confidences>;
  focus: boolean;
  /** The model has the file's whole structure, unchanged, in its context. */
  structureKnown: boolean;
  structureTurn: number | null;
}

export declare function captureItems(items: ShownItem[], disk: Pick<Disk, "facts">, absOf: (item: { path: string; pathBytes?: string }) => string | Buffer): Record<string, Captured>;
export declare function captureBefore(disk: Pick<Disk, "facts">, abs: string | Buffer): Captured;
export declare function absolutePath(cwd: string, f: { path: string; pathBytes?: string }): string | Buffer;
export declare function buildFamiliarity(
  calls: BranchCall[],
  captures: { get(id: string): CallCapture | undefined },
  disk: { facts(file: string | Buffer): FileFacts },
  env: ObserveEnv,
): Familiarity;

export declare class Familiarity {
  readonly paths: string[];
  view(p: string): FileView | undefined;
  changedNote(p: string): string | null;
  knownSymbolLabels(p: string): Set<string>;
  toContext(scope?: { root?: string; only?: string; as?: string }): HarnessContext;
}

export interface CaptureStore {
  get(id: string): CallCapture | undefined;
  beforeCall(id: string, toolName: string, input: Record<string, unknown> | undefined, env: ObserveEnv): void;
  afterResult(id: string, result: import("./observe.mjs").ToolResultLike, env: ObserveEnv): void;
  readonly size: number;
}
export declare function createCaptureStore(disk: Pick<Disk, "facts">, limit?: number): CaptureStore;

export interface ToolViews {
  outline(arg: string): import("../search/outline.mjs").KnownFor | null;
  discover(root: string): import("../search/discover-kit.mjs").DiscoverKnown | null;
  grep(root: string | undefined): import("../search/grep.mjs").GrepKnown | undefined;
}
export declare function toolViews(picture: Familiarity | null, env: ObserveEnv): ToolViews;
