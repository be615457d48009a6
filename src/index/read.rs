//! Reading files for the postings: one file's trigram keys, read a piece
//! at a time without following a link or blocking on a FIFO, and a list of
//! files read once on one niced thread per core (at most four), each thread
//! taking parts of the list in turn and filling its own lists over the
//! part's run of documents, written out as segments. A build reads every
//! file so, a re-validation the files that changed, the delta the files
//! created since the generation.

use super::builder::Builder;
use super::delta::Read;
use super::keys::KeySet;
use super::lists::{write_segment, ListSource};
use super::table::Entry;
use crate::search::stamp::Stamp;
use crate::search::{fill, short_read_ends_file, CancelToken, DirOpener};
use std::path::{Path, PathBuf};

/// Files larger than this are not read for the index: they stay candidates
/// for every search (the searcher reads them as the scan would). Files are
/// folded a piece at a time (`KeySet::fold_in`), so this bounds the time a
/// file costs the build, not the build's memory: at 16 MiB the Linux tree's
/// 24 MB `dcn_3_2_0_sh_mask.h` was read by every search, 5 of the 6 ms a
/// rare literal took through the index.
const MAX_INDEXED_BYTES: u64 = 64 << 20;

/// Bytes of files (by the walk's sizes) one part of a build covers. The
/// reader threads take parts in turn, each part one builder's lists over
/// a contiguous run of documents, so the lists are filled on every thread
/// (one thread filling them all held the build to its pace). Small enough
/// that the last part leaves the other threads idle only briefly, large
/// enough that the parts' final merge (per key, over every part) stays
/// cheap: about 30 on the Linux tree.
const PART_BYTES: u64 = 48 << 20;

/// Files one part covers at most, whatever their sizes. Tests use three,
/// so that their trees (a dozen files) are built in several parts and
/// every differential test also checks the parts' merge.
const PART_FILES: usize = if cfg!(test) { 3 } else { 8192 };

/// Bytes read at a time for the index: most files in one read, a larger
/// one in pieces, so a reader's buffer stays this size whatever the files.
/// Tests read in pieces of seven bytes, so that every differential test
/// also checks the windows across pieces.
const READ_PIECE: usize = if cfg!(test) { 7 } else { 1 << 20 };

/// How a reader opens and reads the files of one tree.
struct FileReader {
    /// Each file is opened in the directory of the one before when it is
    /// the same (files come in path order): by its full path the kernel
    /// looked up every component again.
    opener: DirOpener,
    /// Whether a short read is the file's end on this tree (see
    /// `short_read_ends_file`): a small file is then one read, not two.
    short_read_ends: bool,
    /// One piece of a file, with two bytes carried from the piece before;
    /// sized once, never cleared (see `fold_pieces`).
    buf: Vec<u8>,
}

impl FileReader {
    fn new(short_read_ends: bool) -> Self {
        FileReader {
            opener: DirOpener::not_following_links(),
            short_read_ends,
            buf: vec![0; READ_PIECE + 2],
        }
    }

    /// Reads a regular file for indexing and folds its keys into `keys`
    /// (to be taken with `KeySet::finish`), a piece at a time, without
    /// following a link or blocking on a FIFO that replaced it since the
    /// walk. `false` when it cannot be indexed: it then stays a candidate
    /// for every search, and `keys` holds nothing of it.
    fn fold_file(&mut self, path: &Path, keys: &mut KeySet) -> bool {
        let folded = self.fold_pieces(path, keys);
        if !folded {
            keys.finish();
        }
        folded
    }

    fn fold_pieces(&mut self, path: &Path, keys: &mut KeySet) -> bool {
        let Ok(mut f) = self.opener.open(path) else {
            return false;
        };
        match f.metadata() {
            Ok(meta) if meta.is_file() && meta.len() <= MAX_INDEXED_BYTES => {}
            _ => return false,
        }
        let buf = &mut self.buf;
        let (mut total, mut carried) = (0u64, 0usize);
        loop {
            // `buf` starts with the last two bytes of the piece before, if
            // any (none: this is the file's first piece).
            let piece = &mut buf[carried..carried + READ_PIECE];
            let Ok((got, ended)) = fill(&mut f, piece, self.short_read_ends) else {
                return false;
            };
            total += got as u64;
            let filled = carried + got;
            // A file with a NUL byte is binary to the searcher: every search
            // that reaches it shows its matches before the NUL, or counts it
            // as skipped, whatever the pattern. It is never pruned, so it is
            // not indexed. Nor is one the
            // searcher transcodes (a UTF-16 byte order mark): its trigrams
            // are not those of the bytes.
            if total > MAX_INDEXED_BYTES
                || memchr::memchr(0, &buf[carried..filled]).is_some()
                || (carried == 0 && is_transcoded(&buf[..filled]))
            {
                return false;
            }
            keys.fold_in(&buf[..filled]);
            if ended {
                return true;
            }
            buf.copy_within(filled - 2..filled, 0);
            carried = 2;
        }
    }
}

/// Reads `paths` for the delta (see `delta.rs`), the way the generation
/// reads a file: each with its stamp taken before and after the read, and
/// left out when the two differ, when it has more than one link, or when
/// it is gone. Stops early when `cancel` is.
pub(super) fn read_for_delta(paths: &[PathBuf], cancel: &CancelToken) -> Vec<(PathBuf, Read)> {
    let mut reader = FileReader::new(false);
    let mut keys = KeySet::default();
    let mut out = Vec::new();
    for path in paths {
        if cancel.is_stopped() {
            break;
        }
        let Some(before) = Stamp::of(path).filter(|s| s.nlink == 1) else {
            continue;
        };
        let read = reader.fold_file(path, &mut keys).then(|| {
            let mut k = keys.finish().to_vec();
            k.sort_unstable();
            k.into_boxed_slice()
        });
        if Stamp::of(path) == Some(before) {
            out.push((
                path.clone(),
                Read {
                    stamp: before,
                    keys: read,
                },
            ));
        }
    }
    out
}

/// Whether the searcher reads `bytes` as UTF-16 (it sniffs a byte order
/// mark, as ripgrep does, and searches the text transcoded to UTF-8). A
/// UTF-8 mark is only dropped: the rest is searched as it is.
fn is_transcoded(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff])
}

/// Reader threads run niced, like the builder thread itself (on Linux
/// `setpriority` on the calling thread applies to that thread only).
pub fn lower_priority() {
    #[cfg(target_os = "linux")]
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

/// The postings of a contiguous run of documents as one builder left
/// them: mapped from a segment file when the store takes one (off the
/// process's heap), else in memory.
pub(super) type Part = Box<dyn ListSource + Send>;

/// A part read: its place among the parts, its runs of lists in document
/// order, and which of its files were indexed.
type ReadPart = (usize, Vec<Part>, Vec<bool>);

/// What reading a list of files gave: their postings in parts, in document
/// order, and which of the files were indexed.
pub(super) struct ReadFiles {
    pub(super) parts: Vec<Part>,
    pub(super) indexed: Vec<bool>,
}

/// The smallest part the parts near the end of the list shrink to.
const PART_MIN_BYTES: u64 = 2 << 20;

/// Cuts `files` (in document order) into contiguous runs of about
/// `PART_BYTES` (by the walk's sizes) or `PART_FILES`, shrinking towards
/// the end to a share of what is left (`readers` take them in turn): with
/// parts of one size the last reader to finish worked alone for 50-130 ms
/// of a Linux tree build (half a part on average, and a part's time
/// varies with its files). Each part is at most half of the bytes left
/// per reader, at least `PART_MIN_BYTES`: 0.97 x the build's time; smaller
/// shares (a fifth) ended the readers within 8 ms of each other but made
/// twice the parts, whose runs the merge paid for (0.99 x).
fn part_ranges(files: &[&Entry], readers: usize) -> Vec<std::ops::Range<usize>> {
    // 0 when the walk could not stat it.
    let size = |e: &Entry| e.stamp.map_or(0, |s| s.size).min(MAX_INDEXED_BYTES);
    let mut left: u64 = files.iter().map(|e| size(e)).sum();
    let share = |left: u64| (left / (2 * readers.max(1) as u64)).clamp(PART_MIN_BYTES, PART_BYTES);
    let mut ranges = Vec::new();
    let (mut start, mut bytes, mut want) = (0usize, 0u64, share(left));
    for (i, e) in files.iter().enumerate() {
        bytes += size(e);
        if bytes >= want || i + 1 - start >= PART_FILES {
            ranges.push(start..i + 1);
            left -= bytes;
            (start, bytes, want) = (i + 1, 0, share(left));
        }
    }
    if start < files.len() {
        ranges.push(start..files.len());
    }
    ranges
}

/// One reader thread's reusable state: what it allocates once, not per
/// file or part.
struct Reader {
    keys: KeySet,
    builder: Builder,
    files: FileReader,
    /// Where a segment's keys and offsets are put together (see
    /// `write_segment`).
    segment_index: Vec<u8>,
}

/// The (key, document) pairs a reader holds before it sorts them into a
/// run of lists of its own: 32 MB, twice that while sorting. A part's size
/// is set by its files' bytes (the Linux tree's 30 parts make ~50 runs),
/// and data with few repeated trigrams gives up to a pair a byte.
const PART_PAIRS: usize = if cfg!(test) { 50 } else { 1 << 22 };

impl Reader {
    /// The lists so far as a run, written as a segment in `segment_dir`
    /// when given (off the process's heap; the run's buffers then serve the
    /// next one), else kept in memory.
    fn take_run(&mut self, segment_dir: Option<&Path>) -> Part {
        let run = self.builder.take_sorted();
        match segment_dir.map(|d| write_segment(d, &run, &mut self.segment_index)) {
            Some(Ok(segment)) => {
                self.builder.recycle(run);
                Box::new(segment)
            }
            _ => Box::new(run),
        }
    }

    /// The lists of `files` as documents `first` on, in one or more runs
    /// in document order (each written out as soon as it is sorted), and
    /// which files were indexed.
    fn part(
        &mut self,
        files: &[&Entry],
        first: u32,
        segment_dir: Option<&Path>,
        cancel: &CancelToken,
    ) -> (Vec<Part>, Vec<bool>) {
        let mut indexed = vec![false; files.len()];
        let mut runs = Vec::new();
        for (i, e) in files.iter().enumerate() {
            if cancel.is_stopped() {
                break;
            }
            if self.files.fold_file(&e.path, &mut self.keys) {
                self.builder.add(first + i as u32, self.keys.finish());
                indexed[i] = true;
            }
            if i == 1 {
                // A part half read when its reader fails (a spec's fault).
                crate::fault::panic_if_injected("index-read");
            }
            if self.builder.pairs() >= PART_PAIRS {
                runs.push(self.take_run(segment_dir));
            }
        }
        if self.builder.pairs() > 0 || runs.is_empty() {
            runs.push(self.take_run(segment_dir));
        }
        (runs, indexed)
    }
}

/// One reader per core, at most four: the build is CPU-bound once the
/// files are cached (one more thread than cores was 7 % slower on 2
/// cores), and each reader holds a part's lists, so more of them would
/// raise the build's peak memory on a big machine.
fn reader_threads() -> usize {
    crate::search::cores().min(4)
}

/// Reads `files` as documents `first` on, on niced threads
/// (`reader_threads`) that take parts of the list in turn; each part's
/// lists are written as a segment in `segment_dir` when given (so a build
/// holds about one part per thread in memory). `None` when stopped. A reader that panics leaves its
/// part's files unindexed (candidates for every search), every document
/// number in place.
pub(super) fn read_files(
    files: &[&Entry],
    first: u32,
    root: &Path,
    segment_dir: Option<&Path>,
    cancel: &CancelToken,
) -> Option<ReadFiles> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let short_read_ends = short_read_ends_file(root);
    let readers = reader_threads();
    let ranges = part_ranges(files, readers);
    let next = AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<ReadPart>> = Default::default();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..readers.clamp(1, ranges.len().max(1)))
            .map(|_| {
                scope.spawn(|| {
                    lower_priority();
                    let mut reader = Reader {
                        keys: KeySet::default(),
                        builder: Builder::default(),
                        files: FileReader::new(short_read_ends),
                        segment_index: Vec::new(),
                    };
                    loop {
                        let p = next.fetch_add(1, Ordering::Relaxed);
                        let Some(range) = ranges.get(p) else { break };
                        if cancel.is_stopped() {
                            break;
                        }
                        let first = first + range.start as u32;
                        let range = &files[range.clone()];
                        let (parts, indexed) = reader.part(range, first, segment_dir, cancel);
                        let mut done = done.lock().unwrap_or_else(|e| e.into_inner());
                        done.push((p, parts, indexed));
                    }
                })
            })
            .collect();
        for w in workers {
            let _ = w.join();
        }
    });
    if cancel.is_stopped() {
        return None;
    }
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_unstable_by_key(|(p, _, _)| *p);
    let mut indexed = vec![false; files.len()];
    let mut parts = Vec::with_capacity(done.len());
    for (p, runs, flags) in done {
        indexed[ranges[p].clone()].copy_from_slice(&flags);
        parts.extend(runs);
    }
    Some(ReadFiles { parts, indexed })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of_size(size: u64) -> Entry {
        Entry {
            path: "f".into(),
            ignored_root: None,
            stamp: Some(Stamp {
                size,
                mtime: (0, 0),
                ctime: (0, 0),
                ino: 1,
                nlink: 1,
            }),
            doc: None,
        }
    }

    #[test]
    fn parts_cover_every_file_once_and_shrink_towards_the_end() {
        // 40 files of 16 MiB, two readers (tests cut parts at 3 files).
        let entries: Vec<Entry> = (0..40).map(|_| of_size(16 << 20)).collect();
        let files: Vec<&Entry> = entries.iter().collect();
        let ranges = part_ranges(&files, 2);
        let mut next = 0;
        for r in &ranges {
            assert_eq!(r.start, next);
            next = r.end;
        }
        assert_eq!(next, files.len());
        let lens: Vec<usize> = ranges.iter().map(|r| r.len()).collect();
        // Full parts while more than four parts' worth is left, then a
        // quarter of what is left, down to single files.
        assert_eq!(lens[0], 3);
        assert!(lens.windows(2).all(|w| w[0] >= w[1]), "{lens:?}");
        assert!(lens.contains(&2), "{lens:?}");
        assert_eq!(lens[lens.len() - 3..], [1, 1, 1], "{lens:?}");
    }
}
