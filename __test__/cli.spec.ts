// bin/pi-utils.mjs run as users run it: plain Node (no TS loader) on a generated tree. Its text
// must be the tools' text, its --json lines must parse, its exit codes must follow ripgrep.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { runGrepTool, type GrepToolParams } from "../extensions/lib/grep-tool.mjs";
import { runGlobTool } from "../extensions/lib/glob-tool.mjs";
import { native, packageRoot } from "./helpers/native.ts";
import { makeTree } from "./helpers/tree.ts";

const cli = path.join(packageRoot, "bin", "pi-utils.mjs");

function run(cwd: string, args: string[]) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // the CLI must not rely on the test runner's loader
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, env, encoding: "utf-8", timeout: 30000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const grepConfig = (cwd: string) => ({
  cwd, timeoutMs: 30000, graceMs: 3000, noIgnore: true, maxLineLength: 500, maxBytes: 51200, defaultLimit: 100,
});

function tree() {
  return makeTree({
    ".gitignore": "vendor/\n",
    "src/app.ts": "import x\nconst Needle = 1\nuse(Needle)\nneedle()\nend\n",
    "src/util.md": "a needle here\n",
    "notes.txt": "nothing\n",
    "vendor/dep.js": "needle in vendor\n",
  });
}

test("default output is exactly runGrepTool's text for the same params", async (t) => {
  const tr = tree();
  t.after(tr.cleanup);
  const cases: [string[], GrepToolParams][] = [
    [["needle"], { pattern: "needle" }],
    [["-i", "-C", "1", "needle", "src"], { pattern: "needle", ignoreCase: true, context: 1, path: "src" }],
    [["-Fi", "-m", "2", "NEEDLE"], { pattern: "NEEDLE", literal: true, ignoreCase: true, limit: 2 }],
    [["-l", "needle"], { pattern: "needle", outputMode: "files_with_matches" }],
    [["-c", "needle"], { pattern: "needle", outputMode: "count" }],
    [["-g", "*.md", "needle"], { pattern: "needle", glob: "*.md" }],
    [["--respect-ignore", "needle"], { pattern: "needle", noIgnore: false }],
  ];
  for (const [args, params] of cases) {
    const expected = await runGrepTool(native, params, grepConfig(tr.root));
    const r = run(tr.root, ["grep", ...args]);
    assert.equal(r.stdout, `${expected.text}\n`, args.join(" "));
    assert.equal(r.code, 0);
  }
  assert.match(run(tr.root, ["grep", "needle"]).stdout, /\[\+1 matches in ignored paths: vendor\/ \(1\)/);
});

test("-C 1 merges overlapping context: no line printed twice", (t) => {
  const tr = tree();
  t.after(tr.cleanup);
  const r = run(tr.root, ["grep", "-i", "-C", "1", "needle", "src/app.ts"]);
  assert.equal(r.stdout, "app.ts-1- import x\napp.ts:2: const Needle = 1\napp.ts:3: use(Needle)\napp.ts:4: needle()\napp.ts-5- end\n");
  const numbers = r.stdout.trim().split("\n").map((l) => l.match(/^app\.ts[-:](\d+)[-:]/)?.[1]);
  assert.equal(new Set(numbers).size, numbers.length);
});

test("glob output is exactly runGlobTool's text", async (t) => {
  const tr = tree();
  t.after(tr.cleanup);
  const expected = await runGlobTool(native, { pattern: "*.ts" }, {
    cwd: tr.root, timeoutMs: 10000, graceMs: 2000, noIgnore: true, defaultLimit: 200, maxBytes: 51200,
  });
  const r = run(tr.root, ["glob", "*.ts"]);
  assert.equal(r.stdout, `${expected.text}\n`);
  assert.equal(expected.text, "src/app.ts");
  assert.equal(r.code, 0);
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
  // A copy of bin/ and extensions/lib/ without index.js next to them: what an unbuilt checkout looks like.
  fs.mkdirSync(path.join(tr.root, "bin"));
  fs.copyFileSync(cli, path.join(tr.root, "bin", "pi-utils.mjs"));
  fs.cpSync(path.join(packageRoot, "extensions", "lib"), path.join(tr.root, "extensions", "lib"), { recursive: true });
  const r = spawnSync(process.execPath, [path.join(tr.root, "bin", "pi-utils.mjs"), "grep", "x"], { cwd: tr.root, encoding: "utf-8" });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /native addon not built: run npm install/);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
});
