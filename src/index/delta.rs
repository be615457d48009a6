//! The trigram keys of files created or changed since the generation was
//! written, read once in the background so that a search does not read
//! every new file again until the next rebuild (5,000 new files cost each
//! search of the Linux tree 3.6-10 ms against 1-2 before this).
//!
//! A file's keys are used only while nothing says it changed since they
//! were read: every event the watcher reports for the file (or a folder
//! above it) drops them, a batch read while such an event came in is
//! dropped whole for that file, and the table's stamp of the file must
//! still be the one taken around the read. A file with more than one link
//! is never read (a write through another name may go unreported), nor is
//! one the generation would not index (binary, transcoded, too big): those
//! stay candidates for every search, as before.

use super::planner::Query;
use crate::search::path_order::at_or_below;
use crate::search::stamp::Stamp;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Most keys the delta holds (4 bytes each, 32 MB): past it new files
/// wait for the rebuild, which the count of unindexed files starts long
/// before (1 file in 200, at least 256).
const MAX_KEYS: usize = 8 << 20;

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

/// The keys of the files read since the generation, by path.
#[derive(Debug, Default, Clone)]
pub(super) struct Delta {
    files: HashMap<PathBuf, Read>,
    keys: usize,
}

impl Delta {
    /// Whether the file at `path` with the table's `stamp` may hold a match
    /// of `q`: `true` unless its keys, read at that very stamp, rule it out.
    pub fn allows(&self, path: &Path, stamp: Option<Stamp>, q: &Query) -> bool {
        match self.files.get(path) {
            Some(Read {
                stamp: read_at,
                keys: Some(keys),
            }) if stamp == Some(*read_at) => holds(q, keys),
            _ => true,
        }
    }

    /// Whether the file was read at `stamp` already.
    pub fn has(&self, path: &Path, stamp: Option<Stamp>) -> bool {
        self.files.get(path).is_some_and(|r| Some(r.stamp) == stamp)
    }

    /// Whether there is room for more keys.
    pub fn has_room(&self) -> bool {
        self.keys < MAX_KEYS
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Drops what is known of `files` (reported changed) and of everything
    /// at or below `places` (listed again).
    pub fn forget(&mut self, files: &[PathBuf], places: &[PathBuf]) {
        for f in files {
            self.drop_file(f);
        }
        if places.is_empty() || self.files.is_empty() {
            return;
        }
        let below: Vec<PathBuf> = (self.files.keys())
            .filter(|p| places.iter().any(|q| at_or_below(p, q)))
            .cloned()
            .collect();
        for p in below {
            self.drop_file(&p);
        }
    }

    fn drop_file(&mut self, path: &Path) {
        if let Some(r) = self.files.remove(path) {
            self.keys -= r.keys.map_or(0, |k| k.len());
        }
    }

    /// Takes a batch's reads, but none of a file that something touched
    /// (reported changed, or at or below a place listed again) since the
    /// batch started: what it read may be older than that change.
    pub fn take(&mut self, reads: Vec<(PathBuf, Read)>, touched: &[PathBuf]) {
        for (path, read) in reads {
            if touched.iter().any(|t| at_or_below(&path, t)) || !self.has_room() {
                continue;
            }
            self.drop_file(&path);
            self.keys += read.keys.as_ref().map_or(0, |k| k.len());
            self.files.insert(path, read);
        }
    }
}

/// Whether a file with the sorted `keys` satisfies `q`.
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
        assert!(d.allows(p, Some(stamp(18)), &q("alpha_beta")));
        assert!(
            d.allows(p, Some(stamp(18)), &plan("ALPHA_BETA", true, true)),
            "keys are folded"
        );
        assert!(!d.allows(p, Some(stamp(18)), &q("gamma_delta")));
        assert!(
            d.allows(p, Some(stamp(19)), &q("gamma_delta")),
            "another stamp: read it"
        );
        assert!(d.allows(p, None, &q("gamma_delta")));
        assert!(d.allows(Path::new("/t/other.c"), Some(stamp(18)), &q("gamma_delta")));
        // Alternatives: one of them is enough.
        assert!(d.allows(p, Some(stamp(18)), &plan("gamma|alpha", false, false)));
        assert!(!d.allows(p, Some(stamp(18)), &plan("gamma|delta", false, false)));
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
        assert!(d.allows(
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
        assert!(d.allows(Path::new("/t/a/new.c"), Some(stamp(5)), &q));
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
        assert_eq!(d.keys, 0);
    }
}
