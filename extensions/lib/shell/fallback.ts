// The job registry without the native addon: plain Node child processes, same API as the native
// ShellRegistry. What it cannot do, and says so through `problems()`: reconcile after a restart (nothing is
// persisted, jobs live as long as this Pi process), verify a process's identity before signalling it, or find
// descendants that left the job's process group.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, statSync, unlinkSync } from "node:fs";
import { constants } from "node:os";
import { dirname, resolve } from "node:path";
import type {
	ShellJob,
	ShellKillReport,
	ShellLogChunk,
	ShellReadOptions,
	ShellRemoveOptions,
	ShellSpawnOptions,
	ShellTailOptions,
	ShellWaitOptions,
	ShellWaitResult,
} from "../../../index.js";
import { codedError } from "../errors.mjs";
import { SHELL_CORE } from "../defaults.mjs";

// The defaults the core has too: their one owner is src/shell/defaults.json, which the core compiles in. This
// registry runs exactly when the addon cannot load, so it takes them as data (read once, in defaults.mjs)
// instead of asking the core.
const DEFAULT_GRACE_MS = SHELL_CORE.killGraceMs;
const DEFAULT_READ = SHELL_CORE.readBytes;

/** `bg-7` -> 7; any other id has no number (0). */
const idNumber = (id: string): number => Number(/^bg-(\d+)$/.exec(id)?.[1] ?? 0);

interface Entry {
	job: ShellJob;
	child?: ChildProcess;
	waiters: Set<() => void>;
	timer?: NodeJS.Timeout;
	sentSignal?: string;
}

function signalNumber(name: string | undefined): number {
	return (name && (constants.signals as Record<string, number>)[name]) || 0;
}

/** Reads `[from, to)` of a file; skips UTF-8 continuation bytes at the start, holds back a cut character at the end. */
function readRange(path: string, from: number, to: number, holdBack: boolean): { text: string; start: number; end: number } {
	if (to <= from) return { text: "", start: from, end: from };
	let fd: number;
	try {
		fd = openSync(path, "r");
	} catch {
		return { text: "", start: from, end: from };
	}
	try {
		const buf = Buffer.alloc(to - from);
		const n = readSync(fd, buf, 0, buf.length, from);
		let s = 0;
		while (s < n && (buf[s] & 0xc0) === 0x80) s++;
		let e = n;
		if (holdBack) {
			// Keep an incomplete trailing UTF-8 sequence for the next read.
			let k = e - 1;
			while (k >= s && (buf[k] & 0xc0) === 0x80) k--;
			if (k >= s) {
				const lead = buf[k];
				const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
				if (e - k < need) e = k;
			}
		}
		return { text: buf.subarray(s, e).toString("utf8"), start: from + s, end: from + e };
	} finally {
		closeSync(fd);
	}
}

function fileSize(path: string): number {
	try {
		return statSync(path).size;
	} catch {
		return 0;
	}
}

class FallbackRegistry {
	readonly sidecarPath: string;
	fromMemory = false;
	private readonly entries = new Map<string, Entry>();
	/** Ids up to `bg-<retired>` are not handed out again (in memory: nothing here is persisted). */
	private retired = 0;
	private listener: ((job: ShellJob) => void) | undefined;

	constructor(sidecarPath: string) {
		this.sidecarPath = sidecarPath;
	}

	problems(): string[] {
		return [];
	}

	/** The core's rule (src/shell/start.rs `next_id`): one past the highest job id and retired id. */
	nextId(): string {
		return `bg-${Math.max(this.retired, ...[...this.entries.keys()].map(idNumber)) + 1}`;
	}

	retireId(id: string): void {
		this.retired = Math.max(this.retired, idNumber(id));
	}

	spawn(o: ShellSpawnOptions): ShellJob {
		if (!o.command) throw codedError("INVALID_OPTION", "Command must not be empty");
		const cwd = resolve(o.cwd);
		if (!existsSync(cwd)) throw codedError("PATH_NOT_FOUND", `Working directory not found: ${cwd}`);
		if (!statSync(cwd).isDirectory()) throw codedError("NOT_A_FILE", `Working directory is not a directory: ${cwd}`);
		const id = o.id ?? this.nextId();
		if (this.entries.has(id)) throw codedError("JOB_EXISTS", `A job with id ${id} already exists`);
		try {
			mkdirSync(dirname(o.logPath), { recursive: true });
		} catch (e) {
			throw codedError("IO", `Cannot create log directory ${dirname(o.logPath)}: ${(e as Error).message}`);
		}
		let fd: number;
		try {
			fd = openSync(o.logPath, "a");
		} catch (e) {
			throw codedError("IO", `Cannot open log file ${o.logPath}: ${(e as Error).message}`);
		}
		const logStart = fstatSync(fd).size;
		const env = { ...(o.env ?? (process.env as Record<string, string>)), PI_UTILS_JOB: id };
		let child: ChildProcess;
		try {
			// The log fd is inherited, so output goes straight to the file and survives this process's event loop.
			child = spawn(o.shell ?? "/bin/bash", ["-c", o.command], { cwd, env, detached: process.platform !== "win32", stdio: ["ignore", fd, fd] });
		} finally {
			closeSync(fd);
		}
		child.unref();
		const job: ShellJob = {
			id,
			command: o.command,
			cwd,
			shell: o.shell ?? "/bin/bash",
			logPath: o.logPath,
			exitPath: `${o.logPath}.exit`,
			pid: child.pid ?? 0,
			pgid: child.pid ?? 0,
			state: "running",
			startedAtMs: Date.now(),
			runtimeMs: 0,
			logBytes: logStart,
			logStart,
			readOffset: logStart,
			delivered: false,
			adopted: false,
			killRequested: false,
			timedOut: false,
			// Only the group is known here: what leaves it is neither tracked nor killed.
			tracking: "process-group",
			alive: [],
			// No trimming here: the log grows as the job writes.
			maxLogBytes: o.maxLogBytes ?? Number.MAX_SAFE_INTEGER,
			logDropped: 0,
			logShift: 0,
			flooding: false,
			...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
			...(o.meta !== undefined ? { meta: o.meta } : {}),
		};
		const entry: Entry = { job, child, waiters: new Set() };
		this.entries.set(id, entry);
		const spawnError = new Promise<void>((r) => child.once("error", () => r()));
		child.once("exit", (code, signal) => this.ended(entry, code, signal));
		void spawnError.then(() => this.ended(entry, 127, null));
		if (o.timeoutMs) {
			entry.timer = setTimeout(() => {
				job.timedOut = true;
				void this.kill(id, { graceMs: DEFAULT_GRACE_MS });
			}, o.timeoutMs);
			entry.timer.unref();
		}
		return this.view(entry);
	}

	private ended(entry: Entry, code: number | null, signal: NodeJS.Signals | null): void {
		const job = entry.job;
		if (job.state !== "running") return;
		clearTimeout(entry.timer);
		job.endedAtMs = Date.now();
		job.runtimeMs = job.endedAtMs - job.startedAtMs;
		if (signal) {
			job.state = "signalled";
			job.signal = signal;
			job.exitCode = 128 + signalNumber(signal);
		} else {
			job.state = "exited";
			job.exitCode = code ?? undefined;
		}
		job.logBytes = fileSize(job.logPath);
		entry.child = undefined;
		for (const w of entry.waiters) w();
		entry.waiters.clear();
		try {
			this.listener?.(this.view(entry));
		} catch {
			// As the native registry: a throwing listener must not take the host down.
		}
	}

	private view(entry: Entry): ShellJob {
		const job = entry.job;
		if (job.state === "running") {
			job.runtimeMs = Date.now() - job.startedAtMs;
			job.logBytes = fileSize(job.logPath);
		}
		return { ...job };
	}

	private entry(id: string): Entry {
		const e = this.entries.get(id);
		if (!e) throw codedError("UNKNOWN_JOB", `Unknown job: ${id}`);
		return e;
	}

	get(id: string): ShellJob | null {
		const e = this.entries.get(id);
		return e ? this.view(e) : null;
	}

	list(): ShellJob[] {
		return [...this.entries.values()].map((e) => this.view(e));
	}

	/** A fallback log is never cut. */
	logCuts(id: string): { read(): { logTrimAt?: number; logShift: number } } {
		this.entry(id);
		return { read: () => ({ logShift: 0 }) };
	}

	wait(id: string, o?: ShellWaitOptions | null): Promise<ShellWaitResult> {
		const entry = this.entry(id);
		if (o?.signal?.aborted) throw codedError("CANCELLED", "AbortError: The operation was aborted");
		return new Promise((done) => {
			if (entry.job.state !== "running") return done({ job: this.view(entry), timedOut: false, cancelled: false });
			let timer: NodeJS.Timeout | undefined;
			const finish = (timedOut: boolean, cancelled: boolean) => {
				clearTimeout(timer);
				entry.waiters.delete(onEnd);
				o?.signal?.removeEventListener("abort", onAbort);
				done({ job: this.view(entry), timedOut, cancelled });
			};
			const onEnd = () => finish(false, false);
			const onAbort = () => finish(false, true);
			entry.waiters.add(onEnd);
			o?.signal?.addEventListener("abort", onAbort, { once: true });
			if (o?.timeoutMs !== undefined && o.timeoutMs !== null) timer = setTimeout(() => finish(true, false), o.timeoutMs);
		});
	}

	private signalGroup(entry: Entry, signal: NodeJS.Signals): boolean {
		const pid = entry.job.pid;
		if (pid <= 1) return false;
		try {
			process.kill(process.platform === "win32" ? pid : -pid, signal);
			return true;
		} catch {
			return false;
		}
	}

	async kill(id: string, o?: { graceMs?: number } | null): Promise<ShellKillReport> {
		const entry = this.entry(id);
		const grace = o?.graceMs ?? DEFAULT_GRACE_MS;
		const report = (outcome: ShellKillReport["outcome"], sentTerm: boolean, sentKill: boolean): ShellKillReport => ({
			outcome,
			sentTerm,
			sentKill,
			escapees: [],
			survivors: [],
			orphanSweep: false,
			job: this.view(entry),
		});
		if (entry.job.state !== "running") return report("already-ended", false, false);
		entry.job.killRequested = true;
		const sentTerm = this.signalGroup(entry, "SIGTERM");
		const ended = await this.wait(id, { timeoutMs: grace });
		let sentKill = false;
		if (ended.timedOut) {
			sentKill = this.signalGroup(entry, "SIGKILL");
			await this.wait(id, { timeoutMs: 2000 });
		} else {
			// The leader is gone; members of its group may not be.
			this.signalGroup(entry, "SIGKILL");
		}
		return report("killed", sentTerm, sentKill);
	}

	tail(id: string, o?: ShellTailOptions | null): ShellLogChunk {
		const job = this.entry(id).job;
		const size = fileSize(job.logPath);
		const maxBytes = o?.maxBytes ?? DEFAULT_READ;
		const from = Math.max(job.logStart, size - maxBytes);
		const r = readRange(job.logPath, from, size, job.state === "running");
		let text = r.text;
		let start = r.start;
		if (o?.lines !== undefined) {
			const lines = text.split("\n");
			const trailing = text.endsWith("\n") ? 1 : 0;
			const keep = o.lines + trailing;
			if (lines.length > keep) {
				const dropped = lines.slice(0, lines.length - keep).join("\n") + "\n";
				start += Buffer.byteLength(dropped, "utf8");
				text = lines.slice(lines.length - keep).join("\n");
			}
		}
		return { text, start, end: r.end, size, skipped: start - job.logStart, remaining: size - r.end };
	}

	readNew(id: string, o?: ShellReadOptions | null): ShellLogChunk {
		const job = this.entry(id).job;
		const size = fileSize(job.logPath);
		const maxBytes = o?.maxBytes ?? DEFAULT_READ;
		const from = job.readOffset;
		const available = Math.max(0, size - from);
		const head = o?.keep === "head";
		const start = available > maxBytes && !head ? size - maxBytes : from;
		const end = available > maxBytes && head ? from + maxBytes : size;
		const r = readRange(job.logPath, start, end, job.state === "running" || head);
		job.readOffset = r.end;
		return { text: r.text, start: r.start, end: r.end, size, skipped: r.start - from, remaining: size - r.end };
	}

	setReadOffset(id: string, offset: number): void {
		this.entry(id).job.readOffset = offset;
	}

	claimDelivery(id: string): boolean {
		const job = this.entry(id).job;
		if (job.delivered) return false;
		job.delivered = true;
		return true;
	}

	setMeta(id: string, meta?: string | null): ShellJob {
		const entry = this.entry(id);
		if (meta === undefined || meta === null) delete entry.job.meta;
		else entry.job.meta = meta;
		return this.view(entry);
	}

	remove(id: string, o?: ShellRemoveOptions | null): void {
		const entry = this.entry(id);
		if (entry.job.state === "running") throw codedError("JOB_RUNNING", `Job ${id} is still running`);
		this.entries.delete(id);
		if (o?.deleteFiles) {
			for (const p of [entry.job.logPath, entry.job.exitPath]) {
				try {
					unlinkSync(p);
				} catch {
					// Already gone.
				}
			}
		}
	}

	watch(callback: (job: ShellJob) => void): void {
		this.listener = callback;
	}

	unwatch(): void {
		this.listener = undefined;
	}
}

// Survives /reload (modules are re-evaluated; globalThis is not), like the native registry's own cache.
const CACHE = Symbol.for("pi-utils.shell-fallback");

function cache(): Map<string, FallbackRegistry> {
	const store = globalThis as unknown as Record<symbol, Map<string, FallbackRegistry> | undefined>;
	return (store[CACHE] ??= new Map());
}

/** Whether this process already runs a fallback registry for this sidecar path (it writes no file). */
export function fallbackRegistryOpen(sidecarPath: string): boolean {
	return cache().has(resolve(sidecarPath));
}

export function openFallbackRegistry(sidecarPath: string): FallbackRegistry {
	const registries = cache();
	const key = resolve(sidecarPath);
	const found = registries.get(key);
	if (found) {
		found.fromMemory = true;
		return found;
	}
	const created = new FallbackRegistry(key);
	registries.set(key, created);
	return created;
}
