// The start-up sweep of job directories whose Pi session no longer exists: once they are older than
// `shell.logRetentionDays`, the files the registry wrote there (sidecar, an older version's id counter, job logs, exit files and cuts records) are
// deleted one by one, and the directories removed if that left them empty. Nothing else is touched: a file
// pi-utils did not name is kept, and so is its directory; a directory whose sidecar still lists a running job
// (or cannot be read) is skipped whole.
import { readdirSync, readFileSync, rmdirSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** Names the registry and the extension create in a job directory, and in its `logs/`. */
const OURS = /^(jobs\.json(\.corrupt|\.lock|\.\d+\.tmp)?|next-id(\.\d+\.tmp)?)$/;
/** A job's log, its exit file (and the temp file it is renamed from) and the log pump's record of its cuts. */
const OUR_LOGS = /^bg-\d+\.log(\.exit(\.tmp)?|\.cuts)?$/;

export interface SweepOptions {
	/** The current session's file, if any: its directory holds the `<session>.shell-bg/` job directories. */
	sessionFile: string | undefined;
	/** Pi's agent directory: in-memory sessions' job directories are under `pi-utils/shell-bg/`. */
	agentDir: string;
	/** This session's job directory: never swept. */
	current: string;
	days: number;
	now?: number;
}

/** Removes what it may of each stale job directory; returns the directories it looked at and emptied. */
export function sweepJobDirs(o: SweepOptions): string[] {
	const cutoff = (o.now ?? Date.now()) - o.days * 24 * 3600 * 1000;
	const candidates: string[] = [];
	if (o.sessionFile) {
		const sessions = dirname(o.sessionFile);
		for (const name of list(sessions)) {
			if (!name.endsWith(".shell-bg")) continue;
			// The session it belongs to is still there: its jobs may be resumed.
			if (exists(join(sessions, `${name.slice(0, -".shell-bg".length)}.jsonl`))) continue;
			candidates.push(join(sessions, name));
		}
	}
	const memory = join(o.agentDir, "pi-utils", "shell-bg");
	for (const name of list(memory)) candidates.push(join(memory, name));
	const removed: string[] = [];
	for (const dir of candidates) {
		if (dir === o.current || !isDir(dir) || newest(dir) > cutoff || hasRunningJob(dir)) continue;
		if (removeOurs(dir)) removed.push(dir);
	}
	return removed;
}

function list(dir: string): string[] {
	try {
		return readdirSync(dir);
	} catch {
		return [];
	}
}

function exists(path: string): boolean {
	try {
		statSync(path);
		return true;
	} catch {
		return false;
	}
}

function isDir(path: string): boolean {
	try {
		return statSync(path).isDirectory();
	} catch {
		return false;
	}
}

/** The latest modification time of the directory, its files and its `logs/` files. */
function newest(dir: string): number {
	let t = 0;
	const look = (p: string) => {
		try {
			t = Math.max(t, statSync(p).mtimeMs);
		} catch {
			// Gone meanwhile.
		}
	};
	look(dir);
	for (const name of list(dir)) look(join(dir, name));
	for (const name of list(join(dir, "logs"))) look(join(dir, "logs", name));
	return t;
}

/** A sidecar that lists a running job, or that cannot be read as one: not ours to judge, so kept. */
function hasRunningJob(dir: string): boolean {
	let text: string;
	try {
		text = readFileSync(join(dir, "jobs.json"), "utf8");
	} catch {
		return false;
	}
	try {
		const doc = JSON.parse(text) as { jobs?: Array<{ state?: string }> };
		return !Array.isArray(doc.jobs) || doc.jobs.some((j) => j?.state === "running");
	} catch {
		return true;
	}
}

/** Deletes the files we name in `dir` and `dir/logs`, then the directories if empty; true if `dir` is gone. */
function removeOurs(dir: string): boolean {
	const logs = join(dir, "logs");
	for (const name of list(logs)) if (OUR_LOGS.test(name)) unlinkQuiet(join(logs, name));
	rmdirQuiet(logs);
	for (const name of list(dir)) if (OURS.test(name)) unlinkQuiet(join(dir, name));
	rmdirQuiet(dir);
	return !exists(dir) && basename(dir) !== "";
}

function unlinkQuiet(path: string): void {
	try {
		unlinkSync(path);
	} catch {
		// Gone, or not ours to remove after all (permissions).
	}
}

function rmdirQuiet(path: string): void {
	try {
		rmdirSync(path);
	} catch {
		// Not empty (something we did not create is in it) or gone.
	}
}
