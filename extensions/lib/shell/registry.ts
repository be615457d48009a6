// Where a Pi session's jobs live, and which process registry runs them: the native one (identity-checked,
// reconciled after a restart, kept across /reload by the addon) or, when the addon is unavailable, the plain
// Node child-process fallback.
import { existsSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { ShellJob, ShellKillReport, ShellLogChunk, ShellRegistry as NativeShellRegistry } from "../../../index.js";
import { fallbackRegistryOpen, openFallbackRegistry } from "./fallback.ts";
import type { Native } from "../native.mjs";

export type { ShellJob, ShellKillReport, ShellLogChunk };

/** The registry as the extension uses it: the addon's ShellRegistry, or the fallback without the addon. */
export type ShellRegistry = Pick<
	NativeShellRegistry,
	| "sidecarPath"
	| "fromMemory"
	| "problems"
	| "spawn"
	| "nextId"
	| "retireId"
	| "get"
	| "list"
	| "logCuts"
	| "wait"
	| "kill"
	| "tail"
	| "readNew"
	| "setReadOffset"
	| "claimDelivery"
	| "setMeta"
	| "remove"
	| "watch"
	| "unwatch"
>;

/**
 * The directory holding a session's sidecar and logs: next to Pi's session file
 * (`<session>.jsonl` -> `<session>.shell-bg/`, which Pi's session listing ignores), or under the agent
 * directory for a session that is only in memory. Both are scoped by the session id.
 */
export function jobDirFor(o: { sessionFile: string | undefined; sessionId: string; agentDir: string }): string {
	if (o.sessionFile) return `${o.sessionFile.replace(/\.jsonl$/, "")}.shell-bg`;
	const safeId = o.sessionId.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 80) || "session";
	return join(o.agentDir, "pi-utils", "shell-bg", safeId);
}

export const sidecarPathIn = (dir: string) => join(dir, "jobs.json");
export const logPathFor = (dir: string, id: string) => join(dir, "logs", `${id}.log`);

export function nativeRegistryAvailable(native: Native | undefined): native is Native {
	return typeof native?.openShellRegistry === "function";
}

export function openSessionRegistry(dir: string, native: Native | undefined): ShellRegistry {
	const sidecar = sidecarPathIn(dir);
	const registry = nativeRegistryAvailable(native) ? native.openShellRegistry(sidecar) : openFallbackRegistry(sidecar);
	takeOverIdCounter(dir, registry);
	return registry;
}

/**
 * Before the registry owned job ids, a session kept the next id number in `<dir>/next-id`: the ids below it were
 * shown and are retired once, and the file goes.
 */
function takeOverIdCounter(dir: string, registry: ShellRegistry): void {
	const path = join(dir, "next-id");
	try {
		const next = Number.parseInt(readFileSync(path, "utf8"), 10);
		if (next > 1) registry.retireId(`bg-${next - 1}`);
		unlinkSync(path);
	} catch {
		// No counter: a session started since, or a directory we cannot change (retried next time).
	}
}

/** Whether the session has jobs to reconcile or watch: a sidecar on disk, or a fallback registry in this process. */
export function sessionRegistryExists(dir: string, native: Native | undefined): boolean {
	const sidecar = sidecarPathIn(dir);
	return nativeRegistryAvailable(native) ? existsSync(sidecar) : fallbackRegistryOpen(sidecar);
}
