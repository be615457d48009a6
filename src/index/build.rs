//! Building a picture: the table walk, then every file read once on one
//! thread per core, each thread taking parts of the table in turn and
//! filling its own lists over the part's run of documents; the parts,
//! written as segments, are merged key by key into the generation. Or,
//! when the store holds a generation of this root, the walk compared with
//! it and only the files that changed read again.

use super::builder::{Builder, Sorted};
use super::delta::Read;
use super::format::{time_of, Meta};
use super::keys::KeySet;
use super::lists::{write_segment, ListSource};
use super::merge::merge_in_memory;
use super::postings::Postings;
use super::restamp::restamp;
use super::store::{Saved, Store, WriterLock};
use super::table::{self, Entry, Stamp, Table};
use super::watch::Watcher;
use super::IndexConfig;
use crate::search::{fill, short_read_ends_file, CancelToken, DirOpener};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

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

pub struct Built {
    pub table: Table,
    pub postings: Postings,
    pub watcher: Watcher,
    /// The device and inode the root named when the walk began.
    pub root_id: (u64, u64),
    /// Why the picture could not be saved in the store (unwritable, disk
    /// full); `None`: it is saved (or was reused as saved).
    pub unsaved: Option<String>,
    /// Re-validated from a saved generation: how many files were read
    /// again; `None`: built from scratch.
    pub reread: Option<usize>,
    /// Re-validated by walking the tree (`true`) or by stamping the saved
    /// table in place; `None`: built from scratch.
    pub walked: Option<bool>,
}

/// Why a root gets no index (shown by `indexStatus`).
/// A saved-only picture (`IndexConfig::saved_only`) leaves at most one file
/// in this many unread; past that a search through it reads too many files
/// one by one, and the scan is as fast.
pub const SAVED_ONLY_UNREAD_SHARE: usize = 20;
const SAVED_NONE: &str = "no index of this tree was saved by an earlier process";
const SAVED_BUSY: &str = "another process is writing this tree's index";
const SAVED_STALE: &str = "the saved index is out of date (too many files changed since)";

pub enum NotBuilt {
    Off(String),
    Failed(String),
}

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

/// Holds glibc's mmap threshold at its documented default (128 KiB), for
/// the whole process, from the first build on. glibc otherwise raises it
/// each time a large block it mapped is freed (up to 32 MB); the build's
/// file buffers, key lists and growing posting lists are then carved out
/// of its per-thread arenas and leave them fragmented past what
/// `malloc_trim` can give back: 53-89 MB of anonymous memory stayed after a
/// build of the Linux tree, 31 MB with the threshold held.
fn hold_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// The build's transient buffers are freed by now; glibc keeps freed
/// memory in its arenas unless asked, which would show as resident memory
/// of the Node process long after the build.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The postings of a contiguous run of documents as one builder left
/// them: mapped from a segment file when the store takes one (off the
/// process's heap), else in memory.
type Part = Box<dyn ListSource + Send>;

/// A part read: its place among the parts, its runs of lists in document
/// order, and which of its files were indexed.
type ReadPart = (usize, Vec<Part>, Vec<bool>);

/// What reading a list of files gave: their postings in parts, in document
/// order, and which of the files were indexed.
struct ReadFiles {
    parts: Vec<Part>,
    indexed: Vec<bool>,
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
fn read_files(
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

/// Whether a stamp was last changed long enough before the walk of the
/// generation `meta` describes that, unchanged now, it proves nothing
/// changed since (see `store::RACY`).
fn settled_before(meta: &Meta, config: &IndexConfig) -> Option<impl Fn(&Stamp) -> bool + Sync> {
    let cutoff = meta.walk_start.checked_sub(config.racy)?;
    Some(move |s: &Stamp| time_of(s.ctime.0, s.ctime.1.clamp(0, 999_999_999) as u32) < cutoff)
}

fn too_big(size: u64, config: &IndexConfig) -> Option<NotBuilt> {
    (size > config.max_bytes).then(|| {
        NotBuilt::Off(format!(
            "postings of {} MB, over index.maxDiskMB ({} MB)",
            size >> 20,
            config.max_bytes >> 20
        ))
    })
}

/// The postings a re-validation ends with, why they are not saved (if
/// not), and how many files were read again.
type Revalidated = (Postings, Option<String>, usize);

/// What re-validation needs of a saved generation: its postings and, for
/// each file of the fresh table, the saved file of the same path (`was`,
/// an index into `files`: its stamp and document).
struct SavedFiles {
    /// The generation's number, and whether the fresh table came from a
    /// walk (the saved one could not be stamped in place).
    generation: u64,
    walked: bool,
    meta: Meta,
    postings: Postings,
    files: Vec<(Option<Stamp>, Option<u32>)>,
    was: Vec<Option<usize>>,
}

impl SavedFiles {
    /// `saved` against a table from a fresh walk.
    fn against_walk(saved: Saved, fresh: &Table) -> SavedFiles {
        SavedFiles {
            was: table::same_paths(&saved.table, fresh),
            files: (saved.table.entries.iter())
                .map(|e| (e.stamp, e.doc))
                .collect(),
            generation: saved.generation,
            walked: true,
            meta: saved.meta,
            postings: saved.postings,
        }
    }

    /// `saved` whose table was stamped again in place (`restamp`): the
    /// fresh table is the saved one, with `stamps`.
    fn restamped(saved: Saved, stamps: Vec<Option<Stamp>>) -> (SavedFiles, Table) {
        let mut table = saved.table;
        let files = (table.entries.iter()).map(|e| (e.stamp, e.doc)).collect();
        for (e, s) in table.entries.iter_mut().zip(stamps) {
            e.stamp = s;
        }
        let was = (0..table.entries.len()).map(Some).collect();
        let saved = SavedFiles {
            generation: saved.generation,
            walked: false,
            meta: saved.meta,
            postings: saved.postings,
            files,
            was,
        };
        (saved, table)
    }
}

/// The saved generation's documents for the files of the fresh `table`
/// whose stamp is unchanged; the rest (changed, new, racily stamped) are
/// read again and their postings merged after the saved ones into a new
/// generation. `None`: so much changed (or so much of the saved postings
/// is dead) that a build from scratch is cheaper and smaller.
#[allow(clippy::too_many_arguments)]
fn revalidate(
    root: &Path,
    config: &IndexConfig,
    store: &Store,
    saved: SavedFiles,
    table: &mut Table,
    walk_start: SystemTime,
    cancel: &CancelToken,
) -> Option<Result<Revalidated, NotBuilt>> {
    let settled = settled_before(&saved.meta, config)?;
    // A trusted file without a document was read and found unindexable
    // (binary, too big, unreadable): it stays so without a second read.
    let trusted = |s: &Stamp| s.nlink == 1 && settled(s);
    let (changed, live) = carry_over(table, saved.was, &saved.files, trusted);
    let next = saved.meta.next_doc as usize;
    let dead = next.saturating_sub(live);
    let n = table.entries.len();
    let rebuild = (changed.len() > 1000 && changed.len() * 4 > n)
        || (dead > 1000 && dead * 2 > next + changed.len())
        || next + changed.len() >= u32::MAX as usize;
    if rebuild {
        return None;
    }
    // A few changed files are left without a document (see
    // `IndexConfig::max_unread`): searches read them, nothing is written.
    // A saved-only picture never merges: it takes more unread files, or none.
    let unread_cap = if config.saved_only {
        config.max_unread.max(n / SAVED_ONLY_UNREAD_SHARE)
    } else {
        config.max_unread
    };
    if config.saved_only && changed.len() > unread_cap {
        return None;
    }
    if changed.len() <= unread_cap {
        if saved.walked && table.errors.count == 0 {
            // The saved table could not be stamped in place; this one can,
            // next time. Not saved: the next start walks again.
            let meta = Meta {
                walk_start,
                ..saved.meta
            };
            let _ = store.write_table(saved.generation, root, table, &meta, &changed);
        }
        return Some(Ok((saved.postings, None, 0)));
    }
    let Some(parts) = read_changed(table, &changed, next, root, &store.dir, cancel) else {
        return Some(Err(NotBuilt::Failed("stopped".into())));
    };
    let mut sources: Vec<&dyn ListSource> = vec![&saved.postings];
    sources.extend(parts.iter().map(|p| p.as_ref() as &dyn ListSource));
    if let Some(no) = too_big(sources.iter().map(|s| s.size()).sum(), config) {
        return Some(Err(no));
    }
    let meta = Meta {
        walk_start,
        built_at: SystemTime::now(),
        next_doc: (next + changed.len()) as u32,
    };
    let written = store.write_generation(store.next_generation(), root, table, &meta, &sources);
    if written.is_err() && saved.postings.is_damaged() {
        // A saved list failed its checksum while being merged (the file is
        // gone from the store by now): build from scratch.
        return None;
    }
    Some(Ok(match written {
        Ok(p) => (p, None, changed.len()),
        Err(e) => {
            // Not saved: the changed files stay unread (always candidates)
            // over the saved postings, still mapped.
            for &i in &changed {
                table.entries[i].doc = None;
            }
            let why = format!("cannot write {}: {e}", store.dir.display());
            (saved.postings, Some(why), 0)
        }
    }))
}

/// Gives each file of `table` whose stamp is unchanged and `trusted` its
/// saved document (`was` and `files` as in [`SavedFiles`]); the others,
/// returned by index, are to be read again. Also: how many saved documents
/// are still in use.
fn carry_over(
    table: &mut Table,
    was: Vec<Option<usize>>,
    files: &[(Option<Stamp>, Option<u32>)],
    trusted: impl Fn(&Stamp) -> bool,
) -> (Vec<usize>, usize) {
    let mut changed = Vec::new();
    let mut live = 0usize;
    for (i, (e, was)) in table.entries.iter_mut().zip(was).enumerate() {
        e.doc = None;
        // A file with more than one link is never trusted to the postings.
        let Some(s) = e.stamp.filter(|s| s.nlink == 1) else {
            continue;
        };
        let was = was.map(|j| files[j]);
        match was.filter(|o| o.0.is_some_and(|w| w == s && trusted(&w))) {
            Some((_, doc)) => {
                e.doc = doc;
                live += doc.is_some() as usize;
            }
            None => changed.push(i),
        }
    }
    (changed, live)
}

/// Reads the files at `changed` (indices into `table`) as documents `next`
/// on, in order, and sets their documents; `None` when stopped.
fn read_changed(
    table: &mut Table,
    changed: &[usize],
    next: usize,
    root: &Path,
    segment_dir: &Path,
    cancel: &CancelToken,
) -> Option<Vec<Part>> {
    let files: Vec<&Entry> = changed.iter().map(|&i| &table.entries[i]).collect();
    let read = read_files(&files, next as u32, root, Some(segment_dir), cancel)?;
    drop(files);
    for (j, &i) in changed.iter().enumerate() {
        table.entries[i].doc = read.indexed[j].then_some((next + j) as u32);
    }
    Some(read.parts)
}

/// Builds (or re-validates) the picture of `root`. The store's writer lock
/// is held throughout: a second process building the same root waits for
/// it (its searches scan meanwhile) and then re-validates what the first
/// one wrote instead of building again.
pub fn build(root: &Path, config: &IndexConfig, cancel: &CancelToken) -> Result<Built, NotBuilt> {
    hold_mmap_threshold();
    let store = Store::of(root, config);
    if config.saved_only && !store.dir.is_dir() {
        return Err(NotBuilt::Off(SAVED_NONE.into()));
    }
    let (lock, mut unsaved) = take_lock(&store, config, cancel)?;
    if lock.is_some() {
        store.touch();
    }
    let watcher = Watcher::with_cap(config.watch_cap).map_err(|e| NotBuilt::Off(e.to_string()))?;
    let root_id = table::identity(root)
        .ok_or_else(|| NotBuilt::Failed(format!("cannot stat {}", root.display())))?;
    let walk_start = SystemTime::now();
    let saved = lock.as_ref().and_then(|_| store.open_newest(root));
    if config.saved_only && saved.is_none() {
        return Err(NotBuilt::Off(SAVED_NONE.into()));
    }
    let (saved, mut table) = fresh_table(root, config, saved, &watcher, cancel)?;
    if let Some(f) = watcher.failure() {
        // The watch limit is a state the index leaves by itself (stale, built
        // again later); any other watch failure turns it off.
        if f.starts_with(super::watch::WATCH_LIMIT) {
            return Err(NotBuilt::Failed(f));
        }
        return Err(NotBuilt::Off(f));
    }
    check_file_count(table.entries.len(), config)?;
    if let Some(saved) = saved {
        let walked = saved.walked;
        let found = revalidate(root, config, &store, saved, &mut table, walk_start, cancel);
        if let Some(result) = found {
            let (postings, why, reread) = result?;
            release_freed_memory();
            return Ok(Built {
                table,
                postings,
                watcher,
                root_id,
                unsaved: why.or(unsaved),
                reread: Some(reread),
                walked: Some(walked),
            });
        }
    }
    if config.saved_only {
        return Err(NotBuilt::Off(SAVED_STALE.into()));
    }
    let segment_dir = lock.as_ref().map(|_| store.dir.as_path());
    let parts = read_every_file(&mut table, root, segment_dir, cancel)?;
    let saving = lock.as_ref().map(|_| &store);
    let postings = save_or_merge(
        root,
        config,
        saving,
        &table,
        walk_start,
        parts,
        &mut unsaved,
    )?;
    if lock.is_some() && unsaved.is_none() {
        store.evict(config.max_bytes);
    }
    drop(lock);
    release_freed_memory();
    Ok(Built {
        table,
        postings,
        watcher,
        root_id,
        unsaved,
        reread: None,
        walked: None,
    })
}

/// The store's writer lock, and why the picture will not be saved when
/// there is none. A saved-only picture does not wait for another writer.
fn take_lock(
    store: &Store,
    config: &IndexConfig,
    cancel: &CancelToken,
) -> Result<(Option<WriterLock>, Option<String>), NotBuilt> {
    let dir = store.dir.display();
    Ok(match store.prepare() {
        Err(e) => (None, Some(format!("cannot create {dir}: {e}"))),
        Ok(()) if config.saved_only => match store.try_lock() {
            Ok(Some(l)) => (Some(l), None),
            Ok(None) => return Err(NotBuilt::Off(SAVED_BUSY.into())),
            Err(e) => return Err(NotBuilt::Off(format!("cannot lock {dir}: {e}"))),
        },
        Ok(()) => match store.lock(cancel) {
            Ok(Some(l)) => (Some(l), None),
            Ok(None) => return Err(NotBuilt::Failed("stopped".into())),
            Err(e) => (None, Some(format!("cannot lock {dir}: {e}"))),
        },
    })
}

/// The table as the tree is now, with what re-validation needs of `saved`.
/// Most starts find the tree as it was saved: its directories and files
/// are then stamped where they are, without listing the tree.
fn fresh_table(
    root: &Path,
    config: &IndexConfig,
    saved: Option<Saved>,
    watcher: &Watcher,
    cancel: &CancelToken,
) -> Result<(Option<SavedFiles>, Table), NotBuilt> {
    let restamped = saved.as_ref().and_then(|s| {
        let settled = settled_before(&s.meta, config)?;
        restamp(root, &s.table, watcher, &settled, cancel)
    });
    Ok(match (saved, restamped) {
        (Some(saved), Some(stamps)) => {
            let (saved, table) = SavedFiles::restamped(saved, stamps);
            (Some(saved), table)
        }
        (saved, _) => {
            let table = table::walk(root, watcher, cancel, config.max_files);
            let table = table.map_err(NotBuilt::Failed)?;
            (saved.map(|s| SavedFiles::against_walk(s, &table)), table)
        }
    })
}

fn check_file_count(n: usize, config: &IndexConfig) -> Result<(), NotBuilt> {
    if n < config.min_files {
        return Err(NotBuilt::Off(format!(
            "{n} files, fewer than index.minFiles ({})",
            config.min_files
        )));
    }
    if n > config.max_files {
        // The walk stopped there: the tree may hold many more.
        return Err(NotBuilt::Off(format!(
            "more files than index.maxFiles ({})",
            config.max_files
        )));
    }
    Ok(())
}

/// Reads every file of `table` for a build from scratch (documents are the
/// table's positions), setting each entry's document. The lists come back
/// in parts (see `read_files`), each written as a segment in `segment_dir`
/// (kept in memory without one).
fn read_every_file(
    table: &mut Table,
    root: &Path,
    segment_dir: Option<&Path>,
    cancel: &CancelToken,
) -> Result<Vec<Part>, NotBuilt> {
    let files: Vec<&Entry> = table.entries.iter().collect();
    let read = read_files(&files, 0, root, segment_dir, cancel);
    drop(files);
    let Some(read) = read else {
        return Err(NotBuilt::Failed("stopped".into()));
    };
    for (i, e) in table.entries.iter_mut().enumerate() {
        let single = e.stamp.is_some_and(|s| s.nlink == 1);
        e.doc = (read.indexed[i] && single).then_some(i as u32);
    }
    let mut parts = read.parts;
    if parts.is_empty() {
        parts.push(Box::new(Sorted::default()));
    }
    Ok(parts)
}

/// The postings of `parts` merged (a build from scratch of `table`, walked
/// from `walk_start`): written as the store's next generation when `store`
/// is given (the caller holds its lock), else, or when that
/// fails (`unsaved` says why), merged in memory.
fn save_or_merge(
    root: &Path,
    config: &IndexConfig,
    store: Option<&Store>,
    table: &Table,
    walk_start: SystemTime,
    parts: Vec<Part>,
    unsaved: &mut Option<String>,
) -> Result<Postings, NotBuilt> {
    let sources: Vec<&dyn ListSource> = parts
        .iter()
        .map(|p| p.as_ref() as &dyn ListSource)
        .collect();
    if let Some(no) = too_big(sources.iter().map(|s| s.size()).sum(), config) {
        return Err(no);
    }
    let meta = &Meta {
        walk_start,
        built_at: SystemTime::now(),
        next_doc: table.entries.len() as u32,
    };
    let Some(store) = store else {
        return Ok(merge_in_memory(&sources));
    };
    match store.write_generation(store.next_generation(), root, table, meta, &sources) {
        Ok(p) => Ok(p),
        Err(e) => {
            *unsaved = Some(format!("cannot write {}: {e}", store.dir.display()));
            Ok(merge_in_memory(&sources))
        }
    }
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
