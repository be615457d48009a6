// The native process registry through the built addon: each fault the
// registry issue lists, plus the guarantees the shell-bg extension relies on
// (reload, restart, delivery once, waits that leave the event loop free).
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { native, packageRoot } from "./helpers/native.ts";
import type { ShellRegistry } from "../index.d.ts";
import { alive, killGroup, until } from "./helpers/run-command.ts";

function procStat(pid: number): { state: string; ppid: number; sid: number; start: number } | null {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
    return { state: f[0], ppid: Number(f[1]), sid: Number(f[3]), start: Number(f[19]) };
  } catch {
    return null;
  }
}


/** Blocks TERM, CONT, HUP and INT, prints its pid, sleeps: whatever a kill sends it stays pending. */
const BLOCKING_SLEEPER = `exec perl -MPOSIX -e 'sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGTERM, SIGCONT, SIGHUP, SIGINT)); $| = 1; print "$$\\n"; sleep 300'`;

/** Signals sent to `pid` and not yet delivered (`SigPnd | ShdPnd` of /proc/<pid>/status). */
function pendingSignals(pid: number): bigint {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return [...status.matchAll(/^(?:SigPnd|ShdPnd):\s*([0-9a-f]+)$/gm)].reduce((a, m) => a | BigInt(`0x${m[1]}`), 0n);
}

/** A temp dir with a registry in it; every job still running is killed and the dir removed afterwards. */
function setup(t: TestContext): { root: string; reg: ShellRegistry; log: (name: string) => string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-shell-"));
  const reg = native.openShellRegistry(path.join(root, "session", "jobs.json"));
  t.after(async () => {
    for (const j of reg.list()) if (j.state === "running") await reg.kill(j.id, { graceMs: 200 });
    fs.rmSync(root, { recursive: true, force: true });
  });
  return { root, reg, log: (name) => path.join(root, "logs", `${name}.log`) };
}

test("a job's output, exit code, cursor and delivery claim", async (t) => {
  const { root, reg, log } = setup(t);
  const job = reg.spawn({ command: "echo one; echo two >&2; exit 3", cwd: root, logPath: log("a") });
  assert.equal(job.state, "running");
  assert.equal(job.pgid, job.pid, "the job leads its own process group");
  assert.ok(job.startTicks! > 0 && job.bootId);
  const { job: done, timedOut } = await reg.wait(job.id, { timeoutMs: 10_000 });
  assert.equal(timedOut, false);
  assert.equal(done.state, "exited");
  assert.equal(done.exitCode, 3);
  assert.equal(fs.readFileSync(done.exitPath, "utf8"), "3\n", "the exit file outlives us");
  assert.equal(reg.readNew(job.id).text, "one\ntwo\n");
  assert.equal(reg.readNew(job.id).text, "", "the cursor moved");
  assert.equal(reg.tail(job.id, { lines: 1 }).text, "two\n");
  assert.equal(reg.claimDelivery(job.id), true);
  assert.equal(reg.claimDelivery(job.id), false);
});

test("nonexistent cwd: clear error, no job", (t) => {
  const { root, reg, log } = setup(t);
  const cwd = path.join(root, "missing");
  assert.throws(() => reg.spawn({ command: "true", cwd, logPath: log("a") }), {
    message: `Working directory not found: ${cwd}`,
  });
  assert.deepEqual(reg.list(), []);
  assert.equal(fs.existsSync(log("a")), false);
});

test("unwritable log dir: clear error, no job", (t) => {
  const { root, reg } = setup(t);
  fs.writeFileSync(path.join(root, "plain"), "x");
  const logPath = path.join(root, "plain", "logs", "a.log");
  assert.throws(() => reg.spawn({ command: "true", cwd: root, logPath }), /^Error: Cannot create log directory .*plain\/logs: /);
  assert.deepEqual(reg.list(), []);
});

test("a daemon its job's main process left keeps the job running, is listed, and is killed with it", async (t) => {
  const { root, reg, log } = setup(t);
  const pidFile = path.join(root, "daemon.pid");
  const job = reg.spawn({ command: `setsid sleep 300 >/dev/null 2>&1 & echo $! > ${pidFile}`, cwd: root, logPath: log("d") });
  const { job: left } = await reg.wait(job.id, { until: "leader", timeoutMs: 10_000 });
  assert.equal(left.state, "running");
  assert.equal(left.leaderExitCode, 0);
  const daemon = Number(fs.readFileSync(pidFile, "utf8"));
  assert.deepEqual(left.alive.map((p) => p.pid), [daemon]);
  // Found before or after setsid exec'd sleep: either command line names it.
  assert.match(left.alive[0].command, /^(setsid )?sleep 300$/);
  const { timedOut } = await reg.wait(job.id, { timeoutMs: 50 });
  assert.equal(timedOut, true, "a wait for the whole job is still waiting");
  await until("the daemon to leave the job's session", () => alive(daemon) && procStat(daemon)!.sid !== job.pid);
  const report = await reg.kill(job.id, { graceMs: 2000 });
  assert.equal(report.outcome, "killed");
  assert.deepEqual(report.escapees, [daemon]);
  assert.deepEqual(report.survivors, []);
  assert.equal(report.job.state, "signalled");
  assert.equal(report.job.leaderExitCode, 0, "how the main process ended is kept");
  assert.equal(alive(daemon), false);
});

test("a process that clears its environment and leaves its session and parent is still the job's, by its cgroup", async (t) => {
  const { root, reg, log } = setup(t);
  const pidFile = path.join(root, "escapee.pid");
  const command = `( env -i setsid sh -c 'echo $$ > ${pidFile}; exec sleep 300' >/dev/null 2>&1 & )\nexit 0`;
  const job = reg.spawn({ command, cwd: root, logPath: log("e") });
  if (job.tracking !== "cgroup") {
    t.skip("this host gives us no writable cgroup v2: the job is tracked by the process tree");
    return;
  }
  assert.ok(job.cgroup && fs.existsSync(job.cgroup), "the job's cgroup exists while it runs");
  await reg.wait(job.id, { until: "leader", timeoutMs: 10_000 });
  await until("the pid file", () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").endsWith("\n"));
  const escapee = Number(fs.readFileSync(pidFile, "utf8"));
  const stat = procStat(escapee)!;
  assert.notEqual(stat.sid, job.pid, "it left the job's session");
  assert.equal(fs.readFileSync(`/proc/${escapee}/environ`, "utf8").includes("PI_UTILS_JOB="), false, "and carries no marker");
  const now = reg.get(job.id)!;
  assert.equal(now.state, "running", "the job runs while it does");
  assert.deepEqual(now.alive.map((p) => p.pid), [escapee]);
  const report = await reg.kill(job.id, { graceMs: 2000 });
  assert.equal(report.outcome, "killed");
  assert.deepEqual(report.survivors, []);
  assert.equal(alive(escapee), false);
  await until("the cgroup to go with the job", () => !fs.existsSync(job.cgroup!));
});

test("tracking: process-tree is honoured, and an unknown tracking is a clear error", async (t) => {
  const { root, reg, log } = setup(t);
  const job = reg.spawn({ command: "true", cwd: root, logPath: log("p"), tracking: "process-tree" });
  assert.equal(job.tracking, "process-tree");
  assert.equal(job.cgroup, undefined);
  assert.throws(() => reg.spawn({ command: "true", cwd: root, logPath: log("q"), tracking: "cgroups" as "auto" }), /^Error: Unknown tracking: cgroups \(use "auto" or "process-tree"\)$/);
  await reg.wait(job.id, { timeoutMs: 10_000 });
});

test("a job that ignores SIGTERM is gone after the grace", async (t) => {
  const { root, reg, log } = setup(t);
  const job = reg.spawn({ command: "trap '' TERM; echo ready; sleep 300", cwd: root, logPath: log("t") });
  await until("the trap", () => reg.tail(job.id).text === "ready\n");
  const started = Date.now();
  const report = await reg.kill(job.id, { graceMs: 300 });
  assert.ok(Date.now() - started >= 300);
  assert.equal(report.sentTerm && report.sentKill, true);
  assert.equal(report.job.state, "signalled");
  assert.equal(report.job.signal, "SIGKILL");
  assert.equal(alive(job.pid), false);
});

test("a reused pid is lost and the process behind it is never signalled", async (t) => {
  const { root, reg, log } = setup(t);
  // It blocks the signals a kill sends first, so anything sent stays pending where /proc shows it.
  const job = reg.spawn({ command: BLOCKING_SLEEPER, cwd: root, logPath: log("r") });
  await until("the sleeper to block its signals", () => reg.tail(job.id).text.endsWith("\n"));
  const sleeper = Number(reg.tail(job.id).text.trim());
  // An earlier process's sidecar whose record names this pid with another start time.
  const sidecar = fs.readFileSync(reg.sidecarPath, "utf8").replace(`"startTicks":${job.startTicks}`, `"startTicks":${job.startTicks! - 7}`);
  const other = path.join(root, "other", "jobs.json");
  fs.mkdirSync(path.dirname(other));
  fs.writeFileSync(other, sidecar);
  const later = native.openShellRegistry(other);
  const seen = later.get(job.id)!;
  assert.equal(seen.state, "lost");
  assert.match(seen.note!, /belongs to another process/);
  const report = await later.kill(job.id, { graceMs: 100 });
  assert.equal(report.outcome, "refused");
  assert.equal(report.sentTerm, false);
  assert.equal(pendingSignals(sleeper), 0n, "nothing was sent to the real process");
  assert.equal(alive(job.pid) && alive(sleeper), true, "the real process must live");
  assert.equal(procStat(job.pid)!.start, job.startTicks);
  assert.equal((await reg.kill(job.id, { graceMs: 1000 })).outcome, "killed");
});

test("killing an exited job is a no-op", async (t) => {
  const { root, reg, log } = setup(t);
  const job = reg.spawn({ command: "true", cwd: root, logPath: log("x") });
  await reg.wait(job.id, { timeoutMs: 10_000 });
  const report = await reg.kill(job.id);
  assert.equal(report.outcome, "already-ended");
  assert.equal(report.sentTerm, false);
  assert.equal(report.job.exitCode, 0);
  assert.equal(report.job.killRequested, false);
});

function zombieChildren(): number[] {
  return fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      const s = procStat(pid);
      return s?.ppid === process.pid && s.state === "Z";
    });
}

test("100 jobs started and killed leave no zombie and no file descriptor", async (t) => {
  const { root, reg, log } = setup(t);
  const warm = reg.spawn({ command: "sleep 300", cwd: root, logPath: log("warm") });
  await reg.kill(warm.id);
  const fdsBefore = fs.readdirSync("/proc/self/fd").length;
  const pids: number[] = [];
  for (let i = 0; i < 100; i++) {
    const job = reg.spawn({ command: "sleep 300", cwd: root, logPath: log(`j${i}`) });
    pids.push(job.pid);
    const report = await reg.kill(job.id, { graceMs: 2000 });
    assert.equal(report.outcome, "killed");
  }
  await until("descriptors to settle", () => fs.readdirSync("/proc/self/fd").length <= fdsBefore, 3000);
  assert.equal(fs.readdirSync("/proc/self/fd").length, fdsBefore);
  assert.deepEqual(zombieChildren(), []);
  assert.deepEqual(pids.filter(alive), []);
  assert.ok(reg.list().every((j) => j.state === "signalled"));
});

test("tail of a big log is fast and whole at a multi-byte boundary", (t) => {
  const { root } = setup(t);
  const file = path.join(root, "big.log");
  const block = Buffer.from("€".repeat(1 << 20)); // 3 MiB of 3-byte characters
  const fd = fs.openSync(file, "w");
  for (let i = 0; i < 40; i++) fs.writeSync(fd, block);
  fs.writeSync(fd, "xy"); // the last 64 KiB now start inside a character
  fs.closeSync(fd);
  const size = fs.statSync(file).size;
  assert.notEqual((size - 65536) % 3, 0);
  const started = performance.now();
  const chunk = native.readLogTail(file, { maxBytes: 65536 });
  const ms = performance.now() - started;
  assert.ok(ms < 50, `tail took ${ms} ms`);
  assert.equal(chunk.end, size);
  assert.equal(chunk.text.includes("\uFFFD"), false);
  assert.match(chunk.text, /^€+xy$/);
  assert.equal(chunk.start, Math.ceil((size - 65536) / 3) * 3, "starts at the first whole character");
  assert.equal(chunk.skipped, chunk.start);
  const mid = native.readLogFrom(file, 1, { maxBytes: 7 });
  assert.deepEqual([mid.text, mid.start, mid.end], ["€", 3, 6], "continuation bytes skipped, cut character held back");
});

test("a corrupt sidecar loads what it can and reports the rest", async (t) => {
  const { root, reg, log } = setup(t);
  for (const code of [1, 2, 3]) {
    const j = reg.spawn({ command: `exit ${code}`, cwd: root, logPath: log(`c${code}`) });
    await reg.wait(j.id, { timeoutMs: 10_000 });
  }
  const text = fs.readFileSync(reg.sidecarPath, "utf8");
  const damaged = path.join(root, "damaged", "jobs.json");
  fs.mkdirSync(path.dirname(damaged));
  fs.writeFileSync(damaged, text.slice(0, text.length - 50));
  const later = native.openShellRegistry(damaged);
  assert.deepEqual(later.list().map((j) => [j.id, j.exitCode]), [["bg-1", 1], ["bg-2", 2]]);
  const problems = later.problems();
  assert.ok(problems.some((p) => p.includes("not valid JSON")), problems.join("\n"));
  assert.ok(problems.some((p) => p.includes("line 4 unreadable")), problems.join("\n"));
  assert.equal(fs.readFileSync(`${damaged}.corrupt`, "utf8"), text.slice(0, text.length - 50));
  assert.ok(JSON.parse(fs.readFileSync(damaged, "utf8")).jobs.length === 2, "rewritten clean");
});

test("after the host process dies, a new one adopts the running job and reads the finished one", async (t) => {
  const { root, log } = setup(t);
  const sidecar = path.join(root, "crashed", "jobs.json");
  const script = `
    const n = require(${JSON.stringify(path.join(packageRoot, "index.js"))});
    const r = n.openShellRegistry(${JSON.stringify(sidecar)});
    r.spawn({ command: "sleep 0.5; exit 7", cwd: ${JSON.stringify(root)}, logPath: ${JSON.stringify(log("quick"))} });
    r.spawn({ command: "echo up; sleep 300", cwd: ${JSON.stringify(root)}, logPath: ${JSON.stringify(log("long"))} });
    process.exit(0);`;
  const host = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
  assert.equal(host.status, 0, host.stderr);
  const reg = native.openShellRegistry(sidecar);
  t.after(async () => {
    for (const j of reg.list()) if (j.state === "running") await reg.kill(j.id, { graceMs: 200 });
  });
  assert.equal(reg.fromMemory, false);
  const [quick, long] = reg.list();
  assert.equal(long.state, "running");
  assert.equal(long.adopted, true);
  const { job } = await reg.wait(quick.id, { timeoutMs: 10_000 });
  assert.equal(job.state, "exited");
  assert.equal(job.exitCode, 7, "read from the exit file: the job was never our child");
  await until("output", () => reg.tail(long.id).text === "up\n");
  const report = await reg.kill(long.id, { graceMs: 2000 });
  assert.equal(report.outcome, "killed");
  assert.equal(report.job.state, "signalled");
  await until("the adopted job to die", () => !alive(long.pid));
});

test("reopening in the same process (Pi's /reload) returns the same live registry", async (t) => {
  const { root, reg, log } = setup(t);
  const job = reg.spawn({ command: "sleep 300", cwd: root, logPath: log("r") });
  const again = native.openShellRegistry(reg.sidecarPath);
  assert.equal(again.fromMemory, true);
  assert.equal(again.get(job.id)!.adopted, false, "still our child, not re-adopted");
  assert.equal((await again.kill(job.id)).outcome, "killed");
  assert.equal(reg.get(job.id)!.state, "signalled");
});

test("wait leaves the event loop and libuv's pool free, and an abort resolves it early", async (t) => {
  const { root, reg, log } = setup(t);
  const job = reg.spawn({ command: "sleep 300", cwd: root, logPath: log("w") });
  const waits = [1, 2, 3, 4, 5, 6].map(() => reg.wait(job.id, { timeoutMs: 400 }));
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const started = performance.now();
  await fs.promises.readFile(reg.sidecarPath);
  const readMs = performance.now() - started;
  const results = await Promise.all(waits);
  clearInterval(timer);
  assert.ok(readMs < 100, `fs read took ${readMs} ms while six waits were pending`);
  assert.ok(ticks >= 10, `only ${ticks} timer ticks during 400 ms of waiting`);
  assert.ok(results.every((r) => r.timedOut && r.job.state === "running"));

  const ac = new AbortController();
  setTimeout(() => ac.abort(), 50);
  const aborted = await reg.wait(job.id, { signal: ac.signal });
  assert.equal(aborted.cancelled, true);
  assert.throws(() => reg.wait(job.id, { signal: ac.signal }), /AbortError/);
  assert.throws(() => reg.wait("bg-99"), /Unknown job: bg-99/);
});

test("watch hears each ending once, and a throwing callback does not crash the host", async (t) => {
  const { root, reg, log } = setup(t);
  const heard: string[] = [];
  let uncaught = 0;
  const onUncaught = () => uncaught++;
  process.on("uncaughtException", onUncaught);
  t.after(() => {
    reg.unwatch();
    process.off("uncaughtException", onUncaught);
  });
  reg.watch((job) => {
    heard.push(`${job.id}:${job.state}:${job.exitCode}`);
    throw new Error("listener bug");
  });
  const job = reg.spawn({ command: "exit 4", cwd: root, logPath: log("w") });
  await until("the callback", () => heard.length > 0);
  // A second ending is heard after any repeat of the first would have been (one refresh covers all jobs).
  const next = reg.spawn({ command: "exit 5", cwd: root, logPath: log("w2") });
  await until("the second callback", () => heard.length > 1);
  assert.deepEqual(heard, [`${job.id}:exited:4`, `${next.id}:exited:5`]);
  assert.equal(uncaught, 0);
});

test("a job's timeout is enforced by the addon", async (t) => {
  const { root, reg, log } = setup(t);
  const job = reg.spawn({ command: "sleep 300", cwd: root, logPath: log("t"), timeoutMs: 200 });
  const { job: done } = await reg.wait(job.id, { timeoutMs: 10_000 });
  assert.equal(done.timedOut, true);
  assert.equal(done.state, "signalled");
  assert.equal(done.signal, "SIGTERM");
});

/** Whether any process is left in group `pgid` (zombies included, until reaped). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

test("a watched registry does not keep a Node process alive", async (t) => {
  const { root } = setup(t);
  const script = `
    const n = require(${JSON.stringify(path.join(packageRoot, "index.js"))});
    const r = n.openShellRegistry(${JSON.stringify(path.join(root, "s", "jobs.json"))});
    r.watch(() => {});
    const j = r.spawn({ command: "sleep 30", cwd: ${JSON.stringify(root)}, logPath: ${JSON.stringify(path.join(root, "l.log"))} });
    console.log(j.pid);`;
  const started = Date.now();
  const child = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 10_000 });
  const jobPid = Number(child.stdout.trim());
  t.after(() => {
    killGroup(jobPid);
  });
  assert.equal(child.status, 0, child.stderr);
  assert.ok(Date.now() - started < 5000, "node exited without waiting for the 30 s job");
  assert.equal(alive(jobPid), true, "and the job outlived it");
  // No registry of this process knows the job, so the temp dir's removal would race its log pump,
  // which may still be opening the log's files: the whole group goes first.
  killGroup(jobPid);
  await until("the job's process group to be gone", () => !groupAlive(jobPid));
});

test("two processes on one sidecar keep each other's jobs", async (t) => {
  const { root, reg, log } = setup(t);
  const mine = reg.spawn({ command: "exit 1", cwd: root, logPath: log("mine") });
  await reg.wait(mine.id, { timeoutMs: 10_000 });
  // A second Node process (a second Pi on the same session) opens the same file and starts a job.
  const script = `
    const n = require(${JSON.stringify(path.join(packageRoot, "index.js"))});
    const r = n.openShellRegistry(${JSON.stringify(reg.sidecarPath)});
    const j = r.spawn({ command: "exit 2", cwd: ${JSON.stringify(root)}, logPath: ${JSON.stringify(log("theirs"))} });
    r.wait(j.id, { timeoutMs: 10000 }).then((w) => { r.claimDelivery(j.id); console.log(JSON.stringify({ id: j.id, code: w.job.exitCode })); });`;
  const child = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 20_000 });
  assert.equal(child.status, 0, child.stderr);
  const theirs = JSON.parse(child.stdout.trim()) as { id: string; code: number };
  assert.notEqual(theirs.id, mine.id, "the second process took the first's job in before choosing an id");
  assert.equal(theirs.code, 2);
  // This process writes again (a delivery claim): the other's job stays in the file.
  assert.equal(reg.claimDelivery(mine.id), true);
  const text = fs.readFileSync(reg.sidecarPath, "utf8");
  const ids = (JSON.parse(text) as { jobs: Array<{ id: string; delivered: boolean }> }).jobs.map((j) => [j.id, j.delivered]);
  assert.deepEqual(ids, [[mine.id, true], [theirs.id, true]]);
});

test("a job's cut offsets are read through a handle that follows every cut (the log pump's lock-free read)", async (t) => {
  const { root, reg, log } = setup(t);
  const job = reg.spawn({ command: "head -c 30000000 /dev/zero; sleep 300", cwd: root, logPath: log("cut"), maxLogBytes: 4 * 1024 * 1024 });
  const cuts = reg.logCuts(job.id);
  assert.equal(cuts.read().logShift, 0);
  assert.equal(cuts.read().logTrimAt ?? undefined, undefined, "not cut yet");
  await until("the log to be cut", () => {
    const now = reg.get(job.id)!;
    const read = cuts.read();
    return now.logTrimAt !== undefined && now.logTrimAt !== null && read.logTrimAt === now.logTrimAt && read.logShift === now.logShift;
  });
  assert.ok(cuts.read().logShift > 0);
  assert.throws(() => reg.logCuts("bg-404"), (e: NodeJS.ErrnoException) => e.code === "UNKNOWN_JOB");
});
