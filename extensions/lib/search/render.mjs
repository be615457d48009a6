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
 * A tool result as Pi's renderers draw it: the first `maxLines` lines (all when expanded), then how many
 * more there are with Pi's key hint, then the text's notices in the warning colour, so that what limited or
 * shaped the result is visible without expanding. Hiding a single line saves nothing, so it is shown.
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
  for (const n of notices) text += `\n${theme.fg("warning", n)}`;
  if (notices.length === 0 && warnings.length > 0) text += `\n${theme.fg("warning", `[Truncated: ${warnings.join(", ")}]`)}`;
  return text;
}
