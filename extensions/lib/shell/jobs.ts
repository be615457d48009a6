// One Pi session's jobs as the tools see them: which jobs a foreground call still owns, the job limit, status
// and kill reports, and the rule that each ending is announced exactly once — by the tool that reported it
// (shell_status after a wait, shell_kill) or else by one follow-up message. No Pi import: the extension passes
// a small host for delivery and the widget.
import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import type { ShellSettings } from "../settings.ts";
import {
	DEFAULT_MAX_BYTES,
	DEFAULT_MAX_LINES,
	describeState,
	ALL_TOOLS,
	followHint,
	followUpText,
	formatDuration,
	formatSize,
	jobHeading,
	jobRows,
	jobTable,
	killLine,
	lastLine,
	parseMeta,
	refusalText,
	sanitizeOutput,
	stoppingText,
	trimmedNote,
	truncateTail,
	type JobRow,
	type ToolsOn,
} from "./format.ts";
import { logPathFor, type ShellRegistry, type ShellJob, type ShellKillReport, type ShellLogChunk } from "./registry.ts";

export interface JobsHost {
	/** False where a message could no longer reach the model (print mode after its last turn). */
	canDeliver(how: "followUp" | "nextTurn"): boolean;
	/**
	 * `followUp`: the model is told now (a turn starts when idle); `nextTurn`: attached to the next prompt;
	 * `notice`: put in the conversation now, in order with the follow-ups (after the running turn's work when
	 * one runs), without starting a turn of its own.
	 */
	deliver(job: ShellJob, text: string, how: Delivery): void;
	/** The set of running jobs or their output changed (widget refresh). */
	changed(): void;
	/** Which job tools the model has (hints name only those). Default: both. */
	tools?: ToolsOn;
	/**
	 * Something the registry could not do that the user should know (a sidecar it could not load or
	 * write, e.g. its lock held by another Pi process): each distinct text once per SessionJobs.
	 */
	problem?(text: string): void;
}

export type Delivery = "followUp" | "nextTurn" | "notice";

export interface SpawnRequest {
	command: string;
	cwd: string;
	shell: string;
	env?: Record<string, string>;
	timeoutMs?: number;
	mode: "fg" | "bg";
}

export interface StatusRequest {
	id: string;
	/** Last N lines instead of the output since the last read. */
	lines?: number;
	/** Seconds to wait for the job to end (clamped to 0..300). */
	wait?: number;
	signal?: AbortSignal;
}

export const MAX_WAIT_SEC = 300;
const FOLLOW_UP_LINES = 20;
const FOLLOW_UP_BYTES = 8 * 1024;
/** Enough to fill the 50KB/2000-line window after sanitizing; the rest is only counted and spilled. */
const READ_WINDOW = 1024 * 1024;

export class SessionJobs {
	/** Jobs a foreground bash call still owns: invisible to the model, never announced. */
	private readonly owned = new Set<string>();
	/** Jobs whose ending a tool call is reporting right now: no follow-up for them. */
	private readonly quiet = new Set<string>();
	private readonly lifetimeController = new AbortController();
	/** Problems already told to the host. */
	private readonly told = new Set<string>();
	active = true;

	constructor(
		readonly registry: ShellRegistry,
		readonly dir: string,
		private readonly settings: () => ShellSettings,
		private readonly host: JobsHost,
	) {}

	/**
	 * Tells the host each registry problem it has not told yet. The registry records a sidecar write that
	 * failed (another process held its lock too long) in `problems()` whenever it happens, not only at
	 * open; this runs after every operation that writes, and after each ending the monitor wrote.
	 */
	reportProblems(): void {
		if (!this.active || !this.host.problem) return;
		let problems: string[];
		try {
			problems = this.registry.problems();
		} catch {
			return;
		}
		for (const p of problems) {
			if (this.told.has(p)) continue;
			this.told.add(p);
			this.host.problem(p);
		}
	}

	/** Aborted when this extension instance shuts down: every wait it started resolves. */
	get lifetime(): AbortSignal {
		return this.lifetimeController.signal;
	}

	get tools(): ToolsOn {
		return this.host.tools ?? ALL_TOOLS;
	}

	// ------------------------------------------------------------ jobs and the limit

	/** Jobs the model can see: all but those a foreground call still owns. */
	visible(): ShellJob[] {
		return this.registry.list().filter((j) => !this.owned.has(j.id));
	}

	running(): ShellJob[] {
		return this.visible().filter((j) => j.state === "running");
	}

	/** The refusal text when no background job may start now, else undefined. */
	refusal(): string | undefined {
		const running = this.running();
		const max = this.settings().maxBackgroundJobs;
		return running.length >= max ? refusalText(running, max, this.tools) : undefined;
	}

	spawn(req: SpawnRequest): ShellJob {
		const id = this.registry.nextId();
		const job = this.registry.spawn({
			command: req.command,
			cwd: req.cwd,
			shell: req.shell,
			logPath: logPathFor(this.dir, id),
			id,
			...(req.env ? { env: req.env } : {}),
			...(req.timeoutMs ? { timeoutMs: req.timeoutMs } : {}),
			meta: JSON.stringify({ mode: req.mode }),
			maxLogBytes: this.settings().maxLogBytes,
		});
		if (req.mode === "fg") this.owned.add(job.id);
		else {
			this.registry.retireId(job.id);
			this.host.changed();
		}
		this.reportProblems();
		return job;
	}

	/** A foreground job became a background one; the model has seen its output up to `seenUpTo`. */
	moveToBackground(id: string, seenUpTo: number): ShellJob {
		this.registry.setReadOffset(id, seenUpTo);
		const job = this.registry.setMeta(id, JSON.stringify({ mode: "bg", auto: true }));
		this.owned.delete(id);
		this.registry.retireId(id);
		this.host.changed();
		this.reportProblems();
		return job;
	}

	/** A foreground call is done with its job (reported by Pi's bash text): forget it and its log. */
	finishForeground(id: string): void {
		try {
			this.registry.remove(id, { deleteFiles: true });
		} catch {
			// Still running (an aborted call whose kill did not finish) or already gone: keep it visible then.
		}
		this.owned.delete(id);
	}

	// ------------------------------------------------------------ endings and delivery

	/** The registry saw `job` leave `running`. */
	onEnded(job: ShellJob): void {
		if (!this.active) return;
		this.host.changed();
		this.announce(job.id, "followUp");
		this.reportProblems();
	}

	/**
	 * Jobs that ended while nobody was listening: during a /reload hand-over (told now), or before this Pi
	 * process started (attached to the next prompt, so a resumed session does not start a turn on its own).
	 */
	announcePending(how: "followUp" | "nextTurn"): void {
		for (const job of this.visible()) if (job.state !== "running" && !job.delivered) this.announce(job.id, how);
	}

	private announce(id: string, how: "followUp" | "nextTurn"): void {
		if (!this.active || this.owned.has(id) || this.quiet.has(id)) return;
		const job = this.registry.get(id);
		// A job still marked foreground but not owned here lost its bash call to a /reload or a crash: nobody
		// else will report it, so it is announced like a background job.
		if (!job || job.state === "running" || job.delivered) return;
		if (!this.host.canDeliver(how)) return;
		if (!this.registry.claimDelivery(id)) return;
		const tail = this.registry.tail(id, { lines: FOLLOW_UP_LINES, maxBytes: FOLLOW_UP_BYTES });
		this.host.deliver(job, followUpText(job, tail.text), how);
	}

	// ------------------------------------------------------------ shell_status

	/** The no-id answer: one row per visible job (`rows` for a renderer that fits them to its width). */
	table(): { text: string; rows: JobRow[] } {
		const jobs = this.visible();
		const rows = jobRows(jobs, new Map(jobs.map((j) => [j.id, this.lastLineOf(j)])));
		return { text: jobTable(rows), rows };
	}

	lastLineOf(job: ShellJob): string {
		try {
			return lastLine(this.registry.tail(job.id, { lines: 3, maxBytes: 4096 }).text);
		} catch {
			return "";
		}
	}

	find(id: string): ShellJob {
		const job = this.registry.get(id);
		if (!job || this.owned.has(id)) {
			const known = this.visible().map((j) => j.id);
			throw new Error(`Unknown job: ${id}. ${known.length ? `Jobs in this session: ${known.join(", ")}.` : "This session has no background jobs."}`);
		}
		return job;
	}

	async status(req: StatusRequest): Promise<{ text: string; details: StatusDetails }> {
		let job = this.find(req.id);
		const waitSec = Math.min(MAX_WAIT_SEC, Math.max(0, req.wait ?? 0));
		let waitNote = "";
		if (waitSec > 0 && job.state === "running") {
			this.quiet.add(job.id);
			// The tool call is waiting on this: keep the host alive for it whatever the addon's promise does.
			const keepAlive = setInterval(() => {}, 1000);
			try {
				const signal = req.signal ? AbortSignal.any([req.signal, this.lifetime]) : this.lifetime;
				const r = await this.registry.wait(job.id, { timeoutMs: waitSec * 1000, signal });
				job = r.job;
				if (r.timedOut) waitNote = `Still running after waiting ${formatDuration(waitSec * 1000)}.`;
				if (r.cancelled) waitNote = "The wait was cancelled.";
			} finally {
				clearInterval(keepAlive);
				this.quiet.delete(job.id);
			}
			job = this.registry.get(job.id) ?? job;
		}
		// Whoever shows the final state has told the model: no follow-up message repeats it.
		if (job.state !== "running") this.registry.claimDelivery(job.id);

		const lines = req.lines !== undefined ? Math.max(1, Math.floor(req.lines)) : undefined;
		const shown = lines !== undefined
			? await this.capped(job, this.registry.tail(job.id, { lines, maxBytes: READ_WINDOW }), "tail")
			: await this.capped(job, this.registry.readNew(job.id, { maxBytes: READ_WINDOW, keep: "tail" }), "new");
		const parts = [jobHeading(job)];
		if (waitNote) parts.push(waitNote);
		const trimmed = trimmedNote(job);
		if (trimmed) parts.push(trimmed);
		parts.push(shown.text);
		const hint = followHint(job.id, this.tools);
		if (job.state === "running" && hint) parts.push(hint);
		parts.push(`Log: ${job.logPath}`);
		this.host.changed();
		this.reportProblems();
		return {
			text: parts.join("\n\n"),
			details: { id: job.id, state: job.state, exitCode: job.exitCode, signal: job.signal, runtimeMs: job.runtimeMs, ...shown.details },
		};
	}

	/** Cuts a log chunk like bash output (last 2000 lines / 50KB); the whole range goes to a temp file when cut. */
	private async capped(job: ShellJob, chunk: ShellLogChunk, mode: "new" | "tail"): Promise<{ text: string; details: Partial<StatusDetails> }> {
		const label = mode === "new" ? "Output since the last read:" : "Last lines of output:";
		const text = sanitizeOutput(chunk.text).replace(/\n$/, "");
		// For a read since the cursor, `skipped` is new output passed over; for a tail it is the older log.
		const rangeStart = mode === "new" ? chunk.start - chunk.skipped : chunk.start;
		if (!text) return { text: mode === "new" ? "(no new output since the last read)" : "(no output)", details: {} };
		const t = truncateTail(text, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
		if (!t.truncated && rangeStart === chunk.start) return { text: `${label}\n${t.content}`, details: {} };
		const fullOutputPath = (await spillRange(job.logPath, rangeStart, chunk.end)) ?? job.logPath;
		const shown = t.lastLinePartial ? `the last ${formatSize(t.outputBytes)} of a long line` : `the last ${t.outputLines} lines (${formatSize(t.outputBytes)})`;
		const footer = `[Showing ${shown} of ${formatSize(chunk.end - rangeStart)}. Full output: ${fullOutputPath}]`;
		return { text: `${label}\n${t.content}\n\n${footer}`, details: { truncated: true, fullOutputPath } };
	}

	// ------------------------------------------------------------ shell_kill and /shell-bg

	/**
	 * Kills one job or `all` running ones; `by` decides who gets told. A job still alive after `slowMs` (it
	 * ignores SIGTERM) makes `onSlow` hear at once what the kill now waits for, instead of a silent grace.
	 */
	async kill(target: string, by: "model" | "user", o: SlowKill = {}): Promise<{ text: string; reports: ShellKillReport[] }> {
		const graceMs = this.settings().killGraceMs;
		const ids = target === "all" ? this.running().map((j) => j.id) : [this.find(target).id];
		if (ids.length === 0) return { text: "No running background jobs.", reports: [] };
		const reports = await untilSlow(ids, graceMs, o, async (id) => {
			this.quiet.add(id);
			try {
				return await this.registry.kill(id, { graceMs });
			} finally {
				this.quiet.delete(id);
			}
		});
		for (const r of reports) {
			if (r.outcome === "already-ended" && !r.job.delivered) continue; // its own ending is still news
			if (!this.registry.claimDelivery(r.job.id)) continue;
			// The model may be waiting on a job the user stopped: it learns so in order with the other endings
			// (a notice queued for the next prompt would come after a later job's follow-up, or only with the
			// user's next prompt), without a turn of its own.
			if (by === "user" && this.active) this.host.deliver(r.job, `The user stopped background job ${r.job.id} (${r.job.command}): it ${describeState(r.job)}.`, "notice");
		}
		for (const r of reports) if (r.outcome === "already-ended") this.announce(r.job.id, "followUp");
		this.host.changed();
		this.reportProblems();
		return { text: reports.map((r) => killLine(r, graceMs)).join("\n"), reports };
	}

	/** Forgets finished jobs and deletes their logs; returns their ids. */
	clear(): string[] {
		const gone: string[] = [];
		for (const job of this.visible()) {
			if (job.state === "running") continue;
			try {
				this.registry.claimDelivery(job.id);
				this.registry.remove(job.id, { deleteFiles: true });
				gone.push(job.id);
			} catch {
				// A lost child still being reaped stays listed.
			}
		}
		this.reportProblems();
		return gone;
	}

	logs(id: string, lines = 40): string {
		const job = this.find(id);
		const tail = this.registry.tail(job.id, { lines, maxBytes: 16 * 1024 });
		const body = sanitizeOutput(tail.text).replace(/\n$/, "") || "(no output)";
		return `${jobHeading(job)}\n${body}\nLog: ${job.logPath}`;
	}

	// ------------------------------------------------------------ end of this instance

	/** Stops listening: no delivery, no widget, every wait of this instance resolves. Jobs keep running. */
	detach(): void {
		this.active = false;
		this.lifetimeController.abort();
		try {
			this.registry.unwatch();
		} catch {
			// Nothing to drop.
		}
	}

	/**
	 * Quit: stop every running job of this session (announced to nobody). A job that has not stopped after
	 * `slowMs` (it ignores SIGTERM, or cleans up slowly) makes Pi wait up to the grace: `onSlow` is told
	 * once which jobs it waits for, so the wait is not silent.
	 */
	async killAll(o: SlowKill = {}): Promise<void> {
		const running = this.registry.list().filter((j) => j.state === "running");
		const graceMs = this.settings().killGraceMs;
		await untilSlow(
			running.map((j) => j.id),
			graceMs,
			o,
			async (id) => {
				try {
					const j = this.registry.get(id);
					if (j) this.registry.setMeta(id, JSON.stringify({ ...parseMeta(j.meta), stoppedAtQuit: true }));
					await this.registry.kill(id, { graceMs });
				} catch {
					// Already gone.
				}
			},
		);
	}

	/**
	 * Removes the job directory when nothing in it can matter later: no job at all, or an in-memory session
	 * (it can never be resumed) with nothing left running.
	 */
	tidy(inMemorySession: boolean): void {
		const jobs = this.registry.list();
		const removable = jobs.length === 0 || (inMemorySession && jobs.every((j) => j.state !== "running"));
		if (!removable) return;
		try {
			rmSync(this.dir, { recursive: true, force: true });
		} catch {
			// Best effort.
		}
	}
}

/** Who hears that a kill waits out its grace, and after how long it counts as slow (default 250 ms). */
export interface SlowKill {
	onSlow?: (text: string) => void;
	slowMs?: number;
}

/** Runs `kill` on every id at once; `onSlow` is told once which of them are still stopping after `slowMs`. */
async function untilSlow<T>(ids: string[], graceMs: number, o: SlowKill, kill: (id: string) => Promise<T>): Promise<T[]> {
	const pending = new Set(ids);
	const slow = o.onSlow && ids.length
		? setTimeout(() => {
				if (pending.size) o.onSlow!(stoppingText([...pending], graceMs));
			}, o.slowMs ?? 250)
		: undefined;
	try {
		return await Promise.all(
			ids.map(async (id) => {
				try {
					return await kill(id);
				} finally {
					pending.delete(id);
				}
			}),
		);
	} finally {
		clearTimeout(slow);
	}
}

export interface StatusDetails {
	id: string;
	state: ShellJob["state"];
	exitCode?: number;
	signal?: string;
	runtimeMs: number;
	truncated?: boolean;
	fullOutputPath?: string;
}

/** Copies `[start, end)` of a log into a fresh temp file, as Pi's bash spills long output. */
async function spillRange(logPath: string, start: number, end: number): Promise<string | undefined> {
	const path = join(tmpdir(), `pi-shell-${randomBytes(8).toString("hex")}.log`);
	try {
		await pipeline(createReadStream(logPath, { start, end: Math.max(start, end - 1) }), createWriteStream(path));
		return path;
	} catch {
		return undefined;
	}
}
