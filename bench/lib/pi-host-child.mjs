// Child process that hosts one Pi package's own grep tool for the bench, for a
// host that does not load on the bench's Node (pi-coding-agent 1.6 needs Node
// 22). Each request is one `execute(...)`, timed here so the IPC hop is not
// counted.
//
//   node pi-host-child.mjs <package dir> <cwd>   (stdio must include "ipc")
import path from "node:path";
import { pathToFileURL } from "node:url";

const [pkgDir, cwd] = process.argv.slice(2);
const entry = pathToFileURL(path.join(pkgDir, "dist", "index.js")).href;
const { createGrepToolDefinition } = await import(entry);
const tool = createGrepToolDefinition(cwd);

process.on("message", async ({ id, params }) => {
  try {
    const t = performance.now();
    const r = await tool.execute("bench", params, undefined, undefined, undefined);
    const ms = performance.now() - t;
    process.send({ id, ms, chars: r.content?.[0]?.text?.length ?? 0 });
  } catch (e) {
    process.send({ id, error: e instanceof Error ? e.message : String(e) });
  }
});
process.send({ ready: true });
