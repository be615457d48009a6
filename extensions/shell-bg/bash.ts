// The bash tool: Pi's own bash (its execution, text and renderers) with background jobs: `background: true`
// starts one, a foreground command still running after a while may be moved to the background, and a
// command that leaves processes running says so. The jobs are the session's (session.ts).
import type { AgentToolResult, ExtensionContext, ToolDefinition } from "@mariozechner/pi-coding-agent";
import { createBashToolDefinition, getShellConfig } from "@mariozechner/pi-coding-agent";
import { Text } from "@mariozechner/pi-tui";
import { Type, type Static } from "typebox";
import { bashContract, structuredResult, type BashStructured } from "../lib/shell/contract.ts";
import { leftRunningPreview, leftRunningText, movedPreview, movedText, startedPreview, startedText } from "../lib/shell/format.ts";
import type { JobsHost } from "../lib/shell/jobs.ts";
import type { ShellJob } from "../lib/shell/registry.ts";
import { jobOperations, type RunOutcome } from "../lib/shell/runner.ts";
import type { ShellSession } from "./session.ts";

/** Drawn after the command on the call line of a background start (`$ npm run dev &bg`). */
export const BACKGROUND_BADGE = "&bg";

interface BackgroundDetails {
	id: string;
	pid: number;
	logPath: string;
	auto: boolean;
}

type BaseBash = ReturnType<typeof createBashToolDefinition>;
type BashContract = ReturnType<typeof bashContract>;

const textOf = (r: AgentToolResult<unknown>) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
const backgroundDetails = (job: ShellJob, auto: boolean): BackgroundDetails => ({ id: job.id, pid: job.pid, logPath: job.logPath, auto });

function bashSchema(base: BaseBash, foregroundTimeoutSec: number) {
	return Type.Object({
		command: base.parameters.properties.command,
		timeout: Type.Optional(
			Type.Number({
				description: `Timeout in seconds (default ${foregroundTimeoutSec} for foreground commands, none for background ones); it keeps applying after a command moves to the background`,
			}),
		),
		background: Type.Optional(
			Type.Boolean({
				description: "Start as a background job and return at once with its id, pid and log path (default: false)",
			}),
		),
	});
}

type BashParams = Static<ReturnType<typeof bashSchema>>;

export function bashTool(session: ShellSession): ToolDefinition<ReturnType<typeof bashSchema>, unknown> {
	const base = createBashToolDefinition(process.cwd());
	// Pi 1.6: the host's outputSchema / constrainedSampling, so codemode scripts get structured results.
	const contract = bashContract(
		base,
		(s, description) => Type.Union([s as never, Type.Null()], { description }),
		(description) => Type.Optional(Type.String({ description })),
	);
	const shell = session.settings.shell;
	return {
		...(contract ?? {}),
		name: "bash",
		label: base.label,
		description:
			`${base.description} Without a timeout, a foreground command is stopped after ${shell.foregroundTimeoutSec}s. ` +
			"With background: true it starts as a background job and the call returns at once with its id.",
		promptSnippet: base.promptSnippet,
		promptGuidelines: [
			...(base.promptGuidelines ?? []),
			"Use bash with background: true for commands that keep running (dev servers, watchers, long builds or test runs) instead of appending &; you get a job id at once and a message when the job ends.",
			`A foreground bash command still running after ${shell.autoBackgroundAfterSec}s may be moved to the background (you get its id and the output so far); its timeout keeps applying.`,
			...(session.enabled("shell_status")
				? ["Read a background job's new output with shell_status (only what you have not seen yet, or lines: N for the last N lines; wait: seconds blocks until it ends)."]
				: []),
			...(session.enabled("shell_kill") ? ["Stop a background job and everything it started with shell_kill, not with kill in bash."] : []),
		],
		parameters: bashSchema(base, shell.foregroundTimeoutSec),
		// Pi's own bash renderers draw this tool (`details` keeps its shape); a background start's call line
		// gets one badge after the command, so it no longer looks like a foreground command.
		renderCall(args, theme, context) {
			const a = args as { command?: unknown; background?: unknown } | undefined;
			const shown = a?.background === true && typeof a.command === "string" ? { ...a, command: `${a.command} ${theme.fg("accent", BACKGROUND_BADGE)}` } : args;
			if (base.renderCall) return base.renderCall(shown as never, theme, context as never);
			return new Text(theme.fg("toolTitle", theme.bold(`$ ${String(a?.command ?? "...")}`)), 0, 0);
		},
		renderResult(result, options, theme, context) {
			// Collapsed, Pi shows the last lines: a background start shows which job it started (the log path and
			// the instructions for the model are in the expanded view), a moved command or one that left processes
			// running one short line under its output.
			const bg = options.expanded ? undefined : (result.details as { shellBg?: BackgroundDetails } | undefined)?.shellBg;
			const preview = bg === undefined ? undefined : bg.auto ? leftRunningPreview(movedPreview(textOf(result))) : startedPreview(textOf(result));
			const shown = preview === undefined ? result : { ...result, content: [{ type: "text" as const, text: preview }] };
			if (base.renderResult) return base.renderResult(shown as never, options, theme, context as never);
			return new Text(theme.fg("toolOutput", textOf(shown)), 0, 0);
		},
		execute: (toolCallId, params, signal, onUpdate, ctx) => runBash(session, contract, { toolCallId, params, signal, onUpdate, ctx }),
	};
}

interface BashCall {
	toolCallId: string;
	params: BashParams;
	signal: AbortSignal | undefined;
	onUpdate: Parameters<BaseBash["execute"]>[3];
	ctx: ExtensionContext;
}

/** One bash call: Pi's bash run with our job operations, then what happened to the job said after its text. */
async function runBash(session: ShellSession, contract: BashContract, call: BashCall): Promise<AgentToolResult<unknown>> {
	const { params, ctx } = call;
	const startedAt = performance.now();
	const current = session.useCtx(ctx);
	const s = session.settings.shell;
	const background = params.background === true;
	if (background) {
		const refusal = current.refusal();
		if (refusal) throw new Error(refusal);
	}
	const timeout = params.timeout ?? (background ? undefined : s.foregroundTimeoutSec);
	const piShell = session.piShell(ctx);
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
		result = (await def.execute(call.toolCallId, { command: params.command, timeout }, call.signal, call.onUpdate, ctx)) as AgentToolResult<unknown>;
	} catch (e) {
		// Pi 0.73 reports a non-zero exit by throwing its text: what the command left running is said there too.
		if (outcome.leftRunning && e instanceof Error) throw new Error(`${e.message}\n\n${leftRunningText(outcome.leftRunning, session.host.tools)}`);
		throw e;
	}
	return withOutcome(result, outcome, { contract, tools: session.host.tools, startedAt, timeout, afterSec: s.autoBackgroundAfterSec, headless: !ctx.hasUI });
}

/** Pi's result, or ours where the command started, moved to or left behind a background job. */
function withOutcome(
	result: AgentToolResult<unknown>,
	outcome: RunOutcome,
	o: { contract: BashContract; tools: JobsHost["tools"]; startedAt: number; timeout: number | undefined; afterSec: number; headless: boolean },
): AgentToolResult<unknown> {
	const { startedAt, timeout, tools } = o;
	/** A result we wrote, with structured content where the host has the contract. */
	const ours = (text: string, details: unknown, structured: () => BashStructured): AgentToolResult<unknown> => ({
		content: [{ type: "text", text }],
		details,
		...(o.contract ? { structuredContent: structured() } : {}),
	});
	const hostStructured = (result as { structuredContent?: Partial<BashStructured> }).structuredContent;
	if (outcome.started) {
		const job = outcome.started;
		const text = startedText(job, { timeoutSec: timeout, headless: o.headless, tools });
		return ours(text, { shellBg: backgroundDetails(job, false) }, () => structuredResult({ text, exitCode: null, startedAt, jobId: job.id }));
	}
	if (outcome.moved) {
		const job = outcome.moved;
		const text = `${textOf(result).replace(/\n+$/, "")}\n\n${movedText(job, { afterSec: o.afterSec, timeoutSec: timeout, tools })}`;
		const details = { ...(result.details as object | undefined), shellBg: backgroundDetails(job, true) };
		return ours(text, details, () => structuredResult({ text, exitCode: null, startedAt, jobId: job.id, from: hostStructured }));
	}
	if (outcome.leftRunning) {
		const job = outcome.leftRunning;
		const text = `${textOf(result).replace(/\n+$/, "")}\n\n${leftRunningText(job, tools)}`;
		const details = { ...(result.details as object | undefined), shellBg: backgroundDetails(job, true) };
		const exitCode = hostStructured?.exit_code ?? job.leaderExitCode ?? null;
		const isError = (result as { isError?: boolean }).isError === true;
		return { ...ours(text, details, () => structuredResult({ text, exitCode, startedAt, jobId: job.id, from: hostStructured })), ...(isError ? { isError } : {}) };
	}
	return result;
}
