// fs-search inside a real Pi: the text the model receives from `grep`, `glob` and `outline`, in-process (faux
// provider, Pi 0.73.1 on this Node) and through the real CLI on both supported hosts against a scripted OpenAI server.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createGrepToolDefinition, initTheme, type Theme } from "@mariozechner/pi-coding-agent";
import type { Context } from "@mariozechner/pi-ai";
import { findRg } from "../extensions/lib/search/rg/index.mjs";
import { offeredTools, startFakeOpenAIServer, toolResults, type ChatRequest } from "./helpers/fake-openai-server.ts";
import { fauxAssistantMessage, fauxToolCall, runFauxSession, toolNamesOf } from "./helpers/faux-session.ts";
import { hostAvailable, packageRoot, PI_HOSTS, runPi, toolEnds } from "./helpers/pi-cli.ts";
import { makeTree } from "./helpers/tree.ts";

const NOT_SHOWN = 'not shown — search path "node_modules" to see them; noIgnore: false leaves ignored files out entirely';

/** A project whose dependency also mentions `needle`, plus a .git Pi's own grep would search. */
function projectFiles() {
	return {
		".gitignore": "node_modules/\n",
		"src/app.ts": "import { needle } from 'dep';\nconst a = 1;\nneedle();\nconst b = 2;\nneedle(a, b);\nexport {};\n",
		"src/notes.md": "# needle notes\n\nWhat the section holds.\n",
		"src/shapes.ts": "export class Shape {\n  area(): number {\n    return 0;\n  }\n}\n\nexport function make(): Shape {\n  return new Shape();\n}\n",
		"docs/guide.md": "Use the needle wisely.\n",
		"node_modules/dep/index.js": "export function needle() {}\nexport const onlyInDeps = 1;\n",
		".git/config": "[core]\n\tneedle = true\n",
	};
}

const IGNORED_NOTICE = `[+1 match in ignored paths (node_modules/ 1) ${NOT_SHOWN}]`;

/** Pi's flat format: what `group: false` and the rg fallback (which has no structure) print. */
const CONTENT_FLAT =
	"docs/guide.md:1: Use the needle wisely.\n" +
	"src/app.ts:1: import { needle } from 'dep';\n" +
	"src/app.ts:3: needle();\n" +
	"src/app.ts:5: needle(a, b);\n" +
	"src/notes.md:1: # needle notes\n\n" +
	IGNORED_NOTICE;

/** The default: files with symbols are grouped (notes.md has a section longer than its hit); the others stay flat. */
const CONTENT =
	"docs/guide.md:1: Use the needle wisely.\n" +
	"src/app.ts:1: import { needle } from 'dep';\n" +
	"src/app.ts:3: needle();\n" +
	"src/app.ts:5: needle(a, b);\n\n" +
	"src/notes.md (markdown, 3 lines, 1 symbol)\n" +
	"  section needle notes @ 1-3\n" +
	"src/notes.md:1: # needle notes\n\n" +
	IGNORED_NOTICE;

const ALL_IGNORED = "(all matches are in ignored paths)";

const SHAPES_OUTLINE =
	"file: src/shapes.ts\nlanguage: typescript\nlines: 9\nsymbols: 3\nstructure:\n" +
	"- class Shape @ 1-5 (5 lines)\n  - method area @ 2-4 (3 lines)\n- function make @ 7-9 (3 lines)";

function tempAgentDir(settings?: unknown): { dir: string; cleanup: () => void } {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-agent-"));
	if (settings !== undefined) fs.writeFileSync(path.join(dir, "pi-utils.json"), `${JSON.stringify(settings, null, 2)}\n`);
	return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Three matching files first (in path order), then six million lines that each look like a match to the
 * literal prefilter and fail the `\b` check: a few hundred ms of work even for a release build.
 */
function slowTree() {
	const tree = makeTree({ "a0.txt": "needle\n", "a1.txt": "needle\n", "a2.txt": "needle\n" });
	fs.writeFileSync(path.join(tree.root, "b.txt"), "needles\n".repeat(6 * 1024 * 1024));
	return tree;
}

/** The tool results as the model saw them in its next call, by tool call id. */
function seenByModel(contexts: Context[]): Map<string, string> {
	const out = new Map<string, string>();
	for (const ctx of contexts) {
		for (const m of ctx.messages) {
			if (m.role !== "toolResult") continue;
			out.set(m.toolCallId, m.content.map((c) => (c.type === "text" ? c.text : "")).join(""));
		}
	}
	return out;
}

type Definition = NonNullable<ReturnType<Map<string, import("@mariozechner/pi-coding-agent").ToolDefinition>["get"]>>;
type RenderContext = Parameters<NonNullable<Definition["renderCall"]>>[2];
/** Pi's theme calls with the colours made visible: text in the warning colour as `<warning>...</warning>`. */
const markedTheme = { fg: (color: string, s: string) => (color === "warning" ? `<warning>${s}</warning>` : s), bold: (s: string) => s } as unknown as Theme;
const renderContext = () => ({ lastComponent: undefined, showImages: false }) as unknown as RenderContext;
const plain = (l: string) => l.replace(/\x1b\[[0-9;]*m/g, "").trimEnd();

function callLines(def: Definition, args: Record<string, unknown>): string[] {
	initTheme("dark");
	return def.renderCall!(args as never, markedTheme, renderContext()).render(200).map(plain);
}

/** The rows Pi draws for a tool result, collapsed or expanded, through the tool's own renderResult. */
function rendererOf(def: Definition) {
	return (result: { text?: string; content?: unknown; details: unknown }, expanded: boolean): string[] => {
		initTheme("dark");
		const content = result.content ?? [{ type: "text", text: result.text }];
		return def.renderResult!({ content, details: result.details } as never, { expanded, isPartial: false }, markedTheme, renderContext())
			.render(200)
			.map(plain);
	};
}

/** One model turn that calls every tool in `calls` at once (ids are the map keys), then a closing reply. */
function script(calls: Record<string, [string, Record<string, unknown>]>) {
	const toolCalls = Object.entries(calls).map(([id, [name, args]]) => fauxToolCall(name, args, { id }));
	return [fauxAssistantMessage(toolCalls, { stopReason: "toolUse" }), fauxAssistantMessage("done")];
}

describe("in-process Pi session (faux provider)", () => {
	let tree: ReturnType<typeof makeTree>;
	before(() => {
		tree = makeTree(projectFiles());
	});
	after(() => tree.cleanup());

	test("grep answers the model in Pi's format with our additions", async (t) => {
		const agent = tempAgentDir();
		t.after(agent.cleanup);
		const run = await runFauxSession({
			cwd: tree.root,
			agentDir: agent.dir,
			steps: script({
				content: ["grep", { pattern: "needle" }],
				flat: ["grep", { pattern: "needle", group: false }],
				nested: ["grep", { pattern: "return", path: "src" }],
				files: ["grep", { pattern: "needle", outputMode: "files_with_matches" }],
				count: ["grep", { pattern: "needle", outputMode: "count" }],
				context: ["grep", { pattern: "needle", path: "src/app.ts", context: 1 }],
				limit: ["grep", { pattern: "needle", limit: 2 }],
				include: ["grep", { pattern: "needle", include: "*.md" }],
				skipIgnored: ["grep", { pattern: "needle", noIgnore: false }],
				onlyInDeps: ["grep", { pattern: "onlyInDeps" }],
				none: ["grep", { pattern: "no such text anywhere" }],
			}),
		});
		assert.deepEqual(run.extensionErrors, []);
		const seen = seenByModel(run.contexts);
		assert.equal(seen.get("content"), CONTENT);
		assert.equal(seen.get("flat"), CONTENT_FLAT);
		// Hits sit under the innermost symbol: the method, not its class.
		assert.equal(
			seen.get("nested"),
			"shapes.ts (typescript, 9 lines, 3 symbols)\n" +
				"  method area @ 2-4\nshapes.ts:3:     return 0;\n" +
				"  function make @ 7-9\nshapes.ts:8:   return new Shape();",
		);
		assert.equal(
			seen.get("files"),
			`docs/guide.md\nsrc/app.ts\nsrc/notes.md\n\n[+1 file in ignored paths (node_modules/ 1) ${NOT_SHOWN}]`,
		);
		assert.equal(
			seen.get("count"),
			`docs/guide.md:1\nsrc/app.ts:3\nsrc/notes.md:1\n\n[+1 match in ignored paths (node_modules/ 1) ${NOT_SHOWN}]`,
		);
		// Lines 2 and 4 sit in two context windows each; Pi's built-in grep prints them twice (#7971).
		assert.equal(
			seen.get("context"),
			"app.ts:1: import { needle } from 'dep';\napp.ts-2- const a = 1;\napp.ts:3: needle();\n" +
				"app.ts-4- const b = 2;\napp.ts:5: needle(a, b);\napp.ts-6- export {};",
		);
		assert.equal(
			seen.get("limit"),
			"docs/guide.md:1: Use the needle wisely.\nsrc/app.ts:1: import { needle } from 'dep';\n\n" +
				"[2 matches limit reached. Use limit=4 for more, or refine pattern. " +
				"Ignored paths not searched (the limit was reached first): node_modules/]",
		);
		assert.equal(
			seen.get("include"),
			"docs/guide.md:1: Use the needle wisely.\n\nsrc/notes.md (markdown, 3 lines, 1 symbol)\n  section needle notes @ 1-3\nsrc/notes.md:1: # needle notes",
		);
		assert.equal(seen.get("skipIgnored"), CONTENT.slice(0, CONTENT.indexOf("\n\n[")));
		// A symbol defined only in a dependency is shown normally (that is why ignored files are searched), and marked.
		assert.equal(
			seen.get("onlyInDeps"),
			"node_modules/dep/index.js (javascript, 2 lines, 2 symbols)\n  constant onlyInDeps @ 2-2\n" +
				"node_modules/dep/index.js:2: export const onlyInDeps = 1;\n  other: function needle @ 1-1\n\n" +
				ALL_IGNORED,
		);
		assert.equal(seen.get("none"), "No matches found");
		const byId = new Map(run.toolResults.map((r) => [r.toolCallId, r]));
		assert.deepEqual(byId.get("limit")?.details, { matchLimitReached: 2 }, "Pi's renderer reads details.matchLimitReached");
		assert.equal(byId.get("none")?.details, undefined, "Pi's built-in grep returns no details for no matches");
	});

	test("the model is offered our grep (a superset of Pi's schema) and glob, with prompt guidance", async (t) => {
		const agent = tempAgentDir();
		t.after(agent.cleanup);
		const run = await runFauxSession({ cwd: tree.root, agentDir: agent.dir, steps: [fauxAssistantMessage("ok")] });
		const [ctx] = run.contexts;
		assert.ok(toolNamesOf(ctx).includes("grep") && toolNamesOf(ctx).includes("glob"));
		const grep = ctx.tools!.find((t) => t.name === "grep")!;
		const props = Object.keys((grep.parameters as { properties: object }).properties);
		const builtin = Object.keys((createGrepToolDefinition(tree.root).parameters as { properties: object }).properties);
		for (const p of builtin) assert.ok(props.includes(p), `Pi's grep parameter ${p} is kept`);
		for (const p of ["include", "noIgnore", "type", "outputMode", "group"]) assert.ok(props.includes(p), `${p} is added`);
		assert.match(grep.description, /\.git is never searched/);
		const systemPrompt = ctx.systemPrompt ?? "";
		assert.match(systemPrompt, /grep also searches files that \.gitignore excludes/);
		assert.match(systemPrompt, /Use glob, not grep, to find files by name or path/);
		assert.match(systemPrompt, /- glob: Find files by glob pattern, newest modified first/);
	});

	test("a search that hits grep.timeoutMs returns what it found, flagged as partial", async (t) => {
		const agent = tempAgentDir({ grep: { timeoutMs: 50, graceMs: 3000 } });
		const big = slowTree();
		t.after(() => {
			agent.cleanup();
			big.cleanup();
		});
		const run = await runFauxSession({
			cwd: big.root,
			agentDir: agent.dir,
			steps: script({ slow: ["grep", { pattern: "needle\\b" }] }),
		});
		const text = seenByModel(run.contexts).get("slow") ?? "";
		assert.match(
			text,
			/^a0\.txt:1: needle\na1\.txt:1: needle\na2\.txt:1: needle\n\n\[Search timed out after 0\.05s: results are partial \(searched \d+ files\)\. Narrow the path, add a glob or type filter, or raise grep\.timeoutMs\]$/,
		);
		const searched = Number(/searched (\d+) files/.exec(text)?.[1]);
		assert.ok(searched >= 3 && searched <= 4, `searched ${searched} files`);
		assert.equal((run.toolResults[0].details as { timedOut?: boolean }).timedOut, true);
	});

	// Were the abort not to reach the search, the call would end with the three matches the whole search finds.
	test("Pi's abort (Escape) cancels a running grep: the call ends with Pi's abort error, not the search's results", async (t) => {
		const agent = tempAgentDir({ grep: { timeoutMs: 60_000 } });
		const big = slowTree();
		t.after(() => {
			agent.cleanup();
			big.cleanup();
		});
		const run = await runFauxSession({
			cwd: big.root,
			agentDir: agent.dir,
			abortAfterToolStartMs: 20,
			steps: script({ slow: ["grep", { pattern: "needle\\b" }] }),
		});
		assert.deepEqual(
			run.toolResults.map((r) => [r.toolName, r.text, r.isError]),
			[["grep", "Operation aborted", true]],
		);
	});

	test("grep and glob render in Pi's look with their notices on the last line in the warning colour, collapsed and expanded", async (t) => {
		const agent = tempAgentDir();
		const link = path.join(tree.root, "dangling");
		fs.symlinkSync("nowhere", link);
		t.after(() => {
			agent.cleanup();
			fs.rmSync(link);
		});
		const run = await runFauxSession({
			cwd: tree.root,
			agentDir: agent.dir,
			steps: script({
				content: ["grep", { pattern: "needle" }],
				onlyInDeps: ["grep", { pattern: "onlyInDeps" }],
				globLimited: ["glob", { pattern: "*.ts", limit: 1 }],
				badRegex: ["grep", { pattern: "foo(" }],
				dangling: ["grep", { pattern: "x", path: "dangling" }],
			}),
		});
		const byId = new Map(run.toolResults.map((r) => [r.toolCallId, r]));
		const grep = run.definitions.get("grep")!;
		const glob = run.definitions.get("glob")!;
		const render = rendererOf(grep);
		assert.deepEqual(callLines(grep, { pattern: "needle", path: "src", glob: "*.ts", limit: 5 }), ["grep /needle/ in src (*.ts) limit 5"]);
		assert.deepEqual(callLines(glob, { pattern: "*.ts", path: "src", limit: 25 }), ["glob *.ts in src (limit 25)"]);

		// The ignored-paths notice was the text's last paragraph, drawn dim and only when expanded.
		const content = byId.get("content")!;
		const body = CONTENT.slice(0, CONTENT.indexOf("\n\n[")).split("\n");
		const notice = `<warning>${IGNORED_NOTICE}</warning>`;
		// Collapsed: the hit lines only, code before docs, and the notice in Pi's short form; expanded: the text
		// as the model got it, its notice whole.
		const hitsFirst = ["src/app.ts:1: import { needle } from 'dep';", "src/app.ts:3: needle();", "src/app.ts:5: needle(a, b);", "docs/guide.md:1: Use the needle wisely.", "src/notes.md:1: # needle notes"];
		assert.deepEqual(render(content, false), ["", ...hitsFirst, "<warning>[+1 match in ignored paths]</warning>"]);
		assert.deepEqual(render(content, true), ["", ...body, notice]);

		// Only ignored files matched: marked; collapsed lists the hit lines only, expanded the grouped text.
		const only = byId.get("onlyInDeps")!;
		const hit = "node_modules/dep/index.js:2: export const onlyInDeps = 1;";
		const heading = ["node_modules/dep/index.js (javascript, 2 lines, 2 symbols)", "  constant onlyInDeps @ 2-2"];
		assert.deepEqual(render(only, false), ["", hit, `<warning>${ALL_IGNORED}</warning>`]);
		assert.deepEqual(render(only, true), ["", ...heading, hit, "  other: function needle @ 1-1", `<warning>${ALL_IGNORED}</warning>`]);

		// Past Pi's 15 lines the notice still shows, after the count of hidden lines; one hidden line would save nothing.
		const hits = (n: number) => Array.from({ length: n }, (_, i) => `a.ts:${i + 1}: needle`);
		const long = { content: [{ type: "text" as const, text: `${hits(20).join("\n")}\n\n[20 matches limit reached. Use limit=40 for more, or refine pattern]` }], details: { matchLimitReached: 20 } };
		const collapsed = render(long, false);
		assert.deepEqual(collapsed.slice(1, 16), hits(15));
		assert.match(collapsed[16], /^\.\.\. \(5 more lines, .*to expand\)$/);
		assert.deepEqual(collapsed.slice(17), ["<warning>[Truncated: 20 matches limit]</warning>"], "Pi's short form, once");
		assert.deepEqual(render(long, true).slice(-1), ["<warning>[20 matches limit reached. Use limit=40 for more, or refine pattern]</warning>"], "expanded: whole");
		assert.deepEqual(render({ content: [{ type: "text" as const, text: hits(16).join("\n") }], details: undefined }, false), ["", ...hits(16)]);

		// Errors: the user's own pattern with the caret under it; a dangling link named as one.
		assert.equal(byId.get("badRegex")?.isError, true);
		const caret = ["", "Invalid pattern: regex parse error:", "    foo(", "       ^", "error: unclosed group"];
		assert.deepEqual(render(byId.get("badRegex")!, false), caret);
		assert.deepEqual(render(byId.get("badRegex")!, true), caret);
		assert.deepEqual(render(byId.get("dangling")!, false), ["", `Broken symlink: ${link} -> nowhere`]);

		// glob with a limit: the text's notice, once.
		const limited = rendererOf(glob)(byId.get("globLimited")!, false);
		assert.match(limited[1], /^src\/(app|shapes)\.ts$/, "the newest .ts file (both were written together)");
		assert.deepEqual([limited[0], ...limited.slice(2)], [
			"",
			"<warning>[Truncated: 1 results limit; ignored paths not searched]</warning>",
		]);
		assert.deepEqual(rendererOf(glob)(byId.get("globLimited")!, true).slice(-1), [
			"<warning>[1 results limit reached. Use limit=2 for more, or refine pattern. Ignored paths not searched (the limit was reached first): node_modules/]</warning>",
		]);
	});

	test("glob lists newest first, the project before ignored paths, with find's limit notice", async (t) => {
		const agent = tempAgentDir();
		const files = makeTree({
			".gitignore": "node_modules/\n",
			"src/old.ts": "",
			"src/new.ts": "",
			"lib/mid.ts": "",
			"node_modules/dep/newest.ts": "",
		});
		t.after(() => {
			agent.cleanup();
			files.cleanup();
		});
		const years: Record<string, number> = { "src/old.ts": 2020, "lib/mid.ts": 2022, "src/new.ts": 2024, "node_modules/dep/newest.ts": 2025 };
		for (const [f, y] of Object.entries(years)) {
			const when = new Date(Date.UTC(y, 0, 1));
			fs.utimesSync(path.join(files.root, f), when, when);
		}
		const run = await runFauxSession({
			cwd: files.root,
			agentDir: agent.dir,
			steps: script({
				all: ["glob", { pattern: "*.ts" }],
				limited: ["glob", { pattern: "*.ts", limit: 2 }],
				projectOnly: ["glob", { pattern: "**/*.ts", noIgnore: false }],
				none: ["glob", { pattern: "*.rs" }],
			}),
		});
		const seen = seenByModel(run.contexts);
		assert.equal(
			seen.get("all"),
			"src/new.ts\nlib/mid.ts\nsrc/old.ts\nnode_modules/dep/newest.ts\n\n" +
				"[+1 match in ignored paths (node_modules/ 1), listed after the project's results; noIgnore: false leaves ignored files out entirely]",
		);
		assert.equal(
			seen.get("limited"),
			"src/new.ts\nlib/mid.ts\n\n[2 results limit reached. Use limit=4 for more, or refine pattern. " +
				"Ignored paths not searched (the limit was reached first): node_modules/]",
		);
		assert.equal(seen.get("projectOnly"), "src/new.ts\nlib/mid.ts\nsrc/old.ts");
		assert.equal(seen.get("none"), "No files found matching pattern");
		const limited = run.toolResults.find((r) => r.toolCallId === "limited");
		assert.deepEqual(limited?.details, { resultLimitReached: 2 }, "the shape Pi's find renderer reads");
	});

	test("without the native core, rg answers with the flat text and the user is told why, once", { skip: findRg() ? false : "rg not installed" }, async (t) => {
		const agent = tempAgentDir({ grep: { timeoutMs: "soon" } });
		t.after(agent.cleanup);
		const run = await runFauxSession({
			cwd: tree.root,
			agentDir: agent.dir,
			env: { PI_UTILS_DISABLE_NATIVE: "1" },
			withUI: true,
			steps: script({ content: ["grep", { pattern: "needle" }], glob: ["glob", { pattern: "*.md" }] }),
		});
		const seen = seenByModel(run.contexts);
		assert.equal(seen.get("content"), CONTENT_FLAT, "rg has no structure: Pi's flat format");
		assert.equal(seen.get("glob")?.split("\n").sort().join("\n"), "docs/guide.md\nsrc/notes.md");
		assert.ok(!toolNamesOf(run.contexts[0]).includes("outline"), "outline needs the native core");
		const warnings = run.notifications.filter((n) => n.type === "warning").map((n) => n.message);
		assert.equal(warnings.length, 2, warnings.join("\n"));
		assert.match(warnings[0], /pi-utils\.json: grep\.timeoutMs must be a positive whole number up to 2147483647 \(got "soon"\); using 30000$/);
		assert.equal(
			warnings[1],
			"pi-utils native core unavailable: disabled by PI_UTILS_DISABLE_NATIVE=1. Fix: unset PI_UTILS_DISABLE_NATIVE. " +
				"Searching with ripgrep (rg) instead.",
		);
	});

	test("an install whose binary is missing or stale still loads, searches with rg and says how to fix it", { skip: findRg() ? false : "rg not installed" }, async (t) => {
		const cases = [
			{ name: "missing", reason: /no native binary for \S+ \(pi-utils\.[\w-]+\.node was never built\)/ },
			{ name: "stale", reason: /the native binary is stale \(API version 0, expected 8\)/, indexJs: "module.exports = { apiVersion: () => 0 };\n" },
		];
		for (const c of cases) {
			// What `pi install` leaves when the build step failed: the sources without a loadable binary.
			const copy = fs.mkdtempSync(path.join(os.tmpdir(), `pi-utils-${c.name}-`));
			const agent = tempAgentDir();
			t.after(() => {
				fs.rmSync(copy, { recursive: true, force: true });
				agent.cleanup();
			});
			// The sources the JS reads (src/shell/defaults.json owns the shell's defaults) come along; Rust does not.
			for (const entry of ["package.json", "index.js", "extensions", "src/shell/defaults.json"]) {
				fs.mkdirSync(path.dirname(path.join(copy, entry)), { recursive: true });
				fs.cpSync(path.join(packageRoot, entry), path.join(copy, entry), { recursive: true });
			}
			if (c.indexJs) fs.writeFileSync(path.join(copy, "index.js"), c.indexJs);
			const run = await runFauxSession({
				cwd: tree.root,
				agentDir: agent.dir,
				packageDir: copy,
				withUI: true,
				steps: script({ content: ["grep", { pattern: "needle" }] }),
			});
			assert.equal(seenByModel(run.contexts).get("content"), CONTENT_FLAT, c.name);
			assert.equal(run.notifications.length, 1, c.name);
			const { message, type } = run.notifications[0];
			assert.equal(type, "warning");
			assert.match(message, /^pi-utils native core unavailable: /);
			assert.match(message, c.reason);
			assert.ok(
				message.endsWith(`. Fix: install Rust (https://rustup.rs) and run \`npm install\` in ${copy}. Searching with ripgrep (rg) instead.`),
				message,
			);
			assert.doesNotMatch(message, /npm has a bug/);
		}
	});

	test("outline answers the model with the file's structure, cut by maxItems, and names near files when one is missing", async (t) => {
		const agent = tempAgentDir();
		t.after(agent.cleanup);
		const run = await runFauxSession({
			cwd: tree.root,
			agentDir: agent.dir,
			steps: script({
				whole: ["outline", { path: "src/shapes.ts" }],
				cut: ["outline", { path: "@src/shapes.ts", maxItems: 2 }],
				noSymbols: ["outline", { path: "docs/../src/app.ts" }],
				unknown: ["outline", { path: ".gitignore" }],
				missing: ["outline", { path: "src/shape.ts" }],
			}),
		});
		assert.deepEqual(run.extensionErrors, []);
		const seen = seenByModel(run.contexts);
		assert.equal(seen.get("whole"), SHAPES_OUTLINE);
		assert.equal(
			seen.get("cut"),
			"file: src/shapes.ts\nlanguage: typescript\nlines: 9\nsymbols: 3\nstructure:\n" +
				"- class Shape @ 1-5 (5 lines)\n- function make @ 7-9 (3 lines)\n" +
				"... 1 more symbols omitted (deepest first; maxItems=2)",
		);
		assert.equal(seen.get("noSymbols"), "file: docs/../src/app.ts\nlanguage: typescript\nlines: 6\nsymbols: none found");
		assert.equal(seen.get("unknown"), "file: .gitignore\nlanguage: unknown\nsymbols: none (no grammar for this file type)");
		const byId = new Map(run.toolResults.map((r) => [r.toolCallId, r]));
		assert.equal(byId.get("missing")?.isError, true);
		assert.equal(seen.get("missing"), "File not found: src/shape.ts. Did you mean: src/shapes.ts?");
		assert.deepEqual(byId.get("whole")?.details, { language: "typescript", totalLines: 9, symbols: 3, shown: 3 });
	});

	test("the model is offered outline with advice to use it before reading a large file; its call and result render like glob's", async (t) => {
		const agent = tempAgentDir();
		t.after(agent.cleanup);
		const run = await runFauxSession({ cwd: tree.root, agentDir: agent.dir, steps: [fauxAssistantMessage("ok")] });
		const [ctx] = run.contexts;
		const outline = ctx.tools!.find((t) => t.name === "outline");
		assert.ok(outline, toolNamesOf(ctx).join(","));
		assert.match(outline.description, /before reading a large file/);
		assert.match(ctx.systemPrompt ?? "", /use outline to see its structure, then read only the line ranges you need/);
		const def = run.definitions.get("outline")!;
		initTheme("dark");
		const theme = { fg: (_color: string, s: string) => s, bold: (s: string) => s } as unknown as Theme;
		const context = { lastComponent: undefined, showImages: false } as unknown as Parameters<NonNullable<typeof def.renderCall>>[2];
		assert.deepEqual(def.renderCall!({ path: "src/shapes.ts", maxItems: 5 }, theme, context).render(100).map((l) => l.trimEnd()), [
			"outline src/shapes.ts (max 5)",
		]);
		const plain = (l: string) => l.replace(/\x1b\[[0-9;]*m/g, "").trimEnd();
		const long = [SHAPES_OUTLINE, ...Array.from({ length: 20 }, (_, i) => `- function f${i} @ ${i + 20}-${i + 20} (1 line)`)].join("\n");
		const result = { content: [{ type: "text" as const, text: long }], details: { language: "typescript", totalLines: 40, symbols: 23, shown: 23 } };
		const rendered = def.renderResult!(result, { expanded: false, isPartial: false }, theme, context).render(100).map(plain);
		// Collapsed, the 5 header lines are one, without the path the call line shows.
		assert.equal(rendered[1], "typescript, 9 lines, 3 symbols");
		assert.equal(rendered[2], "- class Shape @ 1-5 (5 lines)");
		assert.match(rendered[21], /^\.\.\. \(8 more lines, .*to expand\)$/);
		const expanded = def.renderResult!(result, { expanded: true, isPartial: false }, theme, context).render(100).map(plain);
		assert.deepEqual(expanded.slice(1, 6), SHAPES_OUTLINE.split("\n").slice(0, 5), "expanded: the text as the model got it");
		// One line past the 20 is shown rather than hidden behind "1 more lines".
		const oneOver = long.split("\n").slice(0, 25).join("\n");
		const all = def.renderResult!({ ...result, content: [{ type: "text" as const, text: oneOver }] }, { expanded: false, isPartial: false }, theme, context).render(100).map(plain);
		assert.deepEqual(all.slice(1), ["typescript, 9 lines, 3 symbols", ...oneOver.split("\n").slice(5)]);
	});

	test("disabledTools keeps outline from being registered", async (t) => {
		const agent = tempAgentDir({ disabledTools: ["outline"] });
		t.after(agent.cleanup);
		const run = await runFauxSession({ cwd: tree.root, agentDir: agent.dir, steps: [fauxAssistantMessage("ok")] });
		const names = toolNamesOf(run.contexts[0]);
		assert.ok(names.includes("grep") && names.includes("glob"));
		assert.ok(!names.includes("outline"), names.join(","));
	});

	test("disabledTools keeps glob (and the shell_* family) from being registered", async (t) => {
		const agent = tempAgentDir({ disabledTools: ["glob", "shell_*"] });
		t.after(agent.cleanup);
		const run = await runFauxSession({ cwd: tree.root, agentDir: agent.dir, steps: [fauxAssistantMessage("ok")] });
		const names = toolNamesOf(run.contexts[0]);
		assert.ok(names.includes("grep"));
		assert.ok(!names.includes("glob"), names.join(","));
	});
});

describe("the real Pi CLI against a scripted OpenAI-compatible server", () => {
	let tree: ReturnType<typeof makeTree>;
	before(() => {
		tree = makeTree(projectFiles());
	});
	after(() => tree.cleanup());

	const grepAndGlob = [
		{
			toolCalls: [
				{ id: "g1", name: "grep", arguments: { pattern: "needle" } },
				{ id: "g2", name: "glob", arguments: { pattern: "*.md" } },
				{ id: "g3", name: "grep", arguments: { pattern: "onlyInDeps", group: false } },
			],
		},
		{ text: "done" },
	];

	function assertOurTools(requests: ChatRequest[], content = CONTENT) {
		assert.equal(requests.length, 2, "one call with the tool results, one after");
		const offered = offeredTools(requests[0]);
		assert.ok(offered.includes("grep") && offered.includes("glob"), offered.join(","));
		const grep = requests[0].tools!.find((t) => t.function.name === "grep")!;
		assert.ok("outputMode" in (grep.function.parameters as { properties: object }).properties, "our grep schema, not Pi's");
		const results = toolResults(requests[1]);
		// The ignored-paths notice exists only in our grep; Pi's would print .git/config and node_modules hits.
		assert.equal(results.get("g1"), content);
		assert.equal(results.get("g2")?.split("\n").sort().join("\n"), "docs/guide.md\nsrc/notes.md");
		assert.equal(results.get("g3"), `node_modules/dep/index.js:2: export const onlyInDeps = 1;\n\n${ALL_IGNORED}`);
	}

	for (const host of [PI_HOSTS.legacy, PI_HOSTS.current]) {
		test(`${host.label}: the package loads from its manifest and the model gets our grep and glob`, { skip: hostAvailable(host) ? false : "host not installed" }, async (t) => {
			const server = await startFakeOpenAIServer(grepAndGlob);
			t.after(() => server.close());
			const run = await runPi({ host, baseUrl: server.baseUrl, prompt: "find the needle", cwd: tree.root });
			assert.equal(run.timedOut, false);
			assert.equal(run.code, 0, run.stderr);
			assertOurTools(server.requests);
			const ends = toolEnds(run);
			assert.deepEqual(ends.map((e) => [e.toolName, e.isError]).sort(), [["glob", false], ["grep", false], ["grep", false]]);
			assert.ok(run.piUtilsJson?.includes('"disabledTools": []'), "settings were scaffolded on first start");
		});
	}

	test("with PI_UTILS_DISABLE_NATIVE=1 the rg fallback answers the same, and stderr says why once", { skip: findRg() ? false : "rg not installed" }, async (t) => {
		const server = await startFakeOpenAIServer(grepAndGlob);
		t.after(() => server.close());
		const run = await runPi({
			host: PI_HOSTS.legacy,
			baseUrl: server.baseUrl,
			prompt: "find the needle",
			cwd: tree.root,
			env: { PI_UTILS_DISABLE_NATIVE: "1" },
		});
		assert.equal(run.code, 0, run.stderr);
		assertOurTools(server.requests, CONTENT_FLAT);
		const notices = run.stderr.split("\n").filter((l) => l.includes("pi-utils native core unavailable"));
		assert.deepEqual(notices, [
			"pi-utils native core unavailable: disabled by PI_UTILS_DISABLE_NATIVE=1. Fix: unset PI_UTILS_DISABLE_NATIVE. Searching with ripgrep (rg) instead.",
		]);
	});

	test(`${PI_HOSTS.current.label}: disabledTools ["glob", "shell_*"] keeps glob out of the tools the model receives`, { skip: hostAvailable(PI_HOSTS.current) ? false : "host not installed" }, async (t) => {
		const server = await startFakeOpenAIServer([{ text: "ok" }]);
		t.after(() => server.close());
		const settings = { disabledTools: ["glob", "shell_*"] };
		const run = await runPi({ host: PI_HOSTS.current, baseUrl: server.baseUrl, prompt: "hi", cwd: tree.root, piUtilsSettings: settings });
		assert.equal(run.code, 0, run.stderr);
		const offered = offeredTools(server.requests[0]);
		assert.ok(offered.includes("grep"), offered.join(","));
		assert.ok(!offered.includes("glob") && !offered.some((n) => n.startsWith("shell_")), offered.join(","));
		assert.ok(run.piUtilsJson?.includes('"disabledTools": [\n    "glob",\n    "shell_*"\n  ]'), "the user's list is kept as written");
	});
});
