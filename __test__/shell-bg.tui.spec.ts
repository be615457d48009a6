// What a Pi user sees of shell-bg: the real Pi TUI on both hosts in a detached tmux pane, at 80 and 140
// columns. A background start's call line carries the `&bg` badge (the rest is Pi's bash look) and its
// collapsed result says which job started, `/shell-bg` lists the jobs as a message that stays in the chat
// when the next notice comes, widget rows and table rows never wrap, collapsed follow-ups and statuses show
// the newest output, a kill that waits says so, and quitting with a job that ignores SIGTERM says what Pi is
// waiting for.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeOpenAIServer } from "./helpers/fake-openai-server.ts";
import { fakeModelsJson, hostAvailable, packageRoot, PI_HOSTS, type PiHost } from "./helpers/pi-cli.ts";
import { alive, killGroups } from "./helpers/run-command.ts";
import { hasTmux, newSession, tmux } from "./helpers/tmux.ts";

/** Twelve short lines, then one longer than any terminal: the last output a widget and a table must cut. */
const LONG_JOB = "echo $$ > six.pid; for i in $(seq 1 12); do echo line-$i; done; printf 'long-%.0s' $(seq 1 80); echo; sleep 60";

let temp: string;
before(() => {
	temp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-shell-tui-"));
});
after(() => fs.rmSync(temp, { recursive: true, force: true }));

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

/**
 * The rows of a block that must each stay on one screen line: every line from the first matching `first`
 * while they match `row`; the line after them must be `end` (a wrapped row would continue there instead).
 */
function rowsAfter(screen: string, first: RegExp, row: RegExp, end: RegExp): string[] {
	const lines = screen.split("\n");
	const at = lines.findIndex((l) => first.test(l));
	assert.ok(at >= 0, `no ${first} on the screen:\n${screen}`);
	let i = at;
	while (i < lines.length && row.test(lines[i])) i++;
	assert.match(lines[i] ?? "", end, `a row spilled onto the next line:\n${lines.slice(at, i + 1).join("\n")}`);
	return lines.slice(at, i);
}

/** Types `text` into Pi's editor and submits it. */
/** Types `text` and, once Pi's editor has taken it (its slash-command completion opens as the text comes in: an Enter
 * sent with the text sometimes met 0.73's completion list and submitted nothing), presses Enter. */
async function submit(session: string, text: string): Promise<void> {
	tmux("send-keys", "-t", session, "-l", text);
	await sleep(500);
	tmux("send-keys", "-t", session, "Enter");
}

for (const host of [PI_HOSTS.legacy, PI_HOSTS.current] as PiHost[]) for (const width of [80, 140]) {
	const skip = !hasTmux ? "tmux not installed" : hostAvailable(host) ? false : "host not installed";
	test(`${host.label}, ${width} columns: the &bg badge and the started job collapsed, a moved command's preview, a follow-up's output, a left job's status, newest lines of a status, tables and widget rows on one line each, one-Enter ids, kills that say they wait, a listing that stays, and what quit waits for`, { skip }, async (t) => {
		const server = await startFakeOpenAIServer([
			{ toolCalls: [{ id: "b1", name: "bash", arguments: { command: "trap '' TERM; echo $$ > job.pid; echo stubborn-start; sleep 60", background: true } }] },
			{ toolCalls: [{ id: "b2", name: "bash", arguments: { command: "echo in-front" } }] },
			{ toolCalls: [{ id: "b3", name: "bash", arguments: { command: "trap '' TERM; echo $$ > two.pid; sleep 60", background: true } }] },
			{ toolCalls: [{ id: "b4", name: "bash", arguments: { command: "sleep 60 & echo $! > left.pid; echo leader-done", background: true } }] },
			{ toolCalls: [{ id: "b5", name: "bash", arguments: { command: "sleep 0.5" } }] },
			{ toolCalls: [{ id: "s1", name: "shell_status", arguments: { id: "bg-3" } }] },
			{ toolCalls: [{ id: "b6", name: "bash", arguments: { command: "echo $$ > auto.pid; for i in 1 2 3 4 5 6 7; do echo out-$i; done; sleep 120" } }] },
			{ toolCalls: [{ id: "b7", name: "bash", arguments: { command: "echo one-line", background: true } }] },
			{ toolCalls: [{ id: "b8", name: "bash", arguments: { command: LONG_JOB, background: true } }] },
			{ toolCalls: [{ id: "b9", name: "bash", arguments: { command: "trap '' TERM; echo $$ > three.pid; sleep 60", background: true } }] },
			{ toolCalls: [{ id: "b10", name: "bash", arguments: { command: "sleep 0.5" } }] },
			{ toolCalls: [{ id: "s2", name: "shell_status", arguments: { id: "bg-6" } }] },
			{ toolCalls: [{ id: "s3", name: "shell_status", arguments: {} }] },
			{ toolCalls: [{ id: "k1", name: "shell_kill", arguments: { id: "bg-7" } }] },
			{ toolCalls: [{ id: "b11", name: "bash", arguments: { command: "sleep 60 >/dev/null 2>&1 & echo $! > eight.pid; echo left-behind" } }] },
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
		const tmuxStart = newSession(["-s", session, "-x", String(width), "-y", "200", cmd]);
		assert.equal(tmuxStart.status, 0, tmuxStart.stderr);

		// The model's kill of a job that ignores SIGTERM shows what it waits for, as /shell-bg kill does.
		await screenWhen(session, "shell_kill's progress", (s) => s.includes("stopping bg-7 (SIGTERM, SIGKILL after 2.5s)…"));
		const started = await screenWhen(session, "the answer to the follow-up", (s) => s.includes("noted the ending"), true);
		for (const f of ["job.pid", "two.pid", "left.pid", "auto.pid", "six.pid", "three.pid", "eight.pid"]) pids.push(Number(fs.readFileSync(path.join(root, f), "utf8")));
		const screen = plain(started);
		const lines = screen.split("\n");
		const bgCall = lines.find((l) => l.includes("echo stubborn-start; sleep 60")) ?? "";
		assert.match(bgCall, /\$ trap '' TERM; echo \$\$ > job\.pid; echo stubborn-start; sleep 60 &bg\s*$/, `the background start is badged:\n${screen}`);
		const fgCall = lines.find((l) => l.includes("$ echo in-front")) ?? "";
		assert.match(fgCall, /\$ echo in-front\s*$/, "a foreground call keeps Pi's plain line");
		// Collapsed, a background start says which job started; the log path and the hints are for the model.
		assert.match(screen, /Started bg-1 in the background \(pid \d+\)\.\s*\n/);
		assert.doesNotMatch(screen, /Log: \/|full log:|Read its new output with/, "no log path or instructions in a collapsed view");
		assert.match(screen, /Took \d+\.\ds/, "Pi's own result rendering (its timing line)");
		// A job whose main process ended: a plain heading, the dead pid not last, and the widget marks it.
		assert.match(screen, /bg-3 running for \S+: sleep 60 & echo \$! > left\.pid; echo leader-done\n/);
		// A collapsed block never wraps: at 140 the sentence fits, at 80 it is cut on its line (the rest is expanded).
		const leftSentence = /Its main process \(pid \d+\) exited with code 0; 1 process it started is still running \(pid \d+: sleep 60\)\./;
		if (width >= 140) assert.match(screen, leftSentence);
		else {
			assert.match(screen, /\n\s*Its main process \(pid \d+\) exited with code 0; 1 process[^\n]*…[ \t]*\n/, screen);
			assert.doesNotMatch(screen, /^\s*(?:still )?(?:running )?\(pid \d+: sleep 60\)\.\s*$/m, "the sentence is not continued on a second line");
		}
		assert.doesNotMatch(screen, /\)\) \(pid \d+\)/);
		assert.match(screen, /⟳ bg-3 .*· main process ended, 1 left/);
		// Moved to the background: the collapsed preview keeps the output and adds one short line.
		assert.match(screen, /out-7\s*\n\s*\[moved to the background as bg-4 after 1s\]/);
		assert.doesNotMatch(screen, /\[Still running after/);
		// The follow-up counts what it returns, in the singular, and its collapsed form agrees.
		assert.match(screen, /Background job bg-5 exited with code 0/);
		// Collapsed, the follow-up shows the output it carries; a one-line output is the line itself.
		assert.match(screen, /Background job bg-5 exited with code 0[^\n]*\n\s*Command: echo one-line\s*\n\s*one-line\s*\n/);
		assert.doesNotMatch(screen, /Last 20 lines|1 lines/);
		// A status collapsed ends on the newest output, each line cut to the width (not wrapped).
		const status = screen.slice(screen.indexOf("bg-6 running for"));
		assert.match(status, /\.\.\. \(\d+ earlier lines, [^\n]*to expand\)\s*\n\s*line-9\s*\n\s*line-10\s*\n\s*line-11\s*\n\s*line-12\s*\n\s*long-long-[^\n]*…\s*\n/, status);
		assert.doesNotMatch(status.slice(0, status.indexOf("line-12")), /line-1\s*\n/, "not the oldest lines");
		// The no-id status table and the kill's outcome.
		const table = rowsAfter(screen, /^\s*id +state +exit +runtime +command +last output\s*$/, /^\s*(id +state|bg-\d+ +(running|exited|signalled|lost) )/, /^\s*$/);
		assert.equal(table.length, 8, table.join("\n"));
		assert.match(screen, /bg-7: did not stop on SIGTERM within 2\.5s; killed with SIGKILL\./);
		// A foreground command that left a process running: one short line under its output, collapsed.
		assert.match(screen, /left-behind\s*\n\s*\[1 process left running as bg-8\]\s*\n/);
		// Widget rows: one screen line each, under Pi's margin, the long output cut.
		const widget = rowsAfter(screen, /^ ⟳ bg-/, /^ ⟳ bg-\d+ /, /^(─|\s*$)/);
		assert.equal(widget.length, 6, widget.join("\n"));
		assert.match(widget.find((l) => l.includes("bg-6")) ?? "", /› long-long-[^\n]*…$/);
		const columns = widget.map((l) => l.search(/(?<=^ ⟳ bg-\d+ +\S+(?: \S+)? {2})\S/));
		assert.equal(new Set(columns).size, 1, `the commands start in one column:\n${widget.join("\n")}`);

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

		await submit(session, "/shell-bg");
		await screenWhen(session, "the listing", (s) => /bg-1 +running +- .*stubborn-start/.test(s));
		// The next notice (a usage warning) must not take the listing away.
		await submit(session, "/shell-bg bogus");
		const both = plain(await screenWhen(session, "the usage notice", (s) => s.includes('unknown subcommand "bogus"')));
		assert.match(both, /\/shell-bg · background jobs/);
		assert.match(both, /id +state +exit +runtime +command +last output\s*\n.*bg-1 +running +- /);
		const listing = both.slice(both.lastIndexOf("/shell-bg · background jobs"));
		assert.equal(rowsAfter(listing, /^\s*id +state +exit/, /^\s*(id +state|bg-\d+ +(running|exited|signalled|lost) )/, /^\s*$/).length, 9);

		// Ctrl+D on an empty editor quits; the job ignores SIGTERM, so Pi waits out the grace.
		tmux("send-keys", "-t", session, "C-d");
		const quitting = plain(await screenWhen(session, "the stopping line", (s) => s.includes("shell-bg: stopping bg-1"), false, 10_000));
		
		assert.match(quitting, /shell-bg: stopping bg-1 \(SIGTERM, SIGKILL after 2\.5s\)…/);
		assert.ok(!quitting.includes("pi-exited"), "said while Pi was still waiting");
		await screenWhen(session, "Pi's exit", (s) => s.includes("pi-exited"), false, 15_000);
		assert.equal(alive(pids[0]), false, "the job was killed after the grace");
	});
}

for (const host of [PI_HOSTS.legacy, PI_HOSTS.current] as PiHost[]) {
	const skip = !hasTmux ? "tmux not installed" : hostAvailable(host) ? false : "host not installed";
	test(`${host.label}: Tab in /shell-bg's arguments offers the command's words, never file paths`, { skip }, async (t) => {
		const root = fs.mkdtempSync(path.join(temp, "tab-"));
		const agentDir = path.join(root, "agent");
		const session = `pi-utils-shell-tab-${process.pid}-${path.basename(root)}`;
		t.after(() => void tmux("kill-session", "-t", session));
		fs.mkdirSync(agentDir);
		fs.writeFileSync(path.join(root, "kill-me-not.txt"), "a file Tab must not offer\n");
		fs.writeFileSync(path.join(agentDir, "models.json"), fakeModelsJson("http://127.0.0.1:9/v1"));
		const env = `PI_CODING_AGENT_DIR='${agentDir}' PI_OFFLINE=1 PI_TELEMETRY=0 PI_SKIP_VERSION_CHECK=1`;
		const cmd = `cd '${root}' && ${env} '${host.node}' '${host.cli}' --model fake/fake-model --no-session -e '${packageRoot}'`;
		const tmuxStart = newSession(["-s", session, "-x", "80", "-y", "40", cmd]);
		assert.equal(tmuxStart.status, 0, tmuxStart.stderr);
		await screenWhen(session, "Pi's editor", (s) => s.includes("[Extensions]"));
		// With no job at all, Tab after `kill ` offers nothing (Pi's editor used to list the files here).
		tmux("send-keys", "-t", session, "-l", "/shell-bg kill ");
		await sleep(300);
		tmux("send-keys", "-t", session, "Tab");
		await sleep(1000);
		const afterKill = plain(tmux("capture-pane", "-p", "-t", session).stdout ?? "");
		assert.doesNotMatch(afterKill, /kill-me-not\.txt|models\.json|agent\//, afterKill);
		assert.match(afterKill, /\/shell-bg kill\s*$/m, "the line is left as typed");
		// A verb is still completed by Tab.
		for (let i = 0; i < 5; i++) tmux("send-keys", "-t", session, "BSpace");
		tmux("send-keys", "-t", session, "-l", "lo");
		await sleep(300);
		tmux("send-keys", "-t", session, "Tab");
		await screenWhen(session, "the completed verb", (s) => /\/shell-bg logs\s*$/m.test(s), false, 5_000);
	});
}
