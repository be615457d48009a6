//! Where a search gets its files: a walk of the tree, or a list of files
//! given in path order (one named file, or the files an index's table
//! holds). grep, glob, locate and trace all run over a [`FileSource`], so
//! a new source of files plugs in here without touching them.

use super::cancel::CancelToken;
use super::parallel_walk::WalkEntry;
use super::walk::{ErrorLog, IgnoredRoot, Walker};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One file of a [`FileList`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedFile {
    pub path: PathBuf,
    /// Index in [`FileList::ignored_roots`] of the ignored root the file
    /// lies under; `None` for a project file.
    pub ignored_root: Option<usize>,
}

/// Files to search, already filtered (globs, types, hidden) by whoever made
/// the list: they are searched as given.
#[derive(Debug, Clone, Default)]
pub struct FileList {
    /// In path order.
    pub ignored_roots: Vec<IgnoredRoot>,
    /// In path order within the project and within each ignored root.
    pub files: Vec<ListedFile>,
}

/// What the source of a file knows of its `stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnownStamp {
    /// Nothing: a walked file, read by `lstat` when asked.
    Read,
    /// The stamp its holder keeps fresh (the index re-reads the stamp of
    /// every file that changed): modification time as the walk's `stat`
    /// gives it (seconds, nanoseconds), and size.
    Kept { mtime: (i64, i64), size: u64 },
    /// None kept: sorts as oldest, with size 0.
    Missing,
}

/// One file a source hands out.
#[derive(Debug, Clone, Copy)]
pub struct SourceFile<'a> {
    pub path: &'a Path,
    /// False only when the holder rules the caller's pattern out for this
    /// file (see [`Narrowing`]): it is still one the walk would hand out.
    pub candidate: bool,
    pub stamp: KnownStamp,
}

impl SourceFile<'_> {
    /// A walked file: a candidate, its stamp read when asked.
    pub fn walked(path: &Path) -> SourceFile<'_> {
        SourceFile {
            path,
            candidate: true,
            stamp: KnownStamp::Read,
        }
    }

    /// Modification time and size as the walk's `stat` gives them; only
    /// asked for the few files a caller keeps. Unreadable: `None`.
    pub fn current(&self) -> Option<(SystemTime, u64)> {
        match self.stamp {
            KnownStamp::Read => std::fs::symlink_metadata(self.path)
                .ok()
                .map(|m| (m.modified().unwrap_or(UNIX_EPOCH), m.size())),
            KnownStamp::Kept { mtime, size } => Some((system_time(mtime), size)),
            KnownStamp::Missing => None,
        }
    }

    /// For `--sort mtime` and locate's tie-breaker: unreadable files sort
    /// as oldest.
    pub fn mtime(&self) -> SystemTime {
        self.current().map_or(UNIX_EPOCH, |(t, _)| t)
    }
}

/// A `stat` modification time (seconds, possibly negative: before 1970;
/// nanoseconds added) as a time.
pub fn system_time((secs, nanos): (i64, i64)) -> SystemTime {
    let whole = Duration::from_secs(secs.unsigned_abs());
    let whole = if secs >= 0 {
        UNIX_EPOCH.checked_add(whole)
    } else {
        UNIX_EPOCH.checked_sub(whole)
    };
    let nanos = Duration::from_nanos(nanos.clamp(0, 999_999_999) as u64);
    whole
        .and_then(|t| t.checked_add(nanos))
        .unwrap_or(UNIX_EPOCH)
}

/// What a holder of the tree's contents (the index's postings) may rule
/// files out by: the regex the caller looks for. Files ruled out are still
/// handed out to those that count every file (discovery), marked not
/// [`SourceFile::candidate`]; a content search never sees them.
#[derive(Debug, Clone, Default)]
pub struct Narrowing<'a> {
    /// `None`: every file is a candidate.
    pub pattern: Option<&'a str>,
    pub literal: bool,
    pub ignore_case: bool,
    /// A search that stops at a limit: when the pattern cannot narrow, the
    /// walk serves it better (it usually ends within its first files).
    pub limited: bool,
    /// Directories are wanted too, those this takes. A table of files
    /// knows its directories by path only (no order, no classes), so it
    /// serves such a listing only when none of the directories at or
    /// below the listing's root is taken: then they add nothing to the
    /// answer. Otherwise the walk answers.
    pub dirs: Option<&'a dyn TakesDir>,
}

/// Which directories a listing lists, by path alone (kind and pattern; a
/// filter that needs more, such as hidden, is left out: taking one too
/// many only makes the listing walk).
pub trait TakesDir: Sync {
    fn takes_dir(&self, dir: &std::path::Path) -> bool;
}

impl std::fmt::Debug for dyn TakesDir + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TakesDir")
    }
}

/// Files handed out on demand, in path order, by whoever holds them (the
/// index's file table): a search that reaches its limit early never asks
/// for the rest, so a broad query over a large tree reads its first files
/// without anyone listing the whole tree first. Filtered as a
/// [`FileList`] is.
pub trait FileFeed: Send + Sync {
    /// In path order, as the walk would set them aside.
    fn ignored_roots(&self) -> &[IgnoredRoot];
    /// The project's files, in path order.
    fn project(&self) -> Box<dyn Iterator<Item = SourceFile<'_>> + '_>;
    /// The files under ignored root `index`, in path order.
    fn ignored(&self, index: usize) -> Box<dyn Iterator<Item = SourceFile<'_>> + '_>;
    /// The paths of the project's files not ruled out, in path order: the
    /// only ones a content search reads. A holder that can pass over the
    /// others without looking at them says so here.
    fn project_candidates(&self) -> Box<dyn Iterator<Item = &Path> + '_> {
        Box::new(candidates(self.project()))
    }
    /// As [`FileFeed::project_candidates`], under ignored root `index`.
    fn ignored_candidates(&self, index: usize) -> Box<dyn Iterator<Item = &Path> + '_> {
        Box::new(candidates(self.ignored(index)))
    }
}

/// The files a plan searches. Every kind yields project files before
/// ignored ones and each part in path order, so output does not depend on
/// which kind it came from.
pub enum FileSource {
    /// Shared: the plan that made the walker keeps it, for a run over
    /// another source or a walk of its own.
    Walk(Arc<Walker>),
    List(FileList),
    Feed(Box<dyn FileFeed>),
}

impl FileList {
    /// The candidates a feed hands out, as a list.
    fn of_feed(feed: &dyn FileFeed, cancel: &CancelToken) -> FileList {
        let mut files = Vec::new();
        let parts = (0..feed.ignored_roots().len()).map(|i| (Some(i), feed.ignored_candidates(i)));
        for (ignored_root, mut part) in
            std::iter::once((None, feed.project_candidates())).chain(parts)
        {
            let _ = part.all(|p| {
                files.push(ListedFile {
                    path: p.to_path_buf(),
                    ignored_root,
                });
                !cancel.is_stopped()
            });
        }
        FileList {
            ignored_roots: feed.ignored_roots().to_vec(),
            files,
        }
    }
}

impl FileSource {
    /// The feed this source is, or the walker.
    fn feed(&self) -> Result<&dyn FileFeed, &Walker> {
        match self {
            FileSource::Walk(walker) => Err(walker),
            FileSource::List(list) => Ok(list),
            FileSource::Feed(feed) => Ok(feed.as_ref()),
        }
    }

    /// Calls `on_file` with each project file in path order until it returns
    /// false. Returns the ignored roots set aside (for a stopped walk, those
    /// reached so far).
    pub(super) fn project_files(
        &self,
        cancel: &CancelToken,
        errors: &mut ErrorLog,
        mut on_file: impl FnMut(&Path) -> bool,
    ) -> Vec<IgnoredRoot> {
        match self.feed() {
            Err(walker) => walker.walk_sorted(cancel, errors, on_file),
            Ok(feed) => {
                let _ = (feed.project_candidates()).all(|p| !cancel.is_stopped() && on_file(p));
                feed.ignored_roots().to_vec()
            }
        }
    }

    /// Calls `on_file` with each file under ignored root `index` of `roots`,
    /// in path order. Returns false when stopped early.
    pub(super) fn ignored_files(
        &self,
        roots: &[IgnoredRoot],
        index: usize,
        cancel: &CancelToken,
        errors: &mut ErrorLog,
        mut on_file: impl FnMut(&Path) -> bool,
    ) -> bool {
        match self.feed() {
            Err(walker) => walker.walk_ignored_sorted(&roots[index], cancel, errors, on_file),
            Ok(feed) => {
                (feed.ignored_candidates(index)).all(|p| !cancel.is_stopped() && on_file(p))
            }
        }
    }

    /// Visits every file, project files before ignored ones, in no
    /// particular order, on `threads` threads; `make_visitor` is called once
    /// per thread and its visitor gets each file with its ignored root.
    /// Returns the ignored roots.
    pub(super) fn visit_parallel<F, V>(
        &self,
        threads: usize,
        cancel: &CancelToken,
        errors: &Mutex<ErrorLog>,
        make_visitor: F,
    ) -> Vec<IgnoredRoot>
    where
        F: Fn() -> V + Sync,
        V: FnMut(&Path, Option<usize>) + Send,
    {
        match self {
            FileSource::Walk(walker) => {
                let roots = walker.walk_parallel(&[], cancel, errors, || {
                    let mut visit = make_visitor();
                    move |e: &WalkEntry<'_>| {
                        if e.is_file() {
                            visit(e.path(), None);
                        }
                        true
                    }
                });
                if !roots.is_empty() && !cancel.is_stopped() {
                    walker.walk_parallel(&roots, cancel, errors, || {
                        let mut visit = make_visitor();
                        let roots = &roots;
                        move |e: &WalkEntry<'_>| {
                            if e.is_file() {
                                visit(e.path(), IgnoredRoot::index_of(roots, e.path()));
                            }
                            true
                        }
                    });
                }
                roots
            }
            FileSource::List(list) => visit_list(list, threads, cancel, make_visitor),
            // Every file is visited: nothing is saved by asking one by one.
            FileSource::Feed(feed) => {
                let list = FileList::of_feed(feed.as_ref(), cancel);
                visit_list(&list, threads, cancel, make_visitor)
            }
        }
    }

    /// Visits every file, candidate or not, on up to `threads` threads, as
    /// discovery counts them: the project's files first, then the ignored
    /// roots only when `walk_ignored()`, asked once the project is done,
    /// says so. `make_visitor(ignored)` is called once per thread and part;
    /// a visitor returning false stops the visit. Returns the ignored roots
    /// and whether they were all visited.
    ///
    /// A walk visits the project in parallel, then the ignored files it
    /// set aside one by one and the ignored directories in one parallel
    /// walk; a feed's files are split among threads in chunks.
    pub fn visit_all<F, V>(
        &self,
        threads: usize,
        cancel: &CancelToken,
        errors: &Mutex<ErrorLog>,
        walk_ignored: impl FnOnce() -> bool,
        make_visitor: F,
    ) -> (Vec<IgnoredRoot>, bool)
    where
        F: Fn(bool) -> V + Sync,
        V: FnMut(&SourceFile<'_>) -> bool + Send,
    {
        let walker = match self.feed() {
            Err(walker) => walker,
            Ok(feed) => {
                let roots = feed.ignored_roots().to_vec();
                let project: Vec<SourceFile<'_>> = feed.project().collect();
                visit_chunks(&project, threads, cancel, || make_visitor(false));
                if roots.is_empty() || cancel.is_stopped() || !walk_ignored() {
                    let none = roots.is_empty();
                    return (roots, none);
                }
                let ignored: Vec<SourceFile<'_>> =
                    (0..roots.len()).flat_map(|i| feed.ignored(i)).collect();
                visit_chunks(&ignored, threads, cancel, || make_visitor(true));
                return (roots, !cancel.is_stopped());
            }
        };
        let visit_entry = |ignored: bool| {
            let mut visit = make_visitor(ignored);
            move |e: &WalkEntry<'_>| !e.is_file() || visit(&SourceFile::walked(e.path()))
        };
        let deferred = walker.walk_parallel(&[], cancel, errors, || visit_entry(false));
        if deferred.is_empty() {
            return (deferred, true);
        }
        if cancel.is_stopped() || !walk_ignored() {
            return (deferred, false);
        }
        let mut single = make_visitor(true);
        for d in deferred.iter().filter(|d| !d.is_dir) {
            if !single(&SourceFile::walked(&d.path)) {
                break;
            }
        }
        drop(single);
        let dirs: Vec<IgnoredRoot> = deferred.iter().filter(|d| d.is_dir).cloned().collect();
        if !dirs.is_empty() {
            walker.walk_parallel(&dirs, cancel, errors, || visit_entry(true));
        }
        let walked = !cancel.is_stopped();
        (deferred, walked)
    }
}

/// A list is a feed of its files, every one a candidate.
impl FileFeed for FileList {
    fn ignored_roots(&self) -> &[IgnoredRoot] {
        &self.ignored_roots
    }

    fn project(&self) -> Box<dyn Iterator<Item = SourceFile<'_>> + '_> {
        self.part(None)
    }

    fn ignored(&self, index: usize) -> Box<dyn Iterator<Item = SourceFile<'_>> + '_> {
        self.part(Some(index))
    }
}

impl FileList {
    fn part(&self, root: Option<usize>) -> Box<dyn Iterator<Item = SourceFile<'_>> + '_> {
        let files = self.files.iter().filter(move |f| f.ignored_root == root);
        Box::new(files.map(|f| SourceFile::walked(&f.path)))
    }
}

/// Files a listing thread takes at a time.
const CHUNK: usize = 512;

/// Visits `files` on up to `threads` threads (each with its own visitor),
/// a chunk at a time, until they are done, a visitor says stop, or `cancel`
/// stops.
fn visit_chunks<F, V>(files: &[SourceFile<'_>], threads: usize, cancel: &CancelToken, make: F)
where
    F: Fn() -> V + Sync,
    V: FnMut(&SourceFile<'_>) -> bool + Send,
{
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let threads = threads.clamp(1, super::walk::default_threads());
    let threads = threads.min(files.len().div_ceil(CHUNK)).max(1);
    let work = || {
        let mut visit = make();
        loop {
            if stop.load(Ordering::Relaxed) || cancel.is_stopped() {
                return;
            }
            let at = next.fetch_add(CHUNK, Ordering::Relaxed);
            let Some(chunk) = files.get(at..(at + CHUNK).min(files.len())) else {
                return;
            };
            for f in chunk {
                if !visit(f) {
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(work);
        }
        work();
    });
}

/// [`FileSource::visit_parallel`] over a list.
fn visit_list<F, V>(
    list: &FileList,
    threads: usize,
    cancel: &CancelToken,
    make_visitor: F,
) -> Vec<IgnoredRoot>
where
    F: Fn() -> V + Sync,
    V: FnMut(&Path, Option<usize>) + Send,
{
    // Project files first (the list's own order keeps them there only
    // within a root), then the ignored ones.
    let order: Vec<&ListedFile> = (list.files.iter())
        .filter(|f| f.ignored_root.is_none())
        .chain(list.files.iter().filter(|f| f.ignored_root.is_some()))
        .collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            let (order, next, make_visitor) = (&order, &next, &make_visitor);
            scope.spawn(move || {
                let mut visit = make_visitor();
                while let Some(f) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if cancel.is_stopped() {
                        break;
                    }
                    visit(&f.path, f.ignored_root);
                }
            });
        }
    });
    list.ignored_roots.clone()
}

/// The paths of the files of `part` the holder does not rule out: the
/// only ones a content search reads.
fn candidates<'a>(part: impl Iterator<Item = SourceFile<'a>>) -> impl Iterator<Item = &'a Path> {
    part.filter(|f| f.candidate).map(|f| f.path)
}

/// A file's modification time for `--sort mtime`; unreadable files sort as
/// oldest.
pub(super) fn mtime_of(path: &Path) -> SystemTime {
    SourceFile::walked(path).mtime()
}
