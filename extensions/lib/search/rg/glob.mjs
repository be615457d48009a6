// The rg fallback's glob: a JS port of globset's matching rules (as the native glob uses them) and the glob
// runner over two rg file listings (with and without ignore rules), stat'ed for mtime and size.
import { promises as fsp } from "node:fs";
import path from "node:path";
import { DEFAULTS } from "../../defaults.mjs";
import { codedError } from "../../errors.mjs";
import { comparePaths, displayPath } from "./display.mjs";
import { ancestorDirs, ignoredRoots, rootLabel } from "./ignored.mjs";
import { baseFlags, chunks, ignoreFlags, listFiles, MAX_ERRORS_KEPT, NO_GIT, searchRoot } from "./process.mjs";

/** Files stat'ed at once. */
const STAT_CONCURRENCY = 64;

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

export async function runGlob(rg, opts) {
	const started = performance.now();
	const { root, isFile } = searchRoot(opts);
	if (isFile) throw codedError("INVALID_OPTION", `Not a directory: ${root}`);
	const noIgnore = opts.noIgnore ?? DEFAULTS.walk.noIgnore;
	const kind = opts.kind ?? "file";
	const limit = Math.max(1, opts.limit ?? DEFAULTS.glob.limit);
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
		// Roots that could hold a match, as the native core names them when it leaves them unwalked: every
		// directory, and an ignored file only when the pattern takes it.
		const allRoots = (noIgnore ? ignoredRoots(projectFiles, [...all, ...allDirs], allDirs) : []).filter(
			(r) => r.isDir || matches(raw(r.root).toString("utf8")),
		);
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
			// The rg fallback has no index.
			index: /** @type {const} */ ("off"),
		};
	} finally {
		clearTimeout(timer);
		opts.signal?.removeEventListener("abort", onAbort);
		for (const p of registry) p.kill();
	}
}
