// fs-search: overrides Pi's `grep` with the native core (or rg when the addon cannot load), and adds `glob`, a
// newest-first file finder, `outline`, a file's symbols with their line ranges, and `locate` / `trace`, ranked
// discovery and relation tracing (those three need the native core). The tool
// parameters, text and render pieces come from extensions/lib/search/ (shared with the CLI); this file only
// wires settings, the backend and Pi's tool API together.
import type { AgentToolResult, ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { keyHint, VERSION } from "@mariozechner/pi-coding-agent";
import { StringEnum } from "@mariozechner/pi-ai";
import { Text } from "@mariozechner/pi-tui";
import { Type, type TSchema, type TUnsafe } from "typebox";
import { formatGlobCall, formatGlobResult, globParameters, runGlobTool, type GlobToolDetails, type GlobToolParams } from "./lib/search/glob.mjs";
import { DEFAULT_MAX_BYTES } from "./lib/truncate.mjs";
import {
	formatGrepCall,
	formatGrepResult,
	grepParameters,
	runGrepTool,
	type GrepToolDetails,
	type GrepToolParams,
} from "./lib/search/grep.mjs";
import {
	DEFAULT_OUTLINE_MAX_ITEMS,
	formatOutlineCall,
	formatOutlineResult,
	outlineParameters,
	runOutlineTool,
	type OutlineToolDetails,
	type OutlineToolParams,
} from "./lib/search/outline.mjs";
import { formatResultLines, kb, shortenPath } from "./lib/search/render.mjs";
import { runLocateTool } from "./lib/search/locate.mjs";
import { runTraceTool } from "./lib/search/trace.mjs";
import { sweepSpillFiles, type ParameterSpecs } from "./lib/search/toolkit.mjs";
import { loadNative, type NativeLoad } from "./lib/native.mjs";
import { findRg, rgBackend, RG_INSTALL_HINT, type SearchBackend } from "./lib/search/rg/index.mjs";
import { isToolEnabled, loadSettings, takeWarningsOnce, type PiUtilsSettings } from "./lib/settings.ts";
import { warnOnce } from "./lib/warn-once.ts";

const secs = (ms: number) => `${Math.round(ms / 100) / 10}s`;
const NOTIFIED = Symbol.for("pi-utils.fs-search.notified");

/**
 * A tool's plain-data parameters as the typebox schema Pi validates calls against. The specs carry no static
 * type, so the caller names it (`P`, the tool module's params interface); Pi validates every call at run time.
 */
function schemaOf<P>(specs: ParameterSpecs): TUnsafe<P> {
	const props: Record<string, TSchema> = {};
	for (const [name, spec] of Object.entries(specs)) {
		const opts = { description: spec.description };
		const schema = spec.enum
			? StringEnum(spec.enum, opts)
			: spec.type === "string"
				? Type.String(opts)
				: spec.type === "number"
					? Type.Number(opts)
					: Type.Boolean(opts);
		props[name] = spec.optional ? Type.Optional(schema) : schema;
	}
	return Type.Object(props) as unknown as TUnsafe<P>;
}

/** The part of a run config that grep and glob both take from their settings section and the call. */
function searchConfig(s: PiUtilsSettings["grep"] | PiUtilsSettings["glob"], index: PiUtilsSettings["index"], cwd: string, signal: AbortSignal | undefined) {
	return { cwd, timeoutMs: s.timeoutMs, graceMs: s.graceMs, noIgnore: s.noIgnore, defaultLimit: s.limit, index: index.enabled, signal };
}

/** A tool runner's `{ text, details }` as Pi's tool result. */
function toolResult<D>(result: { text: string; details: D }): AgentToolResult<D> {
	return { content: [{ type: "text", text: result.text }], details: result.details };
}

/** Renders through the tool's last component, as Pi's built-in renderers do. */
function textComponent(last: unknown, text: string): Text {
	const component = (last as Text | undefined) ?? new Text("", 0, 0);
	component.setText(text);
	return component;
}

const expandHint = () => keyHint("app.tools.expand", "to expand");

function locateSchema(defaultLimit: number) {
	return Type.Object({
		query: Type.String({ description: "Words or an identifier in any form: 'auth status', 'AuthStatus', 'auth_status', 'src/auth'" }),
		path: Type.Optional(Type.String({ description: "Directory to search in (default: current directory)" })),
		limit: Type.Optional(Type.Number({ description: `Most files to return (default: ${defaultLimit})` })),
		type: Type.Optional(Type.String({ description: "Only files of this ripgrep type, e.g. ts, rust, py" })),
		glob: Type.Optional(Type.String({ description: "Only files matching this glob, e.g. 'src/**'" })),
		noIgnore: Type.Optional(Type.Boolean({ description: "Also rank files ignore rules exclude, after the project's own (default: true)" })),
		pathsOnly: Type.Optional(Type.Boolean({ description: "One path per line instead of the ranked report (default: false)" })),
	});
}

function traceSchema(defaults: { maxFiles: number; maxRegions: number }) {
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
	const backend = (): SearchBackend => ("native" in native ? native.native : rgBackend);

	if (isToolEnabled(settings, "grep")) {
		pi.registerTool({
			name: "grep",
			label: "grep",
			description:
				"Search file contents for a pattern. Returns matching lines as path:line: text, in path order. " +
				"In code and Markdown files, matches are grouped under the function, class or section enclosing them " +
				"(with the file's size and its other top-level symbols); group:false gives plain lines. " +
				"Also searches files that .gitignore excludes, listed after the project's own results " +
				`(noIgnore:false skips them); .git is never searched. Output is truncated to ${settings.grep.limit} matches ` +
				`or ${kb(settings.grep.maxBytes)} (whichever is hit first); long lines to ${settings.grep.maxLineLength} chars. ` +
				`A search stops after ${secs(settings.grep.timeoutMs)} and returns partial results.`,
			promptSnippet: "Search file contents for patterns (includes gitignored files, after the project's; never .git)",
			promptGuidelines: [
				"grep also searches files that .gitignore excludes (node_modules, build output), after the project's own results; pass noIgnore:false to skip them. grep never searches .git.",
				"Use glob, not grep, to find files by name or path; use grep with outputMode files_with_matches or count for an overview before reading matching lines.",
			],
			parameters: schemaOf<GrepToolParams>(grepParameters(settings.grep)),
			async execute(_toolCallId, params, signal, onUpdate, ctx): Promise<AgentToolResult<GrepToolDetails | undefined>> {
				const s = settings.grep;
				const result = await runGrepTool(backend(), params, {
					...searchConfig(s, settings.index, ctx.cwd, signal),
					maxLineLength: s.maxLineLength,
					maxBytes: s.maxBytes,
					onUpdate: onUpdate && ((p) => onUpdate(toolResult(p))),
				});
				return toolResult(result);
			},
			// Pi's grep look, drawn by us so that the notices stay visible collapsed (`details` keeps Pi's shape).
			renderCall(args, theme, context) {
				return textComponent(context.lastComponent, formatGrepCall(args, theme));
			},
			renderResult(result, options, theme, context) {
				return textComponent(context.lastComponent, formatGrepResult(result, options.expanded, theme, expandHint()));
			},
		});
	}

	if (isToolEnabled(settings, "glob")) {
		pi.registerTool({
			name: "glob",
			label: "glob",
			description:
				"Find files by glob pattern, newest modified first. Returns paths relative to the search directory. " +
				"Files that .gitignore excludes come after the project's own (noIgnore:false skips them); .git is never " +
				`listed. Output is truncated to ${settings.glob.limit} results or ${kb(DEFAULT_MAX_BYTES)}. ` +
				`A listing stops after ${secs(settings.glob.timeoutMs)}; partial results say so.`,
			promptSnippet: "Find files by glob pattern, newest modified first (includes gitignored files, after the project's)",
			promptGuidelines: [
				"Use glob to find files by name or path pattern; glob lists the most recently modified files first.",
			],
			parameters: schemaOf<GlobToolParams>(globParameters(settings.glob)),
			async execute(_toolCallId, params, signal, _onUpdate, ctx): Promise<AgentToolResult<GlobToolDetails | undefined>> {
				const s = settings.glob;
				const result = await runGlobTool(backend(), params, { ...searchConfig(s, settings.index, ctx.cwd, signal), maxBytes: DEFAULT_MAX_BYTES });
				return toolResult(result);
			},
			renderCall(args, theme, context) {
				return textComponent(context.lastComponent, formatGlobCall(args, theme));
			},
			renderResult(result, options, theme, context) {
				return textComponent(context.lastComponent, formatGlobResult(result, options.expanded, theme, expandHint()));
			},
		});
	}

	// Without the native core there is no structure to show: the tool is left out rather than offered broken.
	if (isToolEnabled(settings, "outline") && "native" in native) {
		const core = native.native;
		pi.registerTool({
			name: "outline",
			label: "outline",
			description:
				"Show a file's structure without reading it: its functions, classes, methods, types and Markdown " +
				"sections with their line ranges, nested (`- function name @ start-end (n lines)`, two spaces per depth). " +
				"Rust, TypeScript/TSX, JavaScript, Python, Go, Java, C, C++, Ruby and Markdown; other files report no " +
				`grammar. Lists at most ${DEFAULT_OUTLINE_MAX_ITEMS} symbols unless maxItems says otherwise (deepest ` +
				"levels dropped first). Use it before reading a large file, then read only the line ranges you need.",
			promptSnippet: "Show a file's functions, classes and sections with line ranges (use before reading a large file)",
			promptGuidelines: [
				"Before reading a large source file or long Markdown document in full, use outline to see its structure, then read only the line ranges you need.",
			],
			parameters: schemaOf<OutlineToolParams>(outlineParameters()),
			async execute(_toolCallId, params, signal, _onUpdate, ctx): Promise<AgentToolResult<OutlineToolDetails>> {
				return toolResult(await runOutlineTool(core, params, { cwd: ctx.cwd, maxBytes: DEFAULT_MAX_BYTES, signal }));
			},
			renderCall(args, theme, context) {
				return textComponent(context.lastComponent, formatOutlineCall(args, theme));
			},
			renderResult(result, options, theme, context) {
				return textComponent(context.lastComponent, formatOutlineResult(result, options.expanded, theme, expandHint()));
			},
		});
	}

	// locate and trace rank with structure from the native core; without it they are left out, as outline is.
	if ("native" in native) {
		const core = native.native;
		const queryTools = [
			{
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
				parameters: locateSchema(settings.locate.limit),
				run: (params: never, cwd: string, signal: AbortSignal | undefined) =>
					runLocateTool(core, params, { cwd, signal, timeoutMs: settings.locate.timeoutMs, graceMs: settings.locate.graceMs, defaultLimit: settings.locate.limit }),
			},
			{
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
				parameters: traceSchema(settings.trace),
				run: (params: never, cwd: string, signal: AbortSignal | undefined) =>
					runTraceTool(core, params, {
						cwd,
						signal,
						timeoutMs: settings.trace.timeoutMs,
						graceMs: settings.trace.graceMs,
						defaultMaxFiles: settings.trace.maxFiles,
						defaultMaxRegions: settings.trace.maxRegions,
					}),
			},
		];
		for (const tool of queryTools) {
			if (!isToolEnabled(settings, tool.name)) continue;
			pi.registerTool({
				name: tool.name,
				label: tool.name,
				description: tool.description,
				promptSnippet: tool.promptSnippet,
				promptGuidelines: tool.promptGuidelines,
				parameters: tool.parameters as TSchema,
				async execute(_toolCallId, params, signal, _onUpdate, ctx) {
					const { text, details } = await tool.run(params as never, ctx.cwd, signal);
					return toolResult({ text, details });
				},
				renderCall(args, theme, context) {
					const a = args as { query?: unknown; path?: unknown } | undefined;
					const where = typeof a?.path === "string" && a.path ? ` in ${shortenPath(a.path)}` : "";
					const query = typeof a?.query === "string" ? theme.fg("accent", a.query) : theme.fg("error", "[invalid arg]");
					return textComponent(context.lastComponent, `${theme.fg("toolTitle", theme.bold(tool.name))} ${query}${theme.fg("toolOutput", where)}`);
				},
				renderResult(result, options, theme, context) {
					const d = result.details as { timedOut?: boolean; truncation?: { truncated: boolean; maxBytes: number } } | undefined;
					const warnings: string[] = [];
					if (d?.timedOut) warnings.push("timed out, partial");
					if (d?.truncation?.truncated) warnings.push(`${kb(d.truncation.maxBytes)} limit`);
					return textComponent(context.lastComponent, formatResultLines(result, { expanded: options.expanded, maxLines: 20, expandHint: expandHint(), warnings }, theme));
				},
			});
		}
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
		const warnings = takeWarningsOnce(loaded, sessionKey);
		const searchEnabled = ["grep", "glob", "outline", "locate", "trace"].some((name) => isToolEnabled(settings, name));
		warnOnce(NOTIFIED, ctx, sessionKey, warnings, VERSION);
		// Why the native core is missing does not change within a process: said once, not on every /new.
		const nativeMsg = searchEnabled ? nativeWarning(native) : undefined;
		if (nativeMsg) warnOnce(NOTIFIED, ctx, "process", [nativeMsg], VERSION);
		// The live index of the working directory is built in the background on the addon's own thread
		// (it never keeps the process alive); searches scan until it is ready. A tree outside the bounds
		// is simply not indexed (indexStatus says why).
		if (searchEnabled && settings.index.enabled && "native" in native) {
			const { minFiles, maxFiles, maxDiskMB } = settings.index;
			try {
				native.native.indexStart({ path: ctx.cwd, minFiles, maxFiles, maxDiskMb: maxDiskMB });
			} catch {
				// A cwd that vanished: searches there fail on their own with the usual message.
			}
		}
	});
}
