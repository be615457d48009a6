// The running jobs above the editor: one line per job (its command and last output line), refreshed each
// second while any runs, cleared when none does.
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { widgetLine } from "../lib/shell/format.ts";
import type { ShellJobs } from "../lib/shell/jobs.ts";

export const WIDGET = "shell-bg";

/** The part of the session the widget draws from. */
export interface WidgetSource {
	readonly active: boolean;
	readonly ctx: ExtensionContext | undefined;
	readonly jobs: ShellJobs | undefined;
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
			// The terminal's width (the widget spans it); 100 columns where it is unknown (RPC).
			const width = process.stdout.columns || 100;
			const lines = running.map((j) => widgetLine(j, jobs.lastLineOf(j), width));
			const text = lines.join("\n");
			if (text !== this.#text) {
				ctx.ui.setWidget(WIDGET, lines, { placement: "aboveEditor" });
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
