// The locate tool: ranked file discovery ("you know roughly what a file is about, not its name"). Ranking
// and text come from the native core through extensions/lib/search/locate.mjs (shared with the CLI).
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import { DEFAULTS } from "../lib/defaults.mjs";
import type { Native } from "../lib/native.mjs";
import { runLocateTool, type LocateToolDetails } from "../lib/search/locate.mjs";
import type { PiUtilsSettings } from "../lib/settings.ts";
import { discoverTool } from "./discover.ts";
import type { SessionFamiliarity } from "./familiarity.ts";

export function locateSchema(defaultLimit: number) {
	return Type.Object({
		query: Type.String({ description: "Words or an identifier in any form: 'auth status', 'AuthStatus', 'auth_status', 'src/auth'" }),
		path: Type.Optional(Type.String({ description: "Directory to search in (default: current directory)" })),
		limit: Type.Optional(Type.Number({ description: `Most files to return (default: ${defaultLimit})` })),
		type: Type.Optional(Type.String({ description: "Only files of this ripgrep type, e.g. ts, rust, py" })),
		glob: Type.Optional(Type.String({ description: "Only files matching this glob, e.g. 'src/**'" })),
		noIgnore: Type.Optional(Type.Boolean({ description: `Also rank files ignore rules exclude, after the project's own (default: ${DEFAULTS.walk.noIgnore})` })),
		pathsOnly: Type.Optional(Type.Boolean({ description: "One path per line instead of the ranked report (default: false)" })),
	});
}

export function locateTool(core: Native, settings: () => PiUtilsSettings, familiarity?: SessionFamiliarity): ToolDefinition<ReturnType<typeof locateSchema>, LocateToolDetails> {
	return discoverTool({
		name: "locate",
		description:
			"Find the files a topic lives in when you know roughly what a file is about, not its name. Ranks paths by " +
			"the query's words in any identifier form (auth status = AuthStatus = auth_status), file name over directory, " +
			"files defining a symbol of that name, entry points (mod.rs, index.ts); tests, docs and vendored files rank " +
			"lower, ignored files last. Each result has its role, why it ranked, and up to 8 symbols with line ranges.",
		promptSnippet: "Rank the files most likely about a topic or identifier (when you do not know the file name)",
		promptGuidelines: [
			"Use locate when you know roughly what a file is about but not its name; use glob when you know the name pattern, grep for exact text.",
		],
		parameters: locateSchema(settings().locate.limit),
		run: (params, cwd, signal, ctx) => {
			const s = settings().locate;
			return runLocateTool(core, params, { cwd, signal, timeoutMs: s.timeoutMs, graceMs: s.graceMs, defaultLimit: s.limit, known: familiarity?.discover(ctx) });
		},
	});
}
