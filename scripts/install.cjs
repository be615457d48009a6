#!/usr/bin/env node
// The package's `install` script: makes sure index.js finds a native addon, building it from source when the
// package has none.
//
// It runs in three places: a `pi install git:` clone (npm install --omit=dev, so the napi CLI, a devDependency,
// is absent and plain cargo builds the library), this repository's own `npm install`/`npm ci`, and an npm
// consumer's node_modules when no prebuilt @sting8k/pi-utils-<platform> package matched. It ALWAYS exits 0:
// without Rust (or when the build fails) the extensions fall back to ripgrep and tell the user once how to get
// the native core; an install that fails would instead make `pi install` fail altogether.
'use strict';

const { spawnSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const PROGRESS_EVERY_MS = 10000;
const log = (msg) => process.stderr.write(`[pi-utils] ${msg}\n`);
const FIX = `install Rust (https://rustup.rs), then run \`npm install\` in ${root}`;

// Nothing below may turn into a failed install, including a bug in this script.
process.on('uncaughtException', (err) => {
  log(`install step failed (${err && err.message}); the extensions will use the ripgrep fallback`);
  process.exit(0);
});
process.on('exit', () => {
  process.exitCode = 0;
});

/** The suffix index.js looks for: `pi-utils.<suffix>.node`. */
function platformSuffix() {
  const { platform, arch } = process;
  if (platform === 'linux') {
    const report = process.report && process.report.getReport();
    const glibc = report && report.header && report.header.glibcVersionRuntime;
    return `linux-${arch}-${glibc ? 'gnu' : 'musl'}`;
  }
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

/** The log pump background jobs write through (src/bin/pi-utils-pump.rs), copied beside the addon. */
function pumpName() {
  return process.platform === 'win32' ? 'pi-utils-pump.exe' : 'pi-utils-pump';
}

function libName() {
  if (process.platform === 'win32') return 'pi_utils.dll';
  if (process.platform === 'darwin') return 'libpi_utils.dylib';
  return 'libpi_utils.so';
}

/** Loads index.js in a separate process, as Pi will: a broken binary must not crash this script. */
function loads() {
  const probe = spawnSync(
    process.execPath,
    ['-e', `require(${JSON.stringify(path.join(root, 'index.js'))}).apiVersion()`],
    { stdio: 'ignore', timeout: 30000 },
  );
  return probe.status === 0;
}

function main() {
  if (process.env.PI_UTILS_SKIP_BUILD === '1') {
    log('PI_UTILS_SKIP_BUILD=1: not building the native addon');
    return;
  }
  // A git checkout always builds its own sources, even when some binary loads: main carries a -dev version no
  // prebuilt package matches, and an old pi-utils.*.node left in the tree must not stand in for HEAD. A
  // published package stops here when its prebuilt @sting8k/pi-utils-<platform> dependency loads.
  const checkout = fs.existsSync(path.join(root, '.git'));
  if (!checkout && loads()) return;
  if (!fs.existsSync(path.join(root, 'Cargo.toml'))) {
    log(`no prebuilt binary for ${platformSuffix()} and no Rust sources to build one: using the ripgrep fallback`);
    return;
  }
  const cargo = process.env.CARGO || 'cargo';
  if (spawnSync(cargo, ['--version'], { stdio: 'ignore' }).status !== 0) {
    log('cargo not found: the extensions will use the ripgrep fallback.');
    log(`For the native core, ${FIX}.`);
    return;
  }
  build(cargo);
}

function build(cargo) {
  // Outside the package: `pi update` runs `git clean -fdx` in its clone, which would throw an in-tree target/
  // away and make every update a cold build.
  const targetDir = process.env.CARGO_TARGET_DIR || path.join(os.homedir(), '.cache', 'pi-utils', 'target');
  const triple = process.env.CARGO_BUILD_TARGET;
  const built = path.join(targetDir, ...(triple ? [triple] : []), 'release', libName());
  const dest = path.join(root, `pi-utils.${platformSuffix()}.node`);
  const args = ['build', '--release', '--locked', '--lib', '--bin', 'pi-utils-pump'];
  log(`building the native addon: ${cargo} ${args.join(' ')} (target dir ${targetDir})`);
  log('a first build takes one to four minutes; later ones reuse the target dir');
  const started = Date.now();
  const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
  // Cargo prints one line per crate when stderr is not a terminal (npm captures it); the ticker covers the long
  // silent stretches (LTO, the final link).
  const ticker = setInterval(() => log(`still building… ${Math.round((Date.now() - started) / 1000)}s`), PROGRESS_EVERY_MS);
  let finished = false;
  const finish = (fn) => {
    if (finished) return;
    finished = true;
    clearInterval(ticker);
    fn();
  };
  const child = spawn(cargo, args, {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, CARGO_TARGET_DIR: targetDir },
  });
  child.on('error', (err) =>
    finish(() => log(`cargo could not start (${err.message}): the extensions will use the ripgrep fallback`)),
  );
  child.on('close', (code, signal) =>
    finish(() => {
      if (code !== 0) {
        log(`cargo build failed (${signal ? `signal ${signal}` : `exit ${code}`}) after ${seconds()}s: the extensions will use the ripgrep fallback.`);
        log(`Fix the error above, then run \`npm install\` in ${root}.`);
        return;
      }
      try {
        // Copy then rename: a Pi process may have the previous binary loaded.
        const tmp = `${dest}.${process.pid}.tmp`;
        fs.copyFileSync(built, tmp);
        fs.renameSync(tmp, dest);
      } catch (err) {
        log(`could not install the built addon (${err.message}): the extensions will use the ripgrep fallback`);
        return;
      }
      try {
        // Without it, background jobs write their logs directly (bounded by the registry's cuts, not at every
        // moment): nothing fails. A running pump keeps its old file; the rename swaps in the new one.
        const pump = path.join(path.dirname(built), pumpName());
        const pumpDest = path.join(root, pumpName());
        const tmp = `${pumpDest}.${process.pid}.tmp`;
        fs.copyFileSync(pump, tmp);
        fs.chmodSync(tmp, 0o755);
        fs.renameSync(tmp, pumpDest);
      } catch (err) {
        log(`could not install the log pump (${err.message}): background jobs will write their logs directly`);
      }
      if (loads()) {
        log(`native addon ready in ${seconds()}s: ${dest}`);
      } else {
        // Left in place, it would shadow a prebuilt package the loader tries next.
        fs.rmSync(dest, { force: true });
        log('the built addon does not load: the extensions will use the ripgrep fallback');
      }
    }),
  );
}

main();
