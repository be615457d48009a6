//! Background shell jobs for JS: `openShellRegistry(sidecarPath)` returns the
//! session's `ShellRegistry` (the same one again after Pi's `/reload`), plus
//! two log readers that work on any file. Waits and kills run on tokio's
//! blocking pool, never on the JS thread or libuv's pool. The objects that
//! cross are in `shell/objects.rs`, the checks of what JS passes in
//! `shell/input.rs`.
#![cfg(unix)]

mod input;
mod objects;

pub use objects::*;

use super::error::{run_blocking, to_js};
use super::signal::{check_not_aborted, run_cancellable};
use crate::search::CancelToken;
use crate::shell::log::{self, Keep, LogChunk};
use crate::shell::{self, JobView, Registry, ShellError, WaitEnd, WaitFor};
use input::{
    arg, byte_limit, count, millis, offset_of, read_error, read_limits, spawn_options,
    spawn_request, wait_target, Converted,
};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunctionCallMode, UnknownReturnValue};
use napi_derive::napi;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

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
        Ok(job_out(self.inner.spawn(spawn_request(options)?)?))
    }

    /// The id a job started now without one would get: `bg-<n>`, one past
    /// the highest of this registry's jobs and of the ids retired with
    /// `retireId`. The registry is the one owner of job ids.
    #[napi(catch_unwind)]
    pub fn next_id(&self) -> String {
        self.inner.next_id()
    }

    /// Never hands out `id` (a `bg-<n>`) or a lower one again, even after
    /// `remove`: for an id someone has seen. Persisted in the sidecar.
    #[napi(catch_unwind)]
    pub fn retire_id(&self, id: String) {
        self.inner.retire_id(&id)
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
        let what = wait_target(options.and_then(|o| o.until.clone()))?;
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
            .map(|g| g.unwrap_or(shell::defaults::KILL_GRACE));
        let reg = self.inner.clone();
        run_blocking(
            env,
            "kill",
            move || Ok(reg.kill(&id, grace?)?),
            kill_report_out,
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

    /// Where job `id`'s log was cut, as a handle whose `read()` takes no lock:
    /// for a log pump that polls while a cut may hold the registry.
    #[napi(catch_unwind)]
    pub fn log_cuts(&self, env: &Env, id: String) -> Result<ShellLogCuts> {
        self.inner
            .log_cuts(&id)
            .map(|inner| ShellLogCuts { inner })
            .map_err(|e| to_js(env, e))
    }

    /// Sets `delivered`; true only for the first caller ever (persisted), so
    /// a completion is announced exactly once across `/reload` and restarts.
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

/// A job's cut offsets (`logTrimAt`, `logShift`), read without the
/// registry's lock (see `ShellRegistry.logCuts`).
#[napi]
pub struct ShellLogCuts {
    inner: Arc<crate::shell::log::Cuts>,
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

/// Opens the job registry stored at `sidecarPath` (created on first write;
/// its directory is created now). Within one process the same path always
/// yields the same registry, so jobs survive `/reload`. A registry loaded
/// from disk is reconciled: running jobs that are still ours are adopted,
/// ended ones read from their exit files, others marked `lost`. A damaged
/// sidecar loads what it can (see `problems()`); one that cannot be read,
/// or whose damaged copy cannot be kept, throws `IO` and is not touched.
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
