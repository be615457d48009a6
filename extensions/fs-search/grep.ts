// The grep tool as Pi sees it: Pi's `grep` overridden with the native core (or rg). Parameters, text and
// render pieces come from extensions/lib/search/grep.mjs (shared with the CLI).
import type { AgentToolResult, ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { TUnsafe } from "typebox";
import { formatGrepCall, formatGrepResult, grepParameters, runGrepTool, type GrepToolDetails, type GrepToolParams } from "../lib/search/grep.mjs";
import { kb } from "../lib/search/render.mjs";
import { expandHint, resultComponent, schemaOf, searchConfig, secs, textComponent, toolResult, type SearchDeps } from "./kit.ts";

export function grepTool(deps: SearchDeps): ToolDefinition<TUnsafe<GrepToolParams>, GrepToolDetails | undefined> {
	const s = deps.settings().grep;
	return {
		name: "grep",
		label: "grep",
		description:
			"Search file contents for a pattern. Returns matching lines as path:line: text, in path order. " +
			"In code and Markdown files, matches are grouped under the function, class or section enclosing them " +
			"(with the file's size and its other top-level symbols); group:false gives plain lines. " +
			"Also searches files that .gitignore excludes, listed after the project's own results " +
			`(noIgnore:false skips them); .git is never searched. Output is truncated to ${s.limit} matches ` +
			`or ${kb(s.maxBytes)} (whichever is hit first); long lines to ${s.maxLineLength} chars. ` +
			`A search stops after ${secs(s.timeoutMs)} and returns partial results.`,
		promptSnippet: "Search file contents for patterns (includes gitignored files, after the project's; never .git)",
		promptGuidelines: [
			"grep also searches files that .gitignore excludes (node_modules, build output), after the project's own results; pass noIgnore:false to skip them. grep never searches .git.",
			"Use glob, not grep, to find files by name or path; use grep with outputMode files_with_matches or count for an overview before reading matching lines.",
		],
		parameters: schemaOf<GrepToolParams>(grepParameters(s)),
		async execute(_toolCallId, params, signal, onUpdate, ctx): Promise<AgentToolResult<GrepToolDetails | undefined>> {
			const { grep, index } = deps.settings();
			const result = await runGrepTool(deps.backend(), params, {
				...searchConfig(grep, index, ctx.cwd, signal),
				maxLineLength: grep.maxLineLength,
				maxBytes: grep.maxBytes,
				onUpdate: onUpdate && ((p) => onUpdate(toolResult(p))),
				known: deps.familiarity?.grep(ctx, typeof params.path === "string" && params.path ? params.path : undefined),
			});
			return toolResult(result);
		},
		// Pi's grep look, drawn by us so that the notices stay visible collapsed (`details` keeps Pi's shape).
		renderCall(args, theme, context) {
			return textComponent(context.lastComponent, formatGrepCall(args, theme));
		},
		renderResult(result, options, theme, context) {
			return resultComponent(context.lastComponent, formatGrepResult(result, options.expanded, theme, expandHint()), options.expanded);
		},
	};
}
