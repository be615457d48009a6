// Guarded loader for the napi addon, shared by the extensions and the CLI. The generated index.js throws
// "npm has a bug related to optional dependencies" whenever no binary loads, which sends users down the wrong
// path; this loader turns every failure (missing binary, dlopen error, stale binary) into one actionable
// message and never throws, so the extension can fall back to ripgrep instead of failing to load.
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** @typedef {import("./native.d.mts").Native} Native */
/** @typedef {import("./native.d.mts").NativeLoad} NativeLoad */

/** The JS-visible API this extension was written against (see `apiVersion()` in index.d.ts). */
export const EXPECTED_API_VERSION = 8;

export const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

// Survives /reload (modules are re-evaluated, Node keeps the .node addon loaded anyway). Keyed by package
// directory: two installed copies of pi-utils in one Pi process each get their own binary.
const CACHE_KEY = Symbol.for("pi-utils.native");

export function nativeFix(dir = packageDir) {
	return `install Rust (https://rustup.rs) and run \`npm install\` in ${dir}`;
}

/**
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {NativeLoad}
 */
export function loadNative(env = process.env) {
	if (env.PI_UTILS_DISABLE_NATIVE === "1") {
		return unavailable("disabled by PI_UTILS_DISABLE_NATIVE=1", "unset PI_UTILS_DISABLE_NATIVE");
	}
	const store = /** @type {{ [CACHE_KEY]?: Map<string, Native> }} */ (/** @type {unknown} */ (globalThis));
	const cache = (store[CACHE_KEY] ??= new Map());
	const cached = cache.get(packageDir);
	if (cached) return { native: cached };
	/** @type {Native} */
	let mod;
	try {
		mod = createRequire(import.meta.url)("../../index.js");
	} catch (e) {
		return unavailable(loadFailureReason(e), nativeFix());
	}
	/** @type {unknown} */
	let version;
	try {
		version = typeof mod.apiVersion === "function" ? mod.apiVersion() : undefined;
	} catch {
		version = undefined;
	}
	if (version !== EXPECTED_API_VERSION) {
		const found = version === undefined ? "no apiVersion()" : `API version ${String(version)}`;
		return unavailable(`the native binary is stale (${found}, expected ${EXPECTED_API_VERSION})`, nativeFix());
	}
	cache.set(packageDir, mod);
	return { native: mod };
}

/**
 * @param {string} reason
 * @param {string} fix
 * @returns {NativeLoad}
 */
function unavailable(reason, fix) {
	return { error: `pi-utils native core unavailable: ${reason}. Fix: ${fix}`, fix };
}

/**
 * The napi loader chains every attempt through `cause`. "Cannot find module" entries only say that a
 * candidate is absent; anything else (bad ELF, missing GLIBC symbol, version mismatch) is the real reason.
 * @param {unknown} e
 * @returns {string}
 */
export function loadFailureReason(e) {
	/** @type {string[]} */
	const messages = [];
	for (let c = e, i = 0; c && i < 32; c = /** @type {{ cause?: unknown }} */ (c).cause, i++) {
		const m = /** @type {{ message?: unknown }} */ (c).message;
		messages.push(typeof m === "string" ? m.split("\n")[0] : String(c));
	}
	const real = messages.find((m) => !m.startsWith("Cannot find module") && !m.startsWith("Cannot find native binding"));
	if (real) return real;
	const local = messages.map((m) => /Cannot find module '\.\/([^']+\.node)'/.exec(m)?.[1]).find(Boolean);
	if (local) return `no native binary for ${process.platform}-${process.arch} (${local} was never built)`;
	return messages[0] ?? "unknown error";
}
