/** The `code` of every error the native core throws or rejects with (its `errorCodes()`), and of the fallbacks' errors. */
export type ErrorCode =
	| "INVALID_PATTERN"
	| "INVALID_OPTION"
	| "PATH_NOT_FOUND"
	| "NOT_A_FILE"
	| "IO"
	| "CANCELLED"
	| "UNKNOWN_JOB"
	| "JOB_EXISTS"
	| "JOB_RUNNING"
	| "INTERNAL";
export declare const ERROR_CODES: readonly ErrorCode[];
/** An `Error` with `code`, as the native core throws them. */
export declare function codedError(code: ErrorCode, message: string): Error & { code: ErrorCode };
/** The error's `code` when it has a known one, else the code its message text implies (`INTERNAL` when none). */
export declare function errorCode(e: unknown): ErrorCode;
