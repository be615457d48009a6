// Pieces of the tool renderers (renderCall/renderResult) shared by the search tools, in the style of Pi's
// built-in find. The theme is passed in, so this stays free of Pi packages; colours are Pi's theme names.

import { homedir } from "node:os";

/** A size the way the tool descriptions and render warnings print it: `50KB`. */
export const kb = (bytes) => `${Math.round(bytes / 1024)}KB`;

/** `~/x` for a path under the home directory, as Pi's renderers show paths. */
export function shortenPath(p) {
  const home = homedir();
  return p.startsWith(home) ? `~${p.slice(home.length)}` : p;
}

/**
 * The first 20 lines of a tool's text (all when expanded); `expandHint` is Pi's key hint text, shown after the
 * count of hidden lines.
 */
export function formatLines(result, expanded, theme, expandHint) {
  const output = result.content
    .map((c) => (c.type === "text" ? c.text : ""))
    .join("\n")
    .replace(/\r/g, "")
    .trim();
  let text = "";
  if (output) {
    const lines = output.split("\n");
    const shown = expanded ? lines : lines.slice(0, 20);
    text += `\n${shown.map((l) => theme.fg("toolOutput", l)).join("\n")}`;
    if (lines.length > shown.length) {
      text += `${theme.fg("muted", `\n... (${lines.length - shown.length} more lines,`)} ${expandHint})`;
    }
  }
  return text;
}

/** `[Truncated: a, b]` in the warning colour after `text`, when there is anything to say. */
export function withWarnings(text, warnings, theme) {
  return warnings.length ? `${text}\n${theme.fg("warning", `[Truncated: ${warnings.join(", ")}]`)}` : text;
}
