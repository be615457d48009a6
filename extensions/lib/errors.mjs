// Error codes of the native core and of the fallbacks that stand in for it (the rg search backend, the Node
// job registry). The core gives each error a `code`; the fallbacks create theirs here with the same codes and
// texts, so callers tell errors apart by code whichever backend ran. ERROR_CODES mirrors the core's one list
// (a spec checks it against the addon's `errorCodes()`); this copy exists because the fallbacks run without
// the addon. `errorCode` falls back to the message text only for errors without a code (an older addon).

/** @type {readonly import("./errors.d.mts").ErrorCode[]} */
export const ERROR_CODES = Object.freeze([
  "INVALID_PATTERN",
  "INVALID_OPTION",
  "PATH_NOT_FOUND",
  "NOT_A_FILE",
  "IO",
  "CANCELLED",
  "UNKNOWN_JOB",
  "JOB_EXISTS",
  "JOB_RUNNING",
  "INTERNAL",
]);

/**
 * @param {import("./errors.d.mts").ErrorCode} code
 * @param {string} message
 */
export function codedError(code, message) {
  return Object.assign(new Error(message), { code });
}

/**
 * How the native core words each error today (a spec checks every `errorSamples()` text against this list).
 * @type {Array<[RegExp, import("./errors.d.mts").ErrorCode]>}
 */
const BY_MESSAGE = [
  [/^(Invalid pattern|Invalid glob|Pattern must not be empty|Query must not be empty|Query has no letters or digits)/, "INVALID_PATTERN"],
  [/\(e\.g\. subject:/, "INVALID_PATTERN"],
  [/^(Unknown file type|Unknown tracking|Invalid \w+: |path must not be empty|File too large to outline|Command must not be empty|\w+ must not contain a NUL byte)/, "INVALID_OPTION"],
  [/^(Path not found|File not found|Broken symlink|Working directory not found|Shell not found)/, "PATH_NOT_FOUND"],
  [/^(Not a regular file|Not a file|Not a directory|Working directory is not a directory)/, "NOT_A_FILE"],
  [/^(Cannot create log directory|Cannot open log file|Cannot use job registry file|Cannot start the job|Cannot read )/, "IO"],
  [/^(AbortError|Operation aborted)/, "CANCELLED"],
  [/^Unknown job: /, "UNKNOWN_JOB"],
  [/^A job with id \S+ already exists/, "JOB_EXISTS"],
  [/^Job \S+ is still running/, "JOB_RUNNING"],
];

/** @param {unknown} e */
export function errorCode(e) {
  const code = /** @type {{ code?: unknown } | null} */ (e)?.code;
  if (typeof code === "string" && ERROR_CODES.includes(/** @type {any} */ (code))) return /** @type {import("./errors.d.mts").ErrorCode} */ (code);
  const message = e instanceof Error ? e.message : String(e);
  for (const [re, c] of BY_MESSAGE) if (re.test(message)) return c;
  return "INTERNAL";
}
