import type * as NativeModule from "../../index.js";

export type Native = typeof NativeModule;
export type NativeLoad = { native: Native } | { error: string; fix: string };

export declare const EXPECTED_API_VERSION: number;
/** The package's root directory (where index.js and the `.node` binary are). */
export declare const packageDir: string;
/** What to tell the user to do when the binary is missing or stale. */
export declare function nativeFix(dir?: string): string;
/** The addon, or why it is unavailable; never throws. `PI_UTILS_DISABLE_NATIVE=1` in `env` disables it. */
export declare function loadNative(env?: NodeJS.ProcessEnv): NativeLoad;
/** The real reason in napi's chain of load failures. */
export declare function loadFailureReason(e: unknown): string;
