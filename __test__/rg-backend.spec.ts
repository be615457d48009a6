// The ripgrep fallback (extensions/lib/search/rg/index.mjs): what it promises on its own, and that it answers exactly
// as the native core does wherever both can run.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { GlobOptions, GrepOptions } from "../index.d.ts";
import { createRgBackend, findRg, globToRegExp, rgBackend, type SearchBackend } from "../extensions/lib/search/rg/index.mjs";
import { loadNative } from "../extensions/lib/native.mjs";
import { errorCode } from "../extensions/lib/errors.mjs";
import { makeTree } from "./helpers/tree.ts";

const rg = findRg();
const needsRg = rg ? {} : { skip: "ripgrep (rg) is not installed" };
const nativeLoad = loadNative({});
const native = "native" in nativeLoad ? nativeLoad.native : undefined;
const needsBoth = !rg ? needsRg : native ? {} : { skip: "native core unavailable" };

async function grepAll(backend: SearchBackend, opts: GrepOptions) {
	const search = backend.grep(opts);
	const hits = [];
	for (let b = await search.nextBatch(); b; b = await search.nextBatch()) hits.push(...b);
	const summary = search.summary();
	assert.ok(summary, "summary is available once nextBatch resolved null");
	return { hits, summary };
}

const at = (h: { path: string; line: number; ignored: boolean }) => `${h.path}:${h.line}${h.ignored ? " (ignored)" : ""}`;

/** A project with ignored roots, hidden files, a fake .git and overlapping context windows. */
function projectTree() {
	return makeTree({
		".gitignore": "node_modules/\ndist/\n*.log\n",
		"src/main.ts": "import x\nneedle one\nbetween\nneedle two\nafter\n",
		"src/util.ts": "export const needle = 1;\n",
		"README.md": "no match here\n",
		".config/settings.json": '{"needle": true}\n',
		"node_modules/pkg/index.js": "module.exports = needle;\nneedle again\n",
		"dist/bundle.js": "needle()\n",
		"debug.log": "needle in a log\n",
		".git/config": "needle in git\n",
		".git/HEAD": "ref: refs/heads/needle\n",
	});
}

test("rg is resolved from PATH, then <agentDir>/bin, and a missing rg says how to install it", needsRg, (t) => {
	const agentDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-rg-"));
	t.after(() => fs.rmSync(agentDir, { recursive: true, force: true }));
	assert.equal(findRg({ env: { PATH: path.dirname(rg!) } }), path.join(path.dirname(rg!), "rg"));

	const missing = createRgBackend({ env: { PATH: "" }, agentDir });
	assert.equal(findRg({ env: { PATH: "" }, agentDir }), undefined);
	assert.throws(
		() => missing.grep({ pattern: "x", cwd: agentDir }),
		(e: Error) =>
			e.message.startsWith(`ripgrep (rg) not found on PATH or in ${path.join(agentDir, "bin")}. Install ripgrep`) &&
			e.message.includes("apt install ripgrep"),
	);

	// A non-executable `rg` on PATH is not taken; Pi's own bin directory is.
	const decoy = path.join(agentDir, "decoy");
	fs.mkdirSync(decoy);
	fs.writeFileSync(path.join(decoy, "rg"), "not a program");
	fs.mkdirSync(path.join(agentDir, "bin"));
	fs.symlinkSync(rg!, path.join(agentDir, "bin", "rg"));
	assert.equal(findRg({ env: { PATH: decoy }, agentDir }), path.join(agentDir, "bin", "rg"));
});

test("a missing rg found later is picked up by the same backend once installed in <agentDir>/bin", needsRg, async (t) => {
	const agentDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-rg-"));
	const tree = makeTree({ "a.txt": "needle\n" });
	t.after(() => {
		fs.rmSync(agentDir, { recursive: true, force: true });
		tree.cleanup();
	});
	const backend = createRgBackend({ env: { PATH: "" }, agentDir });
	assert.throws(() => backend.grep({ pattern: "needle", cwd: tree.root }), /not found/);
	fs.mkdirSync(path.join(agentDir, "bin"));
	fs.symlinkSync(rg!, path.join(agentDir, "bin", "rg"));
	const { hits } = await grepAll(backend, { pattern: "needle", cwd: tree.root });
	assert.deepEqual(hits.map(at), ["a.txt:1"]);
});

test("grep lists the project's hits in path order, then the ignored ones, flagged and grouped by root", needsRg, async (t) => {
	const tree = projectTree();
	t.after(tree.cleanup);
	const { hits, summary } = await grepAll(rgBackend, { pattern: "needle", cwd: tree.root });
	assert.deepEqual(hits.map(at), [
		".config/settings.json:1",
		"src/main.ts:2",
		"src/main.ts:4",
		"src/util.ts:1",
		"debug.log:1 (ignored)",
		"dist/bundle.js:1 (ignored)",
		"node_modules/pkg/index.js:1 (ignored)",
		"node_modules/pkg/index.js:2 (ignored)",
	]);
	assert.deepEqual(summary.ignored, [
		{ path: "debug.log", matches: 1, files: 1 },
		{ path: "dist/", matches: 1, files: 1 },
		{ path: "node_modules/", matches: 2, files: 1 },
	]);
	assert.equal(summary.matches, 8);
	assert.equal(summary.filesWithMatches, 6);
	assert.equal(summary.filesSearched, 8, ".git is never searched; every other file is");
	assert.equal(summary.limitReached, false);
});

test("ignoredCountOnly counts ignored hits once the project has one, and lists them when it has none", needsRg, async (t) => {
	const tree = projectTree();
	t.after(tree.cleanup);
	const counted = await grepAll(rgBackend, { pattern: "needle", cwd: tree.root, ignoredCountOnly: true });
	assert.ok(counted.hits.every((h) => !h.ignored));
	assert.equal(counted.summary.ignored.reduce((n, g) => n + g.matches, 0), 4);

	const onlyIgnored = await grepAll(rgBackend, { pattern: "needle again", cwd: tree.root, ignoredCountOnly: true });
	assert.deepEqual(onlyIgnored.hits.map(at), ["node_modules/pkg/index.js:2 (ignored)"]);

	const skipped = await grepAll(rgBackend, { pattern: "needle", cwd: tree.root, noIgnore: false });
	assert.deepEqual(skipped.hits.map(at), [".config/settings.json:1", "src/main.ts:2", "src/main.ts:4", "src/util.ts:1"]);
	assert.deepEqual(skipped.summary.ignored, []);
});

test("context is merged: every line once, attached to the nearest match", needsRg, async (t) => {
	const tree = makeTree({ "f.txt": "l1\nneedle 2\nl3\nneedle 4\nl5\nl6\nl7\nl8\nneedle 9\n" });
	t.after(tree.cleanup);
	const { hits } = await grepAll(rgBackend, { pattern: "needle", cwd: tree.root, context: 2 });
	const lines = (cs: Array<{ line: number }>) => cs.map((c) => c.line);
	assert.deepEqual(
		hits.map((h) => [lines(h.contextBefore), h.line, lines(h.contextAfter)]),
		[
			[[1], 2, [3]],
			[[], 4, [5, 6]],
			[[7, 8], 9, []],
		],
	);
});

test("the limit stops the search, keeps the last hit's context and names the ignored roots never searched", needsRg, async (t) => {
	const tree = projectTree();
	t.after(tree.cleanup);
	const { hits, summary } = await grepAll(rgBackend, { pattern: "needle", cwd: tree.root, maxCount: 2, context: 1 });
	assert.deepEqual(hits.map(at), [".config/settings.json:1", "src/main.ts:2"]);
	assert.deepEqual(hits[1].contextAfter.map((c) => c.text), ["between"]);
	assert.equal(summary.limitReached, true);
	assert.deepEqual(summary.ignoredUnsearched, ["debug.log", "dist/", "node_modules/"]);

	const files = await grepAll(rgBackend, { pattern: "needle", cwd: tree.root, mode: "files", maxCount: 3 });
	assert.deepEqual(files.hits.map((h) => h.path), [".config/settings.json", "src/main.ts", "src/util.ts"]);
	const counts = await grepAll(rgBackend, { pattern: "needle", cwd: tree.root, mode: "count", noIgnore: false });
	assert.deepEqual(counts.hits.map((h) => `${h.path}=${h.count}`), [".config/settings.json=1", "src/main.ts=2", "src/util.ts=1"]);
});

test("the limit keeps the last counted match's after-context, a match in it shown but not counted, as rg -m1 -A2 prints 4:d 5-e 6:d", needsBoth, async (t) => {
	const tree = makeTree({ m: "a\nb\nc\nd\ne\nd\ne\nd\ne\n" });
	t.after(tree.cleanup);
	const shown = (hits: Awaited<ReturnType<typeof grepAll>>["hits"]) =>
		hits.flatMap((h) => [`${h.line}:${h.text}/${h.count}`, ...h.contextAfter.map((c) => `${c.line}-${c.text}`)]);
	for (const backend of [native!, rgBackend]) {
		const one = await grepAll(backend, { pattern: "d", cwd: tree.root, after: 2, maxCount: 1, index: false });
		assert.deepEqual(shown(one.hits), ["4:d/1", "5-e", "6:d/0"]);
		assert.equal(one.summary.matches, 1);
		const three = await grepAll(backend, { pattern: "d", cwd: tree.root, after: 3, maxCount: 1, index: false });
		assert.deepEqual(shown(three.hits), ["4:d/1", "5-e", "6:d/0", "7-e"]);
	}
});

test("a parent's .ignore holds when the search starts in a subfolder, in both modes and both backends", needsBoth, async (t) => {
	const tree = makeTree({ ".ignore": "/a/b\n", "a/b/test.txt": "needle\n", "a/x.txt": "needle\n" });
	t.after(tree.cleanup);
	for (const backend of [native!, rgBackend]) {
		const all = await grepAll(backend, { pattern: "needle", cwd: tree.root, path: "a", index: false });
		assert.deepEqual(all.hits.map(at), ["x.txt:1", "b/test.txt:1 (ignored)"]);
		const kept = await grepAll(backend, { pattern: "needle", cwd: tree.root, path: "a", noIgnore: false, index: false });
		assert.deepEqual(kept.hits.map(at), ["x.txt:1"]);
	}
});

test("a walked file with a NUL byte shows its matches before it and is listed as stopped; count mode drops it, in both backends", needsBoth, async (t) => {
	const tree = makeTree({ hay: "needle first\n" + "filler line\n".repeat(8000) + "needle late\u0000\n", "b.txt": "needle\n" });
	t.after(tree.cleanup);
	for (const backend of [native!, rgBackend]) {
		const content = await grepAll(backend, { pattern: "needle", cwd: tree.root, index: false });
		assert.deepEqual(content.hits.map(at), ["b.txt:1", "hay:1"]);
		assert.deepEqual(content.summary.binaryStopped, [{ path: "hay", offset: 96024, ignored: false }]);
		const count = await grepAll(backend, { pattern: "needle", cwd: tree.root, mode: "count", index: false });
		assert.deepEqual(count.hits.map((h) => `${h.path}:${h.count}`), ["b.txt:1"]);
	}
});

test(".git is never searched, whatever the globs say", needsRg, async (t) => {
	const tree = projectTree();
	t.after(tree.cleanup);
	for (const glob of [["*"], ["**"], [".git/**"], ["*config*"]]) {
		const { hits } = await grepAll(rgBackend, { pattern: "needle", cwd: tree.root, glob });
		assert.ok(!hits.some((h) => h.path.startsWith(".git/")), `glob ${glob}`);
	}
});

test("bad input fails at once, with the native core's messages", needsRg, (t) => {
	const tree = makeTree({ "a.txt": "x\n" });
	t.after(tree.cleanup);
	const cwd = tree.root;
	assert.throws(() => rgBackend.grep({ pattern: "", cwd }), /^Error: Pattern must not be empty$/);
	assert.throws(() => rgBackend.grep({ pattern: "foo(", cwd }), /^Error: Invalid pattern: regex parse error:[\s\S]*unclosed group/);
	assert.throws(() => rgBackend.grep({ pattern: "x", cwd, type: "nosuchlang" }), /^Error: Unknown file type: nosuchlang \(use ripgrep's type names/);
	assert.throws(() => rgBackend.grep({ pattern: "x", cwd, glob: ["{"] }), /^Error: Invalid glob: error parsing glob '\{'/);
	assert.throws(() => rgBackend.grep({ pattern: "x", cwd, path: "nope" }), new RegExp(`^Error: Path not found: ${path.join(cwd, "nope")}$`));
	assert.throws(() => rgBackend.grep({ pattern: "x", cwd, mode: "lines" as never }), /Invalid mode: lines/);
	assert.throws(() => rgBackend.glob({ pattern: "", cwd }), /Invalid glob: pattern must not be empty/);
	assert.throws(() => rgBackend.glob({ pattern: "{", cwd }), /^Error: Invalid glob: error parsing glob/);
	const aborted = AbortSignal.abort();
	assert.throws(() => rgBackend.grep({ pattern: "x", cwd, signal: aborted }), /aborted/);
});

test("a bad regex is shown as the user typed it, a basic-regex escape gets one hint, a dangling symlink is named: as the native core says it", needsBoth, (t) => {
	const tree = makeTree({ "real/a.txt": "hello\n" });
	t.after(tree.cleanup);
	const cwd = tree.root;
	fs.symlinkSync("real", path.join(cwd, "link"));
	fs.symlinkSync("nowhere", path.join(cwd, "dangling"));
	const thrown = (backend: SearchBackend, opts: Partial<GrepOptions>) => {
		try {
			backend.grep({ cwd, pattern: "x", ...opts });
		} catch (e) {
			return { message: (e as Error).message, code: errorCode(e) };
		}
		return undefined;
	};
	const hint = "hint: Rust regex uses | and ( unescaped; \\| and \\( match the characters themselves";
	const cases: [Partial<GrepOptions>, string, string][] = [
		[{ pattern: "foo(" }, "Invalid pattern: regex parse error:\n    foo(\n       ^\nerror: unclosed group", "INVALID_PATTERN"],
		[{ pattern: "\\(a|b)" }, `Invalid pattern: regex parse error:\n    \\(a|b)\n         ^\nerror: unopened group\n${hint}`, "INVALID_PATTERN"],
		[{ path: "dangling" }, `Broken symlink: ${path.join(cwd, "dangling")} -> nowhere`, "PATH_NOT_FOUND"],
	];
	for (const [opts, message, code] of cases) {
		assert.deepEqual(thrown(native!, opts), { message, code }, `native ${JSON.stringify(opts)}`);
		assert.deepEqual(thrown(rgBackend, opts), { message, code }, `rg ${JSON.stringify(opts)}`);
	}
});

test("whichever rg is on PATH (13 shows the pattern as typed, 14+ wrapped in (?:…)), a bad regex reads as the native core says it", needsBoth, (t) => {
	const tree = makeTree({ "a.txt": "x\n" });
	t.after(tree.cleanup);
	const message = (backend: SearchBackend, pattern: string) => {
		try {
			backend.grep({ cwd: tree.root, pattern });
		} catch (e) {
			return (e as Error).message;
		}
		return "no error";
	};
	// Carets inside the pattern, on an unclosed or unopened group (where rg 14+ points at its wrapper), after
	// escapes and inside character classes that hold parentheses.
	for (const pattern of ["a{2", "[z-a]", "x)", "(a(b)", "((a)", "a)b)", "[(](", "\\((x", "[]()]+)", "(?i)a(", "\\p{Nope}"]) {
		assert.equal(message(rgBackend, pattern), message(native!, pattern), pattern);
	}
});

test("a symlink to a directory named as the path is searched, by both backends", needsBoth, async (t) => {
	const tree = makeTree({ "real/a.txt": "hello\n" });
	t.after(tree.cleanup);
	fs.symlinkSync("real", path.join(tree.root, "link"));
	fs.symlinkSync("..", path.join(tree.root, "real", "up"));
	for (const backend of [native!, rgBackend]) {
		const { hits } = await grepAll(backend, { cwd: tree.root, pattern: "hello", path: "link" });
		assert.deepEqual(hits.map(at), ["a.txt:1"], "links met inside it stay unfollowed");
	}
});

/** The code of what `f` throws, as the error carries it (undefined when it has none). */
function thrownCode(f: () => unknown): unknown {
	try {
		f();
	} catch (e) {
		return (e as { code?: unknown }).code;
	}
	assert.fail("expected a throw");
}

/** Bad inputs both backends reject synchronously, with the code the native core gives each. */
const BAD_INPUTS: Array<[string, (b: SearchBackend, cwd: string) => unknown, string]> = [
	["empty pattern", (b, cwd) => b.grep({ pattern: "", cwd }), "INVALID_PATTERN"],
	["bad regex", (b, cwd) => b.grep({ pattern: "foo(", cwd }), "INVALID_PATTERN"],
	["bad glob", (b, cwd) => b.glob({ pattern: "{", cwd }), "INVALID_PATTERN"],
	["unknown type", (b, cwd) => b.grep({ pattern: "x", cwd, type: "nosuchlang" }), "INVALID_OPTION"],
	["missing path", (b, cwd) => b.grep({ pattern: "x", cwd, path: "nope" }), "PATH_NOT_FOUND"],
];

test("the rg fallback's errors carry the native core's codes", needsRg, (t) => {
	const tree = makeTree({ "a.txt": "x\n" });
	t.after(tree.cleanup);
	for (const [name, call, code] of BAD_INPUTS) assert.equal(thrownCode(() => call(rgBackend, tree.root)), code, name);
	assert.equal(thrownCode(() => rgBackend.grep({ pattern: "x", cwd: tree.root, signal: AbortSignal.abort() })), "CANCELLED");
});

test("errorCode reads the code, or infers it from the message of an error without one (an older addon)", () => {
	assert.equal(errorCode(Object.assign(new Error("disk on fire"), { code: "IO" })), "IO");
	assert.equal(errorCode(Object.assign(new Error("Invalid pattern: x"), { code: "ENOENT" })), "INVALID_PATTERN", "unknown codes are ignored");
	assert.equal(errorCode(new Error("Path not found: /x")), "PATH_NOT_FOUND");
	assert.equal(errorCode(new Error("Operation aborted")), "CANCELLED");
	assert.equal(errorCode("something else"), "INTERNAL");
});

test("both backends reject bad input with the same code", needsBoth, (t) => {
	const tree = makeTree({ "a.txt": "x\n" });
	t.after(tree.cleanup);
	for (const [name, call] of BAD_INPUTS) {
		const codeOf = (b: SearchBackend) => {
			try {
				call(b, tree.root);
			} catch (e) {
				return errorCode(e);
			}
			return "no error";
		};
		assert.equal(codeOf(native!), codeOf(rgBackend), name);
	}
});

/**
 * A match, then twelve million lines that each pass the literal prefilter and fail `\b`: rg (single-threaded
 * under --sort path) needs most of a second for them, while its first output comes within a few ms.
 */
function slowTree() {
	const tree = makeTree({ "a.txt": "needle\n" });
	fs.writeFileSync(path.join(tree.root, "b.txt"), "needles\n".repeat(12 * 1024 * 1024));
	return tree;
}

test("timeoutMs stops the search and returns the partial result; cancel() and the signal stop it too", needsRg, async (t) => {
	const tree = slowTree();
	t.after(tree.cleanup);
	const started = performance.now();
	const timed = await grepAll(rgBackend, { pattern: "needle\\b", cwd: tree.root, timeoutMs: 250 });
	assert.equal(timed.summary.timedOut, true);
	assert.deepEqual(timed.hits.map(at), ["a.txt:1"], "what was found before the timeout is kept");
	assert.ok(performance.now() - started < 2000, "returns promptly after the timeout");

	const search = rgBackend.grep({ pattern: "needle\\b", cwd: tree.root });
	search.cancel();
	for (let b = await search.nextBatch(); b; b = await search.nextBatch());
	assert.equal(search.summary()?.cancelled, true);

	const controller = new AbortController();
	const viaSignal = rgBackend.grep({ pattern: "needle\\b", cwd: tree.root, signal: controller.signal });
	controller.abort();
	for (let b = await viaSignal.nextBatch(); b; b = await viaSignal.nextBatch());
	assert.equal(viaSignal.summary()?.cancelled, true);
});

test("glob lists newest first, the project before ignored paths, with the native core's limit rules", needsRg, async (t) => {
	const tree = projectTree();
	t.after(tree.cleanup);
	const day = (n: number) => new Date(Date.UTC(2024, 0, n));
	const times: Record<string, number> = {
		"README.md": 5,
		"src/main.ts": 9,
		"src/util.ts": 7,
		".gitignore": 1,
		".config/settings.json": 2,
		"node_modules/pkg/index.js": 30,
		"dist/bundle.js": 20,
		"debug.log": 10,
	};
	for (const [f, d] of Object.entries(times)) fs.utimesSync(path.join(tree.root, f), day(d), day(d));
	const all = await rgBackend.glob({ pattern: "*", cwd: tree.root });
	assert.deepEqual(
		all.entries.map((e) => `${e.path}${e.ignored ? " (ignored)" : ""}`),
		[
			"src/main.ts",
			"src/util.ts",
			"README.md",
			".config/settings.json",
			".gitignore",
			"node_modules/pkg/index.js (ignored)",
			"dist/bundle.js (ignored)",
			"debug.log (ignored)",
		],
	);
	assert.equal(all.entries[0].mtimeMs, day(9).getTime());
	assert.deepEqual(all.ignored, [
		{ path: "debug.log", matches: 1 },
		{ path: "dist/", matches: 1 },
		{ path: "node_modules/", matches: 1 },
	]);
	assert.equal(all.limitReached, false);

	const limited = await rgBackend.glob({ pattern: "*.ts", cwd: tree.root, limit: 1 });
	assert.deepEqual(limited.entries.map((e) => e.path), ["src/main.ts"]);
	assert.equal(limited.total, 2);
	assert.equal(limited.limitReached, true);
	assert.deepEqual(limited.ignoredUnsearched, ["dist/", "node_modules/"], "debug.log cannot be a *.ts");

	const exact = await rgBackend.glob({ pattern: "*.ts", cwd: tree.root, limit: 2, noIgnore: false });
	assert.equal(exact.limitReached, false, "exactly `limit` matches with nothing left unsearched is complete");

	const dirs = await rgBackend.glob({ pattern: "*", cwd: tree.root, kind: "dir", sort: "path" });
	assert.deepEqual(dirs.entries.map((e) => `${e.path}${e.ignored ? " (ignored)" : ""}`), [
		".config",
		"src",
		"dist (ignored)",
		"node_modules (ignored)",
		"node_modules/pkg (ignored)",
	]);
});

test("glob patterns follow the native rules: no '/' matches names at any depth, '/' anchors, ** crosses", () => {
	const m = (pattern: string, p: string) => {
		const byPath = pattern.includes("/");
		return globToRegExp(pattern).test(byPath ? p : p.slice(p.lastIndexOf("/") + 1));
	};
	assert.ok(m("*.ts", "a/b/c.ts"));
	assert.ok(!m("src/*.ts", "src/deep/c.ts"), "* does not cross /");
	assert.ok(m("src/**/*.ts", "src/c.ts") && m("src/**/*.ts", "src/a/b/c.ts"));
	assert.ok(m("**/deep/**", "x/deep/y") && !m("**/deep/**", "x/deep"));
	assert.ok(m("*.{ts,js}", "a.js") && !m("*.{ts,js}", "a.rs"));
	assert.ok(m("[!a].ts", "b.ts") && !m("[!a].ts", "a.ts"));
	assert.ok(m("\\[x\\].ts", "[x].ts"));
	assert.ok(m("./src/*.ts", "src/a.ts"));
	assert.ok(!m("a.ts", "xa.ts"), "anchored at both ends");
});

const parityTree = () =>
	makeTree({
		".gitignore": "node_modules\nlogs/*.log\nbuild/\n",
		"src/a.ts": "const needle = 1;\nfoo\nbar NEEDLE\nbaz\nqux\nneedle again\n",
		"src/b.js": "needle in js\n",
		"src/deep/er/d.spec.ts": "describe('needle')\n",
		"src/long.txt": `${"x".repeat(3000)} needle ${"y".repeat(3000)}\n`,
		"src/crlf.txt": "needle one\r\nnothing\r\nneedle three\r\n",
		"node_modules/pkg/index.js": "ignored needle\n",
		"node_modules/pkg/lib/e.ts": "needle e\n",
		"logs/x.log": "needle log\n",
		"logs/keep.txt": "needle kept\n",
		".hidden/h.ts": "hidden needle\n",
		"build/out.js": "needle build\nneedle 2\n",
		".git/config": "needle\n",
	});

test("grep answers exactly as the native core does", needsBoth, async (t) => {
	const tree = parityTree();
	t.after(tree.cleanup);
	const variants: Array<Partial<GrepOptions>> = [
		{},
		{ ignoreCase: true },
		{ literal: true, pattern: "needle." },
		{ pattern: "needle." },
		{ glob: ["*.ts"] },
		{ glob: ["src/**"] },
		{ type: "js" },
		{ type: ["js", "ts"] },
		{ hidden: false },
		{ context: 2 },
		{ before: 1 },
		{ after: 3 },
		{ mode: "files" },
		{ mode: "count" },
		{ maxCount: 2 },
		{ maxCount: 4, context: 1 },
		{ noIgnore: false },
		{ ignoredCountOnly: true },
		// With a limit, as the tools always search; without one the native core counts files with a match
		// differently (see the report on its unordered pipeline).
		{ ignoredCountOnly: true, mode: "count", maxCount: 1000 },
		{ path: "src" },
		{ path: "build" },
		{ path: "src/a.ts", context: 1 },
		{ maxLineLength: 40 },
		{ pattern: "zzz" },
		{ pattern: "needle (build|2)", ignoredCountOnly: true },
		{ maxCount: 1, mode: "files" },
	];
	const strip = ({ hits, summary }: Awaited<ReturnType<typeof grepAll>>) => ({ hits, summary: { ...summary, elapsedMs: 0 } });
	for (const v of variants) {
		const opts: GrepOptions = { cwd: tree.root, pattern: "needle", ...v };
		// index: false: the fallback has no live index, and the comparison is with the scan.
		const expected = strip(await grepAll(native!, { ...opts, index: false }));
		const actual = strip(await grepAll(rgBackend, opts));
		if (expected.summary.limitReached) {
			// When the limit stops it early, the native core may not have met every ignored root yet, so its list
			// of unsearched roots can be shorter from run to run; the fallback always knows all of them.
			const missing = expected.summary.ignoredUnsearched.filter((r) => !actual.summary.ignoredUnsearched.includes(r));
			assert.deepEqual(missing, [], JSON.stringify(v));
			expected.summary.ignoredUnsearched = actual.summary.ignoredUnsearched;
		}
		assert.deepEqual(actual, expected, JSON.stringify(v));
	}
});

test("glob answers exactly as the native core does (empty directories aside)", needsBoth, async (t) => {
	const tree = parityTree();
	t.after(tree.cleanup);
	const patterns = ["*", "**/*.ts", "src/**", "*.{ts,js}", "**/deep/**", "./src/*.ts", "*/*", "lib"];
	const scopes = [
		{ noIgnore: true, limit: 200 },
		{ noIgnore: true, limit: 3 },
		{ noIgnore: false, limit: 200 },
	];
	for (const pattern of patterns) {
		for (const kind of ["file", "any"] as const) {
			for (const scope of scopes) {
				const opts: GlobOptions = { cwd: tree.root, pattern, kind, sort: "path", ...scope };
				const [expected, actual] = await Promise.all([native!.glob({ ...opts, index: false }), rgBackend.glob(opts)]);
				assert.deepEqual({ ...actual, elapsedMs: 0 }, { ...expected, elapsedMs: 0 }, JSON.stringify(opts));
			}
		}
	}
});

test("a name that is not UTF-8 is shown with the native core's #b= suffix", needsBoth, async (t) => {
	const tree = makeTree({});
	t.after(tree.cleanup);
	const name = Buffer.concat([Buffer.from(tree.root + "/caf"), Buffer.from([0xe9]), Buffer.from(".txt")]);
	try {
		fs.writeFileSync(name, "needle\n");
	} catch {
		t.skip("this filesystem rejects non-UTF-8 names");
		return;
	}
	// Also inside an ignored root, which the fallback searches in its second phase.
	fs.writeFileSync(path.join(tree.root, ".gitignore"), "vendor/\n");
	fs.mkdirSync(path.join(tree.root, "vendor"));
	fs.writeFileSync(Buffer.concat([Buffer.from(tree.root + "/vendor/x"), Buffer.from([0xff]), Buffer.from(".js")]), "needle\n");
	const expected = await grepAll(native!, { pattern: "needle", cwd: tree.root, index: false });
	const actual = await grepAll(rgBackend, { pattern: "needle", cwd: tree.root });
	assert.deepEqual(actual.hits.map(at), ["caf\uFFFD.txt#b=e9:1", "vendor/x\uFFFD.js#b=ff:1 (ignored)"]);
	assert.equal(actual.hits[0].pathBytes, Buffer.from("caf\xe9.txt", "latin1").toString("hex"));
	assert.deepEqual(actual.hits, expected.hits);
	assert.deepEqual({ ...actual.summary, elapsedMs: 0 }, { ...expected.summary, elapsedMs: 0 });
	const globbed = await rgBackend.glob({ pattern: "*.txt", cwd: tree.root });
	assert.deepEqual(globbed.entries.map((e) => e.path), ["caf\uFFFD.txt#b=e9"]);
});
