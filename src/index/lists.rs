//! Posting lists in key order, whatever holds them ([`ListSource`]): a
//! builder's run in memory ([`Sorted`]), a run written out and mapped as a
//! build's segment ([`Segment`], [`write_segment`]), and finished postings
//! ([`Postings`], a generation or a merge in memory). A merge reads any mix
//! of them.

use super::builder::Sorted;
use super::codec::list_end;
use super::postings::{Layout, Postings};
use std::io;
use std::path::Path;

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
    pub(super) postings: Postings,
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
        let Some((map, at)) = self.postings.mapping() else {
            return;
        };
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
        Postings::key_count(self)
    }
    fn key(&self, i: usize) -> u32 {
        Postings::key(self, i)
    }
    fn list(&self, i: usize) -> Option<&[u8]> {
        self.checked_list(i)
    }
    fn size(&self) -> u64 {
        self.bytes()
    }
    fn list_start(&self, i: usize) -> u64 {
        self.offset(i)
    }
}

/// Writes a builder's `sorted` lists into a new file in `dir` (a build's
/// segment, unlinked as it is created), keeping their ends, and maps it:
/// the mapping stays valid, the pages stay off the process's heap, and
/// nothing is left for a crash to strand.
///
/// A run's lists lie in key order, back to back, in its blob: the segment
/// is that blob, then its keys and offsets, the bytes `merge::write_merged` of
/// this one source writes, without merging it list by list (1.5 % of a
/// Linux tree build's CPU). The keys and offsets are put together in
/// `index` (cleared first): a buffer a run needed anew was fresh pages for
/// the kernel to fault in and zero, so the caller keeps it between runs.
pub fn write_segment(dir: &Path, sorted: &Sorted, index: &mut Vec<u8>) -> io::Result<Segment> {
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
        .ok_or_else(|| io::Error::other("segment file came back short"))?;
    // Checking the segment touched its keys and offsets; nothing reads it
    // again until the final merge, and every segment's pages held until
    // then were 30-50 MB of the build's peak memory.
    if let Some((map, _)) = postings.mapping() {
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

/// A new file in `dir`, readable and writable by this user only, and
/// already unlinked: nothing of it is left behind whatever happens next (a
/// build's segments).
fn unlinked_file(dir: &Path, prefix: &str) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("{prefix}-{}-{seq}.tmp", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path);
    let _ = std::fs::remove_file(&path);
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::builder::Builder;
    use crate::index::merge::merge_in_memory;

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
}
