//! Posting lists built from the keys of a run of documents: (key,
//! document) pairs appended as the documents come, radix-sorted by key,
//! and encoded into one blob of lists in key order ([`Sorted`]), which a
//! build writes out as a segment or merges.

use super::codec::push_varint;

/// Posting lists while they are being filled: each (key, document) pair of
/// a run of documents, appended as the documents come (in increasing
/// order) and sorted by key when the run is taken. Filling a list per key
/// instead (a table of 2^24 slots, a growing `Vec` each) spent a quarter
/// of the Linux tree's build in slot and list misses, reallocations and
/// copies; appending is a stream, and a radix sort puts each key's pairs
/// together in a few passes over memory.
#[derive(Default)]
pub struct Builder {
    /// `key << 32 | document`.
    pairs: Vec<u64>,
    /// A run's lists once written out ([`Builder::recycle`]), kept to be
    /// filled again: allocated per run, their pages were faulted in and
    /// zeroed anew each time (40 % of a Linux tree build's page faults).
    spare: Sorted,
    /// The sort's second buffer, kept between runs: one allocated per sort
    /// (as `radsort` does) was a fresh 30 MB of pages to fault in for every
    /// part, +0.4 s of system time over the Linux tree.
    scratch: Vec<u64>,
}

/// Bits of a key the sort takes per pass: two passes over 24-bit keys.
const DIGIT_BITS: u32 = 12;
const DIGITS: usize = 1 << DIGIT_BITS;

/// Sorts `pairs` by their key (bits 32..56), keeping the order of equal
/// keys: a least-significant-digit radix sort through `scratch`.
fn sort_pairs(pairs: &mut Vec<u64>, scratch: &mut Vec<u64>) {
    let digit = |p: u64, pass: u32| ((p >> (32 + pass * DIGIT_BITS)) as usize) & (DIGITS - 1);
    let mut counts = vec![[0usize; DIGITS]; 2];
    for &p in pairs.iter() {
        counts[0][digit(p, 0)] += 1;
        counts[1][digit(p, 1)] += 1;
    }
    // Every slot is written by the first pass: the buffer is only
    // resized, so the zeros of a new length are paid once, not per sort
    // (clearing it first was a 32 MB memset per run).
    scratch.resize(pairs.len(), 0);
    for (pass, count) in counts.iter_mut().enumerate() {
        let mut next = 0;
        for c in count.iter_mut() {
            (*c, next) = (next, next + *c);
        }
        for &p in pairs.iter() {
            let d = digit(p, pass as u32);
            scratch[count[d]] = p;
            count[d] += 1;
        }
        std::mem::swap(pairs, scratch);
    }
}
impl Builder {
    /// Adds document `doc` (greater than every earlier one) with its
    /// distinct keys.
    pub fn add(&mut self, doc: u32, keys: &[u32]) {
        let doc = u64::from(doc);
        (self.pairs).extend(keys.iter().map(|&k| (u64::from(k & 0xff_ffff) << 32) | doc));
    }

    /// How many (key, document) pairs are held: what taking them costs in
    /// memory (8 bytes each, twice while they are sorted).
    pub fn pairs(&self) -> usize {
        self.pairs.len()
    }

    /// The lists in key order, ready to be written.
    #[cfg(test)]
    pub fn into_sorted(mut self) -> Sorted {
        self.take_sorted()
    }

    /// The lists so far in key order, leaving the builder empty for a new
    /// run of documents (its buffer kept for the next), in the buffers of
    /// the run last given back to [`Builder::recycle`], if any.
    pub fn take_sorted(&mut self) -> Sorted {
        // Stable: a key's documents stay in the order they were added.
        sort_pairs(&mut self.pairs, &mut self.scratch);
        let mut sorted = std::mem::take(&mut self.spare);
        sorted.clear();
        sorted.blob.reserve(self.pairs.len() * 3 / 2);
        let mut key = None;
        let mut last = 0u32;
        for &p in &self.pairs {
            let (k, doc) = ((p >> 32) as u32, p as u32);
            if key != Some(k) {
                if key.is_some() {
                    sorted.ends.push(last);
                }
                sorted.keys.push(k);
                sorted.starts.push(sorted.blob.len());
                (key, last) = (Some(k), 0);
            }
            // The first document is stored as itself + 1 so that a delta
            // is never 0 and `last` needs no "none yet" state.
            push_varint(&mut sorted.blob, doc + 1 - last);
            last = doc + 1;
        }
        if key.is_some() {
            sorted.ends.push(last);
        }
        sorted.starts.push(sorted.blob.len());
        self.pairs.clear();
        sorted
    }

    /// Takes back a run of [`Builder::take_sorted`]'s that is no longer
    /// needed (written out), to fill its buffers with the next run.
    pub fn recycle(&mut self, run: Sorted) {
        self.spare = run;
    }
}

/// A builder's lists in key order, one after another in `blob`.
#[derive(Default)]
pub struct Sorted {
    pub(super) keys: Vec<u32>,
    /// Each list's last document + 1.
    pub(super) ends: Vec<u32>,
    /// Where each list starts in `blob`, and where the last one ends.
    pub(super) starts: Vec<usize>,
    pub(super) blob: Vec<u8>,
}

impl Sorted {
    fn clear(&mut self) {
        self.keys.clear();
        self.ends.clear();
        self.starts.clear();
        self.blob.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_pair_sort_orders_by_key_and_keeps_each_keys_documents_in_order(
            keys in proptest::collection::vec(prop_oneof![0u32..8, 0u32..(1 << 24)], 0..3000),
        ) {
            // Documents in the order added, as the build adds them.
            let pairs: Vec<u64> = (keys.iter().enumerate())
                .map(|(doc, &k)| (u64::from(k) << 32) | doc as u64)
                .collect();
            let mut expected = pairs.clone();
            expected.sort_by_key(|&p| p >> 32);
            let (mut sorted, mut scratch) = (pairs, Vec::new());
            sort_pairs(&mut sorted, &mut scratch);
            prop_assert_eq!(sorted, expected);
        }
    }
}
