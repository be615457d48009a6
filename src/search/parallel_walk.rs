//! The unordered parallel walk (glob, whole-tree file and count listings),
//! in both modes (see `sorted_walk`): the same listing and filters as
//! `sorted_walk`, on several threads, each directory's rule chain handed to
//! the thread that lists it. `ignore::WalkParallel` did the same walk with
//! our classifier behind a shared, locked map of every directory's chain,
//! hashed by `Path` (which parses components) once per entry.

use super::cancel::CancelToken;
use super::classify::RuleChain;
use super::dir_open::{DirStat, MtimeSize};
use super::sorted_walk::list;
use super::walk::{ErrorLog, IgnoredRoot, Walker};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// A directory to list, the rules in force in its parent (or, for a start,
/// in itself) and whether they still need its own added.
struct Work {
    dir: PathBuf,
    chain: Option<Arc<RuleChain>>,
    enter: bool,
}

struct Queue {
    state: Mutex<Pending>,
    more: Condvar,
}

struct Pending {
    /// Directories to list.
    dirs: Vec<Work>,
    /// How many threads are listing one.
    listing: usize,
    /// How many threads wait for one. A finished listing wakes them only
    /// when there are some: `notify_all` is a `futex` call even with nobody
    /// waiting (11.5k directories on the Linux tree).
    waiting: usize,
}

/// A walk's starting point: a directory with the rules in force in it
/// (none when entries are not classified), or a file to visit as it is.
pub enum Start {
    Dir(PathBuf, Option<Arc<RuleChain>>),
    File(PathBuf),
}

impl Start {
    /// An ignored root, walked without classifying what lies below it.
    pub fn of(root: &IgnoredRoot) -> Start {
        match root.is_dir {
            true => Start::Dir(root.path.clone(), None),
            false => Start::File(root.path.clone()),
        }
    }
}

/// Walks from `starts` on `threads` threads. `make_visitor` is called once
/// per thread; a visitor sees every regular file and every directory below
/// a start, and returns false to stop the whole walk. Entries the rules
/// exclude go to `ignored` (unsorted).
pub(super) fn walk<F, V>(
    walker: &Walker,
    starts: Vec<Start>,
    threads: usize,
    ignored: &Mutex<Vec<IgnoredRoot>>,
    cancel: &CancelToken,
    errors: &Mutex<ErrorLog>,
    make_visitor: F,
) where
    F: Fn() -> V + Sync,
    V: FnMut(&WalkEntry<'_>) -> bool + Send,
{
    let quit = AtomicBool::new(false);
    let mut dirs = Vec::new();
    {
        let mut visit = make_visitor();
        for s in starts {
            match s {
                Start::Dir(dir, chain) => dirs.push(Work {
                    dir,
                    chain,
                    enter: false,
                }),
                Start::File(path) => {
                    if !visit(&WalkEntry::new(&path, false)) {
                        return;
                    }
                }
            }
        }
    }
    let queue = Queue {
        state: Mutex::new(Pending {
            dirs,
            listing: 0,
            waiting: 0,
        }),
        more: Condvar::new(),
    };
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            let (queue, quit, make_visitor) = (&queue, &quit, &make_visitor);
            scope.spawn(move || {
                let mut visit = make_visitor();
                let mut log = ErrorLog::default();
                while let Some(work) = next(queue, quit) {
                    let found = list_one(walker, work, &mut visit, ignored, cancel, &mut log);
                    let mut st = queue.state.lock().unwrap_or_else(|e| e.into_inner());
                    st.listing -= 1;
                    match found {
                        Some(subdirs) => st.dirs.extend(subdirs),
                        None => quit.store(true, Ordering::Relaxed),
                    }
                    let someone_waits = st.waiting > 0;
                    drop(st);
                    // Wakes waiters for the new work, or to let them see
                    // that the walk is over.
                    if someone_waits {
                        queue.more.notify_all();
                    }
                }
                errors.lock().unwrap_or_else(|e| e.into_inner()).merge(log);
            });
        }
    });
}

/// The next directory to list, or `None` when the walk is over.
fn next(queue: &Queue, quit: &AtomicBool) -> Option<Work> {
    let mut st = queue.state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if quit.load(Ordering::Relaxed) {
            return None;
        }
        if let Some(w) = st.dirs.pop() {
            st.listing += 1;
            return Some(w);
        }
        if st.listing == 0 {
            return None;
        }
        st.waiting += 1;
        st = queue.more.wait(st).unwrap_or_else(|e| e.into_inner());
        st.waiting -= 1;
    }
}

/// Lists one directory and visits its entries; returns its subdirectories
/// to list, or `None` to stop the walk.
fn list_one(
    walker: &Walker,
    work: Work,
    visit: &mut impl FnMut(&WalkEntry<'_>) -> bool,
    ignored: &Mutex<Vec<IgnoredRoot>>,
    cancel: &CancelToken,
    errors: &mut ErrorLog,
) -> Option<Vec<Work>> {
    if cancel.is_stopped() {
        return None;
    }
    let Some(mut listing) = list(walker, &work.dir, false, errors) else {
        return Some(Vec::new());
    };
    let chain = match work.chain {
        Some(parent) if work.enter => Some(parent.enter(&work.dir, &listing.present)),
        other => other,
    };
    listing.rescue(walker, chain.as_deref());
    let mut subdirs = Vec::new();
    let dir = DirStat::new(&work.dir);
    for entry in listing.entries {
        if let Some(chain) = &chain {
            if walker.excludes(chain, &entry.path, entry.is_dir) {
                ignored
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(IgnoredRoot {
                        path: entry.path,
                        is_dir: entry.is_dir,
                    });
                continue;
            }
        }
        let seen = WalkEntry {
            path: &entry.path,
            is_dir: entry.is_dir,
            dir: Some((&dir, &entry.name)),
        };
        if !visit(&seen) {
            return None;
        }
        if entry.is_dir {
            subdirs.push(Work {
                dir: entry.path,
                chain: chain.clone(),
                enter: true,
            });
        }
    }
    if cancel.is_stopped() {
        return None;
    }
    Some(subdirs)
}

/// An entry a parallel walk hands its visitors: a regular file or a
/// directory (never a symlink, which is not followed, nor a special file).
pub struct WalkEntry<'a> {
    path: &'a Path,
    is_dir: bool,
    /// The directory being listed and the entry's name in it, when known.
    dir: Option<(&'a DirStat<'a>, &'a OsStr)>,
}

impl<'a> WalkEntry<'a> {
    pub(super) fn new(path: &'a Path, is_dir: bool) -> Self {
        WalkEntry {
            path,
            is_dir,
            dir: None,
        }
    }

    pub fn path(&self) -> &'a Path {
        self.path
    }

    pub fn is_dir(&self) -> bool {
        self.is_dir
    }

    pub fn is_file(&self) -> bool {
        !self.is_dir
    }

    /// The entry's own `lstat`: everything the index's file table stamps a
    /// file with, taken while its directory is being listed (by name in
    /// it, on the walk's threads) rather than by path afterwards.
    #[cfg(unix)]
    pub fn lstat(&self) -> Option<libc::stat> {
        match self.dir {
            Some((dir, name)) => dir.lstat(name),
            None => super::dir_open::lstat_path(self.path),
        }
    }

    /// The entry's own mtime and size (a symlink's, not its target's);
    /// `None` when it cannot be read.
    pub fn mtime_size(&self) -> Option<MtimeSize> {
        match self.dir {
            Some((dir, name)) => dir.mtime_size(name).ok(),
            None => std::fs::symlink_metadata(self.path)
                .ok()
                .map(|m| MtimeSize::from(&m)),
        }
    }
}
