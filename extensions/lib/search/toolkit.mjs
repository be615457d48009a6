// What every search tool (grep, glob, outline) does around its backend call: the race against Pi's abort
// signal and the hard deadline, limits, the spill file for text the byte cap cut, and the bracketed notice
// block appended to the text. Each tool's own module only says what its text and notices are.

import { lstat, readdir, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatSize } from "../truncate.mjs";

const LISTED_ROOTS = 5;

/** The spill files' prefixes; the sweep removes files of these names and no others. */
export const SPILL_PREFIXES = ["pi-grep", "pi-glob"];
/** How long a spill file stays for the model to read, as long as shell logs stay by default. */
export const SPILL_RETENTION_MS = 7 * 24 * 3600 * 1000;
const SPILL_NAME = new RegExp(`^(${SPILL_PREFIXES.join("|")})-[0-9a-f]{16}\\.txt$`);

export function abortError() {
  return new Error("Operation aborted");
}

/** @param {unknown} e */
export function asError(e) {
  return e instanceof Error ? e : new Error(String(e));
}

/** A failure while searching: Pi's abort text if the caller aborted, else the error itself. */
export function searchFailure(e, signal) {
  return signal?.aborted ? abortError() : asError(e);
}

/** A count the model gave us, or the default; Pi's `Math.max(1, limit)`, kept integral for the backend. */
export function effectiveLimit(limit, fallback) {
  const n = typeof limit === "number" && Number.isFinite(limit) ? limit : fallback;
  return Math.max(1, Math.floor(n));
}

/** timeout + grace as a timer delay; Node fires over-long delays at once, so clamp them. */
export function hardDeadlineMs(config) {
  const ms = config.timeoutMs + config.graceMs;
  return Number.isFinite(ms) ? Math.min(Math.max(0, ms), 2 ** 31 - 1) : 2 ** 31 - 1;
}

export function formatSeconds(ms) {
  return `${Number((ms / 1000).toFixed(3))}s`;
}

/**
 * Writes the untruncated text to a temp file, so the model can read what the byte cap cut instead of
 * searching again; null when that fails.
 */
export async function spillFullOutput(text, prefix, dir) {
  // Loaded here, not with the module: node:crypto costs ~3 ms to load, on every CLI start-up, for a name
  // that only a capped result needs.
  const { randomBytes } = await import("node:crypto");
  const file = join(dir ?? tmpdir(), `${prefix}-${randomBytes(8).toString("hex")}.txt`);
  try {
    // The temp folder is shared with other users: the text is the user's code, so only they may read it,
    // and a name planted there beforehand (a symlink) is never written through.
    await writeFile(file, text, { encoding: "utf-8", mode: 0o600, flag: "wx" });
    return file;
  } catch {
    return null;
  }
}

/**
 * Removes spill files older than `maxAgeMs` from `dir`: only regular files named as `spillFullOutput` names
 * them and owned by this user, so nothing another program or user made is touched. Returns how many went;
 * never throws (a sweep that cannot read the folder removes nothing).
 * @param {{ dir?: string, maxAgeMs?: number, now?: number }} [options]
 */
export async function sweepSpillFiles(options = {}) {
  const dir = options.dir ?? tmpdir();
  const cutoff = (options.now ?? Date.now()) - (options.maxAgeMs ?? SPILL_RETENTION_MS);
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  let names;
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (!SPILL_NAME.test(name)) continue;
    const file = join(dir, name);
    try {
      const st = await lstat(file);
      if (!st.isFile() || (uid !== undefined && st.uid !== uid) || st.mtimeMs >= cutoff) continue;
      await unlink(file);
      removed++;
    } catch {
      // Gone meanwhile, or not ours to remove.
    }
  }
  return removed;
}

function listPaths(paths) {
  const shown = paths.slice(0, LISTED_ROOTS).join(", ");
  return paths.length > LISTED_ROOTS ? `${shown}, +${paths.length - LISTED_ROOTS} more` : shown;
}

const SINGULAR = { matches: "match", files: "file" };
const countOf = (n, unit) => `${n} ${n === 1 ? (SINGULAR[unit] ?? unit) : unit}`;

/**
 * An ignored root (shown relative to the searched directory) as the value to pass as `path`, which is
 * taken from the working directory: `node_modules/` under `pkg` is `"pkg/node_modules"`.
 */
function asPathArg(root, searched) {
  const base = (searched ?? "").replace(/\/+$/, "");
  const rel = root.replace(/\/+$/, "");
  return JSON.stringify(base && base !== "." ? `${base}/${rel}` : rel);
}

/** How to be rid of results under ignored roots altogether. */
const IGNORED_ADVICE = "noIgnore: false leaves ignored files out entirely";

/**
 * The summary of results under ignored roots that were not listed because the project had its
 * own. Returns null when there is nothing to say. `roots` are `{path, value}`; `listed` is how
 * many of them already appear in the output; `searched` is the call's `path`. Worded for a reader who has not met the ignore rules:
 * what is not shown, the path that shows it, and the switch that drops ignored files altogether.
 */
export function ignoredNotice(roots, listed, unit, searched) {
  const counted = roots.filter((r) => r.value > 0).sort((a, b) => b.value - a.value || (a.path < b.path ? -1 : 1));
  const total = counted.reduce((sum, r) => sum + r.value, 0);
  if (total === 0) return null;
  const head = `+${countOf(total, unit)} in ignored paths (${listPaths(counted.map((r) => `${r.path} ${r.value}`))})`;
  const see = `search path ${asPathArg(counted[0].path, searched)}${counted.length > 1 ? " (or another of these)" : ""} to see`;
  if (listed <= 0) return { text: `${head} not shown — ${see} them; ${IGNORED_ADVICE}`, unlisted: total };
  if (listed >= total) return { text: `${head}, listed after the project's results; ${IGNORED_ADVICE}`, unlisted: 0 };
  return {
    text: `${head}, ${listed} of them listed after the project's results — ${see} the rest; ${IGNORED_ADVICE}`,
    unlisted: total - listed,
  };
}

/** The line after hits that all come from ignored files (grep's text, and the renderer's cue to colour it). */
export const ALL_IGNORED_MARK = "(all matches are in ignored paths)";

export function unsearchedNotice(unsearched, why) {
  if (!unsearched || unsearched.length === 0) return null;
  return `Ignored paths not searched (${why}): ${listPaths(unsearched)}`;
}

export function errorsNotice(errorCount, errors) {
  if (!errorCount) return null;
  const first = errors && errors.length > 0 ? ` (${errors[0]})` : "";
  return `${errorCount} ${errorCount === 1 ? "path" : "paths"} could not be read${first}`;
}

/** `text`, then the notice in Pi's bracket when there is one. */
export function withNotice(text, notice) {
  return notice ? `${text}\n\n[${notice}]` : text;
}

/**
 * The notice block of a tool call with results, in Pi's order of concerns: the tool adds its own notices
 * with `push`, the shared ones with the other methods (each also fills `details`), and `appendTo` puts them
 * all, joined by ". ", in one bracket after the text.
 */
export function createNotices(details) {
  const notices = [];
  return {
    push(text) {
      notices.push(text);
    },
    /** The byte cap cut the text: the full text goes to a spill file, named in the notice. */
    async truncated(truncation, raw, prefix, config) {
      const file = await spillFullOutput(raw, prefix, config.tmpDir);
      notices.push(`${formatSize(config.maxBytes)} limit reached${file ? `. Full output: ${file}` : ""}`);
      details.truncation = truncation;
      if (file) details.fullOutputPath = file;
    },
    ignored(roots, listed, unit, searched) {
      const notice = ignoredNotice(roots, listed, unit, searched);
      if (!notice) return;
      notices.push(notice.text);
      if (notice.unlisted > 0) details.ignoredMatches = notice.unlisted;
    },
    /** Ignored roots the search never reached, because the limit or the deadline came first. */
    unsearched(unsearched, timedOut) {
      const n = unsearchedNotice(unsearched, timedOut ? "the search timed out first" : "the limit was reached first");
      if (n) notices.push(n);
    },
    appendTo(text) {
      return notices.length > 0 ? withNotice(text, notices.join(". ")) : text;
    },
  };
}

/** `details` without its undefined fields, or undefined when nothing is left. */
export function pruned(details) {
  for (const k of Object.keys(details)) if (details[k] === undefined) delete details[k];
  return Object.keys(details).length > 0 ? details : undefined;
}

/**
 * The one race every search tool runs against Pi's abort signal and the hard deadline (timeout + grace):
 * `work(settle, settled)` starts the search and calls `settle((resolve, reject) => ...)` with its outcome.
 * Whichever comes first wins; an abort or the deadline first calls `stop()` so the backend stops too, then
 * an abort rejects with Pi's "Operation aborted" and the deadline resolves `onDeadline`. The tool never
 * waits past the deadline, whatever the backend does.
 */
export function raceDeadline(config, stop, onDeadline, work) {
  const { signal } = config;
  return new Promise((resolve, reject) => {
    let done = false;
    const settle = (fn) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      fn(resolve, reject);
    };
    const halt = () => {
      try {
        stop();
      } catch {
        // The search is being abandoned; a failing stop changes nothing for the caller.
      }
    };
    const onAbort = () => {
      halt();
      settle((_, rej) => rej(abortError()));
    };
    const timer = setTimeout(() => {
      halt();
      settle((res) => res(onDeadline));
    }, hardDeadlineMs(config));
    signal?.addEventListener("abort", onAbort, { once: true });
    work(settle, () => done);
  });
}

/**
 * `raceDeadline` for a backend that answers with one promise (glob, locate, trace): `call` gets `opts` with our
 * own signal, so the deadline stops the native walk, not just our waiting. Resolves with its result, or null
 * when the hard deadline passes first; rejects on abort or on the backend's error (thrown or rejected).
 */
export function raceCall(call, opts, config) {
  const stopper = new AbortController();
  return raceDeadline(config, () => stopper.abort(), null, (settle) => {
    let pending;
    try {
      pending = call({ ...opts, signal: stopper.signal });
    } catch (e) {
      settle((_, rej) => rej(asError(e)));
      return;
    }
    Promise.resolve(pending).then(
      (result) => settle((res) => res(result)),
      (e) => settle((_, rej) => rej(searchFailure(e, config.signal))),
    );
  });
}
