// `pi install git:github.com/sting8k/pi-utils` end to end, offline: git is pointed at a bare clone of this
// repository's committed HEAD (url.<dir>.insteadOf in a throwaway GIT_CONFIG_GLOBAL), the real Pi 0.73.1 CLI
// clones it and runs `npm install --omit=dev` in the clone with an empty npm cache and no registry (so the
// install must not need a single package), and the package's install script builds the addon. Then `pi --mode
// json` against the scripted model server shows our grep answering: natively, or with PATH stripped of cargo,
// through rg with one notice.
//
// Uncommitted changes are not part of what is installed. The source build compiles the crate in release mode
// into the install script's shared target dir (~/.cache/pi-utils/target, or $CARGO_TARGET_DIR): only the first
// run on a machine compiles the dependencies (up to ~4 minutes on 2 cores); later runs rebuild pi-utils alone.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { offeredTools, startFakeOpenAIServer, toolResults } from "./helpers/fake-openai-server.ts";
import { baseEnv, nodeFilesIn, offlineEnv, packageRoot, pathWithoutCargo } from "./helpers/dist.ts";
import { fakeModelsJson, hostAvailable, PI_HOSTS } from "./helpers/pi-cli.ts";
import { describeRun, runCommand, type CommandResult } from "./helpers/run-command.ts";
import { makeTree } from "./helpers/tree.ts";

const SOURCE = "git:github.com/sting8k/pi-utils";
const host = PI_HOSTS.legacy;
const hasCargo = spawnSync("cargo", ["--version"], { stdio: "ignore" }).status === 0;
const pathNoCargo = pathWithoutCargo(["node", "npm", "git", "rg"]);
const NOTICE = "pi-utils native core unavailable";

interface Installed {
	agentDir: string;
	clone: string;
	install: CommandResult;
	env: NodeJS.ProcessEnv;
}

describe("pi install git:github.com/sting8k/pi-utils, offline", { skip: hostAvailable(host) ? false : "Pi 0.73.1 not installed" }, () => {
	let tmp: string;
	let gitConfig: string;
	let project: ReturnType<typeof makeTree>;

	before(() => {
		tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-git-install-"));
		const repos = path.join(tmp, "repos");
		const bare = spawnSync("git", ["clone", "--bare", "--quiet", packageRoot, path.join(repos, "sting8k", "pi-utils")], {
			env: baseEnv(),
			encoding: "utf8",
		});
		assert.equal(bare.status, 0, bare.stderr);
		gitConfig = path.join(tmp, "gitconfig");
		fs.writeFileSync(gitConfig, `[url "${repos}/"]\n\tinsteadOf = https://github.com/\n`);
		project = makeTree({
			".gitignore": "node_modules/\n",
			"notes.txt": "a needle here\n",
			"other.txt": "nothing to see\n",
			"node_modules/dep/readme.txt": "a needle in a dependency\n",
		});
	});
	after(() => {
		project.cleanup();
		fs.rmSync(tmp, { recursive: true, force: true });
	});

	async function piInstall(name: string, extraEnv: NodeJS.ProcessEnv): Promise<Installed> {
		const agentDir = path.join(tmp, name, "agent");
		fs.mkdirSync(agentDir, { recursive: true });
		const env: NodeJS.ProcessEnv = {
			...baseEnv(),
			...offlineEnv(path.join(tmp, name)),
			GIT_CONFIG_GLOBAL: gitConfig,
			GIT_CONFIG_NOSYSTEM: "1",
			GIT_TERMINAL_PROMPT: "0",
			PI_CODING_AGENT_DIR: agentDir,
			PI_OFFLINE: "1",
			PI_TELEMETRY: "0",
			PI_SKIP_VERSION_CHECK: "1",
			...extraEnv,
		};
		const install = await runCommand(host.node, [host.cli, "install", SOURCE], { cwd: tmp, env, timeoutMs: 12 * 60_000 });
		return { agentDir, clone: path.join(agentDir, "git", "github.com", "sting8k", "pi-utils"), install, env };
	}

	/** The checks both paths share: a clean install of HEAD that downloaded nothing and is recorded in settings. */
	function assertInstalled({ agentDir, clone, install }: Installed): void {
		assert.equal(install.code, 0, describeRun(install));
		const head = (dir: string) => spawnSync("git", ["-C", dir, "rev-parse", "HEAD"], { env: baseEnv(), encoding: "utf8" }).stdout.trim();
		assert.equal(head(clone), head(packageRoot), "the clone is this repository's HEAD");
		assert.ok(!fs.existsSync(path.join(clone, "node_modules")), "npm install --omit=dev installed no package (so it needed no registry)");
		const settings = JSON.parse(fs.readFileSync(path.join(agentDir, "settings.json"), "utf8")) as { packages?: unknown[] };
		assert.deepEqual(settings.packages, [SOURCE]);
	}

	/** One grep call through the installed package (loaded from settings.json, no -e), then a closing reply. */
	async function askForGrep({ agentDir, env }: Installed) {
		const server = await startFakeOpenAIServer([
			{ toolCalls: [{ id: "g1", name: "grep", arguments: { pattern: "needle" } }] },
			{ text: "done" },
		]);
		try {
			fs.writeFileSync(path.join(agentDir, "models.json"), fakeModelsJson(server.baseUrl));
			const run = await runCommand(
				host.node,
				[host.cli, "--model", "fake/fake-model", "--no-session", "--mode", "json", "find the needle"],
				{ cwd: project.root, env, timeoutMs: 60_000 },
			);
			assert.equal(run.code, 0, describeRun(run));
			assert.equal(server.requests.length, 2, describeRun(run));
			const grep = server.requests[0].tools?.find((t) => t.function.name === "grep");
			assert.ok(grep && "outputMode" in (grep.function.parameters as { properties: object }).properties, "our grep, not Pi's built-in");
			assert.ok(offeredTools(server.requests[0]).includes("glob"), "fs-search's glob is offered");
			const ends = run.stdout
				.split("\n")
				.filter((l) => l.startsWith("{"))
				.map((l) => JSON.parse(l) as { type?: string; toolName?: string; isError?: boolean })
				.filter((e) => e.type === "tool_execution_end");
			assert.deepEqual(ends.map((e) => [e.toolName, e.isError]), [["grep", false]]);
			return { run, text: toolResults(server.requests[1]).get("g1") ?? "" };
		} finally {
			await server.close();
		}
	}

	test("with Rust: the install script builds the addon in the clone and the native grep answers", { skip: hasCargo ? false : "cargo not installed", timeout: 15 * 60_000 }, async (t) => {
		const installed = await piInstall("native", {});
		t.diagnostic(`pi install (clone + npm install --omit=dev + cargo build): ${(installed.install.ms / 1000).toFixed(1)} s`);
		assertInstalled(installed);
		const out = installed.install.stdout + installed.install.stderr;
		assert.match(out, /\[pi-utils\] native addon ready in [\d.]+s/, describeRun(installed.install));
		assert.equal(nodeFilesIn(installed.clone).length, 1, "one addon next to index.js");
		const { run, text } = await askForGrep(installed);
		assert.match(text, /^notes\.txt:1: a needle here$/m, text);
		assert.match(text, /node_modules/, "our grep also reports the ignored dependency");
		assert.ok(!run.stderr.includes(NOTICE), `no fallback notice: ${run.stderr}`);
	});

	test("without Rust (PATH stripped of cargo): the install succeeds, grep answers through rg, and the user is told once", { skip: pathNoCargo ? false : "cannot strip cargo from PATH and keep node, npm, git and rg", timeout: 5 * 60_000 }, async (t) => {
		const installed = await piInstall("fallback", { PATH: pathNoCargo });
		t.diagnostic(`pi install without cargo: ${(installed.install.ms / 1000).toFixed(1)} s`);
		assertInstalled(installed);
		assert.match(installed.install.stdout + installed.install.stderr, /\[pi-utils\] cargo not found/);
		assert.deepEqual(nodeFilesIn(installed.clone), []);
		const { run, text } = await askForGrep(installed);
		assert.match(text, /^notes\.txt:1: a needle here$/m, text);
		const notices = run.stderr.split("\n").filter((l) => l.includes(NOTICE));
		t.diagnostic(`notices on stderr: ${notices.join(" | ")}`);
		const search = notices.filter((l) => l.includes("Searching with ripgrep (rg) instead."));
		assert.equal(search.length, 1, run.stderr);
		assert.ok(search[0].includes(`Fix: install Rust (https://rustup.rs) and run \`npm install\` in ${installed.clone}`), search[0]);
	});
});
