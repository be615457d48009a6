// One index build from scratch in a fresh process (bench/build-ab.mjs): the addon at argv[2] builds
// argv[3] into an empty store at argv[4]; prints the wall time and the process's CPU as one JSON line.
import { createRequire } from "node:module";

const [addon, corpus, store] = process.argv.slice(2);
process.env.PI_UTILS_INDEX_DIR = store;
const native = createRequire(import.meta.url)(addon);
const t0 = performance.now();
native.indexStart({ path: corpus });
const status = await native.indexWarm({ path: corpus });
const ms = performance.now() - t0;
const ru = process.resourceUsage();
console.log(JSON.stringify({ ms, user: ru.userCPUTime / 1e6, sys: ru.systemCPUTime / 1e6, state: status.state, files: status.files }));
