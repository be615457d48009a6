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
export declare const kb: (bytes: number) => string;
export declare function shortenPath(p: string): string;
export declare function formatLines(result: RenderedResult, expanded: boolean, theme: RenderTheme, expandHint: string): string;
export declare function withWarnings(text: string, warnings: string[], theme: RenderTheme): string;
