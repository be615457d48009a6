//! The file buffers of every search in the process: a fixed number, leased
//! for one file at a time.
//!
//! Pi runs a turn's tool calls in parallel, and each search has its own
//! searcher threads, each of which used to keep a buffer as large as the
//! largest file it had read whole (up to 8 MiB): twelve concurrent
//! whole-tree greps held 36 of them, 335-420 MB of RSS, and ran 36 threads
//! on two cores. A searcher now leases a buffer for each file and gives it
//! back after, so at most this many files are read at once process-wide,
//! memory is bounded by the pool and the threads beyond it wait instead of
//! competing for the cores.

use std::ops::{Deref, DerefMut};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

struct Pool {
    free: Mutex<Shelf>,
    returned: Condvar,
}

/// The buffers on the shelf, and how many searchers wait for one. A return
/// wakes a waiter only when there is one: `notify_one` is a `futex` call
/// even with nobody waiting, and buffers go back once per file (86k calls
/// on the Linux tree, about a tenth of a scan's time).
struct Shelf {
    buffers: Vec<Vec<u8>>,
    waiting: usize,
}

/// Files up to this size are read whole into a reused buffer (one read, and
/// the buffer can serve structure extraction); larger ones are streamed
/// (see `file_search`).
pub(super) const WHOLE_READ_LIMIT: u64 = 8 << 20;

/// A file's size up to which it is read whole, plus the one byte that
/// shows EOF.
const RESERVED: usize = (WHOLE_READ_LIMIT as usize) + 1;

/// How often a waiting searcher looks at its stop flag.
const STOP_POLL: Duration = Duration::from_millis(20);

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        free: Mutex::new(Shelf {
            buffers: vec![Vec::new(); super::walk::default_threads()],
            waiting: 0,
        }),
        returned: Condvar::new(),
    })
}

/// A buffer on loan; it goes back to the pool when dropped.
pub(super) struct Lease {
    buf: Vec<u8>,
}

impl Deref for Lease {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        &self.buf
    }
}

impl DerefMut for Lease {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let p = pool();
        let mut shelf = p.free.lock().unwrap_or_else(|e| e.into_inner());
        shelf.buffers.push(std::mem::take(&mut self.buf));
        let someone_waits = shelf.waiting > 0;
        drop(shelf);
        if someone_waits {
            p.returned.notify_one();
        }
    }
}

/// Waits for a free buffer; `None` once `stop` says the caller's search is
/// over (a cancelled search never waits on the others).
pub(super) fn lease(stop: &dyn Fn() -> bool) -> Option<Lease> {
    let p = pool();
    let mut free = p.free.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if let Some(mut buf) = free.buffers.pop() {
            if buf.capacity() == 0 {
                // Reserved once at the largest size a file is read whole:
                // growing by reallocation would leave the old blocks in
                // whichever thread's malloc arena grew it, and with dozens
                // of short-lived search threads those holes add up to more
                // than the buffers themselves. Untouched pages cost no RSS.
                buf.reserve_exact(RESERVED);
            }
            return Some(Lease { buf });
        }
        if stop() {
            return None;
        }
        free.waiting += 1;
        free = p
            .returned
            .wait_timeout(free, STOP_POLL)
            .unwrap_or_else(|e| e.into_inner())
            .0;
        free.waiting -= 1;
    }
}
