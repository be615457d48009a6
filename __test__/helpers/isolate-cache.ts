// Loaded before every spec file by `npm test` (node --import): points the live index's cache at one temp
// folder for the whole run, removed when the run ends, so no test (nor a Pi the tests start, which inherits
// the environment) writes to the user's ~/.cache/pi-utils. Specs that need a store of their own set
// PI_UTILS_INDEX_DIR themselves.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

if (!process.env.PI_UTILS_INDEX_DIR) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-test-index-"));
  process.env.PI_UTILS_INDEX_DIR = dir;
  process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
}
