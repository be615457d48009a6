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
		screen = tmux("capture-pane", "-p", ...(escapes ? ["-e"] : []), "-t", session).stdout ?? "";
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
	test(`${host.label}: the &bg badge, a /shell-bg listing that stays, and what quit waits for`, { skip }, async (t) => {
		const server = await startFakeOpenAIServer([
			{ toolCalls: [{ id: "b1", name: "bash", arguments: { command: "trap '' TERM; echo $$ > job.pid; echo stubborn-start; sleep 60", background: true } }] },
			{ toolCalls: [{ id: "b2", name: "bash", arguments: { command: "echo in-front" } }] },
			{ text: "all started" },
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
		fs.writeFileSync(path.join(agentDir, "pi-utils.json"), JSON.stringify({ shell: { killGraceMs: 2500 } }));
		const env = `PI_CODING_AGENT_DIR='${agentDir}' PI_OFFLINE=1 PI_TELEMETRY=0 PI_SKIP_VERSION_CHECK=1`;
		// The pane outlives Pi (`; sleep`), so what Pi printed while quitting can still be read.
		const cmd = `cd '${root}' && ${env} '${host.node}' '${host.cli}' --model fake/fake-model --no-session -e '${packageRoot}' 'start the jobs'; echo pi-exited; sleep 60`;
		assert.equal(tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "50", cmd).status, 0);

		const started = await screenWhen(session, "the answer", (s) => s.includes("all started"), true);
		pids.push(Number(fs.readFileSync(path.join(root, "job.pid"), "utf8")));
		const lines = plain(started).split("\n");
		const bgCall = lines.find((l) => l.includes("echo stubborn-start; sleep 60")) ?? "";
		assert.match(bgCall, /\$ trap '' TERM; echo \$\$ > job\.pid; echo stubborn-start; sleep 60 &bg\s*$/, "the background start is badged");
		const fgCall = lines.find((l) => l.includes("$ echo in-front")) ?? "";
		assert.match(fgCall, /\$ echo in-front\s*$/, "a foreground call keeps Pi's plain line");
		assert.match(plain(started), /Started bg-1 in the background/);
		assert.match(plain(started), /Took \d+\.\ds/, "Pi's own result rendering (its timing line)");

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
		
		assert.match(quitting, /shell-bg: stopping bg-1 \(grace 2\.5s\)…/);
		assert.ok(!quitting.includes("pi-exited"), "said while Pi was still waiting");
		await screenWhen(session, "Pi's exit", (s) => s.includes("pi-exited"), false, 15_000);
		assert.equal(alive(pids[0]), false, "the job was killed after the grace");
	});
}
