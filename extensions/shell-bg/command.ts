// /shell-bg: the user's view of the session's background jobs (list, kill, logs, clear).
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { AutocompleteProvider } from "@mariozechner/pi-tui";
import { completeShellBgArgs, parseShellBgArgs, shellBgArgsAt, SHELL_BG_USAGE, type JobRow } from "../lib/shell/format.ts";
import { sessionRegistryExists } from "../lib/shell/registry.ts";
import { LISTING_TYPE } from "./messages.ts";
import type { ShellSession } from "./session.ts";

export function registerShellBgCommand(pi: ExtensionAPI, session: ShellSession): void {
	pi.registerCommand("shell-bg", {
		description: "Background jobs: list | kill <id|all> | logs <id> | clear",
		getArgumentCompletions: (prefix) => {
			try {
				return completeShellBgArgs(prefix, session.jobs?.visible() ?? []);
			} catch {
				return null;
			}
		},
		handler: (args, ctx) => shellBgCommand(pi, session, args, ctx),
	});
	pi.on("session_start", (_event, ctx) => keepPathsOutOfArgs(ctx, session));
}

/**
 * Tab in a command's arguments asks Pi's editor for file paths, whatever the command completes. In
 * `/shell-bg`'s arguments it gets the command's own completions (verbs, job ids), or nothing: `kill <Tab>`
 * with no running job offers no file names.
 */
function keepPathsOutOfArgs(ctx: ExtensionContext, session: ShellSession): void {
	if (!ctx.hasUI || typeof ctx.ui.addAutocompleteProvider !== "function") return;
	ctx.ui.addAutocompleteProvider((current: AutocompleteProvider) => {
		const wrapped: AutocompleteProvider & { readonly triggerCharacters?: string[] } = {
			get triggerCharacters() {
				return (current as { triggerCharacters?: string[] }).triggerCharacters;
			},
			getSuggestions: async (lines, cursorLine, cursorCol, options) => {
				const args = options.force ? shellBgArgsAt(lines, cursorLine, cursorCol) : undefined;
				if (args === undefined) return current.getSuggestions(lines, cursorLine, cursorCol, options);
				try {
					const items = completeShellBgArgs(args, session.jobs?.visible() ?? []);
					return items ? { items, prefix: args } : null;
				} catch {
					return null;
				}
			},
			applyCompletion: (lines, cursorLine, cursorCol, item, prefix) => current.applyCompletion(lines, cursorLine, cursorCol, item, prefix),
			...(current.shouldTriggerFileCompletion
				? { shouldTriggerFileCompletion: (lines: string[], line: number, col: number) => current.shouldTriggerFileCompletion!(lines, line, col) }
				: {}),
		};
		return wrapped;
	});
}

async function shellBgCommand(pi: ExtensionAPI, session: ShellSession, args: string, ctx: ExtensionCommandContext): Promise<void> {
	const say = (text: string, level: "info" | "warning" | "error" = "info") => {
		if (ctx.hasUI) ctx.ui.notify(text, level);
		else process.stderr.write(`${text}\n`);
	};
	/** A listing stays in the chat when the session is idle (a message now would wait for the turn otherwise). */
	const show = (text: string, title: string, rows?: JobRow[]) => {
		if (!ctx.hasUI || !ctx.isIdle()) return say(text);
		try {
			pi.sendMessage({ customType: LISTING_TYPE, content: text, display: true, details: { title, ...(rows ? { rows } : {}) } });
		} catch {
			say(text);
		}
	};
	const cmd = parseShellBgArgs(args);
	if (cmd.kind === "usage") return say(`${cmd.problem}. ${SHELL_BG_USAGE}`, "warning");
	if (!session.active) return say("shell-bg: no active session", "warning");
	session.ctx = ctx;
	const current = session.jobs || sessionRegistryExists(session.dir!, session.native) ? session.openJobs() : undefined;
	try {
		if (cmd.kind === "list") {
			if (!current) return say("No background jobs in this session.");
			const table = current.table();
			return show(table.text, "/shell-bg · background jobs", table.rows);
		}
		if (!current) return say("No background jobs in this session.", "warning");
		// A job that ignores SIGTERM: the wait is said at once, and its outcome replaces that notice.
		if (cmd.kind === "kill") return say((await current.kill(cmd.target, "user", { onSlow: (text) => say(text) })).text);
		if (cmd.kind === "logs") return show(current.logs(cmd.id), `/shell-bg logs ${cmd.id}`);
		const gone = current.clear();
		return say(gone.length ? `Forgot ${gone.join(", ")} and deleted their logs.` : "No finished jobs to clear.");
	} catch (e) {
		say((e as Error).message, "error");
	}
}
