// Familiarity inside the real Pi, on both hosts: a scripted model reads a file, outlines it, traces a symbol in
// it, edits it; then something else (a formatter, the user) changes the file, and the model greps and outlines
// it again; the session is compacted, and the model outlines it twice more. What is asserted is the text the
// model received for each call (the requests the fake OpenAI server got).
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeOpenAIServer, toolResults, type ChatRequest, type ScriptedReply } from "./helpers/fake-openai-server.ts";
import { hostAvailable, PI_HOSTS, type PiHost } from "./helpers/pi-cli.ts";
import { startPi } from "./helpers/pi-process.ts";
import { loadNative } from "../extensions/lib/native.mjs";

const SHAPES =
	"export class Shape {\n" +
	"  area(): number {\n" +
	"    return 0;\n" +
	"  }\n" +
	"}\n" +
	"\n" +
	"export function make(): Shape {\n" +
	"  return new Shape();\n" +
	"}\n" +
	"\n" +
	"export function paint(s: Shape): number {\n" +
	"  return s.area() * 2;\n" +
	"}\n" +
	"\n" +
	"export function measure(s: Shape): number {\n" +
	"  return s.area() + 1;\n" +
	"}\n";

/** Whether the core renders the harness context (issue 46's native side); without it answers are full. */
async function coreReadsContext(): Promise<boolean> {
	const load = loadNative();
	if (!("native" in load)) return false;
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-ctx-"));
	try {
		fs.writeFileSync(path.join(dir, "a.ts"), "export function a() {}\n");
		const r = (await load.native.outline({ path: "a.ts", cwd: dir, context: { version: 1 } } as never)) as { context?: string };
		return r.context !== undefined;
	} catch {
		return false;
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

function workspace(t: TestContext) {
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-fam-e2e-"));
	t.after(() => fs.rmSync(root, { recursive: true, force: true }));
	const agentDir = path.join(root, "agent");
	const cwd = path.join(root, "proj");
	fs.mkdirSync(agentDir);
	fs.mkdirSync(path.join(cwd, "src"), { recursive: true });
	fs.writeFileSync(path.join(cwd, "src/shapes.ts"), SHAPES);
	// Keep almost nothing at compaction, so that a small session can be compacted.
	fs.writeFileSync(path.join(agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1 } }));
	return { agentDir, cwd };
}

const call = (id: string, name: string, args: Record<string, unknown>): ScriptedReply => ({ toolCalls: [{ id, name, arguments: args }] });
/** A summarization request (compaction) offers no tools. */
const isSummary = (r: ChatRequest) => !r.tools || r.tools.length === 0;

for (const host of [PI_HOSTS.legacy, PI_HOSTS.current] as PiHost[]) {
	test(`${host.label}: the model is told what it already has, what changed outside, and is shown it all again after a compaction`, { skip: hostAvailable(host) ? false : "host not installed", timeout: 90_000 }, async (t) => {
		const compacts = await coreReadsContext();
		const { agentDir, cwd } = workspace(t);
		const file = path.join(cwd, "src/shapes.ts");
		const script: Array<(r: ChatRequest) => ScriptedReply> = [
			() => call("c_read", "read", { path: "src/shapes.ts" }),
			() => call("c_outline1", "outline", { path: "src/shapes.ts" }),
			() => call("c_trace", "trace", { query: "subject:area relation:called_from" }),
			() => call("c_edit", "edit", { path: "src/shapes.ts", oldText: "return s.area() + 1;", newText: "return s.area() + 10;" }),
			() => {
				// Something other than the model (a formatter, the user) changes the file between two calls.
				fs.appendFileSync(file, "\nexport function extra(): number {\n  return 1;\n}\n");
				return call("c_outline2", "outline", { path: "src/shapes.ts" });
			},
			() => {
				// And again, inside a body this time.
				fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace("return 0;", "return 7;"));
				return call("c_grep", "grep", { pattern: "area" });
			},
			() => call("c_outline2b", "outline", { path: "src/shapes.ts" }),
			() => call("c_grep2", "grep", { pattern: "area" }),
			() => ({ text: "first part done" }),
			// After the compaction.
			() => call("c_grep3", "grep", { pattern: "area" }),
			() => call("c_outline3", "outline", { path: "src/shapes.ts" }),
			() => call("c_outline4", "outline", { path: "src/shapes.ts" }),
			() => ({ text: "all done" }),
		];
		let next = 0;
		const step = (r: ChatRequest): ScriptedReply => (isSummary(r) ? { text: "## Goal\nLook at shapes.\n\n## Progress\nRead and edited src/shapes.ts." } : (script[next++]?.(r) ?? { text: "(script exhausted)" }));
		const server = await startFakeOpenAIServer(Array.from({ length: 40 }, () => step));
		t.after(() => server.close());
		const pi = startPi({ host, agentDir, baseUrl: server.baseUrl, cwd, args: ["--no-session", "--mode", "rpc"], timeoutMs: 80_000 });
		t.after(() => pi.kill());

		pi.send({ id: "1", type: "prompt", message: "look at the shapes" });
		await pi.waitForEvent("the first answer", (e) => e.type === "agent_end", 40_000);
		pi.send({ id: "2", type: "compact" });
		const compacted = await pi.waitForEvent("the compaction", (e) => e.type === "response" && e.id === "2", 30_000);
		assert.equal(compacted.success, true, JSON.stringify(compacted));
		pi.send({ id: "3", type: "prompt", message: "outline it again" });
		await pi.waitForEvent("the second answer", (e) => e.type === "agent_end" && next >= script.length, 40_000);

		const seen = new Map<string, string>();
		for (const r of server.requests) for (const [id, text] of toolResults(r)) seen.set(id, text);
		const text = (id: string) => {
			const s = seen.get(id);
			assert.ok(s !== undefined, `the model received no result for ${id}; stderr: ${pi.stderr().slice(-2000)}`);
			return s;
		};

		// The first answers are in full.
		assert.match(text("c_read"), /^export class Shape \{/);
		// grep: hits are always shown; the file changed since the model's edit, by something else, so it says so.
		assert.match(text("c_grep"), /src\/shapes\.ts:2: {3}area\(\): number \{/);
		assert.match(text("c_grep"), /\[[^\]]*src\/shapes\.ts changed since you saw it at turn 5[^\]]*\]$/);

		// Once the model has the file's whole structure again (the outline at turn 7), grep does not repeat it: a
		// short header, no other: hint of symbols it has. After the compaction it has them no longer.
		assert.match(text("c_grep2"), /^src\/shapes\.ts \(known, unchanged\)\n/);
		assert.doesNotMatch(text("c_grep2"), /other:|changed since/);
		assert.match(text("c_grep3"), /^src\/shapes\.ts \(typescript, 21 lines, 6 symbols\)\n/);
		assert.match(text("c_grep3"), /\n {2}other: function make @ 7-9; function extra @ 19-21/);

		const outline1 = text("c_outline1");
		const outline2 = text("c_outline2");
		const outline3 = text("c_outline3");
		const outline4 = text("c_outline4");
		if (!compacts) {
			// A core without the harness context: full answers, and the change is still said (by the extension).
			assert.match(outline1, /^file: src\/shapes\.ts\n/);
			// The line a compacting core leaves out (below) is inlined in full.
			assert.match(text("c_trace"), /\n +12: {3}return s\.area\(\) \* 2;/);
			assert.match(outline2, /\[changed since you edited it at turn 4\]$/);
			t.diagnostic("core renders no harness context (issue 46's native side not in this build): outline/trace compaction not asserted");
			return;
		}
		// Read in full at turn 1, unchanged: the compact form.
		assert.match(outline1, /unchanged since you last read it; compact form/);
		assert.ok(outline1.length < 300, outline1);
		// trace: the regions the model read are named with their range, not inlined again.
		const trace = text("c_trace");
		assert.match(trace, /already shown: src\/shapes\.ts:\d+-\d+, unchanged/);
		assert.doesNotMatch(trace, /\n +12: {3}return s\.area\(\) \* 2;/);
		// After the outside change: said, with what changed, then the full outline.
		assert.match(outline2, /changed since you last saw it: changed since you edited it at turn 4/);
		// The model had the structure from its full read, not from an outline listing it: no symbol is claimed
		// added against a partial list (trace's structure lists only what bears on its question).
		assert.match(outline2, /symbol changes: not known/);
		assert.doesNotMatch(outline2, /symbols added: function make/);
		assert.match(outline2, /\n- function extra @ \d+-\d+/);
		// The second outside change, inside a body: no symbol moved, the change is still said.
		assert.match(text("c_outline2b"), /changed since you last saw it: changed since you saw it at turn 5\nsymbol changes: none added, removed or moved\n/);
		// The compaction took the earlier turns out of the model's context: the outline is given in full again...
		assert.doesNotMatch(outline3, /compact form/);
		assert.match(outline3, /\n- function measure @ \d+-\d+/);
		// ...and once it is seen again, compact.
		assert.match(outline4, /compact form/);
	});
}
