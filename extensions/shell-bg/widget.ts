// The running jobs above the editor: one line per job (its command and last output line), refreshed each
// second while any runs, cleared when none does. In a terminal the rows are laid out at the width Pi draws
// them at (a row never wraps, however long the output line); RPC clients get them laid out for 100 columns.
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { widgetLines, type WidgetRow } from "../lib/shell/format.ts";
import type { SessionJobs } from "../lib/shell/jobs.ts";
import { CutLines } from "../tui/cut-lines.ts";

export const WIDGET = "shell-bg";

/** The part of the session the widget draws from. */
export interface WidgetSource {
	readonly active: boolean;
	readonly ctx: ExtensionContext | undefined;
	readonly jobs: SessionJobs | undefined;
}

export class JobsWidget {
	#timer: NodeJS.Timeout | undefined;
	#text = "";

	constructor(private readonly source: WidgetSource) {}

	refresh(): void {
		const { active, ctx, jobs } = this.source;
		try {
			if (!active || !ctx?.hasUI || !jobs) return this.stop(false);
			const running = jobs.running();
			if (running.length === 0) return this.stop(true);
			const rows: WidgetRow[] = running.map((job) => ({ job, last: jobs.lastLineOf(job) }));
			// What the rows say, for the check below: laid out wide enough that nothing is cut.
			const text = widgetLines(rows, 1_000).join("\n");
			if (text !== this.#text) {
				// Pi's own string widgets have a one-column margin on each side.
				if (process.stdout.isTTY) ctx.ui.setWidget(WIDGET, () => new CutLines((width) => widgetLines(rows, width - 1), undefined, 1), { placement: "aboveEditor" });
				else ctx.ui.setWidget(WIDGET, widgetLines(rows, 98), { placement: "aboveEditor" });
				this.#text = text;
			}
			if (!this.#timer) {
				this.#timer = setInterval(() => this.refresh(), 1000);
				this.#timer.unref();
			}
		} catch {
			this.stop(false);
		}
	}

	stop(clear: boolean): void {
		const { active, ctx } = this.source;
		clearInterval(this.#timer);
		this.#timer = undefined;
		if (clear && this.#text && active && ctx?.hasUI) {
			try {
				ctx.ui.setWidget(WIDGET, undefined);
			} catch {
				// Stale UI.
			}
		}
		if (clear || !active) this.#text = "";
	}
}
