// The session-level job logic (extensions/lib/shell/jobs.ts), the bash backend (runner.ts) and the
// no-addon fallback registry, on real processes and the real native registry (no Pi session).
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { native } from "./helpers/native.ts";
import { DEFAULT_SETTINGS, type ShellSettings } from "../extensions/lib/settings.ts";
import { openFallbackRegistry } from "../extensions/lib/shell/fallback.ts";
import { SessionJobs, type JobsHost } from "../extensions/lib/shell/jobs.ts";
import type { ShellRegistry, ShellJob } from "../extensions/lib/shell/registry.ts";
import { jobOperations, type RunOutcome } from "../extensions/lib/shell/runner.ts";
import { alive, until } from "./helpers/run-command.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Recorded {
	host: JobsHost;
	deliveries: Array<{ id: string; text: string; how: string }>;
	canDeliver: { value: boolean };
}

function recordingHost(): Recorded {
	const deliveries: Recorded["deliveries"] = [];
	const canDeliver = { value: true };
	return { deliveries, canDeliver, host: { canDeliver: () => canDeliver.value, deliver: (job, text, how) => void deliveries.push({ id: job.id, text, how }), changed: () => {} } };
}

const settings = (over: Partial<ShellSettings> = {}) => () => ({ ...DEFAULT_SETTINGS.shell, killGraceMs: 300, ...over });

/** A job dir with a registry (native unless told otherwise); running jobs are killed and the dir removed afterwards. */
function setup(t: TestContext, registry: "native" | "fallback" = "native"): { dir: string; reg: ShellRegistry } {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-jobs-"));
	const reg: ShellRegistry = registry === "native" ? native.openShellRegistry(path.join(dir, "jobs.json")) : openFallbackRegistry(path.join(dir, "jobs.json"));
	t.after(async () => {
		reg.unwatch();
		for (const j of reg.list()) if (j.state === "running") await reg.kill(j.id, { graceMs: 100 });
		fs.rmSync(dir, { recursive: true, force: true });
	});
	return { dir, reg };
}

function attach(reg: ShellRegistry, dir: string, rec: Recorded, over: Partial<ShellSettings> = {}): SessionJobs {
	const jobs = new SessionJobs(reg, dir, settings(over), rec.host);
	reg.watch((job) => jobs.onEnded(job));
	return jobs;
}

const bg = (jobs: SessionJobs, dir: string, command: string, timeoutMs?: number): ShellJob => jobs.spawn({ command, cwd: dir, shell: "/bin/bash", mode: "bg", timeoutMs });

test("each ending is announced once: never for a foreground job, not after shell_status showed it, once across a reload", async (t) => {
	const { dir, reg } = setup(t);
	const rec = recordingHost();
	const a = attach(reg, dir, rec);

	const fg = a.spawn({ command: "exit 2", cwd: dir, shell: "/bin/bash", mode: "fg" });
	assert.deepEqual(a.visible().map((j) => j.id), [], "a foreground job is invisible to the model");
	await reg.wait(fg.id, { timeoutMs: 5000 });
	await sleep(100);
	a.finishForeground(fg.id);
	assert.equal(reg.get(fg.id), null);
	assert.equal(fs.existsSync(fg.logPath), false, "its log is deleted");

	const b = bg(a, dir, "echo b-out; exit 3");
	await until("bg's follow-up", () => rec.deliveries.length === 1);
	assert.equal(rec.deliveries[0].id, b.id);
	assert.equal(rec.deliveries[0].how, "followUp");
	assert.equal(rec.deliveries[0].text, `Background job ${b.id} exited with code 3 after ${/after (\S+)\./.exec(rec.deliveries[0].text)![1]}.\nCommand: echo b-out; exit 3\nLast 1 line of output (full log: ${b.logPath}):\nb-out`);

	const c = bg(a, dir, "sleep 0.3; exit 4");
	const status = await a.status({ id: c.id, wait: 5 });
	assert.match(status.text, new RegExp(`^${c.id} exited with code 4 after `));
	await sleep(200);
	assert.equal(rec.deliveries.length, 1, "shell_status showed the ending: no follow-up");

	// /reload: the old instance stops listening before the job ends; the new one announces it once.
	const d = bg(a, dir, "sleep 0.2; exit 6");
	a.detach();
	await reg.wait(d.id, { timeoutMs: 5000 });
	await sleep(100);
	assert.equal(rec.deliveries.length, 1, "a detached instance announces nothing");
	const rec2 = recordingHost();
	const b2 = attach(reg, dir, rec2);
	b2.announcePending("followUp");
	b2.announcePending("followUp");
	a.announcePending("followUp");
	assert.deepEqual(rec2.deliveries.map((x) => x.id), [d.id]);
	assert.equal(rec.deliveries.length, 1);
	assert.match(rec2.deliveries[0].text, /exited with code 6/);
});

test("nothing is claimed where it cannot be delivered (print mode after its last turn)", async (t) => {
	const { dir, reg } = setup(t);
	const rec = recordingHost();
	rec.canDeliver.value = false;
	const jobs = attach(reg, dir, rec);
	const j = bg(jobs, dir, "exit 0");
	await reg.wait(j.id, { timeoutMs: 5000 });
	await sleep(100);
	assert.equal(rec.deliveries.length, 0);
	assert.equal(reg.get(j.id)!.delivered, false, "left for a resumed session to report");
	rec.canDeliver.value = true;
	jobs.announcePending("nextTurn");
	assert.deepEqual(rec.deliveries.map((x) => [x.id, x.how]), [[j.id, "nextTurn"]]);
});

test("the limit refuses by name; kill all reports each job; a job the user stops is told as a notice in order", async (t) => {
	const { dir, reg } = setup(t);
	const rec = recordingHost();
	const jobs = attach(reg, dir, rec, { maxBackgroundJobs: 2 });
	assert.equal(jobs.refusal(), undefined);
	const one = bg(jobs, dir, "sleep 60");
	const two = bg(jobs, dir, "trap '' TERM; sleep 60");
	assert.match(jobs.refusal()!, new RegExp(`^Not started: 2 background jobs are already running.*\\n${one.id} \\(.*\\): sleep 60\\n${two.id} \\(.*\\): trap '' TERM; sleep 60\\n`));
	await sleep(100); // let the trap be installed
	const slow: string[] = [];
	const killed = await jobs.kill("all", "user", { onSlow: (text) => slow.push(text), slowMs: 100 });
	assert.deepEqual(slow, [`stopping ${two.id} (SIGTERM, SIGKILL after 300ms)…`], "said once, at once, for the job that ignores SIGTERM only");
	assert.equal(killed.text, `${one.id}: stopped with SIGTERM.\n${two.id}: did not stop on SIGTERM within 300ms; killed with SIGKILL.`);
	assert.deepEqual([one.pid, two.pid].map(alive), [false, false]);
	await sleep(100);
	assert.deepEqual(rec.deliveries.map((d) => [d.id, d.how]), [[one.id, "notice"], [two.id, "notice"]]);
	assert.match(rec.deliveries[0].text, /^The user stopped background job bg-1 \(sleep 60\): it was stopped \(SIGTERM\) after /);
	assert.equal((await jobs.kill("all", "model")).text, "No running background jobs.");
	await assert.rejects(jobs.kill("bg-99", "model"), /^Error: Unknown job: bg-99\. Jobs in this session: bg-1, bg-2\.$/);
	assert.deepEqual(jobs.clear(), [one.id, two.id]);
	assert.equal(fs.existsSync(one.logPath), false, "clear deletes the logs");
	assert.equal(jobs.table().text, "No background jobs in this session.");
	assert.equal(bg(jobs, dir, "true").id, "bg-3", "ids are not reused after a clear");
});

test("shell_status caps long output like bash and spills the whole range to a temp file", async (t) => {
	const { dir, reg } = setup(t);
	const jobs = attach(reg, dir, recordingHost());
	const j = bg(jobs, dir, "seq 1 5000");
	const first = await jobs.status({ id: j.id, wait: 10 });
	const spill = first.details.fullOutputPath!;
	t.after(() => fs.rmSync(spill, { force: true }));
	assert.match(spill, /\/pi-shell-[0-9a-f]{16}\.log$/);
	assert.match(first.text, /\nOutput since the last read:\n3001\n3002\n[\s\S]*\n5000\n\n\[Showing the last 2000 lines \(9\.8KB\) of 23\.3KB\. Full output: .*pi-shell-.*\.log\]/);
	assert.equal(fs.readFileSync(spill, "utf8"), Array.from({ length: 5000 }, (_, i) => `${i + 1}\n`).join(""));
	assert.match((await jobs.status({ id: j.id })).text, /\(no new output since the last read\)/);
	assert.match((await jobs.status({ id: j.id, lines: 3 })).text, /\nLast lines of output:\n4998\n4999\n5000\n/);
});

test("a finished in-memory session's job directory is tidied away; a session with a running job keeps it", async (t) => {
	const { dir, reg } = setup(t);
	const jobs = attach(reg, dir, recordingHost());
	const j = bg(jobs, dir, "sleep 60");
	jobs.tidy(true);
	assert.ok(fs.existsSync(j.logPath));
	await jobs.killAll();
	jobs.tidy(false);
	assert.ok(fs.existsSync(dir), "a resumable session keeps its finished jobs");
	jobs.tidy(true);
	assert.equal(fs.existsSync(dir), false);
});

test("the bash backend streams raw bytes, and an abort kills the job and leaves nothing behind", async (t) => {
	const { dir, reg } = setup(t);
	const jobs = attach(reg, dir, recordingHost());
	const chunks: Buffer[] = [];
	const ops = jobOperations(jobs, { background: false, resolveShell: () => "/bin/bash" }, {});
	const r = await ops.exec("printf 'a\\377b\\n'; exit 7", dir, { onData: (d) => chunks.push(d) });
	assert.deepEqual(r, { exitCode: 7 });
	assert.deepEqual(Buffer.concat(chunks), Buffer.from([0x61, 0xff, 0x62, 0x0a]), "bytes reach Pi's accumulator undecoded");
	assert.deepEqual(reg.list(), [], "a finished foreground job is forgotten");

	const pidFile = path.join(dir, "pid");
	const ac = new AbortController();
	setTimeout(() => ac.abort(), 300);
	await assert.rejects(ops.exec(`echo $$ > ${pidFile}; sleep 60`, dir, { onData: () => {}, signal: ac.signal }), /^Error: aborted$/);
	assert.equal(alive(Number(fs.readFileSync(pidFile, "utf8"))), false);
	assert.deepEqual(reg.list(), []);
	await assert.rejects(ops.exec("true", path.join(dir, "missing"), { onData: () => {} }), /^Error: Working directory does not exist: .*missing\nCannot execute bash commands\.$/);
});

test("a foreground command that leaves a process running returns at once; the job is tracked until it ends and announced once", async (t) => {
	const { dir, reg } = setup(t);
	const rec = recordingHost();
	const jobs = attach(reg, dir, rec);
	const outcome: RunOutcome = {};
	const ops = jobOperations(jobs, { background: false, resolveShell: () => "/bin/bash" }, outcome);
	const gate = path.join(dir, "gate");
	const command = `echo started; setsid sh -c 'while [ ! -e ${gate} ]; do sleep 0.02; done' >/dev/null 2>&1 & exit 4`;
	const r = await ops.exec(command, dir, { onData: () => {} });
	assert.deepEqual(r, { exitCode: 4 }, "the command's own exit code");
	const job = outcome.leftRunning!;
	assert.ok(job, "the job is handed to the background");
	assert.equal(job.state, "running");
	assert.equal(job.leaderExitCode, 4);
	assert.equal(job.tracking, job.cgroup ? "cgroup" : "process-tree");
	const left = job.alive.find((p) => p.command.includes("sh -c while"));
	assert.ok(left && alive(left.pid), JSON.stringify(job.alive));
	if (job.cgroup) {
		const inCgroup = fs.readFileSync(path.join(job.cgroup, "cgroup.procs"), "utf8").split("\n");
		assert.ok(inCgroup.includes(String(left.pid)), "what it left is in the job's cgroup");
	}
	assert.deepEqual(jobs.running().map((j) => j.id), [job.id], "visible like any background job");
	assert.equal(rec.deliveries.length, 0);
	fs.writeFileSync(gate, "");
	await until("the follow-up", () => rec.deliveries.length === 1);
	assert.match(rec.deliveries[0].text, new RegExp(`^Background job ${job.id} exited with code 4 after \\S+ \\(its main process exited with code 4 earlier; what it started ran on\\)\\.`));
	// The next ending arrives after any repeat of this one would have.
	const next = bg(jobs, dir, "true");
	await until("the next follow-up", () => rec.deliveries.length === 2);
	assert.deepEqual(rec.deliveries.map((d) => d.id), [job.id, next.id]);

	// Killed like any job: nothing it started is left.
	const again: RunOutcome = {};
	await jobOperations(jobs, { background: false, resolveShell: () => "/bin/bash" }, again).exec("sleep 300 & echo $! > pid", dir, { onData: () => {} });
	const sleeper = Number(fs.readFileSync(path.join(dir, "pid"), "utf8"));
	assert.ok(again.leftRunning && alive(sleeper));
	const killed = await jobs.kill(again.leftRunning.id, "model");
	assert.equal(killed.reports[0].outcome, "killed");
	await until("the sleeper to die", () => !alive(sleeper));
});

test("a job Pi's quit stopped is described so when the session is resumed", async (t) => {
	const { dir, reg } = setup(t);
	const jobs = attach(reg, dir, recordingHost());
	const job = bg(jobs, dir, "sleep 300");
	await jobs.killAll();
	const later = new SessionJobs(reg, dir, settings(), recordingHost().host);
	const text = later.logs(job.id);
	assert.match(text, new RegExp(`^${job.id} was stopped \\(SIG(TERM|KILL)\\) when Pi quit, after `), text);
});

test("the fallback registry: output, cursor, timeout, group kill past an ignored SIGTERM, one delivery claim", async (t) => {
	const { dir, reg } = setup(t, "fallback");
	const ended: string[] = [];
	reg.watch((j) => ended.push(`${j.id}:${j.state}`));
	const spawn = (command: string, timeoutMs?: number) => reg.spawn({ command, cwd: dir, logPath: path.join(dir, "logs", `${Math.random()}.log`), ...(timeoutMs ? { timeoutMs } : {}) });

	const a = spawn("echo one; echo two; echo three; exit 3");
	const done = await reg.wait(a.id, { timeoutMs: 5000 });
	assert.deepEqual([done.job.state, done.job.exitCode], ["exited", 3]);
	assert.equal(reg.tail(a.id, { lines: 2 }).text, "two\nthree\n");
	assert.equal(reg.readNew(a.id).text, "one\ntwo\nthree\n");
	assert.equal(reg.readNew(a.id).text, "");
	assert.deepEqual([reg.claimDelivery(a.id), reg.claimDelivery(a.id)], [true, false]);

	const slow = spawn("sleep 60", 200);
	const timedOut = await reg.wait(slow.id, { timeoutMs: 5000 });
	assert.equal(timedOut.job.timedOut, true);
	assert.equal(timedOut.job.state, "signalled");

	const stubborn = spawn("trap '' TERM; sleep 60 & wait");
	await sleep(200);
	const report = await reg.kill(stubborn.id, { graceMs: 200 });
	assert.equal(report.outcome, "killed");
	assert.equal(report.sentKill, true);
	assert.equal(report.job.state, "signalled");
	assert.equal((await reg.kill(stubborn.id)).outcome, "already-ended");
	await until("the watch callbacks", () => ended.length === 3);
	assert.deepEqual(ended.sort(), [`${a.id}:exited`, `${slow.id}:signalled`, `${stubborn.id}:signalled`].sort());
	assert.equal(openFallbackRegistry(reg.sidecarPath), reg, "the same registry after /reload");
});

test("a sidecar write another process kept locked is told once, whichever operation met it", async (t) => {
	const { dir, reg } = setup(t);
	const problems: string[] = [];
	const rec = recordingHost();
	const jobs = attach(reg, dir, { ...rec, host: { ...rec.host, problem: (text) => void problems.push(text) } });
	const one = bg(jobs, dir, "sleep 60");
	const two = bg(jobs, dir, "sleep 60");
	assert.deepEqual(problems, [], "no problem while nobody holds the lock");
	// A real second process holds the sidecar's lock (as a stuck Pi would) for longer than the registry waits.
	const { spawn } = await import("node:child_process");
	const holder = spawn("flock", [path.join(dir, "jobs.json.lock"), "sh", "-c", "echo locked; sleep 30"], { stdio: ["ignore", "pipe", "ignore"] });
	t.after(() => holder.kill("SIGKILL"));
	await new Promise<void>((resolve) => holder.stdout!.once("data", () => resolve()));
	await jobs.kill(one.id, "model"); // a non-spawn write
	assert.equal(problems.length, 1, JSON.stringify(problems));
	assert.match(problems[0], /jobs\.json\.lock is held by another process for more than 2 s; the job registry was not updated/);
	await jobs.kill(two.id, "model");
	assert.equal(problems.length, 1, "the same problem is told once");
	holder.kill("SIGKILL");
	assert.deepEqual([one.pid, two.pid].map(alive), [false, false], "the kills themselves happened");
});

test("job ids a model saw never repeat, after a clear and a restart, and a foreground command's id is used again", async (t) => {
	for (const kind of ["native", "fallback"] as const) {
		const { dir, reg } = setup(t, kind);
		const jobs = attach(reg, dir, recordingHost());
		const fg = jobs.spawn({ command: "true", cwd: dir, shell: "/bin/bash", mode: "fg" });
		await reg.wait(fg.id, { timeoutMs: 5000 });
		jobs.finishForeground(fg.id);
		const a = bg(jobs, dir, "true");
		assert.equal(a.id, fg.id, `${kind}: a foreground command's id was never shown, so it is free again`);
		const b = bg(jobs, dir, "true");
		await reg.wait(b.id, { timeoutMs: 5000 });
		await reg.wait(a.id, { timeoutMs: 5000 });
		reg.remove(a.id);
		reg.remove(b.id);
		assert.equal(reg.nextId(), "bg-3", `${kind}: bg-1 and bg-2 were shown; after a clear the next is still bg-3`);
		assert.equal(bg(jobs, dir, "true").id, "bg-3");
	}
	// The native registry keeps the retired ids in its sidecar; a session from before kept them in `next-id`.
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-jobs-"));
	t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
	fs.writeFileSync(path.join(dir, "next-id"), "7\n");
	const { openSessionRegistry } = await import("../extensions/lib/shell/registry.ts");
	const reg = openSessionRegistry(dir, native);
	assert.equal(reg.nextId(), "bg-7", "bg-1..bg-6 were shown before the registry owned ids");
	assert.equal(fs.existsSync(path.join(dir, "next-id")), false, "the old counter is taken over once");
	assert.match(fs.readFileSync(path.join(dir, "jobs.json"), "utf8"), /"retired":6/);
});
