//! Block checksums of a generation file: one xxh3 per fixed-size block,
//! computed as the file is streamed out and checked the first time a
//! reader touches the block (where the sums lie: the top of `format.rs`).
//!
//! Why blocks rather than one checksum of the file: opening a saved index
//! at the next start must cost less than the walk that re-validates it,
//! and hashing 130 MB of postings (the Linux tree's) took 51–84 ms of the
//! two cores that walk needed. The table and the key directory are read
//! whole at open and checked then; a posting list's blocks are checked when
//! a search first decodes it, so a flipped byte is still caught before any
//! search uses it, and a block is hashed once per process.

use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use xxhash_rust::xxh3::Xxh3;

/// Blocks of 64 KiB: a rare literal's lists touch a handful of them.
#[cfg(not(test))]
pub const BLOCK_SHIFT: u32 = 16;
/// Tests' generations are small: blocks of 256 bytes give them many.
#[cfg(test)]
pub const BLOCK_SHIFT: u32 = 8;

/// Smallest and largest block sizes a reader accepts from a trailer.
pub const SHIFTS: std::ops::RangeInclusive<u32> = 6..=30;

/// Passes bytes through to `inner`, hashing each block of `1 << shift`
/// bytes of the stream as it goes.
pub struct Summing<W: Write> {
    pub inner: W,
    shift: u32,
    hash: Xxh3,
    /// Bytes of the current block hashed so far.
    filled: u64,
    sums: Vec<u64>,
    /// Bytes written in all.
    pub n: u64,
}

impl<W: Write> Summing<W> {
    pub fn new(inner: W, shift: u32) -> Self {
        Summing {
            inner,
            shift,
            hash: Xxh3::new(),
            filled: 0,
            sums: Vec::new(),
            n: 0,
        }
    }

    /// The checksums of every block, the last one possibly short.
    pub fn finish(mut self) -> (W, Vec<u64>) {
        if self.filled > 0 {
            self.sums.push(self.hash.digest());
        }
        (self.inner, self.sums)
    }
}

impl<W: Write> Write for Summing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        let block = 1u64 << self.shift;
        let mut rest = &buf[..n];
        while !rest.is_empty() {
            let take = rest.len().min((block - self.filled) as usize);
            self.hash.update(&rest[..take]);
            self.filled += take as u64;
            rest = &rest[take..];
            if self.filled == block {
                self.sums.push(self.hash.digest());
                self.hash.reset();
                self.filled = 0;
            }
        }
        self.n += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
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

    fn sums_of(bytes: &[u8], shift: u32, chunk: usize) -> Vec<u64> {
        let mut w = Summing::new(Vec::new(), shift);
        for c in bytes.chunks(chunk) {
            w.write_all(c).unwrap();
        }
        let (out, sums) = w.finish();
        assert_eq!(out, bytes);
        sums
    }

    #[test]
    fn sums_do_not_depend_on_how_the_stream_was_cut() {
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let want = sums_of(&bytes, 6, 1000);
        assert_eq!(want.len(), 16);
        for chunk in [1, 3, 63, 64, 65, 500] {
            assert_eq!(sums_of(&bytes, 6, chunk), want, "chunk {chunk}");
        }
    }

    #[test]
    fn a_flipped_byte_fails_exactly_the_ranges_over_its_block() {
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i % 256) as u8).collect();
        let sums = sums_of(&bytes, 6, 17);
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
