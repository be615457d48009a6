// Bad input to the native job registry: every error carries one of the
// documented codes (README's table, `errorCodes()`), nothing wraps around
// into a different meaning, and a kill of an unknown job rejects.
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { native } from "./helpers/native.ts";
import type { ShellRegistry } from "../index.d.ts";

function setup(t: TestContext): { root: string; reg: ShellRegistry; log: (name: string) => string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-shell-input-"));
  const reg = native.openShellRegistry(path.join(root, "session", "jobs.json"));
  t.after(async () => {
    for (const j of reg.list()) if (j.state === "running") await reg.kill(j.id, { graceMs: 200 });
    fs.rmSync(root, { recursive: true, force: true });
  });
  return { root, reg, log: (name) => path.join(root, "logs", `${name}.log`) };
}

/** `f` throws an error whose code is `code` and whose message matches `message`. */
function throwsCoded(f: () => unknown, code: string, message?: RegExp): void {
  assert.throws(f, (e: unknown) => {
    const err = e as { code?: string; message?: string };
    assert.equal(err.code, code, `code of: ${err.message}`);
    if (message) assert.match(err.message ?? "", message);
    return true;
  });
}

test("a huge timeoutMs does not wrap into a deadline in the past", async (t) => {
  const { root, reg, log } = setup(t);
  for (const [i, timeoutMs] of [1e300, 2 ** 64, Number.MAX_VALUE].entries()) {
    const job = reg.spawn({ command: "sleep 5", cwd: root, logPath: log(`t${i}`), timeoutMs });
    const { timedOut } = await reg.wait(job.id, { timeoutMs: 600 });
    assert.equal(timedOut, true, `timeoutMs ${timeoutMs}: the job still runs`);
    const now = reg.get(job.id)!;
    assert.equal(now.state, "running");
    assert.equal(now.timedOut, false);
    await reg.kill(job.id, { graceMs: 0 });
  }
  // A wait with such a timeout is as good as none.
  const quick = reg.spawn({ command: "true", cwd: root, logPath: log("quick") });
  const { job, timedOut } = await reg.wait(quick.id, { timeoutMs: 1e300 });
  assert.equal(timedOut, false);
  assert.equal(job.state, "exited");
});

test("maxLogBytes that is negative, NaN or infinite is INVALID_OPTION", (t) => {
  const { root, reg, log } = setup(t);
  for (const maxLogBytes of [-1, Number.NaN, Infinity, -Infinity, 0]) {
    throwsCoded(() => reg.spawn({ command: "true", cwd: root, logPath: log("m"), maxLogBytes }), "INVALID_OPTION", /maxLogBytes/);
  }
  assert.equal(reg.list().length, 0, "nothing started");
});

test("tail with negative lines is INVALID_OPTION", async (t) => {
  const { root, reg, log } = setup(t);
  const job = reg.spawn({ command: "echo a; echo b", cwd: root, logPath: log("l") });
  await reg.wait(job.id, { timeoutMs: 10_000 });
  throwsCoded(() => reg.tail(job.id, { lines: -1 }), "INVALID_OPTION", /lines/);
  throwsCoded(() => native.readLogTail(log("l"), { lines: -1 }), "INVALID_OPTION", /lines/);
  assert.equal(reg.tail(job.id, { lines: 1 }).text, "b\n");
});

test("an empty job id or one with a NUL byte is INVALID_OPTION and says which", (t) => {
  const { root, reg, log } = setup(t);
  throwsCoded(() => reg.spawn({ command: "true", cwd: root, logPath: log("e"), id: "" }), "INVALID_OPTION", /^Invalid id: it is empty$/);
  throwsCoded(() => reg.spawn({ command: "true", cwd: root, logPath: log("n"), id: "a\0b" }), "INVALID_OPTION", /^Invalid id: it contains a NUL byte$/);
  assert.equal(reg.list().length, 0);
});

test("arguments of the wrong type throw INVALID_OPTION, not napi's own codes", (t) => {
  const { root, reg, log } = setup(t);
  const r = reg as unknown as { spawn: (...a: unknown[]) => unknown };
  const base = { command: "true", cwd: root, logPath: log("w") };
  const cases: [string, () => unknown, RegExp][] = [
    ["command: 123", () => r.spawn({ ...base, command: 123 }), /command/],
    ["cwd: null", () => r.spawn({ ...base, cwd: null }), /cwd/],
    ["logPath: {}", () => r.spawn({ ...base, logPath: {} }), /logPath/],
    ["env: { A: 1 }", () => r.spawn({ ...base, env: { A: 1 } }), /spawn options/],
    ["env: \"x\"", () => r.spawn({ ...base, env: "x" }), /env/],
    ["env: [\"A=1\"]", () => r.spawn({ ...base, env: ["A=1"] }), /env/],
    ["spawn(\"echo hi\")", () => r.spawn("echo hi"), /expected an object/],
    ["spawn()", () => r.spawn(), /expected an object/],
    ["openShellRegistry(5)", () => (native.openShellRegistry as (p: unknown) => unknown)(5), /sidecarPath/],
  ];
  for (const [what, f, message] of cases) {
    assert.throws(f, (e: unknown) => {
      const err = e as { code?: string; message?: string };
      assert.equal(err.code, "INVALID_OPTION", `${what}: ${err.code} ${err.message}`);
      assert.match(err.message ?? "", message, what);
      return true;
    });
  }
  assert.equal(reg.list().length, 0, "nothing started");
});

test("a bare shell name is looked up on the job's PATH and refused when missing", async (t) => {
  const { root, reg, log } = setup(t);
  throwsCoded(
    () => reg.spawn({ command: "true", cwd: root, logPath: log("s"), shell: "nosuchshell" }),
    "PATH_NOT_FOUND",
    /Shell not found: nosuchshell/,
  );
  throwsCoded(
    () => reg.spawn({ command: "true", cwd: root, logPath: log("s"), shell: "sh", env: { PATH: path.join(root, "empty") } }),
    "PATH_NOT_FOUND",
    /Shell not found: sh/,
  );
  assert.equal(reg.list().length, 0);
  const job = reg.spawn({ command: "echo found", cwd: root, logPath: log("ok"), shell: "sh" });
  const { job: done } = await reg.wait(job.id, { timeoutMs: 10_000 });
  assert.equal(done.exitCode, 0);
  assert.equal(reg.tail(job.id).text, "found\n");
});

test("kill of an unknown job rejects with UNKNOWN_JOB instead of throwing", async (t) => {
  const { reg } = setup(t);
  let promise: Promise<unknown> | undefined;
  assert.doesNotThrow(() => {
    promise = reg.kill("bg-404");
  });
  await assert.rejects(promise!, (e: unknown) => {
    assert.equal((e as { code?: string }).code, "UNKNOWN_JOB");
    return true;
  });
  await assert.rejects(reg.kill("bg-404", { graceMs: -1 }), (e: unknown) => {
    assert.equal((e as { code?: string }).code, "INVALID_OPTION");
    return true;
  });
});
