// outline() through the addon: nested symbols, the maxItems cut, unknown
// languages, near-name suggestions, and non-UTF-8 display paths.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { native } from "./helpers/native.ts";
import { makeTree } from "./helpers/tree.ts";

const TS = `import { x } from "y";

export class Widget {
  @Input()
  area(): number {
    const inner = (n: number) => n * 2;
    return inner(1);
  }
}

export const make = () => new Widget();
`;

test("a TypeScript file outlines as nested symbols with parents", async (t) => {
  const tree = makeTree({ "src/widget.ts": TS });
  t.after(tree.cleanup);
  const r = await native.outline({ path: "src/widget.ts", cwd: tree.root });
  assert.equal(r.path, "src/widget.ts");
  assert.equal(r.language, "typescript");
  assert.equal(r.totalLines, 11);
  assert.equal(r.omitted, 0);
  assert.equal(r.hasErrors, false);
  assert.deepEqual(
    r.symbols.map((s) => [s.kind, s.name, s.startLine, s.endLine, s.depth, s.parent]),
    [
      ["class", "Widget", 3, 9, 0, null],
      ["method", "area", 4, 8, 1, 0],
      ["function", "inner", 6, 6, 2, 1],
      ["function", "make", 11, 11, 0, null],
    ],
  );
});

test("maxItems drops the deepest symbols first and counts them", async (t) => {
  const tree = makeTree({ "w.ts": TS });
  t.after(tree.cleanup);
  const r = await native.outline({ path: path.join(tree.root, "w.ts"), maxItems: 3 });
  assert.deepEqual(r.symbols.map((s) => s.name), ["Widget", "area", "make"]);
  assert.equal(r.omitted, 1);
  assert.equal(r.symbols[1].parent, 0);
});

test("Markdown headings become nested sections", async (t) => {
  const tree = makeTree({ "README.md": "# Title\n\nIntro.\n\n## Install\n\nRun.\n\n# Next\n\nMore.\n" });
  t.after(tree.cleanup);
  const r = await native.outline({ path: "README.md", cwd: tree.root });
  assert.equal(r.language, "markdown");
  assert.deepEqual(
    r.symbols.map((s) => `${"  ".repeat(s.depth)}${s.kind} ${s.name} ${s.startLine}-${s.endLine}`),
    ["section Title 1-7", "  section Install 5-7", "section Next 9-11"],
  );
});

test("PHP and Swift files outline through their grammars", async (t) => {
  const tree = makeTree({
    "src/Cookie/SetCookie.php":
      "<?php\n\nnamespace GuzzleHttp\\Cookie;\n\nclass SetCookie\n{\n    public function matchesDomain(string $domain): bool\n    {\n        return $domain !== '';\n    }\n}\n",
    "Source/Core/Session.swift":
      "open class Session {\n    public func request(_ url: String) -> DataRequest {\n        DataRequest(url)\n    }\n}\n\nextension Session: Sendable {}\n",
  });
  t.after(tree.cleanup);
  const shown = (r: { symbols: { depth: number; kind: string; name: string; startLine: number; endLine: number }[] }) =>
    r.symbols.map((s) => `${"  ".repeat(s.depth)}${s.kind} ${s.name} ${s.startLine}-${s.endLine}`);
  const php = await native.outline({ path: "src/Cookie/SetCookie.php", cwd: tree.root });
  assert.equal(php.language, "php");
  assert.deepEqual(shown(php), ["namespace GuzzleHttp\\Cookie 3-3", "class SetCookie 5-11", "  method matchesDomain 7-10"]);
  const swift = await native.outline({ path: "Source/Core/Session.swift", cwd: tree.root });
  assert.equal(swift.language, "swift");
  assert.deepEqual(shown(swift), ["class Session 1-5", "  method request 2-4", "impl Session 7-7"]);
});

test("an unknown language gives language null and no symbols, not an error", async (t) => {
  const tree = makeTree({ "notes.txt": "one\ntwo\nthree" });
  t.after(tree.cleanup);
  const r = await native.outline({ path: "notes.txt", cwd: tree.root });
  assert.equal(r.language, null);
  assert.deepEqual(r.symbols, []);
  assert.equal(r.totalLines, 3);
});

test("a missing file suggests up to 5 near names from its directory", async (t) => {
  const names = ["main.rs", "mains.rs", "main.py", "domain.rs", "lib.rs", "Main.rs", "mainframe.rs", "zzz.txt"];
  const tree = makeTree(Object.fromEntries(names.map((n) => [`src/${n}`, "fn a() {}\n"])));
  t.after(tree.cleanup);
  await assert.rejects(native.outline({ path: "src/mian.rs", cwd: tree.root }), (e: Error) => {
    assert.match(e.message, /^File not found: src\/mian\.rs\. Did you mean: /);
    const suggested = e.message.replace(/^.*Did you mean: /, "").replace(/\?$/, "").split(", ");
    assert.ok(suggested.length <= 5, e.message);
    assert.ok(suggested.includes("src/main.rs"), e.message);
    assert.ok(!suggested.includes("src/zzz.txt") && !suggested.includes("src/lib.rs"), e.message);
    return true;
  });
  await assert.rejects(native.outline({ path: "nowhere/x.rs", cwd: tree.root }), /^Error: File not found: nowhere\/x\.rs$/);
});

test("directories and special files are refused without being opened", async (t) => {
  const tree = makeTree({ "d/a.rs": "fn a() {}\n" });
  t.after(tree.cleanup);
  await assert.rejects(native.outline({ path: "d", cwd: tree.root }), /Not a file: d is a directory/);
  assert.equal(spawnSync("mkfifo", [path.join(tree.root, "pipe.rs")]).status, 0);
  await assert.rejects(native.outline({ path: "pipe.rs", cwd: tree.root }), /Not a regular file/);
  assert.throws(() => native.outline({ path: "" }), /path must not be empty/);
});

test("the display form of a non-UTF-8 name finds the right file among lossy twins", async (t) => {
  const tree = makeTree({});
  t.after(tree.cleanup);
  const root = Buffer.from(tree.root + "/");
  const file = (name: number[]) => Buffer.concat([root, Buffer.from(name)]);
  // a\xff.rs and a\xfe.rs share the lossy name a\uFFFD.rs.
  fs.writeFileSync(file([0x61, 0xff, 0x2e, 0x72, 0x73]), "fn from_ff() {}\n");
  fs.writeFileSync(file([0x61, 0xfe, 0x2e, 0x72, 0x73]), "fn from_fe() {}\n");
  // A directory with an invalid byte too: d\xfd/x\xfc.py.
  fs.mkdirSync(file([0x64, 0xfd]));
  fs.writeFileSync(file([0x64, 0xfd, 0x2f, 0x78, 0xfc, 0x2e, 0x70, 0x79]), "def deep():\n    pass\n");

  const ff = await native.outline({ path: "a\uFFFD.rs#b=ff", cwd: tree.root });
  assert.deepEqual(ff.symbols.map((s) => s.name), ["from_ff"]);
  assert.equal(ff.path, "a\uFFFD.rs#b=ff");
  const fe = await native.outline({ path: "a\uFFFD.rs#b=fe", cwd: tree.root });
  assert.deepEqual(fe.symbols.map((s) => s.name), ["from_fe"]);
  const deep = await native.outline({ path: path.join(tree.root, "d\uFFFD/x\uFFFD.py#b=fdfc") });
  assert.equal(deep.language, "python");
  assert.deepEqual(deep.symbols.map((s) => s.name), ["deep"]);
  await assert.rejects(native.outline({ path: "a\uFFFD.rs#b=aa", cwd: tree.root }), /File not found/);
});

test("grep's display path round-trips into outline", async (t) => {
  const tree = makeTree({});
  t.after(tree.cleanup);
  fs.writeFileSync(Buffer.concat([Buffer.from(tree.root + "/"), Buffer.from([0x62, 0xfe, 0x2e, 0x72, 0x73])]), "fn needle() {}\n");
  const search = native.grep({ pattern: "needle", path: tree.root });
  const hits = [];
  for (let b = await search.nextBatch(); b; b = await search.nextBatch()) hits.push(...b);
  assert.equal(hits.length, 1);
  const r = await native.outline({ path: hits[0].path, cwd: tree.root });
  assert.deepEqual(r.symbols.map((s) => `${s.kind} ${s.name}`), ["function needle"]);
});
