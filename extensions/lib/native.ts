// Guarded loader for the napi addon. The generated index.js throws "npm has a bug related to optional
// dependencies" whenever no binary loads, which sends users down the wrong path; this loader turns every
// failure (missing binary, dlopen error, stale binary) into one actionable message and never throws, so the
// extension can fall back to ripgrep instead of failing to load.
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type * as NativeModule from "../../index.js";

export type Native = typeof NativeModule;
export type NativeLoad = { native: Native } | { error: string; fix: string };

/** The JS-visible API this extension was written against (see `apiVersion()` in index.d.ts). */
export const EXPECTED_API_VERSION = 3;

export const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

// Survives /reload (modules are re-evaluated, Node keeps the .node addon loaded anyway). Keyed by package
// directory: two installed copies of pi-utils in one Pi process each get their own binary.
const CACHE_KEY = Symbol.for("pi-utils.native");
type Cache = { [CACHE_KEY]?: Map<string, Native> };

export function nativeFix(dir = packageDir): string {
	return `install Rust (https://rustup.rs) and run \`npm install\` in ${dir}`;
}

export function loadNative(env: NodeJS.ProcessEnv = process.env): NativeLoad {
	if (env.PI_UTILS_DISABLE_NATIVE === "1") {
		return unavailable("disabled by PI_UTILS_DISABLE_NATIVE=1", "unset PI_UTILS_DISABLE_NATIVE");
	}
	const cache = ((globalThis as Cache)[CACHE_KEY] ??= new Map());
	const cached = cache.get(packageDir);
	if (cached) return { native: cached };
	let mod: Native;
	try {
		mod = createRequire(import.meta.url)("../../index.js") as Native;
	} catch (e) {
		return unavailable(loadFailureReason(e), nativeFix());
	}
	let version: unknown;
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

function unavailable(reason: string, fix: string): NativeLoad {
	return { error: `pi-utils native core unavailable: ${reason}. Fix: ${fix}`, fix };
}

/**
 * The napi loader chains every attempt through `cause`. "Cannot find module" entries only say that a
 * candidate is absent; anything else (bad ELF, missing GLIBC symbol, version mismatch) is the real reason.
 */
export function loadFailureReason(e: unknown): string {
	const messages: string[] = [];
	for (let c: unknown = e, i = 0; c && i < 32; c = (c as { cause?: unknown }).cause, i++) {
		const m = (c as { message?: unknown }).message;
		messages.push(typeof m === "string" ? m.split("\n")[0] : String(c));
	}
	const real = messages.find((m) => !m.startsWith("Cannot find module") && !m.startsWith("Cannot find native binding"));
	if (real) return real;
	const local = messages.map((m) => /Cannot find module '\.\/([^']+\.node)'/.exec(m)?.[1]).find(Boolean);
	if (local) return `no native binary for ${process.platform}-${process.arch} (${local} was never built)`;
	return messages[0] ?? "unknown error";
}
