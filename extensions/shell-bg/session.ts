// One shell-bg instance's view of the Pi session: its job registry (opened on first use), the widget, the
// host the jobs report to, and the session lifecycle. Everything async checks `active` first (a /reload or
// quit makes `pi` stale, and a stale call throws).
import type { ExtensionAPI, ExtensionContext, SessionShutdownEvent, SessionStartEvent } from "@mariozechner/pi-coding-agent";
import { VERSION } from "@mariozechner/pi-coding-agent";
import type { Native } from "../lib/native.mjs";
import { agentDir, isToolEnabled, loadSettings, takeWarningsOnce, type PiUtilsSettings } from "../lib/settings.ts";
import { SessionJobs, type JobsHost } from "../lib/shell/jobs.ts";
import { keepSignalHandled } from "../lib/shell/quit-signal.ts";
import { jobDirFor, sessionRegistryExists, openSessionRegistry } from "../lib/shell/registry.ts";
import { sweepJobDirs } from "../lib/shell/retention.ts";
import { warnOnce as sharedWarnOnce } from "../lib/warn-once.ts";
import { MESSAGE_TYPE } from "./messages.ts";
import { piShellSettings, sessionSettingsManager, type PiShell } from "./pi-shell.ts";
import { JobsWidget, WIDGET } from "./widget.ts";

const NOTIFIED = Symbol.for("pi-utils.shell-bg.notified");
const SWEPT = Symbol.for("pi-utils.shell-bg.swept");

export function warnOnce(ctx: ExtensionContext, key: string, messages: string[]): void {
	sharedWarnOnce(NOTIFIED, ctx, key, messages, VERSION);
}

export class ShellSession {
	active = false;
	ctx: ExtensionContext | undefined;
	jobs: SessionJobs | undefined;
	dir: string | undefined;
	/** Pi 0.73: the SettingsManager the session built its tools from, recorded at session_start (pi-shell.ts). */
	#sessionSettings: ReturnType<typeof sessionSettingsManager>;
	readonly widget = new JobsWidget(this);
	readonly host: JobsHost;
	#inMemorySession = false;
	#releaseSigterm: (() => void) | undefined;

	constructor(
		private readonly pi: ExtensionAPI,
		public settings: PiUtilsSettings,
		readonly native: Native | undefined,
		/** Why commands run as plain child processes (no native registry), or undefined. */
		private readonly fallbackReason: string | undefined,
	) {
		this.host = jobsHost(this, pi);
	}

	enabled(name: string): boolean {
		return isToolEnabled(this.settings, name);
	}

	/** Opens the session's registry on first use (a session that never runs bash gets no directory). */
	openJobs(): SessionJobs {
		if (this.jobs) return this.jobs;
		if (!this.active || !this.dir) throw new Error("shell-bg: no active session");
		const opened = new SessionJobs(openSessionRegistry(this.dir, this.native), this.dir, () => this.settings.shell, this.host);
		opened.reportProblems();
		// Said when it first matters (the first command of a process), not at startup: fs-search already
		// reports the missing core there, and a user who never runs a command needs no second notice.
		if (this.fallbackReason && this.ctx) {
			warnOnce(this.ctx, "process", [
				`${this.fallbackReason}. shell-bg runs commands as plain child processes: background jobs are not reconciled after a restart and not identity-checked before a kill.`,
			]);
		}
		opened.registry.watch((job) => {
			try {
				if (this.active && this.jobs === opened) opened.onEnded(job);
			} catch {
				// Never let a late callback take Pi down.
			}
		});
		this.jobs = opened;
		return opened;
	}

	/** `shellPath` and `shellCommandPrefix` as Pi's own bash has them in this session, read at each call. */
	piShell(ctx: ExtensionContext): PiShell {
		return piShellSettings(this.pi, ctx, this.#sessionSettings);
	}

	useCtx(ctx: ExtensionContext): SessionJobs {
		if (this.active) this.ctx = ctx;
		return this.openJobs();
	}

	start(event: SessionStartEvent, ctx: ExtensionContext): void {
		const loaded = loadSettings();
		this.settings = loaded.settings;
		const sessionId = ctx.sessionManager.getSessionId();
		warnOnce(ctx, sessionId, takeWarningsOnce(loaded, sessionId));
		this.active = true;
		this.ctx = ctx;
		this.jobs = undefined;
		const sessionFile = ctx.sessionManager.getSessionFile();
		this.#inMemorySession = !sessionFile;
		const dir = jobDirFor({ sessionFile, sessionId, agentDir: agentDir() });
		this.dir = dir;
		this.#sessionSettings = sessionSettingsManager();
		// In the TUI, SIGTERM must reach session_shutdown below on Pi 0.73 too (why: lib/shell/quit-signal.ts).
		if (ctx.hasUI && process.stdin.isTTY === true) this.#releaseSigterm ??= keepSignalHandled("SIGTERM");
		// Once per Pi process (not per /reload): job directories of sessions that are gone, past their retention.
		const store = globalThis as unknown as Record<symbol, boolean | undefined>;
		if (!store[SWEPT]) {
			store[SWEPT] = true;
			try {
				sweepJobDirs({ sessionFile, agentDir: agentDir(), current: dir, days: this.settings.shell.logRetentionDays });
			} catch {
				// Best effort: a sweep never stops a session from starting.
			}
		}
		if (!sessionRegistryExists(dir, this.native)) return;
		// Reconcile now: adopted jobs get watched, and endings nobody announced yet are told once.
		let current: SessionJobs;
		try {
			current = this.openJobs();
		} catch (e) {
			// A registry the core refuses to open (unreadable, or damaged with no room for its copy) is left
			// as it is: the user is told, the session starts, and each bash call says why it cannot run.
			warnOnce(ctx, dir, [`shell-bg: ${e instanceof Error ? e.message : String(e)}`]);
			return;
		}
		if (event.reason === "reload") {
			setTimeout(() => {
				if (this.active && this.jobs === current) current.announcePending("followUp");
			}, 0);
		} else current.announcePending("nextTurn");
		this.widget.refresh();
	}

	async shutdown(event: SessionShutdownEvent, ctx: ExtensionContext): Promise<void> {
		this.#releaseSigterm?.();
		this.#releaseSigterm = undefined;
		const current = this.jobs;
		this.widget.stop(true);
		this.active = false;
		this.jobs = undefined;
		if (!current) return;
		current.detach();
		if (event.reason === "reload") return; // the next instance takes over the same registry
		if (this.settings.shell.onQuit === "kill") await current.killAll({ onSlow: (text) => sayWhileQuitting(ctx, `shell-bg: ${text}`) });
		current.tidy(this.#inMemorySession);
	}
}

/** What the jobs report to: follow-up messages, widget refreshes, problems, and which job tools exist. */
function jobsHost(session: ShellSession, pi: ExtensionAPI): JobsHost {
	return {
		canDeliver: (how) => {
			if (!session.active || !session.ctx) return false;
			// Print mode ends with the last turn: a follow-up sent when idle would start a turn nobody awaits.
			return how === "nextTurn" || session.ctx.hasUI || !session.ctx.isIdle();
		},
		deliver: (job, text, how) => {
			if (!session.active) return;
			try {
				pi.sendMessage(
					{
						customType: MESSAGE_TYPE,
						content: text,
						// The user's own kill is told to the user once, by its notice; the model gets the message.
						display: how !== "notice",
						details: { id: job.id, state: job.state, exitCode: job.exitCode, signal: job.signal, runtimeMs: job.runtimeMs, logPath: job.logPath },
					},
					// A notice rides in the follow-up queue while a turn runs and is appended at once when idle: in
					// order on both hosts, and no turn starts for it.
					how === "followUp" ? { deliverAs: "followUp", triggerTurn: true } : how === "notice" ? { deliverAs: "followUp" } : { deliverAs: "nextTurn" },
				);
			} catch {
				// A stale ctx after a shutdown race: the ending stays claimed, which is better than a crashed host.
			}
		},
		changed: () => session.widget.refresh(),
		problem: (text) => {
			if (session.active && session.ctx && session.dir) warnOnce(session.ctx, session.dir, [`shell-bg: ${text}`]);
		},
		get tools() {
			return { status: session.enabled("shell_status"), kill: session.enabled("shell_kill") };
		},
	};
}

/**
 * What Pi's quit waits for. An interactive quit (Ctrl+D, Ctrl+C twice, /quit) stops the TUI before the
 * shutdown event on both hosts, so the terminal is a plain one again and a line on stderr stays under
 * Pi's last frame; Pi 1.6's quit on SIGTERM/SIGHUP emits the event first, with the TUI still drawing, so
 * the line goes into the widget there (stderr would tear the frame). Print and RPC modes: stderr.
 */
function sayWhileQuitting(ctx: ExtensionContext, text: string): void {
	const tuiLive = process.stdin.isTTY === true && process.stdin.isRaw === true;
	try {
		if (tuiLive && ctx.hasUI) return ctx.ui.setWidget(WIDGET, [text], { placement: "aboveEditor" });
	} catch {
		// A UI already gone: stderr below.
	}
	try {
		process.stderr.write(`${text}\n`);
	} catch {
		// Nowhere to say it.
	}
}
