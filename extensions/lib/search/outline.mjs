// The outline tool: its text, shared by the Pi extension and the CLI. The outline itself (header, one
// `- kind name @ start-end (n lines)` line per symbol, the maxItems note) is rendered by the native core
// (`OutlineResult.text`); this adds what a tool call needs around it: path handling as Pi's read tool does
// it, the byte cap, abort, and `details`.

import { homedir } from "node:os";
import { DEFAULTS } from "../defaults.mjs";
import { formatSize, truncateHead } from "../truncate.mjs";
import { formatResultLines, shortenPath } from "./render.mjs";
import { abortError } from "./toolkit.mjs";

export const DEFAULT_OUTLINE_MAX_ITEMS = DEFAULTS.outline.maxItems;

/** Pi's read tool accepts `@path` (as typed in the editor) and `~/`; so does outline. */
export function outlinePath(p) {
  const path = p.startsWith("@") ? p.slice(1) : p;
  if (path === "~") return homedir();
  return path.startsWith("~/") ? homedir() + path.slice(1) : path;
}

/**
 * @param {import("./outline.d.mts").OutlineBackend} backend
 * @param {import("./outline.d.mts").OutlineToolParams} params
 * @param {import("./outline.d.mts").OutlineRunConfig} config
 * @returns {Promise<import("./outline.d.mts").OutlineToolResult>}
 */
export async function runOutlineTool(backend, params, config) {
  const { signal } = config;
  if (signal?.aborted) throw abortError();
  if (typeof params.path !== "string" || params.path.length === 0) throw new Error("path must not be empty");
  const n = typeof params.maxItems === "number" && Number.isFinite(params.maxItems) ? params.maxItems : config.defaultMaxItems;
  const maxItems = Math.max(1, Math.floor(n ?? DEFAULT_OUTLINE_MAX_ITEMS));
  const opts = { path: outlinePath(params.path), cwd: config.cwd, maxItems };
  // What the model already has of this file (Pi sessions): the core compacts an unchanged outline and says
  // what changed in a changed one.
  const known = config.known?.(opts.path);
  if (known?.context) opts.context = known.context;
  const pending = backend.outline(opts);
  // The native call cannot be interrupted; an abort stops waiting for it (it is bounded by the 16 MiB cap).
  const result = await new Promise((resolve, reject) => {
    const onAbort = () => reject(abortError());
    signal?.addEventListener("abort", onAbort, { once: true });
    pending.then(resolve, reject).finally(() => signal?.removeEventListener("abort", onAbort));
  });

  let full = result.text.replace(/\n$/, "");
  // A core that does not read the context (no `context` field) still must not hide a change from the model.
  if (known?.changed && result.context === undefined) full = `${full}\n\n[${known.changed}]`;
  const truncation = truncateHead(full, { maxLines: Number.MAX_SAFE_INTEGER, maxBytes: config.maxBytes });
  const details = {
    language: result.language,
    totalLines: result.totalLines,
    symbols: result.symbols.length + result.omitted,
    shown: result.symbols.length,
  };
  if (result.hasErrors) details.hasErrors = true;
  let text = full;
  if (truncation.truncated) {
    text = `${truncation.content}\n\n[${formatSize(config.maxBytes)} limit reached. Use maxItems to show fewer symbols]`;
    details.truncation = truncation;
  }
  return { text, details };
}

/** The tool's parameters as plain data (see `grepParameters` in grep.mjs). */
export function outlineParameters() {
  return {
    path: { type: "string", description: "File to outline (relative or absolute)" },
    maxItems: {
      type: "number",
      optional: true,
      description: `Most symbols to list; the deepest levels are dropped first (default: ${DEFAULT_OUTLINE_MAX_ITEMS})`,
    },
  };
}

/** The call line: `outline <path> (max N)`. */
export function formatOutlineCall(args, theme) {
  const path = args?.path;
  let text =
    theme.fg("toolTitle", theme.bold("outline")) +
    " " +
    (typeof path === "string" ? theme.fg("accent", shortenPath(path)) : theme.fg("error", "[invalid arg]"));
  if (args?.maxItems !== undefined) text += theme.fg("toolOutput", ` (max ${String(args.maxItems)})`);
  return text;
}

const count = (v, word) => (/^\d+$/.test(v) ? `${v} ${word}${v === "1" ? "" : "s"}` : `${word}s: ${v}`);

/**
 * The outline's header as the collapsed view shows it: `typescript, 40 lines, 23 symbols` on one line, without
 * the path the call line already shows (the model's text keeps its `file:`/`language:`/... lines).
 */
export function oneLineHeader(lines) {
  const fields = new Map();
  const notes = [];
  let i = 0;
  for (; i < lines.length; i++) {
    const m = /^(file|language|lines|symbols|note|structure):\s?(.*)$/.exec(lines[i]);
    if (!m) break;
    if (m[1] === "note") notes.push(lines[i]);
    else fields.set(m[1], m[2]);
    if (m[1] === "structure") {
      i++;
      break;
    }
  }
  if (!fields.has("file") || !fields.has("language")) return lines;
  const head = [fields.get("language"), fields.has("lines") ? count(fields.get("lines"), "line") : "", fields.has("symbols") ? count(fields.get("symbols"), "symbol") : ""];
  return [head.filter(Boolean).join(", "), ...notes, ...lines.slice(i)];
}

/** The result: its first 20 lines (never hiding just one), then the byte cap's notice when it cut the outline. */
export function formatOutlineResult(result, expanded, theme, expandHint) {
  const truncation = result.details?.truncation;
  const warnings = truncation?.truncated ? [`${formatSize(truncation.maxBytes)} limit`] : [];
  return formatResultLines(result, { expanded, maxLines: 20, expandHint, warnings, collapse: oneLineHeader }, theme);
}
