// Where a Pi session's jobs live, and which process registry runs them: the native one (identity-checked,
// reconciled after a restart, kept across /reload by the addon) or, when the addon is unavailable, the plain
// Node child-process fallback.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ShellJob, ShellKillReport, ShellLogChunk, ShellRegistry } from "../../../index.js";
import { fallbackRegistryOpen, openFallbackRegistry } from "./fallback.ts";
import type { Native } from "../native.mjs";

export type { ShellJob, ShellKillReport, ShellLogChunk };

/** What the extension uses of a registry; both implementations provide it. */
export type JobRegistry = Pick<
	ShellRegistry,
	| "sidecarPath"
	| "fromMemory"
	| "problems"
	| "spawn"
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
 * The directory holding a session's sidecar, logs and id counter: next to Pi's session file
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
const counterPath = (dir: string) => join(dir, "next-id");

export function nativeRegistryAvailable(native: Native | undefined): native is Native {
	return typeof native?.openShellRegistry === "function";
}

export function openJobRegistry(dir: string, native: Native | undefined): JobRegistry {
	const sidecar = sidecarPathIn(dir);
	return nativeRegistryAvailable(native) ? native.openShellRegistry(sidecar) : openFallbackRegistry(sidecar);
}

/** Whether the session has jobs to reconcile or watch: a sidecar on disk, or a fallback registry in this process. */
export function jobRegistryExists(dir: string, native: Native | undefined): boolean {
	const sidecar = sidecarPathIn(dir);
	return nativeRegistryAvailable(native) ? existsSync(sidecar) : fallbackRegistryOpen(sidecar);
}

/** `bg-7` -> 7; anything else -> 0. */
export function idNumber(id: string): number {
	const m = /^bg-(\d+)$/.exec(id);
	return m ? Number(m[1]) : 0;
}

/**
 * Job ids never repeat within a session, even after `/shell-bg clear` forgot the highest ones: the model may
 * still hold an old id in its context. The registry's own default (highest + 1) would reuse them, so the
 * high-water mark is kept in a small file next to the sidecar.
 */
export function nextJobId(dir: string, jobs: ShellJob[]): string {
	let n = 1;
	try {
		n = Math.max(n, Number.parseInt(readFileSync(counterPath(dir), "utf8"), 10) || 1);
	} catch {
		// No counter yet.
	}
	for (const j of jobs) n = Math.max(n, idNumber(j.id) + 1);
	return `bg-${n}`;
}

/** Records that `id` was shown to the model, so it is never handed out again. Best effort. */
export function commitJobId(dir: string, id: string): void {
	const next = idNumber(id) + 1;
	if (next <= 1) return;
	try {
		let current = 0;
		try {
			current = Number.parseInt(readFileSync(counterPath(dir), "utf8"), 10) || 0;
		} catch {
			// First commit.
		}
		if (current >= next) return;
		mkdirSync(dir, { recursive: true });
		const tmp = `${counterPath(dir)}.${process.pid}.tmp`;
		writeFileSync(tmp, `${next}\n`);
		renameSync(tmp, counterPath(dir));
	} catch {
		// A read-only directory costs only id continuity across /shell-bg clear.
	}
}
