// The rg fallback's grep: a search state machine over rg processes that yields the native core's batches
// (project first, then each ignored root with --no-ignore), stops on limit, timeout or cancel, and keeps the
// native summary's counts.
import path from "node:path";
import { DEFAULTS } from "../../defaults.mjs";
import { codedError } from "../../errors.mjs";
import { comparePaths, displayPath, rgData, relBytes, trimTerminator, windowLine } from "./display.mjs";
import { ignoredRoots, rootLabel, rootOf } from "./ignored.mjs";
import { baseFlags, chunks, filterFlags, ignoreFlags, listFiles, MAX_ERRORS_KEPT, NO_GIT, nonFatalErrors, runRg, searchRoot, splitter, validateWithRg } from "./process.mjs";

/** Ignored roots passed to one rg process; more would risk the command-line length limit. */
const ROOTS_PER_RG = 500;

export class RgGrepSearch {
	#rg;
	#opts;
	#mode;
	#before;
	#after;
	/** The native option `maxCount`: matching lines in content mode, files in the others. */
	#limit;
	#maxLine;
	#queue = [];
	#waiters = [];
	#done = false;
	#error;
	/** @type {import("../../../../index.d.ts").GrepSummary | null} */
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
		errors: /** @type {string[]} */ ([]),
		ignored: new Map(),
		ignoredUnsearched: /** @type {string[]} */ ([]),
		binaryStopped: /** @type {import("../../../../index.d.ts").BinaryStop[]} */ ([]),
	};
	#named = false;
	#started = performance.now();

	constructor(rg, opts) {
		this.#rg = rg;
		this.#opts = opts;
		this.#mode = opts.mode ?? "content";
		const ctx = this.#mode === "content" ? (opts.context ?? 0) : 0;
		this.#before = this.#mode === "content" ? (opts.before ?? ctx) : 0;
		this.#after = this.#mode === "content" ? (opts.after ?? ctx) : 0;
		this.#limit = opts.maxCount ?? Number.POSITIVE_INFINITY;
		this.#maxLine = opts.maxLineLength ?? DEFAULTS.grep.maxLineLength;
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
			binaryStopped: c.binaryStopped,
			errorCount: c.errorCount,
			errors: c.errors,
			ignored: [...c.ignored.values()].filter((g) => g.matches > 0),
			ignoredUnsearched: c.ignoredUnsearched,
			elapsedMs: performance.now() - this.#started,
			// The rg fallback has no index.
			index: /** @type {const} */ ("off"),
		};
		if (err) this.#error = err instanceof Error ? err : new Error(String(err));
		this.#done = true;
		this.#wake();
	}

	async #run() {
		const { root, isFile } = searchRoot(this.#opts);
		const cwd = isFile ? path.dirname(root) : root;
		const target = isFile ? path.basename(root) : ".";
		const noIgnore = this.#opts.noIgnore ?? DEFAULTS.walk.noIgnore;
		const base = baseFlags(this.#opts);
		const filters = filterFlags(this.#opts);
		if (isFile) {
			this.#named = true;
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
		let windowEnd = 0; // while draining: the last line of that after-context
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
			// rg -c drops a walked file it found binary (its JSON output still has the matches before the NUL).
			if (f.binary !== undefined && !this.#named && this.#mode === "count") return;
			this.#counts.filesWithMatches++;
			const group = ignored && rootOf(ignored.index, f.key);
			if (group) {
				const g = this.#counts.ignored.get(group.root);
				g.files++;
				g.matches += f.count;
			}
			if (ignored?.countOnly) return;
			if (this.#mode === "content") {
				this.#counts.matches += f.count;
				this.#push(f.hits);
				if (f.binary !== undefined && f.hits.length > 0) {
					const { path, pathBytes, ignored } = f.head;
					this.#counts.binaryStopped.push({ path, ...(pathBytes ? { pathBytes } : {}), offset: f.binary, ignored });
				}
			} else {
				const hit = { ...f.head, count: this.#mode === "count" ? f.count : 1 };
				this.#counts.matches += hit.count;
				this.#push([hit]);
				if (++this.#listedFiles >= this.#limit) stopNow();
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
				file = { key: raw.toString("latin1"), head, hits: [], pending: [], count: 0, binary: undefined };
			} else if (msg.type === "match" && file) {
				// In the last counted hit's after-context a match is shown but not counted, as rg -m -A shows it.
				if (draining && (d.line_number ?? 0) > windowEnd) return endFile(), stopNow();
				if (!draining) file.count++;
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
					count: draining ? 0 : 1,
				});
				if (!draining && this.#counts.matches + file.count >= this.#limit) {
					draining = true;
					windowEnd = (d.line_number ?? 0) + this.#after;
					if (this.#after === 0) return endFile(), stopNow();
				}
			} else if (msg.type === "context" && file && this.#mode === "content" && !ignored?.countOnly) {
				const w = windowLine(trimTerminator(rgData(d.lines)), undefined, this.#maxLine);
				const cl = { line: d.line_number, text: w.text, cutBefore: w.cutBefore, cutAfter: w.cutAfter };
				const last = file.hits[file.hits.length - 1];
				if (draining) {
					if (last && cl.line <= windowEnd) last.contextAfter.push(cl);
					else return endFile(), stopNow();
				} else if (last && cl.line <= last.line + this.#after) last.contextAfter.push(cl);
				else file.pending.push(cl);
			} else if (msg.type === "end") {
				if (file && d.binary_offset != null) file.binary = d.binary_offset;
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
			if (code === -1) throw codedError("INTERNAL", stderr);
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

export function validateGrep(rg, opts) {
	if (!opts.pattern) throw codedError("INVALID_PATTERN", "Pattern must not be empty");
	if (opts.signal?.aborted) throw codedError("CANCELLED", "Operation aborted");
	const mode = opts.mode ?? "content";
	if (!["content", "files", "count"].includes(mode)) throw codedError("INVALID_OPTION", `Invalid mode: ${mode} (expected content, files, count)`);
	const args = filterFlags(opts);
	if (opts.ignoreCase) args.push("--ignore-case");
	if (opts.literal) args.push("--fixed-strings");
	if (opts.multiline) args.push("--multiline");
	validateWithRg(rg, args, opts.pattern);
}
