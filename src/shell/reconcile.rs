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
                Verdict::Alive(_) => fd,
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
