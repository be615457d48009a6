import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import {
	DEFAULT_SETTINGS, KNOWN_TOOLS, agentDir, isToolEnabled, loadSettings, settingsPath, takeWarningsOnce,
	type SettingsLoadResult,
} from "../extensions/lib/settings.ts";

function tempAgentDir(t: TestContext): string {
	const dir = mkdtempSync(join(tmpdir(), "pi-utils-settings-"));
	t.after(() => {
		chmodTree(dir);
		rmSync(dir, { recursive: true, force: true });
	});
	return dir;
}

// Tests chmod things read-only; restore write bits so cleanup works for non-root users too.
function chmodTree(dir: string) {
	try {
		chmodSync(dir, 0o755);
		for (const name of readdirSync(dir)) {
			const p = join(dir, name);
			if (lstatSync(p).isDirectory()) chmodTree(p);
			else if (!lstatSync(p).isSymbolicLink()) chmodSync(p, 0o644);
		}
	} catch { /* already gone */ }
}

function withFile(t: TestContext, text: string): { dir: string; file: string } {
	const dir = tempAgentDir(t);
	const file = join(dir, "pi-utils.json");
	writeFileSync(file, text);
	return { dir, file };
}

const read = (file: string) => readFileSync(file, "utf8");

const GREP_FULL = `"grep": {
    "timeoutMs": 30000,
    "graceMs": 3000,
    "noIgnore": true,
    "limit": 100,
    "maxLineLength": 500,
    "maxBytes": 51200
  }`;
const GLOB_FULL = `"glob": {
    "timeoutMs": 10000,
    "graceMs": 2000,
    "limit": 200,
    "noIgnore": true
  }`;
const LOCATE_FULL = `"locate": {
    "timeoutMs": 30000,
    "graceMs": 3000,
    "limit": 10
  }`;
const TRACE_FULL = `"trace": {
    "timeoutMs": 30000,
    "graceMs": 3000,
    "maxFiles": 5,
    "maxRegions": 6
  }`;
const SHELL_FULL = `"shell": {
    "foregroundTimeoutSec": 600,
    "autoBackgroundAfterSec": 120,
    "maxBackgroundJobs": 8,
    "killGraceMs": 3000,
    "onQuit": "kill",
    "maxLogBytes": 67108864,
    "logRetentionDays": 7
  }`;
const INDEX_FULL = `"index": {
    "enabled": true,
    "minFiles": 1000,
    "maxFiles": 500000,
    "maxDiskMB": 2048
  }`;
const SCAFFOLD = `{\n  ${GREP_FULL},\n  ${GLOB_FULL},\n  ${LOCATE_FULL},\n  ${TRACE_FULL},\n  ${SHELL_FULL},\n  ${INDEX_FULL},\n  "disabledTools": []\n}\n`;

test("agentDir follows Pi: $PI_CODING_AGENT_DIR with ~ expanded, else ~/.pi/agent", () => {
	assert.equal(agentDir({}), join(homedir(), ".pi", "agent"));
	assert.equal(agentDir({ PI_CODING_AGENT_DIR: "~/custom/agent" }), join(homedir(), "custom", "agent"));
	assert.equal(agentDir({ PI_CODING_AGENT_DIR: "~" }), homedir());
	assert.equal(agentDir({ PI_CODING_AGENT_DIR: "/srv/pi" }), "/srv/pi");
	assert.equal(settingsPath("/srv/pi"), "/srv/pi/pi-utils.json");
});

test("a missing file is scaffolded with every default, 2-space indent, trailing newline", (t) => {
	const dir = join(tempAgentDir(t), "nested", "agent"); // directory created on demand
	const r = loadSettings(dir);
	assert.equal(r.created, true);
	assert.equal(r.path, join(dir, "pi-utils.json"));
	assert.equal(read(r.path), SCAFFOLD);
	assert.equal(read(r.path), JSON.stringify(DEFAULT_SETTINGS, null, 2) + "\n");
	assert.deepEqual(r.settings, DEFAULT_SETTINGS);
	assert.deepEqual(r.warnings, []);

	const again = loadSettings(dir);
	assert.equal(again.created, false);
	assert.deepEqual(again.repaired, []);
	assert.equal(read(r.path), SCAFFOLD);
	assert.deepEqual(readdirSync(dir), ["pi-utils.json"], "no temp files left behind");
});

test("a missing key is appended at the end of its own section; everything else byte-identical", (t) => {
	const before = `{\n  "grep": {\n    "limit": 7,\n    "noIgnore": false\n  },\n  ${GLOB_FULL},\n  ${LOCATE_FULL},\n  ${TRACE_FULL},\n  ${SHELL_FULL},\n  ${INDEX_FULL},\n  "disabledTools": []\n}\n`;
	const { dir, file } = withFile(t, before);
	const r = loadSettings(dir);
	const after = `{\n  "grep": {\n    "limit": 7,\n    "noIgnore": false,\n    "timeoutMs": 30000,\n    "graceMs": 3000,\n    "maxLineLength": 500,\n    "maxBytes": 51200\n  },\n  ${GLOB_FULL},\n  ${LOCATE_FULL},\n  ${TRACE_FULL},\n  ${SHELL_FULL},\n  ${INDEX_FULL},\n  "disabledTools": []\n}\n`;
	assert.equal(read(file), after);
	assert.deepEqual(r.repaired, ["grep.timeoutMs", "grep.graceMs", "grep.maxLineLength", "grep.maxBytes"]);
	assert.equal(r.settings.grep.limit, 7);
	assert.equal(r.settings.grep.noIgnore, false);
	assert.equal(r.settings.grep.timeoutMs, 30000);
	assert.deepEqual(r.warnings, [], "the repair is silent");
	assert.deepEqual(readdirSync(dir), ["pi-utils.json"], "temp file renamed away");
});

test("missing sections are appended after the user's last key, in the user's indentation", (t) => {
	const before = `{\n\t"disabledTools": ["bash"],\n\t"grep": {\n\t\t"limit": 9\n\t}\n}`;
	const { dir, file } = withFile(t, before);
	const r = loadSettings(dir);
	const tabbed = (s: string) => s.replace(/\n {4}/g, "\n\t\t").replace(/\n {2}/g, "\n\t");
	const after = `{\n\t"disabledTools": ["bash"],\n\t"grep": {\n\t\t"limit": 9,\n\t\t"timeoutMs": 30000,\n\t\t"graceMs": 3000,\n\t\t"noIgnore": true,\n\t\t"maxLineLength": 500,\n\t\t"maxBytes": 51200\n\t},\n\t${tabbed(GLOB_FULL)},\n\t${tabbed(LOCATE_FULL)},\n\t${tabbed(TRACE_FULL)},\n\t${tabbed(SHELL_FULL)},\n\t${tabbed(INDEX_FULL)}\n}`;
	assert.equal(read(file), after);
	assert.deepEqual(r.repaired, ["grep.timeoutMs", "grep.graceMs", "grep.noIgnore", "grep.maxLineLength", "grep.maxBytes", "glob", "locate", "trace", "shell", "index"]);
});

test("a file written on one line gets its missing keys on that line, spaced as the file spaces them", (t) => {
	const tight = withFile(t, `{"grep":{"limit":5},"disabledTools":[]}`);
	loadSettings(tight.dir);
	const compact = (o: unknown) => JSON.stringify(o).slice(1, -1);
	const { limit: _limit, ...grepRest } = DEFAULT_SETTINGS.grep;
	assert.equal(
		read(tight.file),
		`{"grep":{"limit":5,${compact(grepRest)}},"disabledTools":[],${compact({ glob: DEFAULT_SETTINGS.glob, locate: DEFAULT_SETTINGS.locate, trace: DEFAULT_SETTINGS.trace, shell: DEFAULT_SETTINGS.shell, index: DEFAULT_SETTINGS.index })}}`,
	);

	const spaced = withFile(t, `{"grep": {"limit": 5}}`);
	loadSettings(spaced.dir);
	const written = read(spaced.file);
	assert.ok(written.startsWith(`{"grep": {"limit": 5, "timeoutMs": 30000, "graceMs": 3000, `), written);
	assert.ok(written.includes(`}, "glob": {"timeoutMs": 10000, "graceMs": 2000, "limit": 200, "noIgnore": true}, "locate": {"timeoutMs": 30000, "graceMs": 3000, "limit": 10}, "trace": {"timeoutMs": 30000, "graceMs": 3000, "maxFiles": 5, "maxRegions": 6}, "shell": {`), written);
	assert.ok(written.endsWith(`"onQuit": "kill", "maxLogBytes": 67108864, "logRetentionDays": 7}, "index": {"enabled": true, "minFiles": 1000, "maxFiles": 500000, "maxDiskMB": 2048}, "disabledTools": []}`), written);
	assert.ok(!written.includes("\n"), "still one line");
});

test("an empty object and an empty section are filled", (t) => {
	const { dir, file } = withFile(t, `{\n  "grep": {}\n}\n`);
	loadSettings(dir);
	assert.equal(read(file), `{\n  ${GREP_FULL},\n  ${GLOB_FULL},\n  ${LOCATE_FULL},\n  ${TRACE_FULL},\n  ${SHELL_FULL},\n  ${INDEX_FULL},\n  "disabledTools": []\n}\n`);

	const bare = withFile(t, "{}");
	loadSettings(bare.dir);
	assert.equal(read(bare.file), SCAFFOLD.trimEnd());
});

test("an invalid value keeps its bytes, the default applies in memory, and the warning names section.key", (t) => {
	const before = `{\n  "grep": {\n    "timeoutMs": "fast",\n    "graceMs": 3000,\n    "noIgnore": "yes",\n    "limit": 0,\n    "maxLineLength": 1.5,\n    "maxBytes": 51200\n  },\n  ${GLOB_FULL},\n  ${LOCATE_FULL},\n  ${TRACE_FULL},\n  "shell": {\n    "foregroundTimeoutSec": 600,\n    "autoBackgroundAfterSec": 120,\n    "maxBackgroundJobs": -1,\n    "killGraceMs": 3000,\n    "onQuit": "stop",\n    "maxLogBytes": 67108864,\n    "logRetentionDays": 7\n  },\n  ${INDEX_FULL},\n  "disabledTools": []\n}\n`;
	const { dir, file } = withFile(t, before);
	const r = loadSettings(dir);
	assert.equal(read(file), before);
	assert.deepEqual(r.repaired, []);
	assert.deepEqual(r.settings, DEFAULT_SETTINGS);
	for (const key of ["grep.timeoutMs", "grep.noIgnore", "grep.limit", "grep.maxLineLength", "shell.maxBackgroundJobs", "shell.onQuit"]) {
		assert.ok(r.warnings.some((w) => w.includes(key) && w.includes(file)), `warning for ${key}: ${r.warnings.join("\n")}`);
	}
	assert.equal(r.warnings.length, 6);
});

test("a bad number is explained in words: a positive whole number, with a bound only where one could be reached", (t) => {
	const { dir, file } = withFile(t, `{"grep": {"limit": 0, "timeoutMs": 1.5, "graceMs": -1}}`);
	const r = loadSettings(dir);
	assert.deepEqual(r.warnings, [
		`${file}: grep.limit must be a positive whole number (got 0); using 100`,
		`${file}: grep.timeoutMs must be a positive whole number up to 2147483647 (got 1.5); using 30000`,
		`${file}: grep.graceMs must be a whole number from 0 to 2147483647 (got -1); using 3000`,
	]);
});

test("delays beyond Node's 2^31-1 ms timer limit are rejected, the limit itself accepted", (t) => {
	const { dir } = withFile(t, `{"grep": {"timeoutMs": 2147483648, "graceMs": 2147483647}, "shell": {"foregroundTimeoutSec": 2147484}}`);
	const r = loadSettings(dir);
	assert.equal(r.settings.grep.timeoutMs, 30000);
	assert.equal(r.settings.grep.graceMs, 2147483647);
	assert.equal(r.settings.shell.foregroundTimeoutSec, 600);
	assert.ok(r.warnings.some((w) => w.includes("grep.timeoutMs")));
	assert.ok(r.warnings.some((w) => w.includes("shell.foregroundTimeoutSec")));
});

test("an invalid value stays on disk while missing keys of the same section are added", (t) => {
	const before = `{\n  "glob": {\n    "limit": "lots"\n  },\n  ${GREP_FULL},\n  ${LOCATE_FULL},\n  ${TRACE_FULL},\n  ${SHELL_FULL},\n  ${INDEX_FULL},\n  "disabledTools": []\n}\n`;
	const { dir, file } = withFile(t, before);
	const r = loadSettings(dir);
	const after = before.replace(`"limit": "lots"\n`, `"limit": "lots",\n    "timeoutMs": 10000,\n    "graceMs": 2000,\n    "noIgnore": true\n`);
	assert.equal(read(file), after);
	assert.equal(r.settings.glob.limit, 200);
	assert.ok(r.warnings.some((w) => w.includes("glob.limit")));
});

test("a section that is not an object is an invalid value: defaults for it, bytes untouched", (t) => {
	const before = `{\n  "grep": 5,\n  ${GLOB_FULL},\n  ${LOCATE_FULL},\n  ${TRACE_FULL},\n  ${SHELL_FULL},\n  ${INDEX_FULL},\n  "disabledTools": []\n}\n`;
	const { dir, file } = withFile(t, before);
	const r = loadSettings(dir);
	assert.equal(read(file), before);
	assert.deepEqual(r.repaired, []);
	assert.deepEqual(r.settings.grep, DEFAULT_SETTINGS.grep);
	assert.ok(r.warnings.some((w) => w.includes("grep must be an object")));
});

test("unknown keys, odd numbers and duplicate keys survive byte for byte", (t) => {
	const before = `{\n  "myNote": "keep me",\n  "big": 12345678901234567890,\n  "huge": 1e400,\n  "grep": {"custom": [1, 2], "limit": 3},\n  "grep": {"limit": 4}\n}\n`;
	const { dir, file } = withFile(t, before);
	const r = loadSettings(dir);
	const after = `{\n  "myNote": "keep me",\n  "big": 12345678901234567890,\n  "huge": 1e400,\n  "grep": {"custom": [1, 2], "limit": 3},\n  "grep": {"limit": 4, "timeoutMs": 30000, "graceMs": 3000, "noIgnore": true, "maxLineLength": 500, "maxBytes": 51200},\n  ${GLOB_FULL},\n  ${LOCATE_FULL},\n  ${TRACE_FULL},\n  ${SHELL_FULL},\n  ${INDEX_FULL},\n  "disabledTools": []\n}\n`;
	assert.equal(read(file), after);
	assert.equal(r.settings.grep.limit, 4, "the last duplicate wins, as in JSON.parse");
	assert.ok(r.warnings.some((w) => w.includes('"myNote" is not a known setting')));
});

test("comment-style keys are kept without a warning", (t) => {
	const { dir } = withFile(t, `{"_comment": "mine", "grep": {"// why": "slow disk", "timeoutMs": 60000}}`);
	const r = loadSettings(dir);
	assert.deepEqual(r.warnings, []);
	assert.equal(r.settings.grep.timeoutMs, 60000);
});

test("line endings and a byte-order mark are preserved", (t) => {
	const before = `\uFEFF{\r\n  "grep": {\r\n    "limit": 1\r\n  }\r\n}\r\n`;
	const { dir, file } = withFile(t, before);
	loadSettings(dir);
	const after = read(file);
	assert.ok(after.startsWith(`\uFEFF{\r\n  "grep": {\r\n    "limit": 1,\r\n    "timeoutMs": 30000,\r\n`), after);
	assert.ok(!/[^\r]\n/.test(after), "every newline is CRLF");
	assert.ok(after.endsWith(`    "maxDiskMB": 2048\r\n  },\r\n  "disabledTools": []\r\n}\r\n`), after);
});

test("a present disabledTools array is kept as is, however it is formatted", (t) => {
	const before = `{\n  "disabledTools": [ "glob",\n      "shell_*"  ,"bash"]\n}\n`;
	const { dir, file } = withFile(t, before);
	const r = loadSettings(dir);
	assert.equal(read(file), `{\n  "disabledTools": [ "glob",\n      "shell_*"  ,"bash"],\n  ${GREP_FULL},\n  ${GLOB_FULL},\n  ${LOCATE_FULL},\n  ${TRACE_FULL},\n  ${SHELL_FULL},\n  ${INDEX_FULL}\n}\n`);
	assert.ok(!r.repaired.includes("disabledTools"));
	assert.deepEqual(r.settings.disabledTools, ["glob", "shell_status", "shell_kill", "bash"]);
});

test("a parse error leaves the bytes identical and warns once with file, line and column", (t) => {
	const before = `{\n  "grep": {\n    "limit": 5,\n  }\n}\n`;
	const { dir, file } = withFile(t, before);
	const r = loadSettings(dir);
	assert.equal(read(file), before);
	assert.equal(r.created, false);
	assert.deepEqual(r.repaired, []);
	assert.deepEqual(r.settings, DEFAULT_SETTINGS);
	assert.equal(r.warnings.length, 1);
	assert.ok(r.warnings[0].startsWith(file), r.warnings[0]);
	assert.equal(
		r.warnings[0],
		`${file}: invalid JSON at line 4, column 3 (Expected double-quoted property name); using defaults and leaving the file untouched`,
		"the position is stated once, as line and column (Node adds its own, worded by version)",
	);
});

test("positions are given even where Node's message has none", (t) => {
	const cases: [string, RegExp][] = [
		[`{"a":tru}`, /line 1, column 9/], // V8: "Unexpected token '}'" without a position
		[`{\n  "grep": {\n`, /line 3, column 1/], // truncated file: end of input
		[`{"a": 01}`, /line 1, column 8/],
		[`{"a": "x\ty"}`, /line 1, column 9/], // raw tab inside a string
	];
	for (const [text, where] of cases) {
		const { dir, file } = withFile(t, text);
		const r = loadSettings(dir);
		assert.equal(read(file), text);
		assert.match(r.warnings[0] ?? "", where, `${JSON.stringify(text)} -> ${r.warnings[0]}`);
	}
});

test("a top-level value that is not an object is never rewritten", (t) => {
	for (const text of [`["glob"]\n`, `42`, `null`]) {
		const { dir, file } = withFile(t, text);
		const r = loadSettings(dir);
		assert.equal(read(file), text);
		assert.deepEqual(r.settings, DEFAULT_SETTINGS);
		assert.match(r.warnings[0] ?? "", /must be a JSON object/);
	}
});

test("best effort: a read-only file is not rewritten, defaults still apply, no warning", (t) => {
	const before = `{"grep": {"limit": 3}}`;
	const { dir, file } = withFile(t, before);
	chmodSync(file, 0o444);
	const r = loadSettings(dir);
	assert.equal(read(file), before);
	assert.equal(statSync(file).mode & 0o777, 0o444);
	assert.deepEqual(r.repaired, [], "repaired lists only what reached the disk");
	assert.deepEqual(r.warnings, []);
	assert.equal(r.settings.grep.limit, 3);
	assert.equal(r.settings.grep.timeoutMs, 30000);
});

test("best effort: a read-only directory is not written to (merge and scaffold)", (t) => {
	// Root bypasses permission bits; the loader honours the bits itself, so this holds as root too.
	const before = `{"grep": {"limit": 3}}`;
	const { dir, file } = withFile(t, before);
	chmodSync(dir, 0o555);
	const r = loadSettings(dir);
	assert.equal(read(file), before);
	assert.deepEqual(r.repaired, []);
	assert.deepEqual(readdirSync(dir), ["pi-utils.json"]);

	const empty = tempAgentDir(t);
	chmodSync(empty, 0o555);
	const s = loadSettings(empty);
	assert.equal(s.created, false);
	assert.equal(existsSync(join(empty, "pi-utils.json")), false);
	assert.deepEqual(s.settings, DEFAULT_SETTINGS);
});

test("best effort: a real write error (agent dir under a regular file) never throws", (t) => {
	const base = tempAgentDir(t);
	writeFileSync(join(base, "not-a-dir"), "x");
	const dir = join(base, "not-a-dir", "agent");
	const r = loadSettings(dir);
	assert.equal(r.created, false);
	assert.deepEqual(r.settings, DEFAULT_SETTINGS);
	assert.equal(read(join(base, "not-a-dir")), "x");
});

test("the write goes through a symlink to its target and keeps the file's mode", (t) => {
	const dir = tempAgentDir(t);
	const dotfiles = join(dir, "dotfiles");
	mkdirSync(dotfiles);
	const real = join(dotfiles, "pi-utils.json");
	writeFileSync(real, `{"grep": {"limit": 3}}`);
	chmodSync(real, 0o600);
	const agent = join(dir, "agent");
	mkdirSync(agent);
	symlinkSync(real, join(agent, "pi-utils.json"));
	const r = loadSettings(agent);
	assert.ok(lstatSync(join(agent, "pi-utils.json")).isSymbolicLink(), "link preserved");
	assert.ok(read(real).startsWith(`{"grep": {"limit": 3, "timeoutMs": 30000`));
	assert.equal(statSync(real).mode & 0o777, 0o600);
	assert.deepEqual(readdirSync(dotfiles), ["pi-utils.json"]);
	// grep's five missing keys, then glob, locate, trace, shell, index and disabledTools.
	assert.equal(r.repaired.length, 11);
});

test("prefix wildcards expand to known tool names; gates are exact-match", (t) => {
	const { dir } = withFile(t, `{"disabledTools": ["glob", "shell_*", "shell_kill"]}`);
	const r = loadSettings(dir);
	assert.deepEqual(r.settings.disabledTools, ["glob", "shell_status", "shell_kill"]);
	assert.deepEqual(r.warnings, []);
	assert.equal(isToolEnabled(r.settings, "glob"), false);
	assert.equal(isToolEnabled(r.settings, "shell_status"), false);
	assert.equal(isToolEnabled(r.settings, "shell_"), true);
	assert.equal(isToolEnabled(r.settings, "grep"), true);
	assert.equal(isToolEnabled(r.settings, "bash"), true);

	const all = withFile(t, `{"disabledTools": ["*"]}`);
	assert.deepEqual(loadSettings(all.dir).settings.disabledTools, [...KNOWN_TOOLS]);
});

test("malformed wildcards are dropped with a warning; unknown names kept with a warning", (t) => {
	const before = `{"disabledTools": ["*x", "a*b", "sh**", "bash", "frobnicate", "zz*", 7]}`;
	const { dir, file } = withFile(t, before);
	const r = loadSettings(dir);
	assert.deepEqual(r.settings.disabledTools, ["bash", "frobnicate"]);
	for (const bad of ["*x", "a*b", "sh**"]) {
		assert.ok(r.warnings.some((w) => w.includes(`"${bad}" is malformed`)), `warning for ${bad}`);
	}
	assert.ok(r.warnings.some((w) => w.includes(`"frobnicate" is not a known tool`)));
	assert.ok(r.warnings.some((w) => w.includes(`"zz*" matches no known tool`)));
	assert.ok(r.warnings.some((w) => w.includes("7 is not a string")));
	assert.ok(read(file).startsWith(before.slice(0, -1)), "the array itself is untouched");
});

test("takeWarningsOnce hands each warning out once per session, shared through globalThis", async (t) => {
	const { dir } = withFile(t, `{"grep": {"limit": "many"}, "shell": {"onQuit": "never"}}`);
	const r = loadSettings(dir);
	assert.equal(r.warnings.length, 2);
	const session = `session-${process.pid}-${Date.now()}`;
	assert.deepEqual(takeWarningsOnce(r, session), r.warnings);
	assert.deepEqual(takeWarningsOnce(loadSettings(dir), session), [], "second extension, same session");
	assert.deepEqual(takeWarningsOnce(r, `${session}-next`), r.warnings, "a new session warns again");

	// Each extension may load its own copy of the module; the shared set must still dedupe.
	const copy = (await import(`../extensions/lib/settings.ts?copy=${Date.now()}`)) as typeof import("../extensions/lib/settings.ts");
	assert.notEqual(copy.takeWarningsOnce, takeWarningsOnce);
	const session2 = `${session}-copy`;
	assert.deepEqual(takeWarningsOnce(r, session2), r.warnings);
	assert.deepEqual(copy.takeWarningsOnce(r, session2), []);
	const seen = (globalThis as unknown as Record<symbol, Set<string>>)[Symbol.for("pi-utils.settings.warned")];
	assert.ok(seen instanceof Set && seen.size >= 6);
});

test("results never share objects with DEFAULT_SETTINGS", (t) => {
	const { dir } = withFile(t, "{}");
	const a: SettingsLoadResult = loadSettings(dir);
	a.settings.grep.limit = 1;
	a.settings.disabledTools.push("grep");
	assert.equal(DEFAULT_SETTINGS.grep.limit, 100);
	assert.deepEqual(DEFAULT_SETTINGS.disabledTools, []);
	assert.ok(Object.isFrozen(DEFAULT_SETTINGS.grep));
});
