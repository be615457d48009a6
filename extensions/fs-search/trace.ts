// The trace tool: where a subject is defined, called, rendered, assigned, handled or implemented, in one
// call. Probes, regions and text come from the native core through extensions/lib/search/trace.mjs.
import type { ToolDefinition } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import type { Native } from "../lib/native.mjs";
import { runTraceTool, type TraceToolDetails } from "../lib/search/trace.mjs";
import type { PiUtilsSettings } from "../lib/settings.ts";
import { discoverTool } from "./discover.ts";
import type { SessionFamiliarity } from "./familiarity.ts";

export function traceSchema(defaults: { maxFiles: number; maxRegions: number }) {
	return Type.Object({
		query: Type.String({
			description:
				"subject:X relation:R [support:S]... [kind:code|docs|tests] [path:P]. Relations: defined, called_from, " +
				"triggered_from, rendered, populated, comes_from, handled, implementation (or any word). " +
				"e.g. 'subject:auth_status relation:called_from'",
		}),
		path: Type.Optional(Type.String({ description: "Directory to search in (default: current directory)" })),
		maxFiles: Type.Optional(Type.Number({ description: `Most files to show (default: ${defaults.maxFiles})` })),
		maxRegions: Type.Optional(Type.Number({ description: `Most regions to show over all files (default: ${defaults.maxRegions})` })),
	});
}

export function traceTool(core: Native, settings: () => PiUtilsSettings, familiarity?: SessionFamiliarity): ToolDefinition<ReturnType<typeof traceSchema>, TraceToolDetails> {
	return discoverTool({
		name: "trace",
		description:
			"In one call, find where a subject is defined, called, rendered, assigned, handled or implemented: one pass " +
			"over the files, relations from syntax trees (definitions, call sites) rather than keyword guesses, and a " +
			"small packet of the best files with their structure and regions (whole when short). The subject matches in " +
			"every identifier form on word boundaries. Query: subject:X relation:R [support:S] [kind:code|docs|tests] [path:P].",
		promptSnippet: "Find where X is defined/called/rendered/assigned in one call (subject:X relation:R)",
		promptGuidelines: [
			"Use trace when you want where something is defined, called from, rendered, populated or handled in one call, instead of several greps and reads.",
		],
		parameters: traceSchema(settings().trace),
		run: (params, cwd, signal, ctx) => {
			const s = settings().trace;
			return runTraceTool(core, params, {
				cwd,
				signal,
				timeoutMs: s.timeoutMs,
				graceMs: s.graceMs,
				defaultMaxFiles: s.maxFiles,
				defaultMaxRegions: s.maxRegions,
				known: familiarity?.discover(ctx),
			});
		},
	});
}
