// shell_status and shell_kill: the model's view of its background jobs, and its way to stop them.
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import { keyHint } from "@mariozechner/pi-coding-agent";
import { Text } from "@mariozechner/pi-tui";
import { Type } from "typebox";
import { statusPreview } from "../lib/shell/format.ts";
import { MAX_WAIT_SEC } from "../lib/shell/jobs.ts";
import type { ShellSession } from "./session.ts";
import { previewView, rowsOf, tableView } from "./view.ts";

type Content = readonly { type: string; text?: string }[];
const textOf = (content: Content) => content.map((c) => (c.type === "text" ? (c.text ?? "") : "")).join("");

const statusSchema = Type.Object({
	id: Type.Optional(Type.String({ description: "Job id, e.g. bg-1 (omit to list all jobs)" })),
	lines: Type.Optional(Type.Number({ description: "Show the last N lines instead of the output since the last read" })),
	wait: Type.Optional(Type.Number({ description: `Seconds to wait for the job to end before answering (0-${MAX_WAIT_SEC}, default 0)` })),
});

export function shellStatusTool(session: ShellSession): ToolDefinition<typeof statusSchema, unknown> {
	return {
		name: "shell_status",
		label: "shell_status",
		description:
			"Background jobs started by bash. Without id: a table of this session's jobs (id, state, exit code, runtime, command, last line). " +
			"With id: the job's state and its output since your last read (or the last N lines with lines), capped at 2000 lines / 50KB with the rest saved to a temp file. " +
			`wait: seconds (at most ${MAX_WAIT_SEC}) to block until the job ends first.`,
		promptSnippet: "Check background jobs: state and new output; optionally wait for one to end",
		parameters: statusSchema,
		// The table fits the width it is drawn at; a job's status, collapsed, ends on its newest output.
		renderResult(result, { expanded }, theme) {
			const style = (t: string) => theme.fg("toolOutput", t);
			const rows = rowsOf(result.details);
			if (rows) return tableView(rows, style);
			const text = textOf(result.content);
			return expanded ? new Text(style(text), 0, 0) : previewView(statusPreview(text, keyHint("app.tools.expand", "to expand")), style);
		},
		async execute(_toolCallId, params, signal, _onUpdate, ctx) {
			const current = session.useCtx(ctx);
			if (!params.id) {
				const table = current.table();
				return { content: [{ type: "text", text: table.text }], details: { rows: table.rows } };
			}
			const r = await current.status({ id: params.id, lines: params.lines, wait: params.wait, signal });
			return { content: [{ type: "text", text: r.text }], details: r.details };
		},
	};
}

const killSchema = Type.Object({
	id: Type.String({ description: 'Job id (e.g. bg-1), or "all"' }),
});

export function shellKillTool(session: ShellSession): ToolDefinition<typeof killSchema, unknown> {
	return {
		name: "shell_kill",
		label: "shell_kill",
		description:
			"Stop a background job and everything it started: SIGTERM to its process group, then SIGKILL after a grace period. " +
			'id: a job id, or "all" for every running job. Reports what happened to each job.',
		promptSnippet: "Stop a background job (or all of them)",
		parameters: killSchema,
		async execute(_toolCallId, params, _signal, onUpdate, ctx) {
			// A job that ignores SIGTERM: the wait is shown at once (as /shell-bg kill says it), not a silent grace.
			const onSlow = (text: string) => onUpdate?.({ content: [{ type: "text", text }], details: undefined });
			const r = await session.useCtx(ctx).kill(params.id.trim(), "model", { onSlow });
			return { content: [{ type: "text", text: r.text }], details: { jobs: r.reports.map((k) => ({ id: k.job.id, outcome: k.outcome, state: k.job.state })) } };
		},
	};
}
