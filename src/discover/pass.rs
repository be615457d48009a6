//! The one pass both commands make over a directory's files. The files
//! come from the scope's source (a ready index's table, narrowed by a
//! pattern, or the walk); every walker thread keeps its own tally (a
//! bounded best-first heap and its counts) and hands it over when its part
//! of the visit ends, so no lock is taken per file; the few kept are then
//! worked on in parallel (read, outlined, a few ms each), and the result
//! is stamped with how the pass ended.

use super::files::Scope;
use crate::search::{CancelToken, ErrorLog, FileSource, IgnoredRoot, SourceFile};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The `keep` greatest items pushed: a min-heap, the worst kept on top.
pub(crate) struct TopK<T: Ord> {
    heap: BinaryHeap<Reverse<T>>,
    keep: usize,
}

impl<T: Ord> TopK<T> {
    pub fn new(keep: usize) -> Self {
        TopK {
            heap: BinaryHeap::new(),
            keep,
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether an item would be kept: there is room, or `beats` says it
    /// ranks at least as the worst kept (a cheap key, before the item is
    /// built).
    pub fn would_keep(&self, beats: impl FnOnce(&T) -> bool) -> bool {
        self.heap.len() < self.keep || self.heap.peek().is_some_and(|Reverse(worst)| beats(worst))
    }

    pub fn push(&mut self, item: T) {
        self.heap.push(Reverse(item));
        if self.heap.len() > self.keep {
            self.heap.pop();
        }
    }

    /// Another thread's items, pushed one by one: the order is total, so
    /// the union's best are those one shared heap would have kept.
    pub fn absorb(&mut self, other: TopK<T>) {
        for Reverse(item) in other.heap {
            self.push(item);
        }
    }

    /// The items kept, in no set order.
    pub fn into_vec(self) -> Vec<T> {
        self.heap.into_iter().map(|Reverse(item)| item).collect()
    }

    /// The items kept, the best first.
    pub fn into_sorted(self) -> Vec<T> {
        let mut items = self.into_vec();
        items.sort_by(|a, b| b.cmp(a));
        items
    }
}

/// What one thread found in its part of the visit, merged into the pass's
/// total when that part ends.
pub(crate) trait Tally: Send {
    fn merge(&mut self, other: Self);
}

/// One thread's tally, merged into the total when the thread's visitor is
/// dropped (the visit drops them before it returns).
struct Mine<'a, T: Tally> {
    tally: Option<T>,
    into: &'a Mutex<T>,
}

impl<T: Tally> Drop for Mine<'_, T> {
    fn drop(&mut self) {
        if let Some(tally) = self.tally.take() {
            lock(self.into).merge(tally);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the visit left: the merged tally, the ignored roots and whether
/// they were visited, and the walk's errors.
pub(crate) struct Visited<T> {
    pub tally: T,
    pub ignored_roots: Vec<IgnoredRoot>,
    pub ignored_visited: bool,
    pub errors: ErrorLog,
}

/// Visits every file of `source`: the project's, then the ignored ones
/// when `room_left` says the total leaves room for them. Each thread gets
/// a tally from `fresh` and a visitor from `make` (told whether it visits
/// ignored files), which scores one file into that tally.
pub(crate) fn visit<T, V>(
    scope: &Scope,
    source: &FileSource,
    cancel: &CancelToken,
    total: T,
    room_left: impl FnOnce(&T) -> bool,
    fresh: impl Fn() -> T + Sync,
    make: impl Fn(bool) -> V + Sync,
) -> Visited<T>
where
    T: Tally,
    V: FnMut(&mut T, &SourceFile<'_>) + Send,
{
    let total = Mutex::new(total);
    let errors = Mutex::new(ErrorLog::default());
    let (ignored_roots, ignored_visited) = source.visit_all(
        scope.threads(),
        cancel,
        &errors,
        || room_left(&lock(&total)),
        |ignored| {
            let mut mine = Mine {
                tally: Some(fresh()),
                into: &total,
            };
            let mut visit = make(ignored);
            move |file: &SourceFile<'_>| {
                if let Some(tally) = mine.tally.as_mut() {
                    visit(tally, file);
                }
                true
            }
        },
    );
    Visited {
        tally: total.into_inner().unwrap_or_else(|p| p.into_inner()),
        ignored_roots,
        ignored_visited,
        errors: errors.into_inner().unwrap_or_else(|p| p.into_inner()),
    }
}

/// Runs a worker (one per thread, made by `make`) over every item on a
/// few threads and returns what it gave, in no set order: the callers
/// read and parse the handful of files a result shows, a few ms each.
pub fn map_parallel<T: Sync, R: Send, W>(items: &[T], make: impl Fn() -> W + Sync) -> Vec<R>
where
    W: FnMut(usize, &T) -> Option<R>,
{
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::new());
    let threads = crate::search::default_threads()
        .min(4)
        .min(items.len())
        .max(1);
    let work = || {
        let mut worker = make();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            if let Some(r) = worker(i, item) {
                lock(&done).push(r);
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(work);
        }
        work();
    });
    done.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// How the pass ended: cancelled, timed out, and the milliseconds since
/// `started`.
pub(crate) fn ended(cancel: &CancelToken, started: Instant) -> (bool, bool, f64) {
    let (cancelled, timed_out) = cancel.flags();
    (
        cancelled,
        timed_out,
        started.elapsed().as_secs_f64() * 1000.0,
    )
}
