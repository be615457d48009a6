// What locate and trace share as Pi tools: both answer with the native core's text, drawn the same way
// (`name query in path`, then the first lines of the answer). Each tool module gives its own schema,
// description and run.
import type { AgentToolResult, ExtensionContext, ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { Static, TSchema } from "typebox";
import { rankedFirst } from "../lib/search/discover-kit.mjs";
import { formatResultLines, kb, shortenPath } from "../lib/search/render.mjs";
import { expandHint, resultComponent, textComponent, toolResult } from "./kit.ts";

export interface DiscoverToolSpec<P extends TSchema, D> {
	name: string;
	description: string;
	promptSnippet: string;
	promptGuidelines: string[];
	parameters: P;
	run: (params: Static<P>, cwd: string, signal: AbortSignal | undefined, ctx: ExtensionContext) => Promise<{ text: string; details: D }>;
}

export function discoverTool<P extends TSchema, D>(spec: DiscoverToolSpec<P, D>): ToolDefinition<P, D> {
	return {
		name: spec.name,
		label: spec.name,
		description: spec.description,
		promptSnippet: spec.promptSnippet,
		promptGuidelines: spec.promptGuidelines,
		parameters: spec.parameters,
		async execute(_toolCallId, params, signal, _onUpdate, ctx): Promise<AgentToolResult<D>> {
			const { text, details } = await spec.run(params, ctx.cwd, signal, ctx);
			return toolResult({ text, details });
		},
		renderCall(args, theme, context) {
			const a = args as { query?: unknown; path?: unknown } | undefined;
			const where = typeof a?.path === "string" && a.path ? ` in ${shortenPath(a.path)}` : "";
			const query = typeof a?.query === "string" ? theme.fg("accent", a.query) : theme.fg("error", "[invalid arg]");
			return textComponent(context.lastComponent, `${theme.fg("toolTitle", theme.bold(spec.name))} ${query}${theme.fg("toolOutput", where)}`);
		},
		renderResult(result, options, theme, context) {
			const d = result.details as { timedOut?: boolean; truncation?: { truncated: boolean; maxBytes: number } } | undefined;
			const warnings: string[] = [];
			if (d?.timedOut) warnings.push("timed out, partial");
			if (d?.truncation?.truncated) warnings.push(`${kb(d.truncation.maxBytes)} limit`);
			return resultComponent(context.lastComponent, formatResultLines(result, { expanded: options.expanded, maxLines: 20, expandHint: expandHint(), warnings, collapse: rankedFirst }, theme), options.expanded);
		},
	};
}
