//! Background shell jobs: processes we start, watch, read and kill, and that
//! outlive a reload of the JS side (and, for reading their status, a crash of
//! the whole host process).
//!
//! Everything here is napi-free so it runs under plain `cargo test`;
//! `src/napi/shell.rs` only converts types. The pieces:
//!
//! - [`start`]: from a spawn request to a started job and its record.
//! - [`spawn`]: `posix_spawn` of a tiny `/bin/sh` wrapper in a new session,
//!   output appended to a log file, exit status written next to it.
//! - [`defaults`]: the defaults and caps JS shares (one data file).
//! - [`cgroup`]: a cgroup v2 child per job where the host allows one.
//! - [`identity`]: who is behind a pid right now (start time, boot id).
//! - [`job`]: the persisted record and how an ending is interpreted.
//! - `liveness`: a job as this process watches it, and its refresh.
//! - [`members`]: who belongs to a job, and signalling only those.
//! - [`kill`]: group TERM, grace, KILL, and the sweep of escaped descendants.
//! - [`log`]: bounded tail and incremental reads of a log, and its cuts.
//! - `pipe`: a job's output pipe and control socket, and the pump's binary.
//! - [`pump`]: the process that copies a job's output from its pipe to its
//!   log and cuts before the bound (the `pi-utils-pump` binary).
//! - `log_bound`: when a running job's log is cut, and by how much.
//! - [`brake`]: stops a job whose log outruns the cuts, before the bound.
//! - [`sidecar`]: the JSON file of records, written atomically, loaded leniently.
//! - [`reconcile`]: what a record from an earlier process means now.
//! - [`registry`]: one session's jobs, shared across reloads.
//! - [`monitor`]: the one thread that notices exits and timeouts, and its schedule.
//!
//! Unix only: on other platforms the module is empty and the JS API simply
//! lacks these functions, which the extension detects.
#![cfg(unix)]

mod brake;
pub mod cgroup;
pub mod defaults;
pub mod identity;
pub mod job;
pub mod kill;
mod liveness;
pub mod log;
mod log_bound;
pub mod members;
mod monitor;
mod pidfd;
mod pipe;
pub mod pump;
pub mod reconcile;
pub mod registry;
pub mod sidecar;
pub mod spawn;
mod start;
#[cfg(test)]
mod tests;

use crate::error_code::{CodedError, ErrorCode};
pub use job::{JobRecord, JobState, JobView};
pub use kill::{KillOutcome, KillReport};
pub use registry::{open_shared, Registry, SpawnRequest, WaitEnd, WaitFor};

/// Errors a caller can act on; the `Display` text reaches the user as is, so
/// each one names the offending input.
#[derive(Debug)]
pub enum ShellError {
    EmptyCommand,
    NulByte(&'static str),
    /// An option the core itself finds invalid (an empty job id).
    InvalidOption(String),
    CwdNotFound(String),
    CwdNotDirectory(String),
    ShellNotFound(String),
    LogDirectory {
        dir: String,
        error: String,
    },
    LogFile {
        path: String,
        error: String,
    },
    Sidecar {
        path: String,
        error: String,
    },
    Spawn(String),
    UnknownJob(String),
    DuplicateId(String),
    StillRunning(String),
}

impl std::fmt::Display for ShellError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShellError::EmptyCommand => write!(f, "Command must not be empty"),
            ShellError::NulByte(what) => write!(f, "{what} must not contain a NUL byte"),
            ShellError::InvalidOption(what) => write!(f, "{what}"),
            ShellError::CwdNotFound(p) => write!(f, "Working directory not found: {p}"),
            ShellError::CwdNotDirectory(p) => {
                write!(f, "Working directory is not a directory: {p}")
            }
            ShellError::ShellNotFound(p) => write!(f, "Shell not found: {p}"),
            ShellError::LogDirectory { dir, error } => {
                write!(f, "Cannot create log directory {dir}: {error}")
            }
            ShellError::LogFile { path, error } => {
                write!(f, "Cannot open log file {path}: {error}")
            }
            ShellError::Sidecar { path, error } => {
                write!(f, "Cannot use job registry file {path}: {error}")
            }
            ShellError::Spawn(e) => write!(f, "Cannot start the job: {e}"),
            ShellError::UnknownJob(id) => write!(f, "Unknown job: {id}"),
            ShellError::DuplicateId(id) => write!(f, "A job with id {id} already exists"),
            ShellError::StillRunning(id) => write!(f, "Job {id} is still running"),
        }
    }
}

impl std::error::Error for ShellError {}

impl ShellError {
    /// What JS matches on: the caller's input (command, cwd, shell, id) or
    /// the disk (log, registry file, spawn).
    pub fn code(&self) -> ErrorCode {
        match self {
            ShellError::EmptyCommand | ShellError::NulByte(_) | ShellError::InvalidOption(_) => {
                ErrorCode::InvalidOption
            }
            ShellError::CwdNotFound(_) | ShellError::ShellNotFound(_) => ErrorCode::PathNotFound,
            ShellError::CwdNotDirectory(_) => ErrorCode::NotAFile,
            ShellError::LogDirectory { .. }
            | ShellError::LogFile { .. }
            | ShellError::Sidecar { .. }
            | ShellError::Spawn(_) => ErrorCode::Io,
            ShellError::UnknownJob(_) => ErrorCode::UnknownJob,
            ShellError::DuplicateId(_) => ErrorCode::JobExists,
            ShellError::StillRunning(_) => ErrorCode::JobRunning,
        }
    }

    /// One of each variant, for the glue's `errorSamples()` (`src/napi/error.rs`).
    pub fn samples() -> Vec<ShellError> {
        let io = || "Permission denied (os error 13)".to_string();
        vec![
            ShellError::EmptyCommand,
            ShellError::NulByte("command"),
            ShellError::InvalidOption("Invalid id: it is empty".into()),
            ShellError::CwdNotFound("/x/gone".into()),
            ShellError::CwdNotDirectory("/x/a.txt".into()),
            ShellError::ShellNotFound("nosuchshell".into()),
            ShellError::LogDirectory {
                dir: "/x/logs".into(),
                error: io(),
            },
            ShellError::LogFile {
                path: "/x/logs/bg-1.log".into(),
                error: io(),
            },
            ShellError::Sidecar {
                path: "/x/jobs.json".into(),
                error: io(),
            },
            ShellError::Spawn(io()),
            ShellError::UnknownJob("bg-9".into()),
            ShellError::DuplicateId("bg-1".into()),
            ShellError::StillRunning("bg-1".into()),
        ]
    }
}

impl From<ShellError> for CodedError {
    fn from(e: ShellError) -> Self {
        CodedError::new(e.code(), e.to_string())
    }
}

/// A named step of a spawn or a sidecar rewrite where the fault tests kill
/// the host process (SIGKILL, no unwinding, nothing flushed): armed with
/// [`arm_failpoint`] by a test host, compiled only into tests.
#[cfg(test)]
pub(crate) fn failpoint(name: &str) {
    let mut armed = FAILPOINT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((at, left)) = armed.as_mut() {
        if at == name {
            *left -= 1;
            if *left == 0 {
                unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
            }
        }
    }
}

#[cfg(not(test))]
#[inline(always)]
pub(crate) fn failpoint(_name: &str) {}

#[cfg(test)]
static FAILPOINT: std::sync::Mutex<Option<(String, u32)>> = std::sync::Mutex::new(None);

/// Kills this process at the `nth` hit of failpoint `name`.
#[cfg(test)]
pub(crate) fn arm_failpoint(name: &str, nth: u32) {
    *FAILPOINT.lock().unwrap_or_else(|p| p.into_inner()) = Some((name.to_string(), nth));
}

/// Milliseconds since the Unix epoch, the unit every timestamp in a record uses.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
