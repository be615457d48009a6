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

/** Cuts to `max` characters with an ellipsis; whitespace runs (newlines included) become one space. */
export function cut(text: string, max: number): string {
	const flat = text.replace(/\s+/g, " ").trim();
	if (flat.length <= max) return flat;
	return `${flat.slice(0, Math.max(0, max - 1))}…`;
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

/** The no-id `shell_status` answer and `/shell-bg`: one aligned row per job. */
export function jobTable(jobs: ShellJob[], lastLines: Map<string, string>): string {
	if (jobs.length === 0) return "No background jobs in this session.";
	const rows = jobs.map((j) => [j.id, j.state, exitColumn(j), formatDuration(j.runtimeMs), cut(j.command, 40), cut(lastLines.get(j.id) ?? "", 60)]);
	const head = ["id", "state", "exit", "runtime", "command", "last output"];
	const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
	const line = (r: string[]) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]))).join("  ").trimEnd();
	return [line(head), ...rows.map(line)].join("\n");
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

/**
 * How a follow-up message is drawn in the chat: collapsed, its status and command lines and the output's
 * heading (which already says how many lines it carries) with how to expand; expanded, all of it. The model
 * always gets the whole text.
 */
export function followUpDisplay(text: string, expanded: boolean, expandHint = "expand to see them"): string {
	if (expanded) return text;
	const at = text.search(/\nLast \d+ lines? of output/);
	if (at < 0) return text;
	const heading = text.slice(at + 1).split("\n")[0].replace(/:$/, "");
	return `${text.slice(0, at)}\n${heading}, ${expandHint}`;
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
			if (report.escapees.length) text += ` Also signalled ${report.escapees.length} process(es) that had left its group (pids ${report.escapees.join(", ")}).`;
			if (report.survivors.length) text += ` WARNING: still alive afterwards: pids ${report.survivors.join(", ")}.`;
			return text;
		}
	}
}

/** Said while a kill (or Pi's quit) waits for jobs that did not stop at once: `stopping bg-1 (SIGTERM, SIGKILL after 3.0s)…`. */
export function stoppingText(ids: string[], graceMs: number): string {
	return `stopping ${ids.join(", ")} (SIGTERM, SIGKILL after ${formatDuration(graceMs)})…`;
}

/**
 * One widget line per running job: id, elapsed, command and last output line, cut to fit `width` columns: the
 * command gets 40% of the room (at least 40), the last line the rest (at least 60). At 100 columns that is the
 * 40/60 split the widget always had; a wider terminal shows more of both.
 */
export function widgetLine(job: ShellJob, last: string, width = 100): string {
	const cutNote = job.logDropped ? `log cut, ${formatSize(job.logDropped)} dropped` : "";
	const flood = job.flooding ? `  ⚠ flooding its log${cutNote ? ` (${cutNote})` : ""}` : cutNote ? `  ⚠ ${cutNote}` : "";
	const orphans = leaderGone(job) ? `  · main process ended, ${job.alive?.length ?? 0} left` : "";
	const head = `⟳ ${job.id}  ${formatDuration(job.runtimeMs)}  `;
	const room = width - head.length - flood.length - orphans.length;
	const commandWidth = Math.max(40, Math.floor(room * 0.4));
	const tailPart = last ? `  › ${cut(last, Math.max(60, room - commandWidth - 4))}` : "";
	return `${head}${cut(job.command, commandWidth)}${orphans}${flood}${tailPart}`;
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
