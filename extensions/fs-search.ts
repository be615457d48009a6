// fs-search: overrides Pi's `grep` with the native core (or rg when the addon cannot load), and adds `glob`, a
// newest-first file finder, `outline`, a file's symbols with their line ranges, and `locate` / `trace`, ranked
// discovery and relation tracing (those three need the native core). Each tool is its own module in
// extensions/fs-search/ (schema, description, execute, render; the text comes from extensions/lib/search/,
// shared with the CLI); this file decides which tools exist and runs the session lifecycle.
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { VERSION } from "@mariozechner/pi-coding-agent";
import { loadNative, type Native, type NativeLoad } from "./lib/native.mjs";
import { findRg, rgBackend, RG_INSTALL_HINT } from "./lib/search/rg/index.mjs";
import { sweepSpillFiles } from "./lib/search/toolkit.mjs";
import { isToolEnabled, loadSettings, takeWarningsOnce, type PiUtilsSettings } from "./lib/settings.ts";
import { warnOnce } from "./lib/warn-once.ts";
import { globTool } from "./fs-search/glob.ts";
import { grepTool } from "./fs-search/grep.ts";
import { watchSession } from "./fs-search/familiarity.ts";
import type { SearchDeps } from "./fs-search/kit.ts";
import { locateTool } from "./fs-search/locate.ts";
import { outlineTool } from "./fs-search/outline.ts";
import { traceTool } from "./fs-search/trace.ts";

const NOTIFIED = Symbol.for("pi-utils.fs-search.notified");
const SEARCH_TOOLS = ["grep", "glob", "outline", "locate", "trace"];

function nativeWarning(load: NativeLoad): string | undefined {
	if ("native" in load) return undefined;
	const rg = findRg() ? "Searching with ripgrep (rg) instead." : `ripgrep (rg) was not found either: ${RG_INSTALL_HINT}.`;
	return `${load.error}. ${rg}`;
}

export default function fsSearch(pi: ExtensionAPI): void {
	// Tools are registered now, so the settings file decides what exists; session_start reloads it for the
	// values each call uses (a /reload re-runs this factory and picks up a changed disabledTools).
	let settings = loadSettings().settings;
	const native = loadNative();
	// What the model has already seen, from the session's own tool calls (the extension is the harness).
	const familiarity = watchSession(pi);
	const deps: SearchDeps = { settings: () => settings, backend: () => ("native" in native ? native.native : rgBackend), familiarity };
	const enabled = (name: string) => isToolEnabled(settings, name);

	if (enabled("grep")) pi.registerTool(grepTool(deps));
	if (enabled("glob")) pi.registerTool(globTool(deps));
	// outline, locate and trace need structure from the native core; without it they are left out rather
	// than offered broken.
	if ("native" in native) {
		const core = native.native;
		if (enabled("outline")) pi.registerTool(outlineTool(core, familiarity));
		if (enabled("locate")) pi.registerTool(locateTool(core, deps.settings, familiarity));
		if (enabled("trace")) pi.registerTool(traceTool(core, deps.settings, familiarity));
	}

	let swept = false;
	pi.on("session_start", (_event, ctx) => {
		// Spill files of earlier sessions, once per process, in the background (a slow temp folder never
		// delays the session).
		if (!swept) {
			swept = true;
			void sweepSpillFiles();
		}
		const loaded = loadSettings();
		settings = loaded.settings;
		const sessionKey = ctx.sessionManager.getSessionId();
		warnOnce(NOTIFIED, ctx, sessionKey, takeWarningsOnce(loaded, sessionKey), VERSION);
		if (!SEARCH_TOOLS.some(enabled)) return;
		// Why the native core is missing does not change within a process: said once, not on every /new.
		const nativeMsg = nativeWarning(native);
		if (nativeMsg) warnOnce(NOTIFIED, ctx, "process", [nativeMsg], VERSION);
		if (settings.index.enabled && "native" in native) startIndex(native.native, settings.index, ctx);
	});
}

/**
 * The live index of the working directory is built in the background on the addon's own thread (it never
 * keeps the process alive); searches scan until it is ready. A tree outside the bounds is simply not
 * indexed (indexStatus says why).
 */
function startIndex(core: Native, bounds: PiUtilsSettings["index"], ctx: ExtensionContext): void {
	const { minFiles, maxFiles, maxDiskMB } = bounds;
	try {
		core.indexStart({ path: ctx.cwd, minFiles, maxFiles, maxDiskMb: maxDiskMB });
	} catch {
		// A cwd that vanished: searches there fail on their own with the usual message.
	}
}
