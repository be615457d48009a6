// Ignored-root emulation: the native core lists results under paths the ignore rules exclude after the
// project's own, grouped by their ignored root. rg cannot say which root a path belongs to, so the fallback
// compares an ignore-respecting listing with an ignore-free one and derives the roots here.
import { comparePaths, displayPath } from "./display.mjs";

export function ancestorDirs(files) {
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
export function rootLabel(r) {
	return `${displayPath(Buffer.from(r.root, "latin1")).text}${r.isDir ? "/" : ""}`;
}

export function rootOf(roots, p) {
	if (roots.byName.has(p)) return roots.byName.get(p);
	for (let i = p.indexOf("/"); i !== -1; i = p.indexOf("/", i + 1)) {
		const r = roots.byName.get(p.slice(0, i));
		if (r?.isDir) return r;
	}
	return undefined;
}
