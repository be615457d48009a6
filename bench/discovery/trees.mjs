// Where the evaluation's trees are: `self` (this repository, or a copy of it at $PI_UTILS_SELF_TREE), the Linux
// corpus ($PI_UTILS_CORPUS or ~/.cache/pi-utils-bench/linux-source-6.12, bench/corpus-linux.sh), and the
// repositories nobody here wrote, unpacked under $PI_UTILS_DISCOVERY_TREES (default /tmp/disc-trees) at the
// commits named in queries.json. A tree that is absent maps to null, and its queries are skipped.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

// Issue 30; set unseen-2, issue 45; sets unseen-3 to unseen-9, issue 45h/45i/45j/45r/45t/45u/45x; study-c (helper 28), study-t (helper 45w), study-j (helper 45y); study-g (helper 45z), unseen-10 (helper 45aa).
export const outsideNames = ["hono", "httpx", "glow", "chi", "requests", "curl", "express", "axum", "sinatra", "gson", "git", "rich", "fzf", "bat", "axios", "jekyll", "commons-lang", "vim", "click", "cobra", "guzzle", "ky", "alamofire", "falcon", "echo", "hapi", "memcached", "h2o", "starlette", "clap", "rack", "slim", "rocksdb", "libgit2", "jinja", "koa", "cli", "puma", "libuv", "nginx", "tmux", "abseil-cpp", "tokio", "viper", "werkzeug", "retrofit", "gin", "mux", "jsoup", "junit4", "folly", "caddy", "guice", "black", "zod", "javapoet", "commons-io", "validator", "netty", "jackson-databind", "mockito", "tracing", "pydantic", "commons-collections", "redis", "vite"];

/** Tree name → directory (or null when absent). `root` is this repository. */
export function treePaths(root) {
  const linux = process.env.PI_UTILS_CORPUS ?? path.join(os.homedir(), ".cache/pi-utils-bench/linux-source-6.12");
  const trees = { self: process.env.PI_UTILS_SELF_TREE ?? root, linux: fs.existsSync(linux) ? linux : null };
  const outside = process.env.PI_UTILS_DISCOVERY_TREES ?? "/tmp/disc-trees";
  for (const name of outsideNames) {
    const dir = path.join(outside, name);
    trees[name] = fs.existsSync(dir) ? dir : null;
  }
  return trees;
}
