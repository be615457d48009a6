// locate and trace through the tool modules, the CLI and an in-process Pi session (faux provider).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { runLocateTool } from "../extensions/lib/search/locate.mjs";
import { runTraceTool } from "../extensions/lib/search/trace.mjs";
import { rankedFirst } from "../extensions/lib/search/discover-kit.mjs";
import { offeredTools, startFakeOpenAIServer, toolResults } from "./helpers/fake-openai-server.ts";
import { fauxAssistantMessage, fauxToolCall, runFauxSession } from "./helpers/faux-session.ts";
import { hostAvailable, PI_HOSTS, runPi, toolEnds } from "./helpers/pi-cli.ts";
import { native, packageRoot } from "./helpers/native.ts";
import { runCommand } from "./helpers/run-command.ts";
import { makeTree } from "./helpers/tree.ts";

const FILES = {
  "src/auth/mod.rs": "pub enum AuthStatus { Ok }\n\npub fn auth_status() -> AuthStatus {\n    AuthStatus::Ok\n}\n",
  "src/ui/status_bar.rs": "pub fn render_status_bar() {\n    let s = crate::auth::auth_status();\n}\n",
  "docs/auth-status.md": "# Auth status\n",
};

describe("locate and trace", () => {
  let tree: ReturnType<typeof makeTree>;
  before(() => {
    tree = makeTree(FILES);
  });
  after(() => tree.cleanup());

  test("locate ranks the defining file first for every identifier form; pathsOnly gives paths", async () => {
    for (const query of ["AuthStatus", "auth_status", "auth status"]) {
      const { text, details } = await runLocateTool(native, { query }, { cwd: tree.root });
      assert.match(text, new RegExp(`^query: ${query}\\ntop files: \\d+\\n1\\. src/auth/mod\\.rs \\(code, rust\\)\\n[^]*\\n\\n1\\. mod\\.rs\\n`), text);
      assert.ok(details.files >= 1);
    }
    const paths = await runLocateTool(native, { query: "status bar", pathsOnly: true }, { cwd: tree.root });
    assert.equal(paths.text.split("\n")[0], "src/ui/status_bar.rs");
  });

  test("trace finds call sites under the calling function, and DSL errors show a valid query", async () => {
    const { text, details } = await runTraceTool(native, { query: "subject:AuthStatus relation:called_from" }, { cwd: tree.root });
    assert.equal(details.bestFile, "src/ui/status_bar.rs", text);
    assert.match(text, /- function render_status_bar @ 1-3\n {5}kind: callsite\n/);
    await assert.rejects(runTraceTool(native, { query: "subject:x" }, { cwd: tree.root }), /Missing relation: \(e\.g\. subject:auth_status relation:rendered/);
    await assert.rejects(runLocateTool(native, { query: "--" }, { cwd: tree.root }), /Query has no letters or digits/);
    await assert.rejects(runLocateTool(native, { query: "x", path: "nope" }, { cwd: tree.root }), /Path not found/);
  });

  test("collapsed, locate lists its ranked files and trace its ranked files and best region, not the first file's reasons", async () => {
    const located = await runLocateTool(native, { query: "auth status" }, { cwd: tree.root });
    const lines = located.text.split("\n");
    assert.deepEqual(rankedFirst(lines), lines.slice(0, lines.indexOf("")));
    assert.match(rankedFirst(lines).join("\n"), /^query: auth status\ntop files: 3\n1\. src\/auth\/mod\.rs \(code, rust\)\n2\. .*\n3\. .*$/);
    const traced = await runTraceTool(native, { query: "subject:AuthStatus relation:called_from" }, { cwd: tree.root });
    const shown = rankedFirst(traced.text.split("\n")).join("\n");
    assert.match(shown, /\nbest answer likely in src\/ui\/status_bar\.rs\n1\. src\/ui\/status_bar\.rs \(code, rust\)\n/);
    assert.match(shown, /\n\n1\. status_bar\.rs\n {3}- function render_status_bar @ 1-3\n {5}kind: callsite\n {5}why: [^\n]*\n +1: pub fn render_status_bar\(\) \{\n +2: {5}let s = crate::auth::auth_status\(\);\n +3: \}$/, shown);
    assert.doesNotMatch(shown, /role:|structure:|occurrence/, "the reasons and structure are for the expanded view");
    assert.deepEqual(rankedFirst(["src/a.rs", "src/b.rs"]), ["src/a.rs", "src/b.rs"], "paths only: as it is");
  });

  test("an aborted call rejects with Pi's abort text", async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(runLocateTool(native, { query: "auth" }, { cwd: tree.root, signal: controller.signal }), /Operation aborted/);
  });

  test("the CLI prints the tool's text, JSON lines with --json, and `find` is locate", async () => {
    const cli = path.join(packageRoot, "bin", "pi-utils.mjs");
    const cliOpts = () => ({ cwd: tree.root, env: process.env, timeoutMs: 60_000 });
    const text = await runCommand(process.execPath, [cli, "find", "--paths-only", "auth", "status"], cliOpts());
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout.split("\n")[0], "src/auth/mod.rs");
    const json = await runCommand(process.execPath, [cli, "trace", "--json", "subject:auth_status", "relation:defined"], cliOpts());
    const lines = json.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines[0].type, "file");
    assert.equal(lines[0].path, "src/auth/mod.rs");
    assert.equal(lines[0].regions[0].kind, "definition");
    assert.equal(lines.at(-1).type, "summary");
    const bad = await runCommand(process.execPath, [cli, "trace", "subject:x"], cliOpts());
    assert.equal(bad.code, 2);
  });

  test("the CLI's locate takes a last word that is an existing directory as the path, as grep takes [path]", async () => {
    const cli = path.join(packageRoot, "bin", "pi-utils.mjs");
    const cliOpts = () => ({ cwd: tree.root, env: process.env, timeoutMs: 60_000 });
    const here = await runCommand(process.execPath, [cli, "locate", "auth", "status", "."], cliOpts());
    assert.equal(here.code, 0, here.stderr);
    assert.equal(here.stdout.split("\n")[0], "query: auth status", "the `.` is not a query word");
    const docs = await runCommand(process.execPath, [cli, "locate", "--paths-only", "auth", "status", "docs"], cliOpts());
    assert.deepEqual(docs.stdout.trim().split("\n"), ["auth-status.md"], "searched under docs/ only (paths relative to it, as the tool prints them)");
    // A word that is no directory stays a word; a lone word is always the query; --path wins.
    const word = await runCommand(process.execPath, [cli, "locate", "auth", "bar"], cliOpts());
    assert.equal(word.stdout.split("\n")[0], "query: auth bar");
    const lone = await runCommand(process.execPath, [cli, "locate", "--paths-only", "src"], cliOpts());
    assert.equal(lone.code, 0, lone.stderr);
    const flagged = await runCommand(process.execPath, [cli, "locate", "--path", "src", "auth", "docs"], cliOpts());
    assert.equal(flagged.stdout.split("\n")[0], "query: auth docs");
    const help = await runCommand(process.execPath, [cli, "--help"], cliOpts());
    assert.match(help.stdout, /locate \[options\] <query words\.\.\.> \[dir\]/);
  });

  test("a Pi session offers both tools with their guidelines and returns their text", async (t) => {
    const agentDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-agent-"));
    t.after(() => fs.rmSync(agentDir, { recursive: true, force: true }));
    const calls = [fauxToolCall("locate", { query: "auth status" }, { id: "l" }), fauxToolCall("trace", { query: "subject:auth_status relation:defined" }, { id: "t" })];
    const run = await runFauxSession({
      cwd: tree.root,
      agentDir,
      steps: [fauxAssistantMessage(calls, { stopReason: "toolUse" }), fauxAssistantMessage("done")],
    });
    assert.deepEqual(run.extensionErrors, []);
    assert.match(run.contexts[0].systemPrompt ?? "", /Use locate when you know roughly what a file is about/);
    assert.match(run.contexts[0].systemPrompt ?? "", /Use trace when you want where something is defined/);
    const byId = new Map(run.toolResults.map((r) => [r.toolCallId, r]));
    assert.match(byId.get("l")?.text ?? "", /^query: auth status\ntop files: \d+\n1\. src\/auth\/mod\.rs \(code, rust\)\n/);
    assert.match(byId.get("t")?.text ?? "", /best answer likely in src\/auth\/mod\.rs/);
  });

  for (const host of [PI_HOSTS.legacy, PI_HOSTS.current]) {
    test(`${host.label}: the real Pi CLI offers locate and trace, and the model gets their text`, { skip: hostAvailable(host) ? false : "host not installed" }, async (t) => {
      const server = await startFakeOpenAIServer([
        {
          toolCalls: [
            { id: "l1", name: "locate", arguments: { query: "auth status", pathsOnly: true } },
            { id: "t1", name: "trace", arguments: { query: "subject:auth_status relation:called_from" } },
          ],
        },
        { text: "done" },
      ]);
      t.after(() => server.close());
      const run = await runPi({ host, baseUrl: server.baseUrl, prompt: "where is auth status used", cwd: tree.root });
      assert.equal(run.timedOut, false);
      assert.equal(run.code, 0, run.stderr);
      const offered = offeredTools(server.requests[0]);
      assert.ok(offered.includes("locate") && offered.includes("trace"), offered.join(","));
      const results = toolResults(server.requests[1]);
      assert.equal(results.get("l1")?.split("\n")[0], "src/auth/mod.rs");
      assert.match(results.get("t1") ?? "", /best answer likely in src\/ui\/status_bar\.rs\n/);
      assert.deepEqual(toolEnds(run).map((e) => [e.toolName, e.isError]).sort(), [["locate", false], ["trace", false]]);
    });
  }

  test(`${PI_HOSTS.current.label}: disabledTools ["locate"] keeps locate from the model, trace stays`, { skip: hostAvailable(PI_HOSTS.current) ? false : "host not installed" }, async (t) => {
    const server = await startFakeOpenAIServer([{ text: "ok" }]);
    t.after(() => server.close());
    const run = await runPi({ host: PI_HOSTS.current, baseUrl: server.baseUrl, prompt: "hi", cwd: tree.root, piUtilsSettings: { disabledTools: ["locate"] } });
    assert.equal(run.code, 0, run.stderr);
    const offered = offeredTools(server.requests[0]);
    assert.ok(!offered.includes("locate") && offered.includes("trace"), offered.join(","));
  });
});
