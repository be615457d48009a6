//! Trigram keys of a file's bytes: each window of three (ASCII-lowercased)
//! bytes as a 24-bit key, every distinct key of a file collected once. What
//! the build reads of each file, and what the delta keeps of a new one.

use super::planner::fold;

/// Deduplicates trigram keys with one flag byte per possible key (16 MiB
/// of address space, zeroed lazily; the flags a file sets are cleared after
/// it), so a file's keys are collected without a vector as long as the
/// file: on the Linux tree that vector, one per reader thread and file,
/// made the build's peak memory several times the postings' size.
///
/// A byte rather than a bit per key: with a bit, every window is a
/// read-modify-write of a word shared by 64 keys (1.5 against 1.1 ns a
/// byte over the Linux tree's files, on one thread).
pub struct KeySet {
    /// An array rather than a `Vec`: an index masked to 24 bits needs no
    /// bounds check.
    seen: Box<[u8; 1 << 24]>,
    /// One block of the file, folded, plus a byte of padding.
    folded: Vec<u8>,
    /// Where a file's keys are collected, kept between files; the first
    /// `n` are the file's so far.
    keys: Vec<u32>,
    n: usize,
}

impl Default for KeySet {
    fn default() -> Self {
        // Made on the heap, zeroed by the allocator (lazily, by the kernel),
        // never on the stack; the length is right by construction.
        let seen = vec![0u8; 1 << 24].into_boxed_slice().try_into();
        KeySet {
            seen: seen.unwrap_or_else(|_| unreachable!()),
            folded: Vec::new(),
            keys: Vec::new(),
            n: 0,
        }
    }
}

/// Bytes folded at a time: the folded block stays in the core's first-level
/// cache (32 KiB here) while its windows are read.
const FOLD_BLOCK: usize = 1 << 14;

impl KeySet {
    /// The distinct trigram keys of `bytes`, in the order they first occur
    /// (the lists they are added to are found by a table, so sorting them
    /// bought nothing). Valid until the next call.
    #[cfg(test)]
    pub fn keys_of(&mut self, bytes: &[u8]) -> &[u32] {
        self.fold_in(bytes);
        self.finish()
    }

    /// Adds the keys of the windows that lie wholly in `bytes` to the
    /// file's so far. A file read in pieces is folded piece by piece, each
    /// piece starting with the last two bytes of the one before, so that
    /// the windows across a piece's end are folded too.
    ///
    /// Each block is folded first (a loop the compiler vectorizes), and each
    /// window's key is then one big-endian load of four folded bytes,
    /// shifted: sliding the key a byte at a time (`k << 8 | byte`) chained
    /// every window to the one before, a dependency that alone cost 1 ns a
    /// byte. Every key is written at the end of the list and kept only when
    /// its flag was clear, without a branch on "seen already" (taken about
    /// half the time on source text, so mispredicted as often).
    pub fn fold_in(&mut self, bytes: &[u8]) {
        let mut n = self.n;
        let mut start = 0usize;
        while start + 3 <= bytes.len() {
            // Windows starting in start..end; their bytes end at end + 2.
            let end = (start + FOLD_BLOCK).min(bytes.len() - 2);
            self.folded.clear();
            (self.folded).extend(bytes[start..end + 2].iter().map(|&b| fold(b)));
            self.folded.push(0);
            // The list grows with the distinct keys (at most 2^24) plus one
            // block, not with the file. Only ever lengthened: cut back to
            // one block per file, its zeros were written again for every
            // key kept (a memset of 500 MB over the Linux tree).
            if self.keys.len() < n + (end - start) {
                self.keys.resize(n + (end - start), 0);
            }
            // Borrowed once, before the loop: through `self`, every store
            // to a flag (a byte, which may alias anything) made the loop
            // reload the vectors' pointers, 20 % of its time.
            let (seen, keys) = (&mut *self.seen, &mut self.keys[n..]);
            let mut added = 0;
            for w in self.folded.windows(4) {
                let k = u32::from_be_bytes([w[0], w[1], w[2], w[3]]) >> 8;
                let slot = k as usize & 0xff_ffff;
                let was_seen = seen[slot];
                seen[slot] = 1;
                keys[added] = k;
                added += (was_seen == 0) as usize;
            }
            n += added;
            start = end;
        }
        self.n = n;
    }

    /// The file's distinct keys, in the order they first occur; the set is
    /// left clean for the next file. Valid until the next call.
    pub fn finish(&mut self) -> &[u32] {
        let n = std::mem::take(&mut self.n);
        for &k in &self.keys[..n] {
            self.seen[k as usize & 0xff_ffff] = 0;
        }
        &self.keys[..n]
    }
}

/// The distinct trigram keys of `bytes`, sorted (for tests and one-offs).
#[cfg(test)]
pub fn trigrams_of(bytes: &[u8]) -> Vec<u32> {
    let mut keys = KeySet::default().keys_of(bytes).to_vec();
    keys.sort_unstable();
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::planner::trigram;
    use proptest::prelude::*;

    /// `keys_of` gives its keys in no set order.
    fn sorted(keys: &[u32]) -> Vec<u32> {
        let mut keys = keys.to_vec();
        keys.sort_unstable();
        keys
    }

    /// Every window's key, sorted and deduplicated: what `keys_of` must give.
    fn plainly(bytes: &[u8]) -> Vec<u32> {
        let mut keys: Vec<u32> = bytes
            .windows(3)
            .map(|w| trigram(w[0], w[1], w[2]))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    proptest! {
        #[test]
        fn keys_of_gives_every_distinct_window_once(
            bytes in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'B'), Just(0u8), Just(0xffu8), any::<u8>()], 0..300),
        ) {
            let mut set = KeySet::default();
            prop_assert_eq!(sorted(set.keys_of(&bytes)), plainly(&bytes));
            // The set is left clean for the next file.
            prop_assert_eq!(sorted(set.keys_of(&bytes)), plainly(&bytes));
        }
    }

    proptest! {
        #[test]
        fn folding_in_pieces_gives_the_keys_of_the_whole(
            bytes in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'B'), any::<u8>()], 0..300),
            cuts in proptest::collection::vec(0usize..300, 0..6),
        ) {
            // Pieces as the build reads them: each after the first starts
            // with the last two bytes of the one before.
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort_unstable();
            // Every piece but the last holds at least two new bytes.
            let mut set = KeySet::default();
            let mut start = 0;
            for &cut in cuts.iter().filter(|&&c| c + 2 <= bytes.len()) {
                if cut >= start + 2 {
                    set.fold_in(&bytes[start.saturating_sub(2)..cut]);
                    start = cut;
                }
            }
            set.fold_in(&bytes[start.saturating_sub(2)..]);
            prop_assert_eq!(sorted(set.finish()), plainly(&bytes));
            prop_assert_eq!(sorted(set.keys_of(&bytes)), plainly(&bytes));
        }
    }

    #[test]
    fn a_file_longer_than_a_block_keeps_the_windows_across_block_ends() {
        let bytes: Vec<u8> = (0..200_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let mut set = KeySet::default();
        assert_eq!(sorted(set.keys_of(&bytes)), plainly(&bytes));
        // A last block of zero to three windows, or the first block's end.
        for len in FOLD_BLOCK..FOLD_BLOCK + 5 {
            let part = &bytes[..len];
            assert_eq!(sorted(set.keys_of(part)), plainly(part), "{len} bytes");
        }
        assert_eq!(set.keys_of(b"ab"), &[] as &[u32]);
        assert_eq!(set.keys_of(b"abc"), plainly(b"abc"));
    }
}
