// shell-bg: Pi's `bash` with background jobs, plus `shell_status`, `shell_kill`, `/shell-bg`, a widget and
// follow-up messages. The tool surface follows @pify/shell-background (MIT, pifydev/shell-background); the
// processes are owned by the native registry (extensions/lib/shell/registry.ts), so jobs survive /reload,
// are reconciled after a restart and are never confused with strangers. This file only wires Pi's API to
// extensions/lib/shell/.
import type { AgentToolResult, ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { createBashToolDefinition, getAgentDir, getShellConfig, keyHint, SettingsManager, VERSION } from "@mariozechner/pi-coding-agent";
import { Box, Text } from "@mariozechner/pi-tui";
import { Type } from "typebox";
import { loadNative } from "./lib/native.mjs";
import { agentDir, isToolEnabled, loadSettings, takeWarningsOnce } from "./lib/settings.ts";
import { completeShellBgArgs, followUpDisplay, leftRunningText, movedPreview, movedText, parseShellBgArgs, SHELL_BG_USAGE, startedText, widgetLine } from "./lib/shell/format.ts";
import { MAX_WAIT_SEC, ShellJobs, type JobsHost } from "./lib/shell/jobs.ts";
import { jobDirFor, jobRegistryExists, nativeRegistryAvailable, openJobRegistry, type ShellJob } from "./lib/shell/registry.ts";
import { bashContract, structuredResult, type BashStructured } from "./lib/shell/contract.ts";
import { sweepJobDirs } from "./lib/shell/retention.ts";
import { jobOperations, type RunOutcome } from "./lib/shell/runner.ts";
import { keepSignalHandled } from "./lib/shell/quit-signal.ts";
import { warnOnce as sharedWarnOnce } from "./lib/warn-once.ts";

const WIDGET = "shell-bg";
const MESSAGE_TYPE = "shell-bg";
const LISTING_TYPE = "shell-bg-listing";
const NOTIFIED = Symbol.for("pi-utils.shell-bg.notified");
const SWEPT = Symbol.for("pi-utils.shell-bg.swept");
/** Drawn after the command on the call line of a background start (`$ npm run dev &bg`). */
export const BACKGROUND_BADGE = "&bg";

interface BackgroundDetails {
	id: string;
	pid: number;
	logPath: string;
	auto: boolean;
}

function warnOnce(ctx: ExtensionContext, key: string, messages: string[]): void {
	sharedWarnOnce(NOTIFIED, ctx, key, messages, VERSION);
}

/** Pi applies `shellPath` and `shellCommandPrefix` only to its own bash; an override reads them itself. */
function piShellSettings(cwd: string): { shellPath?: string; commandPrefix?: string } {
	try {
		const sm = SettingsManager.create(cwd, getAgentDir());
		return { shellPath: sm.getShellPath(), commandPrefix: sm.getShellCommandPrefix() };
	} catch {
		return {};
	}
}

const textOf = (r: AgentToolResult<unknown>) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
const backgroundDetails = (job: ShellJob, auto: boolean): BackgroundDetails => ({ id: job.id, pid: job.pid, logPath: job.logPath, auto });

export default function shellBg(pi: ExtensionAPI): void {
	let settings = loadSettings().settings;
	const enabled = (name: string) => isToolEnabled(settings, name);
	if (!["bash", "shell_status", "shell_kill"].some(enabled)) return;

	const nativeLoad = loadNative();
	const native = "native" in nativeLoad ? nativeLoad.native : undefined;
	const fallbackReason = nativeRegistryAvailable(native)
		? undefined
		: "error" in nativeLoad
			? nativeLoad.error
			: `pi-utils native core has no process registry on ${process.platform}`;

	// This instance's view of the session; everything async checks `active` first (a /reload or quit makes
	// `pi` stale, and a stale call throws).
	let active = false;
	let ctxRef: ExtensionContext | undefined;
	let jobs: ShellJobs | undefined;
	let dir: string | undefined;
	let inMemorySession = false;
	let piShell: { shellPath?: string; commandPrefix?: string } = {};
	let widgetTimer: NodeJS.Timeout | undefined;
	let widgetText = "";
	let releaseSigterm: (() => void) | undefined;

	const host: JobsHost = {
		canDeliver: (how) => {
			if (!active || !ctxRef) return false;
			// Print mode ends with the last turn: a follow-up sent when idle would start a turn nobody awaits.
			return how === "nextTurn" || ctxRef.hasUI || !ctxRef.isIdle();
		},
		deliver: (job, text, how) => {
			if (!active) return;
			try {
				pi.sendMessage(
					{
						customType: MESSAGE_TYPE,
						content: text,
						// The user's own kill is told to the user once, by its notice; the model gets the message.
						display: how !== "notice",
						details: { id: job.id, state: job.state, exitCode: job.exitCode, signal: job.signal, runtimeMs: job.runtimeMs, logPath: job.logPath },
					},
					// A notice rides in the follow-up queue while a turn runs and is appended at once when idle: in
					// order on both hosts, and no turn starts for it.
					how === "followUp" ? { deliverAs: "followUp", triggerTurn: true } : how === "notice" ? { deliverAs: "followUp" } : { deliverAs: "nextTurn" },
				);
			} catch {
				// A stale ctx after a shutdown race: the ending stays claimed, which is better than a crashed host.
			}
		},
		changed: () => refreshWidget(),
		problem: (text) => {
			if (active && ctxRef && dir) warnOnce(ctxRef, dir, [`shell-bg: ${text}`]);
		},
		get tools() {
			return { status: enabled("shell_status"), kill: enabled("shell_kill") };
		},
	};

	function refreshWidget(): void {
		try {
			if (!active || !ctxRef?.hasUI || !jobs) return stopWidget(false);
			const running = jobs.running();
			if (running.length === 0) return stopWidget(true);
			const current = jobs;
			// The terminal's width (the widget spans it); 100 columns where it is unknown (RPC).
			const width = process.stdout.columns || 100;
			const lines = running.map((j) => widgetLine(j, current.lastLineOf(j), width));
			const text = lines.join("\n");
			if (text !== widgetText) {
				ctxRef.ui.setWidget(WIDGET, lines, { placement: "aboveEditor" });
				widgetText = text;
			}
			if (!widgetTimer) {
				widgetTimer = setInterval(refreshWidget, 1000);
				widgetTimer.unref();
			}
		} catch {
			stopWidget(false);
		}
	}

	function stopWidget(clear: boolean): void {
		clearInterval(widgetTimer);
		widgetTimer = undefined;
		if (clear && widgetText && active && ctxRef?.hasUI) {
			try {
				ctxRef.ui.setWidget(WIDGET, undefined);
			} catch {
				// Stale UI.
			}
		}
		if (clear || !active) widgetText = "";
	}

	/** Opens the session's registry on first use (a session that never runs bash gets no directory). */
	function openJobs(): ShellJobs {
		if (jobs) return jobs;
		if (!active || !dir) throw new Error("shell-bg: no active session");
		const opened = new ShellJobs(openJobRegistry(dir, native), dir, () => settings.shell, host);
		opened.reportProblems();
		// Said when it first matters (the first command of a process), not at startup: fs-search already
		// reports the missing core there, and a user who never runs a command needs no second notice.
		if (fallbackReason && ctxRef) {
			warnOnce(ctxRef, "process", [
				`${fallbackReason}. shell-bg runs commands as plain child processes: background jobs are not reconciled after a restart and not identity-checked before a kill.`,
			]);
		}
		opened.registry.watch((job) => {
			try {
				if (active && jobs === opened) opened.onEnded(job);
			} catch {
				// Never let a late callback take Pi down.
			}
		});
		jobs = opened;
		return opened;
	}

	function useCtx(ctx: ExtensionContext): ShellJobs {
		if (active) ctxRef = ctx;
		return openJobs();
	}

	// ------------------------------------------------------------ bash

	if (enabled("bash")) {
		const base = createBashToolDefinition(process.cwd());
		// Pi 1.6: the host's outputSchema / constrainedSampling, so codemode scripts get structured results.
		const contract = bashContract(
			base,
			(s, description) => Type.Union([s as never, Type.Null()], { description }),
			(description) => Type.Optional(Type.String({ description })),
		);
		/** A result we wrote, with structured content where the host has the contract. */
		const ours = (text: string, details: unknown, structured: () => BashStructured): AgentToolResult<unknown> => ({
			content: [{ type: "text", text }],
			details,
			...(contract ? { structuredContent: structured() } : {}),
		});
		pi.registerTool({
			...(contract ?? {}),
			name: "bash",
			label: base.label,
			description:
				`${base.description} Without a timeout, a foreground command is stopped after ${settings.shell.foregroundTimeoutSec}s. ` +
				"With background: true it starts as a background job and the call returns at once with its id.",
			promptSnippet: base.promptSnippet,
			promptGuidelines: [
				...(base.promptGuidelines ?? []),
				"Use bash with background: true for commands that keep running (dev servers, watchers, long builds or test runs) instead of appending &; you get a job id at once and a message when the job ends.",
				`A foreground bash command still running after ${settings.shell.autoBackgroundAfterSec}s may be moved to the background (you get its id and the output so far); its timeout keeps applying.`,
				...(enabled("shell_status")
					? ["Read a background job's new output with shell_status (only what you have not seen yet, or lines: N for the last N lines; wait: seconds blocks until it ends)."]
					: []),
				...(enabled("shell_kill") ? ["Stop a background job and everything it started with shell_kill, not with kill in bash."] : []),
			],
			parameters: Type.Object({
				command: base.parameters.properties.command,
				timeout: Type.Optional(
					Type.Number({
						description: `Timeout in seconds (default ${settings.shell.foregroundTimeoutSec} for foreground commands, none for background ones); it keeps applying after a command moves to the background`,
					}),
				),
				background: Type.Optional(
					Type.Boolean({
						description: "Start as a background job and return at once with its id, pid and log path (default: false)",
					}),
				),
			}),
			// Pi's own bash renderers draw this tool (`details` keeps its shape); a background start's call line
			// gets one badge after the command, so it no longer looks like a foreground command.
			renderCall(args, theme, context) {
				const a = args as { command?: unknown; background?: unknown } | undefined;
				const shown = a?.background === true && typeof a.command === "string" ? { ...a, command: `${a.command} ${theme.fg("accent", BACKGROUND_BADGE)}` } : args;
				if (base.renderCall) return base.renderCall(shown as typeof args, theme, context);
				return new Text(theme.fg("toolTitle", theme.bold(`$ ${String(a?.command ?? "...")}`)), 0, 0);
			},
			renderResult(result, options, theme, context) {
				// A command moved to the background: collapsed, its notice is one short line under the output.
				const moved = !options.expanded && (result.details as { shellBg?: BackgroundDetails } | undefined)?.shellBg?.auto === true;
				const shown = moved ? { ...result, content: [{ type: "text" as const, text: movedPreview(textOf(result)) }] } : result;
				if (base.renderResult) return base.renderResult(shown as never, options, theme, context as never);
				return new Text(theme.fg("toolOutput", textOf(shown)), 0, 0);
			},
			async execute(toolCallId, params, signal, onUpdate, ctx): Promise<AgentToolResult<unknown>> {
				const startedAt = performance.now();
				const current = useCtx(ctx);
				const s = settings.shell;
				const background = params.background === true;
				if (background) {
					const refusal = current.refusal();
					if (refusal) throw new Error(refusal);
				}
				const timeout = params.timeout ?? (background ? undefined : s.foregroundTimeoutSec);
				const outcome: RunOutcome = {};
				const operations = jobOperations(
					current,
					{
						background,
						// Print and json modes never auto-background: nothing could tell the model when the job ends.
						autoBackgroundMs: !background && ctx.hasUI ? s.autoBackgroundAfterSec * 1000 : undefined,
						resolveShell: () => getShellConfig(piShell.shellPath).shell,
					},
					outcome,
				);
				const def = createBashToolDefinition(ctx.cwd, { operations, commandPrefix: piShell.commandPrefix, shellPath: piShell.shellPath });
				let result: AgentToolResult<unknown>;
				try {
					result = (await def.execute(toolCallId, { command: params.command, timeout }, signal, onUpdate, ctx)) as AgentToolResult<unknown>;
				} catch (e) {
					// Pi 0.73 reports a non-zero exit by throwing its text: what the command left running is said there too.
					if (outcome.leftRunning && e instanceof Error) throw new Error(`${e.message}\n\n${leftRunningText(outcome.leftRunning, host.tools)}`);
					throw e;
				}
				const hostStructured = (result as { structuredContent?: Partial<BashStructured> }).structuredContent;
				if (outcome.started) {
					const job = outcome.started;
					const text = startedText(job, { timeoutSec: timeout, headless: !ctx.hasUI, tools: host.tools });
					return ours(text, { shellBg: backgroundDetails(job, false) }, () => structuredResult({ text, exitCode: null, startedAt, jobId: job.id }));
				}
				if (outcome.moved) {
					const job = outcome.moved;
					const text = `${textOf(result).replace(/\n+$/, "")}\n\n${movedText(job, { afterSec: s.autoBackgroundAfterSec, timeoutSec: timeout, tools: host.tools })}`;
					const details = { ...(result.details as object | undefined), shellBg: backgroundDetails(job, true) };
					return ours(text, details, () => structuredResult({ text, exitCode: null, startedAt, jobId: job.id, from: hostStructured }));
				}
				if (outcome.leftRunning) {
					const job = outcome.leftRunning;
					const text = `${textOf(result).replace(/\n+$/, "")}\n\n${leftRunningText(job, host.tools)}`;
					const details = { ...(result.details as object | undefined), shellBg: backgroundDetails(job, true) };
					const exitCode = hostStructured?.exit_code ?? job.leaderExitCode ?? null;
					const isError = (result as { isError?: boolean }).isError === true;
					return { ...ours(text, details, () => structuredResult({ text, exitCode, startedAt, jobId: job.id, from: hostStructured })), ...(isError ? { isError } : {}) };
				}
				return result;
			},
		});
	}

	// ------------------------------------------------------------ shell_status, shell_kill

	if (enabled("shell_status")) {
		pi.registerTool({
			name: "shell_status",
			label: "shell_status",
			description:
				"Background jobs started by bash. Without id: a table of this session's jobs (id, state, exit code, runtime, command, last line). " +
				"With id: the job's state and its output since your last read (or the last N lines with lines), capped at 2000 lines / 50KB with the rest saved to a temp file. " +
				`wait: seconds (at most ${MAX_WAIT_SEC}) to block until the job ends first.`,
			promptSnippet: "Check background jobs: state and new output; optionally wait for one to end",
			parameters: Type.Object({
				id: Type.Optional(Type.String({ description: "Job id, e.g. bg-1 (omit to list all jobs)" })),
				lines: Type.Optional(Type.Number({ description: "Show the last N lines instead of the output since the last read" })),
				wait: Type.Optional(Type.Number({ description: `Seconds to wait for the job to end before answering (0-${MAX_WAIT_SEC}, default 0)` })),
			}),
			async execute(_toolCallId, params, signal, _onUpdate, ctx) {
				const current = useCtx(ctx);
				if (!params.id) return { content: [{ type: "text", text: current.table() }], details: undefined };
				const r = await current.status({ id: params.id, lines: params.lines, wait: params.wait, signal });
				return { content: [{ type: "text", text: r.text }], details: r.details };
			},
		});
	}

	if (enabled("shell_kill")) {
		pi.registerTool({
			name: "shell_kill",
			label: "shell_kill",
			description:
				"Stop a background job and everything it started: SIGTERM to its process group, then SIGKILL after a grace period. " +
				'id: a job id, or "all" for every running job. Reports what happened to each job.',
			promptSnippet: "Stop a background job (or all of them)",
			parameters: Type.Object({
				id: Type.String({ description: 'Job id (e.g. bg-1), or "all"' }),
			}),
			async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
				const r = await useCtx(ctx).kill(params.id.trim(), "model");
				return { content: [{ type: "text", text: r.text }], details: { jobs: r.reports.map((k) => ({ id: k.job.id, outcome: k.outcome, state: k.job.state })) } };
			},
		});
	}

	// Follow-ups: the status line collapsed, the output lines when expanded (the model gets all of it either way).
	pi.registerMessageRenderer(MESSAGE_TYPE, (message, { expanded }) => {
		const content = typeof message.content === "string" ? message.content : message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
		return new Text(followUpDisplay(content, expanded, keyHint("app.tools.expand", "to expand")), 1, 0);
	});

	// /shell-bg's listings: a message in the chat (it stays where the user asked for it; a notice is replaced
	// by the next one), drawn as written, and never shown to the model.
	pi.registerMessageRenderer(LISTING_TYPE, (message, _options, theme) => {
		const content = typeof message.content === "string" ? message.content : message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
		const title = (message.details as { title?: string } | undefined)?.title ?? "/shell-bg";
		const box = new Box(1, 1, (t) => theme.bg("customMessageBg", t));
		box.addChild(new Text(`${theme.fg("customMessageLabel", theme.bold(title))}\n${theme.fg("customMessageText", content)}`, 0, 0));
		return box;
	});
	pi.on("context", (event) => {
		const kept = event.messages.filter((m) => !(m.role === "custom" && m.customType === LISTING_TYPE));
		return kept.length === event.messages.length ? undefined : { messages: kept };
	});

	// ------------------------------------------------------------ /shell-bg

	pi.registerCommand("shell-bg", {
		description: "Background jobs: list | kill <id|all> | logs <id> | clear",
		getArgumentCompletions: (prefix) => {
			try {
				return completeShellBgArgs(prefix, jobs?.visible() ?? []);
			} catch {
				return null;
			}
		},
		handler: async (args, ctx) => {
			const say = (text: string, level: "info" | "warning" | "error" = "info") => {
				if (ctx.hasUI) ctx.ui.notify(text, level);
				else process.stderr.write(`${text}\n`);
			};
			/** A listing stays in the chat when the session is idle (a message now would wait for the turn otherwise). */
			const show = (text: string, title: string) => {
				if (!ctx.hasUI || !ctx.isIdle()) return say(text);
				try {
					pi.sendMessage({ customType: LISTING_TYPE, content: text, display: true, details: { title } });
				} catch {
					say(text);
				}
			};
			const cmd = parseShellBgArgs(args);
			if (cmd.kind === "usage") return say(`${cmd.problem}. ${SHELL_BG_USAGE}`, "warning");
			if (!active) return say("shell-bg: no active session", "warning");
			ctxRef = ctx;
			const current = jobs || jobRegistryExists(dir!, native) ? openJobs() : undefined;
			try {
				if (cmd.kind === "list") return current ? show(current.table(), "/shell-bg · background jobs") : say("No background jobs in this session.");
				if (!current) return say("No background jobs in this session.", "warning");
				// A job that ignores SIGTERM: the wait is said at once, and its outcome replaces that notice.
				if (cmd.kind === "kill") return say((await current.kill(cmd.target, "user", { onSlow: (text) => say(text) })).text);
				if (cmd.kind === "logs") return show(current.logs(cmd.id), `/shell-bg logs ${cmd.id}`);
				const gone = current.clear();
				return say(gone.length ? `Forgot ${gone.join(", ")} and deleted their logs.` : "No finished jobs to clear.");
			} catch (e) {
				say((e as Error).message, "error");
			}
		},
	});

	// ------------------------------------------------------------ lifecycle

	pi.on("session_start", (event, ctx) => {
		const loaded = loadSettings();
		settings = loaded.settings;
		const sessionId = ctx.sessionManager.getSessionId();
		warnOnce(ctx, sessionId, takeWarningsOnce(loaded, sessionId));
		active = true;
		ctxRef = ctx;
		jobs = undefined;
		const sessionFile = ctx.sessionManager.getSessionFile();
		inMemorySession = !sessionFile;
		dir = jobDirFor({ sessionFile, sessionId, agentDir: agentDir() });
		piShell = piShellSettings(ctx.cwd);
		// In the TUI, SIGTERM must reach session_shutdown below on Pi 0.73 too (why: lib/shell/quit-signal.ts).
		if (ctx.hasUI && process.stdin.isTTY === true) releaseSigterm ??= keepSignalHandled("SIGTERM");
		// Once per Pi process (not per /reload): job directories of sessions that are gone, past their retention.
		const store = globalThis as unknown as Record<symbol, boolean | undefined>;
		if (!store[SWEPT]) {
			store[SWEPT] = true;
			try {
				sweepJobDirs({ sessionFile, agentDir: agentDir(), current: dir, days: settings.shell.logRetentionDays });
			} catch {
				// Best effort: a sweep never stops a session from starting.
			}
		}
		if (!jobRegistryExists(dir, native)) return;
		// Reconcile now: adopted jobs get watched, and endings nobody announced yet are told once.
		const current = openJobs();
		if (event.reason === "reload") {
			setTimeout(() => {
				if (active && jobs === current) current.announcePending("followUp");
			}, 0);
		} else current.announcePending("nextTurn");
		refreshWidget();
	});

	pi.on("session_shutdown", async (event, ctx) => {
		releaseSigterm?.();
		releaseSigterm = undefined;
		const current = jobs;
		stopWidget(true);
		active = false;
		jobs = undefined;
		if (!current) return;
		current.detach();
		if (event.reason === "reload") return; // the next instance takes over the same registry
		if (settings.shell.onQuit === "kill") await current.killAll({ onSlow: (text) => sayWhileQuitting(ctx, `shell-bg: ${text}`) });
		current.tidy(inMemorySession);
	});
}

/**
 * What Pi's quit waits for. An interactive quit (Ctrl+D, Ctrl+C twice, /quit) stops the TUI before the
 * shutdown event on both hosts, so the terminal is a plain one again and a line on stderr stays under
 * Pi's last frame; Pi 1.6's quit on SIGTERM/SIGHUP emits the event first, with the TUI still drawing, so
 * the line goes into the widget there (stderr would tear the frame). Print and RPC modes: stderr.
 */
function sayWhileQuitting(ctx: ExtensionContext, text: string): void {
	const tuiLive = process.stdin.isTTY === true && process.stdin.isRaw === true;
	try {
		if (tuiLive && ctx.hasUI) return ctx.ui.setWidget(WIDGET, [text], { placement: "aboveEditor" });
	} catch {
		// A UI already gone: stderr below.
	}
	try {
		process.stderr.write(`${text}\n`);
	} catch {
		// Nowhere to say it.
	}
}
