// bin/pi-utils.mjs run as users run it: plain Node (no TS loader) on a generated tree. Its text must be the
// tools' text (recorded here, not recomputed with the functions the CLI itself calls), its --json lines must
// parse, its exit codes must follow ripgrep.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { native, packageRoot } from "./helpers/native.ts";
import { makeTree } from "./helpers/tree.ts";

const cli = path.join(packageRoot, "bin", "pi-utils.mjs");

function run(cwd: string, args: string[]) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // the CLI must not rely on the test runner's loader
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, env, encoding: "utf-8", timeout: 30000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function tree() {
  return makeTree({
    ".gitignore": "vendor/\n",
    "src/app.ts": "import x\nconst Needle = 1\nuse(Needle)\nneedle()\nend\n",
    "src/util.md": "a needle here\n",
    "notes.txt": "nothing\n",
    "vendor/dep.js": "needle in vendor\n",
  });
}

const NOT_SHOWN = 'not shown — search path "vendor" to see them; noIgnore: false leaves ignored files out entirely';

test("default output is the grep tool's text, notices included", (t) => {
  const tr = tree();
  t.after(tr.cleanup);
  const cases: [string[], string][] = [
    [["needle"], `src/app.ts:4: needle()\nsrc/util.md:1: a needle here\n\n[+1 match in ignored paths (vendor/ 1) ${NOT_SHOWN}]`],
    [["-i", "-C", "1", "needle", "src"], "app.ts-1- import x\napp.ts:2: const Needle = 1\napp.ts:3: use(Needle)\napp.ts:4: needle()\napp.ts-5- end\nutil.md:1: a needle here"],
    [
      ["-Fi", "-m", "2", "NEEDLE"],
      "src/app.ts:2: const Needle = 1\nsrc/app.ts:3: use(Needle)\n\n" +
        "[2 matches limit reached. Use limit=4 for more, or refine pattern. Ignored paths not searched (the limit was reached first): vendor/]",
    ],
    [["-l", "needle"], `src/app.ts\nsrc/util.md\n\n[+1 file in ignored paths (vendor/ 1) ${NOT_SHOWN}]`],
    [["-c", "needle"], `src/app.ts:1\nsrc/util.md:1\n\n[+1 match in ignored paths (vendor/ 1) ${NOT_SHOWN}]`],
    [["-g", "*.md", "needle"], "src/util.md:1: a needle here"],
    [["--respect-ignore", "needle"], "src/app.ts:4: needle()\nsrc/util.md:1: a needle here"],
  ];
  for (const [args, expected] of cases) {
    const r = run(tr.root, ["grep", ...args]);
    assert.equal(r.stdout, `${expected}\n`, args.join(" "));
    assert.equal(r.code, 0);
  }
});

test("-C 1 merges overlapping context: no line printed twice", (t) => {
  const tr = tree();
  t.after(tr.cleanup);
  const r = run(tr.root, ["grep", "-i", "-C", "1", "needle", "src/app.ts"]);
  assert.equal(r.stdout, "app.ts-1- import x\napp.ts:2: const Needle = 1\napp.ts:3: use(Needle)\napp.ts:4: needle()\napp.ts-5- end\n");
  const numbers = r.stdout.trim().split("\n").map((l) => l.match(/^app\.ts[-:](\d+)[-:]/)?.[1]);
  assert.equal(new Set(numbers).size, numbers.length);
});

test("glob output is the glob tool's text", (t) => {
  const tr = tree();
  t.after(tr.cleanup);
  const r = run(tr.root, ["glob", "*.ts"]);
  assert.equal(r.stdout, "src/app.ts\n");
  assert.equal(r.code, 0);
  assert.equal(run(tr.root, ["glob", "*.js"]).stdout, `vendor/dep.js\n\n(all matches are in ignored paths)\n`, "ignored entries are listed when the project has none, and marked");
  assert.equal(run(tr.root, ["glob", "*.none"]).code, 1);
});

test("--json prints one object per hit and ends with a summary", (t) => {
  const tr = tree();
  t.after(tr.cleanup);
  const r = run(tr.root, ["grep", "--json", "needle"]);
  assert.equal(r.code, 0);
  const objs = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  const last = objs.pop();
  assert.equal(last.type, "summary");
  assert.equal(last.matches, 3);
  assert.deepEqual(
    objs.map((o) => [o.type, o.path, o.line, o.column, o.text, o.ignored]),
    [
      ["match", "src/app.ts", 4, 1, "needle()", false],
      ["match", "src/util.md", 1, 3, "a needle here", false],
      ["match", "vendor/dep.js", 1, 1, "needle in vendor", true],
    ],
  );

  const g = run(tr.root, ["glob", "--json", "--sort", "path", "*.ts"]).stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(g.map((o) => [o.type, o.path]), [["file", "src/app.ts"], ["summary", undefined]]);
  assert.equal(g[1].total, 1);
});

test("exit codes: 0 found, 1 nothing found, 2 error with the message on stderr and no stack", (t) => {
  const tr = tree();
  t.after(tr.cleanup);
  assert.equal(run(tr.root, ["grep", "needle"]).code, 0);
  const none = run(tr.root, ["grep", "absent-word"]);
  assert.deepEqual([none.code, none.stdout], [1, "No matches found\n"]);
  assert.equal(run(tr.root, ["grep", "--json", "absent-word"]).code, 1);

  const bad = run(tr.root, ["grep", "foo("]);
  assert.equal(bad.code, 2);
  assert.equal(bad.stdout, "");
  assert.match(bad.stderr, /regex parse error[\s\S]*unclosed group/);
  assert.doesNotMatch(bad.stderr, /\n\s+at /, "no stack trace");

  const missing = run(tr.root, ["grep", "x", "no/such/dir"]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /Path not found: .*no\/such\/dir/);
  assert.equal(run(tr.root, ["grep", "--bogus", "x"]).code, 2);
  assert.equal(run(tr.root, ["grep", "-C", "many", "x"]).code, 2);
  assert.equal(run(tr.root, ["frobnicate"]).code, 2);
  const help = run(tr.root, ["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /pi-utils grep \[options\] <pattern> \[path\]/);
});

test("a missing addon is reported with the fix, not a stack", (t) => {
  const tr = makeTree({});
  t.after(tr.cleanup);
  // A copy of bin/, extensions/lib/ and the data file the JS defaults read (src/shell/defaults.json) without
  // index.js next to them: what an unbuilt checkout looks like.
  fs.mkdirSync(path.join(tr.root, "bin"));
  fs.copyFileSync(cli, path.join(tr.root, "bin", "pi-utils.mjs"));
  fs.cpSync(path.join(packageRoot, "extensions", "lib"), path.join(tr.root, "extensions", "lib"), { recursive: true });
  fs.mkdirSync(path.join(tr.root, "src", "shell"), { recursive: true });
  fs.copyFileSync(path.join(packageRoot, "src", "shell", "defaults.json"), path.join(tr.root, "src", "shell", "defaults.json"));
  const r = spawnSync(process.execPath, [path.join(tr.root, "bin", "pi-utils.mjs"), "grep", "x"], { cwd: tr.root, encoding: "utf-8" });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /pi-utils native core unavailable: .*Fix: install Rust .* and run `npm install`/);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
});

function codeTree() {
  return makeTree({
    "src/shapes.ts": "export class Shape {\n  area(): number {\n    return 0;\n  }\n}\n\nexport function make(): Shape {\n  return new Shape();\n}\n",
    "README.txt": "return policy\n",
  });
}

test("grep groups by enclosing symbol like the tool, and --no-group prints Pi's flat lines", (t) => {
  const tr = codeTree();
  t.after(tr.cleanup);
  assert.equal(
    run(tr.root, ["grep", "return"]).stdout,
    "README.txt:1: return policy\n\nsrc/shapes.ts (typescript, 9 lines, 3 symbols)\n  method area @ 2-4\nsrc/shapes.ts:3:     return 0;\n" +
      "  function make @ 7-9\nsrc/shapes.ts:8:   return new Shape();\n",
  );
  assert.equal(
    run(tr.root, ["grep", "--no-group", "return"]).stdout,
    "README.txt:1: return policy\nsrc/shapes.ts:3:     return 0;\nsrc/shapes.ts:8:   return new Shape();\n",
  );
});

test("outline prints exactly the outline tool's text; --json is the native result", async (t) => {
  const tr = codeTree();
  t.after(tr.cleanup);
  const header = "file: src/shapes.ts\nlanguage: typescript\nlines: 9\nsymbols: 3\nstructure:\n- class Shape @ 1-5 (5 lines)\n";
  for (const [args, expected] of [
    [["src/shapes.ts"], `${header}  - method area @ 2-4 (3 lines)\n- function make @ 7-9 (3 lines)\n`],
    [["--max-items", "2", "src/shapes.ts"], `${header}- function make @ 7-9 (3 lines)\n... 1 more symbols omitted (deepest first; maxItems=2)\n`],
    [["--max-items=1", "@src/shapes.ts"], `${header}... 2 more symbols omitted (deepest first; maxItems=1)\n`],
  ] as const) {
    const r = run(tr.root, ["outline", ...args]);
    assert.deepEqual([r.code, r.stdout], [0, expected], args.join(" "));
  }

  const json = run(tr.root, ["outline", "--json", "--max-items", "2", "src/shapes.ts"]);
  assert.equal(json.code, 0);
  const parsed = JSON.parse(json.stdout);
  const { text: _text, ...nativeResult } = await native.outline({ path: "src/shapes.ts", cwd: tr.root, maxItems: 2 });
  assert.deepEqual(parsed, nativeResult);
  assert.deepEqual(parsed.symbols.map((s: { name: string }) => s.name), ["Shape", "make"]);
  assert.equal(parsed.omitted, 1);
});

test("outline exit codes: 1 without symbols, 2 for a missing file (with near names) or bad usage", (t) => {
  const tr = codeTree();
  t.after(tr.cleanup);
  const none = run(tr.root, ["outline", "README.txt"]);
  assert.deepEqual([none.code, none.stdout], [1, "file: README.txt\nlanguage: unknown\nsymbols: none (no grammar for this file type)\n"]);
  assert.equal(run(tr.root, ["outline", "--json", "README.txt"]).code, 1);

  const missing = run(tr.root, ["outline", "src/shape.ts"]);
  assert.equal(missing.code, 2);
  assert.equal(missing.stdout, "");
  assert.equal(missing.stderr, "pi-utils: File not found: src/shape.ts. Did you mean: src/shapes.ts?\n");
  for (const args of [["outline"], ["outline", "a.ts", "b.ts"], ["outline", "--max-items", "x", "src/shapes.ts"]]) {
    const r = run(tr.root, args);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.stderr, /Run pi-utils --help for usage/);
  }
  assert.match(run(tr.root, ["--help"]).stdout, /pi-utils outline \[--json\] \[--max-items N\] \[--context-json FILE\] \[--debug-structure\] <file>/);
});

test("grep answers from a saved index when one is there, with the scan's output, and never build one", async (t) => {
	const files: Record<string, string> = {};
	for (let i = 0; i < 1100; i++) files[`d${i % 10}/f${String(i).padStart(4, "0")}.txt`] = i % 97 === 0 ? `the rare zqxneedle ${i}\n` : `plain line ${i}\n`;
	const tr = makeTree(files);
	t.after(tr.cleanup);
	const store = fs.mkdtempSync(path.join(path.dirname(tr.root), "pi-utils-cli-store-"));
	t.after(() => fs.rmSync(store, { recursive: true, force: true }));
	const runIn = (args: string[]) => {
		const env: NodeJS.ProcessEnv = { ...process.env, PI_UTILS_INDEX_DIR: store };
		delete env.NODE_OPTIONS;
		const r = spawnSync(process.execPath, [cli, ...args], { cwd: tr.root, env, encoding: "utf-8", timeout: 60000 });
		assert.notEqual(r.status, 2, r.stderr);
		return r.stdout;
	};
	const summaryOf = (out: string) => JSON.parse(out.trimEnd().split("\n").at(-1)!);
	const withoutSummary = (out: string) => out.trimEnd().split("\n").slice(0, -1).join("\n");
	const grep = ["grep", "--json", "zqxneedle"];
	const scan = runIn([...grep, "--no-index"]);

	assert.equal(summaryOf(runIn(grep)).index, "off", "nothing saved: a scan");
	assert.deepEqual(fs.readdirSync(store), [], "and nothing built or saved");

	// Older than the store's racy window, so the next process trusts the saved stamps.
	await new Promise((r) => setTimeout(r, 2500));
	assert.match(runIn(["index", "warm"]), /ready/);
	const used = runIn(grep);
	assert.equal(summaryOf(used).index, "used");
	assert.equal(withoutSummary(used), withoutSummary(scan), "the index's hits are the scan's");
	assert.equal(runIn(["grep", "zqxneedle"]), runIn(["grep", "--no-index", "zqxneedle"]), "and so is the tool's text");
	assert.equal(summaryOf(runIn(["grep", "--json", "-c", "e"])).index, "off", "a pattern the postings cannot narrow scans");

	// A file changed since the index was saved is read by the search itself.
	fs.writeFileSync(path.join(tr.root, "d5/f0005.txt"), "now a zqxneedle too\n");
	const after = runIn(grep);
	assert.equal(summaryOf(after).index, "used");
	assert.match(after, /d5\/f0005\.txt/);
	assert.equal(withoutSummary(after), withoutSummary(runIn([...grep, "--no-index"])));
	const generations = () => fs.readdirSync(store, { recursive: true }).filter((f) => String(f).includes("gen-")).sort();
	const saved = generations();
	// Far more changed than a one-shot process would read one by one: it scans and writes nothing.
	for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(tr.root, `d${i % 10}/f${String(i).padStart(4, "0")}.txt`), `zqxneedle ${i}\n`);
	const stale = runIn(grep);
	assert.equal(summaryOf(stale).index, "off");
	assert.equal(withoutSummary(stale), withoutSummary(runIn([...grep, "--no-index"])));
	assert.deepEqual(generations(), saved, "no generation written or merged");
});
