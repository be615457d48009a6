// The glob tool: a newest-first file finder (native core, or rg). Parameters, text and render pieces come
// from extensions/lib/search/glob.mjs (shared with the CLI).
import type { AgentToolResult, ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { TUnsafe } from "typebox";
import { formatGlobCall, formatGlobResult, globParameters, runGlobTool, type GlobToolDetails, type GlobToolParams } from "../lib/search/glob.mjs";
import { kb } from "../lib/search/render.mjs";
import { DEFAULT_MAX_BYTES } from "../lib/truncate.mjs";
import { expandHint, resultComponent, schemaOf, searchConfig, secs, textComponent, toolResult, type SearchDeps } from "./kit.ts";

export function globTool(deps: SearchDeps): ToolDefinition<TUnsafe<GlobToolParams>, GlobToolDetails | undefined> {
	const s = deps.settings().glob;
	return {
		name: "glob",
		label: "glob",
		description:
			"Find files by glob pattern, newest modified first. Returns paths relative to the search directory. " +
			"Files that .gitignore excludes come after the project's own (noIgnore:false skips them); .git is never " +
			`listed. Output is truncated to ${s.limit} results or ${kb(DEFAULT_MAX_BYTES)}. ` +
			`A listing stops after ${secs(s.timeoutMs)}; partial results say so.`,
		promptSnippet: "Find files by glob pattern, newest modified first (includes gitignored files, after the project's)",
		promptGuidelines: ["Use glob to find files by name or path pattern; glob lists the most recently modified files first."],
		parameters: schemaOf<GlobToolParams>(globParameters(s)),
		async execute(_toolCallId, params, signal, _onUpdate, ctx): Promise<AgentToolResult<GlobToolDetails | undefined>> {
			const { glob, index } = deps.settings();
			const config = { ...searchConfig(glob, index, ctx.cwd, signal), maxBytes: DEFAULT_MAX_BYTES };
			return toolResult(await runGlobTool(deps.backend(), params, config));
		},
		renderCall(args, theme, context) {
			return textComponent(context.lastComponent, formatGlobCall(args, theme));
		},
		renderResult(result, options, theme, context) {
			return resultComponent(context.lastComponent, formatGlobResult(result, options.expanded, theme, expandHint()), options.expanded);
		},
	};
}
