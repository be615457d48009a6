// The outline tool: a file's symbols with their line ranges, from the native core's tree-sitter outline.
// Parameters, text and render pieces come from extensions/lib/search/outline.mjs (shared with the CLI).
import type { AgentToolResult, ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { TUnsafe } from "typebox";
import type { Native } from "../lib/native.mjs";
import {
	DEFAULT_OUTLINE_MAX_ITEMS,
	formatOutlineCall,
	formatOutlineResult,
	outlineParameters,
	runOutlineTool,
	type OutlineToolDetails,
	type OutlineToolParams,
} from "../lib/search/outline.mjs";
import { DEFAULT_MAX_BYTES } from "../lib/truncate.mjs";
import type { SessionFamiliarity } from "./familiarity.ts";
import { expandHint, resultComponent, schemaOf, textComponent, toolResult } from "./kit.ts";

export function outlineTool(core: Native, familiarity?: SessionFamiliarity): ToolDefinition<TUnsafe<OutlineToolParams>, OutlineToolDetails> {
	return {
		name: "outline",
		label: "outline",
		description:
			"Show a file's structure without reading it: its functions, classes, methods, types and Markdown " +
			"sections with their line ranges, nested (`- function name @ start-end (n lines)`, two spaces per depth). " +
			"Rust, TypeScript/TSX, JavaScript, Python, Go, Java, C, C++, Ruby, PHP, Swift and Markdown; other files report no " +
			`grammar. Lists at most ${DEFAULT_OUTLINE_MAX_ITEMS} symbols unless maxItems says otherwise (deepest ` +
			"levels dropped first). Use it before reading a large file, then read only the line ranges you need.",
		promptSnippet: "Show a file's functions, classes and sections with line ranges (use before reading a large file)",
		promptGuidelines: [
			"Before reading a large source file or long Markdown document in full, use outline to see its structure, then read only the line ranges you need.",
		],
		parameters: schemaOf<OutlineToolParams>(outlineParameters()),
		async execute(_toolCallId, params, signal, _onUpdate, ctx): Promise<AgentToolResult<OutlineToolDetails>> {
			return toolResult(await runOutlineTool(core, params, { cwd: ctx.cwd, maxBytes: DEFAULT_MAX_BYTES, signal, known: familiarity?.outline(ctx) }));
		},
		renderCall(args, theme, context) {
			return textComponent(context.lastComponent, formatOutlineCall(args, theme));
		},
		renderResult(result, options, theme, context) {
			return resultComponent(context.lastComponent, formatOutlineResult(result, options.expanded, theme, expandHint()), options.expanded);
		},
	};
}
