//! Who belongs to a job, and the only way its processes are signalled.
//!
//! A job's processes are what the registry started and can prove: its group,
//! session and descendants while the leader lives, its cgroup, the
//! `PI_UTILS_JOB` marker in the environment, the output it was handed (its
//! pipe, with a log pump, else its log's description), and the processes its record tracks (pid + start time), never
//! who merely writes to its log. Signals never go to pid or pgid 0 or 1, to
//! ourselves or to our own process group; a single process is signalled
//! through a pidfd opened and then re-checked where available, so a pid
//! reused in between is spared.
//!
//! In detail, a job's processes are its group (and session) while the leader lives,
//! its descendants, the processes the registry tracks since the leader
//! ended (each by pid and start time), and anything carrying its
//! environment marker: a daemon
//! that called `setsid` and was re-parented to init is still found by the
//! marker. Every candidate must have started no earlier than the job, on
//! this boot; processes found only by group, session or parentage count only
//! while the leader is alive, because only then are those numbers pinned to
//! our job. The descendant walk uses the parent links of one `/proc` scan
//! (the same information as `/proc/<pid>/task/*/children`, without needing
//! `CONFIG_PROC_CHILDREN`), and the same scan serves the marker search.

use super::cgroup::JobCgroup;
use super::identity::{self, ProcInfo};
use super::job::{JobRecord, Member};
use super::pidfd::PidFd;
use super::spawn;
use std::collections::HashMap;

pub(super) fn target_of(rec: &JobRecord) -> Target {
    Target {
        pid: rec.pid,
        pgid: rec.pgid,
        start: rec.start_ticks.unwrap_or(0),
        marker: format!("{}={}", spawn::MARKER_NAME, rec.marker).into_bytes(),
        cgroup: rec
            .cgroup
            .as_deref()
            .and_then(|d| JobCgroup::open(std::path::Path::new(d))),
        log: std::fs::metadata(&rec.log_path).ok().map(|m| {
            use std::os::unix::fs::MetadataExt;
            LogMark {
                dev: m.dev(),
                ino: m.ino(),
                offset: spawn::log_mark_offset(&rec.marker),
            }
        }),
        pipe: rec.log_pipe,
    }
}

/// The live process a tracked member names, if it is still that one.
pub(super) fn member_info(m: &Member) -> Option<ProcInfo> {
    identity::proc_info(m.pid).filter(|p| p.start == m.start && !p.zombie)
}

/// `found` plus the processes the record tracks that are still the ones it
/// names (a tracked pid now held by a stranger is left out).
pub(super) fn with_tracked(mut found: Vec<ProcInfo>, rec: &JobRecord) -> Vec<ProcInfo> {
    for p in rec.members.iter().filter_map(member_info) {
        if !found.iter().any(|f| f.pid == p.pid) {
            found.push(p);
        }
    }
    found
}

/// Whether `p` is provably the job's whatever a record says: it carries the
/// job's marker, is in the job's cgroup, or holds the log description the
/// registry handed the job. What a sidecar lists by pid and start time
/// alone may be anyone (a forged or damaged record).
pub fn proven_member(p: &ProcInfo, target: &Target) -> bool {
    !cfg!(target_os = "linux")
        || target
            .cgroup
            .as_ref()
            .is_some_and(|c| c.pids().contains(&p.pid))
        || identity::environ_contains(p.pid, &target.marker)
        || holds_mark(p.pid, target)
}

/// A running record just loaded from a sidecar (a restart, another
/// process): drops the tracked processes pi-utils cannot prove are the
/// job's, then continues what is stopped. A host that died while its brake
/// (or a cut) held the job stopped left it so, and nothing else would ever
/// send the `SIGCONT`. The leader was proven by `reconcile::reconcile`.
pub(super) fn settle_adopted(rec: &mut JobRecord) {
    if !rec.is_running() {
        return;
    }
    let target = target_of(rec);
    rec.members
        .retain(|m| member_info(m).is_some_and(|p| proven_member(&p, &target)));
    if host_alive(rec) {
        // Its host may have stopped it for a cut that is under way.
        return;
    }
    let leader_alive = !rec.leader_ended();
    // The pump too: stopped, it would hold the job up for good.
    let mut found = with_tracked(with_pump(&target, leader_alive), rec);
    if leader_alive {
        let leader = identity::proc_info(rec.pid).filter(|p| Some(p.start) == rec.start_ticks);
        found.extend(leader);
    }
    for p in found.iter().filter(|p| p.stopped) {
        signal_process(p, libc::SIGCONT);
    }
}

/// Whether the process that started the job still runs: the recorded
/// host pid names a live process started no later than the job (a later
/// one reuses the pid).
fn host_alive(rec: &JobRecord) -> bool {
    let host = identity::proc_info(rec.host_pid as i32);
    host.is_some_and(|h| !h.zombie && rec.start_ticks.is_none_or(|s| h.start <= s))
}

/// What identifies a job's processes.
#[derive(Debug, Clone)]
pub struct Target {
    pub pid: i32,
    pub pgid: i32,
    pub start: u64,
    /// `PI_UTILS_JOB=<token>`.
    pub marker: Vec<u8>,
    /// The job's own cgroup: whatever is in it is the job's, wherever its
    /// parent, group or environment went.
    pub cgroup: Option<JobCgroup>,
    /// The job's log and where its mark is: what holds the log through the
    /// description the registry marked was handed it by the job (see
    /// [`identity::holds_log_mark`]); a process that merely writes to the
    /// file is not. None when the log is gone.
    pub log: Option<LogMark>,
    /// With a log pump: the inode of the pipe the registry handed the job
    /// as its output ([`identity::holds_pipe`]).
    pub pipe: Option<u64>,
}

/// The job's log file `(dev, ino)` and the offset of the lock that marks
/// the open file description the job was given (see [`spawn::mark_log`]).
#[derive(Debug, Clone, Copy)]
pub struct LogMark {
    pub dev: u64,
    pub ino: u64,
    pub offset: u64,
}

/// The job's processes other than the leader itself, alive right now.
pub fn processes_of(target: &Target, leader_alive: bool) -> Vec<ProcInfo> {
    let mut found = with_pump(target, leader_alive);
    found.retain(|p| !is_log_pump(p.pid));
    found
}

/// [`processes_of`] with the job's log pump, if it has one.
fn with_pump(target: &Target, leader_alive: bool) -> Vec<ProcInfo> {
    let me = std::process::id() as i32;
    let in_cgroup: Vec<i32> = target.cgroup.as_ref().map(|c| c.pids()).unwrap_or_default();
    let table: HashMap<i32, ProcInfo> = identity::all_pids()
        .into_iter()
        .filter_map(identity::proc_info)
        .map(|p| (p.pid, p))
        .collect();
    let mut out: Vec<ProcInfo> = table
        .values()
        .filter(|p| p.pid > 1 && p.pid != me && p.pid != target.pid && !p.zombie)
        .filter(|p| p.start >= target.start)
        .filter(|p| {
            (leader_alive
                && (p.pgid == target.pgid
                    || p.sid == target.pid
                    || descends_from(p, target.pid, &table)))
                || in_cgroup.contains(&p.pid)
                || identity::environ_contains(p.pid, &target.marker)
                || holds_mark(p.pid, target)
        })
        .cloned()
        .collect();
    out.sort_by_key(|p| p.pid);
    out
}

/// Whether `pid` runs the job's log pump (`pump.rs`): not counted among
/// the job's processes, so a job ends when its command and what it started
/// are gone, and no report names it. It needs no signal of its own: it
/// ends by itself once no process of the job holds its pipe, and a kill's
/// SIGKILL to the group reaches it.
fn is_log_pump(pid: i32) -> bool {
    std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| {
        exe.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(super::pump::BINARY))
    })
}

/// Holds the output the registry handed the job: its pipe, with a pump,
/// else the marked log description.
fn holds_mark(pid: i32, target: &Target) -> bool {
    match target.pipe {
        Some(ino) => identity::holds_pipe(pid, ino),
        None => target
            .log
            .is_some_and(|m| identity::holds_log_mark(pid, m.dev, m.ino, m.offset)),
    }
}

fn descends_from(p: &ProcInfo, ancestor: i32, table: &HashMap<i32, ProcInfo>) -> bool {
    let mut cur = p.ppid;
    for _ in 0..256 {
        if cur == ancestor {
            return true;
        }
        match table.get(&cur) {
            Some(parent) if parent.ppid != cur => cur = parent.ppid,
            _ => return false,
        }
    }
    false
}

/// Still the same process and not yet dead.
pub fn alive(p: &ProcInfo) -> bool {
    matches!(identity::proc_info(p.pid), Some(now) if now.start == p.start && !now.zombie)
}

fn may_signal(pid: i32) -> bool {
    pid > 1 && pid != std::process::id() as i32
}

fn may_signal_group(pgid: i32) -> bool {
    pgid > 1 && pgid != unsafe { libc::getpgrp() } && pgid != std::process::id() as i32
}

/// `killpg` after the guards. The caller has verified the leader.
pub fn signal_group(pgid: i32, sig: i32) -> bool {
    may_signal_group(pgid) && unsafe { libc::killpg(pgid, sig) } == 0
}

/// Signals one process if it is still the one described by `p`.
pub fn signal_process(p: &ProcInfo, sig: i32) -> bool {
    if !may_signal(p.pid) {
        return false;
    }
    if let Some(fd) = PidFd::open(p.pid) {
        return alive(p) && fd.signal(sig).is_ok();
    }
    alive(p) && unsafe { libc::kill(p.pid, sig) } == 0
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn guards_refuse_init_ourselves_and_our_group() {
        assert!(!may_signal(0) && !may_signal(1) && !may_signal(-5));
        assert!(!may_signal(std::process::id() as i32));
        assert!(!may_signal_group(0) && !may_signal_group(1));
        assert!(!may_signal_group(unsafe { libc::getpgrp() }));
        assert!(!signal_group(unsafe { libc::getpgrp() }, 0));
    }

    #[test]
    fn a_stranger_started_before_the_job_is_never_a_member() {
        // Our own test process shares nothing with a made-up job but is the
        // parent of everything we start; it must not be swept.
        let me = identity::proc_info(std::process::id() as i32).unwrap();
        let t = Target {
            pid: me.pid,
            pgid: me.pgid,
            start: me.start,
            marker: b"PI_UTILS_JOB=none".to_vec(),
            cgroup: None,
            log: None,
            pipe: None,
        };
        assert!(processes_of(&t, true).iter().all(|p| p.pid != me.pid));
    }
}
