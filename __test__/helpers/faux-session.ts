// An in-process Pi session driven by pi-ai's faux provider (scripted model replies, no network): this package is loaded the way an
// install loads it (a package directory, so its manifest's pi.extensions decides what runs), session_start is
// fired as print mode fires it, and every tool result and every model context is recorded.
// In-process means the Pi version installed for the current Node: @mariozechner/pi-coding-agent 0.73.1 on
// Node 20 (1.6.0 replaced registerFauxProvider with a Models-based API; its coverage is the CLI run).
import {
	type AssistantMessage,
	type Context,
	type FauxResponseStep,
	registerFauxProvider,
} from "@mariozechner/pi-ai";
import {
	AuthStorage,
	createAgentSession,
	DefaultResourceLoader,
	type ExtensionUIContext,
	ModelRegistry,
	SessionManager,
	SettingsManager,
	type ToolDefinition,
} from "@mariozechner/pi-coding-agent";
import { packageRoot } from "./pi-cli.ts";

export { fauxAssistantMessage, fauxText, fauxToolCall } from "@mariozechner/pi-ai";

export interface FauxToolResult {
	toolCallId: string;
	toolName: string;
	args: unknown;
	text: string;
	isError: boolean;
	details: unknown;
}

export interface FauxRunResult {
	toolResults: FauxToolResult[];
	/** The context of every model call: system prompt, messages and the tools offered. */
	contexts: Context[];
	/** `ctx.ui.notify` calls (only with `withUI`). */
	notifications: Array<{ message: string; type: string | undefined }>;
	/** Extension load or runtime errors Pi reported. */
	extensionErrors: string[];
	/** The tool definitions the loaded extensions registered, by name (for renderer checks). */
	definitions: Map<string, ToolDefinition>;
}

export interface FauxRunOptions {
	/** The project the tools run in. */
	cwd: string;
	/** Pi's agent directory; also exported as PI_CODING_AGENT_DIR while the session runs (our settings live there). */
	agentDir: string;
	/** One scripted model reply per model call. */
	steps: FauxResponseStep[];
	prompt?: string;
	packageDir?: string;
	/** Extra environment for the duration of the run (undefined deletes a variable). */
	env?: Record<string, string | undefined>;
	/** Bind a recording UI context, so `ctx.hasUI` is true and notifications are captured. */
	withUI?: boolean;
	/** Abort the turn (as Escape does) this long after the first tool starts. */
	abortAfterToolStartMs?: number;
}

function recordingUI(notifications: FauxRunResult["notifications"]): ExtensionUIContext {
	const notify = (message: string, type?: string) => void notifications.push({ message, type });
	// Every other UI method is a harmless no-op, as in print mode.
	return new Proxy({ notify } as Partial<ExtensionUIContext>, {
		get: (target, key) => (key in target ? target[key as keyof ExtensionUIContext] : () => undefined),
	}) as ExtensionUIContext;
}

export async function runFauxSession(options: FauxRunOptions): Promise<FauxRunResult> {
	const env = { PI_CODING_AGENT_DIR: options.agentDir, PI_OFFLINE: "1", ...options.env };
	const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
	const apply = (vars: Record<string, string | undefined>) => {
		for (const [k, v] of Object.entries(vars)) {
			if (v === undefined) delete process.env[k];
			else process.env[k] = v;
		}
	};
	const result: FauxRunResult = {
		toolResults: [],
		contexts: [],
		notifications: [],
		extensionErrors: [],
		definitions: new Map(),
	};
	apply(env);
	const faux = registerFauxProvider();
	let session: Awaited<ReturnType<typeof createAgentSession>>["session"] | undefined;
	try {
		faux.setResponses(
			options.steps.map((step): FauxResponseStep => (context, streamOptions, state, model) => {
				// Tools carry their execute functions, which cannot be cloned; the model only sees the schema anyway.
				result.contexts.push({
					systemPrompt: context.systemPrompt,
					messages: structuredClone(context.messages),
					tools: context.tools?.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
				});
				return typeof step === "function" ? step(context, streamOptions, state, model) : (step as AssistantMessage);
			}),
		);
		const settingsManager = SettingsManager.inMemory();
		const resourceLoader = new DefaultResourceLoader({
			cwd: options.cwd,
			agentDir: options.agentDir,
			settingsManager,
			additionalExtensionPaths: [options.packageDir ?? packageRoot],
			noSkills: true,
			noPromptTemplates: true,
			noThemes: true,
			noContextFiles: true,
		});
		await resourceLoader.reload();
		const loaded = resourceLoader.getExtensions();
		result.extensionErrors.push(...loaded.errors.map((e) => `${e.path}: ${e.error}`));
		if (loaded.extensions.length === 0) throw new Error(`no extension loaded: ${result.extensionErrors.join("; ")}`);
		for (const ext of loaded.extensions) for (const [name, tool] of ext.tools) result.definitions.set(name, tool.definition);
		const authStorage = AuthStorage.inMemory();
		authStorage.setRuntimeApiKey(faux.getModel().provider, "faux-key");
		({ session } = await createAgentSession({
			cwd: options.cwd,
			agentDir: options.agentDir,
			model: faux.getModel(),
			resourceLoader,
			sessionManager: SessionManager.inMemory(options.cwd),
			settingsManager,
			authStorage,
			modelRegistry: ModelRegistry.inMemory(authStorage),
		}));
		await session.bindExtensions({
			...(options.withUI ? { uiContext: recordingUI(result.notifications) } : {}),
			onError: (err) => void result.extensionErrors.push(`${err.extensionPath}: ${err.error}`),
		});
		const argsById = new Map<string, unknown>();
		const modelErrors: string[] = [];
		let abortTimer: NodeJS.Timeout | undefined;
		const active = session;
		session.subscribe((event) => {
			if (event.type === "message_end" && event.message.role === "assistant" && event.message.stopReason === "error") {
				modelErrors.push(event.message.errorMessage ?? "unknown error");
			}
			if (event.type === "tool_execution_start") {
				argsById.set(event.toolCallId, event.args);
				if (options.abortAfterToolStartMs !== undefined && !abortTimer) {
					abortTimer = setTimeout(() => void active.abort(), options.abortAfterToolStartMs);
				}
			}
			if (event.type !== "tool_execution_end") return;
			const r = event.result as { content?: Array<{ type: string; text?: string }>; details?: unknown } | undefined;
			result.toolResults.push({
				toolCallId: event.toolCallId,
				toolName: event.toolName,
				args: argsById.get(event.toolCallId),
				text: (r?.content ?? []).map((c) => (c.type === "text" ? (c.text ?? "") : "")).join(""),
				isError: event.isError,
				details: r?.details,
			});
		});
		await session.prompt(options.prompt ?? "go");
		clearTimeout(abortTimer);
		if (modelErrors.length) throw new Error(`faux session failed: ${modelErrors.join("; ")}`);
		return result;
	} finally {
		session?.dispose();
		faux.unregister();
		apply(saved);
	}
}

/** The tool names offered to the model in one recorded context. */
export function toolNamesOf(context: Context): string[] {
	return (context.tools ?? []).map((t) => t.name);
}
