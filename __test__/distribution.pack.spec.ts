// What npm consumers get (`npm install @sting8k/pi-utils`, `pi install npm:@sting8k/pi-utils`), proven without a
// registry: the release steps run on a staged copy of this repository (the napi CLI's pre-publish adds the
// per-platform optionalDependencies at pack time, as it will in the release job), the root and linux-x64-gnu
// tarballs install offline into an empty folder, and the addon loads from the leaf. Without a matching leaf,
// the shipped Rust sources build in the consumer's node_modules.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseTriple } from "@napi-rs/cli";
import { baseEnv, isLinuxX64Gnu, nodeFilesIn, offlineEnv, pack, packageRoot, packList, readManifest } from "./helpers/dist.ts";
import { describeRun, runCommand } from "./helpers/run-command.ts";

const manifest = readManifest();
const builtAddon = path.join(packageRoot, "pi-utils.linux-x64-gnu.node");
const napiCli = path.join(packageRoot, "node_modules/@napi-rs/cli/dist/cli.js");
const hasCargo = spawnSync("cargo", ["--version"], { stdio: "ignore" }).status === 0;

const prepublishOnly = manifest.scripts.prepublishOnly ?? "";
const leafTargets = manifest.napi.targets.map((triple) => parseTriple(triple));
const leafName = (abi: string) => `${manifest.napi.packageName}-${abi}`;

/** Relative module specifiers (import/export from, import(), require()) in a JS/TS source. */
function relativeSpecifiers(source: string): string[] {
	const out: string[] = [];
	for (const m of source.matchAll(/\bfrom\s*["'](\.{1,2}\/[^"']+)["']|\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g)) out.push(m[1] ?? m[2]);
	return out;
}

describe("what npm pack ships", () => {
	test("files: the extensions, the CLI, the loader and the sources cargo needs; no binaries, tests, bench or npm/", async (t) => {
		const { files, size, unpackedSize } = await packList(packageRoot);
		t.diagnostic(`npm pack: ${files.length} files, ${(size / 1000).toFixed(1)} kB packed, ${(unpackedSize / 1000).toFixed(1)} kB unpacked`);
		const top = [...new Set(files.map((f) => f.split("/")[0]))].sort();
		assert.deepEqual(top, ["Cargo.lock", "Cargo.toml", "LICENSE", "README.md", "bin", "build.rs", "docs", "extensions", "index.d.ts", "index.js", "package.json", "scripts", "src"]);
		assert.deepEqual(files.filter((f) => f.startsWith("scripts/")), ["scripts/install.cjs"]);
		assert.deepEqual(files.filter((f) => f.endsWith(".node")), [], "binaries ship in the per-platform packages");
		assert.deepEqual(files.filter((f) => /(^|\/|_)tests?\.rs$/.test(f)), [], "Rust unit tests stay out");
		assert.ok(files.includes("src/lib.rs"));
		for (const ext of manifest.pi.extensions) assert.ok(files.includes(path.posix.normalize(ext)), `${ext} (pi.extensions) is shipped`);
		// Pi loads a folder under extensions/ that has an index file as one more extension: the tool modules
		// beside the two entries (extensions/fs-search/, extensions/shell-bg/) must never have one.
		assert.deepEqual(files.filter((f) => /^extensions\/[^/]+\/index\.(ts|js)$/.test(f)), [], "no index file in a folder under extensions/");
		assert.ok(files.includes("bin/pi-utils.mjs"), "the CLI is shipped");
		// Every module a shipped extension, the CLI or the install script imports is shipped too.
		for (const file of files.filter((f) => /^(extensions|bin|scripts)\/.*\.(ts|mts|mjs|cjs|js)$/.test(f))) {
			const source = fs.readFileSync(path.join(packageRoot, file), "utf8");
			for (const spec of relativeSpecifiers(source)) {
				const target = path.posix.join(path.posix.dirname(file), spec);
				assert.ok(files.includes(target), `${file} imports ${spec}, which is not in the package`);
			}
		}
	});

	test("the manual's links: README and docs/ link to files the package ships, or to the repository npm names", async () => {
		const { files } = await packList(packageRoot);
		assert.equal(manifest.repository?.url, "git+https://github.com/sting8k/pi-utils.git", "npm resolves the other relative links against the repository");
		const docs = files.filter((f) => f === "README.md" || /^docs\/.*\.md$/.test(f));
		assert.ok(docs.length >= 5, docs.join(", "));
		const outside: string[] = [];
		for (const doc of docs) {
			const text = fs.readFileSync(path.join(packageRoot, doc), "utf8");
			for (const m of text.matchAll(/\]\(([^)#\s]+)(?:#[^)\s]*)?\)/g)) {
				const target = m[1];
				if (/^[a-z]+:/.test(target)) continue;
				const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(doc), target)).replace(/\/$/, "");
				assert.ok(fs.existsSync(path.join(packageRoot, resolved)), `${doc} links to ${target}, which does not exist`);
				if (!files.some((f) => f === resolved || f.startsWith(`${resolved}/`))) outside.push(resolved);
			}
		}
		// What the package leaves out on purpose is only the measurement tables; every other link is to a shipped file.
		assert.deepEqual([...new Set(outside)].sort(), ["bench/README.md"]);
	});

	test("npm/ holds the napi-generated leaf of every napi target: same version as the root, wired into index.js", () => {
		const npmDir = path.join(packageRoot, "npm");
		assert.deepEqual(fs.readdirSync(npmDir).sort(), leafTargets.map((target) => target.platformArchABI).sort());
		const indexJs = fs.readFileSync(path.join(packageRoot, "index.js"), "utf8");
		for (const target of leafTargets) {
			const abi = target.platformArchABI;
			const dir = path.join(npmDir, abi);
			const leaf = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as Record<string, unknown>;
			const binary = `${manifest.napi.binaryName}.${abi}.node`;
			assert.equal(leaf.name, leafName(abi));
			assert.equal(leaf.version, manifest.version, `${abi}: \`napi version\` keeps leaves at the root's version`);
			assert.equal(leaf.main, binary);
			assert.deepEqual(leaf.files, [binary]);
			assert.deepEqual(leaf.os, [target.platform]);
			assert.deepEqual(leaf.cpu, [target.arch]);
			assert.deepEqual(leaf.libc, target.abi === "gnu" && target.platform === "linux" ? ["glibc"] : undefined);
			assert.ok(!(leaf.keywords as string[] | undefined)?.includes("pi-package"), `${abi}: a leaf is not a Pi package`);
			assert.deepEqual(nodeFilesIn(dir), [], `${abi}: binaries are release artifacts, never committed`);
			assert.ok(indexJs.includes(`require('${leaf.name}')`), `index.js loads ${leaf.name}`);
		}
		// The leaves are unpublished: declared here, npm ci / npm install of this repository would fail.
		assert.equal(manifest.optionalDependencies, undefined, "optionalDependencies are added at pack time (napi pre-publish)");
		assert.match(prepublishOnly, /^napi pre-publish -t npm\b/, "npm publish adds them (and fails without every binary)");
	});

	test("prepublishOnly refuses a checkout without the release binaries, leaving package.json as it was", async (t) => {
		const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-prepublish-"));
		t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
		for (const f of ["package.json", "index.js", "index.d.ts"]) fs.copyFileSync(path.join(packageRoot, f), path.join(tmp, f));
		fs.cpSync(path.join(packageRoot, "npm"), path.join(tmp, "npm"), { recursive: true });
		const [, ...args] = prepublishOnly.split(/\s+/);
		// Offline with a dead registry: were the check missing, the leaf publish it would attempt fails locally.
		const r = await runCommand(process.execPath, [napiCli, ...args], { cwd: tmp, env: { ...baseEnv(), ...offlineEnv(tmp) }, timeoutMs: 60_000 });
		assert.notEqual(r.code, 0, describeRun(r));
		assert.match(r.stdout + r.stderr, /is incomplete: missing pi-utils\.[\w-]+\.node/);
		assert.equal(fs.readFileSync(path.join(tmp, "package.json"), "utf8"), fs.readFileSync(path.join(packageRoot, "package.json"), "utf8"));
	});

	test("`npm version` keeps the leaves at the root's version (its version hook runs napi version)", async (t) => {
		assert.match(manifest.scripts.version ?? "", /^napi version\b/);
		const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-version-"));
		t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
		fs.cpSync(path.join(packageRoot, "npm"), path.join(tmp, "npm"), { recursive: true });
		fs.writeFileSync(path.join(tmp, "package.json"), JSON.stringify({ ...manifest, version: "9.8.7" }, null, 2));
		const r = await runCommand(process.execPath, [napiCli, "version"], { cwd: tmp, env: baseEnv(), timeoutMs: 60_000 });
		assert.equal(r.code, 0, describeRun(r));
		for (const target of leafTargets) {
			const leaf = JSON.parse(fs.readFileSync(path.join(tmp, "npm", target.platformArchABI, "package.json"), "utf8")) as { version: string };
			assert.equal(leaf.version, "9.8.7", target.platformArchABI);
		}
	});
});

describe("npm consumers, from tarballs", { skip: isLinuxX64Gnu() ? false : "the leaf filled here is linux-x64-gnu" }, () => {
	let tmp: string;
	let rootTgz: string;
	let leafTgz: string;

	before(async () => {
		assert.ok(fs.existsSync(builtAddon), `${builtAddon} is missing: run \`npm install\` (or \`npm run build\`) first`);
		tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-pack-"));
		const stage = path.join(tmp, "stage");
		for (const f of (await packList(packageRoot)).files) {
			fs.mkdirSync(path.dirname(path.join(stage, f)), { recursive: true });
			fs.copyFileSync(path.join(packageRoot, f), path.join(stage, f));
		}
		fs.cpSync(path.join(packageRoot, "npm"), path.join(stage, "npm"), { recursive: true });
		// What `napi artifacts` does in the release job. pre-publish insists on an artifact for every target; the
		// other leaves get placeholders and are never packed.
		for (const target of leafTargets) {
			const abi = target.platformArchABI;
			const dest = path.join(stage, "npm", abi, `${manifest.napi.binaryName}.${abi}.node`);
			if (abi === "linux-x64-gnu") fs.copyFileSync(builtAddon, dest);
			else fs.writeFileSync(dest, "placeholder: never packed\n");
		}
		// The package's own prepublishOnly command, minus the publishing of the leaves.
		const [tool, ...args] = prepublishOnly.split(/\s+/);
		assert.equal(tool, "napi");
		const prePublish = await runCommand(process.execPath, [napiCli, ...args, "--skip-optional-publish"], {
			cwd: stage,
			env: baseEnv(),
			timeoutMs: 120_000,
		});
		assert.equal(prePublish.code, 0, describeRun(prePublish));
		const out = path.join(tmp, "out");
		fs.mkdirSync(out);
		rootTgz = await pack(stage, out);
		leafTgz = await pack(path.join(stage, "npm", "linux-x64-gnu"), out);
	});
	after(() => fs.rmSync(tmp, { recursive: true, force: true }));

	test("napi pre-publish declares every leaf as an optionalDependency at the root's version", () => {
		const staged = readManifest(path.join(tmp, "stage"));
		assert.deepEqual(staged.optionalDependencies, Object.fromEntries(leafTargets.map((t) => [leafName(t.platformArchABI), manifest.version])));
	});

	test("root + linux-x64-gnu tarballs install offline into an empty folder; the addon loads from the leaf", async (t) => {
		t.diagnostic(`tarballs: root ${(fs.statSync(rootTgz).size / 1000).toFixed(1)} kB, linux-x64-gnu leaf ${(fs.statSync(leafTgz).size / 1e6).toFixed(1)} MB`);
		const consumer = path.join(tmp, "consumer");
		fs.mkdirSync(consumer);
		// No cargo at all: if the loader missed the leaf, the install script would say "cargo not found".
		const install = await runCommand("npm", ["install", "--foreground-scripts", rootTgz, leafTgz], {
			cwd: consumer,
			env: { ...baseEnv(), ...offlineEnv(tmp), CARGO: path.join(tmp, "no-cargo") },
			timeoutMs: 180_000,
		});
		assert.equal(install.code, 0, describeRun(install));
		assert.doesNotMatch(install.stdout + install.stderr, /\[pi-utils\]/, "the install script found the prebuilt binary and stayed quiet");
		const rootDir = path.join(consumer, "node_modules/@sting8k/pi-utils");
		assert.deepEqual(nodeFilesIn(rootDir), [], "the root package carries no binary");
		const probe = await runCommand(
			process.execPath,
			["-e", "const m = require('@sting8k/pi-utils'); console.log(JSON.stringify({ api: m.apiVersion(), loaded: Object.keys(require.cache).filter((k) => k.endsWith('.node')) }))"],
			{ cwd: consumer, env: baseEnv(), timeoutMs: 30_000 },
		);
		assert.equal(probe.code, 0, describeRun(probe));
		const { api, loaded } = JSON.parse(probe.stdout) as { api: number; loaded: string[] };
		assert.equal(typeof api, "number");
		assert.deepEqual(loaded, [path.join(consumer, "node_modules/@sting8k/pi-utils-linux-x64-gnu/pi-utils.linux-x64-gnu.node")]);
		// Named ESM imports work too (index.js is CommonJS with statically visible exports).
		const esm = await runCommand(
			process.execPath,
			["--input-type=module", "-e", "import { apiVersion, grep, glob } from '@sting8k/pi-utils'; console.log(apiVersion(), typeof grep, typeof glob)"],
			{ cwd: consumer, env: baseEnv(), timeoutMs: 30_000 },
		);
		assert.equal(esm.stdout.trim(), `${api} function function`, describeRun(esm));
	});

	test("no leaf for the platform: the shipped sources build with cargo in node_modules, offline", { skip: hasCargo ? false : "cargo not installed", timeout: 15 * 60_000 }, async (t) => {
		const consumer = path.join(tmp, "consumer-source");
		fs.mkdirSync(consumer);
		// Offline with an empty cache the leaf cannot be fetched, as on a platform nothing was published for.
		const install = await runCommand("npm", ["install", "--foreground-scripts", rootTgz], {
			cwd: consumer,
			env: { ...baseEnv(), ...offlineEnv(tmp) },
			timeoutMs: 12 * 60_000,
		});
		t.diagnostic(`npm install with a source build: ${(install.ms / 1000).toFixed(1)} s`);
		assert.equal(install.code, 0, describeRun(install));
		const log = install.stdout + install.stderr;
		assert.match(log, /\[pi-utils\] building the native addon: cargo build --release --locked --lib/);
		assert.match(log, /\[pi-utils\] native addon ready in [\d.]+s/, describeRun(install));
		const rootDir = path.join(consumer, "node_modules/@sting8k/pi-utils");
		assert.deepEqual(fs.readdirSync(path.join(consumer, "node_modules/@sting8k")), ["pi-utils"], "no leaf was installed");
		assert.deepEqual(nodeFilesIn(rootDir), ["pi-utils.linux-x64-gnu.node"]);
		const probe = await runCommand(process.execPath, ["-e", "console.log(require('@sting8k/pi-utils').apiVersion())"], {
			cwd: consumer,
			env: baseEnv(),
			timeoutMs: 30_000,
		});
		assert.equal(probe.code, 0, describeRun(probe));
		assert.match(probe.stdout, /^\d+\n$/);
	});
});
