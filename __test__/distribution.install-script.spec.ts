// scripts/install.cjs decides between "a binary already loads", "build with cargo" and "fall back", shows
// progress, and exits 0 whatever happens. A stand-in `cargo` (via $CARGO) makes every branch fast and
// deterministic; the real cargo build is exercised by distribution.git-install and distribution.pack.
import { describe, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { baseEnv, isLinuxX64Gnu, nodeFilesIn, packageRoot } from "./helpers/dist.ts";
import { describeRun, runCommand } from "./helpers/run-command.ts";

const builtAddon = path.join(packageRoot, "pi-utils.linux-x64-gnu.node");
const canLoadAddon = isLinuxX64Gnu() && fs.existsSync(builtAddon);

const FAKE_CARGO = `#!/bin/sh
echo "$*" >> "$FAKE_CARGO_LOG"
if [ "$1" = "--version" ]; then echo "cargo 1.95.0 (stand-in)"; exit 0; fi
echo "CARGO_TARGET_DIR=$CARGO_TARGET_DIR" >> "$FAKE_CARGO_LOG"
echo "   Compiling pi-utils v0.1.0 (stand-in)" >&2
case "$FAKE_CARGO_MODE" in
  fail) echo "error: could not compile \\\`pi-utils\\\`" >&2; exit 101 ;;
  garbage) mkdir -p "$CARGO_TARGET_DIR/release"; echo "not a shared library" > "$CARGO_TARGET_DIR/release/libpi_utils.so" ;;
  nothing) ;;
  *) mkdir -p "$CARGO_TARGET_DIR/release"; cp "$FAKE_CARGO_LIB" "$CARGO_TARGET_DIR/release/libpi_utils.so"
     echo "log pump (stand-in)" > "$CARGO_TARGET_DIR/release/pi-utils-pump" ;;
esac
echo "    Finished \\\`release\\\` profile [optimized] target(s) in 0.01s" >&2
`;

interface Setup {
	pkg: string;
	targetDir: string;
	cargoLog: string;
	run(env?: NodeJS.ProcessEnv): ReturnType<typeof runCommand>;
	cargoCalls(): string[];
}

/** A package directory with what the script looks at: package.json, index.js, the script, optionally more. */
function setup(t: TestContext, o: { checkout: boolean; sources: boolean; prebuilt?: boolean }): Setup {
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-install-"));
	t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
	const pkg = path.join(tmp, "pkg");
	fs.mkdirSync(path.join(pkg, "scripts"), { recursive: true });
	for (const f of ["package.json", "index.js", "scripts/install.cjs", ...(o.sources ? ["Cargo.toml"] : [])]) {
		fs.copyFileSync(path.join(packageRoot, f), path.join(pkg, f));
	}
	if (o.checkout) fs.mkdirSync(path.join(pkg, ".git"));
	if (o.prebuilt) fs.copyFileSync(builtAddon, path.join(pkg, "pi-utils.linux-x64-gnu.node"));
	const cargo = path.join(tmp, "bin", "cargo");
	fs.mkdirSync(path.dirname(cargo));
	fs.writeFileSync(cargo, FAKE_CARGO, { mode: 0o755 });
	const cargoLog = path.join(tmp, "cargo.log");
	const targetDir = path.join(tmp, "target");
	return {
		pkg,
		targetDir,
		cargoLog,
		run: (env = {}) =>
			runCommand(process.execPath, [path.join(pkg, "scripts", "install.cjs")], {
				cwd: pkg,
				env: { ...baseEnv(), CARGO: cargo, CARGO_TARGET_DIR: targetDir, FAKE_CARGO_LOG: cargoLog, FAKE_CARGO_LIB: builtAddon, ...env },
				timeoutMs: 60_000,
			}),
		cargoCalls: () => (fs.existsSync(cargoLog) ? fs.readFileSync(cargoLog, "utf8").trim().split("\n") : []),
	};
}

describe("scripts/install.cjs", { skip: process.platform === "win32" ? "the stand-in cargo is a shell script" : false }, () => {
	test("a checkout builds with plain cargo into CARGO_TARGET_DIR, streams cargo's output and installs the addon", { skip: canLoadAddon ? false : "needs the built linux-x64-gnu addon" }, async (t) => {
		const s = setup(t, { checkout: true, sources: true });
		const r = await s.run();
		assert.equal(r.code, 0, describeRun(r));
		assert.deepEqual(s.cargoCalls(), ["--version", "build --release --locked --lib --bin pi-utils-pump", `CARGO_TARGET_DIR=${s.targetDir}`]);
		assert.match(r.stderr, /\[pi-utils\] building the native addon: \S+ build --release --locked --lib --bin pi-utils-pump/);
		assert.match(r.stderr, /Compiling pi-utils v0\.1\.0 \(stand-in\)/, "cargo's own progress reaches the user");
		assert.match(r.stderr, /\[pi-utils\] native addon ready in [\d.]+s: .*pi-utils\.linux-x64-gnu\.node\n$/);
		const installed = fs.readFileSync(path.join(s.pkg, "pi-utils.linux-x64-gnu.node"));
		assert.ok(installed.equals(fs.readFileSync(builtAddon)), "the library cargo produced, under the loader's name");
		assert.deepEqual(nodeFilesIn(s.pkg), ["pi-utils.linux-x64-gnu.node"], "no temp file left behind");
		const pump = path.join(s.pkg, "pi-utils-pump");
		assert.equal(fs.readFileSync(pump, "utf8"), "log pump (stand-in)\n", "the log pump, beside the addon");
		assert.equal(fs.statSync(pump).mode & 0o111, 0o111, "executable");
		assert.deepEqual(fs.readdirSync(s.pkg).filter((f) => f.includes(".tmp")), [], "no temp file left behind");
	});

	test("a checkout rebuilds even when an old binary loads, so HEAD never runs a stale addon", { skip: canLoadAddon ? false : "needs the built linux-x64-gnu addon" }, async (t) => {
		const s = setup(t, { checkout: true, sources: true, prebuilt: true });
		const r = await s.run();
		assert.equal(r.code, 0, describeRun(r));
		assert.ok(s.cargoCalls().includes("build --release --locked --lib --bin pi-utils-pump"), describeRun(r));
	});

	test("an installed package whose binary loads (a prebuilt leaf) does not touch cargo", { skip: canLoadAddon ? false : "needs the built linux-x64-gnu addon" }, async (t) => {
		const s = setup(t, { checkout: false, sources: true, prebuilt: true });
		const r = await s.run();
		assert.equal(r.code, 0, describeRun(r));
		assert.deepEqual(s.cargoCalls(), []);
		assert.equal(r.stderr, "");
	});

	test("no cargo: exit 0 and one hint naming rustup and the command to re-run", async (t) => {
		const s = setup(t, { checkout: true, sources: true });
		const r = await s.run({ CARGO: path.join(s.pkg, "no-such-cargo") });
		assert.equal(r.code, 0, describeRun(r));
		assert.equal(
			r.stderr,
			"[pi-utils] cargo not found: the extensions will use the ripgrep fallback.\n" +
				`[pi-utils] For the native core, install Rust (https://rustup.rs), then run \`npm install\` in ${s.pkg}.\n`,
		);
		assert.deepEqual(nodeFilesIn(s.pkg), []);
	});

	test("a failing cargo build: exit 0, cargo's error shown, then the fallback notice", async (t) => {
		const s = setup(t, { checkout: true, sources: true });
		const r = await s.run({ FAKE_CARGO_MODE: "fail" });
		assert.equal(r.code, 0, describeRun(r));
		assert.match(r.stderr, /error: could not compile `pi-utils`\n/);
		assert.match(r.stderr, /\[pi-utils\] cargo build failed \(exit 101\) after [\d.]+s: the extensions will use the ripgrep fallback\.\n/);
		assert.deepEqual(nodeFilesIn(s.pkg), []);
	});

	test("a build that produces no library, or one that does not load: exit 0 and nothing left for the loader to trip on", async (t) => {
		for (const mode of ["nothing", "garbage"]) {
			const s = setup(t, { checkout: true, sources: true });
			const r = await s.run({ FAKE_CARGO_MODE: mode });
			assert.equal(r.code, 0, `${mode}: ${describeRun(r)}`);
			const expected = mode === "nothing" ? /could not install the built addon \(ENOENT/ : /the built addon does not load/;
			assert.match(r.stderr, expected, mode);
			assert.deepEqual(nodeFilesIn(s.pkg), [], mode);
		}
	});

	test("an installed package with no binary and no sources says so and exits 0", async (t) => {
		const s = setup(t, { checkout: false, sources: false });
		const r = await s.run();
		assert.equal(r.code, 0, describeRun(r));
		assert.match(r.stderr, /^\[pi-utils\] no prebuilt binary for \S+ and no Rust sources to build one: using the ripgrep fallback\n$/);
		assert.deepEqual(s.cargoCalls(), []);
	});

	test("PI_UTILS_SKIP_BUILD=1 skips everything", async (t) => {
		const s = setup(t, { checkout: true, sources: true });
		const r = await s.run({ PI_UTILS_SKIP_BUILD: "1" });
		assert.equal(r.code, 0, describeRun(r));
		assert.deepEqual(s.cargoCalls(), []);
		assert.match(r.stderr, /PI_UTILS_SKIP_BUILD=1/);
	});
});
