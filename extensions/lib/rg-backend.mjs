// The ripgrep fallback: the same `grep(opts)` / `glob(opts)` interface as the native core (index.d.ts), built
// on spawning `rg`, for machines where the addon cannot load. Output is meant to be identical to the native
// core's; where it cannot be, the difference is named here and the summary field stays empty:
//
// - Ignored-last ordering is emulated in two phases: the project is searched with ignore rules on, then the
//   ignored roots (found by comparing an ignore-respecting and an ignore-free `rg --files` listing) are
//   searched with `--no-ignore`. An ignored root is the top directory holding no project file, so a directory
//   whose files are each ignored (`logs/*.log`) is summarised as `logs/`, where the native core lists the files.
// - `binarySkipped` is always 0: rg skips binary files without reporting them.
// - `filesSearched` is exact when the search ran to the end; after a stop (limit, timeout, cancel) it counts
//   the listed files up to the last file rg reported, a lower bound.
// - glob finds directories through the files under them (rg lists files only), so empty directories are
//   missing. Its matcher is a JS port of globset's rules, matching characters where globset matches bytes: `?`
//   and `[!a]` match one non-ASCII character here, one byte there.
// - Names that are not UTF-8 cannot be passed to rg as arguments, so such ignored roots are skipped in grep
//   (counted in `errors`).
import { spawn, spawnSync } from "node:child_process";
import { accessSync, constants, promises as fsp, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";

const MAX_ERRORS_KEPT = 5;
const ROOTS_PER_RG = 500;
const STAT_CONCURRENCY = 64;
const DEFAULT_MAX_LINE = 500;

export const RG_INSTALL_HINT =
	"Install ripgrep (apt install ripgrep, brew install ripgrep, winget install BurntSushi.ripgrep.MSVC, or " +
	"https://github.com/BurntSushi/ripgrep#installation), or start `pi` once interactively so it downloads rg " +
	"into its bin directory";

function agentDirOf(env) {
	const dir = env.PI_CODING_AGENT_DIR;
	if (!dir) return path.join(homedir(), ".pi", "agent");
	if (dir === "~") return homedir();
	if (dir.startsWith("~/")) return path.join(homedir(), dir.slice(2));
	return dir;
}

function isExecutable(file) {
	try {
		if (!statSync(file).isFile()) return false;
		accessSync(file, constants.X_OK);
		return true;
	} catch {
		return false;
	}
}

/** Resolution order of decision D3: PATH, then Pi's own bin directory. */
export function findRg(options = {}) {
	if (options.rgPath) return isExecutable(options.rgPath) ? options.rgPath : undefined;
	const env = options.env ?? process.env;
	const exe = process.platform === "win32" ? "rg.exe" : "rg";
	for (const dir of (env.PATH ?? "").split(path.delimiter)) {
		if (dir && isExecutable(path.join(dir, exe))) return path.join(dir, exe);
	}
	const piBin = path.join(options.agentDir ?? agentDirOf(env), "bin", exe);
	return isExecutable(piBin) ? piBin : undefined;
}

function resolveRg(options) {
	const found = findRg(options);
	if (found) return found;
	const piBin = path.join(options.agentDir ?? agentDirOf(options.env ?? process.env), "bin");
	throw new Error(`ripgrep (rg) not found on PATH or in ${piBin}. ${RG_INSTALL_HINT}.`);
}

// ---------- text: the same display rules as src/search/display.rs and line_window.rs ----------

const hex = (bytes) => Buffer.from(bytes).toString("hex");

/** Length of the maximal valid prefix of a UTF-8 sequence at `i`, and whether it is complete. */
function utf8Seq(b, i) {
	const c = b[i];
	if (c < 0x80) return [1, true];
	let n;
	let lo = 0x80;
	let hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf) n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c === 0xe0) lo = 0xa0;
		if (c === 0xed) hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c === 0xf0) lo = 0x90;
		if (c === 0xf4) hi = 0x8f;
	} else return [1, false];
	for (let k = 1; k < n; k++) {
		const d = b[i + k];
		const ok = d !== undefined && (k === 1 ? d >= lo && d <= hi : d >= 0x80 && d <= 0xbf);
		if (!ok) return [k, false];
	}
	return [n, true];
}

/** `{ text, pathBytes? }` for a relative `/`-separated path given as raw bytes. */
export function displayPath(bytes) {
	const buf = Buffer.from(bytes);
	let text = "";
	const invalid = [];
	let start = 0;
	for (let i = 0; i < buf.length; ) {
		const [len, ok] = utf8Seq(buf, i);
		if (!ok) {
			text += buf.subarray(start, i).toString("utf8") + "\uFFFD";
			invalid.push(...buf.subarray(i, i + len));
			start = i + len;
		}
		i += len;
	}
	if (invalid.length === 0) {
		text = buf.toString("utf8");
		return { text: /#b=(-|[0-9a-f]+)$/.test(text) ? `${text}#b=-` : text };
	}
	text += buf.subarray(start).toString("utf8");
	return { text: `${text}#b=${hex(invalid)}`, pathBytes: hex(buf) };
}

const isCharStart = (byte) => (byte & 0xc0) !== 0x80;

function charCount(buf, end = buf.length) {
	let n = 0;
	for (let i = 0; i < end; i++) if (isCharStart(buf[i])) n++;
	return n;
}

function byteOfChar(buf, n, from = 0) {
	if (n === 0) return from;
	let seen = 0;
	for (let i = from; i < buf.length; i++) {
		if (isCharStart(buf[i])) {
			if (seen === n) return i;
			seen++;
		}
	}
	return buf.length;
}

/** Cuts a line (terminator removed) to `max` characters around the byte offset `focus`. */
export function windowLine(buf, focus, max) {
	const whole = { text: buf.toString("utf8"), cutBefore: 0, cutAfter: 0 };
	if (buf.length <= max || max === 0) return whole;
	const total = charCount(buf);
	if (total <= max) return whole;
	const focusChar = focus === undefined ? 0 : charCount(buf, Math.min(focus, buf.length));
	let start = Math.max(0, focusChar - Math.min(Math.floor(max / 4), 80));
	if (start + max > total) start = total - max;
	const from = byteOfChar(buf, start);
	const to = byteOfChar(buf, max, from);
	return { text: buf.subarray(from, to).toString("utf8"), cutBefore: start, cutAfter: total - start - max };
}

function trimTerminator(buf) {
	let end = buf.length;
	if (end > 0 && buf[end - 1] === 0x0a) end--;
	if (end > 0 && buf[end - 1] === 0x0d) end--;
	return buf.subarray(0, end);
}

const rgData = (v) => (v == null ? Buffer.alloc(0) : v.text !== undefined ? Buffer.from(v.text) : Buffer.from(v.bytes, "base64"));

/** rg prints `./a/b` for the root `.`; hits and listings use `a/b`. */
function relBytes(buf) {
	return buf[0] === 0x2e && buf[1] === 0x2f ? buf.subarray(2) : buf;
}

/** Component-wise byte order, as `rg --sort path` and the native core sort. */
export function comparePaths(a, b) {
	const x = a.split("/");
	const y = b.split("/");
	for (let i = 0; i < Math.min(x.length, y.length); i++) {
		const c = Buffer.compare(Buffer.from(x[i]), Buffer.from(y[i]));
		if (c !== 0) return c;
	}
	return x.length - y.length;
}

// ---------- processes ----------

/** Runs rg; `onChunk(buf)` gets stdout; resolves `{ code, stderr }`. `kill()` stops it at once. */
function runRg(rg, args, cwd, onChunk) {
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

function splitter(sep, onItem) {
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
function inputError(stderr) {
	const msg = stderr.trim();
	const type = /unrecognized file type: (\S+)/.exec(msg);
	if (type) return new Error(`Unknown file type: ${type[1]} (use ripgrep's type names, e.g. rust, ts, py, c)`);
	if (msg.startsWith("regex parse error")) return new Error(`Invalid pattern: ${msg}`);
	if (msg.includes("error parsing glob")) return new Error(`Invalid glob: ${msg}`);
	return new Error(msg || "rg failed");
}

function nonFatalErrors(stderr) {
	return stderr
		.split("\n")
		.map((l) => l.trim())
		.filter((l) => l && !l.startsWith("No files were searched"));
}

function baseFlags({ hidden = true }) {
	return ["--no-config", "--color=never", ...(hidden ? ["--hidden"] : [])];
}

// Last among the globs: rg lets the last matching glob win, so a user's `*` must not whitelist `.git`.
const NO_GIT = ["-g", "!.git"];

/** Flags that decide which files are searched: ignore rules per phase, then the user's filters. */
function ignoreFlags(phase) {
	// "classify" is the project side of a noIgnore search; like the native classifier it reads no parent
	// ignore files. "respect" is noIgnore:false, which reads them like rg does.
	if (phase === "ignored") return ["--no-ignore"];
	if (phase === "classify") return ["--no-require-git", "--no-ignore-parent"];
	return ["--no-require-git"];
}

function filterFlags(opts) {
	const flags = [];
	for (const g of opts.glob ?? []) flags.push("-g", g);
	const types = opts.type === undefined ? [] : Array.isArray(opts.type) ? opts.type : [opts.type];
	for (const t of types) flags.push("-t", t);
	return [...flags, ...NO_GIT];
}

/** Lists files under `cwd` as relative raw-byte paths; the process is registered so a halt can kill it. */
function listFiles(rg, flags, cwd, registry) {
	const files = [];
	const proc = runRg(rg, ["--files", "-0", ...flags, "--", "."], cwd, splitter(0, (b) => files.push(relBytes(b))));
	registry.add(proc);
	return proc.done.then(({ code, stderr }) => {
		registry.delete(proc);
		// A killed listing ends with code null: it is partial and must not be taken as the whole tree.
		return { files, complete: code === 0 || code === 1 || code === 2, errors: nonFatalErrors(stderr) };
	});
}

/** Every directory that holds a listed file, as relative paths without a trailing `/`. */
function ancestorDirs(files) {
	const dirs = new Set();
	for (const f of files) {
		for (let i = f.indexOf("/"); i !== -1; i = f.indexOf("/", i + 1)) dirs.add(f.slice(0, i));
	}
	return dirs;
}

/**
 * Groups the paths the ignore rules exclude by their ignored root: the topmost directory holding no project
 * file, or the file itself when its own directory belongs to the project. `dirs` says which paths are
 * directories (glob with kind "dir"/"any"); a directory holding no project file counts as ignored.
 */
export function ignoredRoots(projectFiles, paths, dirs = new Set()) {
	const project = new Set(projectFiles);
	const projectDirs = ancestorDirs(projectFiles);
	const roots = new Map();
	for (const p of paths) {
		const isDirEntry = dirs.has(p);
		if (isDirEntry ? projectDirs.has(p) : project.has(p)) continue;
		let root = p;
		let isDir = isDirEntry;
		for (let i = p.indexOf("/"); i !== -1; i = p.indexOf("/", i + 1)) {
			const dir = p.slice(0, i);
			if (!projectDirs.has(dir)) {
				root = dir;
				isDir = true;
				break;
			}
		}
		if (!roots.has(root)) roots.set(root, { root, isDir, files: [] });
		roots.get(root).files.push(p);
	}
	return [...roots.values()].sort((x, y) => comparePaths(x.root, y.root));
}

/** How the native core names an ignored root: display form, `/` after a directory. */
function rootLabel(r) {
	return `${displayPath(Buffer.from(r.root, "latin1")).text}${r.isDir ? "/" : ""}`;
}

function rootOf(roots, p) {
	if (roots.byName.has(p)) return roots.byName.get(p);
	for (let i = p.indexOf("/"); i !== -1; i = p.indexOf("/", i + 1)) {
		const r = roots.byName.get(p.slice(0, i));
		if (r?.isDir) return r;
	}
	return undefined;
}

function searchRoot(opts) {
	const root = path.resolve(opts.cwd ?? process.cwd(), opts.path ?? ".");
	let st;
	try {
		st = statSync(root);
	} catch {
		throw new Error(`Path not found: ${root}`);
	}
	return { root, isFile: !st.isDirectory() };
}

function chunks(list, n) {
	const out = [];
	for (let i = 0; i < list.length; i += n) out.push(list.slice(i, i + n));
	return out;
}

// ---------- grep ----------

class RgGrepSearch {
	#rg;
	#opts;
	#mode;
	#before;
	#after;
	#maxCount;
	#maxLine;
	#queue = [];
	#waiters = [];
	#done = false;
	#error;
	#summary = null;
	#stop; // "limit" | "timedOut" | "cancelled"
	#procs = new Set();
	#timer;
	#onAbort;
	#lastPath;
	#listedFiles = 0;
	#counts = {
		matches: 0,
		filesWithMatches: 0,
		filesSearched: 0,
		errorCount: 0,
		errors: [],
		ignored: new Map(),
		ignoredUnsearched: [],
	};
	#started = performance.now();

	constructor(rg, opts) {
		this.#rg = rg;
		this.#opts = opts;
		this.#mode = opts.mode ?? "content";
		const ctx = this.#mode === "content" ? (opts.context ?? 0) : 0;
		this.#before = this.#mode === "content" ? (opts.before ?? ctx) : 0;
		this.#after = this.#mode === "content" ? (opts.after ?? ctx) : 0;
		this.#maxCount = opts.maxCount ?? Number.POSITIVE_INFINITY;
		this.#maxLine = opts.maxLineLength ?? DEFAULT_MAX_LINE;
		if (opts.timeoutMs !== undefined && opts.timeoutMs !== null) {
			this.#timer = setTimeout(() => this.#halt("timedOut"), Math.max(0, opts.timeoutMs));
		}
		if (opts.signal) {
			this.#onAbort = () => this.#halt("cancelled");
			opts.signal.addEventListener("abort", this.#onAbort, { once: true });
		}
		this.#run().then(
			() => this.#finish(),
			(e) => this.#finish(e),
		);
	}

	nextBatch() {
		if (this.#queue.length) return Promise.resolve(this.#queue.splice(0));
		if (this.#error) {
			const e = this.#error;
			this.#error = undefined;
			return Promise.reject(e);
		}
		if (this.#done) return Promise.resolve(null);
		return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
	}

	summary() {
		return this.#done && this.#queue.length === 0 ? this.#summary : null;
	}

	cancel() {
		this.#halt("cancelled");
	}

	#halt(reason) {
		if (this.#done || this.#stop) return;
		this.#stop = reason;
		for (const p of this.#procs) p.kill();
	}

	#push(hits) {
		if (hits.length === 0) return;
		this.#queue.push(...hits);
		this.#wake();
	}

	#wake() {
		const waiters = this.#waiters.splice(0);
		for (const w of waiters) {
			if (this.#queue.length) w.resolve(this.#queue.splice(0));
			else if (this.#error) {
				w.reject(this.#error);
				this.#error = undefined;
			} else if (this.#done) w.resolve(null);
			else this.#waiters.push(w);
		}
	}

	#noteErrors(lines) {
		this.#counts.errorCount += lines.length;
		for (const l of lines) if (this.#counts.errors.length < MAX_ERRORS_KEPT) this.#counts.errors.push(l);
	}

	#finish(err) {
		clearTimeout(this.#timer);
		if (this.#onAbort) this.#opts.signal.removeEventListener("abort", this.#onAbort);
		for (const p of this.#procs) p.kill();
		const c = this.#counts;
		this.#summary = {
			matches: c.matches,
			filesWithMatches: c.filesWithMatches,
			filesSearched: c.filesSearched,
			limitReached: this.#stop === "limit",
			timedOut: this.#stop === "timedOut",
			cancelled: this.#stop === "cancelled",
			binarySkipped: 0,
			errorCount: c.errorCount,
			errors: c.errors,
			ignored: [...c.ignored.values()].filter((g) => g.matches > 0),
			ignoredUnsearched: c.ignoredUnsearched,
			elapsedMs: performance.now() - this.#started,
		};
		if (err) this.#error = err instanceof Error ? err : new Error(String(err));
		this.#done = true;
		this.#wake();
	}

	async #run() {
		const { root, isFile } = searchRoot(this.#opts);
		const cwd = isFile ? path.dirname(root) : root;
		const target = isFile ? path.basename(root) : ".";
		const noIgnore = this.#opts.noIgnore ?? true;
		const base = baseFlags(this.#opts);
		const filters = filterFlags(this.#opts);
		if (isFile) {
			await this.#search(cwd, [...base, ...ignoreFlags("ignored"), ...filters], [target], undefined);
			this.#counts.filesSearched = 1;
			return;
		}
		// Listings run beside phase 1: they size filesSearched and, with noIgnore, find the ignored roots.
		const listings = noIgnore
			? Promise.all([
					listFiles(this.#rg, [...base, ...ignoreFlags("classify"), ...NO_GIT], cwd, this.#procs),
					listFiles(this.#rg, [...base, ...ignoreFlags("ignored"), ...filters], cwd, this.#procs),
				])
			: listFiles(this.#rg, [...base, ...ignoreFlags("respect"), ...filters], cwd, this.#procs).then((l) => [l, l]);
		const projectFlags = [...base, ...ignoreFlags(noIgnore ? "classify" : "respect"), ...filters];
		await this.#search(cwd, projectFlags, [target], undefined);
		const [projectList, allList] = await listings;
		if (!projectList.complete || !allList.complete) {
			this.#counts.filesSearched = this.#counts.filesWithMatches;
			return;
		}
		this.#noteErrors(projectList.errors);
		// Paths as latin1 strings of their raw bytes (see runGlob): exact for names that are not UTF-8.
		const all = allList.files.map((b) => b.toString("latin1"));
		const projectSet = new Set(projectList.files.map((b) => b.toString("latin1")));
		const projectFiles = all.filter((f) => projectSet.has(f));
		const searchedProject = this.#stop ? countUpTo(projectFiles, this.#lastPath) : projectFiles.length;
		this.#counts.filesSearched = searchedProject;
		if (!noIgnore) return;
		const roots = ignoredRoots([...projectSet], all);
		if (roots.length === 0) return;
		if (this.#stop) {
			this.#counts.ignoredUnsearched = roots.map(rootLabel);
			return;
		}
		await this.#searchIgnored(cwd, base, filters, roots);
	}

	async #searchIgnored(cwd, base, filters, roots) {
		const countOnly = Boolean(this.#opts.ignoredCountOnly) && this.#counts.matches > 0;
		const index = { byName: new Map(roots.map((r) => [r.root, r])) };
		for (const r of roots) this.#counts.ignored.set(r.root, { path: rootLabel(r), matches: 0, files: 0 });
		// rg takes paths as (UTF-8) strings, so a root whose name is not UTF-8 cannot be passed to it.
		const passable = roots.filter((r) => displayPath(Buffer.from(r.root, "latin1")).pathBytes === undefined);
		const skipped = roots.filter((r) => !passable.includes(r));
		if (skipped.length) this.#noteErrors(skipped.map((r) => `${rootLabel(r)}: skipped (name is not UTF-8)`));
		const flags = [...base, ...ignoreFlags("ignored"), ...filters];
		let searched = 0;
		const done = new Set();
		for (const group of chunks(passable, ROOTS_PER_RG)) {
			if (this.#stop) break;
			const targets = group.map((r) => Buffer.from(r.root, "latin1").toString("utf8"));
			await this.#search(cwd, flags, targets, { index, countOnly });
			if (!this.#stop) for (const r of group) done.add(r.root);
		}
		for (const r of passable) {
			if (done.has(r.root)) searched += r.files.length;
			else {
				this.#counts.ignoredUnsearched.push(rootLabel(r));
				if (this.#lastPath) searched += countUpTo(r.files, this.#lastPath);
			}
		}
		this.#counts.filesSearched += searched;
	}

	/** One rg run in path order. `ignored` is set in phase 2: the root index and whether hits are only counted. */
	#search(cwd, flags, targets, ignored) {
		// --line-buffered: a pipe is otherwise block-buffered, and hits still in rg's buffer die with it at a timeout.
		const args = ["--json", "--line-buffered", "--line-number", "--sort", "path", ...flags];
		if (this.#opts.ignoreCase) args.push("--ignore-case");
		if (this.#opts.literal) args.push("--fixed-strings");
		if (this.#opts.multiline) args.push("--multiline");
		if (this.#mode === "files") args.push("--max-count", "1");
		if (this.#before) args.push("--before-context", String(this.#before));
		if (this.#after) args.push("--after-context", String(this.#after));
		args.push("--", this.#opts.pattern, ...targets);
		let file = null;
		let draining = false; // limit reached: only the last hit's after-context may still come
		const stopNow = () => {
			if (!this.#stop) this.#stop = "limit";
			proc.kill();
		};
		const endFile = () => {
			if (!file) return;
			const f = file;
			file = null;
			this.#lastPath = f.key;
			if (f.count === 0) return;
			this.#counts.filesWithMatches++;
			const group = ignored && rootOf(ignored.index, f.key);
			if (group) {
				const g = this.#counts.ignored.get(group.root);
				g.files++;
				g.matches += f.count;
			}
			if (ignored?.countOnly) return;
			if (this.#mode === "content") {
				this.#counts.matches += f.hits.length;
				this.#push(f.hits);
			} else {
				const hit = { ...f.head, count: this.#mode === "count" ? f.count : 1 };
				this.#counts.matches += hit.count;
				this.#push([hit]);
				if (++this.#listedFiles >= this.#maxCount) stopNow();
			}
		};
		const onRecord = (line) => {
			if (this.#stop || line.length === 0) return;
			let msg;
			try {
				msg = JSON.parse(line.toString("utf8"));
			} catch {
				return;
			}
			const d = msg.data;
			if (msg.type === "begin") {
				const raw = relBytes(rgData(d.path));
				const shown = displayPath(raw);
				const head = {
					path: shown.text,
					...(shown.pathBytes ? { pathBytes: shown.pathBytes } : {}),
					ignored: Boolean(ignored),
					line: 0,
					column: 0,
					text: "",
					cutBefore: 0,
					cutAfter: 0,
					contextBefore: [],
					contextAfter: [],
					count: 0,
				};
				file = { key: raw.toString("latin1"), head, hits: [], pending: [], count: 0 };
			} else if (msg.type === "match" && file) {
				if (draining) return endFile(), stopNow();
				file.count++;
				if (this.#mode !== "content" || ignored?.countOnly) return;
				const lineBuf = trimTerminator(firstLine(rgData(d.lines)));
				const start = d.submatches?.[0]?.start;
				const w = windowLine(lineBuf, start, this.#maxLine);
				file.hits.push({
					...file.head,
					line: d.line_number ?? 0,
					column: start === undefined ? 1 : start + 1,
					text: w.text,
					cutBefore: w.cutBefore,
					cutAfter: w.cutAfter,
					contextBefore: file.pending.splice(0),
					contextAfter: [],
					count: 1,
				});
				if (this.#counts.matches + file.hits.length >= this.#maxCount) {
					draining = true;
					if (this.#after === 0) return endFile(), stopNow();
				}
			} else if (msg.type === "context" && file && this.#mode === "content" && !ignored?.countOnly) {
				const w = windowLine(trimTerminator(rgData(d.lines)), undefined, this.#maxLine);
				const cl = { line: d.line_number, text: w.text, cutBefore: w.cutBefore, cutAfter: w.cutAfter };
				const last = file.hits[file.hits.length - 1];
				if (last && cl.line <= last.line + this.#after) last.contextAfter.push(cl);
				else if (draining) return endFile(), stopNow();
				else file.pending.push(cl);
			} else if (msg.type === "end") {
				endFile();
				if (draining) stopNow();
			}
		};
		const proc = runRg(this.#rg, args, cwd, splitter(0x0a, onRecord));
		this.#procs.add(proc);
		return proc.done.then(({ code, stderr }) => {
			this.#procs.delete(proc);
			if (!this.#stop) endFile();
			else if (file && this.#stop !== "limit") endFile(); // timeout/cancel: keep what this file gave
			if (code === -1) throw new Error(stderr);
			if (code === 2 && !this.#stop) this.#noteErrors(nonFatalErrors(stderr));
		});
	}

}

function firstLine(buf) {
	const i = buf.indexOf(0x0a);
	return i === -1 ? buf : buf.subarray(0, i + 1);
}

function countUpTo(sortedCandidates, lastPath) {
	if (!lastPath) return 0;
	let n = 0;
	for (const f of sortedCandidates) if (comparePaths(f, lastPath) <= 0) n++;
	return n;
}

/**
 * Bad regex, glob or type names fail at once, as they do in the native core: rg parses them while searching
 * an empty stdin, which costs one short process.
 */
function validateWithRg(rg, args, pattern) {
	const r = spawnSync(rg, ["--no-config", ...args, "--", pattern], { input: "", encoding: "utf8", timeout: 10_000 });
	if (r.error) throw new Error(`failed to run ${rg}: ${r.error.message}`);
	if (r.status === 2) throw inputError(r.stderr ?? "");
}

function validateGrep(rg, opts) {
	if (!opts.pattern) throw new Error("Pattern must not be empty");
	if (opts.signal?.aborted) throw new Error("Operation aborted");
	const mode = opts.mode ?? "content";
	if (!["content", "files", "count"].includes(mode)) throw new Error(`Invalid mode: ${mode} (expected content, files, count)`);
	const args = filterFlags(opts);
	if (opts.ignoreCase) args.push("--ignore-case");
	if (opts.literal) args.push("--fixed-strings");
	if (opts.multiline) args.push("--multiline");
	validateWithRg(rg, args, opts.pattern);
}

// ---------- glob ----------

/**
 * The native glob's matcher in JS: globset with `literal_separator` and backslash escapes (`*` and `?` never
 * cross `/`; `**` as a whole component crosses any number). rg's `-g` cannot be used here, because rg lets a
 * whitelist glob override ignore rules and only ever matches files.
 */
export function globToRegExp(pattern) {
	const src = pattern.startsWith("./") ? pattern.slice(2) : pattern;
	const body = (p, inAlt) => {
		let re = "";
		for (let i = 0; i < p.length; i++) {
			const c = p[i];
			if (c === "\\" && i + 1 < p.length) re += escapeRe(p[++i]);
			else if (c === "*" && p[i + 1] === "*") {
				const start = i === 0 || p[i - 1] === "/";
				const end = i + 2 === p.length || p[i + 2] === "/";
				if (start && end) {
					if (i + 2 === p.length) re += ".*";
					else {
						re += "(?:.*/)?";
						i++;
					}
					i++;
				} else {
					re += "[^/]*";
					i++;
				}
			} else if (c === "*") re += "[^/]*";
			else if (c === "?") re += "[^/]";
			else if (c === "[") {
				const close = p.indexOf("]", i + 2);
				if (close === -1) re += "\\[";
				else {
					let cls = p.slice(i + 1, close);
					const negate = cls[0] === "!" || cls[0] === "^";
					if (negate) cls = cls.slice(1);
					re += `[${negate ? "^" : ""}${cls.replace(/[\\\]^]/g, "\\$&")}]`;
					i = close;
				}
			} else if (c === "{" && !inAlt) {
				const close = p.indexOf("}", i);
				if (close === -1) re += "\\{";
				else {
					re += `(?:${p.slice(i + 1, close).split(",").map((alt) => body(alt, true)).join("|")})`;
					i = close;
				}
			} else re += escapeRe(c);
		}
		return re;
	};
	return new RegExp(`^${body(src, false)}$`, "su");
}

function escapeRe(c) {
	return c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** Rounded the way the native core rounds (`Duration::as_secs_f64() * 1000`), so both give equal numbers. */
function mtimeMs(ns) {
	return (Number(ns / 1_000_000_000n) + Number(ns % 1_000_000_000n) / 1e9) * 1000;
}

async function runGlob(rg, opts) {
	const started = performance.now();
	const { root, isFile } = searchRoot(opts);
	if (isFile) throw new Error(`Not a directory: ${root}`);
	const noIgnore = opts.noIgnore ?? true;
	const kind = opts.kind ?? "file";
	const limit = Math.max(1, opts.limit ?? 200);
	const pattern = opts.pattern.startsWith("./") ? opts.pattern.slice(2) : opts.pattern;
	const re = globToRegExp(pattern);
	const byPath = pattern.includes("/");
	const matches = (p) => re.test(byPath ? p : p.slice(p.lastIndexOf("/") + 1));
	const registry = new Set();
	let stop;
	const halt = (reason) => {
		if (stop) return;
		stop = reason;
		for (const p of registry) p.kill();
	};
	const timer = opts.timeoutMs == null ? undefined : setTimeout(() => halt("timedOut"), Math.max(0, opts.timeoutMs));
	const onAbort = () => halt("cancelled");
	opts.signal?.addEventListener("abort", onAbort, { once: true });
	try {
		const base = baseFlags(opts);
		const projectListing = listFiles(rg, [...base, ...ignoreFlags(noIgnore ? "classify" : "respect"), ...NO_GIT], root, registry);
		const [projectList, allList] = await Promise.all([
			projectListing,
			noIgnore ? listFiles(rg, [...base, ...ignoreFlags("ignored"), ...NO_GIT], root, registry) : projectListing,
		]);
		const errors = noIgnore ? [...projectList.errors, ...allList.errors] : projectList.errors;
		// Paths are kept as latin1 strings of their raw bytes (one char per byte, `/` stays `/`), so names that
		// are not UTF-8 survive set lookups, prefix walks and stat; they are decoded only to match and to show.
		const raw = (k) => Buffer.from(k, "latin1");
		const all = allList.files.map((b) => b.toString("latin1"));
		const projectFiles = projectList.files.map((b) => b.toString("latin1"));
		// Directories come from the files under them: rg lists files only, so an empty directory is never found.
		const allDirs = ancestorDirs(all);
		const dirs = kind === "file" ? new Set() : allDirs;
		const candidates = [...(kind === "dir" ? [] : all), ...dirs].filter((k) => matches(raw(k).toString("utf8")));
		// After a stop the listings are partial; paths missing from the project listing then count as ignored,
		// which only moves them later in an answer that is flagged incomplete anyway.
		const roots = noIgnore ? ignoredRoots(projectFiles, candidates, dirs) : [];
		const ignoredSet = new Set(roots.flatMap((r) => r.files));
		const allRoots = noIgnore ? ignoredRoots(projectFiles, [...all, ...allDirs], allDirs) : [];
		const rootBytes = Buffer.from(root + path.sep);
		const entries = [];
		for (const group of chunks(candidates, STAT_CONCURRENCY)) {
			if (stop) break;
			const stats = await Promise.all(
				group.map((k) => fsp.lstat(Buffer.concat([rootBytes, raw(k)]), { bigint: true }).catch(() => null)),
			);
			group.forEach((k, i) => {
				const st = stats[i];
				const isDir = dirs.has(k);
				if (!st || (isDir ? !st.isDirectory() : !st.isFile())) return;
				const shown = displayPath(raw(k));
				entries.push({
					key: k,
					path: shown.text,
					...(shown.pathBytes ? { pathBytes: shown.pathBytes } : {}),
					isDir,
					mtimeMs: mtimeMs(st.mtimeNs),
					size: Number(st.size),
					ignored: ignoredSet.has(k),
				});
			});
		}
		const pathOrder = (a, b) => comparePaths(a.key, b.key);
		const order = opts.sort === "path" ? pathOrder : (a, b) => b.mtimeMs - a.mtimeMs || pathOrder(a, b);
		entries.sort((a, b) => Number(a.ignored) - Number(b.ignored) || order(a, b));
		// Like the native core: once the project alone fills the limit, ignored roots are not walked.
		const skipIgnored = entries.filter((e) => !e.ignored).length >= limit;
		const listed = skipIgnored ? entries.filter((e) => !e.ignored) : entries;
		return {
			entries: listed.slice(0, limit).map(({ key, ...entry }) => entry),
			total: listed.length,
			// As in the native core: "more may exist" when something matched beyond the limit, or when ignored
			// roots were left unwalked because the project alone filled it.
			limitReached: listed.length > limit || (skipIgnored && allRoots.length > 0),
			timedOut: stop === "timedOut",
			cancelled: stop === "cancelled",
			errorCount: errors.length,
			errors: errors.slice(0, MAX_ERRORS_KEPT),
			ignored: skipIgnored ? [] : roots.map((r) => ({ path: rootLabel(r), matches: r.files.length })),
			ignoredUnsearched: skipIgnored ? allRoots.map(rootLabel) : [],
			elapsedMs: performance.now() - started,
		};
	} finally {
		clearTimeout(timer);
		opts.signal?.removeEventListener("abort", onAbort);
		for (const p of registry) p.kill();
	}
}

// ---------- the backend ----------

export function createRgBackend(options = {}) {
	let rg;
	const rgPath = () => (rg ??= resolveRg(options));
	return {
		grep(opts) {
			const bin = rgPath();
			validateGrep(bin, opts);
			searchRoot(opts);
			return new RgGrepSearch(bin, opts);
		},
		glob(opts) {
			if (!opts.pattern) throw new Error("Invalid glob: pattern must not be empty");
			if (opts.signal?.aborted) throw new Error("Operation aborted");
			if (opts.kind && !["file", "dir", "any"].includes(opts.kind)) throw new Error(`Invalid kind: ${opts.kind} (expected file, dir, any)`);
			const bin = rgPath();
			validateWithRg(bin, ["-g", opts.pattern], "x");
			searchRoot(opts);
			return runGlob(bin, opts);
		},
	};
}

export const rgBackend = createRgBackend();
