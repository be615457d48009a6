//! The log bound's policy: when a running job's log is cut, how much a cut
//! keeps, whether the job is held (stopped) for it, and when a log counts
//! as a flood. The registry runs it under its lock from the monitor's
//! tick; the cut itself is [`log::trim`], the stop and resume
//! `LiveJob::hold` (liveness.rs), the stop before the bound the brake.
//!
//! A trim starts at [`log::cut_from`] (a quarter of the bound) and cuts the
//! log to about an eighth of it. A cut must first write back what it keeps
//! (10-40 ms): a job that floods is held (SIGSTOP) for the cut and keeps
//! only its newest [`FLOOD_KEEP`] bytes, so the hold is short. One that
//! outran the cuts was stopped by its brake; it goes on once its log is cut.

use super::job::JobRecord;
use super::log;
use super::pump;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A log growing faster than this between two checks is a flood: it is
/// checked every `monitor::FLOOD_CHECK` instead of every `monitor::LOG_CHECK`,
/// and held for its cuts.
const FLOOD_BYTES_PER_CHECK: u64 = 256 * 1024;
/// The newest output a cut keeps of a flooding job's log (besides its head):
/// the less a cut keeps, the less it writes back and the shorter the job is
/// held for it.
const FLOOD_KEEP: u64 = 1024 * 1024;
/// A log growing faster than this (bytes per second) for [`FLOOD_REPORT`]
/// is reported as a flood (`JobView::flooding`).
const FLOOD_RATE: u64 = 10 * 1000 * 1000;
const FLOOD_REPORT: Duration = Duration::from_secs(2);
/// The rate is judged over at least this long: a flooding log is checked
/// every 2 ms, and a writer that was not scheduled for one such check on a
/// busy machine (two cores, a test suite running) read as a stop, so the
/// 2 s of flooding never added up.
const RATE_WINDOW: Duration = Duration::from_millis(250);

/// What the policy saw of one job's log.
pub(super) struct LogWatch {
    /// Log size at the last check, and whether it grew fast since the one before.
    seen: u64,
    pub(super) flooding: bool,
    /// When the current window of [`RATE_WINDOW`] began, what the log grew
    /// in it so far, and since when it has grown faster than
    /// [`FLOOD_RATE`] in every window.
    checked: Instant,
    window_bytes: u64,
    flood_since: Option<Instant>,
    /// Stopped by `LiveJob::hold` for a cut of its log; resumed before the
    /// monitor lets go of the registry.
    pub(super) held: bool,
    /// Still to be looked at once more: the job runs, or ended since the last look.
    pub(super) open: bool,
    /// The record's `log_trim_at` and `log_shift`, for lock-free readers.
    pub(super) cuts: Arc<log::Cuts>,
    /// The pump's record of its cuts, when a log pump writes the log: then
    /// the policy here only copies that record (see [`LogWatch::absorb`]).
    pumped: Option<PathBuf>,
}

/// A cut the policy found due: from where, how much room it leaves, and
/// whether the job is to be held for it.
pub(super) struct Due {
    trigger: u64,
    slack: u64,
    pub(super) hold: bool,
}

impl LogWatch {
    /// The log of a job this process has just started, `log_start` bytes
    /// long before it: watched closely until its first look shows it is
    /// not flooding.
    pub(super) fn started(rec: &JobRecord) -> LogWatch {
        LogWatch {
            seen: rec.log_start,
            // A pumped log needs no close look: the pump bounds it.
            flooding: !rec.pump,
            open: true,
            // A new record names no cut yet: its cuts are read as an adopted one's.
            ..LogWatch::adopted(rec)
        }
    }

    /// The log of a job adopted from a record, with the cuts it names.
    pub(super) fn adopted(rec: &JobRecord) -> LogWatch {
        let pumped = rec
            .pump
            .then(|| pump::cuts_path_for(Path::new(&rec.log_path)));
        LogWatch {
            seen: 0,
            flooding: false,
            open: false,
            checked: Instant::now(),
            window_bytes: 0,
            flood_since: None,
            held: false,
            cuts: Arc::new(match &pumped {
                Some(file) => log::Cuts::of_pump(file.clone(), pump::offsets),
                None => log::Cuts::new(rec.log_trim_at, rec.log_shift),
            }),
            pumped,
        }
    }

    /// The pump's record as it is now, settled (`None`: no pump, or no
    /// record yet).
    pub(super) fn pump_record(&self) -> Option<pump::CutsRecord> {
        self.pumped.as_deref().and_then(pump::settled_record)
    }

    /// At most `max_bytes` of the log from `r`'s read cursor (which the
    /// caller moves). A log pump may cut the log at any moment: a read
    /// counts only if the pump's record was settled and the same before
    /// and after it, the cursor first moved past the cuts that record names.
    pub(super) fn read_new(
        &self,
        r: &mut JobRecord,
        max_bytes: u64,
        keep: log::Keep,
    ) -> log::LogChunk {
        let mut tries = 0;
        loop {
            tries += 1;
            let before = self.pump_record();
            if let Some(c) = before {
                apply(r, c);
            }
            let chunk = log::read_from(
                Path::new(&r.log_path),
                r.read_offset,
                max_bytes,
                keep,
                !r.is_running(),
            )
            .unwrap_or_default();
            // Past a few tries (a flood under a small bound is cut every
            // few ms) the read stands as it is.
            if tries >= 20 || before == self.pump_record() {
                return chunk;
            }
        }
    }

    /// Whether a log pump writes (and cuts) the log.
    pub(super) fn pumped(&self) -> bool {
        self.pumped.is_some()
    }

    /// Copies the pump's record of its cuts into `r` (moving the read
    /// cursor past a cut as [`LogWatch::cut`] does); true if it changed.
    /// `None` (no record, or no pump): nothing to copy.
    pub(super) fn absorb(&self, r: &mut JobRecord) -> bool {
        let Some(file) = &self.pumped else {
            return false;
        };
        pump::settled_record(file).is_some_and(|c| apply(r, c))
    }

    /// Whether the log has grown faster than [`FLOOD_RATE`] for [`FLOOD_REPORT`].
    pub(super) fn flood_reported(&self) -> bool {
        self.flood_since
            .is_some_and(|t| t.elapsed() >= FLOOD_REPORT)
    }

    /// Looks at the log's size (an ended job's log gets this one last
    /// look, then no more); the cut due now, if any.
    pub(super) fn due(&mut self, rec: &JobRecord) -> Option<Due> {
        self.open = rec.is_running();
        let size = std::fs::metadata(&rec.log_path)
            .map(|m| m.len())
            .unwrap_or(0);
        // What a pump cut away was written too: the rate counts it.
        let size = if self.pumped() {
            size + rec.log_shift
        } else {
            size
        };
        let grown = size.saturating_sub(self.seen);
        self.flooding = grown > FLOOD_BYTES_PER_CHECK && !self.pumped();
        self.window_bytes += grown;
        let window = self.checked.elapsed();
        if window >= RATE_WINDOW {
            if self.window_bytes as f64 / window.as_secs_f64() > FLOOD_RATE as f64 {
                self.flood_since.get_or_insert(self.checked);
            } else {
                self.flood_since = None;
            }
            self.checked = Instant::now();
            self.window_bytes = 0;
        }
        self.seen = size;
        if self.pumped() {
            return None;
        }
        let max = rec.max_log_bytes;
        // Never before a quarter of the bound, however fast it grows:
        // what keeps a flood under the bound is the brake.
        let trigger = log::cut_from(max);
        if size <= trigger {
            return None;
        }
        let flooding = self.flooding;
        Some(Due {
            trigger,
            slack: log::cut_slack(max, flooding.then_some(FLOOD_KEEP)),
            hold: flooding,
        })
    }

    /// Makes the cut `due` and books it in the record; true if it did.
    pub(super) fn cut(&mut self, r: &mut JobRecord, due: Due) -> bool {
        let path = Path::new(&r.log_path).to_path_buf();
        let max = r.max_log_bytes;
        let res = log::trim(
            &path,
            r.log_start,
            due.trigger,
            due.slack,
            r.log_dropped,
            r.log_marker,
            max,
        );
        let Ok(Some(t)) = res else {
            return false;
        };
        r.log_dropped += t.dropped;
        r.log_trim_at = Some(t.at);
        r.log_shift += t.shift;
        r.log_marker = log::marker_line(0, max).len() as u64;
        r.read_offset = moved_offset(r.read_offset, t);
        self.cuts.set(r.log_trim_at, r.log_shift);
        self.seen = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        true
    }
}

/// Takes a pump's record `c` into `r`; true if it told anything new. The
/// pump's cuts all start at one place, so the cuts since `r` was last
/// brought up to date move a read cursor as one cut would.
fn apply(r: &mut JobRecord, c: pump::CutsRecord) -> bool {
    if c.shift < r.log_shift || (c.shift, c.dropped) == (r.log_shift, r.log_dropped) {
        return false;
    }
    if let Some(at) = c.at {
        let t = log::Trim {
            at,
            shift: c.shift - r.log_shift,
            dropped: 0,
        };
        r.read_offset = moved_offset(r.read_offset, t);
    }
    r.log_trim_at = c.at;
    r.log_shift = c.shift;
    r.log_dropped = c.dropped;
    r.log_marker = c.marker;
    true
}

/// Where a byte offset into a log is after `t`: past the cut it moved back,
/// inside the cut it now points at the marker.
pub fn moved_offset(offset: u64, t: log::Trim) -> u64 {
    if offset <= t.at {
        offset
    } else if offset >= t.at + t.shift {
        offset - t.shift
    } else {
        t.at
    }
}
