// shell-bg when Pi is ended by SIGTERM (a supervisor, `kill`, a session manager) instead of a quit key, on
// both hosts: the real Pi TUI in a detached tmux pane, and `pi -p` and RPC mode stopped in the middle of a
// turn. Each way the job (one that ignores SIGTERM) is stopped before Pi exits, and Pi says what it waits
// for; with shell.onQuit "keep" it is left running. Pi 0.73's TUI used to die of the signal before any
// extension heard of the quit (see keepSignalHandled in extensions/lib/shell/quit-signal.ts), leaking the
// job; that mechanism is also checked on its own, in a plain Node process with the signal-exit Pi 0.73 loads.
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeOpenAIServer, toolResults } from "./helpers/fake-openai-server.ts";
import { fakeModelsJson, hostAvailable, packageRoot, PI_HOSTS, type PiHost } from "./helpers/pi-cli.ts";
import { startPi, type PiProcess } from "./helpers/pi-process.ts";
import { alive, describeRun, killGroups, runCommand, until } from "./helpers/run-command.ts";
import { hasTmux, newSession, tmux } from "./helpers/tmux.ts";

let tuiSessions = 0;
const GRACE_MS = 1500;
/** From SIGTERM to Pi's exit: the grace, Pi's own teardown (0.73 drains terminal input for up to 1 s), slack. */
const EXIT_BOUND_MS = GRACE_MS + 8000;
/** Ignores SIGTERM, so quitting waits out the grace; its pid is in job.pid. */
const STUBBORN = "trap '' TERM; echo $$ > job.pid; echo stubborn-start; sleep 60";
const STOPPING = /shell-bg: stopping bg-1 \(SIGTERM, SIGKILL after 1\.5s\)…/;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const readPid = (file: string) => Number(fs.readFileSync(file, "utf8"));

/** A temp project with an agent dir and pi-utils settings; the job's group and the folder go afterwards. */
function workspace(t: TestContext, shell: Record<string, unknown>) {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-shell-signal-"));
	const agentDir = path.join(root, "agent");
	fs.mkdirSync(agentDir);
	fs.writeFileSync(path.join(agentDir, "pi-utils.json"), JSON.stringify({ shell: { killGraceMs: GRACE_MS, ...shell } }));
	const pids: number[] = [];
	t.after(() => {
		killGroups(pids);
		fs.rmSync(root, { recursive: true, force: true });
	});
	return { root, agentDir, pids, jobPidFile: path.join(root, "job.pid") };
}

/**
 * The job's pids: its leader (the pid the start text names, whose group cleanup kills) and the `sleep` that
 * ignores SIGTERM (from job.pid).
 */
async function jobOf(startText: string, jobPidFile: string, pids: number[]): Promise<{ leader: number; sleeper: number }> {
	const leader = Number(/Started bg-1 in the background \(pid (\d+)\)/.exec(startText)?.[1]);
	assert.ok(leader > 1, `no job pid in:\n${startText}`);
	pids.push(leader);
	await until("the job to write its pid", () => fs.existsSync(jobPidFile) && readPid(jobPidFile) > 1);
	return { leader, sleeper: readPid(jobPidFile) };
}

/**
 * Pi's TUI in a tmux pane that outlives it, after the model has started the stubborn job: Pi's pid, the job's
 * pids, and the pane's text polled until it shows something.
 */
async function tuiWithJob(t: TestContext, host: PiHost, shell: Record<string, unknown>) {
	const session = `pi-utils-shell-signal-${process.pid}-${++tuiSessions}`;
	let piPid = 0;
	// Registered first, so it runs first: Pi is gone before its folder is.
	t.after(() => {
		tmux("kill-session", "-t", session);
		// Pi is no group leader in the pane: end it by its pid if a failed test left it running.
		if (piPid > 1 && alive(piPid)) process.kill(piPid, "SIGKILL");
	});
	const { root, agentDir, pids, jobPidFile } = workspace(t, shell);
	const server = await startFakeOpenAIServer([
		{ toolCalls: [{ name: "bash", arguments: { command: STUBBORN, background: true } }] },
		{ text: "job started" },
	]);
	t.after(() => server.close());
	fs.writeFileSync(path.join(agentDir, "models.json"), fakeModelsJson(server.baseUrl));
	const piPidFile = path.join(root, "pi.pid");
	const env = `PI_CODING_AGENT_DIR='${agentDir}' PI_OFFLINE=1 PI_TELEMETRY=0 PI_SKIP_VERSION_CHECK=1`;
	// `exec` keeps the pid written to pi.pid: the signal goes to Pi itself, as `kill <pid>` would.
	const pi = `sh -c 'echo $$ > pi.pid; exec "$0" "$@"' '${host.node}' '${host.cli}' --model fake/fake-model --no-session -e '${packageRoot}' 'start the job'`;
	const cmd = `cd '${root}' && ${env} ${pi}; echo "pi-exited $?"; sleep 60`;
	const tmuxStart = newSession(["-s", session, "-x", "160", "-y", "50", cmd]);
	assert.equal(tmuxStart.status, 0, tmuxStart.stderr);
	await until("Pi to start", () => fs.existsSync(piPidFile) && readPid(piPidFile) > 1);
	piPid = readPid(piPidFile);
	/** Polls the pane until `done(screen)`; fails after `limitMs` with the screen. */
	const when = async (what: string, done: (s: string) => boolean, limitMs = 30_000): Promise<string> => {
		let screen = "";
		for (let waited = 0; waited < limitMs; waited += 50) {
			screen = tmux("capture-pane", "-p", "-t", session).stdout ?? "";
			if (done(screen)) return screen;
			await sleep(50);
		}
		assert.fail(`the screen never showed ${what}:\n${screen}`);
	};
	const job = await jobOf(await when("the answer", (s) => s.includes("job started")), jobPidFile, pids);
	return { when, job, pid: piPid };
}

const exitStatus = (screen: string) => /pi-exited (\d+)/.exec(screen)?.[1];

for (const host of [PI_HOSTS.legacy, PI_HOSTS.current] as PiHost[]) {
	const tuiSkip = !hasTmux ? "tmux not installed" : hostAvailable(host) ? false : "host not installed";

	test(`${host.label}: SIGTERM to the TUI stops a job that ignores TERM, saying so while Pi waits`, { skip: tuiSkip }, async (t) => {
		const { when, job, pid } = await tuiWithJob(t, host, {});
		assert.equal(alive(job.sleeper), true);

		const signalled = Date.now();
		process.kill(pid, "SIGTERM");
		const waiting = await when("the stopping line", (s) => STOPPING.test(s), EXIT_BOUND_MS);
		assert.equal(exitStatus(waiting), undefined, "said while Pi was still waiting");
		assert.equal(alive(job.sleeper), true, "the grace is waited out before the SIGKILL");
		const exited = await when("Pi's exit", (s) => exitStatus(s) !== undefined, EXIT_BOUND_MS);
		const tookMs = Date.now() - signalled;
		assert.equal(exitStatus(exited), "0", `Pi quit as from its own quit, not killed by the signal:\n${exited}`);
		assert.ok(tookMs >= GRACE_MS && tookMs < EXIT_BOUND_MS, `exited ${tookMs} ms after SIGTERM`);
		assert.deepEqual([alive(job.leader), alive(job.sleeper)], [false, false], "the job was stopped before Pi exited");
	});

	test(`${host.label}: SIGTERM to the TUI with shell.onQuit "keep" leaves the job running`, { skip: tuiSkip }, async (t) => {
		const { when, job, pid } = await tuiWithJob(t, host, { onQuit: "keep" });
		process.kill(pid, "SIGTERM");
		const exited = await when("Pi's exit", (s) => exitStatus(s) !== undefined, EXIT_BOUND_MS);
		assert.equal(exitStatus(exited), "0", exited);
		assert.doesNotMatch(exited, /shell-bg: stopping/);
		assert.deepEqual([alive(job.leader), alive(job.sleeper)], [true, true], "onQuit: keep leaves the job running after a SIGTERM quit too");
	});

	for (const mode of ["pi -p", "RPC mode"] as const) test(`${host.label}: ${mode} ended by SIGTERM in the middle of a turn stops its job first`, { skip: hostAvailable(host) ? false : "host not installed" }, async (t) => {
		let pi: PiProcess | undefined;
		t.after(() => pi?.kill());
		const { root, agentDir, pids, jobPidFile } = workspace(t, {});
		const server = await startFakeOpenAIServer([
			{ toolCalls: [{ name: "bash", arguments: { command: STUBBORN, background: true } }] },
			// The turn is still running (waiting on the job) when the signal comes.
			{ toolCalls: [{ name: "shell_status", arguments: { id: "bg-1", wait: 60 } }] },
			{ text: "should not get here" },
		]);
		t.after(() => server.close());
		const prompt = "start the job and wait";
		pi = startPi({ host, agentDir, baseUrl: server.baseUrl, cwd: root, args: mode === "pi -p" ? ["--no-session", "-p", prompt] : ["--no-session", "--mode", "rpc"], timeoutMs: 40_000 });
		if (mode === "pi -p") pi.closeStdin();
		else pi.send({ id: "1", type: "prompt", message: prompt });
		await until("the job to start and the wait to be asked for", () => server.requests.length >= 2, 20_000);
		const job = await jobOf([...toolResults(server.requests[1]).values()].join("\n"), jobPidFile, pids);
		// Into the wait: the turn is running when the signal comes.
		await sleep(300);
		assert.equal(alive(job.sleeper), true);

		const signalled = Date.now();
		pi.child.kill("SIGTERM");
		const exit = await pi.exited;
		const tookMs = Date.now() - signalled;
		assert.equal(exit.timedOut, false, pi.stderr());
		assert.match(pi.stderr(), STOPPING, "Pi said what it waited for");
		assert.ok(tookMs >= GRACE_MS && tookMs < EXIT_BOUND_MS, `exited ${tookMs} ms after SIGTERM`);
		assert.deepEqual([alive(job.leader), alive(job.sleeper)], [false, false], `the job was stopped before Pi exited\n${pi.stderr()}`);
		assert.equal(exit.code, 143, `Pi's own exit code for SIGTERM (${exit.signal})\n${pi.stderr()}`);
	});
}

/**
 * A Node process that loads proper-lockfile (and with it signal-exit) as Pi 0.73 does, then gets SIGTERM. `quit`:
 * its first listener, like Pi 0.73's TUI, drops itself and exits 0 a moment later; `none`: nobody quits on the
 * signal (the process would live on). `guard`: keepSignalHandled("SIGTERM", 1000) is listening too.
 */
async function signalled(host: "quit" | "none", guard: boolean) {
	const script = `
		const { keepSignalHandled } = require(${JSON.stringify(path.join(packageRoot, "extensions/lib/shell/quit-signal.ts"))});
		require("node:module").createRequire(${JSON.stringify(PI_HOSTS.legacy.cli)})("proper-lockfile");
		if (${host === "quit"}) {
			const quit = () => { process.off("SIGTERM", quit); setTimeout(() => { console.log("quit finished"); process.exit(0); }, 200); };
			process.prependListener("SIGTERM", quit);
		}
		if (${guard}) keepSignalHandled("SIGTERM", 1000);
		setInterval(() => {}, 1000);
		console.log("signalled at " + Date.now());
		process.kill(process.pid, "SIGTERM");`;
	return runCommand(process.execPath, ["--import", "tsx", "-e", script], { cwd: packageRoot, env: process.env, timeoutMs: 10_000 });
}

test("keepSignalHandled: a quit that drops its own SIGTERM listener runs to its end instead of signal-exit re-raising the signal", { skip: hostAvailable(PI_HOSTS.legacy) ? false : "Pi 0.73 (its proper-lockfile) not installed" }, async () => {
	const bare = await signalled("quit", false);
	assert.equal(bare.signal, "SIGTERM", `without the guard the process dies of the signal: ${describeRun(bare)}`);
	assert.doesNotMatch(bare.stdout, /quit finished/);
	const kept = await signalled("quit", true);
	assert.equal(kept.code, 0, describeRun(kept));
	assert.match(kept.stdout, /quit finished/);
});

test("keepSignalHandled: where nothing quits on the signal, it is raised again after the fallback, so the process still ends", { skip: hostAvailable(PI_HOSTS.legacy) ? false : "Pi 0.73 (its proper-lockfile) not installed" }, async () => {
	const r = await signalled("none", true);
	const afterMs = Date.now() - Number(/signalled at (\d+)/.exec(r.stdout)?.[1]);
	assert.equal(r.timedOut, false, describeRun(r));
	assert.equal(r.signal, "SIGTERM", describeRun(r));
	assert.ok(afterMs >= 1000 && afterMs < 5000, `ended ${afterMs} ms after the signal: once the fallback was up, not before`);
});
