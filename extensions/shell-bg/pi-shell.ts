// Which `shellPath` and `shellCommandPrefix` the overridden bash runs with: exactly the ones Pi's own bash
// would get in this session. Pi hands those two settings to its built-in bash only, so an override must
// find them itself, and the session's *resolved* settings are the only right source: a project opened
// without trust (Pi 1.6 `--no-approve`, or declined at the prompt) must not have its `.pi/settings.json`
// prefix run, an SDK host's `SettingsManager.inMemory({...})` wins over every file, and a session given its
// own agent directory reads that directory, whatever PI_CODING_AGENT_DIR says. Re-reading the files
// (`SettingsManager.create(cwd, getAgentDir())`) gets all three wrong, which is what this module replaces.
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { getAgentDir, SettingsManager } from "@mariozechner/pi-coding-agent";

export interface PiShell {
	shellPath?: string;
	commandPrefix?: string;
	/** Where the two came from, for tests and the README: the session's own settings, or the files. */
	source: "session-settings" | "session-manager" | "files";
}

interface ShellSettingsView {
	shellPath?: unknown;
	shellCommandPrefix?: unknown;
}

/** Pi 1.6+: `pi.getSettings()` is the session's effective settings (trust applied, in-memory ones kept). */
type HostWithSettings = { getSettings?: () => ShellSettingsView };
/** Pi 1.6+: whether project-local files are trusted in this session. */
type ContextWithTrust = { isProjectTrusted?: () => boolean };

interface SettingsReader {
	getShellPath(): string | undefined;
	getShellCommandPrefix(): string | undefined;
}

const LAST_READ = Symbol.for("pi-utils.shell-bg.session-settings-manager");
const UNRECORDED = Symbol.for("pi-utils.shell-bg.unrecorded-prefix-read");
type Store = { [LAST_READ]?: WeakRef<SettingsReader>; [UNRECORDED]?: (this: SettingsReader) => string | undefined };

/**
 * Pi 0.73 gives an extension no view of its session's settings. Its session reads the bash settings from
 * its own SettingsManager once when it builds its tools (`_buildRuntime`: after the extensions are loaded,
 * before `session_start`, and again on /reload), and nothing else of Pi's reads the prefix. So the
 * manager that last read `getShellCommandPrefix` before `session_start` is the session's. Recorded through
 * the class Pi itself uses (extensions share Pi's module), holding only a weak reference. A host that
 * creates two sessions in one process at once could mix them up; one that has `getSettings` never gets here.
 */
export function watchSessionSettingsReads(): void {
	const store = SettingsManager as unknown as Store;
	if (store[UNRECORDED]) return;
	const proto = SettingsManager.prototype as unknown as { getShellCommandPrefix: (this: SettingsReader) => string | undefined };
	const original = proto.getShellCommandPrefix;
	if (typeof original !== "function") return;
	store[UNRECORDED] = original;
	proto.getShellCommandPrefix = function (this: SettingsReader) {
		store[LAST_READ] = new WeakRef(this);
		return original.call(this);
	};
}

const text = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v : undefined);

/**
 * The session manager recorded by `watchSessionSettingsReads`, taken at `session_start` (so a later read by
 * someone else's manager cannot replace it for this session).
 */
export function sessionSettingsManager(): SettingsReader | undefined {
	return (SettingsManager as unknown as Store)[LAST_READ]?.deref();
}

/** The bash settings Pi's own bash has in this session, read now (a /reload or a trust change is seen). */
export function piShellSettings(pi: ExtensionAPI, ctx: ExtensionContext, recorded: SettingsReader | undefined): PiShell {
	const getSettings = (pi as unknown as HostWithSettings).getSettings;
	if (typeof getSettings === "function") {
		try {
			const s = getSettings.call(pi);
			return { shellPath: text(s?.shellPath), commandPrefix: text(s?.shellCommandPrefix), source: "session-settings" };
		} catch {
			// A stale API after a reload: the files below, with trust applied.
		}
	}
	if (recorded) {
		try {
			return { shellPath: text(recorded.getShellPath()), commandPrefix: text(recorded.getShellCommandPrefix()), source: "session-manager" };
		} catch {
			// Fall through to the files.
		}
	}
	return fromFiles(ctx);
}

/**
 * Last resort: the files, as Pi would read them. Where the host knows trust, an untrusted project's file is
 * never read; where it does not (0.73), Pi itself applies the project file, so this does too. The prefix is
 * read without being recorded, so this manager is never taken for the session's.
 */
function fromFiles(ctx: ExtensionContext): PiShell {
	try {
		const isTrusted = (ctx as unknown as ContextWithTrust).isProjectTrusted;
		const projectTrusted = typeof isTrusted === "function" ? isTrusted.call(ctx) === true : undefined;
		const create = SettingsManager.create as unknown as (cwd: string, agentDir: string, options?: { projectTrusted?: boolean }) => SettingsReader;
		const sm = create(ctx.cwd, getAgentDir(), projectTrusted === undefined ? undefined : { projectTrusted });
		const readPrefix = (SettingsManager as unknown as Store)[UNRECORDED] ?? sm.getShellCommandPrefix;
		return { shellPath: text(sm.getShellPath()), commandPrefix: text(readPrefix.call(sm)), source: "files" };
	} catch {
		return { source: "files" };
	}
}
