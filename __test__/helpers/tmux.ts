// tmux for the TUI specs: each spec process talks to a server of its own (`-S`, a socket in a temporary folder
// removed with the server when the process exits), so a session another spec
// or another checkout's run kills cannot take the server down under this one, and a session is started
// again when tmux reports the race of a server that was just exiting.
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const hasTmux = spawnSync("tmux", ["-V"]).status === 0;

const socketDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-tmux-"));
const socket = path.join(socketDir, "server");
process.on("exit", () => {
	spawnSync("tmux", ["-S", socket, "kill-server"], { stdio: "ignore" });
	fs.rmSync(socketDir, { recursive: true, force: true });
});

/** One tmux command on this process's own server. */
export const tmux = (...args: string[]): SpawnSyncReturns<string> => spawnSync("tmux", ["-S", socket, ...args], { encoding: "utf8" });

/** `tmux new-session -d`, tried up to five times; the last failure's stderr when none started. */
export function newSession(args: string[]): { status: number | null; stderr: string } {
	let last = tmux("new-session", "-d", ...args);
	for (let attempt = 1; attempt < 5 && last.status !== 0; attempt++) {
		Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
		last = tmux("new-session", "-d", ...args);
	}
	return { status: last.status, stderr: last.stderr };
}
