// Lines laid out for the width Pi draws them at: a widget row, a table row or a collapsed view's line is one
// screen line at any width (cut with an ellipsis, never wrapped). The text comes from lib/shell/format.ts;
// this only measures with pi-tui (wide characters, colours) and styles.
import { CutLines } from "../tui/cut-lines.ts";
import { jobTable, type JobRow, type Preview } from "../lib/shell/format.ts";

type Style = (text: string) => string;

/**
 * A collapsed view at its width: every line, prose heading and output alike, cut to one screen line. A
 * collapsed block never wraps (issue 47): the heading's first words say what happened (started, exited,
 * running), the rest of a long sentence is in the expanded view and in the model's text.
 */
export function previewView(preview: Preview, style?: Style, indent = 0): CutLines {
	return new CutLines([...preview.head, ...preview.body], style, indent);
}

/** The job table at the width it is drawn at (the command and the last output give up room first). */
export function tableView(rows: JobRow[], style?: Style, indent = 0): CutLines {
	return new CutLines((width) => jobTable(rows, undefined, width).split("\n"), style, indent);
}

/** The rows of a job table kept in a result's or message's `details`, when they are there. */
export function rowsOf(details: unknown): JobRow[] | undefined {
	const rows = (details as { rows?: unknown } | undefined)?.rows;
	return Array.isArray(rows) && rows.every((r) => Array.isArray(r) && r.length === 6 && r.every((c) => typeof c === "string")) ? (rows as JobRow[]) : undefined;
}
