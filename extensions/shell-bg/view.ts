// Lines laid out for the width Pi draws them at: a widget row, a table row or a collapsed view's line is one
// screen line at any width (cut with an ellipsis, never wrapped). The text comes from lib/shell/format.ts;
// this only measures with pi-tui (wide characters, colours) and styles.
import type { Component } from "@mariozechner/pi-tui";
import { truncateToWidth } from "@mariozechner/pi-tui";
import { jobTable, type JobRow, type Preview } from "../lib/shell/format.ts";

type Style = (text: string) => string;

/** Each of `lines(width)` cut to the width, after `indent` columns of margin on the left. */
export class FittedLines implements Component {
	constructor(
		private readonly lines: (width: number) => string[],
		private readonly style: Style = (t) => t,
		private readonly indent = 0,
	) {}

	render(width: number): string[] {
		const room = Math.max(1, width - this.indent);
		const pad = " ".repeat(Math.min(this.indent, width));
		return this.lines(room).map((line) => pad + this.style(truncateToWidth(line, room, "…")));
	}

	invalidate(): void {}
}

/**
 * A collapsed view at its width: every line, prose heading and output alike, cut to one screen line. A
 * collapsed block never wraps (issue 47): the heading's first words say what happened (started, exited,
 * running), the rest of a long sentence is in the expanded view and in the model's text.
 */
export class PreviewView implements Component {
	constructor(
		private readonly preview: Preview,
		private readonly style: Style = (t) => t,
		private readonly indent = 0,
	) {}

	render(width: number): string[] {
		const room = Math.max(1, width - this.indent);
		const pad = " ".repeat(Math.min(this.indent, width));
		return [...this.preview.head, ...this.preview.body].map((line) => pad + this.style(truncateToWidth(line, room, "…")));
	}

	invalidate(): void {}
}

/** The job table at the width it is drawn at (the command and the last output give up room first). */
export function tableView(rows: JobRow[], style?: Style, indent = 0): FittedLines {
	return new FittedLines((width) => jobTable(rows, undefined, width).split("\n"), style, indent);
}

/** The rows of a job table kept in a result's or message's `details`, when they are there. */
export function rowsOf(details: unknown): JobRow[] | undefined {
	const rows = (details as { rows?: unknown } | undefined)?.rows;
	return Array.isArray(rows) && rows.every((r) => Array.isArray(r) && r.length === 6 && r.every((c) => typeof c === "string")) ? (rows as JobRow[]) : undefined;
}
