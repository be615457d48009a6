// The path:line hits must equal ripgrep's on a tree full of edge cases, searched the way our default works
// (ignored files included, hidden files included, .git never): rg --no-config --no-ignore --hidden -g '!.git'.
// The order too: rg --sort path, with the files the ignore rules exclude moved after the project's own (which
// files those are comes from rg's own ignore-respecting listing).
import { after, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { native, collect } from "./helpers/native.ts";
import { makeTree } from "./helpers/tree.ts";

// The index's postings files go to a folder of this run, never the user's cache (read at each build).
const store = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-index-store-"));
process.env.PI_UTILS_INDEX_DIR = store;
after(() => fs.rmSync(store, { recursive: true, force: true }));

const hasRg = spawnSync("rg", ["--version"]).status === 0;

function edgeCaseTree() {
  const long = "x".repeat(5000) + " needle " + "y".repeat(5000);
  const tree = makeTree({
    ".gitignore": "ignored/\n*.log\n",
    "ignored/deep/needle.txt": "needle in ignored dir\n",
    "app.log": "needle in a log\n",
    "sub/.gitignore": "!keep.log\nlocal/\n",
    "sub/keep.log": "Needle kept\n",
    "sub/local/x.ts": "const needle = 1;\n",
    ".hidden/h.ts": "needle hidden\n",
    ".git/config": "needle in git config\n",
    ".git/objects/aa": "needle\n",
    "vendor/.git": "gitdir: needle\n",
    "bin.dat": Buffer.from("needle\u0000binary"),
    "crlf.txt": "needle one\r\nnothing\r\nneedle three\r\n",
    "empty.txt": "",
    "unicode/café.md": "café needle\nNEEDLE upper\n",
    "latin1.txt": Buffer.from([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x20, 0xe9, 0x0a]),
    "long.js": long + "\n",
    "src/main.rs": "fn main() {\n    let needle = 42;\n    println!(\"{needle1}\");\n}\n",
    "src/lib.ts": "export const needle2 = 'needle';\n// neeedle7\n",
    "docs/readme.md": "# needle\nneedle needle\n",
  });
  fs.writeFileSync(Buffer.concat([Buffer.from(tree.root + "/bad"), Buffer.from([0xff, 0xfe]), Buffer.from(".txt")]), "needle in a bad name\n");
  // Files no case matches, so that the live index has something to rule out (it scans when most files
  // are candidates).
  fs.mkdirSync(path.join(tree.root, "filler"));
  for (let i = 0; i < 40; i++) fs.writeFileSync(path.join(tree.root, "filler", `f${i}.txt`), "hay only\n");
  return tree;
}

const hexPath = (rel: Buffer) => rel.toString("hex").replace(/^2e2f/, ""); // strip "./"

/** The files rg lists with the ignore rules on (the project's own), as hex paths. */
function rgProjectFiles(root: string): Set<string> {
  const r = spawnSync("rg", ["--no-config", "--files", "--hidden", "--no-require-git", "-g", "!.git", "--null", "."], { cwd: root, maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, r.stderr.toString());
  const out = new Set<string>();
  for (let rest = r.stdout, nul = rest.indexOf(0); nul !== -1; rest = rest.subarray(nul + 1), nul = rest.indexOf(0)) {
    out.add(hexPath(rest.subarray(0, nul)));
  }
  return out;
}

/**
 * `path:line` from rg in path order, project files first, with raw path bytes as hex so non-UTF-8 names
 * compare exactly.
 */
function rgHits(root: string, args: string[]): string[] {
  const r = spawnSync("rg", ["--no-config", "--no-ignore", "--hidden", "-g", "!.git", "--sort", "path", "--null", "--line-number", "--no-heading", "--with-filename", "--color=never", ...args, "."], { cwd: root, maxBuffer: 64 << 20 });
  assert.ok(r.status === 0 || r.status === 1, r.stderr.toString());
  const out: string[] = [];
  let rest = r.stdout;
  while (rest.length > 0) {
    const nul = rest.indexOf(0);
    const nl = rest.indexOf(10, nul);
    const rel = hexPath(rest.subarray(0, nul));
    const line = rest.subarray(nul + 1, nl).toString("latin1").split(":")[0];
    out.push(`${rel}:${line}`);
    rest = rest.subarray(nl + 1);
  }
  const project = rgProjectFiles(root);
  const inProject = (hit: string) => project.has(hit.slice(0, hit.lastIndexOf(":")));
  return [...out.filter(inProject), ...out.filter((h) => !inProject(h))];
}

async function ourHits(root: string, opts: Record<string, unknown>, expectIndex: string): Promise<string[]> {
  const { hits, summary } = await collect(native.grep({ pattern: "", ...opts, path: root } as never));
  assert.equal(summary.index, expectIndex);
  return hits.map((h) => `${h.pathBytes ?? Buffer.from(h.path).toString("hex")}:${h.line}`);
}

const cases: Array<[string, Record<string, unknown>, string[]]> = [
  ["literal", { pattern: "needle", literal: true }, ["-F", "needle"]],
  ["regex", { pattern: "ne+dle\\d" }, ["ne+dle\\d"]],
  ["case-insensitive", { pattern: "needle", ignoreCase: true }, ["-i", "needle"]],
  ["unicode", { pattern: "café" }, ["café"]],
  ["include glob", { pattern: "needle", glob: ["*.ts", "*.md"] }, ["-g", "*.ts", "-g", "*.md", "needle"]],
  ["exclude glob", { pattern: "needle", glob: ["!*.md", "!sub/**"] }, ["-g", "!*.md", "-g", "!sub/**", "needle"]],
  ["type", { pattern: "needle", type: "rust" }, ["-t", "rust", "needle"]],
  ["anchored regex", { pattern: "^needle" }, ["^needle"]],
];

for (const [name, ours, rg] of cases) {
  test(`parity with rg: ${name}`, { skip: !hasRg && "rg not installed" }, async (t) => {
    const tree = edgeCaseTree();
    t.after(tree.cleanup);
    const expected = rgHits(tree.root, rg);
    assert.ok(expected.length > 0, "the case must match something");
    assert.deepEqual(await ourHits(tree.root, { ...ours, index: false }, "off"), expected, "scan");
    // The same search through a ready live index of the tree: only its candidates are read.
    await native.indexWarm({ path: tree.root, minFiles: 0 });
    t.after(() => native.indexDrop({ path: tree.root }));
    assert.deepEqual(await ourHits(tree.root, ours, "used"), expected, "through the index");
  });
}

test("parity tree really contains the edge cases", async (t) => {
  const tree = edgeCaseTree();
  t.after(tree.cleanup);
  // index: false: a first search would start an index of this throwaway tree.
  const { hits, summary } = await collect(native.grep({ pattern: "needle", path: tree.root, index: false }));
  const paths = new Set(hits.map((h) => h.path));
  assert.ok(!hits.some((h) => h.path.startsWith(".git/")), ".git is never searched");
  assert.ok(paths.has("ignored/deep/needle.txt") && paths.has(".hidden/h.ts") && paths.has("bad\uFFFD\uFFFD.txt#b=fffe"));
  assert.equal(summary.binarySkipped, 1);
  // Ignored files come after every project file.
  const firstIgnored = hits.findIndex((h) => h.ignored);
  assert.ok(firstIgnored > 0 && hits.slice(firstIgnored).every((h) => h.ignored));
  assert.deepEqual(hits.filter((h) => h.ignored).map((h) => h.path), ["app.log", "ignored/deep/needle.txt", "sub/local/x.ts"]);
  assert.equal(path.basename(tree.root).startsWith("pi-utils-spec-"), true);
});
