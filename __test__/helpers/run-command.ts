// Child processes in specs: runs a command to its exit with a hard timeout, in its own process group so the
// timeout (or the end of the run) also kills whatever it started (npm's script shells, cargo, rustc), and
// tells whether a process is still running; the polling and group-kill helpers the process specs share.
import { spawn } from "node:child_process";
import fs from "node:fs";

export interface CommandResult {
	code: number | null;
	signal: NodeJS.Signals | null;
	timedOut: boolean;
	stdout: string;
	stderr: string;
	ms: number;
}

export interface CommandOptions {
	cwd: string;
	/** The whole environment of the child (not merged with process.env). */
	env: NodeJS.ProcessEnv;
	timeoutMs: number;
}

/** Kills the process group `pid` leads (a child spawned with `detached: true`) and everything in it. */
export function killGroup(pid: number | undefined): void {
	if (!pid || pid <= 1) return;
	try {
		process.kill(-pid, "SIGKILL");
	} catch {
		// Already gone.
	}
}

/** Cleanup for specs that started jobs: every group whose leader's pid they saw. */
export function killGroups(pids: Iterable<number>): void {
	for (const pid of pids) killGroup(pid);
}

/** Polls `check` every 10 ms until it holds; throws after `ms` naming what it waited for. */
export async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
	const end = Date.now() + ms;
	while (!check()) {
		if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 10));
	}
}

export async function runCommand(command: string, args: string[], o: CommandOptions): Promise<CommandResult> {
	const started = Date.now();
	const child = spawn(command, args, { cwd: o.cwd, env: o.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
	let stdout = "";
	let stderr = "";
	child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
	child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
	let timedOut = false;
	const timer = setTimeout(() => {
		timedOut = true;
		killGroup(child.pid);
	}, o.timeoutMs);
	try {
		const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
			child.once("error", reject);
			child.once("close", (c, s) => resolve([c, s]));
		});
		return { code, signal, timedOut, stdout, stderr, ms: Date.now() - started };
	} finally {
		clearTimeout(timer);
		killGroup(child.pid);
	}
}

/** Whether process `pid` is running: it exists and is not a zombie waiting to be reaped (Linux `/proc`). */
export function alive(pid: number): boolean {
	try {
		const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
		return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
	} catch {
		return false;
	}
}

/** For assertion messages: the command's exit and the tail of its output. */
export function describeRun(r: CommandResult): string {
	const tail = (s: string) => s.slice(-4000);
	return `exit ${r.code}${r.signal ? ` (${r.signal})` : ""}${r.timedOut ? " TIMED OUT" : ""} after ${r.ms} ms\n` +
		`--- stdout ---\n${tail(r.stdout)}\n--- stderr ---\n${tail(r.stderr)}`;
}
