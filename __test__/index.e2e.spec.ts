// The live index in a real (in-process, faux provider) Pi session: session start asks for the working
// directory's index under the settings' bounds, the grep tool then answers from it, and `index.enabled:
// false` builds nothing.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fauxAssistantMessage, fauxToolCall, runFauxSession } from "./helpers/faux-session.ts";
import { native } from "./helpers/native.ts";
import { makeTree } from "./helpers/tree.ts";

const store = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-index-store-"));
process.env.PI_UTILS_INDEX_DIR = store;
after(() => fs.rmSync(store, { recursive: true, force: true }));

function agentDir(settings: unknown) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-agent-"));
  fs.writeFileSync(path.join(dir, "pi-utils.json"), `${JSON.stringify(settings, null, 2)}\n`);
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

function project() {
  const files: Record<string, string> = { "src/app.ts": "export const needle = 1;\n" };
  for (let i = 0; i < 30; i++) files[`src/f${i}.ts`] = `export const hay${i} = ${i};\n`;
  return makeTree(files);
}

const oneGrep = () => [
  fauxAssistantMessage([fauxToolCall("grep", { pattern: "needle" }, { id: "g" })], { stopReason: "toolUse" }),
  fauxAssistantMessage("done"),
];

/** One session in a fresh project under `settings`; everything it made is removed after the test. */
async function session(t: import("node:test").TestContext, settings: unknown) {
  const tree = project();
  const agent = agentDir(settings);
  t.after(() => {
    native.indexDrop({ path: tree.root });
    agent.cleanup();
    tree.cleanup();
  });
  const run = await runFauxSession({ cwd: tree.root, agentDir: agent.dir, steps: oneGrep() });
  assert.deepEqual(run.extensionErrors, []);
  return tree.root;
}

test("session start builds the working directory's index under the settings' bounds", async (t) => {
  const root = await session(t, { index: { minFiles: 0 } });
  // Asked for by the session (the default floor of 1000 files would have left this tree unindexed).
  assert.ok(["building", "ready"].includes(native.indexStatus({ path: root }).state));
  const status = await native.indexWarm({ path: root, minFiles: 0 });
  assert.equal(status.state, "ready");
  assert.equal(status.files, 31);
});

test("index.enabled false: the session builds nothing and grep scans", async (t) => {
  const root = await session(t, { index: { enabled: false, minFiles: 0 } });
  assert.equal(native.indexStatus({ path: root }).state, "none");
});

test("in a session, locate and trace answer from the working directory's ready index with the walk's text", async (t) => {
  const tree = project();
  const agent = agentDir({ index: { minFiles: 0 } });
  t.after(() => {
    native.indexDrop({ path: tree.root });
    agent.cleanup();
    tree.cleanup();
  });
  // The first session asks for the index; discovery never starts one itself.
  await runFauxSession({ cwd: tree.root, agentDir: agent.dir, steps: oneGrep() });
  await native.indexWarm({ path: tree.root, minFiles: 0 });
  const run = await runFauxSession({
    cwd: tree.root,
    agentDir: agent.dir,
    steps: [
      fauxAssistantMessage(
        [
          fauxToolCall("locate", { query: "app" }, { id: "l" }),
          fauxToolCall("trace", { query: "subject:needle relation:defined" }, { id: "t" }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ],
  });
  assert.deepEqual(run.extensionErrors, []);
  const byName = (name: string) => {
    const r = run.toolResults.find((x) => x.toolName === name);
    assert.ok(r, `no ${name} result`);
    return r as { text: string; details: { index: string } };
  };
  const located = byName("locate");
  const traced = byName("trace");
  assert.equal(located.details.index, "used");
  assert.equal(traced.details.index, "used");
  assert.match(located.text, /1\. src\/app\.ts/);
  assert.match(traced.text, /best answer likely in src\/app\.ts/);
  const walkedLocate = await native.locate({ query: "app", cwd: tree.root, index: false });
  const walkedTrace = await native.trace({ query: "subject:needle relation:defined", cwd: tree.root, index: false });
  assert.ok(located.text.includes(walkedLocate.text.trimEnd()), located.text);
  assert.ok(traced.text.includes(walkedTrace.text.trimEnd()), traced.text);
});

test("the settings' locate.limit and trace.maxFiles are what the tools use when the model gives none", async (t) => {
  const tree = project();
  const agent = agentDir({ locate: { limit: 2 }, trace: { maxFiles: 1, maxRegions: 1 }, index: { enabled: false } });
  t.after(() => {
    agent.cleanup();
    tree.cleanup();
  });
  const run = await runFauxSession({
    cwd: tree.root,
    agentDir: agent.dir,
    steps: [
      fauxAssistantMessage(
        [
          fauxToolCall("locate", { query: "f" }, { id: "l" }),
          fauxToolCall("trace", { query: "subject:hay relation:defined" }, { id: "t" }),
          fauxToolCall("locate", { query: "f", limit: 3 }, { id: "l3" }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ],
  });
  assert.deepEqual(run.extensionErrors, []);
  const details = (id: string) => run.toolResults.find((x) => x.toolCallId === id)?.details as { files: number; regions?: number };
  assert.equal(details("l").files, 2);
  assert.deepEqual([details("t").files, details("t").regions], [1, 1]);
  assert.equal(details("l3").files, 3, "the model's own limit wins");
  // The tool's schema tells the model the configured default.
  const tools = run.contexts[0].tools ?? [];
  const locate = tools.find((x) => x.name === "locate");
  assert.match(JSON.stringify(locate?.parameters), /default: 2/);
});
