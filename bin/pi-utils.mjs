#!/usr/bin/env node
// pi-utils command line. By default it prints exactly the text the Pi tools return (same
// renderer: extensions/lib/search/<tool>.mjs); --json streams the native results as JSON lines.
// Exit codes follow ripgrep: 0 something found, 1 nothing found, 2 error.

// Only the defaults are loaded up front (with the addon where it loads: the core owns some of them); each
// subcommand imports its own tool module when it runs, so --help and usage errors start about as fast as Node does.
import fs from "node:fs";
import nodePath from "node:path";
import { DEFAULTS } from "../extensions/lib/defaults.mjs";
import { DEFAULT_MAX_BYTES } from "../extensions/lib/truncate.mjs";

// The tools' defaults (settings file keys grep.* / glob.*); glob and outline cap their text at Pi's size.
const GREP_DEFAULTS = DEFAULTS.grep;
const GLOB_DEFAULTS = { ...DEFAULTS.glob, maxBytes: DEFAULT_MAX_BYTES };
const OUTLINE_DEFAULTS = { maxBytes: DEFAULT_MAX_BYTES, maxItems: DEFAULTS.outline.maxItems };

const HELP = `Usage:
  pi-utils grep [options] <pattern> [path]
  pi-utils glob [options] <pattern> [path]
  pi-utils outline [--json] [--max-items N] [--context-json FILE] [--debug-structure] <file>
  pi-utils locate [options] <query words...> [dir] (alias: find)
  pi-utils trace [options] subject:X relation:R [support:S] [kind:K] [path:P]
  pi-utils index status|warm|drop [path]

Prints what the Pi tools print; ignored files (.gitignore etc.) are searched too, after the
project's own, unless --respect-ignore. .git is never searched.

grep options:
  -F, --fixed-strings      pattern is a literal string
  -i, --ignore-case        case-insensitive
  -C, --context N          N lines of context around each match
  -g, --glob GLOB          include glob, "!GLOB" excludes (repeatable)
  -t, --type TYPE          ripgrep file type, e.g. rust, ts (repeatable)
  -m, --max-count N        at most N matches (text default ${GREP_DEFAULTS.limit}; --json default: all)
  -l, --files-with-matches print only the paths of files with a match
  -c, --count              print path:count per file
      --no-group           plain path:line: text lines, not grouped by enclosing symbol
glob options:
      --limit N            at most N entries (default ${GLOB_DEFAULTS.limit})
outline options:
      --max-items N        at most N symbols, deepest dropped first (default ${OUTLINE_DEFAULTS.maxItems})
      --debug-structure    append what outline saw: grammar, whether it parsed and why not
locate and trace options:
      --path DIR           directory to search (default: current directory); locate also takes
                           a last word that is an existing directory (".", "src/") as the path
      --paths-only         one path per line
      --limit N            locate: at most N files (default ${DEFAULTS.locate.limit}); -t and -g filter as for grep
      --max-files N        trace: at most N files (default ${DEFAULTS.trace.maxFiles})
      --max-regions N      trace: at most N regions over all files (default ${DEFAULTS.trace.maxRegions})
      --debug-plan         trace: append the probes run and why each was chosen
      --debug-score        append each file's score and the terms behind it
outline, locate and trace:
      --context-json FILE  harness context (agentgrep's JSON: what the model already has, keyed by
                           displayed path): known unchanged outlines compact, known regions named
                           by range instead of inlined, changed files flagged (README: Harness context)
index:
  The live index is saved in the store ($PI_UTILS_INDEX_DIR, else ~/.cache/pi-utils/index) and
  re-validated by the next process that opens it. warm builds (or re-validates) the directory's
  index here and reports its size and time; status describes this process's index (from the
  shell: none); drop removes the directory's folder from the store. grep answers from the
  saved index of the working directory when one is there, is up to date but for a few files,
  and can narrow the search (--json's summary says "index":"used"); it never builds one.
common options:
      --respect-ignore     skip files the ignore rules exclude
      --no-hidden          skip dot-files and dot-directories
      --sort path|mtime    order (grep default path, glob default mtime)
      --timeout-ms N       stop after N ms with partial results
      --no-index           grep: scan even where a saved index could answer
      --json               one JSON object per line, then a summary line
  -h, --help               this help

Exit status: 0 found (outline: symbols found), 1 nothing found, 2 error.`;

class UsageError extends Error {}

// Flags that take a value; the value may follow as the next argument, glued (-C2) or after `=`.
const VALUE_FLAGS = {
  "-C": "context",
  "--context": "context",
  "-g": "glob",
  "--glob": "glob",
  "-t": "type",
  "--type": "type",
  "-m": "maxCount",
  "--max-count": "maxCount",
  "--limit": "limit",
  "--sort": "sort",
  "--timeout-ms": "timeoutMs",
  "--max-items": "maxItems",
  "--path": "path",
  "--max-files": "maxFiles",
  "--max-regions": "maxRegions",
  "--context-json": "contextJsonFile",
};
const BOOL_FLAGS = {
  "-F": "literal",
  "--fixed-strings": "literal",
  "-i": "ignoreCase",
  "--ignore-case": "ignoreCase",
  "-l": "files",
  "--files-with-matches": "files",
  "-c": "count",
  "--count": "count",
  "--respect-ignore": "respectIgnore",
  "--no-hidden": "noHidden",
  "--json": "json",
  "--debug-plan": "debugPlan",
  "--debug-score": "debugScore",
  "--debug-structure": "debugStructure",
  "--no-group": "noGroup",
  "--paths-only": "pathsOnly",
  "--no-index": "noIndex",
  "-h": "help",
  "--help": "help",
};
const REPEATABLE = new Set(["glob", "type"]);

function parseArgs(argv) {
  /** @type {{ glob: string[], type: string[], positional: string[], [flag: string]: any }} */
  const o = { glob: [], type: [], positional: [] };
  const set = (key, value) => {
    if (REPEATABLE.has(key)) o[key].push(value);
    else o[key] = value;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      o.positional.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      o.positional.push(arg);
      continue;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = eq < 0 ? arg : arg.slice(0, eq);
      if (BOOL_FLAGS[name] && eq < 0) set(BOOL_FLAGS[name], true);
      else if (VALUE_FLAGS[name]) {
        const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
        if (value === undefined) throw new UsageError(`${name} needs a value`);
        set(VALUE_FLAGS[name], value);
      } else throw new UsageError(`unknown option: ${arg}`);
      continue;
    }
    // A cluster of short flags, ripgrep style: -iF, -C2, -ig '*.ts'.
    for (let j = 1; j < arg.length; j++) {
      const flag = `-${arg[j]}`;
      if (BOOL_FLAGS[flag]) set(BOOL_FLAGS[flag], true);
      else if (VALUE_FLAGS[flag]) {
        const value = j + 1 < arg.length ? arg.slice(j + 1) : argv[++i];
        if (value === undefined) throw new UsageError(`${flag} needs a value`);
        set(VALUE_FLAGS[flag], value);
        break;
      } else throw new UsageError(`unknown option: ${flag}`);
    }
  }
  return o;
}

function intOption(o, key, name) {
  if (o[key] === undefined) return undefined;
  const n = Number(o[key]);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${name} must be a non-negative integer, got ${o[key]}`);
  return n;
}

function sortOption(o) {
  if (o.sort === undefined) return undefined;
  if (o.sort !== "path" && o.sort !== "mtime") throw new UsageError(`--sort must be path or mtime, got ${o.sort}`);
  return o.sort;
}

/** The addon through the extensions' guarded loader (which also rejects a stale binary); the CLI has no rg fallback. */
async function loadNative() {
  const { loadNative: load } = await import("../extensions/lib/native.mjs");
  // PI_UTILS_DISABLE_NATIVE selects the extensions' rg fallback; the CLI has none, so it does not apply here.
  const loaded = load({ ...process.env, PI_UTILS_DISABLE_NATIVE: undefined });
  if ("error" in loaded) throw new Error(loaded.error);
  return loaded.native;
}

function positionalArgs(o, command) {
  if (o.positional.length < 1) throw new UsageError(`${command} needs a pattern`);
  if (o.positional.length > 2) throw new UsageError(`${command} takes one pattern and at most one path`);
  return { pattern: o.positional[0], path: o.positional[1] };
}

const jsonLine = (value) => `${JSON.stringify(value)}\n`;

async function grepCommand(o) {
  const { pattern, path } = positionalArgs(o, "grep");
  const context = intOption(o, "context", "--context");
  // -m/--max-count is the tool's `limit` (which the native option calls maxCount).
  const limit = intOption(o, "maxCount", "--max-count");
  const timeoutMs = intOption(o, "timeoutMs", "--timeout-ms") ?? GREP_DEFAULTS.timeoutMs;
  const sort = sortOption(o);
  if (o.files && o.count) throw new UsageError("-l and -c cannot be combined");
  const native = await loadNative();
  const literal = o.literal === true;
  const ignoreCase = o.ignoreCase === true;
  // The look for a saved index runs on the core's threads while the tool's modules load.
  const indexed = savedIndex(native, o, path, { pattern, literal, ignoreCase });
  // Its error (an invalid pattern) is thrown where it is awaited, below, not reported as unhandled meanwhile.
  indexed.catch(() => {});
  const [{ grepOptionsFor, runGrepTool }, { hardDeadlineMs }] = await Promise.all([
    import("../extensions/lib/search/grep.mjs"),
    import("../extensions/lib/search/toolkit.mjs"),
  ]);
  const params = {
    pattern,
    path,
    literal,
    ignoreCase,
    context,
    limit,
    noIgnore: !o.respectIgnore,
    outputMode: /** @type {"files_with_matches" | "count" | "content"} */ (o.files ? "files_with_matches" : o.count ? "count" : "content"),
    group: !o.noGroup,
  };
  const config = {
    cwd: process.cwd(),
    timeoutMs,
    graceMs: GREP_DEFAULTS.graceMs,
    noIgnore: GREP_DEFAULTS.noIgnore,
    maxLineLength: GREP_DEFAULTS.maxLineLength,
    maxBytes: GREP_DEFAULTS.maxBytes,
    defaultLimit: GREP_DEFAULTS.limit,
    // A one-shot process would build an index only to exit: it uses a saved one or scans.
    index: await indexed,
  };
  // What the tool schema cannot say (several globs and types, hidden, sort) is added on top of
  // the tool's own options, so the rendering stays the tool's.
  const extra = {};
  if (o.glob.length > 0) extra.glob = o.glob;
  if (o.type.length > 0) extra.type = o.type.length === 1 ? o.type[0] : o.type;
  if (o.noHidden) extra.hidden = false;
  if (sort) extra.sort = sort;

  if (o.json) {
    const opts = { ...grepOptionsFor(params, config), ...extra, ignoredCountOnly: false };
    if (limit === undefined) delete opts.maxCount;
    return grepJson(native, opts, hardDeadlineMs(config));
  }

  let found = 0;
  const backend = {
    grep(opts) {
      const handle = native.grep({ ...opts, ...extra });
      return {
        async nextBatch() {
          const batch = await handle.nextBatch();
          if (batch) found += batch.length;
          return batch;
        },
        summary: () => handle.summary(),
        cancel: () => handle.cancel(),
      };
    },
  };
  const { text } = await runGrepTool(backend, params, config);
  return { out: `${text}\n`, code: found > 0 ? 0 : 1 };
}

/**
 * Whether the search of `path` can use an index of it that an earlier process saved: one is there, it is up to
 * date but for a few files (which every search then reads), and it can narrow `narrow` (a pattern every file
 * may match gains nothing from it). Opens it saved-only: a one-shot process never builds, merges or waits for
 * another process's build, so a miss costs at most a look at the store.
 */
async function savedIndex(native, o, path, narrow) {
  if (o.noIndex || !DEFAULTS.index.enabled || !native.indexCanNarrow(narrow)) return false;
  const { minFiles, maxFiles, maxDiskMB } = DEFAULTS.index;
  const cwd = process.cwd();
  // The working directory's index serves a search of any directory below it; only a search outside it looks
  // for its own. One look: a miss leaves an index that is off in this process, which would shadow one above.
  const inside = path === undefined || !nodePath.relative(cwd, nodePath.resolve(cwd, path)).startsWith("..");
  try {
    await native.indexWarm({ cwd, path: inside ? undefined : path, minFiles, maxFiles, maxDiskMb: maxDiskMB, savedOnly: true });
    return true;
  } catch {
    // None saved there, out of date, or being written: scan.
    return false;
  }
}

/** Resolves "deadline" after `ms`; the CLI exits explicitly, so the timer never holds it open. */
function deadline(ms) {
  return new Promise((resolve) => setTimeout(() => resolve("deadline"), ms));
}

async function grepJson(native, opts, hardLimitMs) {
  const handle = native.grep(opts);
  const type = opts.mode === "files" ? "file" : opts.mode === "count" ? "count" : "match";
  const stop = deadline(hardLimitMs);
  let found = 0;
  for (;;) {
    const batch = await Promise.race([handle.nextBatch(), stop]);
    if (batch === "deadline") {
      handle.cancel();
      return { out: jsonLine({ type: "summary", matches: found, timedOut: true, incomplete: true }), code: found > 0 ? 0 : 1 };
    }
    if (batch === null) break;
    found += batch.length;
    process.stdout.write(batch.map((hit) => jsonLine({ type, ...hit })).join(""));
  }
  return { out: jsonLine({ type: "summary", ...handle.summary() }), code: found > 0 ? 0 : 1 };
}

async function globCommand(o) {
  const { pattern, path } = positionalArgs(o, "glob");
  const limit = intOption(o, "limit", "--limit");
  const timeoutMs = intOption(o, "timeoutMs", "--timeout-ms") ?? GLOB_DEFAULTS.timeoutMs;
  const sort = sortOption(o);
  // glob walks even where a saved index is (unlike grep). The core can list the table of a ready index with
  // the walk's answer (when no directory matches the pattern), but a one-shot process must first open the
  // saved index, and that check stats every directory and file of the table, as the walk does: on the Linux
  // tree the open alone took 239-274 ms against 181-236 ms for the whole walk (issue 44, bench/README.md).
  const [{ globOptionsFor, runGlobTool }, { hardDeadlineMs }, native] = await Promise.all([
    import("../extensions/lib/search/glob.mjs"),
    import("../extensions/lib/search/toolkit.mjs"),
    loadNative(),
  ]);
  const params = { pattern, path, limit, noIgnore: !o.respectIgnore, hidden: !o.noHidden };
  const config = {
    cwd: process.cwd(),
    timeoutMs,
    graceMs: GLOB_DEFAULTS.graceMs,
    noIgnore: GLOB_DEFAULTS.noIgnore,
    defaultLimit: GLOB_DEFAULTS.limit,
    maxBytes: GLOB_DEFAULTS.maxBytes,
  };
  if (o.json) {
    const opts = { ...globOptionsFor(params, config), ...(sort ? { sort } : {}) };
    const result = await Promise.race([native.glob(opts), deadline(hardDeadlineMs(config))]);
    if (result === "deadline") return { out: jsonLine({ type: "summary", total: 0, timedOut: true, incomplete: true }), code: 1 };
    const { entries, ...summary } = result;
    const out = entries.map((e) => jsonLine({ type: "file", ...e })).join("") + jsonLine({ type: "summary", ...summary });
    return { out, code: entries.length > 0 ? 0 : 1 };
  }

  let found = 0;
  const backend = {
    async glob(opts) {
      const result = await native.glob(sort ? { ...opts, sort } : opts);
      found = result.entries.length;
      return result;
    },
  };
  const { text } = await runGlobTool(backend, params, config);
  return { out: `${text}\n`, code: found > 0 ? 0 : 1 };
}

async function outlineCommand(o) {
  if (o.positional.length !== 1) throw new UsageError("outline takes exactly one file");
  const params = { path: o.positional[0], maxItems: intOption(o, "maxItems", "--max-items") };
  const [{ outlinePath, runOutlineTool }, native] = await Promise.all([import("../extensions/lib/search/outline.mjs"), loadNative()]);
  const extra = { ...contextOptions(o), ...(o.debugStructure ? { debugStructure: true } : {}) };
  if (o.json) {
    const maxItems = Math.max(1, params.maxItems ?? OUTLINE_DEFAULTS.maxItems);
    const { text: _text, ...result } = await native.outline({ path: outlinePath(params.path), cwd: process.cwd(), maxItems, ...extra });
    return { out: jsonLine(result), code: result.symbols.length > 0 ? 0 : 1 };
  }
  let found = 0;
  const backend = {
    async outline(opts) {
      const result = await native.outline({ ...opts, ...extra });
      found = result.symbols.length;
      return result;
    },
  };
  const config = { cwd: process.cwd(), maxBytes: OUTLINE_DEFAULTS.maxBytes, defaultMaxItems: OUTLINE_DEFAULTS.maxItems };
  const { text } = await runOutlineTool(backend, params, config);
  return { out: `${text}\n`, code: found > 0 ? 0 : 1 };
}

/**
 * --context-json FILE as the native `contextJson` option: the file is read here, the core parses and
 * checks it (a bad one is an INVALID_OPTION error naming the field).
 */
function contextOptions(o) {
  if (o.contextJsonFile === undefined) return {};
  try {
    return { contextJson: fs.readFileSync(o.contextJsonFile, "utf8") };
  } catch (e) {
    throw new UsageError(`--context-json: cannot read ${o.contextJsonFile}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** locate and trace: the tool's text, or with --json one line per file and a summary line. */
async function queryCommand(o, name, params) {
  if (o.positional.length === 0) throw new UsageError(`${name} needs a query`);
  if (o.debugPlan && name !== "trace") throw new UsageError("--debug-plan applies to trace only");
  /** @type {Record<string, unknown>} */
  const extra = { ...contextOptions(o) };
  if (o.debugScore) extra.debugScore = true;
  if (o.debugPlan) extra.debugPlan = true;
  const [tool, native] = await Promise.all([import(`../extensions/lib/search/${name}.mjs`), loadNative()]);
  const run = name === "locate" ? tool.runLocateTool : tool.runTraceTool;
  const config = { cwd: process.cwd(), timeoutMs: intOption(o, "timeoutMs", "--timeout-ms") };
  /** @type {any} the native result, kept for --json and the exit code */
  let result = null;
  const backend = {
    [name]: async (opts) => {
      result = await native[name]({ ...opts, ...extra });
      return result;
    },
  };
  const { text } = await run(backend, params, config);
  const found = (result?.files.length ?? 0) > 0 ? 0 : 1;
  if (!o.json || !result) return { out: `${text}\n`, code: found };
  const { files, text: _text, ...summary } = result;
  const lines = files.map((f, i) => jsonLine({ type: "file", rank: i + 1, ...f }));
  return { out: lines.join("") + jsonLine({ type: "summary", ...summary }), code: found };
}

/**
 * locate's words and path: like grep's `<pattern> [path]`, a last word that names an existing directory is
 * where to search (`locate page fault handler .`), unless --path says where; a lone word is always the query.
 */
function locateWords(o) {
  const words = [...o.positional];
  let path = o.path;
  const last = words.at(-1);
  if (path === undefined && words.length > 1 && last !== undefined && isDirectory(last)) {
    path = last;
    words.pop();
  }
  return { query: words.join(" "), path };
}

function isDirectory(p) {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function locateCommand(o) {
  const { query, path } = locateWords(o);
  const params = {
    query,
    path,
    limit: intOption(o, "limit", "--limit"),
    noIgnore: !o.respectIgnore,
    pathsOnly: o.pathsOnly === true,
  };
  if (o.type.length > 0) params.type = o.type[0];
  if (o.glob.length > 0) params.glob = o.glob[0];
  return queryCommand(o, "locate", params);
}

function traceCommand(o) {
  const params = {
    query: o.positional.join(" "),
    path: o.path,
    maxFiles: intOption(o, "maxFiles", "--max-files"),
    maxRegions: intOption(o, "maxRegions", "--max-regions"),
    pathsOnly: o.pathsOnly === true,
  };
  return queryCommand(o, "trace", params);
}

/** `index status|warm|drop [path]`: exit 0 when there is (or now is) an index, 1 when not. */
async function indexCommand(o) {
  const [action, path, ...more] = o.positional;
  if (!["status", "warm", "drop"].includes(action ?? "") || more.length > 0) {
    throw new UsageError("index takes status, warm or drop, and at most one path");
  }
  const native = await loadNative();
  const where = { path, cwd: process.cwd() };
  const describe = (/** @type {import("../index.d.ts").IndexStatus} */ s) =>
    s.state === "ready"
      ? `ready: ${s.files} files, ${(s.bytes / 1048576).toFixed(1)} MB of postings ` +
        (s.mapped ? "mapped from the store" : "in memory") +
        (s.unsaved ? ` (not saved: ${s.unsaved})` : "")
      : `${s.state}${s.reason ? `: ${s.reason}` : ""}`;
  if (action === "status") {
    const s = native.indexStatus(where);
    return { out: `${describe(s)}\n`, code: s.state === "ready" ? 0 : 1 };
  }
  if (action === "drop") {
    const dropped = native.indexDrop(where);
    return { out: dropped ? "dropped\n" : "no index of this directory, in this process or in the store\n", code: dropped ? 0 : 1 };
  }
  const { minFiles, maxFiles, maxDiskMB } = DEFAULTS.index;
  const started = performance.now();
  try {
    const s = await native.indexWarm({ ...where, minFiles, maxFiles, maxDiskMb: maxDiskMB });
    const how = s.reread == null ? "built" : `re-validated (${s.reread} files read again)`;
    return { out: `${describe(s)}, ${how} in ${Math.round(performance.now() - started)} ms\n`, code: 0 };
  } catch (e) {
    return { out: `not indexed: ${e instanceof Error ? e.message : String(e)}\n`, code: 1 };
  }
}

// Subcommands: options -> { out, code }; each loads what it needs.
const COMMANDS = {
  grep: grepCommand,
  glob: globCommand,
  outline: outlineCommand,
  locate: locateCommand,
  // agentgrep's name for locate (Pi's own `find` tool is a different thing, hence the tool's name).
  find: locateCommand,
  trace: traceCommand,
  index: indexCommand,
};

function finish(out, code) {
  const exit = () => process.exit(code);
  if (out) process.stdout.write(out, exit);
  else exit();
}

async function main(argv) {
  const [command, ...rest] = argv;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    return finish(`${HELP}\n`, command === undefined ? 2 : 0);
  }
  const run = COMMANDS[command];
  if (!run) throw new UsageError(`unknown command: ${command} (expected ${Object.keys(COMMANDS).join(" or ")})`);
  const o = parseArgs(rest);
  if (o.help) return finish(`${HELP}\n`, 0);
  const { out, code } = await run(o);
  finish(out, code);
}

// Like rg, stop quietly when the reader goes away (`pi-utils grep x | head`).
process.stdout.on("error", (e) => process.exit(e.code === "EPIPE" ? 0 : 2));

main(process.argv.slice(2)).catch((e) => {
  const message = e instanceof Error ? e.message : String(e);
  const hint = e instanceof UsageError ? "\nRun pi-utils --help for usage." : "";
  process.stderr.write(`pi-utils: ${message}${hint}\n`, () => process.exit(2));
});
