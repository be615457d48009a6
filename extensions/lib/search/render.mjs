// Pieces of the tool renderers (renderCall/renderResult) shared by the search tools, in the look of Pi's
// built-in grep and find: the first lines of the text, a count of the hidden ones with Pi's key hint, and
// the tool's notices in the warning colour on the last line, collapsed or not. The theme is passed in, so
// this stays free of Pi packages; colours are Pi's theme names.

import { homedir } from "node:os";
import { stripVTControlCharacters } from "node:util";
import { ALL_IGNORED_MARK } from "./toolkit.mjs";

/** A size the way the tool descriptions and render warnings print it: `50KB`. */
export const kb = (bytes) => `${Math.round(bytes / 1024)}KB`;

/** `~/x` for a path under the home directory, as Pi's renderers show paths. */
export function shortenPath(p) {
  const home = homedir();
  return p.startsWith(home) ? `~${p.slice(home.length)}` : p;
}

/**
 * The text as a terminal may draw it: file contents and names can hold escape sequences and control
 * characters that would move the cursor or break Pi's width counting (Pi's own renderer strips them too).
 */
export function displayText(text) {
  // eslint-disable-next-line no-control-regex
  return stripVTControlCharacters(text).replace(/[\x00-\x08\x0b-\x1f\x7f\ufff9-\ufffb]/g, "");
}

/** A trailing paragraph of the tool's text that is a notice: Pi's `[...]` bracket, or grep's all-ignored mark. */
const isNotice = (paragraph) => paragraph === ALL_IGNORED_MARK || /^\[[^\n]*\]$/.test(paragraph);

/**
 * The tool's text split into its body and the notices after it (each a paragraph of one line, set off by a
 * blank line, as the tools write them). Reading them from the text, not `details`, also serves results
 * recorded by older versions.
 */
export function splitNotices(text) {
  const paragraphs = text.split("\n\n");
  const notices = [];
  while (paragraphs.length > 1 && isNotice(paragraphs[paragraphs.length - 1])) notices.unshift(paragraphs.pop());
  return { body: paragraphs.join("\n\n"), notices };
}

/**
 * What each of the tools' notices says in the collapsed view, Pi's short form: `kind` "limit" joins Pi's
 * `[Truncated: 100 matches limit, 50KB limit]`, a "note" follows it. The model's text keeps the whole notice
 * (what it means, how to see more); the expanded view shows it too.
 * @type {[RegExp, (m: RegExpExecArray) => ["limit" | "note", string]][]}
 */
const SHORT_FORMS = [
  [/(\d+ \w+) limit reached/, (m) => ["limit", `${m[1]} limit`]],
  [/(\d+(?:\.\d+)?[KMG]?B) limit reached/, (m) => ["limit", `${m[1]} limit`]],
  [/Some lines truncated to/, () => ["limit", "some lines truncated"]],
  [/\+(\d+ \w+) in ignored paths/, (m) => ["note", `+${m[1]} in ignored paths`]],
  [/Ignored paths not searched/, () => ["note", "ignored paths not searched"]],
  [/Search timed out after ([^:]+):/, (m) => ["note", `timed out after ${m[1]}`]],
  [/Search was cancelled/, () => ["note", "cancelled"]],
  [/(\d+ paths?) could not be read/, (m) => ["note", `${m[1]} unreadable`]],
  [/index of this directory could not be saved/, () => ["note", "index not saved"]],
];

/**
 * The bracketed notices in Pi's short form, on one line: `[Truncated: 20 matches limit; +1 match in ignored
 * paths]`. A notice with no known short form is kept whole.
 */
export function shortNotices(notices) {
  const limits = [];
  const notes = [];
  const kept = [];
  for (const n of notices) {
    let known = false;
    for (const [re, short] of SHORT_FORMS) {
      const m = re.exec(n);
      if (!m) continue;
      const [kind, text] = short(m);
      (kind === "limit" ? limits : notes).push(text);
      known = true;
    }
    if (!known) kept.push(n);
  }
  const parts = [...(limits.length > 0 ? [`Truncated: ${limits.join(", ")}`] : []), ...notes];
  return [...(parts.length > 0 ? [`[${parts.join("; ")}]`] : []), ...kept];
}

/**
 * A tool result as Pi's renderers draw it: the first `maxLines` lines (all when expanded), then how many
 * more there are with Pi's key hint, then the text's notices in the warning colour (collapsed, in Pi's short
 * form), so that what limited or shaped the result is visible without expanding. Hiding a single line saves nothing, so it is shown.
 * `collapse(lines)` gives the lines the collapsed view lists, in its order (those it leaves out still count). `warnings` are
 * Pi's `[Truncated: ...]` items from `details`, shown only when the text carries no notice of its own (the
 * notice already says the same, with the advice).
 */
export function formatResultLines(result, options, theme) {
  const { expanded, maxLines, expandHint, warnings = [], collapse } = options;
  const output = displayText(result.content.map((c) => (c.type === "text" ? (c.text ?? "") : "")).join("\n"))
    .replace(/\r/g, "")
    .trim();
  const { body, notices } = splitNotices(output);
  const lines = body ? body.split("\n") : [];
  const candidates = expanded || !collapse ? lines : collapse(lines);
  const shown = expanded || candidates.length <= maxLines + 1 ? candidates : candidates.slice(0, maxLines);
  let text = shown.length > 0 ? `\n${shown.map((l) => theme.fg("toolOutput", l)).join("\n")}` : "";
  const hidden = lines.length - shown.length;
  if (shown.length < candidates.length) {
    text += `${theme.fg("muted", `\n... (${hidden} more lines,`)} ${expandHint}${theme.fg("muted", ")")}`;
  }
  // Collapsed, the bracketed notices in Pi's short form (the mark that all hits are ignored is short already).
  const bracketed = notices.filter((n) => n !== ALL_IGNORED_MARK);
  const drawn = expanded ? notices : [...notices.filter((n) => n === ALL_IGNORED_MARK), ...shortNotices(bracketed)];
  for (const n of drawn) text += `\n${theme.fg("warning", n)}`;
  if (notices.length === 0 && warnings.length > 0) text += `\n${theme.fg("warning", `[Truncated: ${warnings.join(", ")}]`)}`;
  return text;
}
