//! The one walk both commands run: the project's files in parallel, then,
//! when asked, what its ignore rules exclude (so ignored files can rank after
//! the project's own, as everywhere else in pi-utils).

use super::DiscoverError;
use crate::index::{IndexMode, IndexUse, ListedEntry, Listing};
use crate::search::CancelToken;
use crate::search::{
    resolve_target, ErrorLog, IgnoredRoot, Target, WalkEntry, WalkOptions, Walker,
};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::SystemTime;

/// Files larger than this are neither searched by trace nor outlined by
/// locate: memory and time per file stay bounded.
pub const MAX_READ_BYTES: u64 = 4 * 1024 * 1024;

/// Reads a regular file of at most `MAX_READ_BYTES` into `buf` (which a
/// walker thread reuses across its files: a fresh buffer per file cost more
/// in page faults than trace's search). Opened non-blocking and checked on
/// the open descriptor, so a FIFO swapped in since the walk never blocks us.
pub fn read_small(path: &Path, buf: &mut Vec<u8>) -> Option<std::fs::Metadata> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_READ_BYTES {
        return None;
    }
    buf.clear();
    buf.reserve(meta.len() as usize);
    file.take(MAX_READ_BYTES).read_to_end(buf).ok()?;
    Some(meta)
}

/// A validated search directory with its walker.
pub struct Scope {
    pub root: PathBuf,
    walker: Walker,
    walk: WalkOptions,
    index: IndexMode,
}

/// One file handed to a visitor.
#[derive(Debug, Clone, Copy)]
pub struct Visit<'a> {
    pub path: &'a Path,
    /// The index's table entry, when the file came from there.
    listed: Option<&'a ListedEntry<'a>>,
    /// False only when the index rules the caller's pattern out for this
    /// file: it is still one the walk would have visited.
    pub candidate: bool,
}

impl Visit<'_> {
    /// From the table's stamp when listed there, else by `lstat` (as the
    /// walk would give it).
    pub fn mtime(&self) -> SystemTime {
        match self.listed {
            Some(l) => l.mtime(),
            None => std::fs::symlink_metadata(self.path)
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH),
        }
    }
}

/// Files a listing thread takes at a time.
const CHUNK: usize = 512;

impl Scope {
    pub fn new(
        cwd: &Path,
        path: Option<&str>,
        walk: WalkOptions,
        index: IndexMode,
    ) -> Result<Scope, DiscoverError> {
        let root = match resolve_target(cwd, path)? {
            Target::Dir(d) => d,
            Target::File(f) => return Err(DiscoverError::NotADirectory(f.display().to_string())),
        };
        let walker = Walker::new(root.clone(), walk.clone())?;
        Ok(Scope {
            root,
            walker,
            walk,
            index,
        })
    }

    /// Calls a per-thread visitor with each regular file and whether ignore
    /// rules exclude it; a visitor returning false stops the walk. Ignored
    /// roots are walked after the project only when `walk_ignored()` says so
    /// once the project is done; the labels of those left unwalked are
    /// returned, with how the index served.
    ///
    /// A ready index of the directory (or of one above it) lists the files
    /// from its table instead of walking; `narrow`, a regex, then marks the
    /// files its postings rule out.
    pub fn for_each_file<F, V>(
        &self,
        narrow: Option<&str>,
        cancel: &CancelToken,
        errors: &Mutex<ErrorLog>,
        walk_ignored: impl FnOnce() -> bool,
        make_visitor: F,
    ) -> (Vec<String>, IndexUse)
    where
        F: Fn(bool) -> V + Sync,
        V: FnMut(&Visit<'_>) -> bool + Send,
    {
        match crate::index::listing(&self.root, &self.walk, narrow, self.index) {
            Ok(listing) => (
                self.list(&listing, cancel, walk_ignored, make_visitor),
                IndexUse::Used,
            ),
            Err(how) => (self.walk(cancel, errors, walk_ignored, make_visitor), how),
        }
    }

    fn walk<F, V>(
        &self,
        cancel: &CancelToken,
        errors: &Mutex<ErrorLog>,
        walk_ignored: impl FnOnce() -> bool,
        make_visitor: F,
    ) -> Vec<String>
    where
        F: Fn(bool) -> V + Sync,
        V: FnMut(&Visit<'_>) -> bool + Send,
    {
        let visit_entry = |ignored: bool| {
            let mut visit = make_visitor(ignored);
            move |e: &WalkEntry<'_>| {
                !e.is_file()
                    || visit(&Visit {
                        path: e.path(),
                        listed: None,
                        candidate: true,
                    })
            }
        };
        let deferred = self
            .walker
            .walk_parallel(&[], cancel, errors, || visit_entry(false));
        if deferred.is_empty() {
            return Vec::new();
        }
        if cancel.is_stopped() || !walk_ignored() {
            return deferred.iter().map(|d| d.label(&self.root)).collect();
        }
        let mut single = make_visitor(true);
        for d in deferred.iter().filter(|d| !d.is_dir) {
            let visit = Visit {
                path: &d.path,
                listed: None,
                candidate: true,
            };
            if !single(&visit) {
                break;
            }
        }
        let dirs: Vec<IgnoredRoot> = deferred.iter().filter(|d| d.is_dir).cloned().collect();
        if !dirs.is_empty() {
            self.walker
                .walk_parallel(&dirs, cancel, errors, || visit_entry(true));
        }
        if cancel.is_stopped() {
            return deferred.iter().map(|d| d.label(&self.root)).collect();
        }
        Vec::new()
    }

    /// [`Scope::walk`] over a listing: the same files, split among threads
    /// in chunks, with the same rule for the ignored roots.
    fn list<F, V>(
        &self,
        listing: &Listing,
        cancel: &CancelToken,
        walk_ignored: impl FnOnce() -> bool,
        make_visitor: F,
    ) -> Vec<String>
    where
        F: Fn(bool) -> V + Sync,
        V: FnMut(&Visit<'_>) -> bool + Send,
    {
        let labels = || {
            (listing.ignored_roots().iter())
                .map(|d| d.label(&self.root))
                .collect()
        };
        visit_parallel(&listing.project(), self.walk.threads, cancel, || {
            make_visitor(false)
        });
        let roots = listing.ignored_roots().len();
        if roots == 0 {
            return Vec::new();
        }
        if cancel.is_stopped() || !walk_ignored() {
            return labels();
        }
        let ignored: Vec<ListedEntry<'_>> = (0..roots).flat_map(|i| listing.ignored(i)).collect();
        visit_parallel(&ignored, self.walk.threads, cancel, || make_visitor(true));
        if cancel.is_stopped() {
            return labels();
        }
        Vec::new()
    }
}

/// Runs a worker (one per thread, made by `make`) over every item on a
/// few threads and returns what it gave, in no set order: the callers
/// read and parse the handful of files a result shows, a few ms each.
pub fn map_parallel<T: Sync, R: Send, W>(items: &[T], make: impl Fn() -> W + Sync) -> Vec<R>
where
    W: FnMut(usize, &T) -> Option<R>,
{
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::new());
    let threads = crate::search::default_threads()
        .min(4)
        .min(items.len())
        .max(1);
    let work = || {
        let mut worker = make();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            if let Some(r) = worker(i, item) {
                done.lock().unwrap_or_else(|p| p.into_inner()).push(r);
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(work);
        }
        work();
    });
    done.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// Visits `files` on up to `threads` threads (each with its own visitor),
/// a chunk at a time, until they are done, a visitor says stop, or `cancel`
/// stops.
fn visit_parallel<F, V>(files: &[ListedEntry<'_>], threads: usize, cancel: &CancelToken, make: F)
where
    F: Fn() -> V + Sync,
    V: FnMut(&Visit<'_>) -> bool + Send,
{
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let threads = threads.clamp(1, crate::search::default_threads());
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
                let v = Visit {
                    path: f.path,
                    listed: Some(f),
                    candidate: f.candidate,
                };
                if !visit(&v) {
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
