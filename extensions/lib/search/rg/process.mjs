// Process plumbing of the rg fallback: spawning rg, splitting its output, turning its stderr into the native
// core's error texts and codes, the flag sets shared by grep and glob, file listings, and the search root.
import { spawn, spawnSync } from "node:child_process";
import { statSync } from "node:fs";
import path from "node:path";
import { codedError } from "../errors.mjs";
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

/** Turns rg's stderr into the native core's error texts for bad input. */
export function inputError(stderr) {
	const msg = stderr.trim();
	const type = /unrecognized file type: (\S+)/.exec(msg);
	if (type) return codedError("INVALID_OPTION", `Unknown file type: ${type[1]} (use ripgrep's type names, e.g. rust, ts, py, c)`);
	if (msg.startsWith("regex parse error")) return codedError("INVALID_PATTERN", `Invalid pattern: ${msg}`);
	if (msg.includes("error parsing glob")) return codedError("INVALID_PATTERN", `Invalid glob: ${msg}`);
	return codedError("INTERNAL", msg || "rg failed");
}

export function nonFatalErrors(stderr) {
	return stderr
		.split("\n")
		.map((l) => l.trim())
		.filter((l) => l && !l.startsWith("No files were searched"));
}

export function baseFlags({ hidden = true }) {
	return ["--no-config", "--color=never", ...(hidden ? ["--hidden"] : [])];
}

// Last among the globs: rg lets the last matching glob win, so a user's `*` must not whitelist `.git`.
export const NO_GIT = ["-g", "!.git"];

/** Flags that decide which files are searched: ignore rules per phase, then the user's filters. */
export function ignoreFlags(phase) {
	// "classify" is the project side of a noIgnore search; like the native classifier it reads no parent
	// ignore files. "respect" is noIgnore:false, which reads them like rg does.
	if (phase === "ignored") return ["--no-ignore"];
	if (phase === "classify") return ["--no-require-git", "--no-ignore-parent"];
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
		throw codedError("PATH_NOT_FOUND", `Path not found: ${root}`);
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
	if (r.status === 2) throw inputError(r.stderr ?? "");
}
