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

/// The distinct trigram keys of `bytes`, sorted.
pub fn trigrams_of(bytes: &[u8]) -> Vec<u32> {
    let mut keys: Vec<u32> = bytes
        .windows(3)
        .map(|w| trigram(w[0], w[1], w[2]))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
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

    pub fn finish(self) -> Postings {
        let mut keys: Vec<u32> = self.lists.keys().copied().collect();
        keys.sort_unstable();
        let mut offsets = Vec::with_capacity(keys.len() + 1);
        let total: usize = self.lists.values().map(|(_, b)| b.len()).sum();
        let mut blob = Vec::with_capacity(total);
        let mut lists = self.lists;
        for k in &keys {
            offsets.push(blob.len() as u64);
            if let Some((_, b)) = lists.remove(k) {
                blob.extend_from_slice(&b);
            }
        }
        offsets.push(blob.len() as u64);
        Postings {
            keys,
            offsets,
            blob,
        }
    }
}

/// The finished postings: sorted keys, each key's range of the blob.
#[derive(Debug, Default)]
pub struct Postings {
    keys: Vec<u32>,
    offsets: Vec<u64>,
    blob: Vec<u8>,
}

impl Postings {
    pub fn bytes(&self) -> u64 {
        (self.keys.len() * 4 + self.offsets.len() * 8 + self.blob.len()) as u64
    }

    /// The documents holding trigram `key`.
    fn list(&self, key: u32) -> Vec<u32> {
        let Ok(i) = self.keys.binary_search(&key) else {
            return Vec::new();
        };
        let (a, b) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        let mut out = Vec::new();
        let (mut last, mut v, mut shift) = (0u32, 0u32, 0u32);
        for &byte in &self.blob[a..b] {
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

    #[test]
    fn postings_round_trip_and_answer_and_or_queries() {
        let mut b = Builder::default();
        b.add(0, &trigrams_of(b"fn needle() {}"));
        b.add(3, &trigrams_of(b"NEEDLE in caps"));
        b.add(200, &trigrams_of(b"haystack only"));
        b.add(100_000, &trigrams_of(b"a needle far away"));
        let p = b.finish();
        assert_eq!(
            p.eval(&plan("needle", false, false)),
            Some(vec![0, 3, 100_000])
        );
        assert_eq!(p.eval(&plan("hay|caps", false, false)), Some(vec![3, 200]));
        assert_eq!(p.eval(&plan("nothing", false, false)), Some(vec![]));
        assert_eq!(p.eval(&plan("e", false, false)), None);
    }

    #[test]
    fn union_and_intersection_of_sorted_lists() {
        assert_eq!(union(&[1, 3, 5], &[2, 3, 6]), vec![1, 2, 3, 5, 6]);
        assert_eq!(intersect(&[1, 3, 5], &[2, 3, 5]), vec![3, 5]);
    }
}
