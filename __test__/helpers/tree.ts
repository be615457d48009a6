// Temporary trees for specs; every tree is removed by the returned cleanup.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export function makeTree(files: Record<string, string | Buffer>): { root: string; cleanup: () => void } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-utils-spec-"));
  for (const [rel, body] of Object.entries(files)) {
    const abs = path.join(root, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, body);
  }
  return { root, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}
