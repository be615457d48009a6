// Types of the search tools' shared render pieces (render.mjs).

/** The part of Pi's `Theme` the renderers use. */
export interface RenderTheme {
  fg(color: "toolTitle" | "toolOutput" | "accent" | "error" | "muted" | "warning", text: string): string;
  bold(text: string): string;
}
/** The part of Pi's `AgentToolResult` the renderers read. */
export interface RenderedResult {
  content: ReadonlyArray<{ type: string; text?: string }>;
}
export interface ResultLinesOptions {
  expanded: boolean;
  /** Lines shown collapsed (Pi: grep 15, find 20). */
  maxLines: number;
  /** Pi's key hint text, e.g. `keyHint("app.tools.expand", "to expand")`. */
  expandHint: string;
  /** Pi's `[Truncated: ...]` items, shown when the text has no notice of its own. */
  warnings?: string[];
  /** The body's lines as the collapsed view lists them (some left out or reordered; all still counted). */
  collapse?: (lines: string[]) => string[];
}
export declare const kb: (bytes: number) => string;
export declare function shortenPath(p: string): string;
export declare function displayText(text: string): string;
export declare function splitNotices(text: string): { body: string; notices: string[] };
export declare function formatResultLines(result: RenderedResult, options: ResultLinesOptions, theme: RenderTheme): string;
/** The bracketed notices in Pi's short form on one line (`[Truncated: 20 matches limit; +1 match in ignored paths]`); unknown ones whole. */
export declare function shortNotices(notices: string[]): string[];
