// The process backend behind Pi's own bash tool definition (`createBashToolDefinition(cwd, {operations})`):
// every command runs as a registry job whose output goes to a log file, and Pi's accumulator is fed from that
// file. Pi keeps doing the text, truncation, temp-file spill, footers and error messages; the job can move to
// the background without being restarted, because it never depended on this call's pipes.
import { closeSync, existsSync, fstatSync, openSync, readSync } from "node:fs";
import type { ShellJob } from "./registry.ts";
import type { SessionJobs } from "./jobs.ts";

/** Pi's `BashOperations.exec` options (structurally; extensions/lib does not import Pi). */
export interface ExecOptions {
	onData: (data: Buffer) => void;
	signal?: AbortSignal;
	timeout?: number;
	env?: NodeJS.ProcessEnv;
}

export interface JobOperations {
	exec(command: string, cwd: string, options: ExecOptions): Promise<{ exitCode: number | null }>;
}

export interface RunPlan {
	/** Start in the background and return at once. */
	background: boolean;
	/** Move a foreground command to the background after this long (interactive and RPC sessions only). */
	autoBackgroundMs?: number;
	/** Pi's shell for this call; may throw Pi's own "Custom shell path not found" error. */
	resolveShell: () => string;
}

/** What happened to the job, for the tool to tell the model. */
export interface RunOutcome {
	started?: ShellJob;
	moved?: ShellJob;
	/** The command returned, but processes it started still run: the job is now a background one. */
	leftRunning?: ShellJob;
}

const PUMP_MS = 40;
const PUMP_CHUNK = 256 * 1024;
const PUMP_TICK_LIMIT = 8 * 1024 * 1024;
/** With the job limit reached, an overdue foreground command looks again this often for a free slot. */
const RECHECK_MS = 5000;

/** Streams a growing log file to `onData` as raw bytes (Pi's accumulator decodes them itself). */
export class LogPump {
	private fd: number | undefined;
	private timer: NodeJS.Timeout | undefined;
	private shiftSeen = 0;
	position: number;

	/**
	 * `cuts`: where the registry cut the log (`logTrimAt`) and how much it removed there in all (`logShift`);
	 * a flood's log is cut under the pump, and the position follows the bytes it pointed at.
	 */
	constructor(
		private readonly path: string,
		start: number,
		private readonly onData: (data: Buffer) => void,
		private readonly cuts?: () => { logTrimAt?: number | null; logShift: number } | undefined,
	) {
		this.position = start;
	}

	/**
	 * Polls until stopped. The timer is deliberately not unref'd: while a foreground command runs, the host
	 * must stay alive even if nothing else holds its event loop (print mode awaits the tool, nothing more).
	 */
	start(): void {
		const tick = () => {
			this.drain(PUMP_TICK_LIMIT);
			this.timer = setTimeout(tick, PUMP_MS);
		};
		tick();
	}

	/**
	 * Feeds what the log holds beyond `position`, at most `limit` bytes (a flood must not stall the event loop).
	 * The log pump may cut the log at any moment: a bounded read is fed only if no cut came between the offsets
	 * it followed and its end, else it is read again from where the cut moved its start (a few times at most).
	 */
	drain(limit = Number.POSITIVE_INFINITY): void {
		for (let tries = 1; ; tries++) {
			const shift = this.follow();
			const from = this.position;
			const read = this.read(limit);
			if (this.cuts === undefined || !Number.isFinite(limit) || tries >= 5 || this.cuts()?.logShift === shift) {
				for (const buf of read) this.onData(buf);
				return;
			}
			this.position = from;
		}
	}

	/** Moves `position` past the cuts made since the last look; returns the shift it followed. */
	private follow(): number {
		const cut = this.cuts?.();
		if (cut && cut.logShift !== this.shiftSeen && cut.logTrimAt !== undefined && cut.logTrimAt !== null) {
			// Past the cut the bytes moved back by what was removed; inside it they are gone (the marker is there).
			if (this.position > cut.logTrimAt) this.position = Math.max(cut.logTrimAt, this.position - (cut.logShift - this.shiftSeen));
			this.shiftSeen = cut.logShift;
		}
		return this.shiftSeen;
	}

	/** What the log holds beyond `position`, at most `limit` bytes, moving `position` past it. */
	private read(limit: number): Buffer[] {
		const out: Buffer[] = [];
		if (this.fd === undefined) {
			try {
				this.fd = openSync(this.path, "r");
			} catch {
				return out;
			}
		}
		try {
			const size = Math.min(fstatSync(this.fd).size, this.position + limit);
			while (this.position < size) {
				const buf = Buffer.allocUnsafe(Math.min(PUMP_CHUNK, size - this.position));
				const n = readSync(this.fd, buf, 0, buf.length, this.position);
				if (n <= 0) break;
				this.position += n;
				// The last (unbounded) drain feeds as it reads: the job has ended, and a log may be large.
				if (Number.isFinite(limit)) out.push(buf.subarray(0, n));
				else this.onData(buf.subarray(0, n));
			}
		} catch {
			// A log deleted under us ends the stream; the exit status still arrives through the registry.
		}
		return out;
	}

	stop(): void {
		clearTimeout(this.timer);
		this.timer = undefined;
		if (this.fd !== undefined) {
			try {
				closeSync(this.fd);
			} catch {
				// Already closed.
			}
			this.fd = undefined;
		}
	}
}

function cleanEnv(env: NodeJS.ProcessEnv | undefined): Record<string, string> | undefined {
	if (!env) return undefined;
	const out: Record<string, string> = {};
	for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
	return out;
}

type Event =
	| { kind: "ended"; job: ShellJob }
	| { kind: "aborted" }
	| { kind: "background" }
	| { kind: "failed"; error: unknown };

export function jobOperations(jobs: SessionJobs, plan: RunPlan, outcome: RunOutcome): JobOperations {
	return {
		async exec(command, cwd, { onData, signal, timeout, env }) {
			// Pi's local backend checks these first, with these words; keep them.
			if (!existsSync(cwd)) throw new Error(`Working directory does not exist: ${cwd}\nCannot execute bash commands.`);
			if (signal?.aborted) throw new Error("aborted");
			const shell = plan.resolveShell();
			const timeoutMs = timeout !== undefined && timeout > 0 ? Math.round(timeout * 1000) : undefined;

			if (plan.background) {
				const refusal = jobs.refusal();
				if (refusal) throw new Error(refusal);
				outcome.started = jobs.spawn({ command, cwd, shell, env: cleanEnv(env), timeoutMs, mode: "bg" });
				return { exitCode: 0 };
			}

			const job = jobs.spawn({ command, cwd, shell, env: cleanEnv(env), timeoutMs, mode: "fg" });
			// Read without the registry's lock, which a cut of a flooding log holds for tens of ms.
			const cuts = jobs.registry.logCuts(job.id);
			const pump = new LogPump(job.logPath, job.logStart, onData, () => cuts.read());
			pump.start();
			const stopWait = new AbortController();
			let settle!: (e: Event) => void;
			const event = new Promise<Event>((r) => (settle = r));
			// Until the command itself returns: what it left running (`cmd &`, a daemon) must not hold the call.
			jobs.registry.wait(job.id, { until: "leader", signal: AbortSignal.any([stopWait.signal, jobs.lifetime]) }).then(
				(r) => settle(r.cancelled ? { kind: "background" } : { kind: "ended", job: r.job }),
				(error) => settle({ kind: "failed", error }),
			);
			const onAbort = () => settle({ kind: "aborted" });
			signal?.addEventListener("abort", onAbort, { once: true });
			let timer: NodeJS.Timeout | undefined;
			const overdue = () => {
				// A full job table keeps the command in the foreground (its timeout still ends it) rather than refusing.
				if (jobs.refusal()) timer = setTimeout(overdue, RECHECK_MS);
				else settle({ kind: "background" });
			};
			if (plan.autoBackgroundMs !== undefined) timer = setTimeout(overdue, plan.autoBackgroundMs);

			try {
				let ev = await event;
				if (ev.kind === "background") {
					// Decided synchronously from here on: no registry callback can run in between, so the job is
					// either finished here (and never announced) or handed to the background (and announced once).
					const now = jobs.registry.get(job.id);
					if (now && now.state !== "running") ev = { kind: "ended", job: now };
					else if (now) {
						pump.drain();
						outcome.moved = jobs.moveToBackground(job.id, pump.position);
						return { exitCode: 0 };
					}
				}
				if (ev.kind === "aborted") {
					await jobs.registry.kill(job.id, { graceMs: 0 });
					pump.drain();
					jobs.finishForeground(job.id);
					throw new Error("aborted");
				}
				if (ev.kind === "failed") throw ev.error;
				pump.drain();
				const ended = ev.kind === "ended" ? (jobs.registry.get(job.id) ?? ev.job) : job;
				if (ended.state === "running" && !ended.timedOut) {
					// Handed over synchronously, as a move is: its ending is announced once, to whoever sees it.
					outcome.leftRunning = jobs.moveToBackground(job.id, pump.position);
					return { exitCode: ended.leaderExitCode ?? null };
				}
				jobs.finishForeground(job.id);
				if (ended.timedOut) throw new Error(`timeout:${timeout}`);
				return { exitCode: ended.exitCode ?? ended.leaderExitCode ?? null };
			} finally {
				clearTimeout(timer);
				signal?.removeEventListener("abort", onAbort);
				stopWait.abort();
				pump.stop();
			}
		},
	};
}
