// Settings loader for both extensions: one `<agentDir>/pi-utils.json`. The default values live in
// defaults.mjs (shared with the CLI); this file owns the file format, validation and repair.
//
// Contract: the file is scaffolded with every
// default when absent; missing keys are added to disk; nothing the user wrote is ever changed or
// removed. Missing keys are inserted as text into the original bytes instead of re-serializing the
// parsed object, because a re-serialization would reformat arrays, collapse duplicate keys and
// rewrite numbers JSON.parse cannot represent exactly (e.g. 12345678901234567890, 1e400 -> null).

import { closeSync, existsSync, fchmodSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, statSync, unlinkSync, writeSync, accessSync, constants as fsConstants } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { DEFAULTS } from "./defaults.mjs";

export const KNOWN_TOOLS: readonly string[] = Object.freeze(["grep", "glob", "outline", "locate", "trace", "bash", "shell_status", "shell_kill"]);

export interface GrepSettings { timeoutMs: number; graceMs: number; noIgnore: boolean; limit: number; maxLineLength: number; maxBytes: number }
export interface GlobSettings { timeoutMs: number; graceMs: number; limit: number; noIgnore: boolean }
export interface ShellSettings { foregroundTimeoutSec: number; autoBackgroundAfterSec: number; maxBackgroundJobs: number; killGraceMs: number; onQuit: "kill" | "keep"; maxLogBytes: number; logRetentionDays: number }
export interface LocateSettings { timeoutMs: number; graceMs: number; limit: number }
export interface TraceSettings { timeoutMs: number; graceMs: number; maxFiles: number; maxRegions: number }
export interface IndexSettings { enabled: boolean; minFiles: number; maxFiles: number; maxDiskMB: number }
export interface PiUtilsSettings { grep: GrepSettings; glob: GlobSettings; locate: LocateSettings; trace: TraceSettings; shell: ShellSettings; index: IndexSettings; disabledTools: string[] }

export interface SettingsLoadResult {
	settings: PiUtilsSettings;
	/** The settings file this result describes. */
	path: string;
	/** True only when this call wrote a fresh scaffold. */
	created: boolean;
	/** Keys written to disk by this call: `section.key`, or `section` for a whole missing section. Empty when the write was skipped. */
	repaired: string[];
	/** Human-readable problems, each naming the file; show them once per session (see takeWarningsOnce). */
	warnings: string[];
}

function deepFreeze<T>(value: T): T {
	if (value && typeof value === "object") {
		for (const v of Object.values(value)) deepFreeze(v);
		Object.freeze(value);
	}
	return value;
}

export const DEFAULT_SETTINGS: PiUtilsSettings = deepFreeze({
	grep: { ...DEFAULTS.grep },
	glob: { ...DEFAULTS.glob },
	locate: { ...DEFAULTS.locate },
	trace: { ...DEFAULTS.trace },
	shell: { ...DEFAULTS.shell },
	index: { ...DEFAULTS.index },
	disabledTools: [],
});

// Same rule as Pi's getAgentDir(), so our file sits next to Pi's own settings.json.
export function agentDir(env: NodeJS.ProcessEnv = process.env): string {
	const dir = env.PI_CODING_AGENT_DIR;
	if (dir) {
		if (dir === "~") return homedir();
		if (dir.startsWith("~/")) return homedir() + dir.slice(1);
		return dir;
	}
	return join(homedir(), ".pi", "agent");
}

export function settingsPath(dir: string = agentDir()): string {
	return join(dir, "pi-utils.json");
}

export function isToolEnabled(settings: PiUtilsSettings, name: string): boolean {
	return !settings.disabledTools.includes(name);
}

const WARNED = Symbol.for("pi-utils.settings.warned");

/** Both extensions load settings in one process; this keeps each warning to one notice per session. */
export function takeWarningsOnce(result: SettingsLoadResult, sessionKey: string): string[] {
	const store = globalThis as unknown as Record<symbol, Set<string> | undefined>;
	const seen = (store[WARNED] ??= new Set<string>());
	const fresh: string[] = [];
	for (const warning of result.warnings) {
		const key = `${sessionKey}\u0000${warning}`;
		if (seen.has(key)) continue;
		seen.add(key);
		fresh.push(warning);
	}
	return fresh;
}

// ---------------------------------------------------------------- validation

type Check = (v: unknown) => string | null;

// Node's timers fire immediately for delays above 2^31-1 ms, so larger values would be a silent zero.
const MAX_MS = 2 ** 31 - 1;
const MAX_SEC = Math.floor(MAX_MS / 1000);

// Worded for people, not programmers; a bound nobody could reach (2^53-1) is not worth naming.
const intIn = (min: number, max: number): Check => (v) => {
	if (typeof v === "number" && Number.isInteger(v) && v >= min && v <= max) return null;
	if (min === 0) return `must be a whole number from 0 to ${max}`;
	return max === Number.MAX_SAFE_INTEGER ? "must be a positive whole number" : `must be a positive whole number up to ${max}`;
};
const bool: Check = (v) => (typeof v === "boolean" ? null : "must be true or false");
const oneOf = (...options: string[]): Check => (v) =>
	typeof v === "string" && options.includes(v) ? null : `must be one of ${options.map((o) => JSON.stringify(o)).join(", ")}`;

const SCHEMA: { [S in "grep" | "glob" | "locate" | "trace" | "shell" | "index"]: { [K in keyof PiUtilsSettings[S]]: Check } } = {
	grep: { timeoutMs: intIn(1, MAX_MS), graceMs: intIn(0, MAX_MS), noIgnore: bool, limit: intIn(1, Number.MAX_SAFE_INTEGER), maxLineLength: intIn(1, Number.MAX_SAFE_INTEGER), maxBytes: intIn(1, Number.MAX_SAFE_INTEGER) },
	glob: { timeoutMs: intIn(1, MAX_MS), graceMs: intIn(0, MAX_MS), limit: intIn(1, Number.MAX_SAFE_INTEGER), noIgnore: bool },
	locate: { timeoutMs: intIn(1, MAX_MS), graceMs: intIn(0, MAX_MS), limit: intIn(1, Number.MAX_SAFE_INTEGER) },
	trace: { timeoutMs: intIn(1, MAX_MS), graceMs: intIn(0, MAX_MS), maxFiles: intIn(1, Number.MAX_SAFE_INTEGER), maxRegions: intIn(1, Number.MAX_SAFE_INTEGER) },
	shell: { foregroundTimeoutSec: intIn(1, MAX_SEC), autoBackgroundAfterSec: intIn(1, MAX_SEC), maxBackgroundJobs: intIn(1, Number.MAX_SAFE_INTEGER), killGraceMs: intIn(0, MAX_MS), onQuit: oneOf("kill", "keep"), maxLogBytes: intIn(2 * 1024 * 1024, Number.MAX_SAFE_INTEGER), logRetentionDays: intIn(1, 36500) },
	index: { enabled: bool, minFiles: intIn(0, 2 ** 32 - 1), maxFiles: intIn(1, 2 ** 32 - 1), maxDiskMB: intIn(1, 2 ** 32 - 1) },
};
const SECTIONS = Object.keys(SCHEMA) as (keyof typeof SCHEMA)[];
const TOP_KEYS = [...SECTIONS, "disabledTools"];

function isPlainObject(v: unknown): v is Record<string, unknown> {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

function show(v: unknown): string {
	const s = JSON.stringify(v) ?? String(v);
	return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

// Keys starting with these are the usual JSON stand-ins for comments; warning about them would nag.
const isCommentKey = (k: string) => k.startsWith("_") || k.startsWith("$") || k.startsWith("//");

function cloneDefaults(): PiUtilsSettings {
	return { grep: { ...DEFAULT_SETTINGS.grep }, glob: { ...DEFAULT_SETTINGS.glob }, locate: { ...DEFAULT_SETTINGS.locate }, trace: { ...DEFAULT_SETTINGS.trace }, shell: { ...DEFAULT_SETTINGS.shell }, index: { ...DEFAULT_SETTINGS.index }, disabledTools: [] };
}

function validate(raw: Record<string, unknown>, warn: (msg: string) => void): PiUtilsSettings {
	const settings = cloneDefaults();
	for (const key of Object.keys(raw)) {
		if (!TOP_KEYS.includes(key) && !isCommentKey(key)) warn(`"${key}" is not a known setting (kept, ignored)`);
	}
	for (const section of SECTIONS) {
		if (!Object.hasOwn(raw, section)) continue;
		const value = raw[section];
		if (!isPlainObject(value)) {
			warn(`${section} must be an object (got ${show(value)}); using defaults for ${section}`);
			continue;
		}
		const checks = SCHEMA[section] as Record<string, Check>;
		const target = settings[section] as unknown as Record<string, unknown>;
		for (const key of Object.keys(value)) {
			if (!Object.hasOwn(checks, key)) {
				if (!isCommentKey(key)) warn(`${section}.${key} is not a known setting (kept, ignored)`);
				continue;
			}
			const problem = checks[key](value[key]);
			if (problem) warn(`${section}.${key} ${problem} (got ${show(value[key])}); using ${show(target[key])}`);
			else target[key] = value[key];
		}
	}
	if (Object.hasOwn(raw, "disabledTools")) settings.disabledTools = expandDisabledTools(raw.disabledTools, warn);
	return settings;
}

function expandDisabledTools(value: unknown, warn: (msg: string) => void): string[] {
	if (!Array.isArray(value)) {
		warn(`disabledTools must be an array of tool names (got ${show(value)}); no tools disabled`);
		return [];
	}
	const out = new Set<string>();
	for (const entry of value) {
		if (typeof entry !== "string") {
			warn(`disabledTools entry ${show(entry)} is not a string; ignored`);
			continue;
		}
		const star = entry.indexOf("*");
		if (star === -1) {
			if (!KNOWN_TOOLS.includes(entry)) warn(`disabledTools entry "${entry}" is not a known tool (known: ${KNOWN_TOOLS.join(", ")})`);
			out.add(entry);
		} else if (star === entry.length - 1) {
			const prefix = entry.slice(0, -1);
			const matches = KNOWN_TOOLS.filter((t) => t.startsWith(prefix));
			if (matches.length === 0) warn(`disabledTools pattern "${entry}" matches no known tool (known: ${KNOWN_TOOLS.join(", ")})`);
			for (const m of matches) out.add(m);
		} else {
			warn(`disabledTools entry "${entry}" is malformed: "*" is only allowed at the end; ignored`);
		}
	}
	return [...out];
}

// ---------------------------------------------------------------- JSON spans

/** `colon` is the text from the key's closing quote to its value (`": "`, `":"`): the file's own spacing. */
interface Member { key: string; keyStart: number; colon: string; valueEnd: number; node?: ObjectNode }
interface ObjectNode { open: number; close: number; members: Member[]; byKey: Map<string, Member> }

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

class JsonSyntaxError extends Error {
	constructor(readonly pos: number) { super(`JSON syntax error at ${pos}`); }
}

/**
 * Strict JSON scanner that records where each object's members sit. JSON.parse stays the authority
 * on values; this exists because Node gives no spans, and its error message omits the position
 * for some errors (e.g. `Unexpected token '}'`) and words it differently across versions.
 */
function scanJson(text: string): ObjectNode | null {
	let i = 0;
	let root: ObjectNode | null = null;
	const fail = (): never => { throw new JsonSyntaxError(i); };
	const ws = () => { while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++; };
	const string = () => {
		i++; // opening quote
		for (;;) {
			if (i >= text.length) fail();
			const c = text.charCodeAt(i);
			if (c === 0x22) { i++; return; }
			if (c < 0x20) fail();
			if (c === 0x5c) {
				i++;
				const e = text[i];
				if (e === "u") {
					for (let k = 1; k <= 4; k++) { if (!/[0-9a-fA-F]/.test(text[i + k] ?? "")) { i += k; fail(); } }
					i += 5;
				} else if (e !== undefined && "\"\\/bfnrt".includes(e)) i++;
				else fail();
			} else i++;
		}
	};
	const number = () => {
		NUMBER.lastIndex = i;
		const m = NUMBER.exec(text);
		if (!m) fail();
		i += m![0].length;
		// A number glued to a letter/dot/digit (`01`, `1.`, `1e`) is a syntax error at that char.
		if (i < text.length && /[0-9.eE+\-]/.test(text[i])) fail();
	};
	const literal = (word: string) => {
		for (let k = 0; k < word.length; k++, i++) if (text[i] !== word[k]) fail();
	};
	const value = (): ObjectNode | undefined => {
		ws();
		const c = text[i];
		if (c === "{") return object();
		if (c === "[") {
			i++; ws();
			if (text[i] === "]") { i++; return; }
			for (;;) {
				value(); ws();
				if (text[i] === ",") { i++; continue; }
				if (text[i] === "]") { i++; return; }
				fail();
			}
		}
		if (c === "\"") return void string();
		if (c === "t") return void literal("true");
		if (c === "f") return void literal("false");
		if (c === "n") return void literal("null");
		if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return void number();
		fail();
	};
	const object = (): ObjectNode => {
		const node: ObjectNode = { open: i, close: -1, members: [], byKey: new Map() };
		i++; ws();
		if (text[i] === "}") { node.close = i++; return node; }
		for (;;) {
			ws();
			if (text[i] !== "\"") fail();
			const keyStart = i;
			string();
			const keyEnd = i;
			const key = JSON.parse(text.slice(keyStart, i)) as string;
			ws();
			if (text[i] !== ":") fail();
			i++;
			ws();
			const colon = text.slice(keyEnd, i);
			const child = value();
			const member: Member = { key, keyStart, colon, valueEnd: i, node: child };
			node.members.push(member);
			node.byKey.set(key, member); // last duplicate wins, as in JSON.parse
			ws();
			if (text[i] === ",") { i++; continue; }
			if (text[i] === "}") { node.close = i++; return node; }
			fail();
		}
	};
	ws();
	if (text[i] === "{") root = object();
	else value();
	ws();
	if (i < text.length) fail();
	return root;
}

function syntaxErrorPos(text: string, message: string): number | null {
	try {
		scanJson(text);
	} catch (e) {
		if (e instanceof JsonSyntaxError) return e.pos;
	}
	const m = /at position (\d+)/.exec(message);
	return m ? Number(m[1]) : null;
}

/**
 * Node's JSON.parse message without the position it appends (`in JSON at position 25 (line 2 column 24)`,
 * worded differently across Node versions): the warning states the position once, as line and column.
 */
function withoutPosition(message: string): string {
	return message.replace(/(?: in JSON)? at position \d+(?: \(line \d+ column \d+\))?/, "");
}

function lineColumn(text: string, pos: number): { line: number; column: number } {
	const before = text.slice(0, pos);
	const line = before.split("\n").length;
	return { line, column: pos - (before.lastIndexOf("\n") + 1) + 1 };
}

// ---------------------------------------------------------------- merge-missing as text edits

interface Edit { pos: number; text: string }

function leadingWhitespace(text: string, pos: number): string {
	const lineStart = text.lastIndexOf("\n", pos - 1) + 1;
	return /^[ \t]*/.exec(text.slice(lineStart, pos))![0];
}

interface InlineStyle { colon: string; comma: string }

/**
 * How an object written on one line spaces its members: `{"a":1,"b":2}` or `{"a": 1, "b": 2}`, read from
 * its last member (and the comma before it, when there is one), so that inserted members look the same.
 */
function inlineStyle(text: string, node: ObjectNode): InlineStyle {
	const last = node.members.at(-1)!;
	const prev = node.members.at(-2);
	const spaced = (s: string) => /\s$/.test(s);
	const colon = spaced(last.colon) ? ": " : ":";
	const between = prev ? text.slice(prev.valueEnd, last.keyStart) : colon;
	return { colon, comma: spaced(between) ? ", " : "," };
}

/** JSON on one line with the given member spacing (JSON.stringify's own is always the tight one). */
function inlineJson(value: unknown, style: InlineStyle): string {
	if (Array.isArray(value)) return `[${value.map((v) => inlineJson(v, style)).join(style.comma)}]`;
	if (isPlainObject(value)) {
		return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}${style.colon}${inlineJson(v, style)}`).join(style.comma)}}`;
	}
	return JSON.stringify(value);
}

/** The text to insert so `entries` become the last members of `node`, in the style of its siblings. */
function insertion(text: string, node: ObjectNode, entries: [string, unknown][], unit: string, eol: string): Edit {
	const render = (indent: string, [k, v]: [string, unknown]) =>
		`${indent}${JSON.stringify(k)}: ${JSON.stringify(v, null, unit).replace(/\n/g, eol + indent)}`;
	const last = node.members.at(-1);
	if (last) {
		const lineStart = text.lastIndexOf("\n", last.keyStart - 1) + 1;
		const indent = text.slice(lineStart, last.keyStart);
		const ownLine = lineStart > node.open && /^[ \t]*$/.test(indent);
		if (ownLine) return { pos: last.valueEnd, text: entries.map((e) => `,${eol}${render(indent, e)}`).join("") };
		const style = inlineStyle(text, node);
		return { pos: last.valueEnd, text: entries.map(([k, v]) => `${style.comma}${inlineJson(k, style)}${style.colon}${inlineJson(v, style)}`).join("") };
	}
	const outer = leadingWhitespace(text, node.open);
	const inner = text.slice(node.open + 1, node.close);
	const body = eol + entries.map((e) => render(outer + unit, e)).join(`,${eol}`) + (inner.includes("\n") ? "" : eol + outer);
	return { pos: node.open + 1, text: body };
}

/** Edits that add every missing section/key; `repaired` names them. Never touches present values. */
function planMerge(text: string, root: ObjectNode, raw: Record<string, unknown>): { edits: Edit[]; repaired: string[] } {
	const eol = text.includes("\r\n") ? "\r\n" : "\n";
	const firstOwnLine = root.members.find((m) => text.lastIndexOf("\n", m.keyStart - 1) + 1 > root.open);
	const found = firstOwnLine ? leadingWhitespace(text, firstOwnLine.keyStart) : "";
	const unit = found || "  ";
	const edits: Edit[] = [];
	const repaired: string[] = [];
	const topMissing: [string, unknown][] = [];
	for (const key of TOP_KEYS) {
		const def = DEFAULT_SETTINGS[key as keyof PiUtilsSettings];
		if (!Object.hasOwn(raw, key)) {
			topMissing.push([key, def]);
			repaired.push(key);
			continue;
		}
		const member = root.byKey.get(key);
		if (Array.isArray(def) || !isPlainObject(raw[key]) || !member?.node) continue;
		const present = raw[key] as Record<string, unknown>;
		const missing = Object.entries(def).filter(([k]) => !Object.hasOwn(present, k));
		if (missing.length === 0) continue;
		edits.push(insertion(text, member.node, missing, unit, eol));
		for (const [k] of missing) repaired.push(`${key}.${k}`);
	}
	if (topMissing.length) edits.push(insertion(text, root, topMissing, unit, eol));
	return { edits, repaired };
}

function applyEdits(text: string, edits: Edit[]): string {
	let out = text;
	for (const e of [...edits].sort((a, b) => b.pos - a.pos)) out = out.slice(0, e.pos) + e.text + out.slice(e.pos);
	return out;
}

/** Belt and braces: refuse a write unless every original value and key order survives and nothing is missing. */
function mergeIsSafe(before: Record<string, unknown>, afterText: string): boolean {
	let after: unknown;
	try { after = JSON.parse(afterText); } catch { return false; }
	if (!isPlainObject(after)) return false;
	const keep = (a: Record<string, unknown>, b: Record<string, unknown>) => {
		const ka = Object.keys(a), kb = Object.keys(b);
		return ka.every((k, idx) => kb[idx] === k);
	};
	if (!keep(before, after)) return false;
	for (const key of Object.keys(before)) {
		const b = before[key], a = after[key];
		if (isPlainObject(b) && isPlainObject(a) && (SECTIONS as string[]).includes(key)) {
			if (!keep(b, a) || !Object.keys(b).every((k) => isDeepStrictEqual(a[k], b[k]))) return false;
			if (!Object.keys(DEFAULT_SETTINGS[key as keyof typeof SCHEMA]).every((k) => Object.hasOwn(a, k))) return false;
		} else if (!isDeepStrictEqual(a, b)) return false;
	}
	return TOP_KEYS.every((k) => Object.hasOwn(after as object, k));
}

// ---------------------------------------------------------------- disk

// Root ignores permission bits, so honour them ourselves: a user who chmods the file or directory
// read-only has asked us not to write, whoever runs Pi.
function writable(path: string): boolean {
	try {
		if ((statSync(path).mode & 0o222) === 0) return false;
		accessSync(path, fsConstants.W_OK);
		return true;
	} catch {
		return false;
	}
}

/**
 * Temp file in the target's directory, fsync, then rename (or link when `noClobber`, which fails if
 * another process created the file first). Returns "ok", "exists" or "failed"; never throws.
 */
function writeAtomic(target: string, text: string, opts: { mode?: number; noClobber?: boolean; expect?: string }): "ok" | "exists" | "failed" {
	const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
	let fd: number | undefined;
	try {
		fd = openSync(tmp, "wx", opts.mode ?? 0o644);
		if (opts.mode !== undefined) fchmodSync(fd, opts.mode); // openSync's mode is masked by umask
		writeSync(fd, text);
		fsyncSync(fd);
		closeSync(fd);
		fd = undefined;
		if (opts.noClobber) {
			try {
				linkSync(tmp, target);
			} catch (e) {
				if ((e as NodeJS.ErrnoException).code === "EEXIST" || existsSync(target)) return "exists";
				renameSync(tmp, target); // filesystems without hard links: accept the tiny clobber window
				return "ok";
			}
		} else {
			// A concurrent edit since we read would be lost by the rename; leave such a file alone.
			if (opts.expect !== undefined && readFileSync(target, "utf8") !== opts.expect) return "failed";
			renameSync(tmp, target);
		}
		return "ok";
	} catch {
		return "failed";
	} finally {
		if (fd !== undefined) try { closeSync(fd); } catch { /* already failing */ }
		try { unlinkSync(tmp); } catch { /* renamed away, or never created */ }
	}
}

function scaffoldText(): string {
	return JSON.stringify(DEFAULT_SETTINGS, null, 2) + "\n";
}

/** Synchronous and never throws: any problem becomes a warning and the defaults. */
export function loadSettings(dir: string = agentDir()): SettingsLoadResult {
	const path = settingsPath(dir);
	const result: SettingsLoadResult = { settings: cloneDefaults(), path, created: false, repaired: [], warnings: [] };
	const warn = (msg: string) => result.warnings.push(`${path}: ${msg}`);
	try {
		for (let attempt = 0; attempt < 2; attempt++) {
			let original: string;
			try {
				original = readFileSync(path, "utf8");
			} catch (e) {
				const code = (e as NodeJS.ErrnoException).code;
				if (code !== "ENOENT") {
					warn(`cannot read settings (${code ?? (e as Error).message}); using defaults`);
					return result;
				}
				try { mkdirSync(dir, { recursive: true }); } catch { return result; }
				if (!writable(dir)) return result;
				const outcome = writeAtomic(path, scaffoldText(), { noClobber: true });
				if (outcome === "exists") continue; // another process won the race: load what it wrote
				result.created = outcome === "ok";
				return result;
			}
			loadExisting(path, original, result, warn);
			return result;
		}
	} catch (e) {
		warn(`unexpected error while loading settings (${(e as Error).message}); using defaults`);
		result.settings = cloneDefaults();
	}
	return result;
}

function loadExisting(path: string, original: string, result: SettingsLoadResult, warn: (msg: string) => void): void {
	const bom = original.startsWith("\uFEFF") ? "\uFEFF" : "";
	const text = original.slice(bom.length);
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch (e) {
		const message = (e as Error).message;
		const pos = syntaxErrorPos(text, message);
		const where = pos === null ? "" : (({ line, column }) => ` at line ${line}, column ${column}`)(lineColumn(text, pos));
		warn(`invalid JSON${where} (${withoutPosition(message)}); using defaults and leaving the file untouched`);
		return;
	}
	if (!isPlainObject(raw)) {
		warn(`settings must be a JSON object (got ${Array.isArray(raw) ? "an array" : show(raw)}); using defaults and leaving the file untouched`);
		return;
	}
	result.settings = validate(raw, warn);

	let root: ObjectNode | null;
	try { root = scanJson(text); } catch { return; } // scanner disagrees with JSON.parse: do not write
	if (!root) return;
	const { edits, repaired } = planMerge(text, root, raw);
	if (edits.length === 0) return;
	const merged = applyEdits(text, edits);
	if (!mergeIsSafe(raw, merged)) return;
	let real: string;
	try { real = realpathSync(path); } catch { return; } // write through a symlink, keep the link
	if (!writable(real) || !writable(dirname(real))) return;
	let mode: number | undefined;
	try { mode = statSync(real).mode & 0o7777; } catch { return; }
	if (writeAtomic(real, bom + merged, { mode, expect: original }) === "ok") result.repaired = repaired;
}
