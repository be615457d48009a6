// fs-search: overrides Pi's `grep` with the native core (or rg when the addon cannot load), and adds `glob`, a
// newest-first file finder, and `outline`, a file's symbols with their line ranges (native core only). The tool
// text comes from extensions/lib (shared with the CLI); this file only wires settings, the backend and Pi's
// tool API together.
import type { AgentToolResult, ExtensionAPI, ExtensionContext, Theme } from "@mariozechner/pi-coding-agent";
import { keyHint } from "@mariozechner/pi-coding-agent";
import { StringEnum } from "@mariozechner/pi-ai";
import { Text } from "@mariozechner/pi-tui";
import { Type } from "typebox";
import { homedir } from "node:os";
import { runGlobTool, type GlobToolDetails } from "./lib/glob-tool.mjs";
import { DEFAULT_MAX_BYTES } from "./lib/truncate.mjs";
import { runGrepTool, type GrepToolDetails } from "./lib/grep-tool.mjs";
import { DEFAULT_OUTLINE_MAX_ITEMS, runOutlineTool, type OutlineToolDetails } from "./lib/outline-tool.mjs";
import { loadNative, type NativeLoad } from "./lib/native.ts";
import { findRg, rgBackend, RG_INSTALL_HINT, type SearchBackend } from "./lib/rg-backend.mjs";
import { isToolEnabled, loadSettings, takeWarningsOnce, type PiUtilsSettings } from "./lib/settings.ts";

const kb = (bytes: number) => `${Math.round(bytes / 1024)}KB`;
const secs = (ms: number) => `${Math.round(ms / 100) / 10}s`;

function grepSchema(s: PiUtilsSettings["grep"]) {
	return Type.Object({
		pattern: Type.String({ description: "Regex (ripgrep syntax), or a plain string with literal:true" }),
		path: Type.Optional(Type.String({ description: "Directory or file to search (default: current directory)" })),
		glob: Type.Optional(Type.String({ description: "Only files matching this glob, e.g. '*.ts' or 'src/**/*.spec.ts'" })),
		include: Type.Optional(Type.String({ description: "Alias of glob; if both are given, both apply" })),
		ignoreCase: Type.Optional(Type.Boolean({ description: "Case-insensitive search (default: false)" })),
		literal: Type.Optional(Type.Boolean({ description: "Treat pattern as a literal string, not a regex (default: false)" })),
		context: Type.Optional(Type.Number({ description: "Lines to show before and after each match (default: 0)" })),
		limit: Type.Optional(
			Type.Number({ description: `Maximum matches, or files in the other output modes (default: ${s.limit})` }),
		),
		noIgnore: Type.Optional(
			Type.Boolean({
				description: `Also search files ignore rules exclude, listed after the project's own (default: ${s.noIgnore}); false skips them`,
			}),
		),
		type: Type.Optional(Type.String({ description: "Only files of this ripgrep type, e.g. ts, rust, py" })),
		outputMode: Type.Optional(
			StringEnum(["content", "files_with_matches", "count"] as const, {
				description: "content: matching lines (default); files_with_matches: file paths; count: matches per file",
			}),
		),
		group: Type.Optional(
			Type.Boolean({
				description:
					"content mode: show each code file's matches under the function, class or section enclosing them, " +
					"with the file's other top-level symbols (default: true); false prints plain path:line: text lines",
			}),
		),
	});
}

function outlineSchema() {
	return Type.Object({
		path: Type.String({ description: "File to outline (relative or absolute)" }),
		maxItems: Type.Optional(
			Type.Number({
				description: `Most symbols to list; the deepest levels are dropped first (default: ${DEFAULT_OUTLINE_MAX_ITEMS})`,
			}),
		),
	});
}

function globSchema(s: PiUtilsSettings["glob"]) {
	return Type.Object({
		pattern: Type.String({
			description: "Glob; without '/' it matches file names at any depth ('*.ts'), with '/' the path ('src/**/*.spec.ts')",
		}),
		path: Type.Optional(Type.String({ description: "Directory to search in (default: current directory)" })),
		limit: Type.Optional(Type.Number({ description: `Maximum number of results (default: ${s.limit})` })),
		noIgnore: Type.Optional(
			Type.Boolean({
				description: `Also list files ignore rules exclude, after the project's own (default: ${s.noIgnore}); false skips them`,
			}),
		),
		hidden: Type.Optional(Type.Boolean({ description: "Include dot-files and dot-directories (default: true)" })),
	});
}

// ---------- glob and outline rendering, in the style of Pi's built-in find ----------

function shortenPath(p: string): string {
	const home = homedir();
	return p.startsWith(home) ? `~${p.slice(home.length)}` : p;
}

function formatGlobCall(args: { pattern?: unknown; path?: unknown; limit?: unknown } | undefined, theme: Theme): string {
	const invalid = theme.fg("error", "[invalid arg]");
	const pattern = args?.pattern;
	const rawPath = args?.path ?? "";
	let text =
		theme.fg("toolTitle", theme.bold("glob")) +
		" " +
		(typeof pattern === "string" ? theme.fg("accent", pattern) : invalid) +
		theme.fg("toolOutput", ` in ${typeof rawPath === "string" ? shortenPath(rawPath || ".") : invalid}`);
	if (args?.limit !== undefined) text += theme.fg("toolOutput", ` (limit ${String(args.limit)})`);
	return text;
}

function formatOutlineCall(args: { path?: unknown; maxItems?: unknown } | undefined, theme: Theme): string {
	const path = args?.path;
	let text =
		theme.fg("toolTitle", theme.bold("outline")) +
		" " +
		(typeof path === "string" ? theme.fg("accent", shortenPath(path)) : theme.fg("error", "[invalid arg]"));
	if (args?.maxItems !== undefined) text += theme.fg("toolOutput", ` (max ${String(args.maxItems)})`);
	return text;
}

/** The first 20 lines of a tool's text (all when expanded), with the expand hint. */
function formatLines(result: AgentToolResult<unknown>, expanded: boolean, theme: Theme): string {
	const output = result.content
		.map((c) => (c.type === "text" ? c.text : ""))
		.join("\n")
		.replace(/\r/g, "")
		.trim();
	let text = "";
	if (output) {
		const lines = output.split("\n");
		const shown = expanded ? lines : lines.slice(0, 20);
		text += `\n${shown.map((l) => theme.fg("toolOutput", l)).join("\n")}`;
		if (lines.length > shown.length) {
			text += `${theme.fg("muted", `\n... (${lines.length - shown.length} more lines,`)} ${keyHint("app.tools.expand", "to expand")})`;
		}
	}
	return text;
}

function formatGlobResult(
	result: AgentToolResult<GlobToolDetails | undefined>,
	expanded: boolean,
	theme: Theme,
): string {
	let text = formatLines(result, expanded, theme);
	const d = result.details;
	const warnings: string[] = [];
	if (d?.timedOut) warnings.push("timed out, partial");
	if (d?.resultLimitReached) warnings.push(`${d.resultLimitReached} results limit`);
	if (d?.truncation?.truncated) warnings.push(`${kb(d.truncation.maxBytes)} limit`);
	if (warnings.length) text += `\n${theme.fg("warning", `[Truncated: ${warnings.join(", ")}]`)}`;
	return text;
}

/**
 * A per-call signal that follows Pi's turn signal. Parallel tool calls share Pi's signal, and each search layer
 * (tool runner, native core) adds its own abort listener; with a child signal Pi's gets one listener per call,
 * which keeps Node's "possible EventTarget memory leak" warning from firing on a batch of parallel greps.
 */
function childSignal(parent: AbortSignal | undefined): { signal: AbortSignal | undefined; dispose: () => void } {
	if (!parent) return { signal: undefined, dispose: () => {} };
	const controller = new AbortController();
	const forward = () => controller.abort(parent.reason);
	if (parent.aborted) forward();
	else parent.addEventListener("abort", forward, { once: true });
	return { signal: controller.signal, dispose: () => parent.removeEventListener("abort", forward) };
}

// ---------- warnings, once per session ----------

const NOTIFIED = Symbol.for("pi-utils.fs-search.notified");

function warnOnce(ctx: ExtensionContext, sessionKey: string, messages: string[]): void {
	const store = globalThis as unknown as Record<symbol, Set<string> | undefined>;
	const seen = (store[NOTIFIED] ??= new Set<string>());
	for (const msg of messages) {
		const key = `${sessionKey}\u0000${msg}`;
		if (seen.has(key)) continue;
		seen.add(key);
		// Print and json modes have no UI: ui.notify is a silent no-op there.
		if (ctx.hasUI) ctx.ui.notify(msg, "warning");
		else process.stderr.write(`${msg}\n`);
	}
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
			parameters: grepSchema(settings.grep),
			// No renderCall/renderResult: Pi's built-in grep renderer draws this tool, as `details` keeps its shape.
			async execute(_toolCallId, params, signal, onUpdate, ctx): Promise<AgentToolResult<GrepToolDetails | undefined>> {
				const s = settings.grep;
				const abort = childSignal(signal);
				try {
					const result = await runGrepTool(backend(), params, {
						cwd: ctx.cwd,
						timeoutMs: s.timeoutMs,
						graceMs: s.graceMs,
						noIgnore: s.noIgnore,
						maxLineLength: s.maxLineLength,
						maxBytes: s.maxBytes,
						defaultLimit: s.limit,
						signal: abort.signal,
						onUpdate: onUpdate && ((p) => onUpdate({ content: [{ type: "text", text: p.text }], details: p.details })),
					});
					return { content: [{ type: "text", text: result.text }], details: result.details };
				} finally {
					abort.dispose();
				}
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
			parameters: globSchema(settings.glob),
			async execute(_toolCallId, params, signal, _onUpdate, ctx): Promise<AgentToolResult<GlobToolDetails | undefined>> {
				const s = settings.glob;
				const abort = childSignal(signal);
				try {
					const result = await runGlobTool(backend(), params, {
						cwd: ctx.cwd,
						timeoutMs: s.timeoutMs,
						graceMs: s.graceMs,
						noIgnore: s.noIgnore,
						defaultLimit: s.limit,
						maxBytes: DEFAULT_MAX_BYTES,
						signal: abort.signal,
					});
					return { content: [{ type: "text", text: result.text }], details: result.details };
				} finally {
					abort.dispose();
				}
			},
			renderCall(args, theme, context) {
				const text = (context.lastComponent as Text | undefined) ?? new Text("", 0, 0);
				text.setText(formatGlobCall(args, theme));
				return text;
			},
			renderResult(result, options, theme, context) {
				const text = (context.lastComponent as Text | undefined) ?? new Text("", 0, 0);
				text.setText(formatGlobResult(result, options.expanded, theme));
				return text;
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
			parameters: outlineSchema(),
			async execute(_toolCallId, params, signal, _onUpdate, ctx): Promise<AgentToolResult<OutlineToolDetails>> {
				const result = await runOutlineTool(core, params, { cwd: ctx.cwd, maxBytes: DEFAULT_MAX_BYTES, signal });
				return { content: [{ type: "text", text: result.text }], details: result.details };
			},
			renderCall(args, theme, context) {
				const text = (context.lastComponent as Text | undefined) ?? new Text("", 0, 0);
				text.setText(formatOutlineCall(args, theme));
				return text;
			},
			renderResult(result, options, theme, context) {
				const text = (context.lastComponent as Text | undefined) ?? new Text("", 0, 0);
				let body = formatLines(result, options.expanded, theme);
				if (result.details?.truncation?.truncated) {
					body += `\n${theme.fg("warning", `[Truncated: ${kb(result.details.truncation.maxBytes)} limit]`)}`;
				}
				text.setText(body);
				return text;
			},
		});
	}

	pi.on("session_start", (_event, ctx) => {
		const loaded = loadSettings();
		settings = loaded.settings;
		const sessionKey = ctx.sessionManager.getSessionId();
		const warnings = takeWarningsOnce(loaded, sessionKey);
		const searchEnabled = ["grep", "glob", "outline"].some((name) => isToolEnabled(settings, name));
		warnOnce(ctx, sessionKey, warnings);
		// Why the native core is missing does not change within a process: said once, not on every /new.
		const nativeMsg = searchEnabled ? nativeWarning(native) : undefined;
		if (nativeMsg) warnOnce(ctx, "process", [nativeMsg]);
	});
}
