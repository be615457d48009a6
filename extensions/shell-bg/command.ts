// /shell-bg: the user's view of the session's background jobs (list, kill, logs, clear).
import type { ExtensionAPI, ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { completeShellBgArgs, parseShellBgArgs, SHELL_BG_USAGE } from "../lib/shell/format.ts";
import { jobRegistryExists } from "../lib/shell/registry.ts";
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
}

async function shellBgCommand(pi: ExtensionAPI, session: ShellSession, args: string, ctx: ExtensionCommandContext): Promise<void> {
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
	if (!session.active) return say("shell-bg: no active session", "warning");
	session.ctx = ctx;
	const current = session.jobs || jobRegistryExists(session.dir!, session.native) ? session.openJobs() : undefined;
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
}
