// Ignore rules kept outside the searched tree: git's global excludes (core.excludesFile, else
// $XDG_CONFIG_HOME/git/ignore) and a worktree's exclude (in its main repository's common directory, found
// through `gitdir:` and `commondir`). A change to them is seen by the next search, and the index re-classifies
// (in the process that holds it, and in the next process that would take its saved table over), so its
// answer stays the scan's.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { makeTree } from "./helpers/tree.ts";

const child = path.join(import.meta.dirname, "helpers", "rules-elsewhere-child.mjs");

function run(root: string, env: NodeJS.ProcessEnv, steps: object[]): any[] {
  const out = execFileSync(process.execPath, [child, root, JSON.stringify(steps)], { env, encoding: "utf8" });
  return out.trim().split("\n").map((l) => JSON.parse(l));
}

function setup(t: { after: (f: () => void) => void }, how: "default" | "core.excludesFile") {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-home-"));
  const store = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-index-store-"));
  const tree = makeTree({ "a.txt": "needle\n", "b.txt": "needle\n", "c.md": "needle\n" });
  fs.mkdirSync(path.join(tree.root, ".git"));
  t.after(() => {
    tree.cleanup();
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(store, { recursive: true, force: true });
  });
  const config = path.join(home, "config");
  fs.mkdirSync(path.join(config, "git"), { recursive: true });
  let excludes = path.join(config, "git", "ignore");
  if (how === "core.excludesFile") {
    excludes = path.join(home, "my-excludes");
    fs.writeFileSync(path.join(home, ".gitconfig"), `[core]\n\texcludesFile = ${excludes}\n`);
  }
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: config, GIT_CONFIG_GLOBAL: "", PI_UTILS_INDEX_DIR: store };
  return { root: tree.root, env, excludes };
}

const IGNORING_A = { default: ["b.txt", "c.md", "a.txt (ignored)"], "noIgnore:false": ["b.txt", "c.md"] };
const IGNORING_B = { default: ["a.txt", "c.md", "b.txt (ignored)"], "noIgnore:false": ["a.txt", "c.md"] };

function assertAnswers(result: Record<string, { scan: string[]; via: string[]; index: string }>, want: Record<string, string[]>) {
  for (const [mode, files] of Object.entries(want)) {
    assert.deepEqual(result[mode].scan, files, `${mode}: the scan reads the global excludes as they are now`);
    assert.deepEqual(result[mode].via, result[mode].scan, `${mode}: through the index (${result[mode].index}) as the scan`);
  }
}

for (const how of ["default", "core.excludesFile"] as const) {
  test(`a change of the global excludes file (${how}) between two indexed searches: the index answers as the scan`, async (t) => {
    const { root, env, excludes } = setup(t, how);
    fs.writeFileSync(excludes, "a.txt\n");
    const [, before, after] = run(root, env, [{ warm: true }, { search: true }, { write: [excludes, "b.txt\n"] }, { search: true }]);
    assertAnswers(before, IGNORING_A);
    assertAnswers(after, IGNORING_B);
  });

  test(`a change of the global excludes file (${how}) while no process watched: the next process re-classifies`, async (t) => {
    const { root, env, excludes } = setup(t, how);
    fs.writeFileSync(excludes, "a.txt\n");
    // Older than the store's racy window, so the next process would trust the saved stamps.
    await new Promise((r) => setTimeout(r, 2500));
    const [, first] = run(root, env, [{ warm: true }, { search: true }]);
    assertAnswers(first, IGNORING_A);
    fs.writeFileSync(excludes, "b.txt\n");
    // The saved table's classification is not taken over (its files are: none changed).
    const [warm, next] = run(root, env, [{ warm: true }, { search: true }]);
    assert.equal(warm.reread, 0);
    assertAnswers(next, IGNORING_B);
  });
}

test("a change of a worktree's exclude, in its main repository outside the tree, between two indexed searches", async (t) => {
  const top = makeTree({
    "repo/.git/info/exclude": "a.txt\n",
    "repo/.git/worktrees/wt/commondir": "../..",
    "wt/a.txt": "needle\n",
    "wt/b.txt": "needle\n",
    "wt/c.md": "needle\n",
  });
  t.after(top.cleanup);
  const root = path.join(top.root, "wt");
  fs.writeFileSync(path.join(root, ".git"), `gitdir: ${path.join(top.root, "repo/.git/worktrees/wt")}\n`);
  const exclude = path.join(top.root, "repo/.git/info/exclude");
  const [, before, after] = run(root, process.env, [{ warm: true }, { search: true }, { write: [exclude, "b.txt\n"] }, { search: true }]);
  assertAnswers(before, IGNORING_A);
  assertAnswers(after, IGNORING_B);
});
