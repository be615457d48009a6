// Types of the rg fallback's entry point (index.mjs).
import type { GlobBackend } from "../glob.d.mts";
import type { GrepBackend } from "../grep.d.mts";

export type { SearchHandle } from "../grep.d.mts";

/** What both the native core and the rg fallback provide. */
export interface SearchBackend extends GrepBackend, GlobBackend {}

export interface RgBackendOptions {
	/** Use this rg binary instead of resolving one. */
	rgPath?: string;
	/** Environment for PATH and PI_CODING_AGENT_DIR. Default: process.env. */
	env?: NodeJS.ProcessEnv;
	/** Pi's agent directory (its `bin/` is searched after PATH). Default: $PI_CODING_AGENT_DIR or ~/.pi/agent. */
	agentDir?: string;
}

export declare const RG_INSTALL_HINT: string;
/** PATH, then `<agentDir>/bin`; undefined when neither has an executable rg. */
export declare function findRg(options?: RgBackendOptions): string | undefined;
/** rg is resolved on first use; a missing rg throws an error that says how to install it. */
export declare function createRgBackend(options?: RgBackendOptions): SearchBackend;
export declare const rgBackend: SearchBackend;

export declare function displayPath(bytes: Uint8Array): { text: string; pathBytes?: string };
export declare function windowLine(
	line: Buffer,
	focus: number | undefined,
	max: number,
): { text: string; cutBefore: number; cutAfter: number };
export declare function comparePaths(a: string, b: string): number;
export declare function ignoredRoots(
	projectFiles: Iterable<string>,
	paths: Iterable<string>,
	dirs?: Set<string>,
): Array<{ root: string; isDir: boolean; files: string[] }>;
/** The native glob's matching rules (globset, `literal_separator`) as a RegExp over a relative path or name. */
export declare function globToRegExp(pattern: string): RegExp;
