//! The trigram keys of files created or changed since the generation was
//! written, read once in the background so that a search does not read
//! every new file again until the next rebuild (5,000 new files cost each
//! search of the Linux tree 3.6-10 ms against 1-2 before this).
//!
//! The files read are documents of their own, numbered by slot, with
//! in-memory posting lists (each key's slots): a search evaluates its query
//! over these lists once ([`Delta::allowed`]) and tests each new file by a
//! bit, as it tests the generation's files, instead of looking each one up
//! by path (hashing 5,000 paths was a third of such a search's CPU). The
//! picture keeps each such file's slot in its documents by entry
//! (`table::DELTA_DOC`), set only where the table's stamp of the file is
//! the one taken around the read.
//!
//! A file's keys are used only while nothing says it changed since they
//! were read: every event the watcher reports for the file (or a folder
//! above it) drops them (its slot then allows any query), a batch read
//! while such an event came in is dropped whole for that file. A slot is
//! never reused, so a slot left in the documents by entry or in a list
//! never names another file. A file with more than one link is never read
//! (a write through another name may go unreported), nor is one the
//! generation would not index (binary, transcoded, too big): those stay
//! candidates for every search, as before.

use super::planner::Query;
use crate::search::path_order::at_or_below;
use crate::search::stamp::Stamp;
use fixedbitset::FixedBitSet;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Most keys the delta's lists hold (4 bytes each, 32 MB), those of
/// dropped files included until they are swept: past it new files wait
/// for the rebuild, which the count of unindexed files starts long before
/// (1 file in 200, at least 256).
const MAX_KEYS: usize = 8 << 20;

/// Dropped files' keys are swept out of the lists once they are this many
/// and more than the live ones (a few in tests, so that they sweep).
const SWEEP_KEYS: usize = if cfg!(test) { 8 } else { 1 << 20 };

/// Most files one background batch reads.
pub(super) const BATCH: usize = 4096;

/// One file as the background read found it.
#[derive(Debug, Clone)]
pub(super) struct Read {
    /// The file's stamp, the same before and after the read.
    pub stamp: Stamp,
    /// Its distinct keys, sorted; `None`: the generation would not index it
    /// either, so it stays a candidate.
    pub keys: Option<Box<[u32]>>,
}

/// What the delta knows of one file it read.
#[derive(Debug, Clone)]
struct Known {
    stamp: Stamp,
    /// How many keys it put in the lists (`None`: not indexable).
    keys: Option<u32>,
}

/// The files read since the generation: their slots by path, and the
/// posting lists of their keys.
#[derive(Debug, Default, Clone)]
pub(super) struct Delta {
    /// Each file's slot.
    by_path: HashMap<PathBuf, u32>,
    /// What each slot read; slots are handed out in order and never reused.
    slots: Vec<Known>,
    /// The slots whose keys do not stand (dropped since, or never read):
    /// any query allows them.
    unsure: FixedBitSet,
    /// Each key's slots, ascending (dropped ones too, until swept).
    lists: HashMap<u32, Vec<u32>>,
    live_keys: usize,
    dropped_keys: usize,
}

/// A file the delta took: its path, the stamp it was read at, its slot.
pub(super) type Taken = (PathBuf, Stamp, u32);

impl Delta {
    /// The slot of the file at `path` when the delta read it at `stamp` (the
    /// table's) and its keys still stand. Only the debug check of each batch
    /// and the tests ask it: searches read slots from the documents by entry.
    #[cfg(any(test, debug_assertions))]
    pub fn slot_of(&self, path: &Path, stamp: Option<Stamp>) -> Option<u32> {
        let &s = self.by_path.get(path)?;
        let k = &self.slots[s as usize];
        (Some(k.stamp) == stamp && k.keys.is_some() && !self.unsure.contains(s as usize))
            .then_some(s)
    }

    /// Whether the keys of `slot` stand (it was not dropped since).
    #[cfg(debug_assertions)]
    pub fn stands(&self, slot: u32) -> bool {
        (slot as usize) < self.slots.len() && !self.unsure.contains(slot as usize)
    }

    /// Whether the file was read at `stamp` already.
    pub fn has(&self, path: &Path, stamp: Option<Stamp>) -> bool {
        (self.by_path.get(path)).is_some_and(|&s| Some(self.slots[s as usize].stamp) == stamp)
    }

    /// Whether there is room for more keys.
    pub fn has_room(&self) -> bool {
        self.live_keys + self.dropped_keys < MAX_KEYS
    }

    pub fn len(&self) -> usize {
        self.by_path.len()
    }

    /// The files whose keys stand, with their stamps and slots.
    pub fn keyed(&self) -> impl Iterator<Item = (&Path, Stamp, u32)> + '_ {
        (self.by_path.iter()).filter_map(|(p, &s)| {
            let k = &self.slots[s as usize];
            (k.keys.is_some() && !self.unsure.contains(s as usize)).then_some((
                p.as_path(),
                k.stamp,
                s,
            ))
        })
    }

    /// The slots `q` allows (a bit per slot): those whose keys satisfy it
    /// and every one whose keys do not stand. `None`: every slot (a query
    /// with no condition).
    pub fn allowed(&self, q: &Query) -> Option<FixedBitSet> {
        let mut s = self.eval(q)?;
        s.union_with(&self.unsure);
        Some(s)
    }

    /// The slots whose keys satisfy `q`, from the lists.
    fn eval(&self, q: &Query) -> Option<FixedBitSet> {
        let n = self.slots.len();
        match q {
            Query::All => None,
            Query::Tri(k) => {
                let mut s = FixedBitSet::with_capacity(n);
                for &x in self.lists.get(k).map_or(&[][..], Vec::as_slice) {
                    s.insert(x as usize);
                }
                Some(s)
            }
            Query::And(xs) => {
                // Shortest lists first: a rare key ends it early.
                let mut parts: Vec<&Query> = xs.iter().collect();
                parts.sort_by_cached_key(|x| self.cost(x));
                let mut sets = parts.into_iter().filter_map(|x| self.eval(x));
                let mut acc = sets.next()?;
                while !acc.is_clear() {
                    let Some(s) = sets.next() else { break };
                    acc.intersect_with(&s);
                }
                Some(acc)
            }
            Query::Or(xs) => {
                let mut acc = FixedBitSet::with_capacity(n);
                for x in xs {
                    acc.union_with(&self.eval(x)?);
                }
                Some(acc)
            }
        }
    }

    /// How many list items evaluating `q` visits (`None`: no condition).
    fn cost(&self, q: &Query) -> Option<usize> {
        match q {
            Query::All => None,
            Query::Tri(k) => Some(self.lists.get(k).map_or(0, Vec::len)),
            Query::And(xs) => (xs.iter().filter_map(|x| self.cost(x))).reduce(|a, b| a + b),
            Query::Or(xs) => xs.iter().map(|x| self.cost(x)).sum(),
        }
    }

    /// Drops what is known of `files` (reported changed) and of everything
    /// at or below `places` (listed again).
    pub fn forget(&mut self, files: &[PathBuf], places: &[PathBuf]) {
        for f in files {
            self.drop_file(f);
        }
        if !places.is_empty() && !self.by_path.is_empty() {
            let below: Vec<PathBuf> = (self.by_path.keys())
                .filter(|p| places.iter().any(|q| at_or_below(p, q)))
                .cloned()
                .collect();
            for p in below {
                self.drop_file(&p);
            }
        }
        if self.dropped_keys > SWEEP_KEYS.max(self.live_keys) {
            self.sweep();
        }
    }

    fn drop_file(&mut self, path: &Path) {
        if let Some(s) = self.by_path.remove(path) {
            if !self.unsure.put(s as usize) {
                let n = self.slots[s as usize].keys.unwrap_or(0) as usize;
                self.live_keys -= n;
                self.dropped_keys += n;
            }
        }
    }

    /// Takes the dropped files' slots out of the lists.
    fn sweep(&mut self) {
        let unsure = &self.unsure;
        for l in self.lists.values_mut() {
            l.retain(|&s| !unsure.contains(s as usize));
        }
        self.lists.retain(|_, l| !l.is_empty());
        self.dropped_keys = 0;
    }

    /// Takes a batch's reads, but none of a file that something touched
    /// (reported changed, or at or below a place listed again) since the
    /// batch started: what it read may be older than that change. Returns
    /// the files taken with keys, each with its slot.
    pub fn take(&mut self, reads: Vec<(PathBuf, Read)>, touched: &[PathBuf]) -> Vec<Taken> {
        let mut taken = Vec::new();
        for (path, read) in reads {
            if touched.iter().any(|t| at_or_below(&path, t)) || !self.has_room() {
                continue;
            }
            self.drop_file(&path);
            let s = self.slots.len() as u32;
            let keys = read.keys.as_ref().map(|k| k.len() as u32);
            self.slots.push(Known {
                stamp: read.stamp,
                keys,
            });
            self.unsure.grow(self.slots.len());
            match &read.keys {
                Some(k) => {
                    for &key in k.iter() {
                        self.lists.entry(key).or_default().push(s);
                    }
                    self.live_keys += k.len();
                    taken.push((path.clone(), read.stamp, s));
                }
                None => self.unsure.insert(s as usize),
            }
            self.by_path.insert(path, s);
        }
        taken
    }
}

/// Whether a file with the sorted `keys` satisfies `q` (the lists'
/// answer, file by file: the tests' oracle).
#[cfg(test)]
fn holds(q: &Query, keys: &[u32]) -> bool {
    match q {
        Query::All => true,
        Query::Tri(t) => keys.binary_search(t).is_ok(),
        Query::And(all) => all.iter().all(|x| holds(x, keys)),
        Query::Or(any) => any.iter().any(|x| holds(x, keys)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::keys::trigrams_of;
    use crate::index::planner::plan;

    fn stamp(size: u64) -> Stamp {
        Stamp {
            size,
            mtime: (1, 0),
            ctime: (1, 0),
            ino: 7,
            nlink: 1,
        }
    }

    fn keys_of(text: &str) -> Box<[u32]> {
        trigrams_of(text.as_bytes()).into_boxed_slice()
    }

    /// Whether a search leaves the file at `path` with the table's `stamp`
    /// a candidate, as the picture and the feed decide it: by its slot's
    /// bit in what the query allows, when its keys stand at that stamp.
    fn allows(d: &Delta, path: &Path, stamp: Option<Stamp>, q: &Query) -> bool {
        match d.slot_of(path, stamp) {
            Some(s) => d.allowed(q).is_none_or(|a| a.contains(s as usize)),
            None => true,
        }
    }

    fn delta_with(path: &str, text: &str, at: Stamp) -> Delta {
        let mut d = Delta::default();
        let read = Read {
            stamp: at,
            keys: Some(keys_of(text)),
        };
        d.take(vec![(PathBuf::from(path), read)], &[]);
        d
    }

    #[test]
    fn keys_read_at_the_tables_stamp_rule_a_file_out_and_any_other_stamp_keeps_it() {
        let d = delta_with("/t/new.c", "fn alpha_beta() {}", stamp(18));
        let p = Path::new("/t/new.c");
        let q = |s: &str| plan(s, true, false);
        assert!(allows(&d, p, Some(stamp(18)), &q("alpha_beta")));
        assert!(
            allows(&d, p, Some(stamp(18)), &plan("ALPHA_BETA", true, true)),
            "keys are folded"
        );
        assert!(!allows(&d, p, Some(stamp(18)), &q("gamma_delta")));
        assert!(
            allows(&d, p, Some(stamp(19)), &q("gamma_delta")),
            "another stamp: read it"
        );
        assert!(allows(&d, p, None, &q("gamma_delta")));
        assert!(allows(
            &d,
            Path::new("/t/other.c"),
            Some(stamp(18)),
            &q("gamma_delta")
        ));
        // Alternatives: one of them is enough.
        assert!(allows(
            &d,
            p,
            Some(stamp(18)),
            &plan("gamma|alpha", false, false)
        ));
        assert!(!allows(
            &d,
            p,
            Some(stamp(18)),
            &plan("gamma|delta", false, false)
        ));
    }

    #[test]
    fn a_file_not_indexable_stays_a_candidate() {
        let mut d = Delta::default();
        let read = Read {
            stamp: stamp(3),
            keys: None,
        };
        d.take(vec![(PathBuf::from("/t/bin"), read)], &[]);
        assert!(d.has(Path::new("/t/bin"), Some(stamp(3))));
        assert!(allows(
            &d,
            Path::new("/t/bin"),
            Some(stamp(3)),
            &plan("zzz_qqq", true, false)
        ));
    }

    #[test]
    fn a_change_drops_the_keys_and_a_batch_read_across_a_change_is_not_taken() {
        let q = plan("gamma_delta", true, false);
        let mut d = delta_with("/t/a/new.c", "alpha", stamp(5));
        d.forget(&[PathBuf::from("/t/a/new.c")], &[]);
        assert!(allows(&d, Path::new("/t/a/new.c"), Some(stamp(5)), &q));
        let mut d = delta_with("/t/a/new.c", "alpha", stamp(5));
        d.forget(&[], &[PathBuf::from("/t/a")]);
        assert_eq!(d.len(), 0, "a place above the file drops it");
        let mut d = delta_with("/t/ab/new.c", "alpha", stamp(5));
        d.forget(&[], &[PathBuf::from("/t/a")]);
        assert_eq!(
            d.len(),
            1,
            "a sibling whose name starts the same is not above it"
        );
        let mut d = Delta::default();
        let read = Read {
            stamp: stamp(5),
            keys: Some(keys_of("alpha")),
        };
        d.take(
            vec![(PathBuf::from("/t/a/new.c"), read)],
            &[PathBuf::from("/t/a")],
        );
        assert_eq!(d.len(), 0, "touched while the batch read");
        assert_eq!(d.live_keys, 0);
    }

    proptest::proptest! {
        /// Over random files, some dropped and read again with other text:
        /// the lists allow a file exactly when its keys satisfy the query
        /// (the oracle tests them file by file), and every dropped one.
        #[test]
        fn the_lists_allow_what_each_files_keys_allow_and_every_dropped_file(
            texts in proptest::collection::vec("[abc_]{0,10}", 1..12),
            drops in proptest::collection::vec(proptest::prelude::any::<bool>(), 12),
            again in "[abc_]{0,10}",
            pattern in "[abc_]{3,5}(\\|[abc_]{3,5})?",
            fold in proptest::prelude::any::<bool>(),
        ) {
            let path = |i: usize| PathBuf::from(format!("/t/f{i}"));
            let read = |i: usize, text: &str| Read { stamp: stamp(i as u64), keys: Some(keys_of(text)) };
            let mut d = Delta::default();
            let reads = texts.iter().enumerate().map(|(i, t)| (path(i), read(i, t))).collect();
            let first = d.take(reads, &[]);
            proptest::prop_assert_eq!(first.len(), texts.len());
            let dropped: Vec<PathBuf> = (0..texts.len()).filter(|&i| drops[i]).map(path).collect();
            d.forget(&dropped, &[]);
            let second = d.take(dropped.iter().map(|p| (p.clone(), read(99, &again))).collect(), &[]);
            let q = plan(&pattern, false, fold);
            let allowed = d.allowed(&q);
            let allows = |s: u32| allowed.as_ref().is_none_or(|a| a.contains(s as usize));
            for (i, t) in texts.iter().enumerate() {
                let (_, _, s) = first[i];
                proptest::prop_assert_eq!(allows(s), drops[i] || holds(&q, &keys_of(t)), "file {}", i);
            }
            for (_, _, s) in second {
                proptest::prop_assert_eq!(allows(s), holds(&q, &keys_of(&again)));
                proptest::prop_assert_eq!(d.slot_of(&path(0), Some(stamp(99))).is_some(), drops[0]);
            }
        }
    }
}
