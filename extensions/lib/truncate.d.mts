/** Pi's `TruncationResult` (pi-coding-agent core/tools/truncate), same field names and meaning. */
export interface TruncationResult {
  content: string;
  truncated: boolean;
  truncatedBy: "lines" | "bytes" | null;
  totalLines: number;
  totalBytes: number;
  outputLines: number;
  outputBytes: number;
  lastLinePartial: boolean;
  firstLineExceedsLimit: boolean;
  maxLines: number;
  maxBytes: number;
}

export interface TruncationOptions {
  /** Default {@link DEFAULT_MAX_LINES}. */
  maxLines?: number;
  /** Default {@link DEFAULT_MAX_BYTES}. */
  maxBytes?: number;
}

export declare const DEFAULT_MAX_LINES: 2000;
export declare const DEFAULT_MAX_BYTES: 51200;

/** `512B`, `50.0KB`, `1.2MB`, exactly as Pi prints sizes. */
export declare function formatSize(bytes: number): string;

/** Keeps the first whole lines that fit both limits; never returns a partial line. */
export declare function truncateHead(content: string, options?: TruncationOptions): TruncationResult;
