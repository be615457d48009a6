//! One root's index over time: building, ready (kept fresh at the start of
//! each search), stale (rebuilding), or off.

use super::build::{build, lower_priority, Built, NotBuilt};
use super::planner;
use super::postings::Postings;
use super::table::{self, Entry, Table};
use super::watch::Watcher;
use super::{IndexConfig, IndexUse};
use crate::search::{CancelToken, FileList, GrepOptions, ListedFile, Walker};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime};

/// A ready picture of the tree.
struct Picture {
    table: Table,
    postings: Postings,
    watcher: Watcher,
    by_path: HashMap<PathBuf, usize>,
    built_at: SystemTime,
    /// Why it is not saved in the store (see [`IndexStatus::unsaved`]).
    unsaved: Option<String>,
    reread: Option<usize>,
    /// Files without a document when built (binary, too big, unreadable):
    /// not a reason to rebuild, since a rebuild would not index them.
    unindexable: usize,
    /// See `Built::dead`.
    dead: usize,
}

impl Picture {
    fn new(b: Built) -> Picture {
        let mut p = Picture {
            table: b.table,
            postings: b.postings,
            watcher: b.watcher,
            by_path: HashMap::new(),
            built_at: SystemTime::now(),
            unsaved: b.unsaved,
            reread: b.reread,
            unindexable: 0,
            dead: b.dead,
        };
        p.index_paths();
        p.unindexable = p.unindexed();
        p
    }

    fn index_paths(&mut self) {
        self.by_path = (self.table.entries.iter().enumerate())
            .map(|(i, e)| (e.path.clone(), i))
            .collect();
    }

    /// Files whose content is not in the postings (always candidates).
    fn unindexed(&self) -> usize {
        self.table
            .entries
            .iter()
            .filter(|e| e.doc.is_none())
            .count()
    }

    /// Applies every event queued so far. Err: the picture can no longer be
    /// trusted (overflow, a watch that could not be added).
    fn refresh(&mut self, root: &Path) -> Result<(), String> {
        if let Some(f) = self.watcher.failure() {
            return Err(f);
        }
        let changes = self.watcher.drain();
        if changes.overflow {
            return Err("the watcher's event queue overflowed".into());
        }
        let need_walk = changes.structural
            || (changes.dirty.iter()).any(|p| !self.by_path.contains_key(p.as_path()));
        if !need_walk {
            for p in &changes.dirty {
                if let Some(&i) = self.by_path.get(p.as_path()) {
                    self.table.entries[i].doc = None;
                }
            }
            return Ok(());
        }
        let dirty: HashSet<&Path> = changes.dirty.iter().map(PathBuf::as_path).collect();
        let mut fresh = table::walk(root, &self.watcher, &CancelToken::new(None), usize::MAX)?;
        if let Some(f) = self.watcher.failure() {
            return Err(f);
        }
        for e in &mut fresh.entries {
            e.doc = self.by_path.get(&e.path).and_then(|&i| {
                let old: &Entry = &self.table.entries[i];
                let same = old.stamp.is_some_and(|s| s.nlink == 1) && old.stamp == e.stamp;
                let touched = e.path.ancestors().any(|a| dirty.contains(a));
                (same && !touched).then_some(old.doc).flatten()
            });
        }
        self.table = fresh;
        self.index_paths();
        Ok(())
    }

    /// The files `opts` may match, as its own walk would list them; `None`
    /// when the query cannot be narrowed enough.
    fn candidates(
        &self,
        root: &Path,
        q: &planner::Query,
        opts: &GrepOptions,
        config: &IndexConfig,
    ) -> Option<FileList> {
        let unindexed = self.unindexed();
        let total = self.table.entries.len().max(1);
        let too_many = |n: u64| (n + unindexed as u64) as f64 > config.max_share * total as f64;
        // Decoding the lists of common trigrams (`static`: four lists of
        // 60,000 files on the Linux tree) costs more than the scan it would
        // save. The estimate is an upper bound from the encoded sizes; only
        // one at least twice over the share is given up without decoding.
        // Performance only: either way the answer is the scan's.
        let dead = self.dead as u64;
        if too_many((self.postings.estimate(q)? / 2).saturating_sub(dead)) {
            return None;
        }
        let docs = self.postings.eval(q)?;
        if too_many((docs.len() as u64).saturating_sub(dead)) {
            return None;
        }
        let walker = Walker::new(root.to_path_buf(), opts.walk.clone()).ok()?;
        // Ignored roots the search's filters let it reach, renumbered.
        let mut renumber = vec![None; self.table.ignored_roots.len()];
        let mut ignored_roots = Vec::new();
        for (i, r) in self.table.ignored_roots.iter().enumerate() {
            if walker.admits(&r.path, r.is_dir) {
                renumber[i] = Some(ignored_roots.len());
                ignored_roots.push(r.clone());
            }
        }
        let mut files = Vec::new();
        for e in &self.table.entries {
            let hit = e.doc.is_none_or(|d| docs.binary_search(&d).is_ok());
            if !hit {
                continue;
            }
            let ignored_root = match e.ignored_root {
                None => None,
                Some(i) => match renumber[i as usize] {
                    Some(n) => Some(n),
                    None => continue,
                },
            };
            if walker.admits(&e.path, false) {
                files.push(ListedFile {
                    path: e.path.clone(),
                    ignored_root,
                });
            }
        }
        Some(FileList {
            ignored_roots,
            files,
        })
    }
}

/// Where an index stands, as `indexStatus` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    Building,
    Ready,
    Stale(String),
    Off(String),
}

#[derive(Debug, Clone)]
pub struct IndexStatus {
    pub state: State,
    pub files: u64,
    /// Size of the postings.
    pub bytes: u64,
    /// The postings are a mapped file (else they are held in memory: the
    /// file could not be written).
    pub mapped: bool,
    pub built_at: Option<SystemTime>,
    /// Why the picture is not saved in the store for the next process (the
    /// folder cannot be written, the disk is full): it serves this process
    /// from memory. `None` when saved, or not ready.
    pub unsaved: Option<String>,
    /// Taken over from the store's generation with this many files read
    /// again; `None`: built from scratch (or not ready).
    pub reread: Option<u64>,
}

enum Slot {
    Building,
    Ready(Box<Picture>),
    Stale(String),
    Off(String),
}

pub struct LiveIndex {
    root: PathBuf,
    config: IndexConfig,
    slot: Mutex<Slot>,
    changed: Condvar,
    /// Stops a build in progress when the index is dropped.
    cancel: CancelToken,
    /// A build is running: at most one at a time.
    building: AtomicBool,
    /// The user was told that the picture could not be saved.
    told: AtomicBool,
}

/// Files not in the postings past which the picture is rebuilt.
fn rebuild_threshold(files: usize) -> usize {
    (files / 10).max(1000)
}

impl LiveIndex {
    /// Starts building the index of `root` on a thread of its own.
    pub fn start(root: PathBuf, config: IndexConfig) -> Arc<LiveIndex> {
        let idx = Arc::new(LiveIndex {
            root,
            config,
            slot: Mutex::new(Slot::Building),
            changed: Condvar::new(),
            cancel: CancelToken::new(None),
            building: AtomicBool::new(false),
            told: AtomicBool::new(false),
        });
        idx.spawn_build();
        idx
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config(&self) -> &IndexConfig {
        &self.config
    }

    /// Builds a new picture in the background; the current one (if ready)
    /// keeps serving until the new one replaces it.
    fn spawn_build(self: &Arc<Self>) {
        if self.building.swap(true, Ordering::SeqCst) {
            return;
        }
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name("pi-utils-index".into())
            .spawn(move || {
                lower_priority();
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    build(&me.root, &me.config, &me.cancel)
                }));
                let next = match result {
                    Ok(Ok(built)) => {
                        let mut p = Picture::new(built);
                        match p.refresh(&me.root) {
                            Ok(()) => Slot::Ready(Box::new(p)),
                            Err(e) => Slot::Stale(e),
                        }
                    }
                    Ok(Err(NotBuilt::Off(why))) => Slot::Off(why),
                    Ok(Err(NotBuilt::Failed(why))) => Slot::Stale(why),
                    Err(_) => Slot::Off("internal error: the index build panicked".into()),
                };
                let mut slot = me.lock();
                // A ready picture being replaced served until now; a dropped
                // index stays dropped.
                if !me.cancel.is_stopped() {
                    *slot = next;
                }
                me.building.store(false, Ordering::SeqCst);
                me.changed.notify_all();
            });
        if let Err(e) = spawned {
            self.building.store(false, Ordering::SeqCst);
            *self.lock() = Slot::Off(format!("cannot start the index thread: {e}"));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn status(&self) -> IndexStatus {
        let slot = self.lock();
        match &*slot {
            Slot::Building => IndexStatus {
                state: State::Building,
                files: 0,
                bytes: 0,
                mapped: false,
                built_at: None,
                unsaved: None,
                reread: None,
            },
            Slot::Ready(p) => IndexStatus {
                state: State::Ready,
                files: p.table.entries.len() as u64,
                bytes: p.postings.bytes(),
                mapped: p.postings.is_mapped(),
                built_at: Some(p.built_at),
                unsaved: p.unsaved.clone(),
                reread: p.reread.map(|n| n as u64),
            },
            Slot::Stale(w) => IndexStatus {
                state: State::Stale(w.clone()),
                files: 0,
                bytes: 0,
                mapped: false,
                built_at: None,
                unsaved: None,
                reread: None,
            },
            Slot::Off(w) => IndexStatus {
                state: State::Off(w.clone()),
                files: 0,
                bytes: 0,
                mapped: false,
                built_at: None,
                unsaved: None,
                reread: None,
            },
        }
    }

    /// Waits until the index is no longer building; Err with the reason it
    /// will not serve searches.
    pub fn wait_ready(&self, cancel: &CancelToken) -> Result<(), String> {
        let mut slot = self.lock();
        loop {
            match &*slot {
                Slot::Ready(_) => return Ok(()),
                // A stale index being rebuilt is waited for.
                Slot::Stale(_) if self.building.load(Ordering::SeqCst) => {}
                Slot::Off(why) | Slot::Stale(why) => return Err(why.clone()),
                Slot::Building => {}
            }
            if cancel.is_stopped() {
                return Err("cancelled".into());
            }
            slot = (self.changed)
                .wait_timeout(slot, Duration::from_millis(50))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// The candidates of a search, or how the search must run instead.
    pub fn candidates(self: &Arc<Self>, opts: &GrepOptions) -> Result<FileList, IndexUse> {
        // Planned before the lock: a pattern that cannot be narrowed (`e`)
        // goes to the scan without reading the event queue, so the index
        // costs it next to nothing (the events wait for the next search).
        let q = planner::plan(&opts.pattern, opts.literal, opts.ignore_case);
        let mut slot = self.lock();
        let pic = match &mut *slot {
            Slot::Ready(p) => p,
            Slot::Building => return Err(IndexUse::Building),
            Slot::Stale(_) => return Err(IndexUse::Stale),
            Slot::Off(_) => return Err(IndexUse::Off),
        };
        if q == planner::Query::All {
            return Err(IndexUse::Scan);
        }
        if let Err(why) = pic.refresh(&self.root) {
            *slot = Slot::Stale(why);
            drop(slot);
            self.spawn_build_from_stale();
            return Err(IndexUse::Stale);
        }
        if pic.table.errors.count > 0 {
            return Err(IndexUse::Scan);
        }
        let rebuild = pic.unindexed().saturating_sub(pic.unindexable)
            > rebuild_threshold(pic.table.entries.len());
        let found = pic.candidates(&self.root, &q, opts, &self.config);
        drop(slot);
        if rebuild {
            self.spawn_build();
        }
        found.ok_or(IndexUse::Scan)
    }

    /// A stale index is rebuilt from scratch; searches scan meanwhile.
    fn spawn_build_from_stale(self: &Arc<Self>) {
        if self.cancel.is_stopped() {
            return;
        }
        self.spawn_build();
    }

    /// Stops a build in progress; the watcher goes with the picture (its
    /// mapping of the store's generation too).
    pub fn stop(&self) {
        self.cancel.cancel();
        *self.lock() = Slot::Off("dropped".into());
        self.changed.notify_all();
    }

    /// Once per index: the notice that its picture could not be saved.
    pub fn take_notice(&self) -> Option<String> {
        let why = match &*self.lock() {
            Slot::Ready(p) => p.unsaved.clone()?,
            _ => return None,
        };
        if self.told.swap(true, Ordering::SeqCst) {
            return None;
        }
        Some(format!(
            "The index of this directory could not be saved ({why}): it is kept in memory and rebuilt by the next process"
        ))
    }
}
