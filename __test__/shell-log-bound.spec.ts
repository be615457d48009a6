// Issue 42's log-bound promises, checked through the built addon by someone who did not write the
// bound: a flood on a machine whose cores are busy never makes the log file pass its bound (sampled
// as fast as the host can stat it), every byte written is kept or counted as dropped, the newest
// output and the head are kept; output far below the bound is never cut; and a job reported done
// has its whole output readable.
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn, type ChildProcess } from "node:child_process";
import { native } from "./helpers/native.ts";
import type { ShellRegistry } from "../index.d.ts";

/** A temp dir with a registry in it; every job still running is killed and the dir removed afterwards. */
function setup(t: TestContext): { root: string; reg: ShellRegistry; log: (name: string) => string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-log-bound-"));
  const reg = native.openShellRegistry(path.join(root, "session", "jobs.json"));
  t.after(async () => {
    for (const j of reg.list()) if (j.state === "running") await reg.kill(j.id, { graceMs: 200 });
    fs.rmSync(root, { recursive: true, force: true });
  });
  return { root, reg, log: (name) => path.join(root, "logs", `${name}.log`) };
}

/** Bytes `seq 1 n` prints. */
function seqBytes(n: number): number {
  let total = 0;
  for (let digits = 1, lo = 1; lo <= n; digits++, lo *= 10) {
    const hi = Math.min(n, lo * 10 - 1);
    total += (hi - lo + 1) * (digits + 1);
  }
  return total;
}

/** One busy loop per core, so the registry's threads have to fight for a core; stopped afterwards. */
function busyCores(t: TestContext): void {
  const loops: ChildProcess[] = [];
  for (let i = 0; i < Math.max(2, os.availableParallelism()); i++) {
    loops.push(spawn("sh", ["-c", "while :; do :; done"], { stdio: "ignore" }));
  }
  t.after(() => {
    for (const p of loops) p.kill("SIGKILL");
  });
}

test("a flood on busy cores never makes the log pass its bound, and every byte is kept or counted", async (t) => {
  const { root, reg, log } = setup(t);
  busyCores(t);
  const bound = 8 * 1024 * 1024;
  // 1 GB as fast as `yes` writes (GB/s), then numbered lines to show the newest output is kept.
  const flood = 1_000_000_000;
  const n = 1_000;
  const job = reg.spawn({ command: `yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c ${flood}; seq 1 ${n}`, cwd: root, logPath: log("flood"), maxLogBytes: bound });
  let peak = 0;
  let samples = 0;
  const deadline = Date.now() + 120_000;
  for (;;) {
    let size = 0;
    try {
      size = fs.statSync(job.logPath).size;
    } catch {}
    peak = Math.max(peak, size);
    samples++;
    if (samples % 256 === 0 && reg.get(job.id)!.state !== "running") break;
    assert.ok(Date.now() < deadline, "the flood ended within two minutes");
  }
  const { job: done } = await reg.wait(job.id, { timeoutMs: 30_000 });
  peak = Math.max(peak, fs.statSync(job.logPath).size);
  assert.equal(done.exitCode, 0);
  assert.ok(samples > 100, `sampled ${samples} times`);
  assert.ok(peak <= bound, `the log reached ${peak} bytes against a bound of ${bound} (${samples} samples)`);
  const text = fs.readFileSync(job.logPath, "utf8");
  const markers = [...text.matchAll(/\n\[pi-utils: +(\d+) bytes of output dropped here[^\n]*\]\n/g)];
  assert.equal(markers.length, 1, "one marker line says where output was dropped");
  assert.ok(text.startsWith("0123456789abcdefghijklmnopqrstuvwxyz\n".repeat(3)), "the head is kept");
  assert.ok(text.endsWith(`\n${n - 1}\n${n}\n`), "the newest output is kept");
  assert.equal(Number(markers[0][1]), done.logDropped, "the marker counts what the job reports dropped");
  assert.equal(text.length - markers[0][0].length + done.logDropped, flood + seqBytes(n), "kept + dropped = written");
});

test("output far below the bound is never cut, however fast it comes", async (t) => {
  const { root, reg, log } = setup(t);
  busyCores(t);
  for (const [name, command, bytes] of [
    ["zeros", "head -c 5000000 /dev/zero", 5_000_000],
    ["lines", "seq 1 1000000", seqBytes(1_000_000)],
  ] as const) {
    const job = reg.spawn({ command, cwd: root, logPath: log(name) });
    const { job: done } = await reg.wait(job.id, { timeoutMs: 60_000 });
    assert.equal(done.exitCode, 0, name);
    assert.equal(done.logDropped, 0, `${name}: nothing dropped under the default bound`);
    assert.equal(fs.statSync(job.logPath).size, bytes, `${name}: every byte is in the log`);
  }
});

test("a job reported done has its whole output readable", async (t) => {
  const { root, reg, log } = setup(t);
  const n = 40_000; // ~230 KB: more than a pipe holds
  for (let i = 0; i < 20; i++) {
    const job = reg.spawn({ command: `seq 1 ${n}; printf end`, cwd: root, logPath: log(`done-${i}`) });
    const { job: done } = await reg.wait(job.id, { timeoutMs: 30_000 });
    assert.equal(done.state, "exited");
    const text = fs.readFileSync(job.logPath, "utf8");
    assert.equal(text.length, seqBytes(n) + 3, `run ${i}: the whole output is there as soon as the job is done`);
    assert.ok(text.endsWith(`${n}\nend`), `run ${i}`);
  }
});
