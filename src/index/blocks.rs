//! Block checksums of a generation file: one xxh3 per fixed-size block,
//! computed from the file once it is written and checked the first time a
//! reader touches the block (where the sums lie: the top of `format.rs`).
//!
//! Why blocks rather than one checksum of the file: opening a saved index
//! at the next start must cost less than the walk that re-validates it,
//! and hashing 130 MB of postings (the Linux tree's) took 51–84 ms of the
//! two cores that walk needed. The table and the key directory are read
//! whole at open and checked then; a posting list's blocks are checked when
//! a search first decodes it, so a flipped byte is still caught before any
//! search uses it, and a block is hashed once per process.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Blocks of 64 KiB: a rare literal's lists touch a handful of them.
#[cfg(not(test))]
pub const BLOCK_SHIFT: u32 = 16;
/// Tests' generations are small: blocks of 256 bytes give them many.
#[cfg(test)]
pub const BLOCK_SHIFT: u32 = 8;

/// Smallest and largest block sizes a reader accepts from a trailer.
pub const SHIFTS: std::ops::RangeInclusive<u32> = 6..=30;

/// Bytes read back at a time to sum a file's blocks (whole blocks, at
/// least one); tests read in small pieces, several blocks each.
const SUM_PIECE: u64 = if cfg!(test) { 200 } else { 1 << 20 };

/// The checksums of the blocks of the first `len` bytes of `file`, read
/// back in pieces on up to two threads: a generation whose lists were
/// written by two lanes at once was not streamed in order. Read into a
/// buffer rather than mapped: the mapped pages of the whole file would
/// count in the process's memory at the build's peak.
pub fn block_sums(file: &std::fs::File, len: u64, shift: u32) -> io::Result<Vec<u64>> {
    use std::os::unix::fs::FileExt;
    let block = 1u64 << shift;
    let blocks = len.div_ceil(block);
    let threads = crate::search::cores().clamp(1, 2) as u64;
    let per = blocks.div_ceil(threads).max(1);
    let per_read = (SUM_PIECE / block).max(1);
    let sum_blocks = |first: u64, end: u64| -> io::Result<Vec<u64>> {
        let mut buf = vec![0u8; (per_read * block) as usize];
        let mut sums = Vec::with_capacity((end - first) as usize);
        let mut b = first;
        while b < end {
            let (from, to) = (b * block, ((b + per_read).min(end) * block).min(len));
            let piece = &mut buf[..(to - from) as usize];
            file.read_exact_at(piece, from)?;
            sums.extend(piece.chunks(block as usize).map(xxhash_rust::xxh3::xxh3_64));
            b = (b + per_read).min(end);
        }
        Ok(sums)
    };
    std::thread::scope(|scope| {
        let parts: Vec<_> = (0..blocks)
            .step_by(per as usize)
            .map(|first| scope.spawn(move || sum_blocks(first, (first + per).min(blocks))))
            .collect();
        let mut sums = Vec::with_capacity(blocks as usize);
        for part in parts {
            let part = part
                .join()
                .map_err(|_| io::Error::other("summing a generation's blocks panicked"))?;
            sums.extend(part?);
        }
        Ok(sums)
    })
}

/// The checksums of a file's blocks and which of them this process has
/// found intact.
#[derive(Debug)]
pub struct Checked {
    shift: u32,
    /// Bytes covered: blocks end here, whatever follows in the file.
    len: usize,
    sums: Vec<u64>,
    good: Vec<AtomicU64>,
    damaged: AtomicBool,
    /// The file the blocks are of, by path and identity: removed when a
    /// block is found damaged, so the next build does not trust it again.
    file: Option<(PathBuf, u64, u64)>,
}

impl Checked {
    /// Blocks of `1 << shift` bytes covering `len` bytes.
    pub fn count(len: u64, shift: u32) -> u64 {
        len.div_ceil(1u64 << shift)
    }

    /// The checksums `sums` of the first `len` bytes of a file.
    pub fn new(shift: u32, sums: Vec<u64>, len: usize) -> Checked {
        let words = sums.len().div_ceil(64);
        Checked {
            shift,
            len,
            sums,
            good: (0..words).map(|_| AtomicU64::new(0)).collect(),
            damaged: AtomicBool::new(false),
            file: None,
        }
    }

    /// The blocks are of the file at `path` (`meta` its metadata): it is
    /// removed when one is found damaged, unless the path names another
    /// file by then.
    pub fn removing(mut self, path: &Path, meta: &std::fs::Metadata) -> Checked {
        self.file = Some((path.to_path_buf(), meta.dev(), meta.ino()));
        self
    }

    fn mark_damaged(&self) {
        if self.damaged.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some((path, dev, ino)) = &self.file {
            let same =
                std::fs::symlink_metadata(path).is_ok_and(|m| m.dev() == *dev && m.ino() == *ino);
            if same {
                let _ = std::fs::remove_file(path);
            }
        }
    }

    /// Whether every block overlapping `range` of `bytes` (the whole
    /// file) matches its checksum. A block found intact
    /// is not hashed again; a damaged one marks the file damaged for good.
    pub fn check(&self, bytes: &[u8], range: std::ops::Range<usize>) -> bool {
        if self.damaged.load(Ordering::Relaxed) {
            return false;
        }
        if range.is_empty() {
            return true;
        }
        if range.end > self.len {
            self.mark_damaged();
            return false;
        }
        let size = 1usize << self.shift;
        let (first, last) = (range.start >> self.shift, (range.end - 1) >> self.shift);
        for b in first..=last {
            let (word, bit) = (&self.good[b / 64], 1u64 << (b % 64));
            if word.load(Ordering::Acquire) & bit != 0 {
                continue;
            }
            let start = b * size;
            let end = (start + size).min(self.len).min(bytes.len());
            let intact = self.sums.get(b).is_some_and(|&sum| {
                start < end && xxhash_rust::xxh3::xxh3_64(&bytes[start..end]) == sum
            });
            if !intact {
                self.mark_damaged();
                return false;
            }
            word.fetch_or(bit, Ordering::AcqRel);
        }
        true
    }

    /// A block was found damaged: nothing of the file is to be trusted.
    pub fn is_damaged(&self) -> bool {
        self.damaged.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Each block of `bytes` hashed alone.
    fn sums_of(bytes: &[u8], shift: u32) -> Vec<u64> {
        bytes
            .chunks(1 << shift)
            .map(xxhash_rust::xxh3::xxh3_64)
            .collect()
    }

    #[test]
    fn a_files_block_sums_are_its_blocks_hashed_whatever_the_pieces_and_threads() {
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&bytes).unwrap();
        // Blocks of 64 bytes read three at a time (200-byte pieces), the
        // last one short; then only the first 700 bytes, which end mid-block.
        assert_eq!(block_sums(&f, 1000, 6).unwrap(), sums_of(&bytes, 6));
        assert_eq!(block_sums(&f, 700, 6).unwrap(), sums_of(&bytes[..700], 6));
        // Blocks bigger than a piece are read one at a time.
        assert_eq!(block_sums(&f, 1000, 9).unwrap(), sums_of(&bytes, 9));
        assert_eq!(block_sums(&f, 0, 6).unwrap(), Vec::<u64>::new());
    }

    #[test]
    fn a_flipped_byte_fails_exactly_the_ranges_over_its_block() {
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i % 256) as u8).collect();
        let sums = sums_of(&bytes, 6);
        for at in (0..bytes.len()).step_by(13) {
            let mut bad = bytes.clone();
            bad[at] ^= 1;
            let block = at / 64;
            let c = Checked::new(6, sums.clone(), bytes.len());
            // A range ending before the block passes, and so is remembered.
            if block > 0 {
                assert!(c.check(&bad, 0..block * 64));
            }
            if block * 64 + 64 < bad.len() {
                assert!(c.check(&bad, block * 64 + 64..bad.len()));
            }
            assert!(!c.check(&bad, at..at + 1), "flip at {at} passed");
            assert!(c.is_damaged());
            assert!(!c.check(&bad, 0..1), "once damaged, nothing passes");
        }
        let c = Checked::new(6, sums, bytes.len());
        assert!(c.check(&bytes, 0..bytes.len()));
        assert!(c.check(&bytes, 5..5));
        assert!(!c.is_damaged());
    }
}
