//! Background shell jobs for JS: `openShellRegistry(sidecarPath)` returns the
//! session's `ShellRegistry` (the same one again after Pi's `/reload`), plus
//! two log readers that work on any file. Waits and kills run on tokio's
//! blocking pool, never on the JS thread or libuv's pool.
#![cfg(unix)]

use super::convert::parse_choice;
use super::error::{run_blocking, to_js};
use super::signal::{check_not_aborted, run_cancellable};
use crate::error_code::{CodedError, ErrorCode};
use crate::search::CancelToken;
use crate::shell::job::signal_name;
use crate::shell::log::{self, Keep, LogChunk};
use crate::shell::{
    self, JobView, KillOutcome, Registry, ShellError, SpawnRequest, WaitEnd, WaitFor,
};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunctionCallMode, UnknownReturnValue};
use napi_derive::napi;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

const DEFAULT_READ_BYTES: u64 = 64 * 1024;
/// Reads are returned as one string; this bounds what one call can allocate.
const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;
const DEFAULT_GRACE_MS: f64 = 3000.0;

/// The conversions' own result: the error keeps its code until a method
/// with an `Env` turns it into a JS error.
type Converted<T> = std::result::Result<T, CodedError>;

fn invalid(what: String) -> CodedError {
    CodedError::new(ErrorCode::InvalidOption, what)
}

/// Longer times are taken as this (Number.MAX_SAFE_INTEGER ms, 285,000
/// years): `1e300` or `2 ** 64` must not wrap into a deadline in the past.
const MAX_MS: f64 = 9_007_199_254_740_991.0;

fn millis(field: &str, v: Option<f64>) -> Converted<Option<Duration>> {
    match v {
        None => Ok(None),
        Some(ms) if ms.is_finite() && ms >= 0.0 => {
            Ok(Some(Duration::from_millis(ms.min(MAX_MS) as u64)))
        }
        Some(ms) => Err(invalid(format!("Invalid {field}: {ms}"))),
    }
}

/// A count that must be a finite number, not negative.
fn count(field: &str, v: Option<f64>) -> Converted<Option<u64>> {
    match v {
        None => Ok(None),
        Some(n) if n.is_finite() && n >= 0.0 => Ok(Some(n as u64)),
        Some(n) => Err(invalid(format!("Invalid {field}: {n}"))),
    }
}

/// A JS argument converted to `T`; a value of the wrong type (`command:
/// 123`, `cwd: null`, a missing argument) is `INVALID_OPTION` naming it,
/// instead of napi's own `StringExpected` or `InvalidArg`.
fn arg<T: FromNapiValue>(what: &str, v: Unknown) -> Converted<T> {
    unsafe { v.cast::<T>() }.map_err(|e| invalid(format!("Invalid {what}: {}", e.reason)))
}

/// The spawn options object; `env`, when given, must be an object of
/// strings (`env: "x"` once read as an empty environment).
fn spawn_options(v: Unknown) -> Converted<ShellSpawnOptions> {
    let kind = v.get_type().map_err(|e| invalid(e.reason))?;
    if kind != ValueType::Object {
        return Err(invalid(format!(
            "Invalid spawn options: expected an object, got {kind}"
        )));
    }
    let obj: Object = arg("spawn options", v)?;
    let env: Option<Unknown> = obj.get("env").map_err(|e| invalid(e.reason))?;
    if let Some(env) = env {
        let kind = env.get_type().map_err(|e| invalid(e.reason))?;
        let is_array = env.is_array().unwrap_or(false);
        if !matches!(
            kind,
            ValueType::Object | ValueType::Undefined | ValueType::Null
        ) || is_array
        {
            return Err(invalid(format!(
                "Invalid env: expected an object of strings, got {kind}"
            )));
        }
    }
    arg("spawn options", v)
}

fn byte_limit(v: Option<f64>) -> Converted<u64> {
    match v {
        None => Ok(DEFAULT_READ_BYTES),
        Some(b) if b.is_finite() && b >= 0.0 => Ok((b as u64).min(MAX_READ_BYTES)),
        Some(b) => Err(invalid(format!("Invalid maxBytes: {b}"))),
    }
}

fn offset_of(v: f64) -> Converted<u64> {
    if v.is_finite() && v >= 0.0 {
        Ok(v as u64)
    } else {
        Err(invalid(format!("Invalid offset: {v}")))
    }
}

/// A log read by path: a missing file is the caller's, the rest is `IO`.
fn read_error(path: &str, e: std::io::Error) -> CodedError {
    CodedError::new(ErrorCode::of_io(&e), format!("Cannot read {path}: {e}"))
}

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

fn job_out(v: JobView) -> ShellJob {
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

fn chunk_out(c: LogChunk) -> ShellLogChunk {
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

/// Which end of an over-long read to keep (`default` when not given), and
/// how many bytes one read may return.
fn read_limits(options: Option<ShellReadOptions>, default: Keep) -> Converted<(Keep, u64)> {
    let keep = match parse_choice(
        "keep",
        &options.as_ref().and_then(|o| o.keep.clone()),
        &["head", "tail"],
    )? {
        Some("head") => Keep::Head,
        Some(_) => Keep::Tail,
        None => default,
    };
    Ok((keep, byte_limit(options.and_then(|o| o.max_bytes))?))
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

/// One Pi session's background jobs, persisted in a JSON sidecar.
#[napi]
pub struct ShellRegistry {
    inner: Arc<Registry>,
    from_memory: bool,
}

#[napi]
impl ShellRegistry {
    /// The sidecar file (absolute).
    #[napi(getter)]
    pub fn sidecar_path(&self) -> String {
        self.inner.sidecar().display().to_string()
    }

    /// True when this process already had the registry open (e.g. after `/reload`):
    /// its jobs were tracked all along rather than reconciled from the file.
    #[napi(getter, js_name = "fromMemory")]
    pub fn was_open(&self) -> bool {
        self.from_memory
    }

    /// What could not be read from the sidecar when it was loaded (a damaged
    /// file is kept as `<sidecar>.corrupt`), and the last failure to write it.
    #[napi]
    pub fn problems(&self) -> Vec<String> {
        let mut out = self.inner.problems().to_vec();
        out.extend(self.inner.save_error());
        out
    }

    /// Starts a job. Throws, starting nothing, on an empty command, a missing
    /// cwd (`Working directory not found: <cwd>`), a missing shell, a log
    /// that cannot be created (`Cannot create log directory <dir>: ...`,
    /// `Cannot open log file <path>: ...`) or a duplicate id.
    #[napi(catch_unwind, ts_args_type = "options: ShellSpawnOptions")]
    pub fn spawn(&self, env: &Env, options: Unknown) -> Result<ShellJob> {
        spawn_options(options)
            .and_then(|o| self.spawn_coded(o))
            .map_err(|e| to_js(env, e))
    }

    fn spawn_coded(&self, options: ShellSpawnOptions) -> Converted<ShellJob> {
        let max_log_bytes = match options.max_log_bytes {
            Some(b) if !(b.is_finite() && b > 0.0) => {
                return Err(invalid(format!("Invalid maxLogBytes: {b}")))
            }
            b => b.map(|b| b.min(MAX_MS) as u64),
        };
        let req = SpawnRequest {
            command: options.command,
            cwd: PathBuf::from(options.cwd),
            shell: options.shell,
            env: options.env.map(|m| m.into_iter().collect()),
            log_path: PathBuf::from(options.log_path),
            timeout: millis("timeoutMs", options.timeout_ms)?,
            id: options.id,
            meta: options.meta,
            max_log_bytes,
            process_tree_only: match options.tracking.as_deref() {
                None | Some("auto") => false,
                Some("process-tree") => true,
                Some(other) => {
                    return Err(invalid(format!(
                        "Unknown tracking: {other} (use \"auto\" or \"process-tree\")"
                    )))
                }
            },
        };
        Ok(job_out(self.inner.spawn(req)?))
    }

    #[napi(catch_unwind)]
    pub fn get(&self, id: String) -> Option<ShellJob> {
        self.inner.get(&id).map(job_out)
    }

    /// All jobs in start order.
    #[napi(catch_unwind)]
    pub fn list(&self) -> Vec<ShellJob> {
        self.inner.list().into_iter().map(job_out).collect()
    }

    /// Resolves when the job is no longer running, the timeout passes or the
    /// signal aborts. Throws at once for an unknown id or an aborted signal.
    #[napi(catch_unwind, ts_return_type = "Promise<ShellWaitResult>")]
    pub fn wait<'env>(
        &self,
        env: &'env Env,
        id: String,
        options: Option<ShellWaitOptions>,
    ) -> Result<PromiseRaw<'env, ShellWaitResult>> {
        let (timeout, what) = self
            .wait_options(&id, options.as_ref())
            .map_err(|e| to_js(env, e))?;
        let signal = options.as_ref().and_then(|o| o.signal.as_ref());
        check_not_aborted(env, signal)?;
        let reg = self.inner.clone();
        run_cancellable(
            env,
            "wait",
            signal,
            &CancelToken::new(None),
            move |cancel| Ok(reg.wait_for(&id, what, timeout, &|| cancel.is_stopped())?),
            |(job, end)| ShellWaitResult {
                job: job_out(job),
                timed_out: end == WaitEnd::TimedOut,
                cancelled: end == WaitEnd::Cancelled,
            },
        )
    }

    fn wait_options(
        &self,
        id: &str,
        options: Option<&ShellWaitOptions>,
    ) -> Converted<(Option<Duration>, WaitFor)> {
        self.known(id)?;
        let timeout = millis("timeoutMs", options.and_then(|o| o.timeout_ms))?;
        let what = match parse_choice(
            "until",
            &options.and_then(|o| o.until.clone()),
            &["job", "leader"],
        )? {
            Some("leader") => WaitFor::Leader,
            _ => WaitFor::Job,
        };
        Ok((timeout, what))
    }

    /// SIGTERM to the job's process group and to descendants that left it,
    /// `graceMs` for them to exit, then SIGKILL; resolves with what happened.
    /// Killing a job that has ended (with nothing left behind) is a no-op.
    /// An unknown id or a bad `graceMs` rejects (it never throws).
    #[napi(catch_unwind, ts_return_type = "Promise<ShellKillReport>")]
    pub fn kill<'env>(
        &self,
        env: &'env Env,
        id: String,
        options: Option<ShellKillOptions>,
    ) -> Result<PromiseRaw<'env, ShellKillReport>> {
        let grace = millis("graceMs", options.and_then(|o| o.grace_ms))
            .map(|g| g.unwrap_or(Duration::from_millis(DEFAULT_GRACE_MS as u64)));
        let reg = self.inner.clone();
        run_blocking(
            env,
            "kill",
            move || Ok(reg.kill(&id, grace?)?),
            |r| ShellKillReport {
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
            },
        )
    }

    /// The end of the job's own output (not what an appended-to log held
    /// before); does not move the read cursor.
    #[napi(catch_unwind)]
    pub fn tail(
        &self,
        env: &Env,
        id: String,
        options: Option<ShellTailOptions>,
    ) -> Result<ShellLogChunk> {
        let tail = || -> Converted<LogChunk> {
            let lines = count("lines", options.as_ref().and_then(|o| o.lines))?;
            let max = byte_limit(options.and_then(|o| o.max_bytes))?;
            Ok(self.inner.tail(&id, lines, max)?)
        };
        tail().map(chunk_out).map_err(|e| to_js(env, e))
    }

    /// Output since the read cursor, then moves the cursor to `end` (persisted).
    /// With more than `maxBytes` new, `keep: 'tail'` returns the newest part
    /// and `skipped` counts what was passed over.
    #[napi(catch_unwind)]
    pub fn read_new(
        &self,
        env: &Env,
        id: String,
        options: Option<ShellReadOptions>,
    ) -> Result<ShellLogChunk> {
        let read = || -> Converted<LogChunk> {
            let (keep, max) = read_limits(options, Keep::Tail)?;
            Ok(self.inner.read_new(&id, max, keep)?)
        };
        read().map(chunk_out).map_err(|e| to_js(env, e))
    }

    #[napi(catch_unwind)]
    pub fn set_read_offset(&self, env: &Env, id: String, offset: f64) -> Result<()> {
        let set = || -> Converted<()> { Ok(self.inner.set_read_offset(&id, offset_of(offset)?)?) };
        set().map_err(|e| to_js(env, e))
    }

    /// Sets `delivered`; true only for the first caller ever (persisted), so
    /// a completion is announced exactly once across `/reload` and restarts.
    /// Where job `id`'s log was cut, as a handle whose `read()` takes no lock:
    /// for a log pump that polls while a cut may hold the registry.
    #[napi(catch_unwind)]
    pub fn log_cuts(&self, env: &Env, id: String) -> Result<ShellLogCuts> {
        self.inner
            .log_cuts(&id)
            .map(|inner| ShellLogCuts { inner })
            .map_err(|e| to_js(env, e))
    }

    #[napi(catch_unwind)]
    pub fn claim_delivery(&self, env: &Env, id: String) -> Result<bool> {
        self.inner.claim_delivery(&id).map_err(|e| to_js(env, e))
    }

    #[napi(catch_unwind)]
    pub fn set_meta(&self, env: &Env, id: String, meta: Option<String>) -> Result<ShellJob> {
        self.inner
            .set_meta(&id, meta)
            .map(job_out)
            .map_err(|e| to_js(env, e))
    }

    /// Forgets a job that is not running. Throws `Job <id> is still running` otherwise.
    #[napi(catch_unwind)]
    pub fn remove(&self, env: &Env, id: String, options: Option<ShellRemoveOptions>) -> Result<()> {
        let delete = options.and_then(|o| o.delete_files).unwrap_or(false);
        self.inner.remove(&id, delete).map_err(|e| to_js(env, e))
    }

    /// Calls `callback` once for each job that leaves `running` (ended, killed,
    /// timed out, found lost). Replaces any earlier callback of this registry,
    /// from this or an earlier (pre-`/reload`) JS instance. The callback does
    /// not keep Node alive; an exception it throws is swallowed.
    #[napi(catch_unwind, ts_args_type = "callback: (job: ShellJob) => void")]
    pub fn watch(&self, callback: Function<ShellJob, UnknownReturnValue>) -> Result<()> {
        let tsfn = callback
            .build_threadsafe_function::<ShellJob>()
            .callee_handled::<false>()
            .weak::<true>()
            .build()?;
        self.inner.set_listener(Some(Arc::new(move |v: &JobView| {
            tsfn.call_with_return_value(
                job_out(v.clone()),
                ThreadsafeFunctionCallMode::NonBlocking,
                |_returned, _env| Ok(()),
            );
        })));
        Ok(())
    }

    /// Drops the callback set by `watch`.
    #[napi(catch_unwind)]
    pub fn unwatch(&self) {
        self.inner.set_listener(None);
    }

    fn known(&self, id: &str) -> Converted<()> {
        match self.inner.get(id) {
            Some(_) => Ok(()),
            None => Err(ShellError::UnknownJob(id.to_string()).into()),
        }
    }
}

/// Opens the job registry stored at `sidecarPath` (created on first write;
/// its directory is created now). Within one process the same path always
/// yields the same registry, so jobs survive `/reload`. A registry loaded
/// from disk is reconciled: running jobs that are still ours are adopted,
/// ended ones read from their exit files, others marked `lost`. A damaged
/// sidecar loads what it can (see `problems()`); one that cannot be read,
/// or whose damaged copy cannot be kept, throws `IO` and is not touched.
/// A job's cut offsets (`logTrimAt`, `logShift`), read without the
/// registry's lock (see `ShellRegistry.logCuts`).
#[napi]
pub struct ShellLogCuts {
    inner: Arc<crate::shell::log::Cuts>,
}

#[napi(object)]
pub struct ShellCutOffsets {
    pub log_trim_at: Option<f64>,
    pub log_shift: f64,
}

#[napi]
impl ShellLogCuts {
    #[napi(catch_unwind)]
    pub fn read(&self) -> ShellCutOffsets {
        let (at, shift) = self.inner.get();
        ShellCutOffsets {
            log_trim_at: at.map(|a| a as f64),
            log_shift: shift as f64,
        }
    }
}

#[napi(catch_unwind, ts_args_type = "sidecarPath: string")]
pub fn open_shell_registry(env: Env, sidecar_path: Unknown) -> Result<ShellRegistry> {
    let open = || -> Converted<ShellRegistry> {
        let path: String = arg("sidecarPath", sidecar_path)?;
        let (inner, from_memory) = shell::open_shared(Path::new(&path))?;
        Ok(ShellRegistry { inner, from_memory })
    };
    open().map_err(|e| to_js(&env, e))
}

/// The last `lines` lines within the last `maxBytes` of any file.
#[napi(catch_unwind)]
pub fn read_log_tail(
    env: Env,
    path: String,
    options: Option<ShellTailOptions>,
) -> Result<ShellLogChunk> {
    let read = || -> Converted<LogChunk> {
        let lines = count("lines", options.as_ref().and_then(|o| o.lines))?;
        let max = byte_limit(options.and_then(|o| o.max_bytes))?;
        log::tail(Path::new(&path), lines, max, false).map_err(|e| read_error(&path, e))
    };
    read().map(chunk_out).map_err(|e| to_js(&env, e))
}

/// Up to `maxBytes` from `offset` on. A character cut at the end is left for
/// the next read (continue from `end`); an offset past the end reads from 0.
#[napi(catch_unwind)]
pub fn read_log_from(
    env: Env,
    path: String,
    offset: f64,
    options: Option<ShellReadOptions>,
) -> Result<ShellLogChunk> {
    let read = || -> Converted<LogChunk> {
        let (keep, max) = read_limits(options, Keep::Head)?;
        log::read_from(Path::new(&path), offset_of(offset)?, max, keep, false)
            .map_err(|e| read_error(&path, e))
    };
    read().map(chunk_out).map_err(|e| to_js(&env, e))
}
