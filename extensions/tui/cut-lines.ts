// The one way both extensions draw a collapsed block: every line cut to one screen line with "…", never wrapped
// (issue 47). fs-search's collapsed results and shell-bg's widget, job table and collapsed previews all use it,
// so a long line behaves the same in every tool. It only measures (pi-tui knows wide characters and colours);
// the text comes from extensions/lib. Not an extension entry: Pi loads only what package.json names.
import { truncateToWidth, type Component } from "@mariozechner/pi-tui";

type Style = (text: string) => string;
type Lines = string[] | ((width: number) => string[]);

/** `lines` (fixed, or laid out for the width they get), each cut to the width after `indent` columns of margin. */
export class CutLines implements Component {
	constructor(
		private lines: Lines = [],
		private readonly style: Style = (t) => t,
		private readonly indent = 0,
	) {}

	/** New content for a component Pi reuses between renders. */
	setLines(lines: Lines): void {
		this.lines = lines;
	}

	render(width: number): string[] {
		const room = Math.max(1, width - this.indent);
		const pad = " ".repeat(Math.min(this.indent, width));
		const lines = typeof this.lines === "function" ? this.lines(room) : this.lines;
		return lines.map((line) => pad + this.style(truncateToWidth(line, room, "…")));
	}

	invalidate(): void {}
}
