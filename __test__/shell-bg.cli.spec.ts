// shell-bg through the real Pi CLI (both hosts where it matters): print mode exits promptly with a background
// job running, a restart on the same session reconciles its jobs, and RPC mode carries the widget.
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeOpenAIServer, toolResults, type ChatRequest, type ScriptStep } from "./helpers/fake-openai-server.ts";
import { hostAvailable, PI_HOSTS, type PiHost } from "./helpers/pi-cli.ts";
import { runPiToExit, startPi } from "./helpers/pi-process.ts";
import { alive, killGroups, until } from "./helpers/run-command.ts";

/** Temp project + agent dir (with pi-utils settings); every pid registered is group-killed afterwards. */
function workspace(t: TestContext, shell: Record<string, unknown> = {}) {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-shellbg-cli-"));
	const agentDir = path.join(root, "agent");
	const cwd = path.join(root, "project");
	fs.mkdirSync(agentDir);
	fs.mkdirSync(cwd);
	fs.writeFileSync(path.join(agentDir, "pi-utils.json"), JSON.stringify({ shell: { killGraceMs: 500, ...shell } }));
	const pids: number[] = [];
	t.after(() => {
		killGroups(pids);
		fs.rmSync(root, { recursive: true, force: true });
	});
	return { root, agentDir, cwd, pids };
}

/** All tool results a request carries, newest last. */
const results = (req: ChatRequest) => [...toolResults(req).values()];
const pidOf = (text: string) => Number(/\(pid (\d+)\)/.exec(text)?.[1] ?? Number.NaN);
const requestText = (req: ChatRequest) => JSON.stringify(req.messages);

for (const host of [PI_HOSTS.legacy, PI_HOSTS.current] as PiHost[]) {
	test(`pi -p with a running background job exits promptly after its answer (${host.label})`, { skip: !hostAvailable(host) }, async (t) => {
		const { agentDir, cwd, pids } = workspace(t);
		let answeredAt = 0;
		const steps: ScriptStep[] = [
			{ toolCalls: [{ name: "bash", arguments: { command: "echo fg-out; echo ${PATH%%:*}; exit 3" } }] },
			{ toolCalls: [{ name: "bash", arguments: { command: "echo serving; sleep 300", background: true } }] },
			(req) => {
				answeredAt = Date.now();
				const started = results(req).at(-1) ?? "";
				pids.push(pidOf(started));
				return { text: `answer: ${started.split("\n")[0]}` };
			},
		];
		const server = await startFakeOpenAIServer(steps);
		t.after(() => server.close());
		const run = await runPiToExit({ host, agentDir, baseUrl: server.baseUrl, cwd, args: ["--no-session", "-p", "start a server"], timeoutMs: 40_000 });
		const exitedAt = Date.now();
		assert.equal(run.timedOut, false, run.stderr);
		assert.equal(run.code, 0, run.stderr);
		assert.match(run.stdout, /^answer: Started bg-1 in the background \(pid \d+\)\.$/m);
		assert.ok(exitedAt - answeredAt < 5000, `exited ${exitedAt - answeredAt} ms after the answer`);
		const pid = pids[0];
		assert.ok(pid > 1);
		assert.equal(alive(pid), false, "onQuit: kill stopped the job");
		const [foreground, started] = results(server.requests[2]);
		assert.equal(foreground, `fg-out\n${path.join(agentDir, "bin")}\n\n\nCommand exited with code 3`, "Pi's foreground text on this host");
		assert.match(started, /This session has no UI: a completion message reaches you only while you are still working/);
		assert.doesNotMatch(run.stderr, /stale|Error/);
	});
}

test(`a restart on the same session adopts a running job and reports one that ended meanwhile (${PI_HOSTS.current.label})`, { skip: !hostAvailable(PI_HOSTS.current) }, async (t) => {
	const host = PI_HOSTS.current;
	const { root, agentDir, cwd, pids } = workspace(t, { onQuit: "keep" });
	const sessionDir = path.join(root, "sessions");
	const first = await startFakeOpenAIServer([
		{ toolCalls: [{ name: "bash", arguments: { command: "echo long-start; sleep 300", background: true } }] },
		{ toolCalls: [{ name: "bash", arguments: { command: "sleep 1; echo quick-done; exit 5", background: true } }] },
		(req) => {
			pids.push(...results(req).map(pidOf));
			return { text: "both started" };
		},
	]);
	t.after(() => first.close());
	const run1 = await runPiToExit({ host, agentDir, baseUrl: first.baseUrl, cwd, args: ["--session-dir", sessionDir, "-p", "start two jobs"] });
	assert.equal(run1.code, 0, run1.stderr);
	assert.equal(pids.length, 2);
	assert.deepEqual(pids.map(alive), [true, true], "onQuit: keep leaves the jobs running");
	const [sessionFile] = fs.readdirSync(sessionDir, { recursive: true }).map(String).filter((f) => f.endsWith(".jsonl"));
	const jobDir = path.join(sessionDir, sessionFile.replace(/\.jsonl$/, ".shell-bg"));
	assert.ok(fs.existsSync(path.join(jobDir, "jobs.json")), "the sidecar sits next to the session file");
	await until("the quick job to end", () => !alive(pids[1]));

	const second = await startFakeOpenAIServer([
		{ toolCalls: [{ name: "shell_status", arguments: {} }] },
		{ toolCalls: [{ name: "shell_status", arguments: { id: "bg-1" } }] },
		{ toolCalls: [{ name: "shell_kill", arguments: { id: "bg-1" } }] },
		{ text: "cleaned up" },
	]);
	t.after(() => second.close());
	const run2 = await runPiToExit({ host, agentDir, baseUrl: second.baseUrl, cwd, args: ["--session-dir", sessionDir, "-c", "--mode", "json", "what is running?"] });
	assert.equal(run2.code, 0, run2.stderr);
	const ends = run2.events.filter((e) => e.type === "tool_execution_end").map((e) => (e.result as { content: Array<{ text: string }> }).content[0].text);
	assert.equal(ends.length, 3, JSON.stringify(ends));
	const [table, status, kill] = ends;
	assert.match(table, /^bg-1 +running +- .*echo long-start; sleep 300 +long-start$/m, table);
	assert.match(table, /^bg-2 +exited +5 .*quick-done$/m, table);
	assert.match(status, /^bg-1 running for .* \(pid \d+\): echo long-start/);
	assert.match(status, /Output since the last read:\nlong-start/, "the adopted job's log is read from the start");
	assert.equal(kill, "bg-1: stopped with SIGTERM.");
	assert.equal(alive(pids[0]), false, "the adopted job was killed");
	assert.equal(second.requests.length, 4, "bg-2 was reported once, with the prompt, not by a turn of its own");
	// Told with the first prompt of the resumed session, without a turn of its own.
	const firstSeen = requestText(second.requests[0]);
	assert.match(firstSeen, /Background job bg-2 exited with code 5/);
	assert.match(firstSeen, /quick-done/);
	assert.equal(requestText(second.requests[3]).match(/Background job bg-2/g)?.length, 1);
});

test(`RPC mode shows the widget while a job runs, clears it, and delivers the follow-up (${PI_HOSTS.legacy.label})`, async (t) => {
	const host = PI_HOSTS.legacy;
	const { agentDir, cwd, pids } = workspace(t);
	const server = await startFakeOpenAIServer([
		{ toolCalls: [{ name: "bash", arguments: { command: "echo tick; sleep 1.5; echo rpc-done", background: true } }] },
		(req) => {
			pids.push(pidOf(results(req).at(-1) ?? ""));
			return { text: "started" };
		},
		{ text: "noted" },
	]);
	t.after(() => server.close());
	const pi = startPi({ host, agentDir, baseUrl: server.baseUrl, cwd, args: ["--no-session", "--mode", "rpc"] });
	t.after(() => pi.kill());
	pi.send({ id: "1", type: "prompt", message: "start it" });
	const widget = await pi.waitForEvent("the widget", (e) => e.method === "setWidget" && Array.isArray(e.widgetLines));
	assert.equal(widget.type, "extension_ui_request");
	assert.equal(widget.widgetKey, "shell-bg");
	assert.equal(widget.widgetPlacement, "aboveEditor");
	assert.match((widget.widgetLines as string[])[0], /^⟳ bg-1 +\S+ +echo tick; sleep 1\.5; echo rpc-done/);
	await pi.waitForEvent("the widget to clear", (e) => e.method === "setWidget" && e.widgetLines === undefined);
	await until("the follow-up turn", () => server.requests.length === 3);
	pi.send({ id: "2", type: "prompt", message: "/shell-bg" });
	const listed = await pi.waitForEvent("the /shell-bg listing", (e) => e.type === "message_end" && (e.message as { customType?: string }).customType === "shell-bg-listing");
	assert.match(String((listed.message as { content: string }).content), /^id +state +exit +runtime +command +last output\nbg-1 +exited +0 .* rpc-done$/);
	pi.send({ id: "3", type: "bash", command: "echo user-bang" });
	const bang = await pi.waitForEvent("the ! command", (e) => e.type === "response" && e.id === "3");
	assert.equal((bang.data as { output: string }).output, "user-bang\n", "user_bash keeps Pi's behaviour");
	pi.closeStdin();
	const exit = await pi.exited;
	assert.equal(exit.timedOut, false);
	assert.equal(server.requests.length, 3, "one follow-up, no prompt for the command");
	assert.match(requestText(server.requests[2]), /Background job bg-1 exited with code 0 after .*Command: echo tick; sleep 1\.5; echo rpc-done.*tick\\nrpc-done/);
	const widgetCalls = pi.events().filter((e) => e.method === "setWidget");
	assert.ok(widgetCalls.every((e) => e.widgetKey === "shell-bg"));
});

for (const host of [PI_HOSTS.legacy, PI_HOSTS.current] as PiHost[]) {
	test(`a foreground "sleep 30 &" returns at once, is tracked as a job, listed, and killed at quit (${host.label})`, { skip: !hostAvailable(host) }, async (t) => {
		const { agentDir, cwd, pids } = workspace(t);
		let sleeper = 0;
		const server = await startFakeOpenAIServer([
			{ toolCalls: [{ name: "bash", arguments: { command: "sleep 30 & echo $! > sleeper.pid; echo started" } }] },
			(req) => {
				sleeper = Number(fs.readFileSync(path.join(cwd, "sleeper.pid"), "utf8"));
				pids.push(sleeper);
				return { toolCalls: [{ name: "shell_status", arguments: {} }] };
			},
			{ text: "done" },
		]);
		t.after(() => server.close());
		const run = await runPiToExit({ host, agentDir, baseUrl: server.baseUrl, cwd, args: ["--no-session", "--mode", "json", "start it"], timeoutMs: 40_000 });
		assert.equal(run.code, 0, run.stderr);
		const [fg, table] = results(server.requests[2]);
		assert.equal(fg, `started\n\n1 process it started is still running (pid ${sleeper}: sleep 30) — tracked as bg-1; read it with shell_status, stop it with shell_kill`);
		assert.match(table, new RegExp(`^bg-1 +running +- .*sleep 30 & echo`, "m"), table);
		assert.equal(alive(sleeper), false, "quit (onQuit: kill) stopped what the command left running");
	});
}

test(`Pi 1.6's bash contract: the output schema is offered and every result's structuredContent fits it (${PI_HOSTS.current.label})`, { skip: !hostAvailable(PI_HOSTS.current) }, async (t) => {
	const host = PI_HOSTS.current;
	const { agentDir, cwd, pids } = workspace(t);
	const server = await startFakeOpenAIServer([
		{ toolCalls: [{ name: "bash", arguments: { command: "echo plain" } }] },
		{ toolCalls: [{ name: "bash", arguments: { command: "echo serving; sleep 300", background: true } }] },
		{ toolCalls: [{ name: "bash", arguments: { command: "sleep 300 & echo $! > left.pid; exit 3" } }] },
		(req) => {
			pids.push(...results(req).map(pidOf).filter((p) => p > 1), Number(fs.readFileSync(path.join(cwd, "left.pid"), "utf8")));
			return { text: "done" };
		},
	]);
	t.after(() => server.close());
	// codemode is registered inactive: --tools turns it on next to our tools.
	const run = await runPiToExit({ host, agentDir, baseUrl: server.baseUrl, cwd, args: ["--no-session", "--mode", "json", "--tools", "bash,shell_status,shell_kill,codemode", "go"], timeoutMs: 40_000 });
	assert.equal(run.code, 0, run.stderr);
	// Codemode describes each tool's result from its outputSchema: a text-only bash would "resolve to a string".
	const bash = (server.requests[0].tools ?? []).find((x) => x.function.name === "bash");
	assert.ok(bash, "bash is offered");
	assert.match(bash.function.description ?? "", /resolves to `\{ output, truncated, full_output_path\?, exit_code, wall_time_seconds, background_job_id\? \}`/, "the structured output is described to the model");
	const ends = run.events.filter((e) => e.type === "tool_execution_end").map((e) => e.result as { structuredContent?: Record<string, unknown>; content: Array<{ text: string }> });
	assert.equal(ends.length, 3);
	const fits = (s: Record<string, unknown> | undefined) => {
		assert.ok(s, "structuredContent present");
		assert.equal(typeof s.output, "string");
		assert.equal(typeof s.truncated, "boolean");
		assert.equal(typeof s.wall_time_seconds, "number");
		assert.ok(s.exit_code === null || typeof s.exit_code === "number", String(s.exit_code));
		for (const k of Object.keys(s)) assert.ok(["output", "truncated", "full_output_path", "exit_code", "wall_time_seconds", "background_job_id"].includes(k), k);
		return s;
	};
	const [plain, started, left] = ends.map((r) => fits(r.structuredContent));
	assert.deepEqual([plain.output, plain.exit_code, plain.background_job_id], ["plain\n", 0, undefined]);
	assert.deepEqual([started.exit_code, started.background_job_id], [null, "bg-1"]);
	assert.match(String(started.output), /Started bg-1 in the background/);
	assert.deepEqual([left.exit_code, left.background_job_id], [3, "bg-2"]);
	assert.match(String(left.output), /tracked as bg-2/);
});

for (const host of [PI_HOSTS.legacy, PI_HOSTS.current] as PiHost[]) {
	test(`a user's /shell-bg kill reaches the model in order with the follow-ups; listings never do (${host.label})`, { skip: !hostAvailable(host) }, async (t) => {
		const { agentDir, cwd, pids } = workspace(t);
		const server = await startFakeOpenAIServer([
			{ toolCalls: [{ name: "bash", arguments: { command: "echo first; sleep 60", background: true } }] },
			// Ends only once the test says so: after the user's kill of bg-1.
			{ toolCalls: [{ name: "bash", arguments: { command: "while [ ! -e go ]; do sleep 0.05; done; echo later-done", background: true } }] },
			(req) => {
				pids.push(...results(req).map(pidOf));
				return { text: "both started" };
			},
			{ text: "noted" },
		]);
		t.after(() => server.close());
		const pi = startPi({ host, agentDir, baseUrl: server.baseUrl, cwd, args: ["--no-session", "--mode", "rpc"] });
		t.after(() => pi.kill());
		pi.send({ id: "1", type: "prompt", message: "start them" });
		await pi.waitForEvent("the first answer", (e) => e.type === "agent_end");
		pi.send({ id: "2", type: "prompt", message: "/shell-bg" });
		await pi.waitForEvent("the listing", (e) => e.type === "message_end" && (e.message as { customType?: string }).customType === "shell-bg-listing");
		pi.send({ id: "3", type: "prompt", message: "/shell-bg kill bg-1" });
		await pi.waitForEvent("the kill notice", (e) => e.method === "notify" && /^bg-1: stopped/.test(String(e.message)));
		assert.equal(alive(pids[0]), false);
		fs.writeFileSync(path.join(cwd, "go"), "");
		await until("bg-2's follow-up turn", () => server.requests.length === 4, 15_000);
		const seen = requestText(server.requests[3]);
		const stopped = seen.indexOf("The user stopped background job bg-1");
		const ended = seen.indexOf("Background job bg-2 exited with code 0");
		assert.ok(stopped > 0, "the kill notice reached the model");
		assert.ok(ended > stopped, "the kill, which came first, is told first");
		assert.equal(seen.match(/The user stopped background job bg-1/g)?.length, 1);
		assert.doesNotMatch(seen, /id +state +exit +runtime/, "the listing was the user's");
		pi.closeStdin();
		assert.equal((await pi.exited).timedOut, false);
		assert.equal(server.requests.length, 4, "the kill notice started no turn of its own");
	});
}
