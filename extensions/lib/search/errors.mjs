// Error codes of the search backends. The native core gives each error a `code`; the rg fallback creates its
// errors here with the same codes and texts, so callers tell errors apart by code whichever backend ran.
// `errorCode` falls back to the message text only for errors without a code (an older addon).

/** @type {readonly import("./errors.d.mts").SearchErrorCode[]} */
export const ERROR_CODES = Object.freeze(["INVALID_PATTERN", "INVALID_OPTION", "PATH_NOT_FOUND", "NOT_A_FILE", "IO", "CANCELLED", "INTERNAL"]);

/**
 * @param {import("./errors.d.mts").SearchErrorCode} code
 * @param {string} message
 */
export function codedError(code, message) {
  return Object.assign(new Error(message), { code });
}

/**
 * Message prefixes of the native core's texts, for errors that carry no code.
 * @type {Array<[RegExp, import("./errors.d.mts").SearchErrorCode]>}
 */
const BY_MESSAGE = [
  [/^(Invalid pattern|Invalid glob|Pattern must not be empty)/, "INVALID_PATTERN"],
  [/^(Unknown file type|Invalid mode|Invalid kind|Not a directory)/, "INVALID_OPTION"],
  [/^(Path not found|File not found)/, "PATH_NOT_FOUND"],
  [/^Not a file/, "NOT_A_FILE"],
  [/^Operation aborted/, "CANCELLED"],
];

/** @param {unknown} e */
export function errorCode(e) {
  const code = /** @type {{ code?: unknown } | null} */ (e)?.code;
  if (typeof code === "string" && ERROR_CODES.includes(/** @type {any} */ (code))) return /** @type {import("./errors.d.mts").SearchErrorCode} */ (code);
  const message = e instanceof Error ? e.message : String(e);
  for (const [re, c] of BY_MESSAGE) if (re.test(message)) return c;
  return "INTERNAL";
}
