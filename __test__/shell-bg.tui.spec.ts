// What a Pi user sees of shell-bg: the real Pi TUI on both hosts in a detached tmux pane. A background
// start's call line carries the `&bg` badge (the rest is Pi's bash look), `/shell-bg` lists the jobs as a
// message that stays in the chat when the next notice comes, and quitting with a job that ignores SIGTERM
// says what Pi is waiting for.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeOpenAIServer } from "./helpers/fake-openai-server.ts";
import { fakeModelsJson, hostAvailable, packageRoot, PI_HOSTS, type PiHost } from "./helpers/pi-cli.ts";
import { alive, killGroups } from "./helpers/run-command.ts";

const hasTmux = spawnSync("tmux", ["-V"]).status === 0;

let temp: string;
before(() => {
	temp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-shell-tui-"));
});
after(() => fs.rmSync(temp, { recursive: true, force: true }));

const tmux = (...args: string[]) => spawnSync("tmux", args, { encoding: "utf8" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");

/** The pane's text (with its colour escapes when `escapes`), once `done(screen)` holds; fails after `limitMs`. */
async function screenWhen(session: string, what: string, done: (screen: string) => boolean, escapes = false, limitMs = 30_000): Promise<string> {
	let screen = "";
	for (let waited = 0; waited < limitMs; waited += 100) {
		// With the scrollback: a long session's first results are above the pane by the time it settles.
		screen = tmux("capture-pane", "-p", "-S", "-500", ...(escapes ? ["-e"] : []), "-t", session).stdout ?? "";
		if (done(plain(screen))) return screen;
		await sleep(100);
	}
	assert.fail(`the screen never showed ${what}:\n${plain(screen)}`);
}

/** Types `text` into Pi's editor and submits it. */
function submit(session: string, text: string): void {
	tmux("send-keys", "-t", session, "-l", text);
	tmux("send-keys", "-t", session, "Enter");
}

for (const host of [PI_HOSTS.legacy, PI_HOSTS.current] as PiHost[]) {
	const skip = !hasTmux ? "tmux not installed" : hostAvailable(host) ? false : "host not installed";
	test(`${host.label}: the &bg badge, a moved command's preview, a follow-up's count, a left job's status, one-Enter ids, a kill that says it waits, a listing that stays, and what quit waits for`, { skip }, async (t) => {
		const server = await startFakeOpenAIServer([
			{ toolCalls: [{ id: "b1", name: "bash", arguments: { command: "trap '' TERM; echo $$ > job.pid; echo stubborn-start; sleep 60", background: true } }] },
			{ toolCalls: [{ id: "b2", name: "bash", arguments: { command: "echo in-front" } }] },
			{ toolCalls: [{ id: "b3", name: "bash", arguments: { command: "trap '' TERM; echo $$ > two.pid; sleep 60", background: true } }] },
			{ toolCalls: [{ id: "b4", name: "bash", arguments: { command: "sleep 60 & echo $! > left.pid; echo leader-done", background: true } }] },
			{ toolCalls: [{ id: "b5", name: "bash", arguments: { command: "sleep 0.5" } }] },
			{ toolCalls: [{ id: "s1", name: "shell_status", arguments: { id: "bg-3" } }] },
			{ toolCalls: [{ id: "b6", name: "bash", arguments: { command: "echo $$ > auto.pid; for i in 1 2 3 4 5 6 7; do echo out-$i; done; sleep 30" } }] },
			{ toolCalls: [{ id: "b7", name: "bash", arguments: { command: "echo one-line", background: true } }] },
			{ text: "all started" },
			{ text: "noted the ending" },
		]);
		const root = fs.mkdtempSync(path.join(temp, "proj-"));
		const agentDir = path.join(root, "agent");
		const session = `pi-utils-shell-tui-${process.pid}-${path.basename(root)}`;
		const pids: number[] = [];
		t.after(async () => {
			tmux("kill-session", "-t", session);
			killGroups(pids);
			await server.close();
		});
		fs.mkdirSync(agentDir);
		fs.writeFileSync(path.join(agentDir, "models.json"), fakeModelsJson(server.baseUrl));
		fs.writeFileSync(path.join(agentDir, "pi-utils.json"), JSON.stringify({ shell: { killGraceMs: 2500, autoBackgroundAfterSec: 1 } }));
		const env = `PI_CODING_AGENT_DIR='${agentDir}' PI_OFFLINE=1 PI_TELEMETRY=0 PI_SKIP_VERSION_CHECK=1`;
		// The pane outlives Pi (`; sleep`), so what Pi printed while quitting can still be read.
		const cmd = `cd '${root}' && ${env} '${host.node}' '${host.cli}' --model fake/fake-model --no-session -e '${packageRoot}' 'start the jobs'; echo pi-exited; sleep 60`;
		assert.equal(tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "150", cmd).status, 0);

		const started = await screenWhen(session, "the answer to the follow-up", (s) => s.includes("noted the ending"), true);
		for (const f of ["job.pid", "two.pid", "left.pid", "auto.pid"]) pids.push(Number(fs.readFileSync(path.join(root, f), "utf8")));
		const screen = plain(started);
		const lines = screen.split("\n");
		const bgCall = lines.find((l) => l.includes("echo stubborn-start; sleep 60")) ?? "";
		assert.match(bgCall, /\$ trap '' TERM; echo \$\$ > job\.pid; echo stubborn-start; sleep 60 &bg\s*$/, `the background start is badged:\n${screen}`);
		const fgCall = lines.find((l) => l.includes("$ echo in-front")) ?? "";
		assert.match(fgCall, /\$ echo in-front\s*$/, "a foreground call keeps Pi's plain line");
		assert.match(screen, /Started bg-1 in the background/);
		assert.match(screen, /Took \d+\.\ds/, "Pi's own result rendering (its timing line)");
		// A job whose main process ended: a plain heading, the dead pid not last, and the widget marks it.
		assert.match(screen, /bg-3 running for \S+: sleep 60 & echo \$! > left\.pid; echo leader-done\n/);
		assert.match(screen, /Its main process \(pid \d+\) exited with code 0; 1 process it started is still running \(pid \d+: sleep 60\)\./);
		assert.doesNotMatch(screen, /\)\) \(pid \d+\)/);
		assert.match(screen, /⟳ bg-3 .*· main process ended, 1 left/);
		// Moved to the background: the collapsed preview keeps the output and adds one short line.
		assert.match(screen, /out-7\s*\n\s*\[moved to the background as bg-4 after 1s\]/);
		assert.doesNotMatch(screen, /\[Still running after/);
		// The follow-up counts what it returns, in the singular, and its collapsed form agrees.
		assert.match(screen, /Background job bg-5 exited with code 0/);
		assert.match(screen, /Last 1 line of output \(full log: [^]*?\),\s+\S[^\n]*to expand/);
		assert.doesNotMatch(screen, /Last 20 lines|1 lines/);

		// An id typed in full: one Enter runs the command (no completion popup to accept first).
		tmux("send-keys", "-t", session, "-l", "/shell-bg logs bg-3");
		await sleep(500);
		tmux("send-keys", "-t", session, "Enter");
		await screenWhen(session, "the logs listing after one Enter", (s) => (s.match(/bg-3 running for /g) ?? []).length >= 2, false, 5_000);

		// A kill that waits out the grace says so at once, then one line.
		tmux("send-keys", "-t", session, "-l", "/shell-bg kill bg-2");
		await sleep(500);
		tmux("send-keys", "-t", session, "Enter");
		await screenWhen(session, "the stopping notice", (s) => s.includes("stopping bg-2 (SIGTERM, SIGKILL after 2.5s)…"), false, 2_000);
		assert.equal(alive(pids[1]), true, "said while the job still ran");
		const killed = plain(await screenWhen(session, "the kill's outcome", (s) => s.includes("bg-2: did not stop on SIGTERM within 2.5s; killed with SIGKILL."), false, 10_000));
		assert.doesNotMatch(killed, /stopping bg-2|The user stopped background job bg-2/, "one line at the end");

		submit(session, "/shell-bg");
		await screenWhen(session, "the listing", (s) => /bg-1 +running +- .*stubborn-start/.test(s));
		// The next notice (a usage warning) must not take the listing away.
		submit(session, "/shell-bg bogus");
		const both = plain(await screenWhen(session, "the usage notice", (s) => s.includes('unknown subcommand "bogus"')));
		assert.match(both, /\/shell-bg · background jobs/);
		assert.match(both, /id +state +exit +runtime +command +last output\n.*bg-1 +running +- /);

		// Ctrl+D on an empty editor quits; the job ignores SIGTERM, so Pi waits out the grace.
		tmux("send-keys", "-t", session, "C-d");
		const quitting = plain(await screenWhen(session, "the stopping line", (s) => s.includes("shell-bg: stopping bg-1"), false, 10_000));
		
		assert.match(quitting, /shell-bg: stopping bg-1 \(SIGTERM, SIGKILL after 2\.5s\)…/);
		assert.ok(!quitting.includes("pi-exited"), "said while Pi was still waiting");
		await screenWhen(session, "Pi's exit", (s) => s.includes("pi-exited"), false, 15_000);
		assert.equal(alive(pids[0]), false, "the job was killed after the grace");
	});
}
