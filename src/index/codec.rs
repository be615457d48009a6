//! How one posting list is held as bytes: documents in increasing order,
//! the first as itself + 1 and every later one as the step from the one
//! before, each a varint (7 bits a byte, low groups first; the bytes of a
//! list are laid out at the top of `format.rs`). Encoding, decoding a list
//! to its documents or to a set of them, and the binary search by index
//! that finds a key among a list source's sorted keys. Below both the
//! builder and the merge, which write lists, and the reader, which decodes
//! them.

/// Appends `v` as a varint, a byte at a time: through `Write::write_all`
/// every 1-5 byte varint was a call to memmove, 15 % of a build's time on
/// the Linux tree.
pub(super) fn push_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The first of `0..n` for which `before` is false (`before` holds for a
/// first run of them): a binary search over lists by index, where there
/// is no slice to call `partition_point` on.
pub(super) fn partition_point(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// `v` as a varint: its bytes and how many of them there are.
pub(super) fn varint_bytes(v: u32) -> ([u8; 5], usize) {
    let width = (u32::BITS - v.leading_zeros()).max(1).div_ceil(7) as usize;
    (varint_bytes_in(v, width), width)
}

/// `v` as a varint of exactly `width` bytes (1 to 5, at least its own
/// length, which [`varint_bytes`] writes): high groups of zeros continue it, which every decoder reads
/// as the same value (`0x85 0x80 0x00` is 5). A merge lane that must write
/// as many bytes as its sources gave keeps a re-encoded step this wide.
pub(super) fn varint_bytes_in(mut v: u32, width: usize) -> [u8; 5] {
    let mut out = [0u8; 5];
    for (i, b) in out.iter_mut().enumerate().take(width) {
        *b = (v & 0x7f) as u8 | if i + 1 < width { 0x80 } else { 0 };
        v >>= 7;
    }
    out
}

/// The first varint of `bytes` and its length; `None` when there is none.
pub(super) fn first_varint(bytes: &[u8]) -> Option<(u32, usize)> {
    let (mut v, mut shift) = (0u32, 0u32);
    for (i, &b) in bytes.iter().enumerate().take(5) {
        v |= ((b & 0x7f) as u32).wrapping_shl(shift);
        if b & 0x80 == 0 {
            return Some((v, i + 1));
        }
        shift += 7;
    }
    None
}

/// Calls `f` with each document of a list, in order: the first entry is
/// the document + 1 itself, every later one the step from the previous.
/// A loop rather than an iterator: decoding dense lists is most of the
/// planning of a search for a common word, and the iterator's state
/// machine cost it 7 %.
///
/// Those lists' steps are nearly all one byte (`static`: four lists of
/// ~60,000 files on the Linux tree, 0.4 ms to decode): eight bytes without
/// a continuation bit are taken as eight steps at once, without a branch
/// per byte. A varint cut short at the end of the list is no step.
pub(super) fn for_each_doc(bytes: &[u8], mut f: impl FnMut(u32)) {
    let (mut last, mut i) = (0u32, 0usize);
    while i < bytes.len() {
        let eight = bytes
            .get(i..i + 8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok());
        if let Some(x) = eight.map(u64::from_le_bytes) {
            if x & 0x8080_8080_8080_8080 == 0 {
                for k in 0..8 {
                    last = last.wrapping_add((x >> (8 * k)) as u32 & 0xff);
                    f(last.wrapping_sub(1));
                }
                i += 8;
                continue;
            }
        }
        let (mut v, mut shift) = (0u32, 0u32);
        loop {
            let Some(&b) = bytes.get(i) else {
                return;
            };
            i += 1;
            v |= ((b & 0x7f) as u32).wrapping_shl(shift);
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        last = last.wrapping_add(v);
        f(last.wrapping_sub(1));
    }
}

/// Bits set a word at a time, for documents below `universe` (no table
/// entry holds one past it, so dropping it cannot rule a file out): a
/// dense list's documents mostly fall in the word of the one before, which
/// is kept in a register until they move past it (or-ing each bit into
/// memory waited on the store before, and took three quarters of a
/// `static` search's planning).
pub(super) struct BitSink<'a> {
    blocks: &'a mut [usize],
    universe: usize,
    at: usize,
    word: usize,
}

impl<'a> BitSink<'a> {
    /// Sets the bits of documents below `universe` in `blocks`.
    pub(super) fn new(blocks: &'a mut [usize], universe: usize) -> Self {
        BitSink {
            blocks,
            universe,
            at: 0,
            word: 0,
        }
    }

    #[inline]
    pub(super) fn put(&mut self, doc: u32) {
        const BITS: usize = usize::BITS as usize;
        let doc = doc as usize;
        if doc < self.universe {
            if doc / BITS != self.at {
                if let Some(b) = self.blocks.get_mut(self.at) {
                    *b |= self.word;
                }
                (self.at, self.word) = (doc / BITS, 0);
            }
            self.word |= 1 << (doc % BITS);
        }
    }

    pub(super) fn finish(self) {
        if let Some(b) = self.blocks.get_mut(self.at) {
            *b |= self.word;
        }
    }
}

/// The sum of a list's varints: its last document + 1.
pub(super) fn list_end(bytes: &[u8]) -> u32 {
    let mut end = 0u32;
    for_each_doc(bytes, |d| end = d.wrapping_add(1));
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use fixedbitset::FixedBitSet;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_lists_documents_decode_as_one_step_at_a_time(
            // Mostly one-byte steps (a dense list), some longer, and any
            // bytes at all (a list cut short or damaged).
            bytes in proptest::collection::vec(prop_oneof![
                4 => 1u8..0x80,
                1 => 0x80u8..=0xff,
                1 => any::<u8>(),
            ], 0..200),
            universe in 1usize..3000,
        ) {
            // A byte at a time, as the lists are written.
            let (mut want, mut last, mut v, mut shift) = (Vec::new(), 0u32, 0u32, 0u32);
            for &b in &bytes {
                v |= ((b & 0x7f) as u32).wrapping_shl(shift);
                if b & 0x80 != 0 {
                    shift += 7;
                    continue;
                }
                last = last.wrapping_add(v);
                (v, shift) = (0, 0);
                want.push(last.wrapping_sub(1));
            }
            let mut got = Vec::new();
            for_each_doc(&bytes, |d| got.push(d));
            prop_assert_eq!(&got, &want);
            // The same documents as bits, those past the universe dropped.
            let mut bits = FixedBitSet::with_capacity(universe);
            let mut sink = BitSink { blocks: bits.as_mut_slice(), universe, at: 0, word: 0 };
            want.iter().for_each(|&d| sink.put(d));
            sink.finish();
            let below: Vec<usize> = want.iter().map(|&d| d as usize).filter(|&d| d < universe).collect();
            prop_assert_eq!(bits.ones().collect::<Vec<_>>(), { let mut b = below; b.sort(); b.dedup(); b });
        }
    }

    proptest! {
        #[test]
        fn a_varint_made_wider_reads_as_the_same_value(v in any::<u32>(), extra in 0usize..5) {
            let (_, len) = varint_bytes(v);
            let width = (len + extra).min(5);
            let wide = varint_bytes_in(v, width);
            prop_assert_eq!(first_varint(&wide[..width]), Some((v, width)));
            // In a list: the documents around a widened step are kept.
            let step = v % (1 << 20) + 1;
            let (_, len) = varint_bytes(step);
            let width = (len + extra).min(5);
            let mut list = vec![4u8];
            list.extend_from_slice(&varint_bytes_in(step, width)[..width]);
            list.extend_from_slice(&[1; 9]);
            let mut docs = Vec::new();
            for_each_doc(&list, |d| docs.push(d));
            let want: Vec<u32> = [3, 3 + step].into_iter().chain((1..=9).map(|i| 3 + step + i)).collect();
            prop_assert_eq!(docs, want);
        }
    }
}
