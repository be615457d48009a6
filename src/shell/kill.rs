//! Killing a job: everything it started, and nothing else.
//!
//! The sequence: re-verify the leader, SIGTERM (and SIGCONT, for stopped
//! jobs) to its process group and to its processes outside the group, wait
//! up to the grace for all of them to go, re-scan, SIGKILL what is left,
//! and report what survived. A job that has ended with nothing left behind
//! is not touched; a `lost` one is never signalled.
//!
//! Which processes are the job's, and the guarded signals, are in
//! `members.rs`.

use super::identity::{self, Verdict};
use super::job::{JobState, JobView};
use super::liveness::LiveJob;
use super::members::{
    alive, processes_of, signal_group, signal_process, target_of, with_tracked, Target,
};
use super::reconcile;
use super::ShellError;
use std::time::{Duration, Instant};

/// How long to wait for the tree to vanish after SIGKILL before reporting survivors.
const AFTER_KILL: Duration = Duration::from_secs(2);
const KILL_POLL: Duration = Duration::from_millis(10);
/// See [`term_again`].
const YOUNG_MS: u64 = 1000;
const RETERM_AFTER: Duration = Duration::from_millis(50);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillOutcome {
    /// Signals were sent; see `survivors` for what is left.
    Killed,
    /// Nothing of the job was running: nothing was signalled.
    AlreadyEnded,
    /// The job is `lost` (its pid may name a stranger): nothing was signalled.
    Refused,
}

#[derive(Debug, Clone)]
pub struct KillReport {
    pub outcome: KillOutcome,
    pub sent_term: bool,
    pub sent_kill: bool,
    /// Processes outside the job's group that were signalled one by one.
    pub escapees: Vec<i32>,
    /// Still alive after SIGKILL and the wait that follows it.
    pub survivors: Vec<i32>,
    pub job: JobView,
}

/// The registry as a kill sees it: one job at a time, under the
/// registry's lock, brought up to date before and saved after
/// (`Registry::with_job`); a kill never holds the lock between signals.
pub(super) trait Jobs {
    fn with_job<R>(&self, id: &str, f: impl FnOnce(&mut LiveJob) -> R) -> Result<R, ShellError>;
    /// Whether job `id` still counts as running, after a fresh check.
    fn is_running(&self, id: &str) -> bool;
    fn get(&self, id: &str) -> Option<JobView>;
}

/// The whole kill of job `id` (see `Registry::kill`); `timed_out` marks
/// a kill the job's own timeout asked for.
pub(super) fn kill(
    reg: &impl Jobs,
    id: &str,
    grace: Duration,
    timed_out: bool,
) -> Result<KillReport, ShellError> {
    let mut report = KillReport {
        outcome: KillOutcome::Killed,
        sent_term: false,
        sent_kill: false,
        escapees: Vec::new(),
        survivors: Vec::new(),
        job: reg
            .get(id)
            .ok_or_else(|| ShellError::UnknownJob(id.to_string()))?,
    };
    let first = reg.with_job(id, |job| {
        let leader = leader_check(job);
        let stop = match leader {
            Leader::Stranger | Leader::Lost => Some(KillOutcome::Refused),
            Leader::Alive | Leader::Gone => None,
        };
        let leader_alive = matches!(leader, Leader::Alive);
        let target = target_of(&job.rec);
        let members = match stop {
            Some(_) => Vec::new(),
            None => with_tracked(processes_of(&target, leader_alive), &job.rec),
        };
        let stop =
            stop.or((!leader_alive && members.is_empty()).then_some(KillOutcome::AlreadyEnded));
        if let Some(outcome) = stop {
            return Err(outcome);
        }
        job.rec.kill_requested = true;
        job.rec.timed_out |= timed_out;
        job.sent_signal = Some(libc::SIGTERM);
        let mut escapees = Vec::new();
        send(
            &target,
            leader_alive,
            &members,
            libc::SIGTERM,
            &mut escapees,
        );
        let young = super::now_ms().saturating_sub(job.rec.started_at_ms) < YOUNG_MS;
        Ok((target, members, escapees, young && leader_alive))
    })?;
    let (target, mut members) = match first {
        Err(outcome) => {
            report.outcome = outcome;
            report.job = reg
                .get(id)
                .ok_or_else(|| ShellError::UnknownJob(id.to_string()))?;
            return Ok(report);
        }
        Ok((target, members, escapees, young)) => {
            report.sent_term = true;
            report.escapees = escapees;
            if young {
                term_again(reg, id, &target);
            }
            (target, members)
        }
    };

    let until = Instant::now()
        .checked_add(grace)
        .unwrap_or_else(|| Instant::now() + Duration::from_secs(1 << 32));
    while !all_gone(reg, id, &members) && Instant::now() < until {
        std::thread::sleep(KILL_POLL);
    }

    if !all_gone(reg, id, &members) {
        reg.with_job(id, |job| {
            let leader_alive = matches!(leader_check(job), Leader::Alive);
            // Members found earlier stay ours while their identity holds;
            // the rescan adds what was started during the grace.
            members.retain(alive);
            for m in with_tracked(processes_of(&target, leader_alive), &job.rec) {
                if !members.iter().any(|k| k.pid == m.pid) {
                    members.push(m);
                }
            }
            job.sent_signal = Some(libc::SIGKILL);
            send(
                &target,
                leader_alive,
                &members,
                libc::SIGKILL,
                &mut report.escapees,
            );
            // Also what was forked since the rescan, in one write.
            if let Some(cg) = &target.cgroup {
                cg.kill_all();
            }
        })?;
        report.sent_kill = true;
    }

    let until = Instant::now() + AFTER_KILL;
    while !all_gone(reg, id, &members) && Instant::now() < until {
        std::thread::sleep(KILL_POLL);
    }
    report.escapees.sort_unstable();
    report.escapees.dedup();
    report.job = reg
        .get(id)
        .ok_or_else(|| ShellError::UnknownJob(id.to_string()))?;
    if report.job.record.is_running() {
        report.survivors.push(target.pid);
    }
    report
        .survivors
        .extend(members.iter().filter(|m| alive(m)).map(|m| m.pid));
    Ok(report)
}

/// The wrapper traps SIGTERM so it can record the exit status. A child
/// it forks carries that trap until it execs, and a SIGTERM landing in
/// that instant is swallowed; a job killed in its first moments may hit
/// exactly that window. So a young job's processes other than the
/// wrapper get one more SIGTERM shortly after the first.
fn term_again(reg: &impl Jobs, id: &str, target: &Target) {
    std::thread::sleep(RETERM_AFTER);
    let _ = reg.with_job(id, |job| {
        if !(job.child && job.rec.is_running()) {
            return;
        }
        for m in processes_of(target, true) {
            if m.pgid == target.pgid {
                signal_process(&m, libc::SIGTERM);
            }
        }
    });
}

fn all_gone(reg: &impl Jobs, id: &str, members: &[identity::ProcInfo]) -> bool {
    !reg.is_running(id) && !members.iter().any(alive)
}

enum Leader {
    Alive,
    Gone,
    /// Already `lost`: never signal.
    Lost,
    /// The recorded identity no longer matches (now marked `lost`): never signal.
    Stranger,
}

/// Re-verifies the leader right before signalling (the registry has just
/// refreshed the job). Our unreaped child is pinned, but its recorded start
/// time is still compared: a record that does not match the process is not
/// trusted with a signal.
fn leader_check(job: &mut LiveJob) -> Leader {
    if job.rec.state == JobState::Lost {
        Leader::Lost
    } else if !job.rec.is_running() || job.rec.leader_ended() {
        Leader::Gone
    } else {
        match reconcile::verify(&job.rec) {
            // Not our child: the record may be forged. Only a process that
            // carries the job's marker is signalled.
            Verdict::Alive(_) if !job.child && !reconcile::proven(&job.rec) => {
                reconcile::disown(&mut job.rec);
                job.pidfd = None;
                Leader::Stranger
            }
            Verdict::Alive(_) => Leader::Alive,
            Verdict::Unverifiable if job.child => Leader::Alive,
            Verdict::Ended => Leader::Gone,
            other => {
                reconcile::settle(&mut job.rec, other);
                job.pidfd = None;
                Leader::Stranger
            }
        }
    }
}

fn send(
    target: &Target,
    leader_alive: bool,
    members: &[identity::ProcInfo],
    sig: i32,
    escapees: &mut Vec<i32>,
) {
    if leader_alive {
        signal_group(target.pgid, sig);
        if sig != libc::SIGKILL {
            // A stopped job would sit on its SIGTERM until continued.
            signal_group(target.pgid, libc::SIGCONT);
        }
    }
    for m in members {
        if leader_alive && m.pgid == target.pgid {
            continue;
        }
        if signal_process(m, sig) {
            if sig != libc::SIGKILL {
                signal_process(m, libc::SIGCONT);
            }
            escapees.push(m.pid);
        }
    }
}

/// Whether descendants that left the job's group can still be found once
/// the job's main process has ended. That needs each process's environment
/// (the marker), which only Linux exposes; elsewhere such a process may
/// survive a kill, and the kill report says so instead of claiming a sweep.
pub const FINDS_ORPHANED_ESCAPEES: bool = cfg!(target_os = "linux");
