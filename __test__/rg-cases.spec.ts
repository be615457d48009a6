// ripgrep's own test cases (its tests/misc.rs, feature.rs, regression.rs, multiline.rs, binary.rs), for the features
// we share: each case builds the files the rg test builds, runs our grep with the equivalent options and
// compares with the output the rg test expects (facts from ripgrep's tests; the code is ours). Every case
// runs three ways: `noIgnore: false` must print rg's output; the default mode (`noIgnore: true`) must print
// it as its project hits (what it lists as ignored is what rg skipped), and through a ready index the
// default mode must print what its scan printed. rg's tests run without a tty: no line numbers unless
// `-n`, no headings, a file named alone is printed without its name.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { BinaryStop, GrepHit, GrepOptions } from "../index.d.ts";
import { native, collect } from "./helpers/native.ts";
import { makeTree } from "./helpers/tree.ts";

const store = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-index-store-"));
process.env.PI_UTILS_INDEX_DIR = store;
after(() => fs.rmSync(store, { recursive: true, force: true }));

// ripgrep's tests/hay.rs.
const SHERLOCK = `For the Doctor Watsons of this world, as opposed to the Sherlock
Holmeses, success in the province of detective work must always
be, to a very large extent, the result of luck. Sherlock Holmes
can extract a clew from a wisp of straw or a flake of cigar ash;
but Doctor Watson has to have it taken out for him and dusted,
and exhibited clearly, with a label attached.
`;
const S1 = "For the Doctor Watsons of this world, as opposed to the Sherlock";
const S3 = "be, to a very large extent, the result of luck. Sherlock Holmes";

// rg's tests/binary.rs haystack (2,133 lines of "A Study in Scarlet" with a NUL byte on line 1870, at
// offset 77041, past the first 64 KiB block): HAY keeps every landmark its cases depend on (line 1, "A medical
// student" on rg's eight lines, "a medical student" on 1867, "Heaven" on 1871) and pads the rest so that the
// NUL lands at the same offset, so rg's expected text is taken as it is.
const HAY1 = "The Project Gutenberg EBook of A Study In Scarlet, by Arthur Conan Doyle";
const MED = '"A medical student, I suppose?" said I.';
const MED_AT = [176, 409, 642, 875, 1108, 1341, 1574, 1807];
const HEAVEN = '"No. Heaven knows what the objects of his studies are. But here we';
const HAY = (() => {
  const tail = ['"And yet you say he is not a medical student?"', "filler", "filler"];
  const fixed = HAY1.length + 1 + tail.reduce((n, l) => n + l.length + 1, 0) + "abcdef".length + MED_AT.length * (MED.length + 1);
  const fillers = 1865 - MED_AT.length;
  const room = 77041 - fixed;
  let k = 0;
  const middle = Array.from({ length: 1865 }, (_, i) =>
    MED_AT.includes(i + 2) ? MED : `filler ${i} `.padEnd(Math.floor(room / fillers) - 1 + (k++ < room % fillers ? 1 : 0), "x"));
  const hay = [HAY1, ...middle, ...tail, "abcdef\u0000", HEAVEN, "the end"].join("\n") + "\n";
  assert.equal(hay.indexOf("\0"), 77041);
  return hay;
})();
const CAT_NUL = "cat here\n" + "padding line\n".repeat(150_000) + "\u0000";

interface Case {
  /** The rg test: file and name. */
  src: string;
  files: Record<string, string | Buffer>;
  /** Empty directories to make (`.git` markers). */
  dirs?: string[];
  /** [target, link] symlinks, relative to the tree. */
  links?: Array<[string, string]>;
  /** rg's working directory, relative to the tree. */
  cwd?: string;
  /** The path rg was given. */
  path?: string;
  pattern: string;
  opts?: Partial<GrepOptions>;
  /** rg's `-n` / `--column`. */
  n?: boolean;
  column?: boolean;
  /** rg `--no-ignore` (`-u`): the default mode's whole listing is rg's. */
  rgNoIgnore?: boolean;
  /** rg `--files`: a listing of files (our glob). */
  list?: boolean;
  expected: string;
  /** A known difference, why: the case runs and reports, but does not fail the suite. */
  todo?: string;
}

const sherlock = { sherlock: SHERLOCK };
const both = (p: string) => `${p}:${S1}\n${p}:${S3}\n`;

const cases: Case[] = [
  // tests/misc.rs
  { src: "misc.rs single_file", files: sherlock, path: "sherlock", pattern: "Sherlock", expected: `${S1}\n${S3}\n` },
  { src: "misc.rs dir", files: sherlock, pattern: "Sherlock", expected: both("sherlock") },
  { src: "misc.rs line_numbers", files: sherlock, path: "sherlock", pattern: "Sherlock", n: true, expected: `1:${S1}\n3:${S3}\n` },
  { src: "misc.rs case_insensitive", files: sherlock, path: "sherlock", pattern: "sherlock", opts: { ignoreCase: true }, expected: `${S1}\n${S3}\n` },
  { src: "misc.rs literal", files: { ...sherlock, file: "blib\n()\nblab\n" }, path: "file", pattern: "()", opts: { literal: true }, expected: "()\n" },
  { src: "misc.rs file_types", files: { ...sherlock, "file.py": "Sherlock", "file.rs": "Sherlock" }, pattern: "Sherlock", opts: { type: "rust" }, expected: "file.rs:Sherlock\n" },
  { src: "misc.rs file_types_all", files: { ...sherlock, "file.py": "Sherlock" }, pattern: "Sherlock", opts: { type: "all" }, expected: "file.py:Sherlock\n" },
  { src: "misc.rs glob", files: { ...sherlock, "file.py": "Sherlock", "file.rs": "Sherlock" }, pattern: "Sherlock", opts: { glob: ["*.rs"] }, expected: "file.rs:Sherlock\n" },
  { src: "misc.rs glob_negate", files: { "file.py": "Sherlock", "file.rs": "Sherlock" }, pattern: "Sherlock", opts: { glob: ["!*.rs"] }, expected: "file.py:Sherlock\n" },
  { src: "misc.rs count", files: sherlock, pattern: "Sherlock", opts: { mode: "count" }, expected: "sherlock:2\n" },
  { src: "misc.rs files_with_matches", files: sherlock, pattern: "Sherlock", opts: { mode: "files" }, expected: "sherlock\n" },
  {
    src: "misc.rs after_context", files: sherlock, path: "sherlock", pattern: "Sherlock", opts: { after: 1 },
    expected: SHERLOCK.split("\n").slice(0, 4).join("\n") + "\n",
  },
  {
    src: "misc.rs after_context_line_numbers", files: sherlock, path: "sherlock", pattern: "Sherlock", opts: { after: 1 }, n: true,
    expected: `1:${S1}\n2-Holmeses, success in the province of detective work must always\n3:${S3}\n4-can extract a clew from a wisp of straw or a flake of cigar ash;\n`,
  },
  {
    src: "misc.rs before_context", files: sherlock, path: "sherlock", pattern: "Sherlock", opts: { before: 1 },
    expected: SHERLOCK.split("\n").slice(0, 3).join("\n") + "\n",
  },
  {
    src: "misc.rs before_context_line_numbers", files: sherlock, path: "sherlock", pattern: "Sherlock", opts: { before: 1 }, n: true,
    expected: `1:${S1}\n2-Holmeses, success in the province of detective work must always\n3:${S3}\n`,
  },
  {
    src: "misc.rs context", files: sherlock, path: "sherlock", pattern: "world|attached", opts: { context: 1 },
    expected: `${S1}\nHolmeses, success in the province of detective work must always\n--\nbut Doctor Watson has to have it taken out for him and dusted,\nand exhibited clearly, with a label attached.\n`,
  },
  {
    src: "misc.rs context_line_numbers", files: sherlock, path: "sherlock", pattern: "world|attached", opts: { context: 1 }, n: true,
    expected: `1:${S1}\n2-Holmeses, success in the province of detective work must always\n--\n5-but Doctor Watson has to have it taken out for him and dusted,\n6:and exhibited clearly, with a label attached.\n`,
  },
  { src: "misc.rs ignore_hidden", files: { ".sherlock": SHERLOCK }, pattern: "Sherlock", expected: "" },
  { src: "misc.rs no_ignore_hidden", files: { ".sherlock": SHERLOCK }, pattern: "Sherlock", opts: { hidden: true }, expected: both(".sherlock") },
  { src: "misc.rs ignore_git", files: { ...sherlock, ".gitignore": "sherlock\n" }, dirs: [".git"], pattern: "Sherlock", expected: "" },
  { src: "misc.rs ignore_generic", files: { ...sherlock, ".ignore": "sherlock\n" }, pattern: "Sherlock", expected: "" },
  { src: "misc.rs ignore_ripgrep", files: { ...sherlock, ".rgignore": "sherlock\n" }, pattern: "Sherlock", expected: "" },
  { src: "misc.rs no_ignore", files: { ...sherlock, ".gitignore": "sherlock\n" }, pattern: "Sherlock", rgNoIgnore: true, expected: both("sherlock") },
  { src: "misc.rs ignore_git_parent", files: { ".gitignore": "sherlock\n", "foo/sherlock": SHERLOCK }, dirs: [".git"], cwd: "foo", pattern: "Sherlock", expected: "" },
  { src: "misc.rs ignore_git_parent_stop", files: { ".gitignore": "sherlock\n", "foo/bar/sherlock": SHERLOCK }, dirs: ["foo/.git"], cwd: "foo/bar", pattern: "Sherlock", expected: both("sherlock") },
  { src: "misc.rs ignore_git_parent_stop_file", files: { ".gitignore": "sherlock\n", "foo/.git": "", "foo/bar/sherlock": SHERLOCK }, cwd: "foo/bar", pattern: "Sherlock", expected: both("sherlock") },
  { src: "misc.rs ignore_ripgrep_parent_no_stop", files: { ".rgignore": "sherlock\n", "foo/bar/sherlock": SHERLOCK }, dirs: ["foo/.git"], cwd: "foo/bar", pattern: "Sherlock", expected: "" },
  { src: "misc.rs symlink_nofollow", files: { "foo/baz/sherlock": SHERLOCK }, dirs: ["foo/bar"], links: [["foo/baz", "foo/bar/baz"]], cwd: "foo/bar", pattern: "Sherlock", expected: "" },
  { src: "misc.rs unrestricted1", files: { ...sherlock, ".gitignore": "sherlock\n" }, pattern: "Sherlock", rgNoIgnore: true, expected: both("sherlock") },
  { src: "misc.rs unrestricted2", files: { ".sherlock": SHERLOCK }, pattern: "Sherlock", opts: { hidden: true }, rgNoIgnore: true, expected: both(".sherlock") },
  { src: "misc.rs binary_quit", files: { file: "foo\x00bar\nfoo\x00baz\n" }, pattern: "foo", opts: { glob: ["file"] }, expected: "" },
  // tests/feature.rs
  {
    src: "feature.rs f1_utf16_auto", pattern: "Шерлок Холмс", expected: "foo:Шерлок Холмс\n",
    files: { foo: Buffer.from("fffe280435044004" + "3b043e043a04" + "20002504" + "3e043b043c044104", "hex") },
  },
  { src: "feature.rs f159_max_count", files: { foo: "test\ntest" }, pattern: "test", opts: { maxCount: 1 }, expected: "foo:test\n" },
  { src: "feature.rs f263_sort_files", files: { foo: "test", abc: "test", zoo: "test", bar: "test" }, pattern: "test", expected: "abc:test\nbar:test\nfoo:test\nzoo:test\n" },
  { src: "feature.rs f2288_context_partial_override", files: { test: "1\n2\n3\n4\n5\n6\n7\n8\n9\n" }, path: "test", pattern: "5", opts: { before: 1, after: 2 }, expected: "4\n5\n6\n7\n" },
  { src: "feature.rs context_sep_default", files: { test: "foo\nctx\nbar\nctx\nfoo\nctx" }, path: "test", pattern: "foo", opts: { after: 1 }, expected: "foo\nctx\n--\nfoo\nctx\n" },
  { src: "feature.rs f1420_no_ignore_exclude", files: { ".git/info/exclude": "foo", bar: "", foo: "" }, pattern: "*", list: true, expected: "bar\n" },
  // tests/regression.rs
  { src: "regression.rs r25", files: { ".gitignore": "/llvm/", "src/llvm/foo": "test" }, dirs: [".git"], pattern: "test", expected: "src/llvm/foo:test\n" },
  { src: "regression.rs r25 (from src)", files: { ".gitignore": "/llvm/", "src/llvm/foo": "test" }, dirs: [".git"], cwd: "src", pattern: "test", expected: "llvm/foo:test\n" },
  { src: "regression.rs r30", files: { ".gitignore": "vendor/**\n!vendor/manifest", "vendor/manifest": "test" }, pattern: "test", expected: "vendor/manifest:test\n" },
  { src: "regression.rs r49", files: { ".gitignore": "foo/bar", "test/foo/bar/baz": "test" }, pattern: "xyz", expected: "" },
  { src: "regression.rs r50", files: { ".gitignore": "XXX/YYY/", "abc/def/XXX/YYY/bar": "test", "ghi/XXX/YYY/bar": "test" }, pattern: "xyz", expected: "" },
  { src: "regression.rs r65", files: { ".gitignore": "a/", "a/foo": "xyz", "a/bar": "xyz" }, dirs: [".git"], pattern: "xyz", expected: "" },
  { src: "regression.rs r67", files: { ".gitignore": "/*\n!/dir", "foo/bar": "test", "dir/bar": "test" }, dirs: [".git"], pattern: "test", expected: "dir/bar:test\n" },
  { src: "regression.rs r87", files: { ".gitignore": "foo\n**no-vcs**", foo: "test" }, dirs: [".git"], pattern: "test", expected: "" },
  { src: "regression.rs r90", files: { ".gitignore": "!.foo", ".foo": "test" }, dirs: [".git"], pattern: "test", expected: ".foo:test\n" },
  { src: "regression.rs r93", files: { foo: "192.168.1.1" }, pattern: "(\\d{1,3}\\.){3}\\d{1,3}", expected: "foo:192.168.1.1\n" },
  { src: "regression.rs r127", files: { ".gitignore": "foo/sherlock\n", "foo/sherlock": SHERLOCK, "foo/watson": SHERLOCK }, dirs: [".git"], pattern: "Sherlock", expected: both("foo/watson") },
  { src: "regression.rs r128", files: { foo: Buffer.from("01234567\x0b\n\x0b\n\x0b\n\x0b\nx", "latin1") }, pattern: "x", n: true, expected: "foo:5:x\n" },
  { src: "regression.rs r131", files: { ".gitignore": "TopÑapa", "TopÑapa": "test" }, dirs: [".git"], pattern: "test", expected: "" },
  { src: "regression.rs r184", files: { ".gitignore": ".*", "foo/bar/baz": "test" }, pattern: "test", expected: "foo/bar/baz:test\n" },
  { src: "regression.rs r184 (from foo/bar)", files: { ".gitignore": ".*", "foo/bar/baz": "test" }, cwd: "foo/bar", pattern: "test", expected: "baz:test\n" },
  { src: "regression.rs r206", files: { "foo/bar.txt": "test" }, pattern: "test", opts: { glob: ["*.txt"] }, expected: "foo/bar.txt:test\n" },
  { src: "regression.rs r251", files: { foo: "привет\nПривет\nПрИвЕт" }, pattern: "привет", opts: { ignoreCase: true }, expected: "foo:привет\nfoo:Привет\nfoo:ПрИвЕт\n" },
  { src: "regression.rs r256", files: { "bar/baz": "test" }, links: [["bar", "foo"]], path: "foo", pattern: "test", expected: "foo/baz:test\n" },
  { src: "regression.rs r405", files: { "foo/bar/file1.txt": "test", "bar/foo/file2.txt": "test" }, pattern: "test", opts: { glob: ["!/foo/**"] }, expected: "bar/foo/file2.txt:test\n" },
  { src: "regression.rs r807", files: { ".gitignore": ".a/b", ".a/b/file": "test", ".a/c/file": "test" }, dirs: [".git"], pattern: "test", opts: { hidden: true }, expected: ".a/c/file:test\n" },
  { src: "regression.rs r829_2731", files: { "some_dir/build/foo": "string", ".ignore": "build/\n!/some_dir/build/" }, pattern: "string", opts: { mode: "files" }, expected: "some_dir/build/foo\n" },
  { src: "regression.rs r829_2731 (some_dir)", files: { "some_dir/build/foo": "string", ".ignore": "build/\n!/some_dir/build/" }, path: "some_dir", pattern: "string", opts: { mode: "files" }, expected: "some_dir/build/foo\n" },
  { src: "regression.rs r829_2731 (some_dir/build)", files: { "some_dir/build/foo": "string", ".ignore": "build/\n!/some_dir/build/" }, path: "some_dir/build", pattern: "string", opts: { mode: "files" }, expected: "some_dir/build/foo\n" },
  { src: "regression.rs r1064", files: { input: "abc" }, pattern: "a(.*c)", expected: "input:abc\n" },
  { src: "regression.rs r1098", files: { ".gitignore": "a**b", afoob: "test" }, dirs: [".git"], pattern: "test", expected: "" },
  { src: "regression.rs r1173", files: { ".gitignore": "**", foo: "test" }, dirs: [".git"], pattern: "test", expected: "" },
  { src: "regression.rs r1174", files: { ".gitignore": "**/**/*", "a/foo": "test" }, dirs: [".git"], pattern: "test", expected: "" },
  { src: "regression.rs r1380", files: { foo: "a\nb\nc\nd\ne\nd\ne\nd\ne\nd\ne\n" }, path: "foo", pattern: "d", opts: { after: 2, maxCount: 1 }, expected: "d\ne\nd\n" },
  { src: "regression.rs r1638", files: { foo: Buffer.from("\xef\xbb\xbfx", "latin1") }, pattern: "x", n: true, column: true, expected: "foo:1:1:x\n" },
  {
    // The worktree's `.git` names its folder absolutely (as `git worktree add` writes it; rg's test writes it
    // relative to rg's working directory, the tree's root, where the ignore crate resolves it).
    src: "regression.rs r1446_respect_excludes_in_worktree",
    files: { "repo/.git/info/exclude": "ignored", "repo/.git/worktrees/repotree/commondir": "../..", "repotree/.git": "gitdir: ${ROOT}/repo/.git/worktrees/repotree", "repotree/ignored": "", "repotree/not-ignored": "" },
    path: "repotree", pattern: "*", list: true, expected: "repotree/not-ignored\n",
  },
  { src: "regression.rs r2236", files: { ".ignore": "foo\\/", "foo/bar": "test\n" }, pattern: "test", expected: "" },
  { src: "regression.rs r2770_gitignore_error", files: { ".git": "", ".gitignore": "**/bar/*", "foo/bar/baz": "quux" }, pattern: "quux", opts: { mode: "files" }, expected: "" },
  { src: "regression.rs r2770_gitignore_error (from foo)", files: { ".git": "", ".gitignore": "**/bar/*", "foo/bar/baz": "quux" }, cwd: "foo", pattern: "quux", opts: { mode: "files" }, expected: "" },
  // tests/binary.rs. Its haystack is a Gutenberg text with a NUL byte past the first 64 KiB; HAY keeps the
  // landmarks the cases depend on (line 1, "a medical student" on 1867, the NUL on 1870, "Heaven" on 1871).
  { src: "binary.rs after_match1_implicit_count", files: { hay: HAY }, pattern: "Project Gutenberg EBook", opts: { glob: ["hay"], mode: "count" }, expected: "" },
  { src: "binary.rs before_match1_implicit", files: { hay: HAY }, pattern: "Heaven", opts: { glob: ["hay"] }, n: true, expected: "" },
  { src: "binary.rs before_match2_implicit", files: { hay: HAY }, pattern: "a medical student", opts: { glob: ["hay"] }, n: true, expected: "" },
  {
    src: "binary.rs matching_files_inconsistent_with_count (-c)", files: { "file1.txt": CAT_NUL, "file2.txt": "cat here" }, pattern: "cat", opts: { mode: "count" },
    expected: "file2.txt:1\n",
  },
  {
    src: "binary.rs after_match1_implicit", files: { hay: HAY }, pattern: "Project Gutenberg EBook", opts: { glob: ["hay"] }, n: true,
    expected: `hay:1:${HAY1}\nhay: WARNING: stopped searching binary file after match (found "\\0" byte around offset 77041)\n`,
  },
  { src: "binary.rs after_match1_implicit_path", files: { hay: HAY }, pattern: "Project Gutenberg EBook", opts: { glob: ["hay"], mode: "files" }, expected: "hay\n" },
  {
    src: "binary.rs after_match2_implicit", files: { hay: HAY }, pattern: "Project Gutenberg EBook|a medical student", opts: { glob: ["hay"] }, n: true,
    expected: `hay:1:${HAY1}\nhay: WARNING: stopped searching binary file after match (found "\\0" byte around offset 77041)\n`,
  },
  {
    src: "binary.rs matching_files_inconsistent_with_count (-l)", files: { "file1.txt": CAT_NUL, "file2.txt": "cat here" }, pattern: "cat", opts: { mode: "files" },
    expected: "file1.txt\nfile2.txt\n",
  },
  // A file named alone: rg reads it through a memory map (its default for a few named files; the cases with
  // --no-mmap read it in 64 KiB blocks and are not ported) and converts binary data, checking the first 64 KiB
  // and each match for a NUL: matches before that are shown, the first one after ends the search as "binary
  // file matches".
  { src: "binary.rs mmap_match_explicit", files: { hay: HAY }, path: "hay", pattern: "Project Gutenberg EBook", n: true, expected: `1:${HAY1}\n` },
  { src: "binary.rs mmap_match_near_nul", files: { hay: HAY }, path: "hay", pattern: "abcdef", n: true, expected: `binary file matches (found "\\0" byte around offset 77041)\n` },
  { src: "binary.rs mmap_match_count", files: { hay: HAY }, path: "hay", pattern: "Project Gutenberg EBook|Heaven", opts: { mode: "count" }, expected: "2\n" },
  { src: "binary.rs after_match1_explicit_count", files: { hay: HAY }, path: "hay", pattern: "Project Gutenberg EBook", opts: { mode: "count" }, expected: "1\n" },
  { src: "binary.rs mmap_match_multiple", files: { hay: HAY }, path: "hay", pattern: "Project Gutenberg EBook|Heaven", n: true, expected: `1:${HAY1}\n1871:${HEAVEN}\n` },
  {
    src: "binary.rs mmap_after_nul_match", files: { hay: HAY }, path: "hay", pattern: "medical student", n: true,
    expected: MED_AT.map((l) => `${l}:${MED}\n`).join("") + '1867:"And yet you say he is not a medical student?"\n',
  },
  {
    src: "misc.rs binary_convert, binary_convert_mmap", files: { file: "foo\x00bar\nfoo\x00baz\n" }, path: "file", pattern: "foo",
    expected: `binary file matches (found "\\0" byte around offset 3)\n`,
  },
  // tests/multiline.rs
  { src: "multiline.rs overlap1", files: { test: "xxx\nabc\ndefxxxabc\ndefxxx\nxxx" }, path: "test", pattern: "abc\ndef", opts: { multiline: true }, n: true, expected: "2:abc\n3:defxxxabc\n4:defxxx\n" },
  { src: "multiline.rs overlap2", files: { test: "xxx\nabc\ndefabc\ndefxxx\nxxx" }, path: "test", pattern: "abc\ndef", opts: { multiline: true }, n: true, expected: "2:abc\n3:defabc\n4:defxxx\n" },
  { src: "multiline.rs dot_no_newline", files: sherlock, path: "sherlock", pattern: "of this world.+detective work", opts: { multiline: true }, n: true, expected: "" },
  {
    src: "multiline.rs context", files: sherlock, path: "sherlock", pattern: "detective work\\p{Any}+?result of luck", opts: { multiline: true, context: 1 }, n: true,
    expected: `1-${S1}\n2:Holmeses, success in the province of detective work must always\n3:${S3}\n4-can extract a clew from a wisp of straw or a flake of cigar ash;\n`,
  },
];

function build(c: Case) {
  const tree = makeTree(c.files);
  // `${ROOT}` in a file's text: the tree's own path.
  for (const [name, text] of Object.entries(c.files)) {
    if (typeof text === "string" && text.includes("${ROOT}")) fs.writeFileSync(path.join(tree.root, name), text.replaceAll("${ROOT}", tree.root));
  }
  for (const d of c.dirs ?? []) fs.mkdirSync(path.join(tree.root, d), { recursive: true });
  for (const [target, link] of c.links ?? []) fs.symlinkSync(path.join(tree.root, target), path.join(tree.root, link));
  return tree;
}

/**
 * Hits printed as rg prints them without a tty (`--` between context groups), each file's binary stop after
 * its hits as rg's warning: a walked file's "stopped searching", a file named alone's "binary file matches".
 */
function render(c: Case, cwd: string, hits: GrepHit[], stops: BinaryStop[], mode: string | undefined): string {
  // A file named alone is printed without its name; paths below a named directory start with its name.
  const named = c.path === undefined || fs.statSync(path.join(cwd, c.path)).isDirectory();
  const prefix = c.path !== undefined && named ? `${c.path}/` : "";
  const out: string[] = [];
  if (mode === "files") return hits.map((h) => `${prefix}${h.path}\n`).join("");
  if (mode === "count") return hits.map((h) => `${named ? `${prefix}${h.path}:` : ""}${h.count}\n`).join("");
  const stopOf = (p: string) => {
    const s = stops.find((b) => b.path === p);
    if (!s) return "";
    const what = named ? "WARNING: stopped searching binary file after match" : "binary file matches";
    return `${named ? `${prefix}${p}: ` : ""}${what} (found "\\0" byte around offset ${s.offset})\n`;
  };
  const withContext = (c.opts?.context ?? c.opts?.before ?? c.opts?.after ?? 0) > 0;
  let last: { path: string; line: number } | undefined;
  const line = (p: string, n: number, sep: string, text: string, col?: number) =>
    `${named ? `${p}${sep}` : ""}${c.n ? `${n}${sep}` : ""}${c.column && col !== undefined ? `${col}${sep}` : ""}${text}\n`;
  for (const h of hits) {
    if (last && last.path !== h.path) out.push(stopOf(last.path));
    const first = h.contextBefore[0]?.line ?? h.line;
    if (withContext && last && (last.path !== h.path || first > last.line + 1)) out.push("--\n");
    for (const b of h.contextBefore) out.push(line(prefix + h.path, b.line, "-", b.text));
    out.push(line(prefix + h.path, h.line, ":", h.text, h.column));
    for (const a of h.contextAfter) out.push(line(prefix + h.path, a.line, "-", a.text));
    last = { path: h.path, line: h.contextAfter.at(-1)?.line ?? h.line };
  }
  if (last) out.push(stopOf(last.path));
  // A file named alone may have matched past its NUL only.
  for (const s of stops) if (!hits.some((h) => h.path === s.path)) out.push(stopOf(s.path));
  return out.join("");
}

async function run(c: Case, root: string, noIgnore: boolean, index: boolean): Promise<{ all: string; project: string; used: string }> {
  const cwd = path.join(root, c.cwd ?? "");
  if (c.list) {
    const r = await native.glob({ pattern: c.pattern, cwd, path: c.path, hidden: false, noIgnore, sort: "path", ...(c.opts as object), index });
    const prefix = c.path !== undefined ? `${c.path}/` : "";
    const names = (entries: typeof r.entries) => entries.map((e) => `${prefix}${e.path}\n`).join("");
    return { all: names(r.entries), project: names(r.entries.filter((e) => !e.ignored)), used: r.index };
  }
  const opts = { pattern: c.pattern, cwd, path: c.path, hidden: false, ...c.opts, noIgnore, index } as GrepOptions;
  const { hits, summary } = await collect(native.grep(opts));
  const stops = summary.binaryStopped;
  return {
    all: render(c, cwd, hits, stops, c.opts?.mode),
    project: render(c, cwd, hits.filter((h) => !h.ignored), stops.filter((s) => !s.ignored), c.opts?.mode),
    used: summary.index,
  };
}

for (const c of cases) {
  test(`rg's ${c.src}`, { todo: c.todo }, async (t) => {
    const tree = build(c);
    t.after(tree.cleanup);
    if (c.rgNoIgnore) {
      assert.equal((await run(c, tree.root, true, false)).all, c.expected, "default mode, everything listed (rg --no-ignore)");
    } else {
      assert.equal((await run(c, tree.root, false, false)).all, c.expected, "noIgnore: false");
      assert.equal((await run(c, tree.root, true, false)).project, c.expected, "default mode, project files");
    }
    // Through a ready index of the directory rg searched from: the same text as the scan.
    const scan = await run(c, tree.root, true, false);
    const cwd = path.join(tree.root, c.cwd ?? "");
    await native.indexWarm({ path: cwd, minFiles: 0 });
    t.after(() => native.indexDrop({ path: cwd }));
    const via = await run(c, tree.root, true, true);
    assert.equal(via.all, scan.all, `through the index (${via.used})`);
  });
}

test("the ported cases are counted in the README", () => {
  const readme = fs.readFileSync(path.join(import.meta.dirname, "..", "README.md"), "utf8");
  const known = cases.filter((c) => c.todo).length;
  assert.match(readme, new RegExp(`${cases.length} of ripgrep's own test cases .*: ${cases.length - known} pass`, "s"));
});
