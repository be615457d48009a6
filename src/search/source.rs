//! Where a content search gets its files: a walk of the tree, or a list of
//! files given in path order (one named file, or candidates from an index).
//! The pipelines only see these few calls, so a new source of candidate
//! files plugs in here without touching them.

use super::cancel::CancelToken;
use super::walk::{ErrorLog, IgnoredRoot, WalkEntry, Walker};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::SystemTime;

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

/// The files a plan searches. Both kinds yield project files before
/// ignored ones and each part in path order, so output does not depend on
/// which kind it came from.
pub enum FileSource {
    /// Boxed: a walker is large and a list is not.
    Walk(Box<Walker>),
    List(FileList),
}

impl FileSource {
    /// Calls `on_file` with each project file in path order until it returns
    /// false. Returns the ignored roots set aside (for a stopped walk, those
    /// reached so far).
    pub(super) fn project_files(
        &self,
        cancel: &CancelToken,
        errors: &mut ErrorLog,
        mut on_file: impl FnMut(&Path) -> bool,
    ) -> Vec<IgnoredRoot> {
        match self {
            FileSource::Walk(walker) => walker.walk_sorted(cancel, errors, on_file),
            FileSource::List(list) => {
                let _ = list
                    .files
                    .iter()
                    .filter(|f| f.ignored_root.is_none())
                    .all(|f| !cancel.is_stopped() && on_file(&f.path));
                list.ignored_roots.clone()
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
        match self {
            FileSource::Walk(walker) => {
                walker.walk_ignored_sorted(&roots[index], cancel, errors, on_file)
            }
            FileSource::List(list) => list
                .files
                .iter()
                .filter(|f| f.ignored_root == Some(index))
                .all(|f| !cancel.is_stopped() && on_file(&f.path)),
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
            FileSource::List(list) => {
                // Project files first (the list's own order keeps them there
                // only within a root), then the ignored ones.
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
        }
    }
}

/// A file's modification time for `--sort mtime`; unreadable files sort as
/// oldest.
pub(super) fn mtime_of(path: &Path) -> SystemTime {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}
