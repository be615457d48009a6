//! The file table: every file the unfiltered walk of the root hands out, in
//! the order it hands them out (project files in path order, then each
//! ignored root's), with what identifies its content.
//!
//! The table is made by `src/search`'s own walker (hidden files on, ignore
//! rules classifying rather than dropping, no globs or types), so a search's
//! filters can be applied to it afterwards with `Walker::admits` and give
//! exactly the files that search's own walk would have given.

use super::watch::Watcher;
use crate::search::{CancelToken, ErrorLog, IgnoredRoot, WalkOptions, Walker};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// What identifies a file's content cheaply: a change to any of these means
/// the file must be read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub mtime: (i64, i64),
    /// Changed by every write and by no one else (mtime can be set back):
    /// what lets a later process trust a stored stamp.
    pub ctime: (i64, i64),
    pub ino: u64,
    /// Links to the inode. A write through one name of a hard-linked file
    /// is reported for that name's directory only, so a file with more
    /// than one link is never trusted to the postings.
    pub nlink: u64,
}

impl Stamp {
    pub fn of(path: &Path) -> Option<Stamp> {
        let m = std::fs::symlink_metadata(path).ok()?;
        Some(Stamp {
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
            ino: m.ino(),
            nlink: m.nlink(),
        })
    }
}

#[derive(Debug, Clone)]
pub struct Entry {
    pub path: PathBuf,
    /// Index in [`Table::ignored_roots`]; `None` for a project file.
    pub ignored_root: Option<u32>,
    pub stamp: Option<Stamp>,
    /// The file's document in the postings, when its content is indexed
    /// and unchanged since; `None` means "always a candidate".
    pub doc: Option<u32>,
}

#[derive(Debug, Default, Clone)]
pub struct Table {
    pub entries: Vec<Entry>,
    pub ignored_roots: Vec<IgnoredRoot>,
    /// Errors the walk met (an unreadable directory, most often). A table
    /// with errors is not used: the scan reports them as it meets them.
    pub errors: ErrorLog,
}

/// The walker the table is made with: the widest walk a search can ask for.
pub fn table_walker(root: &Path) -> Result<Walker, String> {
    let opts = WalkOptions {
        hidden: true,
        no_ignore: true,
        globs: Vec::new(),
        types: Vec::new(),
        threads: crate::search::default_threads(),
    };
    Walker::new(root.to_path_buf(), opts).map_err(|e| e.to_string())
}

/// Walks `root`, watching each directory before it is listed. The walk
/// stops once it has seen more than `max_files` files (the table is then
/// incomplete, and the caller says the tree is too big).
pub fn walk(
    root: &Path,
    watcher: &Watcher,
    cancel: &CancelToken,
    max_files: usize,
) -> Result<Table, String> {
    let walker = table_walker(root)?;
    watcher.forget_dirs();
    watcher.adder().add(root);
    let git_info = root.join(".git/info");
    if git_info.is_dir() {
        watcher.adder().add(&git_info);
    }
    let errors = Mutex::new(ErrorLog::default());
    let found = Mutex::new(Vec::new());
    let seen = AtomicUsize::new(0);
    let visit = || {
        let mut adder = watcher.adder();
        let seen = &seen;
        let mut mine = Batch {
            files: Vec::new(),
            into: &found,
        };
        move |e: &crate::search::WalkEntry<'_>| {
            if e.is_dir() {
                adder.add(e.path());
            } else if e.is_file() {
                mine.files.push(e.path().to_path_buf());
                return seen.fetch_add(1, Ordering::Relaxed) < max_files;
            }
            true
        }
    };
    let roots = walker.walk_parallel(&[], cancel, &errors, visit);
    for r in roots.iter().filter(|r| r.is_dir) {
        watcher.adder().add(&r.path);
    }
    if !roots.is_empty() && seen.load(Ordering::Relaxed) <= max_files {
        walker.walk_parallel(&roots, cancel, &errors, visit);
    }
    if cancel.is_stopped() {
        return Err("stopped".into());
    }
    let errors = errors.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut entries: Vec<Entry> = (found.into_inner().unwrap_or_else(|p| p.into_inner()))
        .into_iter()
        .map(|path| Entry {
            ignored_root: IgnoredRoot::index_of(&roots, &path).map(|i| i as u32),
            stamp: Stamp::of(&path),
            path,
            doc: None,
        })
        .collect();
    // The walk's order: project files first, then each root's, by path
    // (component-wise, which is what `Path`'s ordering is).
    entries.sort_by(|a, b| {
        (a.ignored_root.map_or(0, |i| i as u64 + 1), &a.path)
            .cmp(&(b.ignored_root.map_or(0, |i| i as u64 + 1), &b.path))
    });
    // The walk's threads allocated the paths in the order they met them;
    // copied in table order they lie side by side in memory, which makes a
    // pass over the whole table (a glob) about three times faster.
    let entries = entries.to_vec();
    Ok(Table {
        entries,
        ignored_roots: roots,
        errors,
    })
}

/// One walk thread's files, handed over when its visitor is dropped.
struct Batch<'a> {
    files: Vec<PathBuf>,
    into: &'a Mutex<Vec<PathBuf>>,
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        (self.into.lock().unwrap_or_else(|p| p.into_inner())).append(&mut self.files);
    }
}
