// The ripgrep fallback (entry point of this folder): the same `grep(opts)` / `glob(opts)` interface as the
// native core (index.d.ts), built on spawning `rg`, for machines where the addon cannot load. Output is meant
// to be identical to the native core's; where it cannot be, the difference is named here and the summary field
// stays empty:
//
// - Ignored-last ordering is emulated in two phases: the project is searched with ignore rules on, then the
//   ignored roots (found by comparing an ignore-respecting and an ignore-free `rg --files` listing) are
//   searched with `--no-ignore`. An ignored root is the top directory holding no project file, so a directory
//   whose files are each ignored (`logs/*.log`) is summarised as `logs/`, where the native core lists the files.
// - `binarySkipped` is always 0: rg skips binary files without reporting them. `binaryStopped` lists the walked
//   files rg stopped at a NUL after matches; a file named alone is read by rg's JSON printer up to and including
//   the first match where it saw a NUL (shown here as a hit), and is not listed.
// - `filesSearched` is exact when the search ran to the end; after a stop (limit, timeout, cancel) it counts
//   the listed files up to the last file rg reported, a lower bound.
// - glob finds directories through the files under them (rg lists files only), so empty directories are
//   missing. Its matcher is a JS port of globset's rules, matching characters where globset matches bytes: `?`
//   and `[!a]` match one non-ASCII character here, one byte there.
// - Names that are not UTF-8 cannot be passed to rg as arguments, so such ignored roots are skipped in grep
//   (counted in `errors`).
import { codedError } from "../../errors.mjs";
import { RgGrepSearch, validateGrep } from "./grep.mjs";
import { runGlob } from "./glob.mjs";
import { resolveRg } from "./locate.mjs";
import { searchRoot, validateWithRg } from "./process.mjs";

export { comparePaths, displayPath, windowLine } from "./display.mjs";
export { globToRegExp } from "./glob.mjs";
export { ignoredRoots } from "./ignored.mjs";
export { findRg, RG_INSTALL_HINT } from "./locate.mjs";

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
			if (!opts.pattern) throw codedError("INVALID_PATTERN", "Invalid glob: pattern must not be empty");
			if (opts.signal?.aborted) throw codedError("CANCELLED", "Operation aborted");
			if (opts.kind && !["file", "dir", "any"].includes(opts.kind)) throw codedError("INVALID_OPTION", `Invalid kind: ${opts.kind} (expected file, dir, any)`);
			const bin = rgPath();
			validateWithRg(bin, ["-g", opts.pattern], "x");
			searchRoot(opts);
			return runGlob(bin, opts);
		},
	};
}

export const rgBackend = createRgBackend();
