// fs-search: overrides Pi's `grep` with the native core (or rg when the addon cannot load), and adds `glob`, a
// newest-first file finder, and `outline`, a file's symbols with their line ranges (native core only). The tool
// parameters, text and render pieces come from extensions/lib/search/ (shared with the CLI); this file only
// wires settings, the backend and Pi's tool API together.
import type { AgentToolResult, ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { keyHint } from "@mariozechner/pi-coding-agent";
import { StringEnum } from "@mariozechner/pi-ai";
import { Text } from "@mariozechner/pi-tui";
import { Type, type TSchema, type TUnsafe } from "typebox";
import { formatGlobCall, formatGlobResult, globParameters, runGlobTool, type GlobToolDetails, type GlobToolParams } from "./lib/search/glob.mjs";
import { DEFAULT_MAX_BYTES } from "./lib/truncate.mjs";
import { grepParameters, runGrepTool, type GrepToolDetails, type GrepToolParams } from "./lib/search/grep.mjs";
import {
	DEFAULT_OUTLINE_MAX_ITEMS,
	formatOutlineCall,
	formatOutlineResult,
	outlineParameters,
	runOutlineTool,
	type OutlineToolDetails,
	type OutlineToolParams,
} from "./lib/search/outline.mjs";
import { kb } from "./lib/search/render.mjs";
import type { ParameterSpecs } from "./lib/search/toolkit.mjs";
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
function searchConfig(s: PiUtilsSettings["grep"] | PiUtilsSettings["glob"], cwd: string, signal: AbortSignal | undefined) {
	return { cwd, timeoutMs: s.timeoutMs, graceMs: s.graceMs, noIgnore: s.noIgnore, defaultLimit: s.limit, signal };
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
			// No renderCall/renderResult: Pi's built-in grep renderer draws this tool, as `details` keeps its shape.
			async execute(_toolCallId, params, signal, onUpdate, ctx): Promise<AgentToolResult<GrepToolDetails | undefined>> {
				const s = settings.grep;
				const result = await runGrepTool(backend(), params, {
					...searchConfig(s, ctx.cwd, signal),
					maxLineLength: s.maxLineLength,
					maxBytes: s.maxBytes,
					onUpdate: onUpdate && ((p) => onUpdate(toolResult(p))),
				});
				return toolResult(result);
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
				const result = await runGlobTool(backend(), params, { ...searchConfig(s, ctx.cwd, signal), maxBytes: DEFAULT_MAX_BYTES });
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

	pi.on("session_start", (_event, ctx) => {
		const loaded = loadSettings();
		settings = loaded.settings;
		const sessionKey = ctx.sessionManager.getSessionId();
		const warnings = takeWarningsOnce(loaded, sessionKey);
		const searchEnabled = ["grep", "glob", "outline"].some((name) => isToolEnabled(settings, name));
		warnOnce(NOTIFIED, ctx, sessionKey, warnings);
		// Why the native core is missing does not change within a process: said once, not on every /new.
		const nativeMsg = searchEnabled ? nativeWarning(native) : undefined;
		if (nativeMsg) warnOnce(NOTIFIED, ctx, "process", [nativeMsg]);
	});
}
