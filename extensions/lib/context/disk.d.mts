// Types of disk.mjs: the facts freshness compares.

export declare const HASH_LIMIT_BYTES: number;

export type FileFacts =
  | { missing: true }
  | { missing: false; sig: string; size: number; hash: string | null; regionHash: ((start: number, end: number) => string) | null };

export interface Disk {
  facts(file: string | Buffer): FileFacts;
  clear(): void;
}

export declare function linesOf(text: string): string[];
export declare function regionHash(lines: string[], start: number, end: number): string;
export declare function shownHash(text: string): string;
export declare function createDisk(): Disk;
