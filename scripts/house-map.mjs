#!/usr/bin/env node
// Prints docs/house.md: every source file of src/, extensions/ and bin/ with the first sentence of its opening
// comment, the one job the file says it does. The map is made from the files, so it cannot drift from them;
// __test__/house.spec.ts fails when docs/house.md is not this script's output, when a source file has no
// opening comment, or when a source file outgrows MAX_LINES (a file that long is doing more than one job).
// Run `node scripts/house-map.mjs > docs/house.md` after adding, moving or re-describing a file.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, basename, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** Lines past which a non-test source file is split (issue 48). */
export const MAX_LINES = 650;

/** The source files the map covers, folder by folder: test files and type declarations are not rooms' jobs. */
export function sourceFiles() {
  const listed = execFileSync("git", ["ls-files", "src", "extensions", "bin"], { cwd: ROOT, encoding: "utf8" });
  return listed
    .split("\n")
    .filter((f) => /\.(rs|ts|mjs)$/.test(f) && !f.endsWith(".d.mts") && !/(tests?\.rs$|\/tests\/)/.test(f))
    .sort((a, b) => dirname(a).localeCompare(dirname(b)) || basename(a).localeCompare(basename(b)));
}

/** The opening comment of `text` (after a shebang), as one line; "" when the file does not open with one. */
export function openingComment(text) {
  const words = [];
  for (const line of text.split("\n")) {
    if (words.length === 0 && line.startsWith("#!")) continue;
    const m = /^\s*\/\/[!/]?\s?(.*)$/.exec(line);
    if (!m) break;
    words.push(m[1].trim());
  }
  return words.join(" ").replace(/\s+/g, " ").trim();
}

/** The comment's first sentence (a full stop followed by a space or the end), at most 240 characters. */
export function firstSentence(comment) {
  const m = /^(.+?\.)(\s|$)/.exec(comment);
  const s = m ? m[1] : comment;
  return s.length > 240 ? `${s.slice(0, 239)}…` : s;
}

/**
 * Imports between the Rust files of one folder that form a circle, each as the sorted list of its files. An
 * edge is a `super::name` or `crate::room::name` path outside the file's test module and test-only imports; `mod.rs` (a room's
 * shared types and re-exports) is left out, since every file of its room may name it.
 */
export function importCircles() {
  const files = sourceFiles().filter((f) => f.endsWith(".rs") && !["mod.rs", "lib.rs"].includes(basename(f)));
  const known = new Set(files);
  /** @type {Map<string, string[]>} */
  const edges = new Map();
  for (const file of files) {
    let text = readFileSync(join(ROOT, file), "utf8");
    // The test module (to the end of the file, by this crate's habit) and test-only imports are not the
    // file's job.
    const tests = text.search(/#\[cfg\(test\)\]\s*(pub(\([\w:]+\))?\s+)?mod\s+\w+\s*\{/);
    if (tests >= 0) text = text.slice(0, tests);
    text = text.replace(/#\[cfg\(test\)\]\s*(pub(\([\w:]+\))?\s+)?use\s[^;]*;/g, "");
    text = text.replace(/\/\/.*$/gm, "");
    const folder = dirname(file);
    const to = new Set();
    for (const m of text.matchAll(/\bsuper::(\w+)/g)) to.add(`${folder}/${m[1]}.rs`);
    for (const m of text.matchAll(/\bsuper::\{([^}]*)\}/g)) for (const n of m[1].split(",")) to.add(`${folder}/${n.trim().split("::")[0]}.rs`);
    for (const m of text.matchAll(/\bcrate::([\w:]+)/g)) {
      const parts = m[1].split("::");
      for (let i = parts.length - 1; i > 0; i--) {
        const target = `src/${parts.slice(0, i).join("/")}/${parts[i]}.rs`;
        if (dirname(target) === folder) {
          to.add(target);
          break;
        }
      }
    }
    edges.set(file, [...to].filter((t) => t !== file && known.has(t)));
  }
  // Tarjan's strongly connected components: a component of two or more files is a circle.
  let next = 0;
  const stack = [], onStack = new Set(), index = new Map(), low = new Map(), circles = [];
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const circle = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        circle.push(w);
      } while (w !== v);
      if (circle.length > 1) circles.push(circle.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return circles.sort((a, b) => a[0].localeCompare(b[0]));
}

export function houseMap() {
  const out = [
    "# The house, file by file",
    "",
    "Each source file and the one job its opening comment gives it (test files left out). Made by",
    "`node scripts/house-map.mjs > docs/house.md`; `__test__/house.spec.ts` fails when this page is out of date.",
    "The rooms and what each may import are in the design notes; this page is where to look for a piece of code.",
  ];
  let folder = "";
  for (const file of sourceFiles()) {
    const here = dirname(file);
    if (here !== folder) {
      out.push("", `## \`${here}/\``, "");
      folder = here;
    }
    const comment = openingComment(readFileSync(join(ROOT, file), "utf8"));
    out.push(`- \`${basename(file)}\`: ${firstSentence(comment) || "(no opening comment)"}`);
  }
  return `${out.join("\n")}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.stdout.write(houseMap());
