//! A job as this process watches it, and how it is brought up to date: the
//! record plus the handles that prove its processes (pidfds, our unreaped
//! child), reaping by pid, the identity check of an adopted leader, and the
//! processes tracked once the main one has ended. The registry calls these
//! under its lock; nothing here touches the sidecar.
//!
//! Reaping is by pid only (`waitpid(pid, WNOHANG)`), never wait-for-any:
//! Node reaps its own children by pid too, and a global reaper would steal
//! their statuses. While our child is unreaped its pid cannot be reused, so
//! the group may be signalled without a race.

use super::brake::Brake;
use super::cgroup::JobCgroup;
use super::identity::{self, ProcInfo, Verdict};
use super::job::{self, EndEvidence, JobRecord, JobView, Member};
use super::log_bound::LogWatch;
use super::members::{self, member_info};
use super::pidfd::PidFd;
use super::reconcile;
use std::path::Path;
use std::sync::Arc;

/// See `refresh_members`.
const RECHECK_COMMANDS_MS: u64 = 2000;

/// A job as the registry holds it: its record and what proves and watches
/// its processes.
pub(super) struct LiveJob {
    pub(super) rec: JobRecord,
    /// Started by this process (as opposed to adopted from a sidecar).
    pub(super) ours: bool,
    /// Our child, not yet reaped: its pid cannot be reused.
    pub(super) child: bool,
    pub(super) pidfd: Option<Arc<PidFd>>,
    /// One per tracked process that outlived the main one, where pidfds exist.
    pub(super) member_fds: Vec<Arc<PidFd>>,
    pub(super) sent_signal: Option<i32>,
    /// What the log bound's policy saw of the job's log.
    pub(super) log: LogWatch,
    /// The record as last serialized, so a save re-serializes only what changed.
    pub(super) line: Option<(JobRecord, String)>,
    /// Stops the job before its log reaches the bound; ours, while our child.
    pub(super) brake: Option<Arc<Brake>>,
}

impl LiveJob {
    /// A job this process has just started: ours, our unreaped child.
    /// `on_brake`: called when its brake stopped it (see `brake.rs`).
    pub(super) fn started(rec: JobRecord, on_brake: fn()) -> LiveJob {
        LiveJob {
            pidfd: PidFd::open(rec.pid).map(Arc::new),
            // A pump holds the log under its bound itself.
            brake: (!rec.pump)
                .then(|| {
                    Brake::arm(
                        rec.pid,
                        Path::new(&rec.log_path),
                        rec.max_log_bytes,
                        on_brake,
                    )
                })
                .flatten(),
            log: LogWatch::started(&rec),
            rec,
            ours: true,
            child: true,
            member_fds: Vec::new(),
            sent_signal: None,
            line: None,
        }
    }

    /// What callers are told about the job now.
    pub(super) fn view(&self) -> JobView {
        let end = self.rec.ended_at_ms.unwrap_or_else(super::now_ms);
        JobView {
            log_bytes: std::fs::metadata(&self.rec.log_path)
                .map(|m| m.len())
                .unwrap_or(0),
            adopted: !self.ours,
            runtime_ms: end.saturating_sub(self.rec.started_at_ms),
            flooding: self.rec.is_running() && self.log.flood_reported(),
            record: self.rec.clone(),
        }
    }

    /// Stops (`SIGSTOP`) or resumes (`SIGCONT`) what writes a flooding job's
    /// log, for the length of one cut. Only what cannot be a stranger: the
    /// group of our own unreaped child (its pid, and so its group id, cannot be
    /// reused while it is unreaped), and tracked processes through their pidfd
    /// after an identity check. True if anything was signalled.
    pub(super) fn hold(&self, sig: i32) -> bool {
        let mut any = false;
        if self.child && !self.rec.leader_ended() {
            any |= members::signal_group(self.rec.pgid, sig);
        }
        for p in self.rec.members.iter().filter_map(member_info) {
            any |= members::signal_process(&p, sig);
        }
        any
    }
}

/// A job from a record another process wrote (an earlier Pi, or one that
/// shares the sidecar): reconciled, then watched by identity. One whose main
/// process had already ended is settled by its tracked processes, not by
/// the leader's (reusable) pid.
pub(super) fn adopt(mut rec: JobRecord) -> LiveJob {
    let pidfd = if rec.leader_ended() {
        None
    } else {
        reconcile::reconcile(&mut rec).map(Arc::new)
    };
    members::settle_adopted(&mut rec);
    let mut job = LiveJob {
        log: LogWatch::adopted(&rec),
        rec,
        ours: false,
        child: false,
        pidfd,
        member_fds: Vec::new(),
        sent_signal: None,
        line: None,
        brake: None,
    };
    if job.rec.is_running() && job.rec.leader_ended() {
        refresh_members(&mut job, true);
    }
    release_cgroup(&mut job.rec);
    job
}

/// Brings one job's state up to date; true if it just left `running`.
pub(super) fn refresh(job: &mut LiveJob) -> bool {
    let ended = refresh_state(job);
    release_cgroup(&mut job.rec);
    if ended {
        // The log pump's last cuts, made before its drain let the job end,
        // belong in the ended job's report.
        job.log.absorb(&mut job.rec);
    }
    ended
}

/// Removes an ended job's cgroup. The kernel refuses while anything is in
/// it (a `lost` job's processes), so every later look tries again.
fn release_cgroup(rec: &mut JobRecord) {
    let Some(dir) = rec.cgroup.as_deref().filter(|_| !rec.is_running()) else {
        return;
    };
    if JobCgroup::open(Path::new(dir)).is_none_or(|cg| cg.remove()) {
        rec.cgroup = None;
    }
}

fn refresh_state(job: &mut LiveJob) -> bool {
    if job.rec.is_running() && job.rec.leader_ended() {
        return refresh_members(job, false);
    }
    let mut unreaped = false;
    if job.child {
        // While the exited leader is an unreaped zombie its pid, group and
        // session cannot be reused, so whatever is still in them is the
        // job's: look before reaping.
        // Reaped only once seen exited and looked at: a leader that exited
        // between the look and the reap was reaped with nothing pinned, and
        // a double fork's processes (still in its group) were missed.
        let leader = leader_wait_state(job.rec.pid);
        let pinned = (leader == LeaderWait::ExitedUnreaped)
            .then(|| members::processes_of(&members::target_of(&job.rec), true));
        let (r, status) = match (&job.brake, leader) {
            (_, LeaderWait::Running) => (0, 0),
            (Some(b), _) => b.reap(job.rec.pid),
            (None, _) => {
                let mut status = 0;
                let r = unsafe { libc::waitpid(job.rec.pid, &mut status, libc::WNOHANG) };
                (r, status)
            }
        };
        if r == job.rec.pid {
            job.child = false;
            job.brake = None;
            if job.rec.is_running() {
                return leader_end(job, Some(status), pinned);
            }
            return false;
        } else if r == 0 {
            unreaped = true;
        } else if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            return false;
        } else {
            // ECHILD: someone reaped it behind our back; fall back to identity.
            job.child = false;
            job.brake = None;
        }
    }
    if !job.rec.is_running() {
        return false;
    }
    match reconcile::verify(&job.rec) {
        Verdict::Alive(_) => false,
        // It exited a moment ago; the next waitpid collects its status.
        Verdict::Ended | Verdict::Unverifiable if unreaped => false,
        Verdict::Ended => leader_end(job, None, None),
        other => {
            reconcile::settle(&mut job.rec, other);
            job.pidfd = None;
            true
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LeaderWait {
    Running,
    ExitedUnreaped,
    /// Not our child any more (reaped elsewhere), or waitid failed.
    Unknown,
}

/// Where our child `pid` stands, without reaping it (`WNOWAIT`).
fn leader_wait_state(pid: i32) -> LeaderWait {
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
    let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) };
    match (r, siginfo_pid(&info)) {
        (0, 0) => LeaderWait::Running,
        (0, p) if p == pid => LeaderWait::ExitedUnreaped,
        _ => LeaderWait::Unknown,
    }
}

#[cfg(target_os = "linux")]
fn siginfo_pid(info: &libc::siginfo_t) -> i32 {
    unsafe { info.si_pid() }
}

#[cfg(not(target_os = "linux"))]
fn siginfo_pid(info: &libc::siginfo_t) -> i32 {
    info.si_pid
}

fn sent_signal(job: &LiveJob) -> Option<i32> {
    job.sent_signal
        .or(job.rec.kill_requested.then_some(libc::SIGTERM))
}

/// The main process ended. `pinned`: what its group, session and marker
/// held while it was still an unreaped zombie; otherwise only the marker
/// can find the job's processes. True if nothing is left (the job ended).
fn leader_end(job: &mut LiveJob, wait_status: Option<i32>, pinned: Option<Vec<ProcInfo>>) -> bool {
    let evidence = EndEvidence {
        wait_status,
        sent_signal: sent_signal(job),
    };
    let alone = job::leader_finish(&mut job.rec, evidence);
    job.pidfd = None;
    let found = match pinned {
        Some(found) => found,
        None => members::processes_of(&members::target_of(&job.rec), false),
    };
    let found: Vec<ProcInfo> = found.into_iter().filter(members::alive).collect();
    if found.is_empty() {
        job.rec = alone;
        return true;
    }
    track(job, found);
    false
}

/// Remembers `found` as the job's processes (with a pidfd each, opened and
/// then re-checked, so it names the process that was checked).
fn track(job: &mut LiveJob, found: Vec<ProcInfo>) {
    job.member_fds.clear();
    job.rec.members = found
        .iter()
        .map(|p| Member {
            pid: p.pid,
            start: p.start,
            command: identity::command_line(p.pid).unwrap_or_default(),
        })
        .collect();
    for p in &found {
        if let Some(fd) = PidFd::open(p.pid) {
            if members::alive(p) {
                job.member_fds.push(Arc::new(fd));
            }
        }
    }
}

/// A job whose main process ended: drops tracked processes that are gone
/// (by identity: a reused pid is not ours); when none is left, one more
/// scan for the marker finds what they started, else the job ends. `loaded`:
/// the record comes from a sidecar, so its processes need a fresh pidfd.
fn refresh_members(job: &mut LiveJob, loaded: bool) -> bool {
    let same_boot = match (&job.rec.boot_id, identity::boot_id()) {
        (Some(recorded), Some(now)) => recorded == now,
        _ => true,
    };
    job.rec
        .members
        .retain(|m| same_boot && member_info(m).is_some());
    job.member_fds.retain(|fd| !fd.exited());
    // A process found the moment it was forked still shows its parent's
    // command line until it execs: read them again for a little while.
    if super::now_ms().saturating_sub(job.rec.leader_ended_at_ms.unwrap_or(0)) < RECHECK_COMMANDS_MS
    {
        for m in job.rec.members.iter_mut() {
            if let Some(c) = identity::command_line(m.pid) {
                m.command = c;
            }
        }
    }
    if !job.rec.members.is_empty() {
        if loaded {
            let found = job.rec.members.iter().filter_map(member_info).collect();
            track(job, found);
        }
        return false;
    }
    if same_boot {
        let found = members::processes_of(&members::target_of(&job.rec), false);
        if !found.is_empty() {
            track(job, found);
            return false;
        }
    }
    let sent = sent_signal(job);
    job::finish_after_members(&mut job.rec, sent);
    job.member_fds.clear();
    true
}
