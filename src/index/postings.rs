//! Trigram postings: for each (ASCII-lowercased) byte trigram, the sorted
//! documents that contain it, delta + varint encoded in one blob.
//!
//! Why trigrams rather than sparse n-grams: a trigram index is the one whose
//! regex planning is well understood and easy to prove sound (any literal of
//! three bytes or more yields its trigrams, see `planner.rs`), it needs no
//! corpus-trained weights, and on source code the common-trigram lists it
//! pays for compress to about a byte per entry as deltas. Sparse n-grams
//! cut the posting lists a query reads further, which matters past the
//! million-file scale Cursor works at, not at a checkout's.

use super::planner::{trigram, Query};
use std::collections::HashMap;

/// Files larger than this are not read for the index: they stay candidates
/// for every search (the searcher reads them as the scan would).
pub const MAX_INDEXED_BYTES: u64 = 16 << 20;

/// Deduplicates trigram keys with one bit per possible key (2 MiB), so a
/// file's keys are collected without a vector as long as the file: on the
/// Linux tree that vector, one per reader thread and file, made the build's
/// peak memory several times the postings' size.
pub struct KeySet {
    bits: Vec<u64>,
}

impl Default for KeySet {
    fn default() -> Self {
        KeySet {
            bits: vec![0; (1 << 24) / 64],
        }
    }
}

impl KeySet {
    /// The distinct trigram keys of `bytes`, sorted.
    pub fn keys_of(&mut self, bytes: &[u8]) -> Vec<u32> {
        let mut keys = Vec::new();
        for w in bytes.windows(3) {
            let k = trigram(w[0], w[1], w[2]);
            let (word, bit) = ((k >> 6) as usize, 1u64 << (k & 63));
            if self.bits[word] & bit == 0 {
                self.bits[word] |= bit;
                keys.push(k);
            }
        }
        for &k in &keys {
            self.bits[(k >> 6) as usize] = 0;
        }
        keys.sort_unstable();
        keys
    }
}

/// The distinct trigram keys of `bytes`, sorted (for tests and one-offs).
#[cfg(test)]
pub fn trigrams_of(bytes: &[u8]) -> Vec<u32> {
    KeySet::default().keys_of(bytes)
}

/// Posting lists while they are being filled, documents in increasing order.
#[derive(Default)]
pub struct Builder {
    lists: HashMap<u32, (u32, Vec<u8>)>,
}

fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

impl Builder {
    /// Adds document `doc` (greater than every earlier one) with its keys.
    pub fn add(&mut self, doc: u32, keys: &[u32]) {
        for &k in keys {
            let (last, bytes) = self.lists.entry(k).or_insert((0, Vec::new()));
            // The first document is stored as itself + 1 so that a delta is
            // never 0 and `last` needs no "none yet" state.
            put_varint(bytes, doc + 1 - *last);
            *last = doc + 1;
        }
    }

    /// The finished postings, streamed into a mapped file in `dir` when one
    /// is given (so the build never holds a second copy of the lists), else
    /// or on failure held in memory.
    pub fn finish(self, dir: Option<&std::path::Path>) -> Postings {
        use std::io::Write;
        let mut keys: Vec<u32> = self.lists.keys().copied().collect();
        keys.sort_unstable();
        let mut offsets = Vec::with_capacity(keys.len() + 1);
        let mut at = 0u64;
        for k in &keys {
            offsets.push(at);
            at += self.lists.get(k).map_or(0, |(_, b)| b.len() as u64);
        }
        offsets.push(at);
        if let Some(dir) = dir {
            let len = HEADER + keys.len() * 4 + offsets.len() * 8 + at as usize;
            let written = write_mapped(dir, len, |w| {
                write_head(w, &keys, &offsets)?;
                for k in &keys {
                    if let Some((_, b)) = self.lists.get(k) {
                        w.write_all(b)?;
                    }
                }
                Ok(())
            });
            if let Ok(map) = written {
                return Postings {
                    store: Store::Mapped {
                        map,
                        keys: keys.len(),
                    },
                };
            }
        }
        let mut blob = Vec::with_capacity(at as usize);
        let mut lists = self.lists;
        for k in &keys {
            if let Some((_, b)) = lists.remove(k) {
                blob.extend_from_slice(&b);
            }
        }
        Postings::memory(keys, offsets, blob)
    }
}

fn write_head(w: &mut impl std::io::Write, keys: &[u32], offsets: &[u64]) -> std::io::Result<()> {
    w.write_all(MAGIC)?;
    w.write_all(&(keys.len() as u64).to_le_bytes())?;
    for k in keys {
        w.write_all(&k.to_le_bytes())?;
    }
    for o in offsets {
        w.write_all(&o.to_le_bytes())?;
    }
    Ok(())
}

/// Writes a new file in `dir` (mode 0700, created if needed) with `write`,
/// maps it, and unlinks it at once: the mapping stays valid, the pages stay
/// off the process's heap, and nothing is left on disk for a crash to strand
/// or another user to read.
fn write_mapped(
    dir: &std::path::Path,
    len: usize,
    write: impl FnOnce(&mut std::io::BufWriter<&std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<memmap2::Mmap> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("postings-{}-{seq}", std::process::id()));
    let result = (|| {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, &f);
        write(&mut w)?;
        w.flush()?;
        drop(w);
        // SAFETY: the file is ours (created just now, mode 0600, unlinked
        // below) and never written again, so the mapping cannot change
        // under us.
        let map = unsafe { memmap2::Mmap::map(&f)? };
        if map.len() != len || &map[..8] != MAGIC {
            return Err(std::io::Error::other("postings file came back short"));
        }
        Ok(map)
    })();
    let _ = std::fs::remove_file(&path);
    result
}

/// Where the finished postings are held.
#[derive(Debug)]
enum Store {
    /// In memory: before they are written out, or when they could not be.
    Memory {
        keys: Vec<u32>,
        offsets: Vec<u64>,
        blob: Vec<u8>,
    },
    /// A file mapped read-only: the pages belong to the page cache, not to
    /// the process's anonymous memory.
    Mapped { map: memmap2::Mmap, keys: usize },
}

/// The finished postings: sorted keys, each key's range of the blob.
///
/// File layout (little-endian): magic, key count (u64), the keys (u32
/// each), key count + 1 offsets (u64 each) into the blob, the blob.
#[derive(Debug)]
pub struct Postings {
    store: Store,
}

impl Default for Postings {
    fn default() -> Self {
        Postings {
            store: Store::Memory {
                keys: Vec::new(),
                offsets: vec![0],
                blob: Vec::new(),
            },
        }
    }
}

const MAGIC: &[u8; 8] = b"PIUIDX01";
const HEADER: usize = 16;

impl Postings {
    fn memory(keys: Vec<u32>, offsets: Vec<u64>, blob: Vec<u8>) -> Postings {
        Postings {
            store: Store::Memory {
                keys,
                offsets,
                blob,
            },
        }
    }

    pub fn bytes(&self) -> u64 {
        match &self.store {
            Store::Memory {
                keys,
                offsets,
                blob,
            } => (keys.len() * 4 + offsets.len() * 8 + blob.len()) as u64,
            Store::Mapped { map, .. } => map.len() as u64,
        }
    }

    pub fn is_mapped(&self) -> bool {
        matches!(self.store, Store::Mapped { .. })
    }

    fn key_count(&self) -> usize {
        match &self.store {
            Store::Memory { keys, .. } => keys.len(),
            Store::Mapped { keys, .. } => *keys,
        }
    }

    fn key(&self, i: usize) -> u32 {
        match &self.store {
            Store::Memory { keys, .. } => keys[i],
            Store::Mapped { map, .. } => {
                let at = HEADER + i * 4;
                u32::from_le_bytes([map[at], map[at + 1], map[at + 2], map[at + 3]])
            }
        }
    }

    fn offset(&self, i: usize) -> u64 {
        match &self.store {
            Store::Memory { offsets, .. } => offsets[i],
            Store::Mapped { map, keys } => {
                let at = HEADER + keys * 4 + i * 8;
                let mut b = [0u8; 8];
                b.copy_from_slice(&map[at..at + 8]);
                u64::from_le_bytes(b)
            }
        }
    }

    fn blob(&self) -> &[u8] {
        match &self.store {
            Store::Memory { blob, .. } => blob,
            Store::Mapped { map, keys } => &map[HEADER + keys * 4 + (keys + 1) * 8..],
        }
    }

    /// Moves in-memory postings to a mapped file in `dir` (see
    /// [`write_mapped`]); on failure they stay in memory.
    #[cfg(test)]
    pub fn move_to_disk(&mut self, dir: &std::path::Path) -> std::io::Result<()> {
        use std::io::Write;
        let Store::Memory {
            keys,
            offsets,
            blob,
        } = &self.store
        else {
            return Ok(());
        };
        let len = HEADER + keys.len() * 4 + offsets.len() * 8 + blob.len();
        let map = write_mapped(dir, len, |w| {
            write_head(w, keys, offsets)?;
            w.write_all(blob)
        })?;
        self.store = Store::Mapped {
            map,
            keys: keys.len(),
        };
        Ok(())
    }

    /// An upper bound on how many documents `q` can match, from the lists'
    /// encoded sizes (an entry takes at least one byte), without decoding
    /// them: a query that cannot be narrowed enough is given up cheaply.
    pub fn estimate(&self, q: &Query) -> Option<u64> {
        match q {
            Query::All => None,
            Query::Tri(k) => Some(
                self.find(*k)
                    .map_or(0, |i| self.offset(i + 1) - self.offset(i)),
            ),
            Query::And(xs) => xs.iter().filter_map(|x| self.estimate(x)).min(),
            Query::Or(xs) => xs.iter().map(|x| self.estimate(x)).sum(),
        }
    }

    fn find(&self, key: u32) -> Option<usize> {
        let (mut lo, mut hi) = (0usize, self.key_count());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.key(mid) < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (lo < self.key_count() && self.key(lo) == key).then_some(lo)
    }

    /// The documents holding trigram `key`.
    fn list(&self, key: u32) -> Vec<u32> {
        let Some(i) = self.find(key) else {
            return Vec::new();
        };
        let (a, b) = (self.offset(i) as usize, self.offset(i + 1) as usize);
        let mut out = Vec::new();
        let (mut last, mut v, mut shift) = (0u32, 0u32, 0u32);
        for &byte in &self.blob()[a..b] {
            v |= ((byte & 0x7f) as u32) << shift;
            if byte & 0x80 != 0 {
                shift += 7;
                continue;
            }
            last += v;
            out.push(last - 1);
            (v, shift) = (0, 0);
        }
        out
    }

    /// The documents that may satisfy `q`, sorted; `None` for "all".
    pub fn eval(&self, q: &Query) -> Option<Vec<u32>> {
        match q {
            Query::All => None,
            Query::Tri(k) => Some(self.list(*k)),
            Query::And(xs) => {
                let mut acc: Option<Vec<u32>> = None;
                for x in xs {
                    if let Some(docs) = self.eval(x) {
                        acc = Some(match acc {
                            None => docs,
                            Some(a) => intersect(&a, &docs),
                        });
                        if acc.as_ref().is_some_and(|a| a.is_empty()) {
                            break;
                        }
                    }
                }
                acc
            }
            Query::Or(xs) => {
                let mut acc: Vec<u32> = Vec::new();
                for x in xs {
                    acc = union(&acc, &self.eval(x)?);
                }
                Some(acc)
            }
        }
    }
}

fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let take_a = j >= b.len() || (i < a.len() && a[i] <= b[j]);
        let v = if take_a { a[i] } else { b[j] };
        if take_a {
            i += 1;
            if j < b.len() && b[j] == v {
                j += 1;
            }
        } else {
            j += 1;
        }
        out.push(v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
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
        assert_eq!(p.eval(&q("needle")), Some(vec![0, 3, 100_000]));
        assert_eq!(p.eval(&q("hay|caps")), Some(vec![3, 200]));
        assert_eq!(p.eval(&q("nothing")), Some(vec![]));
        assert_eq!(p.eval(&q("e")), None);
        let bound = p.estimate(&q("needle")).unwrap();
        assert!(
            (3..=5).contains(&bound),
            "an upper bound from the bytes: {bound}"
        );
        assert_eq!(p.estimate(&q("e")), None);
    }

    #[test]
    fn postings_round_trip_in_memory_and_as_a_mapped_file() {
        let mut p = sample().finish(None);
        assert!(!p.is_mapped());
        check(&p);
        let bytes = p.bytes();
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("index/root");
        p.move_to_disk(&sub).unwrap();
        assert!(p.is_mapped());
        check(&p);
        assert_eq!(p.bytes(), bytes + 16, "the header is all the file adds");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&sub).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert_eq!(
            std::fs::read_dir(&sub).unwrap().count(),
            0,
            "unlinked once mapped"
        );

        let streamed = sample().finish(Some(&sub));
        assert!(streamed.is_mapped());
        check(&streamed);
    }

    #[test]
    fn postings_that_cannot_be_written_stay_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, "x").unwrap();
        let p = sample().finish(Some(&file.join("below-a-file")));
        assert!(!p.is_mapped());
        check(&p);
    }

    #[test]
    fn union_and_intersection_of_sorted_lists() {
        assert_eq!(union(&[1, 3, 5], &[2, 3, 6]), vec![1, 2, 3, 5, 6]);
        assert_eq!(intersect(&[1, 3, 5], &[2, 3, 5]), vec![3, 5]);
    }
}
