// Every native error carries a `code` from the core's one list, in every room (search, discover, index, shell);
// the JS fallbacks (the Node job registry) give the same codes and texts; the message fallback for an error
// without a code matches what the core says today; a panic anywhere in a promise-returning call rejects with
// INTERNAL and leaves Node alive; and no call leaves an abort listener behind on a long-lived signal.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { native, packageRoot, settledListenerCount } from "./helpers/native.ts";
import { makeTree } from "./helpers/tree.ts";
import { ERROR_CODES, codedError, errorCode } from "../extensions/lib/errors.mjs";
import { openFallbackRegistry } from "../extensions/lib/shell/fallback.ts";

/** The code and message of what `f` throws or rejects with. */
async function failure(f: () => unknown): Promise<{ code: unknown; message: string } | "no error"> {
	try {
		await f();
	} catch (e) {
		return { code: (e as { code?: unknown }).code, message: (e as Error).message };
	}
	return "no error";
}

async function codeOf(f: () => unknown): Promise<unknown> {
	const r = await failure(f);
	return r === "no error" ? r : r.code;
}

/**
 * A temp folder removed when the test ends, after `first` (the jobs started in it killed): a job still writing
 * its log while the folder went made the removal fail with ENOTEMPTY (CI, 2026-12-07).
 */
function tempDir(t: { after: (f: () => Promise<void>) => void }, first: Array<() => Promise<unknown>> = []): string {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-codes-"));
	t.after(async () => {
		try {
			for (const f of first) await f();
		} finally {
			fs.rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
		}
	});
	return root;
}

test("the JS list of codes is the core's, and each text the core gives maps to its code without one", () => {
	assert.deepEqual([...ERROR_CODES], native.errorCodes());
	const samples = native.errorSamples();
	assert.ok(samples.length >= 20, `one sample per error kind (${samples.length})`);
	for (const { code, message } of samples) {
		assert.equal(errorCode(new Error(message)), code, message);
		assert.equal(errorCode(codedError(code as never, "whatever")), code);
	}
	for (const code of native.errorCodes()) assert.ok(samples.some((s) => s.code === code), `a sample of ${code}`);
	assert.equal(new Set(samples.map((s) => s.message)).size, samples.length, "two samples say the same");
});

test("every shell bad input fails with its code, from the native registry and the Node fallback alike", async (t) => {
	const kills: Array<() => Promise<unknown>> = [];
	const root = tempDir(t, kills);
	const file = path.join(root, "plain");
	fs.writeFileSync(file, "x");
	const logPath = (n: string) => path.join(root, "logs", `${n}.log`);
	const registries = {
		native: native.openShellRegistry(path.join(root, "native", "jobs.json")),
		fallback: openFallbackRegistry(path.join(root, "fallback", "jobs.json")),
	};
	for (const [name, reg] of Object.entries(registries)) {
		const running = reg.spawn({ command: "sleep 30", cwd: root, logPath: logPath(`${name}-run`), id: "bg-1" });
		kills.push(() => reg.kill(running.id, { graceMs: 100 }));
		const cases: Array<[string, () => unknown, string]> = [
			["empty command", () => reg.spawn({ command: "", cwd: root, logPath: logPath(name) }), "INVALID_OPTION"],
			["missing cwd", () => reg.spawn({ command: "true", cwd: path.join(root, "gone"), logPath: logPath(name) }), "PATH_NOT_FOUND"],
			["cwd is a file", () => reg.spawn({ command: "true", cwd: file, logPath: logPath(name) }), "NOT_A_FILE"],
			["log under a file", () => reg.spawn({ command: "true", cwd: root, logPath: path.join(file, "x.log") }), "IO"],
			["duplicate id", () => reg.spawn({ command: "true", cwd: root, logPath: logPath(name), id: "bg-1" }), "JOB_EXISTS"],
			["remove a running job", () => reg.remove("bg-1"), "JOB_RUNNING"],
			["wait on an aborted signal", () => reg.wait("bg-1", { signal: AbortSignal.abort() }), "CANCELLED"],
			["tail of an unknown job", () => reg.tail("bg-9"), "UNKNOWN_JOB"],
			["read of an unknown job", () => reg.readNew("bg-9"), "UNKNOWN_JOB"],
			["wait on an unknown job", () => reg.wait("bg-9"), "UNKNOWN_JOB"],
			["kill of an unknown job", () => reg.kill("bg-9"), "UNKNOWN_JOB"],
			["meta of an unknown job", () => reg.setMeta("bg-9", "m"), "UNKNOWN_JOB"],
			["claim of an unknown job", () => reg.claimDelivery("bg-9"), "UNKNOWN_JOB"],
			["remove of an unknown job", () => reg.remove("bg-9"), "UNKNOWN_JOB"],
		];
		for (const [what, call, code] of cases) assert.equal(await codeOf(call), code, `${name}: ${what}`);
	}
	// The two registries word each of these the same way, too.
	for (const what of ["empty", "missing", "duplicate", "unknown"] as const) {
		const call = (reg: (typeof registries)["native"] | ReturnType<typeof openFallbackRegistry>) =>
			what === "empty"
				? () => reg.spawn({ command: "", cwd: root, logPath: logPath("w") })
				: what === "missing"
					? () => reg.spawn({ command: "true", cwd: path.join(root, "gone"), logPath: logPath("w") })
					: what === "duplicate"
						? () => reg.spawn({ command: "true", cwd: root, logPath: logPath("w"), id: "bg-1" })
						: () => reg.tail("bg-9");
		assert.deepEqual(await failure(call(registries.fallback)), await failure(call(registries.native)), what);
	}
	const reg = registries.native;
	const nativeOnly: Array<[string, () => unknown, string]> = [
		["negative timeoutMs", () => reg.wait("bg-1", { timeoutMs: -1 }), "INVALID_OPTION"],
		["an until that is not a choice", () => reg.wait("bg-1", { until: "forever" as never }), "INVALID_OPTION"],
		["negative graceMs", () => reg.kill("bg-1", { graceMs: -5 }), "INVALID_OPTION"],
		["a keep that is not a choice", () => reg.readNew("bg-1", { keep: "middle" as never }), "INVALID_OPTION"],
		["negative maxBytes", () => reg.tail("bg-1", { maxBytes: -1 }), "INVALID_OPTION"],
		["negative offset", () => reg.setReadOffset("bg-1", -1), "INVALID_OPTION"],
		["unknown tracking", () => reg.spawn({ command: "true", cwd: root, logPath: logPath("t"), tracking: "magic" as never }), "INVALID_OPTION"],
		["tail of a missing log", () => native.readLogTail(path.join(root, "no.log")), "PATH_NOT_FOUND"],
		["read of a directory as a log", () => native.readLogFrom(root, 0), "NOT_A_FILE"],
		["a sidecar under a file", () => native.openShellRegistry(path.join(file, "jobs.json")), "IO"],
	];
	for (const [what, call, code] of nativeOnly) assert.equal(await codeOf(call), code, what);
});

test("every discover and index bad input fails with its code", async (t) => {
	const tree = makeTree({ "src/a.ts": "export function alpha() {}\n" });
	t.after(tree.cleanup);
	const cwd = tree.root;
	const cases: Array<[string, () => unknown, string]> = [
		["empty locate query", () => native.locate({ query: "", cwd }), "INVALID_PATTERN"],
		["locate query without words", () => native.locate({ query: "--", cwd }), "INVALID_PATTERN"],
		["locate bad glob", () => native.locate({ query: "alpha", cwd, glob: ["{"] }), "INVALID_PATTERN"],
		["locate unknown type", () => native.locate({ query: "alpha", cwd, type: "nosuchlang" }), "INVALID_OPTION"],
		["locate in a file", () => native.locate({ query: "alpha", cwd, path: "src/a.ts" }), "NOT_A_FILE"],
		["locate in a missing path", () => native.locate({ query: "alpha", cwd, path: "nope" }), "PATH_NOT_FOUND"],
		["locate on an aborted signal", () => native.locate({ query: "alpha", cwd, signal: AbortSignal.abort() }), "CANCELLED"],
		["trace without a subject", () => native.trace({ query: "relation:defined", cwd }), "INVALID_PATTERN"],
		["trace with an unknown kind", () => native.trace({ query: "subject:alpha relation:defined kind:nonsense", cwd }), "INVALID_PATTERN"],
		["trace in a missing path", () => native.trace({ query: "subject:alpha relation:defined", cwd, path: "nope" }), "PATH_NOT_FOUND"],
		["trace on an aborted signal", () => native.trace({ query: "subject:alpha relation:defined", cwd, signal: AbortSignal.abort() }), "CANCELLED"],
		["index of a file", () => native.indexStatus({ cwd, path: "src/a.ts" }), "NOT_A_FILE"],
		["index of a missing path", () => native.indexStart({ cwd, path: "nope" }), "PATH_NOT_FOUND"],
		["warm on an aborted signal", () => native.indexWarm({ cwd, signal: AbortSignal.abort() }), "CANCELLED"],
		["warm of a tree under the minimum", () => native.indexWarm({ cwd, minFiles: 100 }), "IO"],
	];
	for (const [what, call, code] of cases) assert.equal(await codeOf(call), code, what);
	native.indexDrop({ cwd });
});

test("a panic in any promise-returning call rejects with INTERNAL and Node lives on", async (t) => {
	const tree = makeTree({ "src/a.ts": "export function alpha() {}\n" });
	t.after(tree.cleanup);
	const calls: Record<string, string> = {
		outline: "n.outline({ path: 'src/a.ts', cwd })",
		glob: "n.glob({ pattern: '*.ts', path: cwd })",
		locate: "n.locate({ query: 'alpha', cwd })",
		trace: "n.trace({ query: 'subject:alpha relation:defined', cwd })",
		index: "n.indexWarm({ cwd, minFiles: 1 })",
	};
	for (const [point, call] of Object.entries(calls)) {
		const script = `const n = require(${JSON.stringify(path.join(packageRoot, "index.js"))});
			const cwd = ${JSON.stringify(tree.root)};
			${call}.then(() => console.log(JSON.stringify({ resolved: true })), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })));`;
		const run = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 20_000, env: { ...process.env, PI_UTILS_FAULT: point } });
		assert.equal(run.status, 0, `${point}: node must not abort: ${run.stderr}`);
		assert.deepEqual(JSON.parse(run.stdout), { code: "INTERNAL", message: `internal error: ${point} panicked` }, point);
	}
});

test("locate, trace and shell waits on one long-lived signal leave its listeners as they were", async (t) => {
	const tree = makeTree({ "src/a.ts": "export function alpha() { return 1; }\nalpha();\n" });
	t.after(tree.cleanup);
	const cwd = tree.root;
	const { signal } = new AbortController();
	for (let i = 0; i < 20; i++) {
		await native.locate({ query: "alpha", cwd, signal });
		await native.trace({ query: "subject:alpha relation:called_from", cwd, signal });
	}
	const dir = tempDir(t);
	const reg = native.openShellRegistry(path.join(dir, "jobs.json"));
	for (let i = 0; i < 10; i++) {
		const job = reg.spawn({ command: "true", cwd, logPath: path.join(dir, `${i}.log`) });
		const { timedOut } = await reg.wait(job.id, { timeoutMs: 10_000, signal });
		assert.equal(timedOut, false);
	}
	assert.equal(await settledListenerCount(signal, 0), 0);
});
