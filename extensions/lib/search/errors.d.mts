export type SearchErrorCode = "INVALID_PATTERN" | "INVALID_OPTION" | "PATH_NOT_FOUND" | "NOT_A_FILE" | "IO" | "CANCELLED" | "INTERNAL";
export declare const ERROR_CODES: readonly SearchErrorCode[];
/** An `Error` with `code`, as the native core throws them. */
export declare function codedError(code: SearchErrorCode, message: string): Error & { code: SearchErrorCode };
/** The error's `code` when it has a known one, else the code its message text implies (`INTERNAL` when none). */
export declare function errorCode(e: unknown): SearchErrorCode;
