// The session as the harness context: fs-search watches every tool call and result (tool_call, tool_result) and
// takes the disk facts of what each result showed; each outline, trace, locate and grep call rebuilds the
// picture from the entries of the session's current branch (so a compaction, /tree or a fork gives that
// branch's picture) and passes it on. The model lives in extensions/lib/context/ (no Pi imports); this only
// reads Pi's events and session. An event or session method a host lacks means no familiarity, never a failure.
import os from "node:os";
import { statSync } from "node:fs";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { createDisk } from "../lib/context/disk.mjs";
import { buildFamiliarity, createCaptureStore, toolViews, type Familiarity } from "../lib/context/familiarity.mjs";
import { callsOfBranch, type ObserveEnv } from "../lib/context/observe.mjs";
import type { GrepKnown } from "../lib/search/grep.mjs";
import type { DiscoverKnown } from "../lib/search/discover-kit.mjs";
import type { KnownFor } from "../lib/search/outline.mjs";

/** Facts survive /reload (the factory runs again; the session and its call ids stay). */
const STATE = Symbol.for("pi-utils.fs-search.familiarity");
type State = { disk: ReturnType<typeof createDisk>; store: ReturnType<typeof createCaptureStore> };

function state(): State {
	const g = globalThis as { [STATE]?: State };
	if (!g[STATE]) {
		const disk = createDisk();
		g[STATE] = { disk, store: createCaptureStore(disk) };
	}
	return g[STATE];
}

const isFile = (abs: string) => {
	try {
		return statSync(abs).isFile();
	} catch {
		return false;
	}
};

function envOf(cwd: string): ObserveEnv {
	return { cwd, home: os.homedir(), isFile };
}

/** What the search tools ask of the session: the picture for one call, by the tool's own path keys. */
export interface SessionFamiliarity {
	/** The picture of the branch now, or null when the host gives no session to read. */
	picture(ctx: ExtensionContext): Familiarity | null;
	outline(ctx: ExtensionContext): (arg: string) => KnownFor | null;
	discover(ctx: ExtensionContext): (root: string) => DiscoverKnown | null;
	grep(ctx: ExtensionContext, root: string | undefined): GrepKnown | undefined;
}

/** Registers the listeners (each guarded: a failure here never touches the tool result). */
export function watchSession(pi: ExtensionAPI): SessionFamiliarity {
	const { disk, store } = state();
	const on = pi.on.bind(pi) as unknown as (event: string, handler: (event: Record<string, unknown>, ctx: ExtensionContext) => unknown) => void;
	const guard = (fn: (event: Record<string, unknown>, ctx: ExtensionContext) => void) => (event: Record<string, unknown>, ctx: ExtensionContext) => {
		try {
			fn(event, ctx);
		} catch {
			// No facts for this call: it stays unverified, never presented as current.
		}
		return undefined;
	};
	on(
		"tool_call",
		guard((e, ctx) => {
			const name = String(e.toolName ?? "");
			store.beforeCall(String(e.toolCallId), name, (e.input as Record<string, unknown>) ?? {}, envOf(ctx.cwd));
		}),
	);
	on(
		"tool_result",
		guard((e, ctx) => {
			store.afterResult(
				String(e.toolCallId),
				{ toolName: String(e.toolName ?? ""), input: (e.input as Record<string, unknown>) ?? {}, content: e.content, details: e.details, isError: e.isError === true },
				envOf(ctx.cwd),
			);
		}),
	);
	// The picture is rebuilt from the branch on every call; these only drop cached file reads, so that a
	// compaction, /tree or a session switch starts from the disk as it is.
	for (const event of ["session_start", "session_compact", "session_tree"]) on(event, guard(() => disk.clear()));

	const picture = (ctx: ExtensionContext): Familiarity | null => {
		try {
			const sm = ctx.sessionManager as { getBranch?: () => unknown } | undefined;
			if (typeof sm?.getBranch !== "function") return null;
			const { calls } = callsOfBranch(sm.getBranch());
			if (calls.length === 0) return null;
			return buildFamiliarity(calls, store, disk, envOf(ctx.cwd));
		} catch {
			return null;
		}
	};
	const views = (ctx: ExtensionContext) => toolViews(picture(ctx), envOf(ctx.cwd));
	return {
		picture,
		outline: (ctx) => (arg) => views(ctx).outline(arg),
		discover: (ctx) => (root) => views(ctx).discover(root),
		grep: (ctx, root) => views(ctx).grep(root),
	};
}
