//! Where both commands get their files (the directory's [`FileSource`]:
//! a ready index's table or the walk, visited by `pass::visit`), how they
//! read them and how a file's path is shown.

use super::DiscoverError;
use crate::index::{IndexMode, IndexUse};
use crate::search::{
    display_bytes, relative_bytes, resolve_target, DisplayPath, FileSource, IgnoredRoot, Narrowing,
    Target, WalkOptions, Walker,
};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Files larger than this are neither searched by trace nor outlined by
/// locate: memory and time per file stay bounded.
pub const MAX_READ_BYTES: u64 = 4 * 1024 * 1024;

/// Reads a regular file of at most `MAX_READ_BYTES` into `buf` (which a
/// walker thread reuses across its files: a fresh buffer per file cost more
/// in page faults than trace's search). Opened non-blocking and checked on
/// the open descriptor, so a FIFO swapped in since the walk never blocks us.
pub fn read_small(path: &Path, buf: &mut Vec<u8>) -> Option<std::fs::Metadata> {
    let (file, meta) = open_small(path)?;
    buf.clear();
    buf.reserve(meta.len() as usize);
    file.take(MAX_READ_BYTES).read_to_end(buf).ok()?;
    Some(meta)
}

/// A regular file of at most `MAX_READ_BYTES`, opened as [`read_small`]
/// opens it, with its metadata.
fn open_small(path: &Path) -> Option<(std::fs::File, std::fs::Metadata)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    (meta.is_file() && meta.len() <= MAX_READ_BYTES).then_some((file, meta))
}

/// The size [`read_small`] would read from `path` (it counts against a
/// read budget), without reading it.
pub fn small_file_len(path: &Path) -> Option<u64> {
    open_small(path).map(|(_, meta)| meta.len())
}

/// Whether bytes read are text: no NUL early on, as ripgrep decides.
pub fn is_text(buf: &[u8]) -> bool {
    memchr::memchr(0, &buf[..buf.len().min(8192)]).is_none()
}

/// A text file's metadata and bytes (see [`read_small`], [`is_text`]).
pub fn read_text(path: &Path, buf: &mut Vec<u8>) -> Option<std::fs::Metadata> {
    let meta = read_small(path, buf)?;
    is_text(buf).then_some(meta)
}

/// A file's path as results show it: relative to the searched `root`.
pub fn shown_path(root: &Path, path: &Path) -> DisplayPath {
    display_bytes(&relative_bytes(root, path))
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
