// The overridden bash runs with exactly the shell settings Pi's own bash has in the same session: an
// untrusted project's `.pi/settings.json` never reaches a command (Pi 1.6 `--no-approve`, or an SDK session
// created untrusted), an SDK host's in-memory settings win over every file, and a session given its own agent
// directory reads that one, not the one PI_CODING_AGENT_DIR names. Each case runs twice on the same host, once
// with Pi's built-in bash (no package loaded) and once with ours, and the two results must be the same text.
// The regression these guard: reading `SettingsManager.create(cwd, getAgentDir())` at session start, which
// treated every project as trusted and ignored the session's own settings.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeOpenAIServer } from "./helpers/fake-openai-server.ts";
import { fakeModelsJson, hostAvailable, packageRoot, PI_HOSTS, runPi, toolEnds, type PiHost } from "./helpers/pi-cli.ts";
import { runCommand } from "./helpers/run-command.ts";

const PROJECT_PREFIX = "echo UNTRUSTED-PREFIX-RAN";
const BAD_SHELL = "/nonexistent/pi-utils-no-such-shell";
const CHILD = path.join(packageRoot, "__test__/helpers/sdk-bash-child.mjs");

interface BashOutcome {
	text: string;
	isError: boolean;
}

const HOSTS: Array<{ host: PiHost; hostPackage: string; knowsTrust: boolean }> = [
	{ host: PI_HOSTS.legacy, hostPackage: "@mariozechner/pi-coding-agent", knowsTrust: false },
	{ host: PI_HOSTS.current, hostPackage: "@earendil-works/pi-coding-agent", knowsTrust: true },
];

function tempRoot(t: { after: (fn: () => void) => void }): string {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-shell-trust-"));
	t.after(() => fs.rmSync(root, { recursive: true, force: true }));
	return root;
}

/** A project whose own settings ask for a prefix (and maybe a shell) on every bash call. */
function projectWith(root: string, name: string, settings: Record<string, string>): string {
	const dir = path.join(root, name);
	fs.mkdirSync(path.join(dir, ".pi"), { recursive: true });
	fs.writeFileSync(path.join(dir, ".pi", "settings.json"), JSON.stringify(settings));
	return dir;
}

const oneBashCall = () => [{ toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] }, { text: "done" }];

/** `echo hi` through the Pi CLI, with our package loaded or with Pi's own bash. */
async function cliBash(host: PiHost, cwd: string, args: string[], withPackage: boolean): Promise<BashOutcome> {
	const server = await startFakeOpenAIServer(oneBashCall());
	try {
		const run = await runPi({ host, baseUrl: server.baseUrl, prompt: "run it", cwd, args, packageDir: withPackage ? undefined : null, timeoutMs: 60_000 });
		const bash = toolEnds(run).filter((e) => e.toolName === "bash");
		assert.equal(bash.length, 1, `one bash result (exit ${run.code}): ${run.stderr.slice(-2000)}`);
		return { text: bash[0].text, isError: bash[0].isError };
	} finally {
		await server.close();
	}
}

interface SdkCase {
	cwd: string;
	agentDir: string;
	settings: { inMemory?: Record<string, string>; projectTrusted?: boolean };
	env?: Record<string, string>;
}

/** `echo hi` in an SDK-created session (helpers/sdk-bash-child.mjs) on the host's own Node. */
async function sdkBash(h: (typeof HOSTS)[number], c: SdkCase, withPackage: boolean): Promise<BashOutcome> {
	const server = await startFakeOpenAIServer(oneBashCall());
	try {
		fs.writeFileSync(path.join(c.agentDir, "models.json"), fakeModelsJson(server.baseUrl));
		const input = { hostPackage: h.hostPackage, packageRoot: withPackage ? packageRoot : undefined, cwd: c.cwd, agentDir: c.agentDir, settings: c.settings };
		const env: NodeJS.ProcessEnv = { ...process.env, PI_OFFLINE: "1", PI_TELEMETRY: "0", PI_SKIP_VERSION_CHECK: "1", PI_CODING_AGENT_DIR: c.agentDir, ...c.env };
		const run = await runCommand(h.host.node, [CHILD, JSON.stringify(input)], { cwd: c.cwd, env, timeoutMs: 60_000 });
		const line = run.stdout.split("\n").find((l) => l.startsWith('{"toolResults"'));
		assert.ok(line, `the SDK child printed its results (exit ${run.code}): ${run.stderr.slice(-2000)}`);
		const bash = (JSON.parse(line).toolResults as Array<{ toolName: string; text: string; isError: boolean }>).filter((r) => r.toolName === "bash");
		assert.equal(bash.length, 1);
		return { text: bash[0].text, isError: bash[0].isError };
	} finally {
		await server.close();
	}
}

for (const h of HOSTS) {
	test(`${h.host.label}: CLI bash applies a project's shell settings exactly when Pi's own bash does`, { skip: !hostAvailable(h.host) }, async (t) => {
		const root = tempRoot(t);
		const prefixOnly = projectWith(root, "prefix-only", { shellCommandPrefix: PROJECT_PREFIX });
		const prefixAndShell = projectWith(root, "prefix-and-shell", { shellCommandPrefix: PROJECT_PREFIX, shellPath: BAD_SHELL });
		const trustModes = h.knowsTrust ? [["--no-approve"], ["--approve"]] : [[]];
		for (const args of trustModes) {
			for (const project of [prefixOnly, prefixAndShell]) {
				const what = `${path.basename(project)} ${args.join(" ") || "(no trust flag)"}`;
				const theirs = await cliBash(h.host, project, args, false);
				const ours = await cliBash(h.host, project, args, true);
				assert.deepEqual(ours, theirs, what);
				const untrusted = args.includes("--no-approve");
				// The facts behind the comparison, so it cannot pass by both sides breaking alike.
				if (untrusted) assert.deepEqual(theirs, { text: "hi\n", isError: false }, `${what}: Pi ignores an untrusted project's settings`);
				else if (project === prefixOnly) assert.equal(theirs.text, "UNTRUSTED-PREFIX-RAN\nhi\n", `${what}: Pi applies a trusted project's prefix`);
				else assert.equal(theirs.isError, true, `${what}: Pi refuses a shell that does not exist`);
			}
		}
	});

	test(`${h.host.label}: an SDK session's in-memory settings win over every settings file`, { skip: !hostAvailable(h.host) }, async (t) => {
		const root = tempRoot(t);
		const agentDir = path.join(root, "agent");
		fs.mkdirSync(agentDir);
		fs.writeFileSync(path.join(agentDir, "settings.json"), JSON.stringify({ shellCommandPrefix: "echo FROM-AGENT-FILE" }));
		const cwd = projectWith(root, "project", { shellCommandPrefix: PROJECT_PREFIX, shellPath: BAD_SHELL });
		const c: SdkCase = { cwd, agentDir, settings: { inMemory: { shellCommandPrefix: "echo FROM-MEMORY" } } };
		const theirs = await sdkBash(h, c, false);
		const ours = await sdkBash(h, c, true);
		assert.deepEqual(theirs, { text: "FROM-MEMORY\nhi\n", isError: false });
		assert.deepEqual(ours, theirs);
	});

	test(`${h.host.label}: an SDK session with its own agent directory reads that one, not PI_CODING_AGENT_DIR's`, { skip: !hostAvailable(h.host) }, async (t) => {
		const root = tempRoot(t);
		const own = path.join(root, "own-agent");
		const other = path.join(root, "env-agent");
		fs.mkdirSync(own);
		fs.mkdirSync(other);
		fs.writeFileSync(path.join(own, "settings.json"), JSON.stringify({ shellCommandPrefix: "echo FROM-SESSION-DIR" }));
		fs.writeFileSync(path.join(other, "settings.json"), JSON.stringify({ shellCommandPrefix: "echo FROM-ENV-DIR" }));
		const cwd = path.join(root, "project");
		fs.mkdirSync(cwd);
		const c: SdkCase = { cwd, agentDir: own, settings: {}, env: { PI_CODING_AGENT_DIR: other } };
		fs.writeFileSync(path.join(other, "models.json"), "{}");
		const theirs = await sdkBash(h, c, false);
		const ours = await sdkBash(h, c, true);
		assert.deepEqual(theirs, { text: "FROM-SESSION-DIR\nhi\n", isError: false });
		assert.deepEqual(ours, theirs);
	});
}

test(`${PI_HOSTS.current.label}: an SDK session created untrusted never runs the project's prefix or shell`, { skip: !hostAvailable(PI_HOSTS.current) }, async (t) => {
	const root = tempRoot(t);
	const agentDir = path.join(root, "agent");
	fs.mkdirSync(agentDir);
	const cwd = projectWith(root, "project", { shellCommandPrefix: PROJECT_PREFIX, shellPath: BAD_SHELL });
	const h = HOSTS[1];
	for (const projectTrusted of [false, true]) {
		const c: SdkCase = { cwd, agentDir, settings: { projectTrusted } };
		const theirs = await sdkBash(h, c, false);
		const ours = await sdkBash(h, c, true);
		assert.deepEqual(ours, theirs, `projectTrusted ${projectTrusted}`);
		if (!projectTrusted) assert.deepEqual(theirs, { text: "hi\n", isError: false });
		else assert.equal(theirs.isError, true, "trusted: Pi uses the project's (missing) shell");
	}
});
