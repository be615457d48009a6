// Warnings the extensions show once: per session for settings problems, once per process for facts that do not
// change within it (why the native core is missing). The set of shown warnings lives on globalThis under the
// caller's symbol, so a /reload, which re-evaluates the extension modules, does not repeat them.

/** The part of Pi's ExtensionContext a warning needs. */
export interface WarningSink {
	hasUI: boolean;
	ui: { notify(message: string, type?: "info" | "warning" | "error"): void };
}

/**
 * A warning as `ui.notify` should get it on the host `piVersion`: Pi 0.73's TUI draws a notice shown at
 * startup flush against the `[Extensions]` listing that follows it, so the notice brings its own blank line
 * there (Pi 1.6 spaces it itself; RPC clients and other UIs, where stdout is no terminal, get the text as is).
 */
export function noticeFor(message: string, piVersion: string, terminal = process.stdout.isTTY === true): string {
	return terminal && piVersion.startsWith("0.") ? `${message}\n` : message;
}

export function warnOnce(store: symbol, ctx: WarningSink, key: string, messages: readonly string[], piVersion = ""): void {
	const registry = globalThis as unknown as Record<symbol, Set<string> | undefined>;
	const seen = (registry[store] ??= new Set<string>());
	for (const msg of messages) {
		const entry = `${key}\u0000${msg}`;
		if (seen.has(entry)) continue;
		seen.add(entry);
		// Print and json modes have no UI: ui.notify is a silent no-op there.
		if (ctx.hasUI) ctx.ui.notify(noticeFor(msg, piVersion), "warning");
		else process.stderr.write(`${msg}\n`);
	}
}
