// The pure parts of shell-bg: text formatting, argument parsing and completion, job directories and ids.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { truncateTail as piTruncateTail } from "@mariozechner/pi-coding-agent";
import {
	completeShellBgArgs,
	cut,
	describeState,
	formatDuration,
	jobTable,
	followHint,
	killLine,
	leftRunningText,
	movedText,
	followUpDisplay,
	followUpText,
	movedPreview,
	jobHeading,
	parseMeta,
	refusalText,
	startedText,
	trimmedNote,
	parseShellBgArgs,
	sanitizeOutput,
	truncateTail,
	widgetLine,
	widgetLines,
	jobRows,
	startedPreview,
	statusDisplay,
	shellBgArgsAt,
	leftRunningPreview,
} from "../extensions/lib/shell/format.ts";
import { visibleWidth } from "@mariozechner/pi-tui";
import { jobDirFor, type ShellJob, type ShellKillReport } from "../extensions/lib/shell/registry.ts";
import { sweepJobDirs } from "../extensions/lib/shell/retention.ts";
import { LogPump } from "../extensions/lib/shell/runner.ts";

function job(over: Partial<ShellJob> = {}): ShellJob {
	return {
		id: "bg-1",
		command: "npm run dev",
		cwd: "/p",
		shell: "/bin/bash",
		logPath: "/p/logs/bg-1.log",
		exitPath: "/p/logs/bg-1.log.exit",
		pid: 4321,
		pgid: 4321,
		state: "running",
		startedAtMs: 0,
		runtimeMs: 12_000,
		logBytes: 0,
		logStart: 0,
		readOffset: 0,
		delivered: false,
		adopted: false,
		killRequested: false,
		timedOut: false,
		tracking: "process-tree",
		alive: [],
		maxLogBytes: 64 * 1024 * 1024,
		logDropped: 0,
		logShift: 0,
		flooding: false,
		...over,
	};
}

test("durations read short and exact", () => {
	assert.deepEqual(
		[0, 850, 4_249, 12_000, 59_999, 185_000, 7_260_000, -5].map(formatDuration),
		["0ms", "850ms", "4.2s", "12s", "59s", "3m 05s", "2h 01m", "0ms"],
	);
});

test("truncateTail is Pi's truncateTail", () => {
	const samples = ["", "a", "a\nb\n", "x".repeat(60_000), `${"line\n".repeat(2500)}tail`, `€${"é".repeat(30_000)}`];
	for (const s of samples) {
		const ours = truncateTail(s, 2000, 51200);
		const pi = piTruncateTail(s, { maxLines: 2000, maxBytes: 51200 });
		assert.deepEqual({ ...ours }, { content: pi.content, truncated: pi.truncated, truncatedBy: pi.truncatedBy, totalLines: pi.totalLines, totalBytes: pi.totalBytes, outputLines: pi.outputLines, outputBytes: pi.outputBytes, lastLinePartial: pi.lastLinePartial });
	}
	fc.assert(
		fc.property(fc.string({ unit: fc.constantFrom("a", "\n", "é", "€", "😀", " ") , maxLength: 400 }), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 4, max: 200 }), (s, lines, bytes) => {
			const ours = truncateTail(s, lines, bytes);
			const pi = piTruncateTail(s, { maxLines: lines, maxBytes: bytes });
			return ours.content === pi.content && ours.truncatedBy === pi.truncatedBy && ours.outputLines === pi.outputLines && ours.lastLinePartial === pi.lastLinePartial;
		}),
	);
});

test("sanitizing removes colours, control characters and redrawn progress", () => {
	assert.equal(sanitizeOutput("\x1b[31mred\x1b[0m\n10%\r50%\r100%\nbell\x07 osc\x1b]0;title\x07end\r\n"), "red\n100%\nbell oscend\n");
	assert.equal(cut("a  b\nc", 10), "a b c");
	assert.equal(cut("abcdefghijk", 5), "abcd…");
});

test("job states are described for the model", () => {
	assert.equal(describeState(job()), "running for 12s");
	assert.equal(describeState(job({ state: "exited", exitCode: 3, runtimeMs: 3200 })), "exited with code 3 after 3.2s");
	assert.equal(describeState(job({ state: "exited", note: "exit file missing" })), "ended (exit code unknown: exit file missing) after 12s");
	assert.equal(describeState(job({ state: "signalled", signal: "SIGTERM", timedOut: true, timeoutMs: 5000 })), "timed out after 5.0s and was stopped (SIGTERM)");
	assert.equal(describeState(job({ state: "signalled", signal: "SIGKILL", killRequested: true })), "was stopped (SIGKILL) after 12s");
	assert.equal(describeState(job({ state: "signalled", signal: "SIGSEGV" })), "was killed by SIGSEGV after 12s");
	assert.match(describeState(job({ state: "lost", note: "pid 4321 now belongs to another process" })), /^was lost \(pid 4321 now belongs to another process\); .* will not be signalled$/);
});

test("the job table aligns its columns", () => {
	const jobs = [job(), job({ id: "bg-12", state: "exited", exitCode: 0, runtimeMs: 3000, command: "make test && make lint" })];
	const last = new Map([["bg-1", "Listening on :3000"], ["bg-12", "ok"]]);
	assert.equal(
		jobTable(jobs, last),
		[
			"id     state    exit  runtime  command                 last output",
			"bg-1   running  -     12s      npm run dev             Listening on :3000",
			"bg-12  exited   0     3.0s     make test && make lint  ok",
		].join("\n"),
	);
	assert.equal(jobTable([], last), "No background jobs in this session.");
});

test("kill reports say what happened", () => {
	const report = (over: Partial<ShellKillReport>): ShellKillReport => ({ outcome: "killed", sentTerm: true, sentKill: false, escapees: [], survivors: [], orphanSweep: true, job: job({ state: "signalled", signal: "SIGTERM" }), ...over });
	assert.equal(killLine(report({}), 3000), "bg-1: stopped with SIGTERM.");
	assert.equal(killLine(report({ sentKill: true, escapees: [77], survivors: [78] }), 3000), "bg-1: did not stop on SIGTERM within 3.0s; killed with SIGKILL. Also signalled 1 process that had left its group (pids 77). WARNING: still alive afterwards: pids 78.");
	assert.equal(killLine(report({ outcome: "already-ended", job: job({ state: "exited", exitCode: 0, runtimeMs: 1000 }) }), 3000), "bg-1: had already ended (exited with code 0 after 1.0s); nothing was signalled.");
	assert.equal(killLine(report({ outcome: "refused", job: job({ state: "lost", note: "pid reused" }) }), 3000), "bg-1: not signalled: pid reused (lost).");
});

test("widget lines cut the command and the last output line to the width", () => {
	assert.equal(widgetLine(job({ command: "x".repeat(50) }), "y".repeat(70)), `⟳ bg-1   12s  ${"x".repeat(33)}…  › ${"y".repeat(47)}…`);
	assert.equal(widgetLine(job({ command: "x".repeat(50) }), "y".repeat(70)).length, 100);
	assert.equal(widgetLine(job(), ""), "⟳ bg-1   12s  npm run dev");
	assert.equal(widgetLine(job(), "Listening on :3000"), "⟳ bg-1   12s  npm run dev  › Listening on :3000", "a short command keeps only its own width");
});

test("a widget row is one line at any width, and ids and elapsed times line up", () => {
	const rows = [
		{ job: job({ id: "bg-9", runtimeMs: 3_100, command: `npm run dev -- --port 3000 ${"--flag ".repeat(20)}` }), last: `GET /api/items 200 ${"x".repeat(300)}` },
		{ job: job({ id: "bg-10", runtimeMs: 14_000, flooding: true, logDropped: 5 * 1024 * 1024 }), last: "出力".repeat(80) },
		{ job: job({ id: "bg-11", runtimeMs: 185_000, leaderEndedAtMs: 1, alive: [{ pid: 1, command: "x" }] }), last: "tick" },
	];
	for (const width of [40, 78, 80, 138, 140]) {
		const lines = widgetLines(rows, width);
		assert.equal(lines.length, 3);
		for (const l of lines) assert.ok(visibleWidth(l) <= width, `${visibleWidth(l)} > ${width}: ${l}`);
		// The command starts in the same column in every row (where there is room for it).
		const at = lines.map((l) => l.search(/(npm run dev)/));
		if (width >= 78) assert.deepEqual(new Set(at).size, 1, `${width}:\n${lines.join("\n")}`);
	}
	const [a, b, c] = widgetLines(rows, 140);
	assert.match(a, /^⟳ bg-9     3\.1s  npm run dev/);
	assert.match(b, /^⟳ bg-10     14s  npm run dev/);
	assert.match(c, /^⟳ bg-11  3m 05s  npm run dev/);
	assert.match(widgetLines(rows, 80)[0], /  › GET \/api\/items 200 x+…$/, "80 columns still show some of the last output");
});

test("/shell-bg arguments parse and complete", () => {
	assert.deepEqual(parseShellBgArgs(""), { kind: "list" });
	assert.deepEqual(parseShellBgArgs(" kill  bg-2 "), { kind: "kill", target: "bg-2" });
	assert.deepEqual(parseShellBgArgs("kill all"), { kind: "kill", target: "all" });
	assert.deepEqual(parseShellBgArgs("logs bg-1"), { kind: "logs", id: "bg-1" });
	assert.deepEqual(parseShellBgArgs("clear"), { kind: "clear" });
	assert.deepEqual(parseShellBgArgs("kill"), { kind: "usage", problem: "kill needs a job id" });
	assert.deepEqual(parseShellBgArgs("stop bg-1"), { kind: "usage", problem: 'unknown subcommand "stop"' });

	const jobs = [job(), job({ id: "bg-2", state: "exited", exitCode: 0 }), job({ id: "bg-10" })];
	assert.deepEqual(completeShellBgArgs("", jobs)?.map((c) => c.value), ["list", "kill ", "logs ", "clear"]);
	assert.deepEqual(completeShellBgArgs("k", jobs)?.map((c) => c.value), ["kill "]);
	assert.deepEqual(completeShellBgArgs("kill ", jobs)?.map((c) => c.value), ["kill bg-1", "kill bg-10", "kill all"], "only running jobs can be killed");
	assert.deepEqual(completeShellBgArgs("kill bg-", jobs)?.map((c) => c.value), ["kill bg-1", "kill bg-10"]);
	// Typed in full: no popup, so the first Enter runs it (bg-10 too would make Enter pick a job not typed).
	assert.equal(completeShellBgArgs("kill bg-1", jobs), null);
	assert.equal(completeShellBgArgs("logs bg-2", jobs), null);
	assert.equal(completeShellBgArgs("kill all", jobs), null);
	assert.deepEqual(completeShellBgArgs("kill bg-2", jobs), null, "an ended job is no kill candidate");
	assert.deepEqual(completeShellBgArgs("logs bg-", jobs)?.map((c) => c.value), ["logs bg-1", "logs bg-2", "logs bg-10"]);
	assert.equal(completeShellBgArgs("logs bg-9", jobs), null);
	assert.equal(completeShellBgArgs("kill bg-1 x", jobs), null);
});

test("job meta: foreground/background, tolerant of foreign text", () => {
	assert.deepEqual(parseMeta('{"mode":"fg"}'), { mode: "fg" });
	assert.deepEqual(parseMeta('{"mode":"bg","auto":true}'), { mode: "bg", auto: true });
	assert.deepEqual(parseMeta("garbage"), { mode: "bg" });
	assert.deepEqual(parseMeta(undefined), { mode: "bg" });
});

test("job directories sit next to the session file, or under the agent dir by session id", () => {
	assert.equal(jobDirFor({ sessionFile: "/a/sessions/--p--/2026_abc.jsonl", sessionId: "abc", agentDir: "/ag" }), "/a/sessions/--p--/2026_abc.shell-bg");
	assert.equal(jobDirFor({ sessionFile: undefined, sessionId: "01a2-x/y", agentDir: "/ag" }), "/ag/pi-utils/shell-bg/01a2-x_y");
});

test("a job its main process left running says what is still alive, and how it ended at last", () => {
	const left = job({ leaderEndedAtMs: 5_000, leaderExitCode: 0, alive: [{ pid: 1234, command: "sleep 77" }] });
	assert.equal(describeState(left), "running for 12s; its main process exited with code 0; 1 process it started is still running (pid 1234: sleep 77)");
	// No brackets in brackets, and the dead main process's pid is not where the line ends.
	assert.equal(jobHeading(left), "bg-1 running for 12s: npm run dev\nIts main process (pid 4321) exited with code 0; 1 process it started is still running (pid 1234: sleep 77).");
	assert.equal(jobHeading(job()), "bg-1 running for 12s (pid 4321): npm run dev");
	assert.match(widgetLine(left, "tick"), /^⟳ bg-1   12s  npm run dev  · main process ended, 1 left  › tick$/, "the widget marks it");
	assert.doesNotMatch(widgetLine(job(), "tick"), /main process/);
	assert.equal(leftRunningText({ ...left, id: "bg-3" }), "1 process it started is still running (pid 1234: sleep 77) — tracked as bg-3; read it with shell_status, stop it with shell_kill");
	// Collapsed, one short line under the output (the sentence wrapped at 80 columns).
	assert.equal(leftRunningPreview(`done\n\n${leftRunningText({ ...left, id: "bg-3" })}`), "done\n[1 process left running as bg-3]");
	assert.equal(leftRunningPreview(`x\n\n${leftRunningText({ ...left, id: "bg-4" }, { status: false, kill: false })}`), "x\n[1 process left running as bg-4]");
	const two = job({ id: "bg-5", leaderEndedAtMs: 1, alive: [{ pid: 1, command: "a" }, { pid: 2, command: "b" }] });
	assert.equal(leftRunningPreview(`y\n\n${leftRunningText(two)}`), "y\n[2 processes left running as bg-5]");
	assert.equal(leftRunningPreview("plain output"), "plain output");
	const many = job({ leaderEndedAtMs: 5_000, leaderSignal: "SIGTERM", alive: [1, 2, 3, 4, 5].map((pid) => ({ pid, command: "" })) });
	assert.equal(describeState(many), "running for 12s; its main process was killed by SIGTERM; 5 processes it started are still running (pid 1, pid 2, pid 3, and 2 more)");
	const ended = job({ state: "exited", exitCode: 0, leaderExitCode: 0, leaderEndedAtMs: 5_000, endedAtMs: 8_000, runtimeMs: 8_000 });
	assert.equal(describeState(ended), "exited with code 0 after 8.0s (its main process exited with code 0 earlier; what it started ran on)");
	assert.equal(describeState(job({ state: "exited", exitCode: 0, leaderExitCode: 0, leaderEndedAtMs: 8_000, endedAtMs: 8_000, runtimeMs: 8_000 })), "exited with code 0 after 8.0s");
});

test("hints name shell_status and shell_kill only when those tools are enabled", () => {
	const j = job({ leaderEndedAtMs: 1, leaderExitCode: 0, alive: [{ pid: 9, command: "sleep 9" }] });
	const texts = (tools: { status: boolean; kill: boolean }) => [
		followHint("bg-1", tools),
		startedText(j, { headless: true, tools }),
		movedText(j, { afterSec: 5, tools }),
		leftRunningText(j, tools),
		refusalText([j], 1, tools),
	].join("\n");
	const none = texts({ status: false, kill: false });
	assert.doesNotMatch(none, /shell_status|shell_kill/);
	assert.equal(followHint("bg-1", { status: false, kill: false }), "");
	const statusOnly = texts({ status: true, kill: false });
	assert.match(statusOnly, /shell_status/);
	assert.doesNotMatch(statusOnly, /shell_kill/);
	const killOnly = texts({ status: false, kill: true });
	assert.match(killOnly, /shell_kill/);
	assert.doesNotMatch(killOnly, /shell_status/);
	assert.equal(leftRunningText(j, { status: false, kill: false }), "1 process it started is still running (pid 9: sleep 9) — tracked as bg-1");
});

test("the retention sweep removes only our files of old job directories whose session is gone", (t) => {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-sweep-"));
	t.after(() => fs.rmSync(root, { recursive: true, force: true }));
	const sessions = path.join(root, "sessions");
	const agent = path.join(root, "agent");
	const old = Date.now() - 10 * 24 * 3600 * 1000;
	const jobDir = (dir: string, o: { running?: boolean; extra?: string; age?: number } = {}) => {
		fs.mkdirSync(path.join(dir, "logs"), { recursive: true });
		fs.writeFileSync(path.join(dir, "jobs.json"), JSON.stringify({ version: 1, jobs: [{ id: "bg-1", state: o.running ? "running" : "exited" }] }));
		fs.writeFileSync(path.join(dir, "next-id"), "2\n");
		fs.writeFileSync(path.join(dir, "jobs.json.lock"), "");
		fs.writeFileSync(path.join(dir, "logs", "bg-1.log"), "out\n");
		fs.writeFileSync(path.join(dir, "logs", "bg-1.log.exit"), "0\n");
		fs.writeFileSync(path.join(dir, "logs", "bg-1.log.cuts"), Buffer.alloc(48));
		if (o.extra) fs.writeFileSync(path.join(dir, o.extra), "the user's\n");
		const when = new Date(o.age ?? old);
		for (const p of [path.join(dir, "logs", "bg-1.log"), path.join(dir, "logs", "bg-1.log.exit"), path.join(dir, "logs", "bg-1.log.cuts"), path.join(dir, "jobs.json"), path.join(dir, "jobs.json.lock"), path.join(dir, "next-id"), ...(o.extra ? [path.join(dir, o.extra)] : []), path.join(dir, "logs"), dir]) fs.utimesSync(p, when, when);
		return dir;
	};
	fs.mkdirSync(sessions, { recursive: true });
	const current = path.join(sessions, "now.jsonl");
	fs.writeFileSync(current, "");
	const gone = jobDir(path.join(sessions, "gone.shell-bg"));
	const resumable = jobDir(path.join(sessions, "kept.shell-bg"));
	fs.writeFileSync(path.join(sessions, "kept.jsonl"), "");
	const young = jobDir(path.join(sessions, "young.shell-bg"), { age: Date.now() });
	const running = jobDir(path.join(sessions, "running.shell-bg"), { running: true });
	const mixed = jobDir(path.join(sessions, "mixed.shell-bg"), { extra: "notes.txt" });
	const memory = jobDir(path.join(agent, "pi-utils", "shell-bg", "in-memory-id"));
	const mine = jobDir(path.join(sessions, "now.shell-bg"));
	const removed = sweepJobDirs({ sessionFile: current, agentDir: agent, current: mine, days: 7 });
	assert.deepEqual(removed.sort(), [gone, memory].sort());
	for (const d of [resumable, young, running, mine]) assert.ok(fs.existsSync(path.join(d, "logs", "bg-1.log")), d);
	assert.deepEqual(fs.readdirSync(mixed), ["notes.txt"], "a file we did not write keeps itself and its directory");
	assert.ok(fs.existsSync(current) && fs.existsSync(path.join(sessions, "kept.jsonl")));
});

test("a trimmed log is said in the status note, the follow-up and the widget", () => {
	const j = job({ logDropped: 3 * 1024 * 1024 * 1024, maxLogBytes: 64 * 1024 * 1024 });
	assert.equal(trimmedNote(j), "Its log outgrew shell.maxLogBytes (64.0MB): it keeps the first 1MB and the newest output; 3072.0MB in between were dropped (a marker line in the log says where).");
	assert.match(followUpText({ ...j, state: "exited", exitCode: 0 }, "x\n"), /\nIts log outgrew shell\.maxLogBytes/);
	assert.match(widgetLine(j, "x"), /  ⚠ log cut, 3072\.0MB dropped/);
	assert.match(widgetLine({ ...j, flooding: true }, "x"), /  ⚠ flooding its log \(log cut, 3072\.0MB dropped\)/);
	assert.match(widgetLine(job({ flooding: true }), "x"), /  ⚠ flooding its log  ›/);
	assert.equal(trimmedNote(job()), "");
	assert.doesNotMatch(widgetLine(job(), "x"), /⚠/);
});

test("the widget uses the terminal's width; a job Pi's quit stopped says so after a resume", () => {
	const long = job({ command: `npm run dev -- --port 3000 ${"--flag ".repeat(20)}` });
	const narrow = widgetLine(long, "y".repeat(200), 100);
	const wide = widgetLine(long, "y".repeat(200), 160);
	assert.equal(narrow.length, 100);
	assert.equal(wide.length, 160);
	assert.ok(wide.includes(long.command.slice(0, 55)), wide);
	const quit = job({ state: "signalled", signal: "SIGTERM", killRequested: true, meta: JSON.stringify({ mode: "bg", stoppedAtQuit: true }) });
	assert.equal(describeState(quit), "was stopped (SIGTERM) when Pi quit, after 12s");
	assert.equal(describeState({ ...quit, meta: JSON.stringify({ mode: "bg" }) }), "was stopped (SIGTERM) after 12s");
});

test("a follow-up counts the lines it returns (not the setting), in the singular for one, and its collapsed form agrees", () => {
	const text = followUpText(job({ state: "exited", exitCode: 0 }), "a\nb\nc\n");
	assert.equal(followUpDisplay(text, true), text);
	assert.match(text, /\nLast 3 lines of output \(full log: \/p\/logs\/bg-1\.log\):\na\nb\nc$/);
	assert.equal(followUpDisplay(text, false, "ctrl+o to expand"), "Background job bg-1 exited with code 0 after 12s.\nCommand: npm run dev\na\nb\nc", "short output is shown, the log path is not");
	const one = followUpText(job({ state: "exited", exitCode: 0 }), "only\n");
	assert.match(one, /\nLast 1 line of output \(full log: [^)]*\):\nonly$/);
	assert.equal(followUpDisplay(one, false), "Background job bg-1 exited with code 0 after 12s.\nCommand: npm run dev\nonly");
	const quiet = followUpText(job({ state: "exited", exitCode: 0 }), "");
	assert.equal(followUpDisplay(quiet, false), "Background job bg-1 exited with code 0 after 12s.\nCommand: npm run dev\n(no output)");
	const long = followUpText(job({ state: "exited", exitCode: 1 }), Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n"));
	assert.equal(
		followUpDisplay(long, false, "ctrl+o to expand"),
		"Background job bg-1 exited with code 1 after 12s.\nCommand: npm run dev\n... (15 earlier lines, ctrl+o to expand)\nline 16\nline 17\nline 18\nline 19\nline 20",
		"the newest lines, as Pi's bash preview",
	);
});

test("a background start's collapsed view is the line that says which job started; the model keeps the log path and hints", () => {
	const text = startedText(job({ id: "bg-4", pid: 4249 }), { timeoutSec: 30, headless: false });
	assert.match(text, /\nLog: \/p\/logs\/bg-1\.log\n/);
	assert.equal(startedPreview(text), "Started bg-4 in the background (pid 4249).\nTimeout: it is stopped after 30s.");
	assert.equal(startedPreview(startedText(job(), { headless: false })), "Started bg-1 in the background (pid 4321).");
	assert.equal(startedPreview("plain"), "plain");
});

test("a job's status, collapsed, ends on its newest output", () => {
	const out = Array.from({ length: 12 }, (_, i) => `out ${i + 1}`).join("\n");
	const text = `bg-2 running for 3.0s (pid 9): make\n\nOutput since the last read:\n${out}\n\nblank above\n\nRead its new output with shell_status {"id":"bg-2"}; stop it.\n\nLog: /p/logs/bg-2.log`;
	assert.equal(statusDisplay(text, true), text);
	assert.equal(statusDisplay(text, false, "ctrl+o to expand"), "bg-2 running for 3.0s (pid 9): make\n... (9 earlier lines, ctrl+o to expand)\nout 10\nout 11\nout 12\n\nblank above");
	const none = "bg-2 exited with code 0 after 3.0s: make\n\n(no new output since the last read)\n\nLog: /p/logs/bg-2.log";
	assert.equal(statusDisplay(none, false), "bg-2 exited with code 0 after 3.0s: make\n(no new output since the last read)");
	const cut = `bg-2 exited with code 0 after 3.0s: make\n\nLast lines of output:\n${out}\n\n[Showing the last 12 lines (80B) of 2.0KB. Full output: /tmp/x.log]\n\nLog: /p/logs/bg-2.log`;
	assert.match(statusDisplay(cut, false), /\nout 12$/, "the truncation footer is in the expanded view");
});

test("the job table fits the width it is drawn at: the command and the last output give way", () => {
	const jobs = [
		job({ id: "bg-1", command: `npm run dev -- --port 3000 ${"--flag ".repeat(10)}` }),
		job({ id: "bg-10", state: "signalled", signal: "SIGTERM", timedOut: true, runtimeMs: 185_000, command: "make test" }),
	];
	const rows = jobRows(jobs, new Map([["bg-1", `GET /api 200 ${"x".repeat(100)}`], ["bg-10", "ok"]]));
	for (const width of [60, 78, 80, 138, 140]) {
		const lines = jobTable(rows, undefined, width).split("\n");
		assert.equal(lines.length, 3);
		for (const l of lines) assert.ok(visibleWidth(l) <= width, `${visibleWidth(l)} > ${width}: ${l}`);
		assert.match(lines[0], /^id +state +exit +runtime +command +last output$/, "the headings are whole");
		assert.match(lines[1], /^bg-1 +running +- +12s +npm run/);
		const col = lines[0].indexOf("last output");
		assert.equal(lines[2].slice(col), "ok", `the last column lines up at ${width}`);
	}
	const commandShown = (width: number) => (jobTable(rows, undefined, width).split("\n")[1].match(/npm run dev[^…]*/) ?? [""])[0].length;
	assert.ok(commandShown(140) > commandShown(80) + 10, "a wide terminal shows more");
	const cjk = jobTable(jobRows([job()], new Map([["bg-1", "出力".repeat(60)]])), undefined, 80).split("\n");
	for (const l of cjk) assert.ok(visibleWidth(l) <= 80, `${visibleWidth(l)}: ${l}`);
	assert.equal(jobTable(rows), jobTable(jobs, new Map([["bg-1", `GET /api 200 ${"x".repeat(100)}`], ["bg-10", "ok"]])), "rows or jobs: one table");
});

test("Tab in /shell-bg's arguments is for the command, not for file paths", () => {
	assert.equal(shellBgArgsAt(["/shell-bg kill "], 0, 15), "kill ");
	assert.equal(shellBgArgsAt(["  /shell-bg "], 0, 12), "");
	assert.equal(shellBgArgsAt(["/shell-bg"], 0, 9), undefined, "the name is still being typed");
	assert.equal(shellBgArgsAt(["/shell-bgx kill"], 0, 15), undefined);
	assert.equal(shellBgArgsAt(["look at ./src", "/shell-bg kill"], 1, 14), undefined);
	assert.equal(completeShellBgArgs("kill ", [job({ state: "exited", exitCode: 0 })]), null, "no running job: nothing to offer");
});
test("a moved command's collapsed preview keeps its output and one short line; the model's notice is one line", () => {
	const moved = movedText(job({ id: "bg-2", pid: 77 }), { afterSec: 10, timeoutSec: 30 });
	assert.doesNotMatch(moved, /\n/);
	assert.match(moved, /^\[Still running after 10s: moved to the background as bg-2 \(pid 77\); .* Log: \/p\/logs\/bg-1\.log\. Its timeout still applies: .* You will get a message when it ends\.\]$/);
	const text = `one\ntwo\nthree\n\n${moved}`;
	assert.equal(movedPreview(text), "one\ntwo\nthree\n[moved to the background as bg-2 after 10s]");
	assert.equal(movedPreview("plain output"), "plain output");
});

test("the foreground log pump reads again when the log was cut between following the cuts and reading", (t) => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-pump-"));
	t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
	const log = path.join(dir, "bg-1.log");
	const lines = (from: number, n: number) => Array.from({ length: n }, (_, i) => `line-${String(from + i).padStart(4, "0")}\n`).join("");
	const written = lines(0, 200);
	fs.writeFileSync(log, written.slice(0, 1000));
	let cuts = { logTrimAt: null as number | null, logShift: 0 };
	let cutNext = false;
	const got: Buffer[] = [];
	const pump = new LogPump(log, 0, (b) => got.push(Buffer.from(b)), () => {
		const now = { ...cuts };
		if (cutNext) {
			// The log pump cuts right after these offsets were read: 500 bytes go at 100, a marker is written there.
			cutNext = false;
			const old = fs.readFileSync(log, "utf8");
			fs.writeFileSync(log, `${old.slice(0, 100)}[cut]\n${old.slice(606)}`);
			cuts = { logTrimAt: 100, logShift: 500 };
		}
		return now;
	});
	pump.drain(1 << 20);
	fs.appendFileSync(log, written.slice(1000));
	cutNext = true;
	pump.drain(1 << 20);
	pump.stop();
	assert.equal(Buffer.concat(got).toString(), written, "every byte once, in order");
	assert.equal(pump.position, 1500);
});
