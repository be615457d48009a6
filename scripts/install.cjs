#!/usr/bin/env node
// Builds the native addon from source when no usable binary is present.
//
// Runs as the package's `install` script, including under `pi install git:`
// (which runs `npm install --omit=dev`, so the napi CLI is absent: we call
// cargo directly). It ALWAYS exits 0: without Rust the extensions fall back
// to ripgrep and tell the user how to get the fast path.
'use strict';

const { spawnSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const log = (msg) => process.stderr.write(`[pi-utils] ${msg}\n`);

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

function libName() {
  if (process.platform === 'win32') return 'pi_utils.dll';
  if (process.platform === 'darwin') return 'libpi_utils.dylib';
  return 'libpi_utils.so';
}

function loads() {
  const probe = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(path.join(root, 'index.js'))}).apiVersion()`], {
    stdio: 'ignore',
  });
  return probe.status === 0;
}

function main() {
  if (process.env.PI_UTILS_SKIP_BUILD === '1') {
    log('PI_UTILS_SKIP_BUILD=1: not building the native addon');
    return;
  }
  const isCheckout = fs.existsSync(path.join(root, '.git')) || fs.existsSync(path.join(root, 'Cargo.toml'));
  const target = path.join(root, `pi-utils.${platformSuffix()}.node`);
  // A published package ships prebuilt leaves; a git checkout is built from
  // its own sources so HEAD never runs a stale binary.
  if (!fs.existsSync(path.join(root, '.git')) && loads()) {
    return;
  }
  if (!isCheckout) {
    log('no prebuilt binary for this platform and no sources: using the ripgrep fallback');
    return;
  }
  const cargo = process.env.CARGO || 'cargo';
  if (spawnSync(cargo, ['--version'], { stdio: 'ignore' }).status !== 0) {
    log('cargo not found: the extensions will use the ripgrep fallback.');
    log('For the native core install Rust (https://rustup.rs) and run `npm install` here again.');
    return;
  }
  const targetDir = process.env.CARGO_TARGET_DIR || path.join(os.homedir(), '.cache', 'pi-utils', 'target');
  log(`building the native addon with cargo (target dir ${targetDir}); the first build takes about a minute`);
  const started = Date.now();
  const child = spawn(cargo, ['build', '--release', '--locked', '--lib'], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, CARGO_TARGET_DIR: targetDir },
  });
  const ticker = setInterval(() => log(`still building… ${Math.round((Date.now() - started) / 1000)}s`), 10000);
  child.on('error', (err) => {
    clearInterval(ticker);
    log(`cargo could not start (${err.message}): using the ripgrep fallback`);
  });
  child.on('close', (code) => {
    clearInterval(ticker);
    if (code !== 0) {
      log(`cargo build failed (exit ${code}): using the ripgrep fallback. Re-run \`npm install\` after fixing the error above.`);
      return;
    }
    try {
      const built = path.join(targetDir, 'release', libName());
      const tmp = `${target}.${process.pid}.tmp`;
      fs.copyFileSync(built, tmp);
      fs.renameSync(tmp, target);
    } catch (err) {
      log(`could not install the built addon: ${err.message}`);
      return;
    }
    if (loads()) {
      log(`native addon ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    } else {
      log('the built addon does not load: using the ripgrep fallback');
    }
  });
}

try {
  main();
} catch (err) {
  log(`install step failed (${err && err.message}); continuing without the native addon`);
}
process.on('exit', () => {
  process.exitCode = 0;
});
