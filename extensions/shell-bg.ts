// shell-bg: Pi's `bash` with background jobs, plus `shell_status`, `shell_kill`, `/shell-bg`, a widget and
// follow-up messages. The tool surface follows @pify/shell-background (MIT, pifydev/shell-background); the
// processes are owned by the native registry (extensions/lib/shell/registry.ts), so jobs survive /reload,
// are reconciled after a restart and are never confused with strangers. Each tool, the command, the messages
// and the widget are modules in extensions/shell-bg/ (Pi's side; the logic is in extensions/lib/shell/); this
// file decides what exists and hands the session lifecycle to session.ts.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { loadNative } from "./lib/native.mjs";
import { isToolEnabled, loadSettings } from "./lib/settings.ts";
import { nativeRegistryAvailable } from "./lib/shell/registry.ts";
import { bashTool } from "./shell-bg/bash.ts";
import { registerShellBgCommand } from "./shell-bg/command.ts";
import { shellKillTool, shellStatusTool } from "./shell-bg/jobs-tools.ts";
import { registerMessages } from "./shell-bg/messages.ts";
import { watchSessionSettingsReads } from "./shell-bg/pi-shell.ts";
import { ShellSession } from "./shell-bg/session.ts";

export { BACKGROUND_BADGE } from "./shell-bg/bash.ts";

export default function shellBg(pi: ExtensionAPI): void {
	const settings = loadSettings().settings;
	if (!["bash", "shell_status", "shell_kill"].some((name) => isToolEnabled(settings, name))) return;

	const nativeLoad = loadNative();
	const native = "native" in nativeLoad ? nativeLoad.native : undefined;
	const fallbackReason = nativeRegistryAvailable(native)
		? undefined
		: "error" in nativeLoad
			? nativeLoad.error
			: `pi-utils native core has no process registry on ${process.platform}`;
	const session = new ShellSession(pi, settings, native, fallbackReason);
	// Pi 0.73 has no getSettings: the session's own settings are found through what it reads (pi-shell.ts).
	if (session.enabled("bash") && typeof (pi as unknown as { getSettings?: unknown }).getSettings !== "function") watchSessionSettingsReads();

	if (session.enabled("bash")) pi.registerTool(bashTool(session));
	if (session.enabled("shell_status")) pi.registerTool(shellStatusTool(session));
	if (session.enabled("shell_kill")) pi.registerTool(shellKillTool(session));
	registerMessages(pi);
	registerShellBgCommand(pi, session);

	pi.on("session_start", (event, ctx) => session.start(event, ctx));
	pi.on("session_shutdown", (event, ctx) => session.shutdown(event, ctx));
}
