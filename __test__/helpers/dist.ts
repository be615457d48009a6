// Shared by the distribution specs: environments that keep npm, git and cargo off the network, PATH without
// cargo, and `npm pack` of this repository (or a staged copy of it).
import fs from "node:fs";
import path from "node:path";
import { packageRoot } from "./pi-cli.ts";
import { describeRun, runCommand } from "./run-command.ts";

export { packageRoot };

export interface RootManifest {
	name: string;
	version: string;
	files: string[];
	repository?: { type: string; url: string };
	optionalDependencies?: Record<string, string>;
	scripts: Record<string, string | undefined>;
	pi: { extensions: string[] };
	napi: { binaryName: string; packageName: string; targets: string[] };
}

export function readManifest(dir = packageRoot): RootManifest {
	return JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as RootManifest;
}

/** The napi suffix of this machine when it is the one platform whose leaf these specs can fill (x64 glibc Linux). */
export function isLinuxX64Gnu(): boolean {
	const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
	return process.platform === "linux" && process.arch === "x64" && Boolean(header?.glibcVersionRuntime);
}

/**
 * process.env without what would change the behaviour under test: npm's own variables when the suite runs under
 * `npm test` (an inherited npm_config_* would reconfigure the inner npm), the loader override and our switches.
 */
export function baseEnv(): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = {};
	const drop = /^(npm_|INIT_CWD$|NAPI_RS_|PI_UTILS_|PI_CODING_AGENT_DIR$|CARGO$|GIT_)/i;
	for (const [k, v] of Object.entries(process.env)) if (!drop.test(k)) env[k] = v;
	// The run's own index cache (helpers/isolate-cache.ts) is kept: a Pi started here must not write to ~/.cache.
	if (process.env.PI_UTILS_INDEX_DIR) env.PI_UTILS_INDEX_DIR = process.env.PI_UTILS_INDEX_DIR;
	return env;
}

/**
 * npm with an empty cache in `dir` and offline: any package npm wanted from a registry would fail the install
 * (ENOTCACHED) instead of being fetched. The registry points at a closed local port in case a code path ignores
 * --offline. Cargo is kept offline too: its crates come from ~/.cargo, filled by this repository's own build.
 */
export function offlineEnv(dir: string): NodeJS.ProcessEnv {
	return {
		npm_config_offline: "true",
		npm_config_cache: path.join(dir, "npm-cache"),
		npm_config_registry: "http://127.0.0.1:9/",
		npm_config_audit: "false",
		npm_config_fund: "false",
		npm_config_update_notifier: "false",
		CARGO_NET_OFFLINE: "true",
	};
}

function executableIn(dir: string, name: string): boolean {
	try {
		fs.accessSync(path.join(dir, name), fs.constants.X_OK);
		return true;
	} catch {
		return false;
	}
}

/** PATH minus every directory holding cargo; undefined when that would also lose a tool the specs need. */
export function pathWithoutCargo(needs: string[] = ["node", "npm", "git"]): string | undefined {
	const dirs = (process.env.PATH ?? "").split(path.delimiter).filter((d) => d && !executableIn(d, "cargo"));
	return needs.every((tool) => dirs.some((d) => executableIn(d, tool))) ? dirs.join(path.delimiter) : undefined;
}

export interface PackList {
	files: string[];
	/** Bytes of the .tgz. */
	size: number;
	unpackedSize: number;
}

/** What `npm pack` would put in the tarball of `dir` (`--dry-run`, nothing written). */
export async function packList(dir: string): Promise<PackList> {
	const r = await runCommand("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
		cwd: dir,
		env: { ...baseEnv(), npm_config_update_notifier: "false" },
		timeoutMs: 60_000,
	});
	if (r.code !== 0) throw new Error(`npm pack --dry-run failed: ${describeRun(r)}`);
	const [pack] = JSON.parse(r.stdout) as Array<{ files: Array<{ path: string }>; size: number; unpackedSize: number }>;
	return { files: pack.files.map((f) => f.path).sort(), size: pack.size, unpackedSize: pack.unpackedSize };
}

/** `npm pack` of `dir` into `outDir`; returns the tarball's path. */
export async function pack(dir: string, outDir: string): Promise<string> {
	const r = await runCommand("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", outDir], {
		cwd: dir,
		env: { ...baseEnv(), npm_config_update_notifier: "false" },
		timeoutMs: 120_000,
	});
	if (r.code !== 0) throw new Error(`npm pack failed in ${dir}: ${describeRun(r)}`);
	const [info] = JSON.parse(r.stdout) as Array<{ filename: string }>;
	return path.join(outDir, info.filename);
}

/** Every `*.node` file directly in `dir`. */
export function nodeFilesIn(dir: string): string[] {
	return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".node")) : [];
}
