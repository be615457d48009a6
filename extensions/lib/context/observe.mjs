// What the model was shown, read back from a session: each tool call of the branch as the files, regions and
// symbols its result put in front of the model (read with offset/limit, outline, trace, locate, grep hits, the
// model's own edit and write), with the turn it happened in and whether a compaction has since taken it out of
// the model's context. Plain data in, plain data out: no Pi import, no disk (paths are made canonical with
// node:path only), so the same code reads a live session, a restored branch and a test's made-up entries.

import path from "node:path";

/** Pi's read notices after the text: where the shown lines end when the file goes on. */
const READ_NOTICE = /\n\n\[(?:Showing lines (\d+)-(\d+) of \d+[^\]]*|(\d+) more lines in file\. Use offset=(\d+) to continue\.)\]$/;
/** A grep hit or context line in Pi's format (the path is what comes first). */
const HIT_LINE = /^(.+?)([:-])(\d+)\2 /;
/** A grouped file's heading: `src/a.ts (typescript, 40 lines, 3 symbols)` (or the known-file form). */
const FILE_HEADING = /^(\S.*?) \((?:[^,()]+, \d+ lines?, \d+ symbols?|known[^()]*)\)$/;
/** `kind name @ 3-9`, as grep's headings and `other:` hints print a symbol. */
const SYMBOL = /^(\w+) (.+) @ (\d+)-(\d+)$/;
/** An outline line: `  - kind name @ 3-9 (7 lines)`. */
const OUTLINE_LINE = /^\s*- (\w+) (.+) @ (\d+)-(\d+) \(\d+ lines?\)$/;

/** `p` as the tools display it relative to `cwd`: `/`-separated, no leading `./`. */
export function canonicalPath(cwd, p) {
  const abs = path.resolve(cwd, p);
  const rel = path.relative(cwd, abs);
  return rel === "" ? "." : rel.split(path.sep).join("/");
}

/** Pi's read and outline accept `@path` (as typed in the editor) and `~/`. */
function argPath(p, home) {
  if (typeof p !== "string" || p.length === 0) return null;
  const s = p.startsWith("@") ? p.slice(1) : p;
  if (home && (s === "~" || s.startsWith("~/"))) return home + s.slice(1);
  return s;
}

const textOf = (content) =>
  Array.isArray(content) ? content.map((c) => (c && c.type === "text" && typeof c.text === "string" ? c.text : "")).join("") : "";

/**
 * What one tool result showed, as `{ path, pathBytes?, kind, regions, full?, symbols? }` items keyed by the
 * canonical path (relative to `cwd`). `regions` are `{ start, end, strength, text? }` with `strength` one of
 * the seed's `full_region`, `snippet`, `match_line_only`; `text` is the exact text a read showed (its hash is
 * what freshness compares). An error result, an image or a tool we do not know shows nothing.
 * @param {{ toolName: string, input: Record<string, unknown> | undefined, content: unknown, details: unknown, isError: boolean }} r
 * @param {{ cwd: string, home?: string, isFile?: (abs: string) => boolean }} env
 */
export function itemsOfResult(r, env) {
  if (r.isError) return [];
  const input = r.input ?? {};
  const text = textOf(r.content);
  switch (r.toolName) {
    case "read":
      return readItems(input, text, r.content, env);
    case "edit":
    case "write": {
      const p = argPath(input.path, env.home);
      return p ? [{ path: canonicalPath(env.cwd, p), kind: r.toolName, regions: [] }] : [];
    }
    case "outline":
      return outlineItems(input, text, r.details, env);
    case "trace":
    case "locate":
      return discoverItems(r.toolName, input, r.details, env);
    case "grep":
      return grepItems(input, text, env);
    default:
      return [];
  }
}

function readItems(input, text, content, env) {
  const p = argPath(input.path, env.home);
  if (!p) return [];
  if (Array.isArray(content) && content.some((c) => c && c.type === "image")) return [];
  if (/^\[Line \d+ is [^\]]*exceeds/.test(text)) return [];
  const start = typeof input.offset === "number" && input.offset > 1 ? Math.floor(input.offset) : 1;
  const m = READ_NOTICE.exec(text);
  const shown = m ? text.slice(0, m.index) : text;
  const count = shown.split("\n").length;
  const end = start + count - 1;
  // Whole file: from line 1 and nothing said to continue (Pi says so whenever the file goes on).
  const full = start === 1 && !m;
  return [{ path: canonicalPath(env.cwd, p), kind: "read", full, regions: [{ start, end, strength: "full_region", text: shown }] }];
}

function outlineItems(input, text, details, env) {
  const p = argPath(input.path, env.home);
  if (!p) return [];
  const symbols = [];
  for (const line of text.split("\n")) {
    const m = OUTLINE_LINE.exec(line);
    if (m) symbols.push({ kind: m[1], name: m[2], start: Number(m[3]), end: Number(m[4]) });
  }
  const d = /** @type {{ symbols?: number, shown?: number } | undefined} */ (details);
  // The whole structure was listed (no maxItems cut, not the compact form): the model has the file's shape.
  const complete = symbols.length > 0 && d?.symbols !== undefined && d.symbols === symbols.length;
  return [{ path: canonicalPath(env.cwd, p), kind: "outline", regions: [], symbols, structure: complete || (d?.symbols === 0) }];
}

/** trace and locate carry what they showed in `details.seen` (paths relative to the searched root). */
function discoverItems(kind, input, details, env) {
  const seen = /** @type {{ seen?: Array<{ path: string, pathBytes?: string, symbols?: any[], regions?: any[] }> } | undefined} */ (details)?.seen;
  if (!Array.isArray(seen)) return [];
  const root = typeof input.path === "string" && input.path ? input.path : ".";
  return seen.map((f) => ({
    path: canonicalPath(env.cwd, path.join(root, f.path)),
    ...(f.pathBytes ? { pathBytes: f.pathBytes } : {}),
    kind,
    regions: (f.regions ?? []).map((r) => ({ start: r[0], end: r[1], strength: r[2] ? "full_region" : "snippet" })),
    symbols: (f.symbols ?? []).map((s) => ({ kind: s[0], name: s[1], start: s[2], end: s[3] })),
  }));
}

function grepItems(input, text, env) {
  const root = typeof input.path === "string" && input.path ? input.path : ".";
  const body = text.split("\n\n[")[0];
  /** @type {Map<string, { lines: number[], symbols: any[] }>} */
  const files = new Map();
  const fileOf = (shown) => {
    let f = files.get(shown);
    if (!f) files.set(shown, (f = { lines: [], symbols: [] }));
    return f;
  };
  let heading = null;
  for (const line of body.split("\n")) {
    const h = FILE_HEADING.exec(line);
    if (h) {
      heading = h[1];
      fileOf(heading);
      continue;
    }
    if (line.startsWith("  ") && heading) {
      const t = line.trim();
      const list = t.startsWith("other: ") ? t.slice(7).replace(/; \+\d+ .*$/, "").split("; ") : [t];
      for (const s of list) {
        const m = SYMBOL.exec(s);
        if (m) fileOf(heading).symbols.push({ kind: m[1], name: m[2], start: Number(m[3]), end: Number(m[4]) });
      }
      continue;
    }
    const m = HIT_LINE.exec(line);
    if (!m) {
      heading = null;
      continue;
    }
    fileOf(m[1]).lines.push(Number(m[3]));
  }
  // A single-file search prints the file's base name.
  const single = root !== "." && env.isFile?.(path.resolve(env.cwd, root)) === true;
  const items = [];
  for (const [shown, f] of files) {
    const rel = single && shown === path.basename(root) ? root : path.join(root, shown);
    items.push({ path: canonicalPath(env.cwd, rel), kind: "grep", regions: runs(f.lines), symbols: f.symbols });
  }
  return items;
}

/** Hit lines as runs of consecutive lines. */
function runs(lines) {
  const sorted = [...new Set(lines)].sort((a, b) => a - b);
  const out = [];
  for (const n of sorted) {
    const last = out[out.length - 1];
    if (last && last.end + 1 === n) last.end = n;
    else out.push({ start: n, end: n, strength: "match_line_only" });
  }
  return out;
}

/**
 * The tool calls of a branch in order, each with its turn (the count of assistant messages up to the one
 * that made the call) and `lowered` when a later compaction left it out of what the model still has.
 * `entries` are Pi's session entries root → leaf (`sessionManager.getBranch()`).
 * @returns {{ calls: Array<{ toolCallId: string, toolName: string, turn: number, lowered: boolean, input: any, content: any, details: any, isError: boolean }>, turns: number, compactions: number[] }}
 */
export function callsOfBranch(entries) {
  const calls = [];
  /** @type {Map<string, { name: string, input: any, turn: number }>} */
  const pending = new Map();
  const compactions = [];
  let turn = 0;
  /** Index in `calls` where the kept part of the context begins, after the latest compaction. */
  let keptFrom = 0;
  const ids = [];
  for (const e of Array.isArray(entries) ? entries : []) {
    if (!e || typeof e !== "object") continue;
    if (e.type === "compaction") {
      compactions.push(turn);
      // The model keeps the entries from firstKeptEntryId on; everything before it is only a summary now.
      const kept = typeof e.firstKeptEntryId === "string" ? ids.findIndex((x) => x.id === e.firstKeptEntryId) : -1;
      keptFrom = kept >= 0 ? callsBefore(ids, kept, calls) : calls.length;
      continue;
    }
    if (typeof e.id === "string") ids.push({ id: e.id, calls: calls.length });
    if (e.type !== "message" || !e.message) continue;
    const m = e.message;
    if (m.role === "assistant") {
      turn++;
      for (const c of Array.isArray(m.content) ? m.content : []) {
        if (c && c.type === "toolCall" && typeof c.id === "string") pending.set(c.id, { name: c.name, input: c.arguments, turn });
      }
    } else if (m.role === "toolResult" && typeof m.toolCallId === "string") {
      const call = pending.get(m.toolCallId);
      calls.push({
        toolCallId: m.toolCallId,
        toolName: typeof m.toolName === "string" ? m.toolName : call?.name ?? "",
        turn: call?.turn ?? turn,
        lowered: false,
        input: call?.input ?? {},
        content: m.content,
        details: m.details,
        isError: m.isError === true,
      });
    }
  }
  for (let i = 0; i < keptFrom && i < calls.length; i++) calls[i].lowered = true;
  return { calls, turns: turn, compactions };
}

function callsBefore(ids, index, calls) {
  const e = ids[index];
  return e ? Math.min(e.calls, calls.length) : calls.length;
}
