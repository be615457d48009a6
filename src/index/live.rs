//! One root's index over time: building, ready (kept fresh at the start of
//! each search), stale (rebuilding), or off.

use super::build::build;
use super::delta;
use super::picture::Picture;
use super::read::{lower_priority, read_for_delta};
use super::{IndexConfig, IndexUse, NotBuilt};
use crate::search::CancelToken;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime};

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

impl IndexStatus {
    /// The status of an index that has no ready picture.
    pub fn without_picture(state: State) -> IndexStatus {
        IndexStatus {
            state,
            files: 0,
            bytes: 0,
            mapped: false,
            built_at: None,
            unsaved: None,
            reread: None,
            walked: None,
        }
    }
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
    /// When the last search through the picture came (see `arm_fold`).
    last_search: Mutex<Instant>,
    /// A thread waits for the searches to stop, to fold the delta.
    fold_armed: AtomicBool,
}

/// A background batch's id and what it read.
type BatchRead = (u64, Vec<(PathBuf, delta::Read)>);

/// Files not in the postings past which the picture is rebuilt (at once
/// when the delta has no room for them, else once the searches stop: see
/// `LiveIndex::arm_fold`). Each one the delta has not read costs every
/// search a read and a trigram test (about 7 us a file on two cores); one
/// it read costs a bit, as a generation's file does. The rebuild
/// re-validates from the store (a walk, the new files read, one merge: 2 s
/// of niced CPU and more on the Linux tree) while this picture serves.
fn rebuild_threshold(files: usize) -> usize {
    (files / 200).max(256)
}

/// Whether more files wait for the postings than the threshold allows.
fn waiting_over(pic: &Picture) -> bool {
    pic.unindexed.saturating_sub(pic.unindexable) > rebuild_threshold(pic.table.entries.len())
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
            last_search: Mutex::new(Instant::now()),
            fold_armed: AtomicBool::new(false),
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
            Slot::Building => IndexStatus::without_picture(State::Building),
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
            Slot::Stale(w, _) => IndexStatus::without_picture(State::Stale(w.clone())),
            Slot::Off(w) => IndexStatus::without_picture(State::Off(w.clone())),
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
        // Past the threshold, files the delta has room for wait for it and
        // are folded once the searches stop; without room, rebuild now.
        let over = waiting_over(pic);
        let rebuild = over && !pic.delta.has_room();
        *self.last_search.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
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
        } else if over {
            self.arm_fold();
        }
        if let Some((id, paths)) = batch {
            self.spawn_delta_read(id, paths);
        }
        found.ok_or(IndexUse::Scan)
    }

    /// Folds the delta into a new generation (a rebuild, which re-validates
    /// from the store and reads only the new files) once no search came for
    /// `IndexConfig::fold_idle`, on a niced thread of its own that holds no
    /// reference keeping the index alive. The picture serves until the new
    /// one replaces it, as with any rebuild.
    fn arm_fold(self: &Arc<Self>) {
        if self.fold_armed.swap(true, Ordering::SeqCst) {
            return;
        }
        let me: Weak<LiveIndex> = Arc::downgrade(self);
        let spawned = std::thread::Builder::new()
            .name("pi-utils-index-fold".into())
            .spawn(move || {
                lower_priority();
                while let Some(idx) = me.upgrade() {
                    let idle = idx.config.fold_idle;
                    let since = idx
                        .last_search
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .elapsed();
                    if idx.cancel.is_stopped() || since >= idle {
                        idx.fold_armed.store(false, Ordering::SeqCst);
                        let due = matches!(&*idx.lock(), Slot::Ready(p) if waiting_over(p));
                        if due && !idx.cancel.is_stopped() {
                            idx.spawn_build();
                        }
                        return;
                    }
                    drop(idx);
                    std::thread::sleep(idle - since);
                }
            });
        if spawned.is_err() {
            self.fold_armed.store(false, Ordering::SeqCst);
        }
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
    pub fn last_applied(&self) -> Option<super::apply::Applied> {
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
