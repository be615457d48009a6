//! One root's index over time: building, ready (kept fresh at the start of
//! each search), stale (rebuilding), or off.

use super::apply;
use super::build::{build, lower_priority, read_for_delta, Built, NotBuilt};
use super::delta::{self, Delta};
use super::planner;
use super::postings::Postings;
use super::table::{self, Entry, Stamp, Table};
use super::watch::Watcher;
use super::{IndexConfig, IndexUse};
use crate::search::CancelToken;
use fixedbitset::FixedBitSet;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// A ready picture of the tree.
pub(super) struct Picture {
    /// Shared with the searches that read it on demand (a table feed, see
    /// `source.rs`); a change while one runs copies it first.
    pub(super) table: Arc<Table>,
    postings: Postings,
    watcher: Watcher,
    /// What the root named when built (see `table::identity`).
    root_id: (u64, u64),
    /// Rule files no watch sees a change of, stamped again at each search
    /// (see `table::unwatched_rules`; empty in most trees).
    unwatched: Vec<table::Stamped>,
    /// The table's part of `unwatched` (its hard-linked ignore files), kept
    /// across changes applied in place so they need no pass over the table.
    linked_rules: Vec<table::Stamped>,
    built_at: SystemTime,
    /// Why it is not saved in the store (see [`IndexStatus::unsaved`]).
    unsaved: Option<String>,
    reread: Option<usize>,
    walked: Option<bool>,
    /// Files without a document when built (binary, too big, unreadable):
    /// not a reason to rebuild, since a rebuild would not index them.
    unindexable: usize,
    /// Files whose content is not in the postings now (always candidates):
    /// counted when the table changes, not by every search (a pass over
    /// 86,630 entries was most of a one-hit search's cost).
    unindexed: usize,
    /// One past the largest document of the table: the size of the sets a
    /// query's lists decode into (counted with `unindexed`).
    universe: usize,
    /// Each table entry's document, `NO_DOC` for none, kept with the
    /// table: a search skips the files its query rules out by this array
    /// (346 KB on the Linux tree) instead of reading every entry (9 MB),
    /// which was most of a one-hit search's time.
    pub(super) doc_at: Arc<Vec<u32>>,
    /// What the last refresh applied in place (zero after a whole walk).
    pub(super) applied: apply::Applied,
    /// The keys of files read since the generation (see `delta.rs`),
    /// shared with the searches that run over this picture.
    pub(super) delta: Arc<Delta>,
    /// Files without a document that the next background batch reads.
    pending: Vec<PathBuf>,
    /// The background batch reading now, if any.
    batch_out: Option<u64>,
    /// What changed since that batch started (its reads of these are not
    /// taken); `touched_all`: everything may have.
    touched: Vec<PathBuf>,
    touched_all: bool,
}

/// Past this many paths touched while a batch reads, the batch is dropped
/// whole instead of each read checked against them.
const MAX_TOUCHED: usize = 10_000;

/// `Picture::doc_at` of an entry without a document.
pub(super) const NO_DOC: u32 = u32::MAX;

impl Picture {
    fn new(b: Built) -> Picture {
        let mut p = Picture {
            table: Arc::new(b.table),
            postings: b.postings,
            watcher: b.watcher,
            root_id: b.root_id,
            unwatched: Vec::new(),
            linked_rules: Vec::new(),
            built_at: SystemTime::now(),
            unsaved: b.unsaved,
            reread: b.reread,
            walked: b.walked,
            unindexable: 0,
            unindexed: 0,
            universe: 0,
            doc_at: Arc::default(),
            applied: apply::Applied::default(),
            delta: Arc::default(),
            pending: Vec::new(),
            batch_out: None,
            touched: Vec::new(),
            touched_all: false,
        };
        p.recount();
        p.unindexable = p.unindexed;
        p
    }

    /// Counts the files whose content is not in the postings, and finds the
    /// universe of the documents the rest hold.
    fn recount(&mut self) {
        self.linked_rules = table::linked_rules(&self.table.entries);
        self.join_unwatched();
        let (doc_at, unindexed, universe) = counts(&self.table);
        (self.unindexed, self.universe) = (unindexed, universe);
        self.doc_at = Arc::new(doc_at);
    }

    /// What `recount` finds, brought up to date from what a batch applied
    /// in place changed, without a pass over the table: the cost of a
    /// change follows the change, not the tree.
    fn follow(&mut self, edits: apply::Edits) {
        let Some(delta) = edits.unindexed else {
            return self.recount();
        };
        self.unindexed = self.unindexed.saturating_add_signed(delta);
        let below = |p: &Path| edits.places.iter().any(|q| table::at_or_below(p, q));
        self.linked_rules.retain(|(p, _)| !below(p));
        self.linked_rules.extend(edits.linked_rules);
        self.join_unwatched();
        #[cfg(debug_assertions)]
        self.check_counts();
    }

    /// `unwatched` from its two parts: the table's hard-linked ignore files
    /// (kept in `linked_rules`) and the rule files kept beside the table.
    fn join_unwatched(&mut self) {
        self.unwatched = (self.linked_rules.iter().cloned())
            .chain(table::unseen_rules(&self.table))
            .collect();
    }

    /// In tests and debug builds: the counts kept in step equal a recount.
    #[cfg(debug_assertions)]
    fn check_counts(&self) {
        let (doc_at, unindexed, _) = counts(&self.table);
        assert_eq!(doc_at, *self.doc_at, "documents by entry kept in step");
        assert_eq!(unindexed, self.unindexed, "entries without a document");
        let sorted = |mut v: Vec<table::Stamped>| {
            v.sort_by(|a, b| a.0.cmp(&b.0));
            v
        };
        let again = sorted(table::unwatched_rules(&self.table));
        assert_eq!(
            again,
            sorted(self.unwatched.clone()),
            "unwatched rule files"
        );
    }

    /// Applies every event queued so far. Err: the picture can no longer be
    /// trusted (overflow, a watch that could not be added).
    fn refresh(&mut self, root: &Path) -> Result<(), String> {
        if let Some(f) = self.watcher.failure() {
            return Err(f);
        }
        // A parent renamed or replaced, or a symlink on the way switched:
        // the table is another tree's.
        if table::identity(root) != Some(self.root_id) {
            return Err(format!("{} names another directory now", root.display()));
        }
        let changes = self.watcher.drain();
        if changes.overflow {
            return Err("the watcher's event queue overflowed".into());
        }
        let mut places = changes.relist;
        // A content change of a path the table does not hold (a special
        // file, a file the table missed) is placed like a new entry.
        places.extend(
            (changes.dirty.iter())
                .filter(|p| self.table.find(p).is_none())
                .cloned(),
        );
        self.touch(&changes.dirty, &places);
        // A table with errors is walked whole at its next change, so that
        // the errors can clear.
        let walk_whole = changes.unplaced
            || table::unwatched_changed(&self.unwatched)
            || (!places.is_empty() && self.table.errors.count > 0);
        if walk_whole {
            return self.walk_whole(root, &changes.dirty);
        }
        if !places.is_empty() {
            // Errs before it changes anything: the whole walk then starts
            // from the table as it was.
            let table = Arc::make_mut(&mut self.table);
            let doc_at = Arc::make_mut(&mut self.doc_at);
            match apply::apply(table, doc_at, root, &self.watcher, places) {
                Ok((applied, mut edits)) => {
                    self.applied = applied;
                    self.pending.append(&mut edits.fresh_files);
                    self.follow(edits);
                }
                Err(apply::WalkWhole) => return self.walk_whole(root, &changes.dirty),
            }
        }
        // A changed file is read by every search from now on, and its
        // stamp read again: glob lists it with its new time and size.
        for p in &changes.dirty {
            if let Some(i) = self.table.find(p) {
                let e = &mut Arc::make_mut(&mut self.table).entries[i];
                self.unindexed += e.doc.is_some() as usize;
                e.doc = None;
                Arc::make_mut(&mut self.doc_at)[i] = NO_DOC;
                e.stamp = Stamp::of(&e.path);
                self.pending.push(p.clone());
            }
        }
        Ok(())
    }

    /// Drops what the delta knows of what changed, and remembers it against
    /// the batch reading now.
    fn touch(&mut self, files: &[PathBuf], places: &[PathBuf]) {
        if files.is_empty() && places.is_empty() {
            return;
        }
        if self.delta.len() > 0 {
            Arc::make_mut(&mut self.delta).forget(files, places);
        }
        if self.batch_out.is_some() && !self.touched_all {
            self.touched.extend(files.iter().chain(places).cloned());
            if self.touched.len() > MAX_TOUCHED {
                self.touched_all = true;
                self.touched = Vec::new();
            }
        }
    }

    /// The next background batch: the pending files the table holds without
    /// a document and the delta has not read at their stamp, with its id.
    /// `None` while a batch reads or when there is nothing (or no room).
    fn next_batch(&mut self, id: impl FnOnce() -> u64) -> Option<(u64, Vec<PathBuf>)> {
        if self.batch_out.is_some() || self.pending.is_empty() || !self.delta.has_room() {
            return None;
        }
        let mut paths = std::mem::take(&mut self.pending);
        paths.sort();
        paths.dedup();
        let table = &self.table;
        let delta = &self.delta;
        paths.retain(|p| {
            table.find(p).is_some_and(|i| {
                let e = &table.entries[i];
                e.doc.is_none() && e.stamp.is_some_and(|s| s.nlink == 1) && !delta.has(p, e.stamp)
            })
        });
        if paths.len() > delta::BATCH {
            self.pending = paths.split_off(delta::BATCH);
        }
        if paths.is_empty() {
            return None;
        }
        let id = id();
        self.batch_out = Some(id);
        self.touched = Vec::new();
        self.touched_all = false;
        Some((id, paths))
    }

    /// Takes what batch `id` read, but nothing of what changed meanwhile;
    /// a batch of an earlier picture is dropped.
    fn take_batch(&mut self, id: u64, reads: Vec<(PathBuf, delta::Read)>) {
        if self.batch_out != Some(id) {
            return;
        }
        self.batch_out = None;
        if !self.touched_all && !reads.is_empty() {
            Arc::make_mut(&mut self.delta).take(reads, &self.touched);
        }
        self.touched = Vec::new();
        self.touched_all = false;
    }

    /// Walks the whole tree again: the fallback for what no place holds.
    /// Files whose stamp is unchanged keep their postings.
    fn walk_whole(&mut self, root: &Path, dirty: &[PathBuf]) -> Result<(), String> {
        self.applied = apply::Applied::default();
        let dirty: HashSet<&Path> = dirty.iter().map(PathBuf::as_path).collect();
        let mut fresh = table::walk(root, &self.watcher, &CancelToken::new(None), usize::MAX)?;
        if let Some(f) = self.watcher.failure() {
            return Err(f);
        }
        let was = table::same_paths(&self.table, &fresh);
        for (e, was) in fresh.entries.iter_mut().zip(was) {
            e.doc = was.and_then(|i| {
                let old: &Entry = &self.table.entries[i];
                let same = old.stamp.is_some_and(|s| s.nlink == 1) && old.stamp == e.stamp;
                let touched = e.path.ancestors().any(|a| dirty.contains(a));
                (same && !touched).then_some(old.doc).flatten()
            });
        }
        self.table = Arc::new(fresh);
        self.recount();
        // What the delta read may be of files the walk found changed.
        self.delta = Arc::default();
        self.touched_all = true;
        self.pending = (self.table.entries.iter())
            .filter(|e| e.doc.is_none() && e.stamp.is_some_and(|s| s.nlink == 1))
            .take(delta::BATCH)
            .map(|e| e.path.clone())
            .collect();
        Ok(())
    }

    /// The documents `q` allows, as far as decoding no more than `config`
    /// lets it tells (see `IndexConfig::decode_per_file`).
    pub(super) fn narrowed(&self, q: &planner::Query, config: &IndexConfig) -> Option<FixedBitSet> {
        let mut budget = (config.decode_per_file).saturating_mul(self.table.entries.len() as u64);
        self.postings.eval(q, self.universe, &mut budget)
    }
}

/// Each entry's document (`NO_DOC` for none), how many entries have none,
/// and one past the largest document: one pass over the entries (9 MB on
/// the Linux tree), made when the table is made; a change applied in place
/// keeps them in step instead (`Picture::follow`).
fn counts(table: &Table) -> (Vec<u32>, usize, usize) {
    let (mut unindexed, mut universe) = (0, 0);
    let doc_at = (table.entries.iter())
        .map(|e| match e.doc {
            Some(d) => {
                universe = universe.max(d as usize + 1);
                d
            }
            None => {
                unindexed += 1;
                NO_DOC
            }
        })
        .collect();
    (doc_at, unindexed, universe)
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
    /// Taken over from the store by walking the tree (`true`) or by
    /// stamping the saved table in place; `None`: built (or not ready).
    pub walked: Option<bool>,
}

enum Slot {
    Building,
    Ready(Box<Picture>),
    /// Why, and since when: a stale index that no build is making fresh
    /// builds again once `IndexConfig::stale_retry` has passed.
    Stale(String, Instant),
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
    /// The user was told that searches scan because of the watch limit.
    told_limit: AtomicBool,
    /// What the last background batch read, with its id, until a search
    /// takes it into the picture.
    inbox: Mutex<Option<BatchRead>>,
    next_batch: AtomicU64,
}

/// A background batch's id and what it read.
type BatchRead = (u64, Vec<(PathBuf, delta::Read)>);

/// Files not in the postings past which the picture is rebuilt.
/// Each costs every search a read and a trigram test (about 7 us a file on
/// two cores): 5,000 new files made every search of the Linux tree 35-40 ms
/// instead of 1-2 until a rebuild, which waited for 8,663 of them. The
/// rebuild re-validates from the store (a walk, the new files read, one
/// merge: about 2 s of niced CPU there) while this picture serves.
fn rebuild_threshold(files: usize) -> usize {
    (files / 200).max(256)
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
            told_limit: AtomicBool::new(false),
            inbox: Mutex::new(None),
            next_batch: AtomicU64::new(1),
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
                            Err(e) => Slot::Stale(e, Instant::now()),
                        }
                    }
                    Ok(Err(NotBuilt::Off(why))) => Slot::Off(why),
                    Ok(Err(NotBuilt::Failed(why))) => Slot::Stale(why, Instant::now()),
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
                walked: None,
            },
            Slot::Ready(p) => IndexStatus {
                state: State::Ready,
                files: p.table.entries.len() as u64,
                bytes: p.postings.bytes(),
                mapped: p.postings.is_mapped(),
                built_at: Some(p.built_at),
                unsaved: p.unsaved.clone(),
                reread: p.reread.map(|n| n as u64),
                walked: p.walked,
            },
            Slot::Stale(w, _) => IndexStatus {
                state: State::Stale(w.clone()),
                files: 0,
                bytes: 0,
                mapped: false,
                built_at: None,
                unsaved: None,
                reread: None,
                walked: None,
            },
            Slot::Off(w) => IndexStatus {
                state: State::Off(w.clone()),
                files: 0,
                bytes: 0,
                mapped: false,
                built_at: None,
                unsaved: None,
                reread: None,
                walked: None,
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
                Slot::Stale(..) if self.building.load(Ordering::SeqCst) => {}
                Slot::Off(why) | Slot::Stale(why, _) => return Err(why.clone()),
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

    /// Runs `query` on the picture once every event queued so far is
    /// applied: a search sees every write that completed before it began.
    /// Err says how the search must run instead (`Scan` when `query` gives
    /// up or the table met errors the scan must report itself).
    pub(super) fn with_fresh<T>(
        self: &Arc<Self>,
        query: impl FnOnce(&Picture) -> Option<T>,
    ) -> Result<T, IndexUse> {
        let mut slot = self.lock();
        let pic = match &mut *slot {
            Slot::Ready(p) => p,
            Slot::Building => return Err(IndexUse::Building),
            Slot::Stale(_, since) => {
                // Recovers by itself: the watch limit raised or the tree
                // shrunk since, a failed build's cause gone.
                let retry = since.elapsed() >= self.config.stale_retry;
                drop(slot);
                if retry {
                    self.spawn_build_from_stale();
                }
                return Err(IndexUse::Stale);
            }
            Slot::Off(_) => return Err(IndexUse::Off),
        };
        if let Err(why) = pic.refresh(&self.root) {
            *slot = Slot::Stale(why, Instant::now());
            drop(slot);
            self.spawn_build_from_stale();
            return Err(IndexUse::Stale);
        }
        if pic.table.errors.count > 0 {
            return Err(IndexUse::Scan);
        }
        let read = self.inbox.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((id, reads)) = read {
            pic.take_batch(id, reads);
        }
        let batch = pic.next_batch(|| self.next_batch.fetch_add(1, Ordering::Relaxed));
        let rebuild = pic.unindexed.saturating_sub(pic.unindexable)
            > rebuild_threshold(pic.table.entries.len());
        let found = query(pic);
        if pic.postings.is_damaged() {
            // What `query` found is still right (a damaged list reads as
            // "any file"), but the saved generation is gone from the store
            // and the picture is rebuilt from scratch.
            *slot = Slot::Stale("the saved index failed its checksum".into(), Instant::now());
            drop(slot);
            self.spawn_build_from_stale();
            return Err(IndexUse::Stale);
        }
        drop(slot);
        if rebuild {
            self.spawn_build();
        }
        if let Some((id, paths)) = batch {
            self.spawn_delta_read(id, paths);
        }
        found.ok_or(IndexUse::Scan)
    }

    /// Reads `paths` for the delta on a niced thread of its own; what it
    /// read waits in the inbox for the next search.
    fn spawn_delta_read(self: &Arc<Self>, id: u64, paths: Vec<PathBuf>) {
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name("pi-utils-index-delta".into())
            .spawn(move || {
                lower_priority();
                let reads = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    read_for_delta(&paths, &me.cancel)
                }));
                let mut inbox = me.inbox.lock().unwrap_or_else(|p| p.into_inner());
                *inbox = Some((id, reads.unwrap_or_default()));
            });
        if spawned.is_err() {
            // Nothing read: the next search ends the batch.
            *self.inbox.lock().unwrap_or_else(|p| p.into_inner()) = Some((id, Vec::new()));
        }
    }

    /// Whether the delta has read everything it was given: no batch out,
    /// nothing in the inbox or pending (`false` when not ready).
    #[cfg(test)]
    pub fn delta_settled(&self) -> bool {
        let inbox_empty = self
            .inbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_none();
        match &*self.lock() {
            Slot::Ready(p) => inbox_empty && p.batch_out.is_none() && p.pending.is_empty(),
            _ => false,
        }
    }

    /// How many files the delta holds (`None`: not ready).
    #[cfg(test)]
    pub fn delta_len(&self) -> Option<usize> {
        match &*self.lock() {
            Slot::Ready(p) => Some(p.delta.len()),
            _ => None,
        }
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

    /// What the last refresh applied in place (`None`: not ready).
    #[cfg(test)]
    pub fn last_applied(&self) -> Option<apply::Applied> {
        match &*self.lock() {
            Slot::Ready(p) => Some(p.applied),
            _ => None,
        }
    }

    /// Once per index: the notice that its picture could not be saved, or
    /// that searches scan because the watch limit is met (the one stale
    /// reason a user can act on; it lasts until they do).
    pub fn take_notice(&self) -> Option<String> {
        let (notice, told) = match &*self.lock() {
            Slot::Ready(p) => (
                format!(
                    "The index of this directory could not be saved ({}): it is kept in memory and rebuilt by the next process",
                    p.unsaved.as_ref()?
                ),
                &self.told,
            ),
            Slot::Stale(why, _) if why.starts_with(super::watch::WATCH_LIMIT) => (
                format!("Searches of this directory scan instead of using its index: {why}"),
                &self.told_limit,
            ),
            _ => return None,
        };
        (!told.swap(true, Ordering::SeqCst)).then_some(notice)
    }
}
