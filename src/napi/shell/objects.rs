//! The objects that cross between JS and the shell registry: options in,
//! jobs, log chunks and kill reports out, and the conversion of the core's
//! views into them.

use crate::shell::job::signal_name;
use crate::shell::log::LogChunk;
use crate::shell::{JobView, KillOutcome, KillReport};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::collections::HashMap;

/// Options for `ShellRegistry.spawn`.
#[napi(object, object_to_js = false)]
pub struct ShellSpawnOptions {
    /// Run as `<shell> -c <command>` in a new session and process group,
    /// stdin `/dev/null`, stdout and stderr appended to `logPath`.
    pub command: String,
    /// Working directory; must exist.
    pub cwd: String,
    /// Absolute path of the log; its directory is created, an existing file
    /// is appended to. The exit status is written to `<logPath>.exit`.
    pub log_path: String,
    /// Shell path or name (looked up on the job's PATH). Default `/bin/bash`, else `sh`.
    pub shell: Option<String>,
    /// The job's complete environment. Default: this process's environment.
    /// `PI_UTILS_JOB` is always set to the job's marker.
    pub env: Option<HashMap<String, String>>,
    /// Kill the job (TERM, 3 s grace, KILL) once it has run this long. Enforced
    /// by the addon, so it survives `/reload`; `timedOut` reports it.
    pub timeout_ms: Option<f64>,
    /// Default `bg-<n>`, one more than the highest number in this registry.
    pub id: Option<String>,
    /// Opaque text stored with the record (e.g. JSON the extension needs after a restart).
    pub meta: Option<String>,
    /// Bound of the log (default 64 MiB, at least 2 MiB). Past it the log keeps
    /// its first MiB, one marker line saying how many bytes were dropped, and its
    /// newest output; see `logDropped`.
    pub max_log_bytes: Option<f64>,
    /// `"process-tree"` tracks by the `/proc` scan even where the job could
    /// have a cgroup of its own. Default `"auto"`: a cgroup when the host
    /// lets us make one.
    #[napi(ts_type = "'auto' | 'process-tree'")]
    pub tracking: Option<String>,
}

/// A job as last seen. Every call re-checks running jobs first.
#[napi(object)]
pub struct ShellJob {
    pub id: String,
    pub command: String,
    pub cwd: String,
    pub shell: String,
    pub log_path: String,
    pub exit_path: String,
    /// Pid of the job's wrapper shell, which is also its process group and session id.
    pub pid: i32,
    pub pgid: i32,
    /// Linux: start time in clock ticks since boot; macOS: microseconds since the epoch.
    pub start_ticks: Option<f64>,
    pub boot_id: Option<String>,
    /// `lost`: the pid now names another process, the machine rebooted, or the
    /// identity cannot be verified. A lost job is never signalled.
    #[napi(ts_type = "'running' | 'exited' | 'signalled' | 'lost'")]
    pub state: String,
    /// The shell's exit status; for `signalled` by the shell convention
    /// 128+n it is kept too (a job that ran `exit 143` reads as SIGTERM).
    /// Absent while running and when unknown (see `note`).
    pub exit_code: Option<i32>,
    /// `SIGTERM`, `SIGKILL`, ... for `signalled`.
    pub signal: Option<String>,
    pub started_at_ms: f64,
    pub ended_at_ms: Option<f64>,
    pub runtime_ms: f64,
    /// Current size of the log file.
    pub log_bytes: f64,
    /// The log has grown faster than 10 MB/s for more than 2 s (and is being cut, see `logDropped`).
    pub flooding: bool,
    /// Log size when the job started (an existing log is appended to).
    pub log_start: f64,
    /// Where `readNew` continues.
    pub read_offset: f64,
    pub delivered: bool,
    /// Not started by this process (reconciled from the sidecar): watched by identity.
    pub adopted: bool,
    pub kill_requested: bool,
    /// Ended because `timeoutMs` ran out.
    pub timed_out: bool,
    pub timeout_ms: Option<f64>,
    /// Why the state is what it is, when that is not obvious (lost, unknown status).
    pub note: Option<String>,
    pub meta: Option<String>,
    /// How the job's processes are found: `cgroup` (a cgroup v2 of its own,
    /// which no process it starts can leave; the scan below is used too) or
    /// `process-tree` (its group, session and descendants, and every process
    /// carrying its `PI_UTILS_JOB` marker, each checked by pid + start time +
    /// boot id).
    pub tracking: String,
    /// The job's cgroup directory, while it exists.
    pub cgroup: Option<String>,
    /// Set once the job's main process ended. The job stays `running` while
    /// anything it started lives (`alive`); these keep how the main process
    /// ended, and become the job's own `exitCode`/`signal` once all is gone.
    pub leader_ended_at_ms: Option<f64>,
    pub leader_exit_code: Option<i32>,
    pub leader_signal: Option<String>,
    /// What keeps a job running after its main process ended, as last seen.
    pub alive: Vec<ShellJobProcess>,
    /// The log's bound.
    pub max_log_bytes: f64,
    /// Output the log no longer holds: the log outgrew `maxLogBytes` and was
    /// cut after its first MiB, where a marker line says so.
    pub log_dropped: f64,
    /// Where that marker line starts, once the log was cut.
    pub log_trim_at: Option<f64>,
    /// Bytes removed at `logTrimAt` over all cuts: an offset taken before a cut
    /// and past it moved back by the growth of this.
    pub log_shift: f64,
}

#[napi(object)]
pub struct ShellJobProcess {
    pub pid: i32,
    /// Its command line, cut to 120 bytes (empty where the platform hides it).
    pub command: String,
}

pub(super) fn job_out(v: JobView) -> ShellJob {
    let r = v.record;
    ShellJob {
        id: r.id,
        command: r.command,
        cwd: r.cwd,
        shell: r.shell,
        log_path: r.log_path,
        exit_path: r.exit_path,
        pid: r.pid,
        pgid: r.pgid,
        start_ticks: r.start_ticks.map(|t| t as f64),
        boot_id: r.boot_id,
        state: r.state.as_str().to_string(),
        exit_code: r.exit_code,
        signal: r.signal.map(signal_name),
        started_at_ms: r.started_at_ms as f64,
        ended_at_ms: r.ended_at_ms.map(|t| t as f64),
        runtime_ms: v.runtime_ms as f64,
        log_bytes: v.log_bytes as f64,
        flooding: v.flooding,
        log_start: r.log_start as f64,
        read_offset: r.read_offset as f64,
        delivered: r.delivered,
        adopted: v.adopted,
        kill_requested: r.kill_requested,
        timed_out: r.timed_out,
        timeout_ms: r.timeout_ms.map(|t| t as f64),
        note: r.note,
        meta: r.meta,
        tracking: r.tracking,
        cgroup: r.cgroup,
        leader_ended_at_ms: r.leader_ended_at_ms.map(|t| t as f64),
        leader_exit_code: r.leader_exit_code,
        leader_signal: r.leader_signal.map(signal_name),
        max_log_bytes: r.max_log_bytes as f64,
        log_dropped: r.log_dropped as f64,
        log_trim_at: r.log_trim_at.map(|t| t as f64),
        log_shift: r.log_shift as f64,
        alive: r
            .members
            .into_iter()
            .map(|m| ShellJobProcess {
                pid: m.pid,
                command: m.command,
            })
            .collect(),
    }
}

/// A stretch of a log, decoded as lossy UTF-8 on character boundaries.
#[napi(object)]
pub struct ShellLogChunk {
    pub text: String,
    /// Byte offset of the first byte shown.
    pub start: f64,
    /// Byte offset after the last byte shown: where an incremental read continues.
    pub end: f64,
    /// Log size when read.
    pub size: f64,
    /// Bytes before `start` that were left out (for a tail: everything before it).
    pub skipped: f64,
    /// Bytes after `end` that exist but were not returned.
    pub remaining: f64,
}

pub(super) fn chunk_out(c: LogChunk) -> ShellLogChunk {
    ShellLogChunk {
        text: c.text,
        start: c.start as f64,
        end: c.end as f64,
        size: c.size as f64,
        skipped: c.skipped as f64,
        remaining: c.remaining as f64,
    }
}

#[napi(object, object_to_js = false)]
pub struct ShellTailOptions {
    /// Last N lines (a final newline does not start an extra line). Default: no line limit.
    pub lines: Option<f64>,
    /// At most this many bytes from the end. Default 65536, at most 16 MiB.
    pub max_bytes: Option<f64>,
}

#[napi(object, object_to_js = false)]
pub struct ShellReadOptions {
    /// Default 65536, at most 16 MiB.
    pub max_bytes: Option<f64>,
    /// Which end of a longer stretch to return. Default `tail` (the newest output).
    #[napi(ts_type = "'head' | 'tail'")]
    pub keep: Option<String>,
}

#[napi(object, object_to_js = false)]
pub struct ShellWaitOptions<'a> {
    /// Give up after this long and resolve with `timedOut`. Default: no limit
    /// (a pending wait keeps Node's event loop alive).
    pub timeout_ms: Option<f64>,
    /// Resolves the wait early with `cancelled` (the job is not touched).
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
    /// `job` (default): until the job and everything it started are gone;
    /// `leader`: until its main process ended (a foreground command has returned).
    #[napi(ts_type = "'job' | 'leader'")]
    pub until: Option<String>,
}

#[napi(object)]
pub struct ShellWaitResult {
    pub job: ShellJob,
    pub timed_out: bool,
    pub cancelled: bool,
}

#[napi(object, object_to_js = false)]
pub struct ShellKillOptions {
    /// Time between SIGTERM and SIGKILL. Default 3000; 0 sends SIGKILL right after SIGTERM.
    pub grace_ms: Option<f64>,
}

#[napi(object)]
pub struct ShellKillReport {
    /// `killed`: signals were sent (see `survivors`); `already-ended`: nothing
    /// of the job was running, nothing was signalled; `refused`: the job is
    /// `lost`, nothing was signalled.
    #[napi(ts_type = "'killed' | 'already-ended' | 'refused'")]
    pub outcome: String,
    pub sent_term: bool,
    pub sent_kill: bool,
    /// Pids outside the job's process group (e.g. daemons that called `setsid`) that were signalled.
    pub escapees: Vec<i32>,
    /// Pids still alive 2 s after SIGKILL (should be empty).
    pub survivors: Vec<i32>,
    /// False where descendants that left the job's group after its main
    /// process ended cannot be found (macOS: no process environments), so
    /// such a process may have been missed.
    pub orphan_sweep: bool,
    pub job: ShellJob,
}

#[napi(object, object_to_js = false)]
pub struct ShellRemoveOptions {
    /// Also delete the log and exit files. Default false.
    pub delete_files: Option<bool>,
}

pub(super) fn kill_report_out(r: KillReport) -> ShellKillReport {
    ShellKillReport {
        outcome: match r.outcome {
            KillOutcome::Killed => "killed",
            KillOutcome::AlreadyEnded => "already-ended",
            KillOutcome::Refused => "refused",
        }
        .to_string(),
        sent_term: r.sent_term,
        sent_kill: r.sent_kill,
        escapees: r.escapees,
        survivors: r.survivors,
        orphan_sweep: crate::shell::kill::FINDS_ORPHANED_ESCAPEES,
        job: job_out(r.job),
    }
}

#[napi(object)]
pub struct ShellCutOffsets {
    pub log_trim_at: Option<f64>,
    pub log_shift: f64,
}
