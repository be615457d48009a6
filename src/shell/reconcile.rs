//! What a record written by an earlier process (a Pi restart, `/resume`, a
//! crash) means now. A job still running under the same identity is
//! adopted: it is not our child, so its status and waits work by watching
//! its identity (through a pidfd where the kernel has them). One that ended
//! meanwhile is read from its exit file. One whose pid now names another
//! process, or that predates a reboot, is `lost` and will never be signalled.

use super::identity::{self, Verdict};
use super::job::{self, EndEvidence, JobRecord};
use super::pidfd::PidFd;

/// Settles one loaded record. Returns a pidfd for an adopted running job
/// when the platform has them.
pub fn reconcile(rec: &mut JobRecord) -> Option<PidFd> {
    if !rec.is_running() {
        return None;
    }
    match verify(rec) {
        Verdict::Alive(_) => {
            // Open, then check again: the pidfd now pins one process, and
            // the second check proves it is the one we recorded.
            let fd = PidFd::open(rec.pid);
            match verify(rec) {
                Verdict::Alive(_) if proven(rec) => fd,
                Verdict::Alive(_) => {
                    disown(rec);
                    None
                }
                other => {
                    settle(rec, other);
                    None
                }
            }
        }
        other => {
            settle(rec, other);
            None
        }
    }
}

/// Whether pi-utils can prove it started the live process a record names:
/// its environment carries the record's marker (`PI_UTILS_JOB=<marker>`),
/// set by the spawn and inherited by nothing the registry did not start.
/// A start time proves only that the pid was not reused since the record
/// was written, and the record is input: a forged or damaged one may name
/// pid 1 or any process with its real start time. Where environments
/// cannot be read (not Linux) the start time is all there is.
pub fn proven(rec: &JobRecord) -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    let marker = format!("{}={}", super::spawn::MARKER_NAME, rec.marker);
    !rec.marker.is_empty() && identity::environ_contains(rec.pid, marker.as_bytes())
}

/// A running record whose live process pi-utils cannot prove it started:
/// `lost`, and never signalled.
pub fn disown(rec: &mut JobRecord) {
    job::mark_lost(
        rec,
        &format!(
            "pid {} is not a process pi-utils started for this job (its environment lacks the job's marker); it was not signalled",
            rec.pid
        ),
    );
}

pub fn verify(rec: &JobRecord) -> Verdict {
    identity::verify(rec.pid, rec.start_ticks, rec.boot_id.as_deref())
}

/// Applies a non-alive verdict to a running record.
pub fn settle(rec: &mut JobRecord, verdict: Verdict) {
    match verdict {
        Verdict::Alive(_) => {}
        Verdict::Ended => job::finish(
            rec,
            EndEvidence {
                wait_status: None,
                sent_signal: rec.kill_requested.then_some(libc::SIGTERM),
            },
        ),
        // The original is certainly gone; if it left an exit file we know
        // how it ended, otherwise we don't and say so.
        Verdict::Reused | Verdict::Rebooted if has_exit_file(rec) => {
            job::finish(rec, EndEvidence::default())
        }
        Verdict::Reused => job::mark_lost(
            rec,
            &format!(
                "pid {} now belongs to another process; it was not signalled",
                rec.pid
            ),
        ),
        Verdict::Rebooted => job::mark_lost(rec, "the machine rebooted since the job started"),
        Verdict::Unverifiable => job::mark_lost(
            rec,
            "its identity cannot be verified on this platform; it was not signalled",
        ),
    }
}

fn has_exit_file(rec: &JobRecord) -> bool {
    matches!(
        job::read_exit_file(std::path::Path::new(&rec.exit_path)),
        Some(Ok(_))
    )
}
