//! Trigram postings: for each (ASCII-lowercased) byte trigram, the sorted
//! documents that contain it, delta + varint encoded in one blob (the bytes
//! are laid out at the top of `format.rs`).
//!
//! Why trigrams rather than sparse n-grams: a trigram index is the one whose
//! regex planning is well understood and easy to prove sound (any literal of
//! three bytes or more yields its trigrams, see `planner.rs`), it needs no
//! corpus-trained weights, and on source code the common-trigram lists it
//! pays for compress to about a byte per entry as deltas. Sparse n-grams
//! cut the posting lists a query reads further, which matters past the
//! million-file scale Cursor works at, not at a checkout's.

use super::blocks::Checked;
use super::merge::{unlinked_file, write_merged};
use super::planner::{fold, Query};
use fixedbitset::FixedBitSet;

/// Files larger than this are not read for the index: they stay candidates
/// for every search (the searcher reads them as the scan would). Files are
/// folded a piece at a time (`KeySet::fold_in`), so this bounds the time a
/// file costs the build, not the build's memory: at 16 MiB the Linux tree's
/// 24 MB `dcn_3_2_0_sh_mask.h` was read by every search, 5 of the 6 ms a
/// rare literal took through the index.
pub const MAX_INDEXED_BYTES: u64 = 64 << 20;

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

/// Appends `v` as a varint, a byte at a time: through `Write::write_all`
/// every 1-5 byte varint was a call to memmove, 15 % of a build's time on
/// the Linux tree.
fn push_varint(out: &mut Vec<u8>, mut v: u32) {
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
fn for_each_doc(bytes: &[u8], mut f: impl FnMut(u32)) {
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
struct BitSink<'a> {
    blocks: &'a mut [usize],
    universe: usize,
    at: usize,
    word: usize,
}

impl BitSink<'_> {
    #[inline]
    fn put(&mut self, doc: u32) {
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

    fn finish(self) {
        if let Some(b) = self.blocks.get_mut(self.at) {
            *b |= self.word;
        }
    }
}

/// The sum of a list's varints: its last document + 1.
fn list_end(bytes: &[u8]) -> u32 {
    let mut end = 0u32;
    for_each_doc(bytes, |d| end = d.wrapping_add(1));
    end
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
    keys: Vec<u32>,
    /// Each list's last document + 1.
    ends: Vec<u32>,
    /// Where each list starts in `blob`, and where the last one ends.
    starts: Vec<usize>,
    blob: Vec<u8>,
}

impl Sorted {
    fn clear(&mut self) {
        self.keys.clear();
        self.ends.clear();
        self.starts.clear();
        self.blob.clear();
    }
}

/// Posting lists in key order, whatever holds them: what a merge
/// (`merge.rs`) reads, from several threads at once.
pub trait ListSource: Sync {
    fn key_count(&self) -> usize;
    fn key(&self, i: usize) -> u32;
    /// `None`: the list's bytes failed their checksum.
    fn list(&self, i: usize) -> Option<&[u8]>;
    /// Bytes these lists take written out (an upper bound on their share
    /// of a merge).
    fn size(&self) -> u64;
    /// List `i`'s last document + 1, given its `bytes`: where the next
    /// source's list of the key continues from. Decoded unless the source
    /// kept it (decoding every list but the last source's was most of
    /// merging a big build's parts).
    fn end(&self, _i: usize, bytes: &[u8]) -> u32 {
        list_end(bytes)
    }
    /// Where list `i` starts among the source's list bytes (`key_count()`:
    /// where the last ends): how a merge splits the keys and paces what it
    /// gives back.
    fn list_start(&self, i: usize) -> u64;
    /// Lists `from..to` will not be asked for again (a merge is past them):
    /// a source may let their memory go.
    fn done_between(&self, _from: usize, _to: usize) {}
}

impl ListSource for Sorted {
    fn key_count(&self) -> usize {
        self.keys.len()
    }
    fn key(&self, i: usize) -> u32 {
        self.keys[i]
    }
    fn list(&self, i: usize) -> Option<&[u8]> {
        Some(&self.blob[self.starts[i]..self.starts[i + 1]])
    }
    fn size(&self) -> u64 {
        (self.blob.len() + self.keys.len() * 12 + 8) as u64
    }
    fn end(&self, i: usize, _bytes: &[u8]) -> u32 {
        self.ends[i]
    }
    fn list_start(&self, i: usize) -> u64 {
        self.starts[i] as u64
    }
}

/// A build's part written out and mapped ([`write_segment`]), with each
/// list's end kept from the builder.
pub struct Segment {
    postings: Postings,
    ends: Vec<u32>,
    /// Bytes of the mapping given back so far (see `done_between`).
    released: std::sync::atomic::AtomicUsize,
}

/// A merge drops a segment's pages behind it in steps of this many bytes.
pub(super) const DROP_STEP: usize = 1 << 20;

impl ListSource for Segment {
    fn key_count(&self) -> usize {
        self.postings.key_count()
    }
    fn key(&self, i: usize) -> u32 {
        self.postings.key(i)
    }
    fn list(&self, i: usize) -> Option<&[u8]> {
        ListSource::list(&self.postings, i)
    }
    fn size(&self) -> u64 {
        self.postings.bytes()
    }
    fn end(&self, i: usize, _bytes: &[u8]) -> u32 {
        self.ends[i]
    }
    fn list_start(&self, i: usize) -> u64 {
        self.postings.offset(i)
    }
    /// A merge reads each segment front to back, once: the pages it has
    /// read are given back as it goes. Mapped pages count in the process's
    /// RSS, and all of a big build's segments read by the final merge were
    /// its peak (+120 MB of file pages at the end of a Linux tree build).
    fn done_between(&self, from: usize, to: usize) {
        let Store::Mapped(map, _) = &self.postings.store else {
            return;
        };
        let at = self.postings.layout.at;
        let (a, b) = (self.postings.offset(from), self.postings.offset(to));
        let len = b.saturating_sub(a) as usize;
        // SAFETY: a read-only shared mapping of a file this process wrote
        // and never writes again: a dropped page is read from the file
        // again if touched (memmap2 widens the range to whole pages, which
        // may take a page another lane still reads), so no byte seen
        // through the mapping changes.
        let advice = memmap2::UncheckedAdvice::DontNeed;
        let _ = unsafe { map.unchecked_advise_range(advice, at + a as usize, len) };
        (self.released).fetch_add(len, std::sync::atomic::Ordering::Relaxed);
    }
}

impl ListSource for Postings {
    fn key_count(&self) -> usize {
        self.layout.keys
    }
    fn key(&self, i: usize) -> u32 {
        Postings::key(self, i)
    }
    fn list(&self, i: usize) -> Option<&[u8]> {
        let (a, b) = (self.offset(i) as usize, self.offset(i + 1) as usize);
        let at = self.layout.at;
        if let Store::Mapped(map, Some(checked)) = &self.store {
            if !checked.check(map, at + a..at + b) {
                return None;
            }
        }
        Some(&self.blob()[a..b])
    }
    fn size(&self) -> u64 {
        self.bytes()
    }
    fn list_start(&self, i: usize) -> u64 {
        self.offset(i)
    }
}

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
    fn default() -> Self {
        let mut bytes = Vec::new();
        let layout = write_merged(&mut bytes, &[]).unwrap_or_default();
        Postings {
            store: Store::Memory(bytes),
            layout,
        }
    }
}

impl Postings {
    /// Postings held in memory, as [`write_merged`] wrote them.
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

    fn bytes_all(&self) -> &[u8] {
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

    fn key_count(&self) -> usize {
        self.layout.keys
    }

    fn key(&self, i: usize) -> u32 {
        let at = self.layout.at + self.layout.blob + i * 4;
        let b = &self.bytes_all()[at..at + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    fn offset(&self, i: usize) -> u64 {
        let at = self.layout.at + self.layout.blob + self.layout.keys * 4 + i * 8;
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.bytes_all()[at..at + 8]);
        u64::from_le_bytes(b)
    }

    fn blob(&self) -> &[u8] {
        &self.bytes_all()[self.layout.at..self.layout.at + self.layout.blob]
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
        let bytes = ListSource::list(self, i)?;
        let mut sink = BitSink {
            blocks: docs.as_mut_slice(),
            universe,
            at: 0,
            word: 0,
        };
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

/// Writes a builder's `sorted` lists into a new file in `dir` (a build's
/// segment, unlinked as it is created), keeping their ends, and maps it:
/// the mapping stays valid, the pages stay off the process's heap, and
/// nothing is left for a crash to strand.
///
/// A run's lists lie in key order, back to back, in its blob: the segment
/// is that blob, then its keys and offsets, the bytes [`write_merged`] of
/// this one source writes, without merging it list by list (1.5 % of a
/// Linux tree build's CPU). The keys and offsets are put together in
/// `index` (cleared first): a buffer a run needed anew was fresh pages for
/// the kernel to fault in and zero, so the caller keeps it between runs.
pub fn write_segment(
    dir: &std::path::Path,
    sorted: &Sorted,
    index: &mut Vec<u8>,
) -> std::io::Result<Segment> {
    use std::io::Write;
    let mut f = unlinked_file(dir, "segment")?;
    index.clear();
    index.reserve(sorted.keys.len() * 4 + sorted.starts.len() * 8);
    for k in &sorted.keys {
        index.extend_from_slice(&k.to_le_bytes());
    }
    for &at in &sorted.starts {
        index.extend_from_slice(&(at as u64).to_le_bytes());
    }
    f.write_all(&sorted.blob)?;
    f.write_all(index)?;
    let layout = Layout {
        at: 0,
        blob: sorted.blob.len(),
        keys: sorted.keys.len(),
    };
    // SAFETY: the file is ours (created just now, mode 0600, unlinked) and
    // never written again, so the mapping cannot change.
    let map = unsafe { memmap2::Mmap::map(&f)? };
    let postings = Postings::mapped(std::sync::Arc::new(map), layout)
        .ok_or_else(|| std::io::Error::other("segment file came back short"))?;
    // Checking the segment touched its keys and offsets; nothing reads it
    // again until the final merge, and every segment's pages held until
    // then were 30-50 MB of the build's peak memory.
    if let Store::Mapped(map, _) = &postings.store {
        // SAFETY: as in `done_between`: a dropped page of this read-only
        // mapping of a file never written again is read back unchanged.
        let advice = memmap2::UncheckedAdvice::DontNeed;
        let _ = unsafe { map.unchecked_advise(advice) };
    }
    Ok(Segment {
        postings,
        ends: sorted.ends.clone(),
        released: std::sync::atomic::AtomicUsize::new(0),
    })
}

/// `sources` merged into memory (when no file can be written).
pub fn merge_in_memory(sources: &[&dyn ListSource]) -> Postings {
    let mut bytes = Vec::new();
    match write_merged(&mut bytes, sources) {
        Ok(layout) => Postings::memory(bytes, layout).unwrap_or_default(),
        Err(_) => Postings::default(),
    }
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
    fn a_merge_gives_back_a_segments_pages_behind_it_and_the_bytes_stay() {
        // 4,000 lists of 1,000 one-byte steps: 4 MB, several drop steps.
        let keys: Vec<u32> = (0..4000u32).map(|k| k * 4099 % (1 << 24)).collect();
        let mut b = Builder::default();
        for doc in 0..1000 {
            b.add(doc, &keys);
        }
        let sorted = b.into_sorted();
        let dir = tempfile::tempdir().unwrap();
        let seg = write_segment(dir.path(), &sorted, &mut Vec::new()).unwrap();
        let from_memory = merge_in_memory(&[&sorted]);
        let first = merge_in_memory(&[&seg]);
        let released = seg.released.load(std::sync::atomic::Ordering::Relaxed);
        assert!(released >= 3 * DROP_STEP, "{released}");
        // A dropped page is read from the file again.
        let again = merge_in_memory(&[&seg]);
        assert_eq!(first.bytes_all(), from_memory.bytes_all());
        assert_eq!(again.bytes_all(), from_memory.bytes_all());
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

#[cfg(test)]
mod key_tests {
    use super::*;
    use crate::index::planner::trigram;
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
