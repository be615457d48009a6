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

/// Files handed out on demand, in path order, by whoever holds them (the
/// index's file table): a search that reaches its limit early never asks
/// for the rest, so a broad query over a large tree reads its first files
/// without anyone listing the whole tree first. Filtered as a
/// [`FileList`] is.
pub trait FileFeed: Send + Sync {
    /// In path order, as the walk would set them aside.
    fn ignored_roots(&self) -> &[IgnoredRoot];
    /// Calls `on_file` with each project file in path order until it
    /// returns false.
    fn project(&self, on_file: &mut dyn FnMut(&Path) -> bool);
    /// Calls `on_file` with each file under ignored root `index`, in path
    /// order, until it returns false; returns false when stopped so.
    fn ignored(&self, index: usize, on_file: &mut dyn FnMut(&Path) -> bool) -> bool;
}

/// The files a plan searches. Every kind yields project files before
/// ignored ones and each part in path order, so output does not depend on
/// which kind it came from.
pub enum FileSource {
    /// Boxed: a walker is large and a list is not.
    Walk(Box<Walker>),
    List(FileList),
    Feed(Box<dyn FileFeed>),
}

impl FileList {
    /// Everything a feed hands out, as a list.
    fn of_feed(feed: &dyn FileFeed, cancel: &CancelToken) -> FileList {
        let mut files = Vec::new();
        feed.project(&mut |p| {
            files.push(ListedFile {
                path: p.to_path_buf(),
                ignored_root: None,
            });
            !cancel.is_stopped()
        });
        for i in 0..feed.ignored_roots().len() {
            feed.ignored(i, &mut |p| {
                files.push(ListedFile {
                    path: p.to_path_buf(),
                    ignored_root: Some(i),
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
            FileSource::Feed(feed) => {
                feed.project(&mut |p| !cancel.is_stopped() && on_file(p));
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
        match self {
            FileSource::Walk(walker) => {
                walker.walk_ignored_sorted(&roots[index], cancel, errors, on_file)
            }
            FileSource::List(list) => list
                .files
                .iter()
                .filter(|f| f.ignored_root == Some(index))
                .all(|f| !cancel.is_stopped() && on_file(&f.path)),
            FileSource::Feed(feed) => {
                feed.ignored(index, &mut |p| !cancel.is_stopped() && on_file(p))
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

/// A file's modification time for `--sort mtime`; unreadable files sort as
/// oldest.
pub(super) fn mtime_of(path: &Path) -> SystemTime {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}
