// Text the shell-bg tools, command, widget and follow-ups show. Pure: no Pi import, no I/O, so every wording
// is unit-tested and one change of phrasing happens in one place.
import type { ShellJob, ShellKillReport } from "./registry.ts";

import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, type TruncationResult } from "../truncate.mjs";

// Re-exported so shell-bg's callers keep one import; the values and Pi's size format live in truncate.mjs.
export { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize };

/** `850ms`, `4.2s`, `59s`, `3m 05s`, `2h 01m`: short enough for a widget line, exact enough for a model. */
export function formatDuration(ms: number): string {
	if (!Number.isFinite(ms) || ms < 0) ms = 0;
	if (ms < 1000) return `${Math.round(ms)}ms`;
	if (ms < 10_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)}s`;
	const s = Math.floor(ms / 1000);
	if (s < 60) return `${s}s`;
	const m = Math.floor(s / 60);
	if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
	return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

// CSI (`ESC [ ... final`), OSC (`ESC ] ... BEL|ST`) and two-character escapes.
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;
// Control characters other than TAB and LF, and the Unicode interlinear annotation characters that break
// terminal width computations (Pi filters the same range).
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f\ufff9-\ufffb]/g;

/**
 * Log text as a model or a widget should see it: colours and cursor codes removed, and a line redrawn with
 * carriage returns (progress bars) reduced to what the terminal would finally show. The log keeps the raw bytes.
 */
export function sanitizeOutput(text: string): string {
	return text
		.replace(ANSI, "")
		.split("\n")
		.map((line) => {
			const trimmed = line.endsWith("\r") ? line.slice(0, -1) : line;
			const cr = trimmed.lastIndexOf("\r");
			return (cr === -1 ? trimmed : trimmed.slice(cr + 1)).replace(CONTROL, "");
		})
		.join("\n");
}

/** Cuts to `max` columns with an ellipsis; whitespace runs (newlines included) become one space. */
export function cut(text: string, max: number): string {
	return fitLine(text.replace(/\s+/g, " ").trim(), Math.max(1, max));
}

/** Whitespace runs (newlines included) as one space. */
const flat = (text: string) => text.replace(/\s+/g, " ").trim();

// Characters a terminal draws two columns wide: East Asian wide and fullwidth forms, and emoji. Close to
// pi-tui's visibleWidth, which the Pi side still applies to what it draws.
const WIDE = /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u;
// Combining marks and zero-width characters take no column of their own.
const ZERO = /[\p{Mn}\p{Me}\u200b-\u200f\ufe00-\ufe0f]/u;

const columnsOf = (ch: string) => (ZERO.test(ch) ? 0 : WIDE.test(ch) ? 2 : 1);

/** How many terminal columns `text` takes (no escapes in it: the text here is sanitized). */
export function columns(text: string): number {
	let n = 0;
	for (const ch of text) n += columnsOf(ch);
	return n;
}

/** A line cut to `width` terminal columns with an ellipsis. */
export function fitLine(line: string, width: number): string {
	if (columns(line) <= width) return line;
	if (width <= 0) return "";
	let out = "";
	let used = 0;
	for (const ch of line) {
		const w = columnsOf(ch);
		if (used + w > width - 1) break;
		out += ch;
		used += w;
	}
	return `${out}…`;
}

/** The last non-empty line of some output, sanitized. */
export function lastLine(text: string): string {
	const lines = sanitizeOutput(text).split("\n");
	for (let i = lines.length - 1; i >= 0; i--) if (lines[i].trim()) return lines[i].trim();
	return "";
}

/** Pi's truncation result without the fields its head-side variant adds. */
export type TailTruncation = Omit<TruncationResult, "firstLineExceedsLimit" | "maxLines" | "maxBytes">;

/** Pi's `truncateTail` (0.73.1, MIT): the last whole lines within both limits; one over-long line is cut from its start. */
export function truncateTail(content: string, maxLines: number = DEFAULT_MAX_LINES, maxBytes: number = DEFAULT_MAX_BYTES): TailTruncation {
	const totalBytes = Buffer.byteLength(content, "utf8");
	const lines = content.split("\n");
	const totalLines = lines.length;
	if (totalLines <= maxLines && totalBytes <= maxBytes) {
		return { content, truncated: false, truncatedBy: null, totalLines, totalBytes, outputLines: totalLines, outputBytes: totalBytes, lastLinePartial: false };
	}
	const kept: string[] = [];
	let bytes = 0;
	let truncatedBy: "lines" | "bytes" = "lines";
	let lastLinePartial = false;
	for (let i = lines.length - 1; i >= 0 && kept.length < maxLines; i--) {
		const lineBytes = Buffer.byteLength(lines[i], "utf8") + (kept.length > 0 ? 1 : 0);
		if (bytes + lineBytes > maxBytes) {
			truncatedBy = "bytes";
			if (kept.length === 0) {
				const buf = Buffer.from(lines[i], "utf8");
				let start = buf.length - maxBytes;
				while (start < buf.length && (buf[start] & 0xc0) === 0x80) start++;
				kept.push(buf.subarray(start).toString("utf8"));
				lastLinePartial = true;
			}
			break;
		}
		kept.unshift(lines[i]);
		bytes += lineBytes;
	}
	if (kept.length >= maxLines && bytes <= maxBytes) truncatedBy = "lines";
	const out = kept.join("\n");
	return { content: out, truncated: true, truncatedBy, totalLines, totalBytes, outputLines: kept.length, outputBytes: Buffer.byteLength(out, "utf8"), lastLinePartial };
}

// ---------------------------------------------------------------- job descriptions

/** What the extension stores in a job's `meta`: whether a tool call still owns it and how it got to the background. */
export interface JobMeta {
	mode: "fg" | "bg";
	auto?: boolean;
	/** Killed because Pi quit (`shell.onQuit: "kill"`): said so after a resume. */
	stoppedAtQuit?: boolean;
}

export function parseMeta(meta: string | undefined): JobMeta {
	try {
		const v = JSON.parse(meta ?? "") as Partial<JobMeta>;
		if (v && (v.mode === "fg" || v.mode === "bg")) return { mode: v.mode, ...(v.auto ? { auto: true } : {}), ...(v.stoppedAtQuit ? { stoppedAtQuit: true } : {}) };
	} catch {
		// Not ours (or written by a later version): treat as a background job, which is what a visible job is.
	}
	return { mode: "bg" };
}

/** How the job's main process ended: `exited with code 0`, `was killed by SIGTERM`. */
function leaderEnding(job: ShellJob): string {
	if (job.leaderSignal) return `was killed by ${job.leaderSignal}`;
	return job.leaderExitCode === undefined ? "ended" : `exited with code ${job.leaderExitCode}`;
}

/** `1 process it started is still running (pid 1234: sleep 77)`; empty when none is. */
export function stillRunningText(job: ShellJob): string {
	const alive = job.alive ?? [];
	if (alive.length === 0) return "";
	const shown = alive.slice(0, 3).map((p) => (p.command ? `pid ${p.pid}: ${cut(p.command, 60)}` : `pid ${p.pid}`));
	const more = alive.length > 3 ? `, and ${alive.length - 3} more` : "";
	const n = alive.length === 1 ? "1 process it started is" : `${alive.length} processes it started are`;
	return `${n} still running (${shown.join(", ")}${more})`;
}

/** A running job whose main process has ended (what it started keeps the job running). */
const leaderGone = (job: ShellJob) => job.state === "running" && job.leaderEndedAtMs !== undefined;

/** What the job's main process left behind, or empty when it is still running. */
function leftBehind(job: ShellJob, pid = ""): string {
	if (!leaderGone(job)) return "";
	const still = stillRunningText(job);
	return `its main process${pid} ${leaderEnding(job)}${still ? `; ${still}` : ""}`;
}

/**
 * The first line of a job's status and logs: `bg-1 running for 3s (pid 1200): npm run dev`. Once the main
 * process has ended its pid names nothing any more: the line then ends on the command, and the next one says
 * what the main process did and what is still running.
 */
export function jobHeading(job: ShellJob): string {
	if (leaderGone(job)) {
		const left = leftBehind(job, ` (pid ${job.pid})`);
		return `${job.id} running for ${formatDuration(job.runtimeMs)}: ${job.command}\n${left[0].toUpperCase()}${left.slice(1)}.`;
	}
	return `${job.id} ${describeState(job)}${job.state === "running" ? ` (pid ${job.pid})` : ""}: ${job.command}`;
}

/** `exited with code 0 after 3.2s`, `timed out after 5s and was stopped (SIGTERM)`, `running for 12s`, ... */
export function describeState(job: ShellJob): string {
	const after = `after ${formatDuration(job.runtimeMs)}`;
	const main = job.leaderEndedAtMs !== undefined && job.state !== "running" && job.state !== "lost" && job.leaderEndedAtMs < (job.endedAtMs ?? 0) - 1
		? ` (its main process ${leaderEnding(job)} earlier; what it started ran on)`
		: "";
	switch (job.state) {
		case "running": {
			const left = leftBehind(job);
			return `running for ${formatDuration(job.runtimeMs)}${left ? `; ${left}` : ""}`;
		}
		case "exited":
			return job.exitCode === undefined
				? `ended (exit code unknown${job.note ? `: ${job.note}` : ""}) ${after}${main}`
				: `exited with code ${job.exitCode} ${after}${main}`;
		case "signalled": {
			const sig = job.signal ?? "a signal";
			if (job.timedOut) return `timed out after ${formatDuration(job.timeoutMs ?? job.runtimeMs)} and was stopped (${sig})${main}`;
			if (parseMeta(job.meta).stoppedAtQuit) return `was stopped (${sig}) when Pi quit, ${after}${main}`;
			if (job.killRequested) return `was stopped (${sig}) ${after}${main}`;
			return `was killed by ${sig} ${after}${main}`;
		}
		case "lost":
			return `was lost${job.note ? ` (${job.note})` : ""}; it is no longer tracked and will not be signalled`;
	}
}

/** Exit column of the job table. */
function exitColumn(job: ShellJob): string {
	if (job.state === "running") return "-";
	if (job.state === "signalled") return job.timedOut ? `timeout` : (job.signal ?? "signal");
	if (job.state === "lost") return "lost";
	return job.exitCode === undefined ? "?" : String(job.exitCode);
}

/** One row of the job table: id, state, exit, runtime, command, last output (whole; the layout cuts them). */
export type JobRow = [string, string, string, string, string, string];

/** The job table's rows, whole: the layout decides what fits. */
export function jobRows(jobs: ShellJob[], lastLines: Map<string, string>): JobRow[] {
	return jobs.map((j) => [j.id, j.state, exitColumn(j), formatDuration(j.runtimeMs), flat(j.command), flat(lastLines.get(j.id) ?? "")]);
}

const TABLE_HEAD: JobRow = ["id", "state", "exit", "runtime", "command", "last output"];
const GAP = 2;

/**
 * The no-id `shell_status` answer and `/shell-bg`: one aligned row per job. Without `width` (the model's text)
 * the command and the last output are cut at 40 and 60 characters; with one (what the user sees), every line
 * fits it: the command and the last output give up room first, and are never cut below their headings.
 */
export function jobTable(jobs: ShellJob[] | JobRow[], lastLines: Map<string, string> = new Map(), width?: number): string {
	if (jobs.length === 0) return "No background jobs in this session.";
	const rows = Array.isArray(jobs[0]) ? (jobs as JobRow[]) : jobRows(jobs as ShellJob[], lastLines);
	const natural = (c: number) => Math.max(TABLE_HEAD[c].length, ...rows.map((r) => columns(r[c])));
	const widths = TABLE_HEAD.map((_, c) => natural(c));
	if (width === undefined) {
		widths[4] = Math.min(widths[4], 40);
		widths[5] = Math.min(widths[5], 60);
	} else {
		const fixed = widths.slice(0, 4).reduce((a, b) => a + b, 0) + GAP * 5;
		const room = Math.max(0, width - fixed);
		if (widths[4] + widths[5] > room) {
			// The command keeps up to 45% of the room; the last output takes the rest, and leaves what it does not need.
			const cmd = Math.min(widths[4], Math.max(TABLE_HEAD[4].length, Math.floor(room * 0.45)));
			const last = Math.max(TABLE_HEAD[5].length, Math.min(widths[5], room - cmd));
			widths[4] = Math.max(TABLE_HEAD[4].length, Math.min(widths[4], room - last));
			widths[5] = last;
		}
	}
	const line = (r: string[]) =>
		r
			.map((cell, c) => {
				const shown = columns(cell) > widths[c] ? cut(cell, widths[c]) : cell;
				return c === r.length - 1 ? shown : shown + " ".repeat(Math.max(0, widths[c] - columns(shown)));
			})
			.join(" ".repeat(GAP))
			.trimEnd();
	const out = [line(TABLE_HEAD), ...rows.map(line)];
	return (width === undefined ? out : out.map((l) => fitLine(l, width))).join("\n");
}

/** Which of the job tools the model has: a hint never names a tool it cannot call. */
export interface ToolsOn {
	status: boolean;
	kill: boolean;
}

export const ALL_TOOLS: ToolsOn = { status: true, kill: true };

/** How to follow a job up with the tools there are; empty with neither. */
export function followHint(id: string, tools: ToolsOn = ALL_TOOLS): string {
	const read = tools.status ? `Read its new output with shell_status {"id":"${id}"} (add "wait": <seconds> to block until it ends, at most 300)` : "";
	const stop = tools.kill ? `stop it with shell_kill {"id":"${id}"}` : "";
	if (read && stop) return `${read}; ${stop}.`;
	if (read) return `${read}.`;
	return stop ? `Stop it with shell_kill {"id":"${id}"}.` : "";
}

/** Told to the model when nothing can reach it after its final answer (print and json modes). */
export function headlessNote(tools: ToolsOn = ALL_TOOLS): string {
	return tools.status
		? "This session has no UI: a completion message reaches you only while you are still working, so collect the result with shell_status and \"wait\" before you finish."
		: "This session has no UI: a completion message reaches you only while you are still working.";
}

export function startedText(job: ShellJob, o: { timeoutSec?: number; headless: boolean; tools?: ToolsOn }): string {
	const hint = followHint(job.id, o.tools);
	const lines = [
		`Started ${job.id} in the background (pid ${job.pid}).`,
		`Log: ${job.logPath}`,
		...(o.timeoutSec ? [`Timeout: it is stopped after ${o.timeoutSec}s.`] : []),
		...(hint ? [hint] : []),
		o.headless ? headlessNote(o.tools) : "You will get a message when it ends.",
	];
	return lines.join("\n");
}

/**
 * Appended to the output-so-far that Pi's bash formatting produced when a foreground command moves to the
 * background: one paragraph of one line, so that the output stays the body of the result.
 */
export function movedText(job: ShellJob, o: { afterSec: number; timeoutSec?: number; tools?: ToolsOn }): string {
	const hint = followHint(job.id, o.tools);
	return [
		`[Still running after ${o.afterSec}s: moved to the background as ${job.id} (pid ${job.pid}); the output above is what it printed so far.`,
		`Log: ${job.logPath}.`,
		...(o.timeoutSec ? [`Its timeout still applies: it is stopped ${o.timeoutSec}s after it started.`] : []),
		`${hint ? `${hint} ` : ""}You will get a message when it ends.]`,
	].join(" ");
}

const MOVED = /\n\n\[Still running after (\d+)s: moved to the background as (\S+) [^\n]*\]$/;

/**
 * A moved command's result as the collapsed bash preview draws it (its last 5 lines): the output, then one
 * short line for the move, so the notice never hides what the command printed. The model gets `movedText`.
 */
export function movedPreview(text: string): string {
	const m = MOVED.exec(text);
	return m ? `${text.slice(0, m.index)}\n[moved to the background as ${m[2]} after ${m[1]}s]` : text;
}

/**
 * A foreground command returned but left processes running: the call returns as usual and this one line tells
 * the model the job now runs in the background. Tool names only for the tools that are enabled.
 */
export function leftRunningText(job: ShellJob, tools: ToolsOn = ALL_TOOLS): string {
	const how = [tools.status ? "read it with shell_status" : "", tools.kill ? "stop it with shell_kill" : ""].filter(Boolean).join(", ");
	return `${stillRunningText(job)} — tracked as ${job.id}${how ? `; ${how}` : ""}`;
}

const LEFT_RUNNING = /\n\n(\d+) process(?:es)? it started (?:is|are) still running \([^\n]*\) — tracked as (\S+?)(?:;[^\n]*)?$/;

/**
 * A foreground command that left processes running, as the collapsed bash view draws it: its output, then
 * one short line (`[1 process left running as bg-3]`) instead of the model's sentence, which wrapped at 80
 * columns. The model gets `leftRunningText`; the expanded view shows it.
 */
export function leftRunningPreview(text: string): string {
	const m = LEFT_RUNNING.exec(text);
	if (!m) return text;
	const n = Number(m[1]);
	return `${text.slice(0, m.index)}\n[${n} ${n === 1 ? "process" : "processes"} left running as ${m[2]}]`;
}

export function refusalText(running: ShellJob[], max: number, tools: ToolsOn = ALL_TOOLS): string {
	const list = running.map((j) => `${j.id} (${formatDuration(j.runtimeMs)}): ${cut(j.command, 60)}`).join("\n");
	const ways = [tools.kill ? "Stop one with shell_kill, " : "", tools.status ? "wait for one with shell_status and \"wait\", " : ""].join("");
	return [
		`Not started: ${running.length} background jobs are already running, the limit (shell.maxBackgroundJobs = ${max}).`,
		list,
		ways ? `Nothing was stopped. ${ways}or run this command in the foreground.` : "Nothing was stopped. Run this command in the foreground, or wait until one ends.",
	].join("\n");
}

/** Said when a job's log outgrew `shell.maxLogBytes` and was cut; empty otherwise. */
export function trimmedNote(job: ShellJob): string {
	if (!job.logDropped) return "";
	return `Its log outgrew shell.maxLogBytes (${formatSize(job.maxLogBytes)}): it keeps the first 1MB and the newest output; ${formatSize(job.logDropped)} in between were dropped (a marker line in the log says where).`;
}

/** `1 line`, `3 lines`. */
const lines = (n: number) => `${n} ${n === 1 ? "line" : "lines"}`;

/** The ending as the model is told it: the state, the command and the tail of the output, counted as returned. */
export function followUpText(job: ShellJob, tail: string): string {
	const out = sanitizeOutput(tail).replace(/\n+$/, "");
	const trimmed = trimmedNote(job);
	return [
		`Background job ${job.id} ${describeState(job)}.`,
		`Command: ${job.command.length > 500 ? `${job.command.slice(0, 499)}…` : job.command}`,
		...(trimmed ? [trimmed] : []),
		out ? `Last ${lines(out.split("\n").length)} of output (full log: ${job.logPath}):\n${out}` : `(no output; log: ${job.logPath})`,
	].join("\n");
}

/** How many output lines a collapsed follow-up or status shows: Pi's collapsed bash shows 5. */
export const PREVIEW_LINES = 5;

/** A collapsed view: prose heading lines and output lines, each drawn as one screen line (cut, never wrapped). */
export interface Preview {
	head: string[];
	body: string[];
}

/** A preview as one text (how the tests and a plain renderer read it). */
export const previewText = (p: Preview) => [...p.head, ...p.body].join("\n");

/**
 * A collapsed view that ends on the newest output, as Pi's bash preview does: the heading lines, then
 * `... (N earlier lines, <hint>)` when lines are left out, then the last `maxLines` lines of the output.
 */
export function tailPreview(head: string[], output: string[], expandHint: string, maxLines = PREVIEW_LINES): Preview {
	if (output.length <= maxLines) return { head, body: output };
	const hidden = output.length - maxLines;
	return { head, body: [`... (${hidden} earlier ${hidden === 1 ? "line" : "lines"}, ${expandHint})`, ...output.slice(-maxLines)] };
}

/**
 * A follow-up message collapsed: its status and command lines and the newest output lines (the heading with
 * the log path is left out: the path is for the model, and split over two lines at 80 columns).
 */
export function followUpPreview(text: string, expandHint = "expand to see them", maxLines = PREVIEW_LINES): Preview {
	const at = text.search(/\nLast \d+ lines? of output/);
	if (at < 0) return { head: text.replace(/\n\(no output; log: [^\n]*\)$/, "\n(no output)").split("\n"), body: [] };
	const lines = text.slice(0, at).split("\n");
	// The command is a line of code: cut, not wrapped, like the output; the status and notes are prose.
	const command = lines.filter((l) => l.startsWith("Command: "));
	const output = tailPreview([], text.slice(at + 1).split("\n").slice(1), expandHint, maxLines).body;
	return { head: lines.filter((l) => !l.startsWith("Command: ")), body: [...command, ...output] };
}

/** How a follow-up message is drawn: collapsed, `followUpPreview`; expanded, all of it. The model always gets the whole text. */
export function followUpDisplay(text: string, expanded: boolean, expandHint = "expand to see them", maxLines = PREVIEW_LINES): string {
	return expanded ? text : previewText(followUpPreview(text, expandHint, maxLines));
}

const STARTED = /^(Started \S+ in the background \(pid \d+\)\.)\n/;

/**
 * A background start as the collapsed bash view draws it: the line a person needs (which job, which pid)
 * and its timeout. Pi's collapsed bash shows the last lines, which were the log path and the instructions
 * for the model; those stay in the text and in the expanded view.
 */
export function startedPreview(text: string): string {
	const m = STARTED.exec(text);
	if (!m) return text;
	const timeout = /\n(Timeout: it is stopped after \d+s\.)\n/.exec(text);
	return timeout ? `${m[1]}\n${timeout[1]}` : m[1];
}

/**
 * `shell_status {id}` collapsed: the job's heading (and a wait's outcome), then the newest lines of the
 * output it returned. Pi's fallback shows the first lines, the oldest; the newest matter. The hint, the
 * log path and a truncation footer are in the expanded view.
 */
export function statusPreview(text: string, expandHint = "expand to see them", maxLines = PREVIEW_LINES): Preview {
	const label = /\n\n(?:(Output since the last read:|Last lines of output:)\n|(\(no (?:new )?output[^\n]*\)))/.exec(text);
	if (!label) return { head: text.split("\n"), body: [] };
	const head = text.slice(0, label.index).split("\n\n").filter((p) => !p.startsWith("Its log outgrew")).join("\n").split("\n");
	if (label[2]) return { head: [...head, label[2]], body: [] };
	// The output runs to the footers the status puts after it: a truncation note, the hint, the log path.
	let rest = text.slice(label.index + label[0].length).replace(/\n\nLog: [^\n]*$/, "");
	rest = rest.replace(/\n\n(?:Read its new output with shell_status|Stop it with shell_kill)[^\n]*$/, "");
	rest = rest.replace(/\n\n\[Showing [^\n]*\]$/, "");
	return tailPreview(head, rest.split("\n"), expandHint, maxLines);
}

/** `shell_status {id}` as drawn: collapsed, `statusPreview`; expanded, all of it. */
export function statusDisplay(text: string, expanded: boolean, expandHint = "expand to see them", maxLines = PREVIEW_LINES): string {
	return expanded ? text : previewText(statusPreview(text, expandHint, maxLines));
}

export function killLine(report: ShellKillReport, graceMs: number): string {
	const job = report.job;
	switch (report.outcome) {
		case "already-ended":
			return `${job.id}: had already ended (${describeState(job)}); nothing was signalled.`;
		case "refused":
			return `${job.id}: not signalled: ${job.note ?? "its process can no longer be identified as ours"} (lost).`;
		case "killed": {
			let text = report.sentKill
				? `${job.id}: did not stop on SIGTERM within ${formatDuration(graceMs)}; killed with SIGKILL.`
				: `${job.id}: stopped with SIGTERM.`;
			if (report.escapees.length) text += ` Also signalled ${report.escapees.length} ${report.escapees.length === 1 ? "process" : "processes"} that had left its group (pids ${report.escapees.join(", ")}).`;
			if (report.survivors.length) text += ` WARNING: still alive afterwards: pids ${report.survivors.join(", ")}.`;
			return text;
		}
	}
}

/** Said while a kill (or Pi's quit) waits for jobs that did not stop at once: `stopping bg-1 (SIGTERM, SIGKILL after 3.0s)…`. */
export function stoppingText(ids: string[], graceMs: number): string {
	return `stopping ${ids.join(", ")} (SIGTERM, SIGKILL after ${formatDuration(graceMs)})…`;
}

/** A running job and the last line of its output, as the widget draws them. */
export interface WidgetRow {
	job: ShellJob;
	last: string;
}

/**
 * The widget's lines, one per running job and each at most `width` columns, so that no row ever wraps: id
 * and elapsed time in columns of one width for all rows (`bg-9` and `bg-10`, `3.1s` and `14s` line up),
 * then the command and the last output line sharing what is left (the command 40% of it, at least 16
 * columns, and what a short last line leaves; a last output with fewer than 8 columns left is not shown).
 */
export function widgetLines(rows: WidgetRow[], width = 100): string[] {
	const idWidth = Math.max(0, ...rows.map((r) => r.job.id.length));
	const timeWidth = Math.max(4, ...rows.map((r) => formatDuration(r.job.runtimeMs).length));
	return rows.map(({ job, last }) => {
		const cutNote = job.logDropped ? `log cut, ${formatSize(job.logDropped)} dropped` : "";
		const flood = job.flooding ? `  ⚠ flooding its log${cutNote ? ` (${cutNote})` : ""}` : cutNote ? `  ⚠ ${cutNote}` : "";
		const orphans = leaderGone(job) ? `  · main process ended, ${job.alive?.length ?? 0} left` : "";
		const head = `⟳ ${job.id.padEnd(idWidth)}  ${formatDuration(job.runtimeMs).padStart(timeWidth)}  `;
		const room = width - head.length - flood.length - orphans.length;
		const command = flat(job.command);
		const tail = flat(last);
		let commandWidth = room;
		let tailPart = "";
		if (tail) {
			// The command gets 40% of the room and whatever a short last line leaves.
			const wanted = Math.min(columns(command), Math.max(16, Math.floor(room * 0.4), room - 4 - columns(tail)));
			const tailWidth = room - wanted - 4;
			if (tailWidth >= 8) {
				commandWidth = wanted;
				tailPart = `  › ${cut(tail, tailWidth)}`;
			}
		}
		return fitLine(`${head}${cut(command, Math.max(1, commandWidth))}${orphans}${flood}${tailPart}`, width);
	});
}

/** One widget line (a widget of one job). */
export function widgetLine(job: ShellJob, last: string, width = 100): string {
	return widgetLines([{ job, last }], width)[0];
}

// ---------------------------------------------------------------- /shell-bg

export type ShellBgCommand =
	| { kind: "list" }
	| { kind: "kill"; target: string }
	| { kind: "logs"; id: string }
	| { kind: "clear" }
	| { kind: "usage"; problem: string };

export const SHELL_BG_USAGE = "Usage: /shell-bg [list] | kill <id|all> | logs <id> | clear";

export function parseShellBgArgs(args: string): ShellBgCommand {
	const [verb = "", arg, ...rest] = args.trim().split(/\s+/).filter(Boolean);
	if (verb === "" || verb === "list") return rest.length || arg ? { kind: "usage", problem: `unexpected "${[arg, ...rest].join(" ")}"` } : { kind: "list" };
	if (verb === "clear") return arg ? { kind: "usage", problem: `unexpected "${arg}"` } : { kind: "clear" };
	if (verb === "kill" || verb === "logs") {
		if (!arg) return { kind: "usage", problem: `${verb} needs a job id` };
		if (rest.length) return { kind: "usage", problem: `unexpected "${rest.join(" ")}"` };
		return verb === "kill" ? { kind: "kill", target: arg } : { kind: "logs", id: arg };
	}
	return { kind: "usage", problem: `unknown subcommand "${verb}"` };
}

export interface Completion {
	value: string;
	label: string;
	description?: string;
}

/** Completions for the whole argument text (Pi replaces the typed argument with `value`). */
export function completeShellBgArgs(prefix: string, jobs: ShellJob[]): Completion[] | null {
	const verbs: Completion[] = [
		{ value: "list", label: "list", description: "list this session's jobs" },
		{ value: "kill ", label: "kill", description: "stop a job (or all)" },
		{ value: "logs ", label: "logs", description: "show a job's last output" },
		{ value: "clear", label: "clear", description: "forget finished jobs and delete their logs" },
	];
	const m = /^(kill|logs)\s+(\S*)$/.exec(prefix.trimStart());
	if (!m) {
		const typed = prefix.trim();
		if (/\s/.test(typed)) return null;
		const hits = verbs.filter((v) => v.label.startsWith(typed));
		return hits.length ? hits : null;
	}
	const [, verb, partial] = m;
	const candidates = verb === "kill" ? jobs.filter((j) => j.state === "running") : jobs;
	// An id typed in full needs no popup: with one open, Pi's first Enter would only accept what is there.
	if (candidates.some((j) => j.id === partial) || (verb === "kill" && partial === "all" && candidates.length)) return null;
	const items: Completion[] = candidates
		.filter((j) => j.id.startsWith(partial))
		.map((j) => ({ value: `${verb} ${j.id}`, label: j.id, description: `${j.state} · ${cut(j.command, 40)}` }));
	if (verb === "kill" && "all".startsWith(partial) && candidates.length) items.push({ value: "kill all", label: "all", description: "stop every running job" });
	return items.length ? items : null;
}

/**
 * The argument text of a `/shell-bg` command the cursor is in (first editor line, after the name and a
 * space), or undefined. Tab there asks Pi for file paths; a /shell-bg argument is never a path.
 */
export function shellBgArgsAt(lines: string[], cursorLine: number, cursorCol: number): string | undefined {
	if (cursorLine !== 0) return undefined;
	const m = /^\s*\/shell-bg\s(.*)$/s.exec((lines[0] ?? "").slice(0, cursorCol));
	return m ? m[1] : undefined;
}
