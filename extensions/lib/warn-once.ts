// Warnings the extensions show once: per session for settings problems, once per process for facts that do not
// change within it (why the native core is missing). The set of shown warnings lives on globalThis under the
// caller's symbol, so a /reload, which re-evaluates the extension modules, does not repeat them.

/** The part of Pi's ExtensionContext a warning needs. */
export interface WarningSink {
	hasUI: boolean;
	ui: { notify(message: string, type?: "info" | "warning" | "error"): void };
}

export function warnOnce(store: symbol, ctx: WarningSink, key: string, messages: readonly string[]): void {
	const registry = globalThis as unknown as Record<symbol, Set<string> | undefined>;
	const seen = (registry[store] ??= new Set<string>());
	for (const msg of messages) {
		const entry = `${key}\u0000${msg}`;
		if (seen.has(entry)) continue;
		seen.add(entry);
		// Print and json modes have no UI: ui.notify is a silent no-op there.
		if (ctx.hasUI) ctx.ui.notify(msg, "warning");
		else process.stderr.write(`${msg}\n`);
	}
}
