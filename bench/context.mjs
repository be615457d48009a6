#!/usr/bin/env node
// Token bench for issue 46 (answers that know what the agent has already seen): a scripted multi-turn
// session over a copy of a real repository (this one, or a slice of the Linux tree with --corpus linux) —
// read → outline → trace → edit → a build/formatter rewrites a file → trace and outline again → grep — and,
// per turn, the characters the model is sent by the tool with the session's familiarity and without it.
// The session is driven the way fs-search drives it in Pi: Pi-shaped entries, disk facts taken after each
// result (extensions/lib/context), and the same tool runners the extension calls.
//
//   node bench/context.mjs [--corpus repo|linux] [--json]
//
// Targets: repeated outline/trace answers of unchanged files >= 50 % shorter; first answers unchanged;
// every region a compact trace leaves out is named with its range (checked here, and the bench fails if not).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { createDisk } = await import(path.join(root, "extensions/lib/context/disk.mjs"));
const { buildFamiliarity, createCaptureStore, toolViews } = await import(path.join(root, "extensions/lib/context/familiarity.mjs"));
const { callsOfBranch } = await import(path.join(root, "extensions/lib/context/observe.mjs"));
const { runOutlineTool } = await import(path.join(root, "extensions/lib/search/outline.mjs"));
const { runTraceTool } = await import(path.join(root, "extensions/lib/search/trace.mjs"));
const { runGrepTool } = await import(path.join(root, "extensions/lib/search/grep.mjs"));
const native = createRequire(import.meta.url)(path.join(root, "index.js"));

const args = process.argv.slice(2);
const corpusName = args.includes("--corpus") ? args[args.indexOf("--corpus") + 1] : "repo";
const asJson = args.includes("--json");

/** The files copied into the scratch tree, and the scripted session over them. */
const CORPORA = {
  repo: {
    from: root,
    copy: ["extensions", "bin", "src"],
    a: "extensions/lib/search/grep.mjs",
    b: "extensions/lib/search/toolkit.mjs",
    traceA: "subject:createHitFormatter relation:called_from",
    traceB: "subject:raceDeadline relation:called_from",
    editA: ["  const group = options.group === true && mode === \"content\";", "  const group = options.group === true && mode === \"content\"; // grouped"],
    grep: "raceDeadline",
  },
  linux: {
    from: process.env.PI_UTILS_CORPUS ?? path.join(os.homedir(), ".cache/pi-utils-bench/linux-source-6.12"),
    copy: ["kernel/sched", "include/linux/sched.h", "include/linux/sched"],
    a: "kernel/sched/completion.c",
    b: "kernel/sched/wait.c",
    traceA: "subject:complete_all relation:called_from",
    traceB: "subject:autoremove_wake_function relation:called_from",
    editA: ["void complete_all(struct completion *x)", "void complete_all(struct completion *x) /* all */"],
    grep: "autoremove_wake_function",
  },
};
const corpus = CORPORA[corpusName];
if (!corpus) throw new Error(`unknown corpus ${corpusName} (repo or linux)`);

const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-context-bench-"));
process.on("exit", () => fs.rmSync(cwd, { recursive: true, force: true }));
for (const p of corpus.copy) {
  fs.cpSync(path.join(corpus.from, p), path.join(cwd, p), { recursive: true, filter: (src) => !/[/\\](node_modules|target|\.git)$/.test(src) });
}

// The session as Pi records it, and the facts fs-search takes at tool_call/tool_result.
const disk = createDisk();
const store = createCaptureStore(disk);
const env = { cwd, isFile: (abs) => fs.statSync(abs, { throwIfNoEntry: false })?.isFile() === true };
const entries = [];
let n = 0;
const picture = () => {
  const { calls } = callsOfBranch(entries);
  return calls.length > 0 ? buildFamiliarity(calls, store, disk, env) : null;
};
function record(toolName, input, text, details, run) {
  const id = `call_${++n}`;
  entries.push({ type: "message", id: `a${n}`, message: { role: "assistant", content: [{ type: "toolCall", id, name: toolName, arguments: input }] } });
  store.beforeCall(id, toolName, input, env);
  if (run) run();
  const content = [{ type: "text", text }];
  store.afterResult(id, { toolName, input, content, details, isError: false }, env);
  entries.push({ type: "message", id: `r${n}`, message: { role: "toolResult", toolCallId: id, toolName, content, details, isError: false } });
}

const discover = { cwd, timeoutMs: 30000, graceMs: 3000, defaultMaxFiles: 5, defaultMaxRegions: 6 };
const TOOLS = {
  async outline(input, known) {
    return runOutlineTool(native, input, { cwd, maxBytes: 51200, known: known && ((arg) => known.outline(arg)) });
  },
  async trace(input, known) {
    const r = await runTraceTool(native, input, { ...discover, index: false, known: known ? (root) => known.discover(root) : undefined });
    return { text: r.text, details: r.details, result: r.result };
  },
  async grep(input, known) {
    return runGrepTool(native, input, { cwd, timeoutMs: 30000, graceMs: 3000, noIgnore: true, maxLineLength: 500, maxBytes: 51200, defaultLimit: 100, index: false, known: known?.grep(input.path) });
  },
};

const rowsOut = [];
const problems = [];
/** One turn: the tool with the picture and without; the model is sent (and the session records) the first. */
async function turn(label, tool, input, kind) {
  const views = toolViews(picture(), env);
  const withCtx = await TOOLS[tool](input, views);
  const without = await TOOLS[tool](input, null);
  rowsOut.push({ turn: n + 1, label, tool, kind, without: without.text.length, with: withCtx.text.length });
  if (process.env.PI_UTILS_BENCH_SHOW) console.error(`--- turn ${n + 1}: ${label}\n${withCtx.text}\n`);
  if (tool === "trace") checkNamed(label, without.result, withCtx.text);
  record(tool, input, withCtx.text, withCtx.details);
  return withCtx;
}
/** Every region the full answer inlines is, in the compact answer, inlined or named with its range. */
function checkNamed(label, full, text) {
  for (const f of full?.files ?? []) {
    for (const r of f.regions) {
      const range = `@ ${r.startLine}-${r.endLine}`;
      if (!text.includes(range)) problems.push(`${label}: region ${f.path} ${range} disappeared without its range`);
    }
  }
}
function readTurn(rel) {
  const text = fs.readFileSync(path.join(cwd, rel), "utf8");
  rowsOut.push({ turn: n + 1, label: `read ${rel}`, tool: "read", kind: "first", without: text.length, with: text.length });
  record("read", { path: rel }, text, undefined);
}

readTurn(corpus.a);
await turn(`outline ${corpus.a} (after reading it)`, "outline", { path: corpus.a }, "repeat");
// Partly known: the file read in turn 1 is one of its files, the others are new.
await turn(`trace ${corpus.traceA}`, "trace", { query: corpus.traceA }, "overlap");
await turn(`outline ${corpus.b}`, "outline", { path: corpus.b }, "first");
// Not a first answer in full: one of its files was just outlined, so its structure list may be skipped.
await turn(`trace ${corpus.traceB}`, "trace", { query: corpus.traceB }, "overlap");
await turn(`trace ${corpus.traceB} again`, "trace", { query: corpus.traceB }, "repeat");
// The model's own edit.
const aFile = path.join(cwd, corpus.a);
record("edit", { path: corpus.a, oldText: corpus.editA[0], newText: corpus.editA[1] }, `Successfully replaced 1 block(s) in ${corpus.a}.`, undefined, () => {
  fs.writeFileSync(aFile, fs.readFileSync(aFile, "utf8").replace(corpus.editA[0], corpus.editA[1]));
});
rowsOut.push({ turn: n, label: `edit ${corpus.a}`, tool: "edit", kind: "edit", without: 0, with: 0 });
// A build step (a formatter) rewrites the other file: something other than the model changed it.
const bFile = path.join(cwd, corpus.b);
fs.appendFileSync(bFile, "\n/* formatted */\nfunction addedByTheBuild() {\n  return 0;\n}\n");
await turn(`trace ${corpus.traceB} after the build`, "trace", { query: corpus.traceB }, "changed");
await turn(`outline ${corpus.b} after the build`, "outline", { path: corpus.b }, "changed");
await turn(`outline ${corpus.b} again`, "outline", { path: corpus.b }, "repeat");
await turn(`outline ${corpus.a} after the model's edit`, "outline", { path: corpus.a }, "own-edit");
await turn(`trace ${corpus.traceA} again`, "trace", { query: corpus.traceA }, "repeat");
await turn(`grep ${corpus.grep}`, "grep", { pattern: corpus.grep }, "grep");

const pct = (r) => (r.without === 0 ? "" : `${Math.round((1 - r.with / r.without) * 100)} %`);
if (asJson) {
  console.log(JSON.stringify({ corpus: corpusName, rows: rowsOut, problems }, null, 2));
} else {
  console.log(`corpus: ${corpusName} (${corpus.copy.join(", ")})`);
  console.log("| turn | call | kind | chars without | chars with | shorter by |");
  console.log("|---:|---|---|---:|---:|---:|");
  for (const r of rowsOut) console.log(`| ${r.turn} | ${r.label} | ${r.kind} | ${r.without} | ${r.with} | ${pct(r)} |`);
  const sum = (k, f) => rowsOut.filter(f).reduce((s, r) => s + r[k], 0);
  const rep = (r) => r.kind === "repeat";
  console.log(`\nrepeated answers: ${sum("without", rep)} → ${sum("with", rep)} chars (${Math.round((1 - sum("with", rep) / Math.max(1, sum("without", rep))) * 100)} % shorter)`);
  const total = sum("without", () => true);
  console.log(`whole session: ${total} → ${sum("with", () => true)} chars`);
  for (const r of rowsOut.filter((x) => x.kind === "first" && x.with !== x.without)) problems.push(`first answer changed: ${r.label}`);
  if (problems.length > 0) console.log(`\nPROBLEMS:\n${problems.join("\n")}`);
}
process.exitCode = problems.length > 0 ? 1 : 0;
