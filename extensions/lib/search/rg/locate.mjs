// Finding the rg binary: PATH first, then Pi's own bin directory (where Pi downloads rg on first
// interactive start), so the fallback works wherever Pi's own grep would.
import { accessSync, constants, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { codedError } from "../../errors.mjs";

export const RG_INSTALL_HINT =
	"Install ripgrep (apt install ripgrep, brew install ripgrep, winget install BurntSushi.ripgrep.MSVC, or " +
	"https://github.com/BurntSushi/ripgrep#installation), or start `pi` once interactively so it downloads rg " +
	"into its bin directory";

function agentDirOf(env) {
	const dir = env.PI_CODING_AGENT_DIR;
	if (!dir) return path.join(homedir(), ".pi", "agent");
	if (dir === "~") return homedir();
	if (dir.startsWith("~/")) return path.join(homedir(), dir.slice(2));
	return dir;
}

function isExecutable(file) {
	try {
		if (!statSync(file).isFile()) return false;
		accessSync(file, constants.X_OK);
		return true;
	} catch {
		return false;
	}
}

/** PATH, then Pi's own bin directory; undefined when neither holds an executable rg. */
export function findRg(options = {}) {
	if (options.rgPath) return isExecutable(options.rgPath) ? options.rgPath : undefined;
	const env = options.env ?? process.env;
	const exe = process.platform === "win32" ? "rg.exe" : "rg";
	for (const dir of (env.PATH ?? "").split(path.delimiter)) {
		if (dir && isExecutable(path.join(dir, exe))) return path.join(dir, exe);
	}
	const piBin = path.join(options.agentDir ?? agentDirOf(env), "bin", exe);
	return isExecutable(piBin) ? piBin : undefined;
}

export function resolveRg(options) {
	const found = findRg(options);
	if (found) return found;
	const piBin = path.join(options.agentDir ?? agentDirOf(options.env ?? process.env), "bin");
	throw codedError("INTERNAL", `ripgrep (rg) not found on PATH or in ${piBin}. ${RG_INSTALL_HINT}.`);
}
