// The real Pi CLI as a long-running child (RPC mode, print mode, a session kept on disk between two runs):
// unlike pi-cli.ts's runPi, the caller owns the agent directory and the arguments, can write to stdin and
// can wait for particular output lines. Every run has a hard timeout and ends by killing its process group.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fakeModelsJson, packageRoot, type PiHost } from "./pi-cli.ts";
import { killGroup } from "./run-command.ts";

export interface PiProcessOptions {
	host: PiHost;
	/** Agent directory (models.json for the fake server is written into it). */
	agentDir: string;
	baseUrl: string;
	cwd: string;
	/** Arguments after `--model fake/fake-model -e <package>`. */
	args: string[];
	env?: Record<string, string | undefined>;
	/** Hard limit; the process group is killed after it. Default 30 s. */
	timeoutMs?: number;
}

export interface PiExit {
	code: number | null;
	signal: NodeJS.Signals | null;
	timedOut: boolean;
	/** Milliseconds from spawn to exit. */
	ms: number;
}

export interface PiProcess {
	child: ChildProcess;
	stdoutLines: string[];
	stderr(): string;
	/** stdout lines that parse as JSON objects. */
	events(): Array<Record<string, unknown>>;
	send(message: unknown): void;
	closeStdin(): void;
	/** Resolves with the first JSON event matching `match`; fails after `ms`. */
	waitForEvent(what: string, match: (e: Record<string, unknown>) => boolean, ms?: number): Promise<Record<string, unknown>>;
	exited: Promise<PiExit>;
	/** SIGKILL to the whole process group (idempotent). */
	kill(): void;
}

function parse(line: string): Record<string, unknown> | undefined {
	if (!line.startsWith("{")) return undefined;
	try {
		return JSON.parse(line) as Record<string, unknown>;
	} catch {
		return undefined;
	}
}

export function startPi(o: PiProcessOptions): PiProcess {
	fs.writeFileSync(path.join(o.agentDir, "models.json"), fakeModelsJson(o.baseUrl));
	const env: NodeJS.ProcessEnv = {
		...process.env,
		PI_CODING_AGENT_DIR: o.agentDir,
		PI_OFFLINE: "1",
		PI_TELEMETRY: "0",
		PI_SKIP_VERSION_CHECK: "1",
		...o.env,
	};
	for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
	const started = Date.now();
	const child = spawn(o.host.node, [o.host.cli, "--model", "fake/fake-model", "-e", packageRoot, ...o.args], {
		cwd: o.cwd,
		env,
		detached: true,
		stdio: ["pipe", "pipe", "pipe"],
	});
	const stdoutLines: string[] = [];
	let partial = "";
	let stderr = "";
	const listeners = new Set<() => void>();
	child.stdout!.on("data", (d: Buffer) => {
		partial += d.toString();
		const parts = partial.split("\n");
		partial = parts.pop()!;
		stdoutLines.push(...parts);
		for (const l of listeners) l();
	});
	child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
	child.stdin!.on("error", () => {});
	const killChildGroup = () => killGroup(child.pid);
	let timedOut = false;
	const timer = setTimeout(() => {
		timedOut = true;
		killChildGroup();
	}, o.timeoutMs ?? 30_000);
	const exited = new Promise<PiExit>((resolve) => {
		child.once("close", (code, signal) => {
			clearTimeout(timer);
			if (partial) stdoutLines.push(partial);
			resolve({ code, signal, timedOut, ms: Date.now() - started });
		});
	});
	const events = () => stdoutLines.map(parse).filter((e): e is Record<string, unknown> => e !== undefined);
	return {
		child,
		stdoutLines,
		stderr: () => stderr,
		events,
		send: (message) => child.stdin!.write(`${JSON.stringify(message)}\n`),
		closeStdin: () => child.stdin!.end(),
		waitForEvent: (what, match, ms = 15_000) =>
			new Promise((resolve, reject) => {
				const check = () => {
					const hit = events().find(match);
					if (!hit) return false;
					cleanup();
					resolve(hit);
					return true;
				};
				const fail = setTimeout(() => {
					cleanup();
					reject(new Error(`timed out waiting for ${what}; stderr: ${stderr.slice(-2000)}`));
				}, ms);
				const cleanup = () => {
					clearTimeout(fail);
					listeners.delete(listener);
				};
				const listener = () => void check();
				listeners.add(listener);
				check();
			}),
		exited,
		kill: killChildGroup,
	};
}

/** Runs Pi to its exit with stdin closed (print and json modes). */
export async function runPiToExit(o: PiProcessOptions): Promise<PiExit & { stdout: string; stderr: string; events: Array<Record<string, unknown>> }> {
	const pi = startPi(o);
	pi.closeStdin();
	try {
		const exit = await pi.exited;
		return { ...exit, stdout: pi.stdoutLines.join("\n"), stderr: pi.stderr(), events: pi.events() };
	} finally {
		pi.kill();
	}
}
