//! The one walk both commands run: the project's files in parallel, then,
//! when asked, what its ignore rules exclude (so ignored files can rank after
//! the project's own, as everywhere else in pi-utils).

use super::DiscoverError;
use crate::search::CancelToken;
use crate::search::{
    resolve_target, ErrorLog, IgnoredRoot, Target, WalkEntry, WalkOptions, Walker,
};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
}

impl Scope {
    pub fn new(cwd: &Path, path: Option<&str>, walk: WalkOptions) -> Result<Scope, DiscoverError> {
        let root = match resolve_target(cwd, path)? {
            Target::Dir(d) => d,
            Target::File(f) => return Err(DiscoverError::NotADirectory(f.display().to_string())),
        };
        let walker = Walker::new(root.clone(), walk)?;
        Ok(Scope { root, walker })
    }

    /// Calls a per-thread visitor with each regular file and whether ignore
    /// rules exclude it; a visitor returning false stops the walk. Ignored
    /// roots are walked after the project only when `walk_ignored()` says so
    /// once the project is done; the labels of those left unwalked are
    /// returned.
    pub fn for_each_file<F, V>(
        &self,
        cancel: &CancelToken,
        errors: &Mutex<ErrorLog>,
        walk_ignored: impl FnOnce() -> bool,
        make_visitor: F,
    ) -> Vec<String>
    where
        F: Fn(bool) -> V + Sync,
        V: FnMut(&Path) -> bool + Send,
    {
        let visit_entry = |ignored: bool| {
            let mut visit = make_visitor(ignored);
            move |e: &WalkEntry<'_>| !e.is_file() || visit(e.path())
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
            if !single(&d.path) {
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
}
