//! One ready picture of a root: the table, the postings, the watcher that
//! keeps them fresh and the delta of files read since the generation, with
//! the counts kept beside the table. At each search the watcher's events
//! are applied in place (`apply.rs`) or, when they cannot be placed, the
//! tree is walked again; files changed since are read in the background in
//! batches (`delta.rs`).

use super::apply;
use super::build::Built;
use super::chunked::Chunked;
use super::delta::{self, Delta};
use super::planner;
use super::postings::Postings;
use super::table::{self, Entry, Table, DELTA_DOC, NO_DOC};
use super::watch::Watcher;
use super::IndexConfig;
use crate::search::path_order::at_or_below;
use crate::search::stamp::Stamp;
use crate::search::CancelToken;
use fixedbitset::FixedBitSet;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

/// A ready picture of the tree.
pub(super) struct Picture {
    /// Shared with the searches that read it on demand (a table feed, see
    /// `serve.rs`); a change while one runs copies it first.
    pub(super) table: Arc<Table>,
    pub(super) postings: Postings,
    watcher: Watcher,
    /// What the root named when built (see `table::identity`).
    root_id: (u64, u64),
    /// Rule files no watch sees a change of, stamped again at each search
    /// (see `table::unwatched_rules`; empty in most trees).
    unwatched: Vec<table::Stamped>,
    /// The table's part of `unwatched` (its hard-linked ignore files), kept
    /// across changes applied in place so they need no pass over the table.
    linked_rules: Vec<table::Stamped>,
    pub(super) built_at: SystemTime,
    /// Why it is not saved in the store (see `IndexStatus::unsaved`).
    pub(super) unsaved: Option<String>,
    pub(super) reread: Option<usize>,
    pub(super) walked: Option<bool>,
    /// Files without a document when built (binary, too big, unreadable):
    /// not a reason to rebuild, since a rebuild would not index them.
    pub(super) unindexable: usize,
    /// Files whose content is not in the postings now (always candidates):
    /// counted when the table changes, not by every search (a pass over
    /// 86,630 entries was most of a one-hit search's cost).
    pub(super) unindexed: usize,
    /// One past the largest document of the table: the size of the sets a
    /// query's lists decode into (counted with `unindexed`).
    universe: usize,
    /// Each table entry's document, `NO_DOC` for none, or `DELTA_DOC +
    /// slot` for a file the delta read at the table's stamp, kept with the
    /// table: a search skips the files its query rules out by this array
    /// (346 KB on the Linux tree) instead of reading every entry (9 MB),
    /// which was most of a one-hit search's time.
    pub(super) doc_at: Arc<Chunked<u32>>,
    /// What the last refresh applied in place (zero after a whole walk).
    pub(super) applied: apply::Applied,
    /// The keys of files read since the generation (see `delta.rs`); a
    /// search takes from it only the set of slots its query allows.
    pub(super) delta: Delta,
    /// Files without a document that the next background batch reads.
    pub(super) pending: Vec<PathBuf>,
    /// The background batch reading now, if any.
    pub(super) batch_out: Option<u64>,
    /// What changed since that batch started (its reads of these are not
    /// taken); `touched_all`: everything may have.
    touched: Vec<PathBuf>,
    touched_all: bool,
}

/// Past this many paths touched while a batch reads, the batch is dropped
/// whole instead of each read checked against them.
const MAX_TOUCHED: usize = 10_000;

impl Picture {
    pub(super) fn new(b: Built) -> Picture {
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
            delta: Delta::default(),
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
            self.recount();
            return self.mark(
                self.delta
                    .keyed()
                    .map(|(p, s, slot)| (p.to_path_buf(), s, slot))
                    .collect(),
            );
        };
        self.unindexed = self.unindexed.saturating_add_signed(delta);
        let below = |p: &Path| edits.places.iter().any(|q| at_or_below(p, q));
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

    /// Gives each file the delta took its slot in the documents by entry,
    /// where the table's stamp of it is the one the delta read it at.
    fn mark(&mut self, taken: Vec<delta::Taken>) {
        if taken.is_empty() {
            return;
        }
        let doc_at = Arc::make_mut(&mut self.doc_at);
        for (path, stamp, slot) in taken {
            if let Some(i) = self.table.find(&path) {
                let e = &self.table.entries[i];
                if e.doc.is_none() && e.stamp == Some(stamp) {
                    doc_at[i] = DELTA_DOC + slot;
                }
            }
        }
        #[cfg(debug_assertions)]
        self.check_counts();
    }

    /// In tests and debug builds: the counts kept in step equal a recount,
    /// and each file with a slot of the delta is one the delta read at the
    /// table's stamp.
    #[cfg(debug_assertions)]
    fn check_counts(&self) {
        let (doc_at, unindexed, _) = counts(&self.table);
        let in_generation: Chunked<u32> = (self.doc_at.iter())
            .map(|&d| if table::in_postings(d) { d } else { NO_DOC })
            .collect();
        assert_eq!(doc_at, in_generation, "documents by entry kept in step");
        for (e, &d) in self.table.entries.iter().zip(self.doc_at.iter()) {
            // A slot dropped since allows every query: no harm.
            let slot = d.wrapping_sub(DELTA_DOC);
            if d != NO_DOC && !table::in_postings(d) && self.delta.stands(slot) {
                assert_eq!(
                    self.delta.slot_of(&e.path, e.stamp),
                    Some(slot),
                    "{} has a slot of the delta whose keys stand for another file or stamp",
                    e.path.display()
                );
            }
        }
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
    pub(super) fn refresh(&mut self, root: &Path) -> Result<(), String> {
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
            self.delta.forget(files, places);
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
    pub(super) fn next_batch(&mut self, id: impl FnOnce() -> u64) -> Option<(u64, Vec<PathBuf>)> {
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
    pub(super) fn take_batch(&mut self, id: u64, reads: Vec<(PathBuf, delta::Read)>) {
        if self.batch_out != Some(id) {
            return;
        }
        self.batch_out = None;
        let taken = match !self.touched_all && !reads.is_empty() {
            true => self.delta.take(reads, &self.touched),
            false => Vec::new(),
        };
        self.touched = Vec::new();
        self.touched_all = false;
        self.mark(taken);
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
        self.delta = Delta::default();
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

    /// The delta's slots `q` allows (see `Delta::allowed`); `None`: all.
    pub(super) fn delta_narrowed(&self, q: &planner::Query) -> Option<FixedBitSet> {
        match self.delta.len() {
            0 => None,
            _ => self.delta.allowed(q),
        }
    }
}

/// Each entry's document (`NO_DOC` for none), how many entries have none,
/// and one past the largest document: one pass over the entries (9 MB on
/// the Linux tree), made when the table is made; a change applied in place
/// keeps them in step instead (`Picture::follow`).
fn counts(table: &Table) -> (Chunked<u32>, usize, usize) {
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
