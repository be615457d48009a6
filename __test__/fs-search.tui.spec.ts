// What a Pi user sees: the real Pi TUI on both hosts, in a detached tmux pane at 80 and 140 columns, drawing
// a grep result whose ignored-paths notice sits past the 15 collapsed lines. The notice must be on screen
// collapsed (Pi's short form), in a colour other than the hit lines', and the hidden lines must appear on
// ctrl+o; locate and trace show their ranked files and best region collapsed.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeOpenAIServer } from "./helpers/fake-openai-server.ts";
import { fakeModelsJson, hostAvailable, packageRoot, PI_HOSTS, type PiHost } from "./helpers/pi-cli.ts";
import { hasTmux, newSession, tmux } from "./helpers/tmux.ts";

const NOTICE = '[+1 match in ignored paths (node_modules/ 1) not shown — search path "node_modules" to see them; noIgnore: false';

let temp: string;
before(() => {
	temp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-tui-"));
});
after(() => fs.rmSync(temp, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The pane's text (with its colour escapes when `escapes`), once `done(screen)` holds; fails after `limitMs`. */
async function screenWhen(session: string, done: (screen: string) => boolean, escapes = false, limitMs = 30_000): Promise<string> {
	let screen = "";
	for (let waited = 0; waited < limitMs; waited += 200) {
		// With the scrollback: the expanded results are taller than the pane.
		screen = tmux("capture-pane", "-p", "-S", "-1000", ...(escapes ? ["-e"] : []), "-t", session).stdout ?? "";
		if (done(screen)) return screen;
		await sleep(200);
	}
	assert.fail(`the screen never got there:\n${screen}`);
}

/** The colour escapes in front of the first screen line containing `text`. */
function colourOf(screen: string, text: string): string {
	const line = screen.split("\n").find((l) => l.includes(text)) ?? "";
	return line.slice(0, line.indexOf(text)).replace(/[^\x1b]*(\x1b\[[0-9;]*m)/g, "$1").replace(/^[^\x1b]*/, "");
}

for (const host of [PI_HOSTS.legacy, PI_HOSTS.current] as PiHost[]) for (const width of [80, 140]) {
	const skip = !hasTmux ? "tmux not installed" : hostAvailable(host) ? false : "host not installed";
	test(`${host.label}, ${width} columns: a grep notice past the collapsed lines is on screen in Pi's short form, in its own colour; locate and trace show their answer; ctrl+o shows the rest`, { skip }, async (t) => {
		const server = await startFakeOpenAIServer([
			{ toolCalls: [{ id: "g1", name: "grep", arguments: { pattern: "needle" } }] },
			{ toolCalls: [{ id: "g2", name: "grep", arguments: { pattern: "marker" } }] },
			{ toolCalls: [{ id: "o1", name: "outline", arguments: { path: "src/app.ts" } }] },
			{ toolCalls: [{ id: "f1", name: "glob", arguments: { pattern: "x.txt" } }] },
			{ toolCalls: [{ id: "l1", name: "locate", arguments: { query: "app" } }] },
			{ toolCalls: [{ id: "t1", name: "trace", arguments: { query: "subject:f1 relation:called_from" } }] },
			{ text: "all done" },
		]);
		const root = fs.mkdtempSync(path.join(temp, "proj-"));
		const agentDir = path.join(root, "agent");
		const session = `pi-utils-tui-${process.pid}-${path.basename(root)}`;
		t.after(async () => {
			tmux("kill-session", "-t", session);
			await server.close();
		});
		fs.mkdirSync(path.join(root, "node_modules/dep"), { recursive: true });
		fs.mkdirSync(agentDir);
		fs.writeFileSync(path.join(root, ".gitignore"), "node_modules/\nagent/\n");
		// The first hit is longer than the widest screen: collapsed, it is cut on its line, never wrapped.
		fs.writeFileSync(path.join(root, "a.txt"), `needle ${"word ".repeat(40)}end\n` + "needle\n".repeat(29));
		fs.writeFileSync(path.join(root, "node_modules/dep/x.txt"), "needle\n");
		fs.writeFileSync(path.join(agentDir, "models.json"), fakeModelsJson(server.baseUrl));
		// Grouped hits in docs that sort before the code: headers and docs must not fill the collapsed lines.
		fs.mkdirSync(path.join(root, "docs"));
		fs.mkdirSync(path.join(root, "src"));
		fs.writeFileSync(path.join(root, "README.md"), Array.from({ length: 6 }, (_, i) => `## Part ${i}\n\nmarker in the readme ${i}\n`).join("\n"));
		fs.writeFileSync(path.join(root, "docs/guide.md"), Array.from({ length: 4 }, (_, i) => `## Step ${i}\n\nmarker in the guide ${i}\n`).join("\n"));
		fs.writeFileSync(path.join(root, "src/use.ts"), 'import { f1 } from "./app";\n\nexport function main() {\n\treturn f1();\n}\n');
		fs.writeFileSync(path.join(root, "src/app.ts"), Array.from({ length: 5 }, (_, i) => `export function f${i}() {\n\treturn "marker in code ${i}";\n}\n`).join("\n") + "export const LIMIT = 10;\n");
		const env = `PI_CODING_AGENT_DIR='${agentDir}' PI_OFFLINE=1 PI_TELEMETRY=0 PI_SKIP_VERSION_CHECK=1`;
		const cmd = `cd '${root}' && ${env} '${host.node}' '${host.cli}' --model fake/fake-model --no-session -e '${packageRoot}' 'find needle'`;
		const tmuxStart = newSession(["-s", session, "-x", String(width), "-y", "300", cmd]);
		assert.equal(tmuxStart.status, 0, tmuxStart.stderr);

		const collapsed = await screenWhen(session, (s) => s.includes("all done"), true);
		const plain = collapsed.replace(/\x1b\[[0-9;]*m/g, "");
		assert.ok(plain.includes("a.txt:15: needle") && !plain.includes("a.txt:16: needle"), plain);
		assert.match(plain, /\.\.\. \(15 more lines, .*to expand\)/);
		assert.match(plain, /^ ?a\.txt:1: needle (?:word )+[^\n]*…\s*\n ?a\.txt:2: needle\s*$/m, `a long hit line is cut, not wrapped:\n${plain}`);
		assert.doesNotMatch(plain, /^\s*(?:word ){3}/m, "no continuation line of a wrapped hit");
		// Collapsed, the notice is Pi's short form on one line; the model's text (and the expanded view) keep it whole.
		assert.match(plain, /^ ?\[\+1 match in ignored paths\]\s*$/m, `the notice is visible collapsed:\n${plain}`);
		assert.ok(!plain.replace(/\s+/g, " ").includes(NOTICE), "not the model's wording");
		const noticeColour = colourOf(collapsed, "[+1 match");
		assert.ok(noticeColour.length > 0, "the notice is coloured");
		assert.notEqual(noticeColour, colourOf(collapsed, "a.txt:1: needle"), "not in the hit lines' style");

		const marker = plain.slice(plain.indexOf("grep /marker/"), plain.indexOf("outline src/app.ts"));
		const hits = marker.split("\n").filter((l) => /^ ?\S+:\d+: /.test(l)).map((l) => l.trim().split(":")[0]);
		assert.deepEqual(hits, [...Array(5).fill("src/app.ts"), ...Array(6).fill("README.md"), ...Array(4).fill("docs/guide.md")], `hits first, code before docs:\n${marker}`);
		assert.ok(!marker.includes("(TypeScript,") && !marker.includes("function f0 @"), "no headings collapsed");

		// outline: the exported const is listed, and the header is one line without the path.
		const outline = plain.slice(plain.indexOf("outline src/app.ts"));
		assert.match(outline, /^outline src\/app\.ts\s*\n\s*\n typescript, 20 lines, 6 symbols\n - function f0 @ 1-3 \(3 lines\)\n/, outline);
		assert.match(outline, / - constant LIMIT @ 20-20 \(1 line\)/);
		assert.ok(!outline.includes("file: src/app.ts"), outline);
		// glob whose only matches are ignored says so.
		const glob = plain.slice(plain.indexOf("glob x.txt"));
		assert.match(glob, /node_modules\/dep\/x\.txt\s*\n\s*\(all matches are in ignored paths\)/, glob);

		// locate and trace, collapsed: the ranked files, and for trace the best region (not the first file's reasons).
		const locate = plain.slice(plain.indexOf("locate app"), plain.indexOf("trace subject:f1"));
		assert.match(locate, /query: app\s*\n\s*top files: \d+\s*\n\s*1\. src\/app\.ts \(code, typescript\)/, locate);
		assert.doesNotMatch(locate, /role:|structure:/, locate);
		const trace = plain.slice(plain.indexOf("trace subject:f1"));
		assert.match(trace, /best answer likely in src\/use\.ts\s*\n\s*1\. src\/use\.ts \(code, typescript\)/, trace);
		assert.match(trace, /\n\s*1\. use\.ts\s*\n\s*- function main @ 3-5\s*\n\s*kind: callsite\s*\n[^]*4: +return f1\(\);/, trace);
		assert.doesNotMatch(trace.slice(0, trace.indexOf("all done")), /role:|structure:/, trace);

		tmux("send-keys", "-t", session, "C-o");
		const expanded = await screenWhen(session, (s) => s.includes("a.txt:30: needle"));
		assert.ok(expanded.replace(/\s+/g, " ").includes(NOTICE), expanded);
		assert.match(expanded, /README\.md \(markdown, 23 lines, 6 symbols\)\n +section Part 0 @ 1-3\n/, "expanded: the grouped text as the model got it");
	});
}

for (const host of [PI_HOSTS.legacy, PI_HOSTS.current] as PiHost[]) {
	const skip = !hasTmux ? "tmux not installed" : hostAvailable(host) ? false : "host not installed";
	test(`${host.label}: a settings warning at startup is set off from what Pi lists after it`, { skip }, async (t) => {
		const root = fs.mkdtempSync(path.join(temp, "warn-"));
		const agentDir = path.join(root, "agent");
		const session = `pi-utils-tui-warn-${process.pid}-${path.basename(root)}`;
		t.after(() => void tmux("kill-session", "-t", session));
		fs.mkdirSync(agentDir);
		fs.writeFileSync(path.join(agentDir, "models.json"), fakeModelsJson("http://127.0.0.1:9/v1"));
		fs.writeFileSync(path.join(agentDir, "pi-utils.json"), JSON.stringify({ grep: { limit: "x" } }));
		const env = `PI_CODING_AGENT_DIR='${agentDir}' PI_OFFLINE=1 PI_TELEMETRY=0 PI_SKIP_VERSION_CHECK=1`;
		const cmd = `cd '${root}' && ${env} '${host.node}' '${host.cli}' --model fake/fake-model --no-session -e '${packageRoot}'`;
		const tmuxStart = newSession(["-s", session, "-x", "160", "-y", "200", cmd]);
		assert.equal(tmuxStart.status, 0, tmuxStart.stderr);
		const screen = await screenWhen(session, (s) => s.includes("grep.limit must be") && s.includes("[Extensions]"));
		const lines = screen.split("\n");
		const at = lines.findIndex((l) => l.includes("grep.limit must be"));
		assert.equal(lines[at + 1].trim(), "", `a blank line after the warning:\n${screen}`);
	});
}
