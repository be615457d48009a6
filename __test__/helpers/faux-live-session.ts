// A long-lived in-process Pi 0.73.1 session on pi-ai's faux provider, for features that outlive one prompt:
// follow-up messages that start turns on their own, /reload (session.reload(), which re-evaluates the
// extensions and clears API providers), quit (session_shutdown with reason "quit", as Pi's runtime emits it),
// and a restart on the same session file. Unlike faux-session.ts it keeps the session open between calls and
// records what a UI would have been asked to show.
import {
	type AssistantMessage,
	type Context,
	type FauxProviderRegistration,
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
} from "@mariozechner/pi-coding-agent";
import { packageRoot } from "./pi-cli.ts";

export { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";

// One api/provider name for every registration, so the session's model still resolves after /reload.
const API = "pi-utils-live-faux";

export interface LiveToolResult {
	toolCallId: string;
	toolName: string;
	text: string;
	isError: boolean;
	details: unknown;
}

export interface LiveSessionOptions {
	cwd: string;
	agentDir: string;
	/** Bind a recording UI (ctx.hasUI true, as in interactive and RPC sessions). */
	withUI?: boolean;
	/** Persist the session in this directory (a restart reopens the most recent file there); default in memory. */
	sessionDir?: string;
	/** Reopen this session file instead of starting a new one. */
	sessionFile?: string;
	env?: Record<string, string | undefined>;
	/** The session's own settings, in memory (an SDK host's `SettingsManager.inMemory(...)`); files are not read. */
	settings?: Parameters<typeof SettingsManager.inMemory>[0];
}

export interface LiveSession {
	/** Queue scripted model replies (each may look at the context it answers). */
	reply(...steps: FauxResponseStep[]): void;
	prompt(text: string): Promise<void>;
	/** Resolves once `check` holds, polling; fails after `ms`. */
	until(what: string, check: () => boolean, ms?: number): Promise<void>;
	/** Waits until no turn is running and none has started for `quietMs`. */
	settle(quietMs?: number): Promise<void>;
	reload(): Promise<void>;
	/** What a registered command's argument completion offers for `prefix` (null: none). */
	complete(command: string, prefix: string): Promise<Array<{ value: string }> | null>;
	/** Aborts the running turn, as Escape does. */
	abort(): Promise<void>;
	/** session_shutdown {reason: "quit"} and dispose, as Pi's runtime does on exit. */
	quit(): Promise<void>;
	toolResults: LiveToolResult[];
	contexts: Context[];
	notifications: Array<{ message: string; type: string | undefined }>;
	/** Custom messages put in the conversation (follow-ups, notices, listings), in order. */
	customMessages: Array<{ customType: string; text: string; details: unknown }>;
	/** Every setWidget call: lines, or undefined for a clear. */
	widgets: Array<{ key: string; lines: string[] | undefined }>;
	extensionErrors: string[];
	/** Model calls that ended in an error, e.g. a scripted reply whose assertion threw. */
	modelErrors: string[];
	sessionFile: string | undefined;
	/** Model calls made so far. */
	readonly calls: number;
}

function recordingUI(live: Pick<LiveSession, "notifications" | "widgets">): ExtensionUIContext {
	const notify = (message: string, type?: string) => void live.notifications.push({ message, type });
	const setWidget = (key: string, content: unknown) =>
		void live.widgets.push({ key, lines: Array.isArray(content) ? [...(content as string[])] : undefined });
	return new Proxy({ notify, setWidget } as Partial<ExtensionUIContext>, {
		get: (target, key) => (key in target ? target[key as keyof ExtensionUIContext] : () => undefined),
	}) as ExtensionUIContext;
}

/** All text of a model context, for asserting on what the model was shown. */
export function contextText(context: Context): string {
	return JSON.stringify(context.messages);
}

/** The text of the newest tool result in a context. */
export function lastToolResultText(context: Context): string {
	for (let i = context.messages.length - 1; i >= 0; i--) {
		const m = context.messages[i] as { role: string; content?: unknown };
		if (m.role !== "toolResult") continue;
		return (m.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? "").join("");
	}
	return "";
}

export async function openLiveSession(options: LiveSessionOptions): Promise<LiveSession> {
	const env = { PI_CODING_AGENT_DIR: options.agentDir, PI_OFFLINE: "1", ...options.env };
	const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
	const apply = (vars: Record<string, string | undefined>) => {
		for (const [k, v] of Object.entries(vars)) {
			if (v === undefined) delete process.env[k];
			else process.env[k] = v;
		}
	};
	apply(env);

	const queue: FauxResponseStep[] = [];
	let calls = 0;
	let lastActivity = Date.now();
	let faux: FauxProviderRegistration;
	const live: LiveSession = {
		reply: (...steps) => void queue.push(...steps),
		prompt: async () => {},
		until: async (what, check, ms = 15_000) => {
			const end = Date.now() + ms;
			while (!check()) {
				if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
				await new Promise((r) => setTimeout(r, 20));
			}
		},
		settle: async () => {},
		reload: async () => {},
		abort: async () => {},
		complete: async () => null,
		quit: async () => {},
		toolResults: [],
		contexts: [],
		notifications: [],
		customMessages: [],
		widgets: [],
		extensionErrors: [],
		modelErrors: [],
		sessionFile: undefined,
		get calls() {
			return calls;
		},
	};
	const dispatch: FauxResponseStep = (context, streamOptions, state, model) => {
		calls++;
		lastActivity = Date.now();
		live.contexts.push({ systemPrompt: context.systemPrompt, messages: structuredClone(context.messages) });
		const step = queue.shift();
		if (!step) throw new Error(`no scripted reply for model call ${calls}`);
		return typeof step === "function" ? step(context, streamOptions, state, model) : (step as AssistantMessage);
	};
	const register = () => {
		faux = registerFauxProvider({ api: API, provider: API });
		faux.setResponses(Array.from({ length: 200 }, () => dispatch));
	};
	register();

	const settingsManager = SettingsManager.inMemory(options.settings ?? {});
	const resourceLoader = new DefaultResourceLoader({
		cwd: options.cwd,
		agentDir: options.agentDir,
		settingsManager,
		additionalExtensionPaths: [packageRoot],
		noSkills: true,
		noPromptTemplates: true,
		noThemes: true,
		noContextFiles: true,
	});
	await resourceLoader.reload();
	const loaded = resourceLoader.getExtensions();
	live.extensionErrors.push(...loaded.errors.map((e) => `${e.path}: ${e.error}`));
	const authStorage = AuthStorage.inMemory();
	authStorage.setRuntimeApiKey(API, "faux-key");
	const sessionManager = options.sessionFile
		? SessionManager.open(options.sessionFile, options.sessionDir)
		: options.sessionDir
			? SessionManager.create(options.cwd, options.sessionDir)
			: SessionManager.inMemory(options.cwd);
	const { session } = await createAgentSession({
		cwd: options.cwd,
		agentDir: options.agentDir,
		model: faux!.getModel(),
		resourceLoader,
		sessionManager,
		settingsManager,
		authStorage,
		modelRegistry: ModelRegistry.inMemory(authStorage),
	});
	live.sessionFile = sessionManager.getSessionFile();
	await session.bindExtensions({
		...(options.withUI ? { uiContext: recordingUI(live) } : {}),
		onError: (err) => void live.extensionErrors.push(`${err.extensionPath}: ${err.error}`),
	});
	session.subscribe((event) => {
		lastActivity = Date.now();
		if (event.type === "message_end" && event.message.role === "assistant" && event.message.stopReason === "error") {
			live.modelErrors.push(event.message.errorMessage ?? "unknown error");
		}
		if (event.type === "message_end" && event.message.role === "custom") {
			const m = event.message as { customType: string; content: string | Array<{ type: string; text?: string }>; details?: unknown };
			const text = typeof m.content === "string" ? m.content : m.content.map((c) => c.text ?? "").join("");
			live.customMessages.push({ customType: m.customType, text, details: m.details });
		}
		if (event.type !== "tool_execution_end") return;
		const r = event.result as { content?: Array<{ type: string; text?: string }>; details?: unknown } | undefined;
		live.toolResults.push({
			toolCallId: event.toolCallId,
			toolName: event.toolName,
			text: (r?.content ?? []).map((c) => (c.type === "text" ? (c.text ?? "") : "")).join(""),
			isError: event.isError,
			details: r?.details,
		});
	});

	let closed = false;
	live.prompt = (text) => session.prompt(text);
	live.settle = async (quietMs = 300) => {
		await live.until("the session to go idle", () => !session.isStreaming && Date.now() - lastActivity >= quietMs, 20_000);
	};
	live.reload = async () => {
		await session.reload();
		register(); // reload reset every API provider, the faux one included
	};
	live.abort = () => session.abort();
	live.complete = async (command, prefix) => {
		const found = session.extensionRunner.getCommand(command);
		if (!found?.getArgumentCompletions) throw new Error(`no completions for /${command}`);
		return (await found.getArgumentCompletions(prefix)) ?? null;
	};
	live.quit = async () => {
		if (closed) return;
		closed = true;
		try {
			await session.extensionRunner.emit({ type: "session_shutdown", reason: "quit" });
		} finally {
			session.dispose();
			faux.unregister();
			apply(saved);
		}
	};
	return live;
}
