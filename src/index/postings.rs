//! Finished trigram postings and how a search reads them: for each
//! (ASCII-lowercased) byte trigram, the sorted documents that contain it,
//! delta + varint encoded (`codec.rs`) in one blob, with the sorted keys and
//! each list's offset after it (the bytes are laid out at the top of
//! `format.rs`), held in memory or mapped from a file; a query's candidate
//! documents ([`Postings::eval`]) and what finding them costs.
//!
//! The files beside this one: `keys.rs` (a file's trigram keys),
//! `builder.rs` (lists built from a run of documents), `lists.rs` (lists in
//! key order, whatever holds them), `merge.rs` (lists of several sources
//! merged into this layout).
//!
//! Why trigrams rather than sparse n-grams: a trigram index is the one whose
//! regex planning is well understood and easy to prove sound (any literal of
//! three bytes or more yields its trigrams, see `planner.rs`), it needs no
//! corpus-trained weights, and on source code the common-trigram lists it
//! pays for compress to about a byte per entry as deltas. Sparse n-grams
//! cut the posting lists a query reads further, which matters past the
//! million-file scale Cursor works at, not at a checkout's.

use super::blocks::Checked;
use super::codec::{for_each_doc, partition_point, BitSink};
use super::planner::Query;
use fixedbitset::FixedBitSet;

/// Where the parts of written postings lie (the blob, keys and offsets of
/// `format.rs`'s layout). The blob comes first so that lists merged from
/// several sources are streamed out as they are merged, with only the keys
/// and offsets held until the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Layout {
    /// Where the blob starts in the bytes that hold it.
    pub at: usize,
    pub blob: usize,
    pub keys: usize,
}

impl Layout {
    pub fn len(&self) -> usize {
        self.blob + self.keys * 4 + (self.keys + 1) * 8
    }
}

/// Where finished postings are held.
#[derive(Debug)]
enum Store {
    /// In memory: a build whose store could not be written.
    Memory(Vec<u8>),
    /// A file mapped read-only (a generation in the store, or a build's
    /// segment): the pages belong to the page cache, not to the process's
    /// anonymous memory. Generation files are never written once complete,
    /// and are replaced by renaming a new one over, so a mapping stays
    /// valid when another process switches generations or removes the
    /// folder.
    /// With the file's block checksums when it came from the store (its
    /// lists are checked as they are first read); a build's own segment,
    /// written by this process, has none.
    Mapped(
        std::sync::Arc<memmap2::Mmap>,
        Option<std::sync::Arc<Checked>>,
    ),
}

/// The finished postings: sorted keys, each key's range of the blob (see
/// [`Layout`]).
#[derive(Debug)]
pub struct Postings {
    store: Store,
    layout: Layout,
}

impl Default for Postings {
    /// No lists: only the offset where the empty blob ends, the bytes a
    /// merge of no sources writes.
    fn default() -> Self {
        Postings {
            store: Store::Memory(0u64.to_le_bytes().to_vec()),
            layout: Layout::default(),
        }
    }
}

impl Postings {
    /// Postings held in memory, as `merge::write_merged` wrote them.
    pub fn memory(bytes: Vec<u8>, layout: Layout) -> Option<Postings> {
        let p = Postings {
            store: Store::Memory(bytes),
            layout,
        };
        p.is_sound().then_some(p)
    }

    /// Postings in a mapped file, at `layout`; `None` when their structure
    /// is not sound (keys out of order, offsets past the blob): a damaged
    /// file is never read past its end.
    pub fn mapped(map: std::sync::Arc<memmap2::Mmap>, layout: Layout) -> Option<Postings> {
        let p = Postings {
            store: Store::Mapped(map, None),
            layout,
        };
        p.is_sound().then_some(p)
    }

    /// Postings of a generation file whose keys and offsets have passed
    /// `checked` already; each list's bytes are checked when first read.
    pub fn mapped_checked(
        map: std::sync::Arc<memmap2::Mmap>,
        layout: Layout,
        checked: std::sync::Arc<Checked>,
    ) -> Option<Postings> {
        let p = Postings {
            store: Store::Mapped(map, Some(checked)),
            layout,
        };
        p.is_sound().then_some(p)
    }

    /// A list read so far failed its checksum: the file they come from is
    /// not to be used again (every answer since was "all files").
    pub fn is_damaged(&self) -> bool {
        matches!(&self.store, Store::Mapped(_, Some(c)) if c.is_damaged())
    }

    pub(super) fn bytes_all(&self) -> &[u8] {
        match &self.store {
            Store::Memory(b) => b,
            Store::Mapped(m, _) => m,
        }
    }

    fn is_sound(&self) -> bool {
        let l = self.layout;
        let Some(end) = l.at.checked_add(l.len()) else {
            return false;
        };
        if end > self.bytes_all().len() {
            return false;
        }
        let keys_ok = (1..l.keys).all(|i| self.key(i - 1) < self.key(i));
        let offs_ok = self.offset(0) == 0
            && self.offset(l.keys) == l.blob as u64
            && (1..=l.keys).all(|i| self.offset(i - 1) <= self.offset(i));
        keys_ok && offs_ok
    }

    pub fn bytes(&self) -> u64 {
        self.layout.len() as u64
    }

    pub fn is_mapped(&self) -> bool {
        matches!(self.store, Store::Mapped(..))
    }

    pub(super) fn key_count(&self) -> usize {
        self.layout.keys
    }

    pub(super) fn key(&self, i: usize) -> u32 {
        let at = self.layout.at + self.layout.blob + i * 4;
        let b = &self.bytes_all()[at..at + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    /// Where list `i` starts in the blob (`key_count()`: where the last
    /// ends).
    pub(super) fn offset(&self, i: usize) -> u64 {
        let at = self.layout.at + self.layout.blob + self.layout.keys * 4 + i * 8;
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.bytes_all()[at..at + 8]);
        u64::from_le_bytes(b)
    }

    fn blob(&self) -> &[u8] {
        &self.bytes_all()[self.layout.at..self.layout.at + self.layout.blob]
    }

    /// The bytes of list `i`; `None` when they failed their checksum.
    pub(super) fn checked_list(&self, i: usize) -> Option<&[u8]> {
        let (a, b) = (self.offset(i) as usize, self.offset(i + 1) as usize);
        let at = self.layout.at;
        if let Store::Mapped(map, Some(checked)) = &self.store {
            if !checked.check(map, at + a..at + b) {
                return None;
            }
        }
        Some(&self.blob()[a..b])
    }

    /// The mapping the postings are read from, when mapped, and where
    /// their blob starts in it: what a build's segment gives back page by
    /// page once a merge is past it (`lists.rs`).
    pub(super) fn mapping(&self) -> Option<(&memmap2::Mmap, usize)> {
        match &self.store {
            Store::Mapped(map, _) => Some((map, self.layout.at)),
            Store::Memory(_) => None,
        }
    }

    fn find(&self, key: u32) -> Option<usize> {
        let at = partition_point(self.key_count(), |i| self.key(i) < key);
        (at < self.key_count() && self.key(at) == key).then_some(at)
    }

    /// The documents of list `i` (`None`: no list, no document) below
    /// `universe`; `None` ("any document") when the list failed its
    /// checksum.
    fn list(&self, i: Option<usize>, universe: usize) -> Option<FixedBitSet> {
        let mut docs = FixedBitSet::with_capacity(universe);
        let Some(i) = i else {
            return Some(docs);
        };
        let bytes = self.checked_list(i)?;
        let mut sink = BitSink::new(docs.as_mut_slice(), universe);
        for_each_doc(bytes, |doc| sink.put(doc));
        sink.finish();
        Some(docs)
    }

    /// The encoded size of list `i` (`None`: no list).
    fn list_bytes(&self, i: Option<usize>) -> u64 {
        i.map_or(0, |i| self.offset(i + 1) - self.offset(i))
    }

    /// The documents below `universe` that may satisfy `q`, as a set: a
    /// search tests each file of the table against it in walk order, and
    /// dense lists (`static`: four of 60,000 files on the Linux tree)
    /// decode into a bitset several times faster than into sorted lists
    /// merged pairwise. `None` for "all" (also when a list it needed failed
    /// its checksum: never narrower than the truth).
    ///
    /// At most `budget` list bytes are decoded: what does not fit is taken
    /// as "all", which only widens the set. An AND decodes its cheapest
    /// parts first and stops once the next one costs more than it could
    /// save (`sched_clock_irqtime` has 17 trigrams; its two rarest leave a
    /// few dozen files, and `ime` or `ed_` would decode 50 KB each to rule
    /// out one or two).
    pub fn eval(&self, q: &Query, universe: usize, budget: &mut u64) -> Option<FixedBitSet> {
        match q {
            Query::All => None,
            Query::Tri(k) => {
                let i = self.find(*k);
                *budget = budget.checked_sub(self.list_bytes(i))?;
                self.list(i, universe)
            }
            Query::And(xs) => {
                let mut parts: Vec<(u64, &Query)> =
                    xs.iter().filter_map(|x| Some((self.cost(x)?, x))).collect();
                parts.sort_by_key(|&(cost, _)| cost);
                let mut acc: Option<FixedBitSet> = None;
                for (cost, x) in parts {
                    let left = acc.as_ref().map(|a| a.count_ones(..) as u64);
                    // A decoded byte costs about a nanosecond, a candidate
                    // file read several microseconds.
                    if left.is_some_and(|n| cost > n.max(1) * 1024) || cost > *budget {
                        break;
                    }
                    let Some(docs) = self.eval(x, universe, budget) else {
                        continue;
                    };
                    match &mut acc {
                        None => acc = Some(docs),
                        Some(a) => a.intersect_with(&docs),
                    }
                    if acc.as_ref().is_some_and(FixedBitSet::is_clear) {
                        break;
                    }
                }
                acc
            }
            Query::Or(xs) => {
                if self.cost(q)? > *budget {
                    return None;
                }
                let mut acc = FixedBitSet::with_capacity(universe);
                for x in xs {
                    acc.union_with(&self.eval(x, universe, budget)?);
                }
                Some(acc)
            }
        }
    }

    /// How many list bytes evaluating all of `q` decodes (`None` for
    /// "all").
    fn cost(&self, q: &Query) -> Option<u64> {
        match q {
            Query::All => None,
            Query::Tri(k) => Some(self.list_bytes(self.find(*k))),
            Query::And(xs) => (xs.iter().filter_map(|x| self.cost(x))).reduce(|a, b| a + b),
            Query::Or(xs) => xs.iter().map(|x| self.cost(x)).sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::builder::Builder;
    use crate::index::keys::trigrams_of;
    use crate::index::lists::write_segment;
    use crate::index::merge::{merge_in_memory, write_merged};
    use crate::index::planner::plan;

    fn sample() -> Builder {
        let mut b = Builder::default();
        b.add(0, &trigrams_of(b"fn needle() {}"));
        b.add(3, &trigrams_of(b"NEEDLE in caps"));
        b.add(200, &trigrams_of(b"haystack only"));
        b.add(100_000, &trigrams_of(b"a needle far away"));
        b
    }

    fn check(p: &Postings) {
        let q = |s: &str| plan(s, false, false);
        let eval = |s: &str, universe: usize, budget: u64| {
            let docs = p.eval(&q(s), universe, &mut { budget });
            docs.map(|d| d.ones().collect::<Vec<_>>())
        };
        let docs = |s: &str| eval(s, 100_001, u64::MAX);
        assert_eq!(docs("needle"), Some(vec![0, 3, 100_000]));
        assert_eq!(docs("hay|caps"), Some(vec![3, 200]));
        assert_eq!(docs("nothing"), Some(vec![]));
        assert_eq!(docs("e"), None);
        // Past the universe (no table entry holds document 100,000 in a
        // table of 1,000): dropped, not a panic or a huge set.
        assert_eq!(eval("needle", 1000, u64::MAX), Some(vec![0, 3]));
        // Four folded trigrams (nee, eed, edl, dle), each listing documents
        // 0, 3 and 100,000: gaps of 1, 3 and 99,997 take 1 + 1 + 3 bytes.
        // A budget for one list decodes one; for none, nothing is ruled out.
        assert_eq!(p.cost(&q("needle")), Some(4 * 5));
        assert_eq!(eval("needle", 100_001, 5), Some(vec![0, 3, 100_000]));
        assert_eq!(eval("needle", 100_001, 4), None);
        let or_cost = p.cost(&q("hay|caps")).unwrap();
        assert_eq!(eval("hay|caps", 100_001, or_cost), Some(vec![3, 200]));
        assert_eq!(
            eval("hay|caps", 100_001, or_cost - 1),
            None,
            "an OR decodes whole or not at all"
        );
        assert_eq!(p.cost(&q("e")), None);
    }

    #[test]
    fn postings_round_trip_in_memory_and_as_a_mapped_segment() {
        let sorted = sample().into_sorted();
        let p = merge_in_memory(&[&sorted]);
        assert!(!p.is_mapped());
        check(&p);
        let dir = tempfile::tempdir().unwrap();
        let seg = write_segment(dir.path(), &sorted, &mut Vec::new()).unwrap();
        assert!(seg.postings.is_mapped());
        check(&seg.postings);
        // The bytes a merge of the one run writes.
        assert_eq!(seg.postings.bytes_all(), p.bytes_all());
        // An empty run too.
        let empty = Builder::default().into_sorted();
        let seg = write_segment(dir.path(), &empty, &mut Vec::new()).unwrap();
        assert_eq!(
            seg.postings.bytes_all(),
            merge_in_memory(&[&empty]).bytes_all()
        );
        // No run at all: the empty postings.
        assert_eq!(
            Postings::default().bytes_all(),
            merge_in_memory(&[]).bytes_all()
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "unlinked once mapped"
        );
    }

    #[test]
    fn segments_merged_give_the_lists_of_one_build() {
        // The same documents, split into three runs at arbitrary points.
        let mut a = Builder::default();
        a.add(0, &trigrams_of(b"fn needle() {}"));
        let mut b = Builder::default();
        b.add(3, &trigrams_of(b"NEEDLE in caps"));
        b.add(200, &trigrams_of(b"haystack only"));
        let mut c = Builder::default();
        c.add(100_000, &trigrams_of(b"a needle far away"));
        let (a, b, c) = (a.into_sorted(), b.into_sorted(), c.into_sorted());
        let dir = tempfile::tempdir().unwrap();
        let seg_a = write_segment(dir.path(), &a, &mut Vec::new()).unwrap();
        let merged = merge_in_memory(&[&seg_a, &b, &c]);
        check(&merged);
        let whole = merge_in_memory(&[&sample().into_sorted()]);
        assert_eq!(merged.bytes(), whole.bytes(), "byte for byte the same size");
        assert_eq!(merged.bytes_all(), whole.bytes_all());
    }

    #[test]
    fn a_damaged_layout_is_refused_not_read_past_its_end() {
        let sorted = sample().into_sorted();
        let mut bytes = Vec::new();
        let layout = write_merged(&mut bytes, &[&sorted]).unwrap();
        let mut short = bytes.clone();
        short.truncate(bytes.len() - 3);
        assert!(Postings::memory(short, layout).is_none());
        let mut swapped = bytes.clone();
        // The first key's bytes overwritten with the largest key: out of order.
        let at = layout.blob;
        swapped[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Postings::memory(swapped, layout).is_none());
        assert!(Postings::memory(bytes, layout).is_some());
    }
}
