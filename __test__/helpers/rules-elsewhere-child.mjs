// Child of rules-elsewhere.spec.ts, run with a HOME and XDG_CONFIG_HOME the spec may have made (git's global
// excludes are the user's, read from the environment): follows the steps given as JSON and prints one JSON line per
// search, the scan's and the index's files in both ignore modes.
import { createRequire } from "node:module";
import fs from "node:fs";

const native = createRequire(import.meta.url)("../../index.js");
const [root, stepsJson] = process.argv.slice(2);

async function files(opts) {
  const search = native.grep({ pattern: "needle", cwd: root, ...opts });
  const out = [];
  for (let b = await search.nextBatch(); b; b = await search.nextBatch()) out.push(...b.map((h) => `${h.path}${h.ignored ? " (ignored)" : ""}`));
  return { files: out, index: search.summary().index };
}

for (const step of JSON.parse(stepsJson)) {
  if (step.warm) {
    const s = await native.indexWarm({ path: root, minFiles: 0 });
    console.log(JSON.stringify({ warm: s.state, reread: s.reread ?? null }));
  } else if (step.write) {
    fs.writeFileSync(step.write[0], step.write[1]);
  } else if (step.search) {
    const out = {};
    for (const noIgnore of [true, false]) {
      const scan = await files({ noIgnore, index: false });
      // A change the index has not applied yet is answered by a scan: wait for the index to answer itself.
      let via = await files({ noIgnore, index: true });
      for (let i = 0; i < 50 && via.index !== "used" && via.index !== "scan"; i++) {
        await new Promise((r) => setTimeout(r, 100));
        via = await files({ noIgnore, index: true });
      }
      out[noIgnore ? "default" : "noIgnore:false"] = { scan: scan.files, via: via.files, index: via.index };
    }
    console.log(JSON.stringify(out));
  }
}
