// shell-bg through a real in-process Pi 0.73.1 session on the faux provider: the model starts background
// jobs, reads their output incrementally, waits, hears about endings by follow-up message, and kills them.
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { contextText, fauxAssistantMessage, fauxToolCall, lastToolResultText, openLiveSession, type LiveSession, type LiveSessionOptions } from "./helpers/faux-live-session.ts";
import { alive, killGroups } from "./helpers/run-command.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A temp project + agent dir with pi-utils settings, and a live session closed (and its jobs killed) afterwards. */
async function open(t: TestContext, shell: Record<string, unknown> = {}, extra: Partial<LiveSessionOptions> = {}): Promise<{ live: LiveSession; root: string; agentDir: string }> {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-shellbg-"));
	const agentDir = path.join(root, "agent");
	fs.mkdirSync(agentDir);
	const project = path.join(root, "project");
	fs.mkdirSync(project);
	fs.writeFileSync(path.join(agentDir, "pi-utils.json"), JSON.stringify({ shell: { killGraceMs: 500, ...shell } }));
	const live = await openLiveSession({ cwd: project, agentDir, withUI: true, ...extra });
	t.after(async () => {
		await live.quit();
		killGroups(pidsIn(live));
		fs.rmSync(root, { recursive: true, force: true });
		// A scripted reply that asserted on what the model saw fails the test here.
		assert.deepEqual(live.modelErrors, []);
	});
	return { live, root, agentDir };
}

/** Every job pid any tool result reported, for cleanup. */
function pidsIn(live: LiveSession): number[] {
	return live.toolResults.flatMap((r) => [...r.text.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1])));
}


/** The output section of a shell_status answer. */
const outputOf = (text: string) => /\n\nOutput since the last read:\n([\s\S]*?)\n\n/.exec(text)?.[1];

const call = (name: string, args: Record<string, unknown>) => fauxAssistantMessage([fauxToolCall(name, args)], { stopReason: "toolUse" });
const say = (text: string) => fauxAssistantMessage(text);
const later = (ms: number, step: ReturnType<typeof call>) => async () => {
	await sleep(ms);
	return step;
};

test("background job: incremental status, wait, follow-up to the model, kill", async (t) => {
	const { live } = await open(t);
	live.reply(
		call("bash", { command: "echo one; sleep 0.8; echo two; sleep 60", background: true }),
		call("bash", { command: "sleep 3.5; echo finished; exit 3", background: true }),
		later(300, call("shell_status", { id: "bg-1" })),
		later(1000, call("shell_status", { id: "bg-1" })),
		call("shell_status", { id: "bg-1", wait: 1 }),
		call("shell_status", {}),
		say("waiting for bg-2"),
		// The follow-up about bg-2 starts this turn on its own.
		(context) => {
			assert.match(contextText(context), /Background job bg-2 exited with code 3/);
			return call("shell_kill", { id: "bg-1" });
		},
		say("done"),
	);
	await live.prompt("start two jobs");
	await live.until("the follow-up turn", () => live.calls >= 9);
	await live.settle();

	const [start1, start2, first, second, waited, table, killed] = live.toolResults;
	assert.match(start1.text, /^Started bg-1 in the background \(pid \d+\)\.\nLog: .*\/bg-1\.log\n/);
	assert.match(start1.text, /You will get a message when it ends\./);
	assert.deepEqual(Object.keys((start1.details as { shellBg: object }).shellBg), ["id", "pid", "logPath", "auto"]);
	assert.match(start2.text, /^Started bg-2/);
	assert.match(first.text, /^bg-1 running for .* \(pid \d+\): echo one/);
	assert.equal(outputOf(first.text), "one");
	assert.equal(outputOf(second.text), "two", "only the new line");
	assert.match(waited.text, /Still running after waiting 1\.0s\./);
	assert.match(waited.text, /\(no new output since the last read\)/);
	assert.match(table.text, /^id +state +exit +runtime +command +last output\nbg-1 +running +- .*echo one; sleep 0\.8.* +two\nbg-2 +running/m);
	assert.equal(killed.toolName, "shell_kill");
	assert.match(killed.text, /^bg-1: stopped with SIGTERM\.$/);

	const finalContext = contextText(live.contexts.at(-1)!);
	assert.equal(finalContext.match(/Background job bg-2 exited/g)?.length, 1, "announced exactly once");
	assert.match(finalContext, /Command: sleep 3\.5; echo finished; exit 3/);
	assert.match(finalContext, /finished/);
	assert.doesNotMatch(finalContext, /Background job bg-1/, "a job the model killed is not announced again");
	const pid1 = Number(/pid (\d+)/.exec(start1.text)![1]);
	assert.equal(alive(pid1), false);

	// The widget showed both jobs while they ran, then was cleared.
	const shown = live.widgets.filter((w) => w.lines);
	assert.ok(shown.some((w) => w.lines!.length === 2 && /^⟳ bg-1 .*echo one/.test(w.lines![0]) && /^⟳ bg-2 /.test(w.lines![1])), JSON.stringify(shown.slice(0, 3)));
	assert.equal(live.widgets.at(-1)!.lines, undefined, "cleared once nothing runs");
	assert.ok(live.widgets.every((w) => w.key === "shell-bg"));
	assert.deepEqual(live.extensionErrors, []);
});

test("what a job left with a cleared environment in a session of its own keeps it running, and shell_kill ends it", async (t) => {
	const { live, root } = await open(t);
	const pidFile = path.join(root, "project", "left.pid");
	live.reply(
		call("bash", { command: "env -i setsid sleep 30 & echo $! > left.pid; exit 0", background: true }),
		async () => {
			// The main process has exited: what is reported now is what it left.
			await live.until("the pid file", () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").endsWith("\n"));
			await sleep(300);
			return call("shell_status", { id: "bg-1" });
		},
		call("shell_kill", { id: "bg-1" }),
		say("done"),
	);
	await live.prompt("go");
	const left = Number(fs.readFileSync(pidFile, "utf8"));
	t.after(() => killGroups([left]));
	const [, status, killed] = live.toolResults;
	assert.match(status.text, new RegExp(`^bg-1 running for \\S+: env -i setsid sleep 30 & echo \\$! > left\\.pid; exit 0\\nIts main process \\(pid \\d+\\) exited with code 0; 1 process it started is still running \\(pid ${left}: (setsid )?sleep 30\\)\\.\\n`));
	assert.match(killed.text, new RegExp(`^bg-1: stopped with SIGTERM\\. Also signalled 1 process that had left its group \\(pids ${left}\\)\\.$`));
	assert.equal(alive(left), false, "gone from /proc (or a zombie its new parent has yet to reap)");
});

test("the job limit refuses a background start by name, kills nothing, and quit stops the jobs", async (t) => {
	const { live } = await open(t, { maxBackgroundJobs: 2 });
	live.reply(
		call("bash", { command: "sleep 60", background: true }),
		call("bash", { command: "sleep 61", background: true }),
		call("bash", { command: "sleep 62", background: true }),
		say("ok"),
	);
	await live.prompt("three");
	const [a, b, refused] = live.toolResults;
	assert.equal(refused.isError, true);
	assert.match(refused.text, /^Not started: 2 background jobs are already running, the limit \(shell\.maxBackgroundJobs = 2\)\.\nbg-1 \(.*\): sleep 60\nbg-2 \(.*\): sleep 61\nNothing was stopped\./);
	const pids = [a, b].map((r) => Number(/pid (\d+)/.exec(r.text)![1]));
	assert.deepEqual(pids.map(alive), [true, true], "a refusal kills nothing");
	await live.quit();
	assert.deepEqual(pids.map(alive), [false, false], "quit (onQuit: kill) stops this session's jobs");
});

test("a background job's timeout applies, and a status that shows the ending replaces the follow-up", async (t) => {
	const { live } = await open(t);
	live.reply(
		call("bash", { command: "echo begun; sleep 60", background: true, timeout: 1 }),
		call("shell_status", { id: "bg-1", wait: 20 }),
		say("ok"),
	);
	const started = Date.now();
	await live.prompt("go");
	await live.settle(500);
	const [start, status] = live.toolResults;
	assert.match(start.text, /Timeout: it is stopped after 1s\./);
	assert.match(status.text, /^bg-1 timed out after 1\.0s and was stopped \(SIGTERM\): echo begun; sleep 60/);
	assert.equal(outputOf(status.text), "begun");
	assert.ok(Date.now() - started < 8000, "the wait returned when the timeout ended the job");
	assert.equal(live.calls, 3, "no follow-up turn: shell_status already reported the ending");
	assert.doesNotMatch(contextText(live.contexts.at(-1)!), /Background job bg-1/);
});

test("a shell_status wait is abortable", async (t) => {
	const { live } = await open(t);
	live.reply(call("bash", { command: "sleep 60", background: true }), call("shell_status", { id: "bg-1", wait: 120 }), say("ok"));
	const prompt = live.prompt("go");
	await live.until("the wait to start", () => live.toolResults.length === 1);
	await sleep(300);
	const aborted = Date.now();
	await live.abort();
	await prompt;
	assert.ok(Date.now() - aborted < 2000, `abort took ${Date.now() - aborted} ms`);
	assert.match(live.toolResults[1]?.text ?? "", /The wait was cancelled\./);
});

test("with a UI a long foreground command moves to the background with its output so far, keeping its timeout", async (t) => {
	const { live } = await open(t, { autoBackgroundAfterSec: 1 });
	live.reply(
		call("bash", { command: "echo start; sleep 60", timeout: 3 }),
		later(200, call("shell_status", { id: "bg-1" })),
		call("shell_status", { id: "bg-1", wait: 20 }),
		say("ok"),
	);
	const started = Date.now();
	await live.prompt("go");
	const [moved, status, ended] = live.toolResults;
	assert.equal(moved.isError, false);
	assert.match(moved.text, /^start\n\n\[Still running after 1s: moved to the background as bg-1 \(pid \d+\); the output above is what it printed so far\. Log: \S*bg-1\.log\. Its timeout still applies: it is stopped 3s after it started\. [^\n]*\]$/, "one line after the output");
	assert.deepEqual((moved.details as { shellBg: { auto: boolean } }).shellBg.auto, true);
	assert.match(status.text, /\(no new output since the last read\)/, "the model already saw 'start'");
	assert.match(ended.text, /^bg-1 timed out after 3\.0s and was stopped \(SIGTERM\)/, "the timeout survived the move");
	assert.ok(Date.now() - started < 8000);
});

test("without a UI (print mode) a foreground command never moves to the background, and gets the default timeout", async (t) => {
	const { live } = await open(t, { autoBackgroundAfterSec: 1, foregroundTimeoutSec: 3 }, { withUI: false });
	live.reply(call("bash", { command: "echo start; sleep 1.5; echo end" }), call("bash", { command: "echo slow; sleep 30" }), say("ok"));
	await live.prompt("go");
	const [fg, timedOut] = live.toolResults;
	assert.equal(fg.text, "start\nend\n");
	assert.equal(timedOut.isError, true);
	assert.equal(timedOut.text, "slow\n\n\nCommand timed out after 3 seconds", "Pi's own wording and layout");
	assert.deepEqual(live.widgets, [], "no widget calls without a UI");
});

test("/reload keeps running jobs and announces each ending exactly once", async (t) => {
	const { live } = await open(t);
	live.reply(
		call("bash", { command: "sleep 2; echo slow-done", background: true }),
		call("bash", { command: "sleep 0.2; exit 4", background: true }),
		say("started"),
		say("noted bg-2"),
		call("shell_status", {}),
		say("noted bg-1"),
	);
	await live.prompt("start");
	await live.reload(); // bg-2 ends around the hand-over, bg-1 well after it
	await live.until("bg-2's follow-up turn", () => live.calls >= 4);
	const afterBg2 = contextText(live.contexts[3]);
	assert.match(afterBg2, /Background job bg-2 exited with code 4/);
	await live.until("bg-1's follow-up turn", () => live.calls >= 6, 10_000);
	await live.settle();
	const table = live.toolResults.at(-1)!;
	assert.match(table.text, /^bg-1 +exited +0 .* slow-done$/m, "the job started before /reload is still known");
	await live.reload();
	await live.reload();
	await sleep(500);
	assert.equal(live.calls, 6, "no ending is announced again after more reloads");
	const all = contextText(live.contexts.at(-1)!);
	assert.equal(all.match(/Background job bg-2 exited/g)?.length, 1);
	assert.equal(all.match(/Background job bg-1 exited/g)?.length, 1);
	assert.deepEqual(live.extensionErrors, [], "no stale pi call from a replaced instance");
});

test("without the native addon jobs run as plain child processes (across /reload too), and the user is told once", async (t) => {
	const { live } = await open(t, {}, { env: { PI_UTILS_DISABLE_NATIVE: "1" } });
	live.reply(
		call("bash", { command: "echo plain" }),
		call("bash", { command: "echo fb-start; sleep 60", background: true }),
		call("bash", { command: "sleep 1; exit 9", background: true }),
		later(300, call("shell_status", { id: "bg-1" })),
		say("ok"),
		call("shell_kill", { id: "bg-1" }),
		say("done"),
	);
	await live.prompt("go");
	await live.reload();
	await live.until("bg-2's follow-up turn", () => live.calls >= 7);
	await live.settle();
	const [fg, started, , status, killed] = live.toolResults;
	assert.equal(fg.text, "plain\n");
	assert.match(started.text, /^Started bg-1 in the background \(pid \d+\)/);
	assert.equal(outputOf(status.text), "fb-start");
	assert.match(contextText(live.contexts[5]), /Background job bg-2 exited with code 9/, "announced by the instance after /reload");
	assert.equal(killed.text, "bg-1: stopped with SIGTERM.");
	assert.equal(alive(pidsIn(live)[0]), false);
	const notices = live.notifications.filter((n) => /plain child processes/.test(n.message));
	assert.equal(notices.length, 1, JSON.stringify(live.notifications));
	assert.match(notices[0].message, /disabled by PI_UTILS_DISABLE_NATIVE=1.*not reconciled after a restart/);
});

test("disabledTools keeps shell tools out; a disabled bash stays Pi's own", async (t) => {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-shellbg-disabled-"));
	t.after(() => fs.rmSync(root, { recursive: true, force: true }));
	const { runFauxSession, toolNamesOf } = await import("./helpers/faux-session.ts");
	const offered = async (disabledTools: string[]) => {
		const agentDir = path.join(root, disabledTools.join("_") || "none");
		fs.mkdirSync(agentDir);
		fs.writeFileSync(path.join(agentDir, "pi-utils.json"), JSON.stringify({ disabledTools }));
		const r = await runFauxSession({ cwd: root, agentDir, steps: [say("hi")] });
		const tools = r.contexts[0].tools ?? [];
		const bash = tools.find((tool) => tool.name === "bash");
		return { names: toolNamesOf(r.contexts[0]), bashParams: Object.keys((bash?.parameters as { properties: object }).properties) };
	};
	const noShellTools = await offered(["shell_*"]);
	assert.ok(!noShellTools.names.includes("shell_status") && !noShellTools.names.includes("shell_kill"));
	assert.deepEqual(noShellTools.bashParams, ["command", "timeout", "background"]);
	const noBash = await offered(["bash"]);
	assert.ok(noBash.names.includes("shell_status") && noBash.names.includes("shell_kill"));
	assert.deepEqual(noBash.bashParams, ["command", "timeout"], "Pi's built-in bash");
});

test("/shell-bg lists and shows logs in the chat (not to the model), kills (telling the model in order), clears, and completes ids", async (t) => {
	const { live } = await open(t);
	live.reply(call("bash", { command: "echo hello-logs; sleep 60", background: true }), say("started"));
	await live.prompt("start");
	await sleep(200);
	assert.deepEqual((await live.complete("shell-bg", "kill "))?.map((c) => c.value), ["kill bg-1", "kill all"]);
	assert.deepEqual((await live.complete("shell-bg", "lo"))?.map((c) => c.value), ["logs "]);
	await live.prompt("/shell-bg");
	await live.prompt("/shell-bg logs bg-1");
	await live.prompt("/shell-bg kill bg-1");
	await live.prompt("/shell-bg clear");
	await live.prompt("/shell-bg bogus");
	const notes = live.notifications.map((n) => n.message);
	const [listing, logs, stopped] = live.customMessages;
	assert.equal(listing.customType, "shell-bg-listing");
	assert.match(listing.text, /^id +state .*\nbg-1 +running +- .* hello-logs$/);
	const details = listing.details as { title: string; rows: string[][] };
	assert.equal(details.title, "/shell-bg · background jobs");
	assert.deepEqual(details.rows.map((r) => r.slice(0, 3)), [["bg-1", "running", "-"]], "the rows, for a renderer that fits them to its width");
	assert.equal(logs.customType, "shell-bg-listing");
	assert.match(logs.text, /^bg-1 running for .*: echo hello-logs; sleep 60\nhello-logs\nLog: /);
	assert.equal(stopped.customType, "shell-bg");
	assert.match(stopped.text, /^The user stopped background job bg-1 \(echo hello-logs; sleep 60\): it was stopped \(SIGTERM\)/, "in the conversation at once");
	assert.equal(notes[0], "bg-1: stopped with SIGTERM.");
	assert.equal(notes[1], "Forgot bg-1 and deleted their logs.");
	assert.equal(notes[2], 'unknown subcommand "bogus". Usage: /shell-bg [list] | kill <id|all> | logs <id> | clear');
	assert.equal(live.calls, 2, "commands never reach the model");
	live.reply((context) => {
		const seen = contextText(context);
		assert.match(seen, /The user stopped background job bg-1 \(echo hello-logs; sleep 60\)/);
		assert.doesNotMatch(seen, /id +state +exit|hello-logs\\nLog:/, "listings are the user's, not the model's");
		return say("understood");
	});
	await live.prompt("what happened?");
	assert.equal(live.calls, 3);
});
