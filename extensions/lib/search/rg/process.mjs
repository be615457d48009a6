// Process plumbing of the rg fallback: spawning rg, splitting its output, turning its stderr into the native
// core's error texts and codes, the flag sets shared by grep and glob, file listings, and the search root.
import { spawn, spawnSync } from "node:child_process";
import { readlinkSync, statSync } from "node:fs";
import path from "node:path";
import { DEFAULTS } from "../../defaults.mjs";
import { codedError } from "../../errors.mjs";
import { relBytes } from "./display.mjs";

/** At most this many error texts are kept in a summary, as in the native core. */
export const MAX_ERRORS_KEPT = 5;

/** Runs rg; `onChunk(buf)` gets stdout; resolves `{ code, stderr }`. `kill()` stops it at once. */
export function runRg(rg, args, cwd, onChunk) {
	const child = spawn(rg, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
	let stderr = "";
	child.stdout.on("data", onChunk);
	child.stderr.on("data", (d) => {
		if (stderr.length < 64 * 1024) stderr += d.toString();
	});
	const done = new Promise((resolve) => {
		child.on("error", (e) => resolve({ code: -1, stderr: `failed to run ${rg}: ${e.message}` }));
		child.on("close", (code) => resolve({ code, stderr }));
	});
	return {
		done,
		kill() {
			if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
		},
	};
}

export function splitter(sep, onItem) {
	let rest = Buffer.alloc(0);
	return (chunk) => {
		let buf = rest.length ? Buffer.concat([rest, chunk]) : chunk;
		let i;
		while ((i = buf.indexOf(sep)) !== -1) {
			onItem(buf.subarray(0, i));
			buf = buf.subarray(i + 1);
		}
		rest = Buffer.from(buf);
	};
}

/** As the native core says it under a bad pattern written with basic-regex escapes (rg's regex is Rust's too). */
export const BASIC_REGEX_HINT = "hint: Rust regex uses | and ( unescaped; \\| and \\( match the characters themselves";

/** rg 14 and later name themselves before each message (`rg: regex parse error:`); rg 13 does not. */
export function withoutRgPrefix(text) {
	return text.replace(/^rg: /gm, "");
}

/** Turns rg's stderr into the native core's error texts for bad input; `pattern` is the regex rg parsed. */
export function inputError(stderr, pattern = "") {
	const msg = withoutRgPrefix(stderr.trim());
	if (msg.startsWith("regex parse error")) {
		const shown = asTyped(msg, pattern);
		const hint = /\\[|()]/.test(pattern) ? `\n${BASIC_REGEX_HINT}` : "";
		return codedError("INVALID_PATTERN", `Invalid pattern: ${shown}${hint}`);
	}
	const type = /unrecognized file type: (\S+)/.exec(msg);
	if (type) return codedError("INVALID_OPTION", `Unknown file type: ${type[1]} (use ripgrep's type names, e.g. rust, ts, py, c)`);
	if (msg.includes("error parsing glob")) return codedError("INVALID_PATTERN", `Invalid glob: ${msg}`);
	return codedError("INTERNAL", msg || "rg failed");
}

/**
 * rg 14 and later parse the pattern wrapped as `(?:pattern)` and show the error against the wrapper; this shows
 * it against the pattern as typed, as rg 13 and the native core do: the caret moves back by the wrapper's
 * three characters, and for a group left unclosed or closed too often to the user's parenthesis that caused it.
 * Anything not in that shape is left as rg wrote it.
 */
function asTyped(msg, pattern) {
	const lines = msg.split("\n");
	const wrapped = `(?:${pattern})`;
	const at = lines.findIndex((l) => l === `    ${wrapped}`);
	const caret = at >= 0 ? /^( *)(\^+)$/.exec(lines[at + 1] ?? "") : null;
	if (!caret) return msg;
	let col = caret[1].length - 4 - 3;
	let width = caret[2].length;
	// The wrapper's `)` closes the user's innermost open group (or its first stray `)` closes the wrapper), so a
	// group error lands one parenthesis off: find the user's own.
	const group = msg.includes("error: unclosed group") ? unclosedParen(pattern) : msg.includes("error: unopened group") ? unopenedParen(pattern) : undefined;
	if (group !== undefined) {
		col = group;
		width = 1;
	}
	if (col < 0 || col + width > pattern.length) return msg;
	lines[at] = `    ${pattern}`;
	lines[at + 1] = `${" ".repeat(4 + col)}${"^".repeat(width)}`;
	return lines.join("\n");
}

/** Walks a regex's parentheses outside escapes and character classes: `onParen(kind, index)` for each. */
function walkParens(pattern, onParen) {
	let classDepth = 0;
	for (let i = 0; i < pattern.length; i++) {
		const c = pattern[i];
		if (c === "\\") {
			i++;
		} else if (c === "[") {
			classDepth++;
			// A `]` right after the opening (or after `^`) is a literal member.
			if (pattern[i + 1] === "^") i++;
			if (pattern[i + 1] === "]") i++;
		} else if (c === "]" && classDepth > 0) {
			classDepth--;
		} else if (classDepth === 0 && (c === "(" || c === ")")) {
			onParen(c, i);
		}
	}
}

/** The innermost `(` still open at the end of the pattern, or -1. */
function unclosedParen(pattern) {
	const open = [];
	walkParens(pattern, (c, i) => (c === "(" ? open.push(i) : open.pop()));
	return open.length ? open[open.length - 1] : -1;
}

/** The first `)` that closes no group, or -1. */
function unopenedParen(pattern) {
	let depth = 0;
	let first = -1;
	walkParens(pattern, (c, i) => {
		if (c === "(") depth++;
		else if (depth > 0) depth--;
		else if (first < 0) first = i;
	});
	return first;
}

export function nonFatalErrors(stderr) {
	return withoutRgPrefix(stderr)
		.split("\n")
		.map((l) => l.trim())
		.filter((l) => l && !l.startsWith("No files were searched"));
}

export function baseFlags({ hidden = DEFAULTS.walk.hidden }) {
	return ["--no-config", "--color=never", ...(hidden ? ["--hidden"] : [])];
}

// Last among the globs: rg lets the last matching glob win, so a user's `*` must not whitelist `.git`.
export const NO_GIT = ["-g", "!.git"];

/** Flags that decide which files are searched: ignore rules per phase, then the user's filters. */
export function ignoreFlags(phase) {
	// "classify" is the project side of a noIgnore search, "respect" is noIgnore:false: one definition of
	// ignored in both, as in the native core (parents' ignore files read wherever the search starts). Where
	// rg has no flag for the native rule, a parent .gitignore across a nested repository applies here.
	if (phase === "ignored") return ["--no-ignore"];
	return ["--no-require-git"];
}

export function filterFlags(opts) {
	const flags = [];
	for (const g of opts.glob ?? []) flags.push("-g", g);
	const types = opts.type === undefined ? [] : Array.isArray(opts.type) ? opts.type : [opts.type];
	for (const t of types) flags.push("-t", t);
	return [...flags, ...NO_GIT];
}

/** Lists files under `cwd` as relative raw-byte paths; the process is registered so a halt can kill it. */
export function listFiles(rg, flags, cwd, registry) {
	const files = [];
	const proc = runRg(rg, ["--files", "-0", ...flags, "--", "."], cwd, splitter(0, (b) => files.push(relBytes(b))));
	registry.add(proc);
	return proc.done.then(({ code, stderr }) => {
		registry.delete(proc);
		// A killed listing ends with code null: it is partial and must not be taken as the whole tree.
		return { files, complete: code === 0 || code === 1 || code === 2, errors: nonFatalErrors(stderr) };
	});
}


export function searchRoot(opts) {
	const root = path.resolve(opts.cwd ?? process.cwd(), opts.path ?? ".");
	let st;
	try {
		st = statSync(root);
	} catch {
		// As the native core: a named symlink is followed, and one that leads nowhere is named as a link.
		let target;
		try {
			target = readlinkSync(root);
		} catch {
			throw codedError("PATH_NOT_FOUND", `Path not found: ${root}`);
		}
		throw codedError("PATH_NOT_FOUND", `Broken symlink: ${root} -> ${target}`);
	}
	return { root, isFile: !st.isDirectory() };
}

export function chunks(list, n) {
	const out = [];
	for (let i = 0; i < list.length; i += n) out.push(list.slice(i, i + n));
	return out;
}

/**
 * Bad regex, glob or type names fail at once, as they do in the native core: rg parses them while searching
 * an empty stdin, which costs one short process.
 */
export function validateWithRg(rg, args, pattern) {
	const r = spawnSync(rg, ["--no-config", ...args, "--", pattern], { input: "", encoding: "utf8", timeout: 10_000 });
	if (r.error) throw codedError("INTERNAL", `failed to run ${rg}: ${r.error.message}`);
	if (r.status === 2) throw inputError(r.stderr ?? "", pattern);
}
