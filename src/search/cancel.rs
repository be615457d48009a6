//! Cooperative cancellation. Long loops poll a token instead of being killed,
//! so a search always returns what it found so far with the reason it stopped.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    Cancelled,
    TimedOut,
}

/// Shared between the caller (which may cancel) and workers (which poll).
/// The first reason recorded wins, so a timeout is never reported as a cancel.
#[derive(Clone, Debug)]
pub struct CancelToken {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    cancelled: AtomicBool,
    reason: AtomicU8,
    deadline: Option<Instant>,
}

const NONE: u8 = 0;
const CANCELLED: u8 = 1;
const TIMED_OUT: u8 = 2;

impl CancelToken {
    pub fn new(timeout: Option<Duration>) -> Self {
        CancelToken {
            inner: Arc::new(Inner {
                cancelled: AtomicBool::new(false),
                reason: AtomicU8::new(NONE),
                deadline: timeout.map(|t| Instant::now() + t),
            }),
        }
    }

    pub fn cancel(&self) {
        self.set(CANCELLED);
    }

    fn set(&self, reason: u8) {
        let _ =
            self.inner
                .reason
                .compare_exchange(NONE, reason, Ordering::AcqRel, Ordering::Acquire);
        self.inner.cancelled.store(true, Ordering::Release);
    }

    /// Cheap enough to call per file and per matched line.
    pub fn is_stopped(&self) -> bool {
        if self.inner.cancelled.load(Ordering::Acquire) {
            return true;
        }
        if let Some(deadline) = self.inner.deadline {
            if Instant::now() >= deadline {
                self.set(TIMED_OUT);
                return true;
            }
        }
        false
    }

    /// `(cancelled, timed_out)`, the two flags every summary reports.
    pub fn flags(&self) -> (bool, bool) {
        match self.reason() {
            Some(StopReason::Cancelled) => (true, false),
            Some(StopReason::TimedOut) => (false, true),
            None => (false, false),
        }
    }

    pub fn reason(&self) -> Option<StopReason> {
        match self.inner.reason.load(Ordering::Acquire) {
            CANCELLED => Some(StopReason::Cancelled),
            TIMED_OUT => Some(StopReason::TimedOut),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_is_reported_as_cancelled() {
        let t = CancelToken::new(None);
        assert!(!t.is_stopped());
        t.cancel();
        assert!(t.is_stopped());
        assert_eq!(t.reason(), Some(StopReason::Cancelled));
    }

    #[test]
    fn deadline_is_reported_as_timeout_and_wins_over_later_cancel() {
        let t = CancelToken::new(Some(Duration::from_millis(0)));
        assert!(t.is_stopped());
        t.cancel();
        assert_eq!(t.reason(), Some(StopReason::TimedOut));
    }
}
