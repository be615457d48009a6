//! A job's persisted record and how its ending is interpreted.
//!
//! One job goes by these names, one per layer: [`JobRecord`] is what the
//! sidecar keeps; `LiveJob` (liveness.rs) is the registry's entry for it,
//! the record plus the handles that watch its processes; [`JobView`] is
//! what a caller is told (the record and what is live: log size, runtime,
//! flooding), and `ShellJob` is that view as a JS object (src/napi).
//!
//! The exit status normally comes from the wrapper's exit file, written by
//! the outer `sh` once the user's shell returns, so it survives the death of
//! the process that started the job. Shells report a death by signal n as
//! status 128+n; we report such a status as `signalled` and keep the raw
//! code beside it, so a job that itself ran `exit 143` is not misread
//! silently.

use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Running,
    Exited,
    Signalled,
    /// We can no longer tell what became of it (pid reused, machine
    /// rebooted, identity unverifiable). Never signalled.
    Lost,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Running => "running",
            JobState::Exited => "exited",
            JobState::Signalled => "signalled",
            JobState::Lost => "lost",
        }
    }
}

/// Everything the sidecar keeps about a job. Optional fields default so that
/// a record written by an older version still loads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobRecord {
    pub id: String,
    pub command: String,
    pub cwd: String,
    pub shell: String,
    pub log_path: String,
    pub exit_path: String,
    pub pid: i32,
    pub pgid: i32,
    #[serde(default)]
    pub start_ticks: Option<u64>,
    #[serde(default)]
    pub boot_id: Option<String>,
    /// `PI_UTILS_JOB=<token>`, set in the job's environment; every process
    /// the job starts inherits it, which is how escaped descendants are found.
    #[serde(default)]
    pub marker: String,
    #[serde(default)]
    pub host_pid: u32,
    pub started_at_ms: u64,
    #[serde(default)]
    pub ended_at_ms: Option<u64>,
    pub state: JobState,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub signal: Option<i32>,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub delivered: bool,
    #[serde(default)]
    pub read_offset: u64,
    /// Log size when the job started (the log may have been appended to before).
    #[serde(default)]
    pub log_start: u64,
    #[serde(default)]
    pub kill_requested: bool,
    #[serde(default)]
    pub timed_out: bool,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Opaque to us: whatever the caller wants to find again after a restart.
    #[serde(default)]
    pub meta: Option<String>,
    /// How the job's processes are found: [`TRACKING_CGROUP`] (its own
    /// cgroup v2, which no process can leave) or [`TRACKING_PROCESS_TREE`]
    /// (group, session, parentage and the environment marker, each
    /// identity-checked). Both are consulted when there is a cgroup.
    #[serde(default = "default_tracking")]
    pub tracking: String,
    /// The job's cgroup directory while it exists (removed once empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    /// When the job's main process (the wrapper and the user's shell) ended.
    /// A job stays `running` after that while any process it started lives;
    /// `leader_exit_code` / `leader_signal` keep how the main process ended,
    /// and become the job's own once the last of them is gone.
    #[serde(default)]
    pub leader_ended_at_ms: Option<u64>,
    #[serde(default)]
    pub leader_exit_code: Option<i32>,
    #[serde(default)]
    pub leader_signal: Option<i32>,
    /// The processes the job started that outlived its main process, as last
    /// seen alive: identity (pid + start time) and command line.
    #[serde(default)]
    pub members: Vec<Member>,
    /// The log's bound (`shell.maxLogBytes`); see [`super::log::trim`].
    #[serde(default = "default_max_log")]
    pub max_log_bytes: u64,
    /// Output no longer in the log (trimmed away or under the marker).
    #[serde(default)]
    pub log_dropped: u64,
    /// Where the marker line starts once the log was trimmed.
    #[serde(default)]
    pub log_trim_at: Option<u64>,
    /// Bytes removed from the file at `log_trim_at` over all trims: an offset
    /// past the cut moved back by what was removed after it was taken.
    #[serde(default)]
    pub log_shift: u64,
    /// Length of the marker line now in the log (0: none).
    #[serde(default)]
    pub log_marker: u64,
    /// The job writes into a pipe and its log pump writes the log and
    /// makes the cuts (`pump.rs`), keeping `<log>.cuts`; the `log_*`
    /// fields above copy that record. False: the job writes the log itself
    /// and the registry cuts it (no pump binary, or an older record).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pump: bool,
    /// With a pump: the inode of the pipe the job writes into (its stdout
    /// and stderr), which proves a process the job started that left its
    /// group, session and environment (see `members.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_pipe: Option<u64>,
}

fn default_max_log() -> u64 {
    super::log::DEFAULT_MAX_LOG_BYTES
}

/// The scan of `/proc`: works everywhere `/proc` does, but a process that
/// clears its environment and leaves the group after the main process
/// ended is not found.
pub const TRACKING_PROCESS_TREE: &str = "process-tree";
/// A cgroup v2 child of ours, where the host lets us make one (see
/// [`super::cgroup`]).
pub const TRACKING_CGROUP: &str = "cgroup";

fn default_tracking() -> String {
    TRACKING_PROCESS_TREE.to_string()
}

/// A process the job started, known by pid and start time (the pid alone
/// may name a stranger later).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub pid: i32,
    pub start: u64,
    #[serde(default)]
    pub command: String,
}

/// A record plus what is computed on each query.
#[derive(Debug, Clone)]
pub struct JobView {
    pub record: JobRecord,
    pub log_bytes: u64,
    /// Not started by this process: watched by identity polling.
    pub adopted: bool,
    pub runtime_ms: u64,
    /// Its log has grown faster than 10 MB/s for more than 2 s: worth telling the user.
    pub flooding: bool,
}

impl JobRecord {
    pub fn is_running(&self) -> bool {
        self.state == JobState::Running
    }

    /// Running, but only because processes it started outlived its main one.
    pub fn leader_ended(&self) -> bool {
        self.leader_ended_at_ms.is_some()
    }

    /// When its timeout fires (ms since the epoch). Saturating: a timeout
    /// of 2^64 ms once wrapped around to a deadline in the past, which
    /// killed the job at once.
    pub fn deadline_ms(&self) -> Option<u64> {
        self.timeout_ms
            .map(|t| self.started_at_ms.saturating_add(t))
    }
}

/// The main process of a running record ended: keeps how (read the same way
/// as a whole job's ending) in the `leader_*` fields, and returns the record
/// the job would end as if nothing it started were left.
pub fn leader_finish(rec: &mut JobRecord, evidence: EndEvidence) -> JobRecord {
    let mut ended = rec.clone();
    finish(&mut ended, evidence);
    rec.leader_ended_at_ms = ended.ended_at_ms;
    rec.leader_exit_code = ended.exit_code;
    rec.leader_signal = ended.signal;
    rec.note = ended.note.clone();
    ended.leader_ended_at_ms = ended.ended_at_ms;
    ended.leader_exit_code = ended.exit_code;
    ended.leader_signal = ended.signal;
    ended
}

/// The last process a job started is gone: the job ends as its main process
/// did, unless pi-utils signalled what was left (then it reads as that signal,
/// the main process's code kept in `leader_exit_code`).
pub fn finish_after_members(rec: &mut JobRecord, sent_signal: Option<i32>) {
    rec.members.clear();
    match sent_signal {
        Some(sig) => {
            rec.state = JobState::Signalled;
            rec.signal = Some(sig);
            rec.exit_code = None;
        }
        None => {
            rec.state = if rec.leader_signal.is_some() {
                JobState::Signalled
            } else {
                JobState::Exited
            };
            rec.exit_code = rec.leader_exit_code;
            rec.signal = rec.leader_signal;
        }
    }
    rec.ended_at_ms = Some(super::now_ms());
}

/// What the wrapper writes to the exit file when it got end of file
/// instead of its go-ahead (see spawn.rs): its job never ran.
pub const NEVER_STARTED: &str = "never-started";

/// What an exit file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The shell's exit status.
    Code(i32),
    /// The wrapper was never let go, so the command never ran (its host
    /// died between saving the record and the go-ahead).
    NeverStarted,
}

/// Reads `<log>.exit`: `Some(Ok(..))` with when it was written,
/// `Some(Err(why))` when present but unreadable, `None` when absent.
pub fn read_exit_file(path: &Path) -> Option<Result<(Exit, Option<u64>), String>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(Err(format!("cannot read exit file: {e}"))),
    };
    let mtime = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64);
    if text.trim() == NEVER_STARTED {
        return Some(Ok((Exit::NeverStarted, mtime)));
    }
    match text.trim().parse::<i32>() {
        Ok(code) => Some(Ok((Exit::Code(code), mtime))),
        Err(_) => Some(Err(format!("exit file holds {:?}", text.trim()))),
    }
}

/// What we know about how a job ended, besides its exit file.
#[derive(Debug, Clone, Copy, Default)]
pub struct EndEvidence {
    /// `waitpid` status of the wrapper, when we reaped it ourselves.
    pub wait_status: Option<i32>,
    /// The strongest signal we sent to the job, if any.
    pub sent_signal: Option<i32>,
}

/// Moves a running record to its final state.
pub fn finish(rec: &mut JobRecord, evidence: EndEvidence) {
    let exit = read_exit_file(Path::new(&rec.exit_path));
    let mut ended_at = None;
    rec.note = None;
    match exit {
        Some(Ok((Exit::Code(code), mtime))) => {
            ended_at = mtime;
            set_from_code(rec, code);
        }
        Some(Ok((Exit::NeverStarted, mtime))) => {
            ended_at = mtime;
            rec.state = JobState::Exited;
            rec.exit_code = None;
            rec.signal = None;
            rec.note = Some(
                "never started: the process that started it ended before letting it run, so its command never ran".into(),
            );
        }
        other => {
            if let Some(Err(why)) = other {
                rec.note = Some(why);
            }
            if let Some(status) = evidence.wait_status {
                if libc::WIFSIGNALED(status) {
                    rec.state = JobState::Signalled;
                    rec.signal = Some(libc::WTERMSIG(status));
                    rec.exit_code = None;
                } else {
                    set_from_code(rec, libc::WEXITSTATUS(status));
                }
            } else if let Some(sig) = evidence.sent_signal {
                rec.state = JobState::Signalled;
                rec.signal = Some(sig);
                rec.exit_code = None;
                rec.note.get_or_insert_with(|| {
                    "ended after pi-utils signalled it; no exit status was recorded".into()
                });
            } else {
                rec.state = JobState::Exited;
                rec.exit_code = None;
                rec.signal = None;
                rec.note.get_or_insert_with(|| {
                    "ended while no process was watching it; no exit status was recorded".into()
                });
            }
        }
    }
    // The exit file's mtime comes from the filesystem's coarse clock (a few
    // ms behind the one `started_at_ms` read): a quick job's would precede its start.
    rec.ended_at_ms = Some(
        ended_at
            .unwrap_or_else(super::now_ms)
            .max(rec.started_at_ms),
    );
}

fn set_from_code(rec: &mut JobRecord, code: i32) {
    if (129..=128 + 64).contains(&code) {
        rec.state = JobState::Signalled;
        rec.signal = Some(code - 128);
    } else {
        rec.state = JobState::Exited;
        rec.signal = None;
    }
    rec.exit_code = Some(code);
}

pub fn mark_lost(rec: &mut JobRecord, why: &str) {
    rec.state = JobState::Lost;
    rec.note = Some(why.to_string());
    rec.ended_at_ms.get_or_insert_with(super::now_ms);
}

/// `SIGTERM` for 15 and so on; numbers differ between platforms, so the
/// table is built from `libc`.
pub fn signal_name(sig: i32) -> String {
    const NAMES: &[(i32, &str)] = &[
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGILL, "SIGILL"),
        (libc::SIGTRAP, "SIGTRAP"),
        (libc::SIGABRT, "SIGABRT"),
        (libc::SIGBUS, "SIGBUS"),
        (libc::SIGFPE, "SIGFPE"),
        (libc::SIGKILL, "SIGKILL"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGSEGV, "SIGSEGV"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGPIPE, "SIGPIPE"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGCHLD, "SIGCHLD"),
        (libc::SIGCONT, "SIGCONT"),
        (libc::SIGSTOP, "SIGSTOP"),
        (libc::SIGTSTP, "SIGTSTP"),
        (libc::SIGTTIN, "SIGTTIN"),
        (libc::SIGTTOU, "SIGTTOU"),
        (libc::SIGURG, "SIGURG"),
        (libc::SIGXCPU, "SIGXCPU"),
        (libc::SIGXFSZ, "SIGXFSZ"),
        (libc::SIGVTALRM, "SIGVTALRM"),
        (libc::SIGPROF, "SIGPROF"),
        (libc::SIGWINCH, "SIGWINCH"),
        (libc::SIGIO, "SIGIO"),
        (libc::SIGSYS, "SIGSYS"),
    ];
    NAMES
        .iter()
        .find(|(n, _)| *n == sig)
        .map(|(_, name)| name.to_string())
        .unwrap_or_else(|| format!("SIG{sig}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(exit_path: &Path) -> JobRecord {
        JobRecord {
            id: "bg-1".into(),
            command: "true".into(),
            cwd: "/".into(),
            shell: "bash".into(),
            log_path: String::new(),
            exit_path: exit_path.to_string_lossy().into_owned(),
            pid: 0,
            pgid: 0,
            start_ticks: None,
            boot_id: None,
            marker: String::new(),
            host_pid: 0,
            started_at_ms: 0,
            ended_at_ms: None,
            state: JobState::Running,
            exit_code: None,
            signal: None,
            note: None,
            delivered: false,
            read_offset: 0,
            log_start: 0,
            kill_requested: false,
            timed_out: false,
            timeout_ms: None,
            meta: None,
            tracking: default_tracking(),
            cgroup: None,
            leader_ended_at_ms: None,
            leader_exit_code: None,
            leader_signal: None,
            members: Vec::new(),
            max_log_bytes: default_max_log(),
            log_dropped: 0,
            log_trim_at: None,
            log_shift: 0,
            log_marker: 0,
            pump: false,
            log_pipe: None,
        }
    }

    #[test]
    fn exit_file_codes_map_to_exit_or_signal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.exit");
        for (text, state, code, sig) in [
            ("0\n", JobState::Exited, Some(0), None),
            ("7", JobState::Exited, Some(7), None),
            ("143\n", JobState::Signalled, Some(143), Some(libc::SIGTERM)),
            ("128", JobState::Exited, Some(128), None),
        ] {
            std::fs::write(&path, text).unwrap();
            let mut rec = record(&path);
            finish(&mut rec, EndEvidence::default());
            assert_eq!(
                (rec.state, rec.exit_code, rec.signal),
                (state, code, sig),
                "{text:?}"
            );
            assert!(rec.ended_at_ms.is_some());
        }
    }

    #[test]
    fn without_exit_file_the_wait_status_or_our_signal_decides() {
        let dir = tempfile::tempdir().unwrap();
        let mut rec = record(&dir.path().join("none.exit"));
        finish(
            &mut rec,
            EndEvidence {
                wait_status: Some(libc::SIGKILL),
                sent_signal: None,
            },
        );
        assert_eq!(
            (rec.state, rec.signal),
            (JobState::Signalled, Some(libc::SIGKILL))
        );

        let mut rec = record(&dir.path().join("none.exit"));
        finish(
            &mut rec,
            EndEvidence {
                wait_status: None,
                sent_signal: None,
            },
        );
        assert_eq!((rec.state, rec.exit_code), (JobState::Exited, None));
        assert!(rec.note.unwrap().contains("no exit status"));

        std::fs::write(dir.path().join("bad.exit"), "garbage").unwrap();
        let mut rec = record(&dir.path().join("bad.exit"));
        finish(
            &mut rec,
            EndEvidence {
                wait_status: None,
                sent_signal: Some(libc::SIGTERM),
            },
        );
        assert_eq!(rec.state, JobState::Signalled);
        assert!(rec.note.unwrap().contains("garbage"));
    }

    #[test]
    fn a_main_process_that_ends_first_leaves_its_code_for_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.exit");
        std::fs::write(&path, "3\n").unwrap();
        let mut rec = record(&path);
        let alone = leader_finish(&mut rec, EndEvidence::default());
        assert_eq!((alone.state, alone.exit_code), (JobState::Exited, Some(3)));
        assert!(rec.is_running() && rec.leader_ended());
        assert_eq!((rec.leader_exit_code, rec.exit_code), (Some(3), None));

        let mut left = rec.clone();
        finish_after_members(&mut left, None);
        assert_eq!((left.state, left.exit_code), (JobState::Exited, Some(3)));
        finish_after_members(&mut rec, Some(libc::SIGKILL));
        assert_eq!(
            (rec.state, rec.signal, rec.leader_exit_code),
            (JobState::Signalled, Some(libc::SIGKILL), Some(3))
        );
    }

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
        assert_eq!(signal_name(77), "SIG77");
    }
}
