// The overridden bash, run in the foreground, must read exactly like Pi's built-in bash: same text, truncation
// footers, spilled temp file, error wording and `details`, and it must honour Pi's shellPath and
// shellCommandPrefix settings and put <agentDir>/bin first on PATH.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createBashToolDefinition } from "@mariozechner/pi-coding-agent";
import { fauxAssistantMessage, fauxToolCall, openLiveSession } from "./helpers/faux-live-session.ts";

const TEMP_FILE = /\/[^\s\]]*\/pi-bash-[0-9a-f]{16}\.log/g;

interface Outcome {
	text: string;
	isError: boolean;
	details: unknown;
}

/** Pi's own bash tool (its local process backend) on the same command. */
async function builtin(cwd: string, command: string, options: { commandPrefix?: string; shellPath?: string }, timeout?: number): Promise<Outcome> {
	const def = createBashToolDefinition(cwd, options);
	try {
		const r = await def.execute("builtin", timeout === undefined ? { command } : { command, timeout }, undefined, undefined, undefined as never);
		const text = r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
		return { text, isError: false, details: r.details };
	} catch (e) {
		return { text: (e as Error).message, isError: true, details: undefined };
	}
}

function fullOutputOf(details: unknown): string | undefined {
	const p = (details as { fullOutputPath?: string } | undefined)?.fullOutputPath;
	return p ? fs.readFileSync(p, "utf8") : undefined;
}

function withoutPath(details: unknown): unknown {
	if (!details || typeof details !== "object") return details;
	const { fullOutputPath: _dropped, ...rest } = details as Record<string, unknown>;
	return rest;
}

test("foreground bash matches Pi's built-in text, footers, spill, errors and details", async (t) => {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-shellbg-compat-"));
	const agentDir = path.join(root, "agent");
	const project = path.join(root, "project");
	fs.mkdirSync(agentDir);
	fs.mkdirSync(project);
	// Pi's own settings: a shell that announces itself (on stdout: Pi's two pipes would make the order of a
	// stderr line a race), and a prefix run before every command.
	const shell = path.join(root, "announcing-shell");
	fs.writeFileSync(shell, '#!/bin/sh\necho "via announcing-shell"\nexec /bin/bash "$@"\n', { mode: 0o755 });
	const piSettings = { shellPath: shell, shellCommandPrefix: "export PI_UTILS_PREFIX=from-prefix" };
	const commands = [
		"seq 1 3000",
		"head -c 60000 /dev/zero | tr '\\0' x",
		"printf 'a\\nb\\n'; exit 3",
		"printf 'no newline'",
		"true",
		"echo \"$PI_UTILS_PREFIX\"; echo \"${PATH%%:*}\"",
		"echo out; sleep 0.05; echo err >&2; sleep 0.05; echo more",
	];
	// The session's own (in-memory) settings: what Pi's own bash in this session would run with.
	const live = await openLiveSession({ cwd: project, agentDir, settings: piSettings });
	const spilled: string[] = [];
	t.after(async () => {
		await live.quit();
		for (const f of spilled) fs.rmSync(f, { force: true });
		fs.rmSync(root, { recursive: true, force: true });
	});
	live.reply(...commands.map((command) => fauxAssistantMessage([fauxToolCall("bash", { command })], { stopReason: "toolUse" })), fauxAssistantMessage("done"));
	await live.prompt("run them");
	assert.equal(live.toolResults.length, commands.length);

	for (const [i, command] of commands.entries()) {
		const ours = live.toolResults[i];
		const theirs = await builtin(project, command, { commandPrefix: piSettings.shellCommandPrefix, shellPath: shell });
		for (const d of [ours.details, theirs.details]) {
			const p = (d as { fullOutputPath?: string } | undefined)?.fullOutputPath;
			if (p) spilled.push(p);
		}
		assert.equal(ours.text.replace(TEMP_FILE, "<spill>"), theirs.text.replace(TEMP_FILE, "<spill>"), command);
		assert.equal(ours.isError, theirs.isError, command);
		// A thrown error has no details of its own (Pi's agent loop records {}).
		if (!theirs.isError) assert.deepEqual(withoutPath(ours.details), withoutPath(theirs.details), command);
		assert.equal(fullOutputOf(ours.details), fullOutputOf(theirs.details), `spilled output of ${command}`);
	}
	const [seq, longLine, failed, , empty, env] = live.toolResults;
	assert.match(seq.text, /\n\n\[Showing lines 1003-3002 of 3002\. Full output: \/.*pi-bash-[0-9a-f]{16}\.log\]$/);
	assert.match(longLine.text, /\[Showing last 50\.0KB of line 2 \(line is 58\.6KB\)\./);
	assert.equal(failed.text, "via announcing-shell\na\nb\n\n\nCommand exited with code 3");
	assert.equal(empty.text, "via announcing-shell\n");
	assert.equal(env.text, `via announcing-shell\nfrom-prefix\n${path.join(agentDir, "bin")}\n`, "prefix applied, <agentDir>/bin first on PATH");
});

// The bash cases of Pi's own tool tests (coding-agent `test/tools.test.ts`): a simple command, a failing one,
// and a timeout. Each must give Pi's outcome (text, error or not) through our override too.
test("Pi's own bash tool test cases give Pi's outcome through the override", async (t) => {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-shellbg-picases-"));
	const agentDir = path.join(root, "agent");
	fs.mkdirSync(agentDir);
	const cases: Array<{ command: string; timeout?: number; expect: RegExp; isError: boolean }> = [
		{ command: "echo 'test output'", expect: /^test output\n$/, isError: false },
		{ command: "exit 1", expect: /code 1/, isError: true },
		{ command: "sleep 5", timeout: 1, expect: /timed out/i, isError: true },
	];
	const live = await openLiveSession({ cwd: root, agentDir });
	t.after(async () => {
		await live.quit();
		fs.rmSync(root, { recursive: true, force: true });
	});
	live.reply(...cases.map(({ command, timeout }) => fauxAssistantMessage([fauxToolCall("bash", timeout === undefined ? { command } : { command, timeout })], { stopReason: "toolUse" })), fauxAssistantMessage("done"));
	await live.prompt("run them");
	assert.equal(live.toolResults.length, cases.length);
	for (const [i, c] of cases.entries()) {
		const ours = live.toolResults[i];
		const theirs = await builtin(root, c.command, {}, c.timeout);
		assert.match(theirs.text, c.expect, `Pi: ${c.command}`);
		assert.equal(theirs.isError, c.isError, `Pi: ${c.command}`);
		assert.equal(ours.text, theirs.text, c.command);
		assert.equal(ours.isError, theirs.isError, c.command);
	}
});
