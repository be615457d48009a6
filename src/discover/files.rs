//! Where both commands get their files (the directory's [`FileSource`]:
//! a ready index's table or the walk, visited by `FileSource::visit_all`)
//! and how they read the few they keep.

use super::DiscoverError;
use crate::index::{IndexMode, IndexUse};
use crate::search::{
    resolve_target, FileSource, IgnoredRoot, Narrowing, Target, WalkOptions, Walker,
};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

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

/// A validated search directory with its walk, and whether an index may
/// stand in for the walk.
pub struct Scope {
    pub root: PathBuf,
    walker: Arc<Walker>,
    index: IndexMode,
}

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
        let walker = Arc::new(Walker::new(root.clone(), walk)?);
        Ok(Scope {
            root,
            walker,
            index,
        })
    }

    /// The directory's files: from the table of a ready index of it (or of
    /// one above it) when that can give them, each marked whether the
    /// regex `narrow` may match it, else the walk; with how the index
    /// served.
    pub fn source(&self, narrow: Option<&str>) -> (FileSource, IndexUse) {
        let narrowing = Narrowing {
            pattern: narrow,
            ..Narrowing::default()
        };
        let walk = FileSource::Walk(self.walker.clone());
        crate::index::source_for(walk, &narrowing, self.index)
    }

    /// Threads a visit of [`Scope::source`] runs on.
    pub fn threads(&self) -> usize {
        self.walker.options().threads
    }

    /// The labels of the ignored roots left unvisited: all of `roots`
    /// unless `visited`.
    pub fn unvisited(&self, roots: &[IgnoredRoot], visited: bool) -> Vec<String> {
        match visited {
            true => Vec::new(),
            false => roots.iter().map(|d| d.label(&self.root)).collect(),
        }
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
