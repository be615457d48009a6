//! The file table: every file the unfiltered walk of the root hands out, in
//! the order it hands them out (project files in path order, then each
//! ignored root's), with what identifies its content.
//!
//! The table is made by `src/search`'s own walker (hidden files on, ignore
//! rules classifying rather than dropping, no globs or types), so a search's
//! filters can be applied to it afterwards with `Walker::admits` and give
//! exactly the files that search's own walk would have given.

use super::chunked::Chunked;
use super::watch::Watcher;
use crate::search::stamp::Stamp;
use crate::search::{
    path_order, CancelToken, ErrorLog, IgnoredRoot, WalkOptions, Walker, IGNORE_FILES,
};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A listed directory's stamp. The root is stamped as the directory it
/// resolves to (a root named through a symlink would otherwise be stamped
/// as the link, which no file created at its top changes); the walk never
/// follows a link below the root, so lstat is right there.
pub fn stamp_dir(dir: &Path, root: &Path) -> Option<Stamp> {
    if dir == root {
        Stamp::followed(dir)
    } else {
        Stamp::of(dir)
    }
}

/// An entry's document where documents are kept as plain numbers, one per
/// entry (`Picture::doc_at`): the entry has none.
pub(super) const NO_DOC: u32 = u32::MAX;

/// In `Picture::doc_at`, a value at or above this (and below `NO_DOC`) is a
/// file the delta read, `DELTA_DOC + slot` (see `delta.rs`): no document of
/// the generation, which numbers its files from 0 and holds at most
/// `IndexConfig::max_files`, far below it.
pub(super) const DELTA_DOC: u32 = 1 << 31;

/// Whether a value of `Picture::doc_at` is a document of the generation
/// (else the entry's `doc` is `None`).
pub(super) fn in_postings(d: u32) -> bool {
    d < DELTA_DOC
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
    /// In chunks: a change applied in place replaces a run of them without
    /// moving the rest (see `chunked.rs`).
    pub entries: Chunked<Entry>,
    pub ignored_roots: Vec<IgnoredRoot>,
    /// Errors the walk met (an unreadable directory, most often). A table
    /// with errors is not used: the scan reports them as it meets them.
    pub errors: ErrorLog,
    /// Every directory the walk listed, each stamped before it was listed,
    /// in path order (the root first): a change applied in place finds the
    /// directories at and below its place by a search, not a pass. A
    /// directory whose stamp is unchanged holds the same entries, which
    /// lets the next process re-validate without listing it (`restamp`).
    pub dirs: Chunked<Stamped>,
    /// Ignore-rule files the walk's classification may read that are not
    /// in the table (those of the root's ancestors, `.git/info/exclude`,
    /// and whether a `.git` makes an ancestor a repository), stamped
    /// before the walk; `None`: absent.
    pub rule_files: Vec<Stamped>,
}

/// A path and its stamp (`None`: it could not be stamped, or is absent).
pub type Stamped = (PathBuf, Option<Stamp>);

/// The files outside the table whose change could change how the walk
/// classifies the table's files, stamped as they are now: the ancestors'
/// ignore files, each repository's marks and exclude, and the files the
/// user's global excludes come from (git's config files and the excludes
/// file they name). Of a `.git` only whether it is there counts (git
/// changes its stamp all the time).
pub(super) fn rule_files_of(root: &Path) -> Vec<Stamped> {
    let mut out = Vec::new();
    for dir in root.ancestors() {
        if dir != root {
            for name in IGNORE_FILES {
                let p = dir.join(name);
                let s = rule_stamp(&p);
                out.push((p, s));
            }
        }
        push_repository(&mut out, dir);
        // A `.jj` makes a repository root too (whether it is there).
        let p = dir.join(".jj");
        let s = rule_stamp(&p);
        out.push((p, s));
    }
    for p in crate::search::global_rule_files() {
        let s = rule_stamp(&p);
        out.push((p, s));
    }
    out
}

/// `dir`'s `.git` (whether it is there) and its exclude file: its
/// `.git/info/exclude`, or a worktree's in its common directory.
fn push_repository(out: &mut Vec<Stamped>, dir: &Path) {
    let exclude = crate::search::repository_exclude(dir);
    for p in [
        dir.join(".git"),
        exclude.unwrap_or_else(|| dir.join(".git/info/exclude")),
    ] {
        let s = rule_stamp(&p);
        out.push((p, s));
    }
}

/// Whether a watch surely hears of a change of this rule file: an ignore
/// file, a `.git`, a `.git/info/exclude` below the root (their folders are
/// watched). The global excludes' files and a worktree's common exclude
/// may be anywhere; an exclude above the root is one `stat` to check.
fn watched_place(p: &Path, root: Option<&Path>) -> bool {
    names_rules(p)
        || p.file_name().is_some_and(|n| n == ".git" || n == ".jj")
        || (p.ends_with(".git/info/exclude") && root.is_some_and(|r| p.starts_with(r)))
}

/// A rule file's stamp as [`rule_files_of`] takes it: followed through
/// links (the classifier reads the target), and of a `.git` or `.jj` only
/// that it is there.
pub(super) fn rule_stamp(path: &Path) -> Option<Stamp> {
    let s = Stamp::followed(path);
    if path.file_name().is_some_and(|n| n == ".git" || n == ".jj") {
        return s.map(|_| Stamp {
            size: 0,
            mtime: (0, 0),
            ctime: (0, 0),
            ino: 0,
            nlink: 0,
        });
    }
    s
}

/// The device and inode the root names now: when they change (a parent
/// renamed or replaced, a symlink on the way switched) the table describes
/// another tree.
pub fn identity(root: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(root).ok().map(|m| (m.dev(), m.ino()))
}

/// The rule files no watch sees a change of, which the picture stamps
/// again at every search: a symlinked one (its target may be anywhere), a
/// hard-linked one (written through another name, only that name's
/// directory hears of it), and those outside the watched folders (the
/// global excludes' files, a worktree's common exclude: a few `stat`s).
/// The picture keeps its two parts apart (`linked_rules`, `unseen_rules`);
/// this whole-table form is what debug builds check them against.
#[cfg_attr(not(debug_assertions), allow(dead_code))]
pub fn unwatched_rules(table: &Table) -> Vec<Stamped> {
    let mut out = linked_rules(&table.entries);
    out.extend(unseen_rules(table));
    out
}

/// The hard-linked ignore files among `entries` (the table's part of
/// [`unwatched_rules`]): a change applied in place asks this of its new
/// entries only, not of the whole table (6 ms on four Linux trees).
pub fn linked_rules<'a>(entries: impl IntoIterator<Item = &'a Entry>) -> Vec<Stamped> {
    (entries.into_iter())
        .filter(|e| e.stamp.is_some_and(|s| s.nlink > 1) && names_rules(&e.path))
        .map(|e| (e.path.clone(), e.stamp))
        .collect()
}

/// The rule files kept beside the table that no watch surely hears of: a
/// symlinked or hard-linked one, and those outside the watched folders (a
/// few per tree: each costs a `stat`).
pub fn unseen_rules(table: &Table) -> Vec<Stamped> {
    let root = table.dirs.get(0).map(|d| d.0.as_path());
    (table.rule_files.iter())
        .filter(|(p, s)| {
            let symlink = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
            symlink || s.is_some_and(|s| s.nlink > 1) || !watched_place(p, root)
        })
        .cloned()
        .collect()
}

/// Whether `path` is named as an ignore file.
pub fn names_rules(path: &Path) -> bool {
    (path.file_name()).is_some_and(|n| IGNORE_FILES.iter().any(|f| n == *f))
}

/// Whether any of `rules` (from [`unwatched_rules`]) changed since stamped.
pub fn unwatched_changed(rules: &[Stamped]) -> bool {
    rules.iter().any(|(p, s)| rule_stamp(p) != *s)
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

/// The table's order: project files first, then each ignored root's, each
/// by path.
pub fn entry_order(a: (Option<u32>, &Path), b: (Option<u32>, &Path)) -> std::cmp::Ordering {
    let class = |c: Option<u32>| c.map_or(0, |i| i as u64 + 1);
    class(a.0)
        .cmp(&class(b.0))
        .then_with(|| path_order(a.1, b.1))
}

impl Table {
    /// Where `path`'s entry is: a search in the table's order (no map of
    /// every path to build when a picture is made).
    pub fn find(&self, path: &Path) -> Option<usize> {
        let class = IgnoredRoot::index_of(&self.ignored_roots, path).map(|i| i as u32);
        (self.entries)
            .binary_search_by(|e| entry_order((e.ignored_root, &e.path), (class, path)))
            .ok()
    }
}

/// For each entry of `fresh`, the entry of `old` with the same path: one
/// merge pass over both tables, which are in the same order, instead of a
/// map of every old path (80 ms on the Linux tree). Should the ignored
/// roots differ, `old` is put in `fresh`'s order first.
pub fn same_paths(old: &Table, fresh: &Table) -> Vec<Option<usize>> {
    let roots = &fresh.ignored_roots;
    let same_roots = old.ignored_roots.len() == roots.len()
        && (old.ignored_roots.iter().zip(roots))
            .all(|(a, b)| a.is_dir == b.is_dir && a.path == b.path);
    let mut order: Vec<(Option<u32>, usize)> = (old.entries.iter().enumerate())
        .map(|(i, e)| match same_roots {
            true => (e.ignored_root, i),
            false => (IgnoredRoot::index_of(roots, &e.path).map(|r| r as u32), i),
        })
        .collect();
    let key = |(c, i): (Option<u32>, usize)| (c, old.entries[i].path.as_path());
    if !same_roots {
        order.sort_unstable_by(|&a, &b| entry_order(key(a), key(b)));
    }
    let mut old_in_order = order.into_iter().peekable();
    (fresh.entries.iter())
        .map(|e| {
            while (old_in_order)
                .next_if(|&o| entry_order(key(o), (e.ignored_root, &e.path)).is_lt())
                .is_some()
            {}
            let same = |&(_, i): &(Option<u32>, usize)| {
                old.entries[i].path.as_os_str() == e.path.as_os_str()
            };
            old_in_order.next_if(same).map(|(_, i)| i)
        })
        .collect()
}

/// Walks `root`, watching each directory before it is listed, and stamps
/// each file as its directory is listed (on the walk's threads). The walk
/// stops once it has seen more than `max_files` files (the table is then
/// incomplete, and the caller says the tree is too big).
///
/// A stamp taken during the listing is as good as one taken after the
/// walk: the directory is watched before it is listed, so a change after
/// the stamp is an event the picture applies.
pub fn walk(
    root: &Path,
    watcher: &Watcher,
    cancel: &CancelToken,
    max_files: usize,
) -> Result<Table, String> {
    let walker = table_walker(root)?;
    let rule_files = watch_root(root, watcher);
    // The root's part of the rule files first, as `rule_files_of` gives it
    // (the next process compares that part with its own), then what the
    // walk's threads found, in path order.
    let fixed = rule_files.len();
    let rule_files = Mutex::new(rule_files);
    let dirs = Mutex::new(vec![(root.to_path_buf(), stamp_dir(root, root))]);
    let errors = Mutex::new(ErrorLog::default());
    let found = Mutex::new(Vec::new());
    let seen = AtomicUsize::new(0);
    // The first walk meets project files only (an ignored entry is not
    // entered); the second walks the ignored roots the first one found.
    let visit = |roots, rules| visitor(watcher, roots, &found, &dirs, rules, &seen, max_files);
    // The root's own symlinked rule files (its repository is the root's
    // part of `rule_files`).
    probe_rules(watcher, root, &mut lock(&rule_files), false);
    let roots = walker.walk_parallel(&[], cancel, &errors, || visit(&[], Some(&rule_files)));
    for r in roots.iter().filter(|r| r.is_dir) {
        watcher.adder().add(&r.path);
        lock(&dirs).push((r.path.clone(), Stamp::of(&r.path)));
    }
    if !roots.is_empty() && seen.load(Ordering::Relaxed) <= max_files {
        walker.walk_parallel(&roots, cancel, &errors, || visit(&roots, None));
    }
    if cancel.is_stopped() {
        return Err("stopped".into());
    }
    let errors = errors.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut rule_files = rule_files.into_inner().unwrap_or_else(|p| p.into_inner());
    rule_files[fixed..].sort_by(|a, b| path_order(&a.0, &b.0));
    let mut entries: Vec<Entry> = found.into_inner().unwrap_or_else(|p| p.into_inner());
    // Each thread sorted its own files as it finished: what is left is
    // merging those runs, which the stable sort finds and merges.
    entries.sort_by(by_entry_order);
    // The walk's threads allocated the paths in the order they met them;
    // copied in table order they lie side by side in memory, which makes a
    // pass over the whole table (a glob) about three times faster.
    let entries = entries.to_vec().into();
    Ok(Table {
        entries,
        ignored_roots: roots,
        errors,
        dirs: dirs_in_order(dirs.into_inner().unwrap_or_else(|p| p.into_inner())),
        rule_files,
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Directories as [`Table::dirs`] keeps them: in path order.
pub(super) fn dirs_in_order(mut dirs: Vec<Stamped>) -> Chunked<Stamped> {
    if !dirs.is_sorted_by(|a, b| path_order(&a.0, &b.0).is_le()) {
        dirs.sort_by(|a, b| path_order(&a.0, &b.0));
    }
    dirs.into()
}

/// Where `dir` is, or would go, in [`Table::dirs`]; the directories at
/// and below it follow it there.
pub(super) fn dir_position(dirs: &Chunked<Stamped>, dir: &Path) -> usize {
    dirs.partition_point(|d| path_order(&d.0, dir).is_lt())
}

/// Watches the root, the directories above it and their repositories'
/// `.git` and `.git/info` afresh; returns their rule files, stamped once
/// watched (a later change is an event the picture applies).
pub(super) fn watch_root(root: &Path, watcher: &Watcher) -> Vec<Stamped> {
    watcher.forget();
    watcher.watch_root(root);
    for (p, _) in rule_files_of(root) {
        if p.file_name().is_some_and(|n| n == ".git") {
            watcher.watch_git(&p);
        }
    }
    rule_files_of(root)
}

/// The rule files of directory `dir` that are not table entries: its
/// symlinked ignore files and, when `nested`, its repository (a `.git` in
/// a directory below the root makes the walk read its `.git/info/exclude`),
/// whose folders are watched before they are stamped. A few `lstat`s per
/// directory, on the walk's threads.
pub(super) fn probe_rules(watcher: &Watcher, dir: &Path, out: &mut Vec<Stamped>, nested: bool) {
    let at = crate::search::DirStat::new(dir);
    let kind = |name: &str| at.lstat(name.as_ref()).map(|st| st.st_mode & libc::S_IFMT);
    for name in IGNORE_FILES {
        if kind(name) == Some(libc::S_IFLNK) {
            let p = dir.join(name);
            let s = rule_stamp(&p);
            out.push((p, s));
        }
    }
    if nested && kind(".git").is_some() {
        watcher.watch_git(&dir.join(".git"));
        push_repository(out, dir);
    }
}

/// One walk thread's visitor: watches directories, stamps files.
pub(super) fn visitor<'a>(
    watcher: &'a Watcher,
    roots: &'a [IgnoredRoot],
    found: &'a Mutex<Vec<Entry>>,
    dirs: &'a Mutex<Vec<Stamped>>,
    rules: Option<&'a Mutex<Vec<Stamped>>>,
    seen: &'a AtomicUsize,
    max_files: usize,
) -> impl FnMut(&crate::search::WalkEntry<'_>) -> bool + Send + 'a {
    let mut adder = watcher.adder();
    let mut mine = Batch {
        files: Vec::new(),
        into: found,
        dirs: Vec::new(),
        dirs_into: dirs,
        rules: Vec::new(),
        rules_into: rules,
    };
    move |e| {
        if e.is_dir() {
            // Stamped when met, before the walk lists it.
            adder.add(e.path());
            let stamp = e.lstat().map(|st| Stamp::of_stat(&st));
            mine.dirs.push((e.path().to_path_buf(), stamp));
            // Rules only matter to project directories: nothing below an
            // ignored root is classified.
            if mine.rules_into.is_some() {
                probe_rules(watcher, e.path(), &mut mine.rules, true);
            }
        } else if e.is_file() {
            let path = e.path().to_path_buf();
            // A project's ignore file is watched before it is stamped.
            if mine.rules_into.is_some() && names_rules(&path) {
                adder.add_rule_file(&path);
            }
            let ignored_root = match roots {
                [] => None,
                roots => IgnoredRoot::index_of(roots, &path).map(|i| i as u32),
            };
            mine.files.push(Entry {
                ignored_root,
                stamp: e.lstat().map(|st| Stamp::of_stat(&st)),
                path,
                doc: None,
            });
            return seen.fetch_add(1, Ordering::Relaxed) < max_files;
        }
        true
    }
}

/// One walk thread's files, handed over when its visitor is dropped.
struct Batch<'a> {
    files: Vec<Entry>,
    into: &'a Mutex<Vec<Entry>>,
    dirs: Vec<Stamped>,
    dirs_into: &'a Mutex<Vec<Stamped>>,
    rules: Vec<Stamped>,
    rules_into: Option<&'a Mutex<Vec<Stamped>>>,
}

fn by_entry_order(a: &Entry, b: &Entry) -> std::cmp::Ordering {
    entry_order((a.ignored_root, &a.path), (b.ignored_root, &b.path))
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        // On the walk's thread, in parallel with the others'.
        self.files.sort_unstable_by(by_entry_order);
        lock(self.into).append(&mut self.files);
        lock(self.dirs_into).append(&mut self.dirs);
        if let Some(into) = self.rules_into {
            lock(into).append(&mut self.rules);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(roots: &[&str], files: &[(&str, Option<u32>)]) -> Table {
        Table {
            entries: (files.iter())
                .map(|&(p, r)| Entry {
                    path: PathBuf::from(p),
                    ignored_root: r,
                    stamp: None,
                    doc: None,
                })
                .collect(),
            ignored_roots: (roots.iter())
                .map(|r| IgnoredRoot {
                    path: PathBuf::from(r),
                    is_dir: true,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn same_paths_pairs_entries_even_when_the_ignored_roots_changed() {
        let old = table(
            &["/r/b"],
            &[("/r/a", None), ("/r/c", None), ("/r/b/x", Some(0))],
        );
        let same = table(
            &["/r/b"],
            &[("/r/a", None), ("/r/new", None), ("/r/b/x", Some(0))],
        );
        assert_eq!(same_paths(&old, &same), vec![Some(0), None, Some(2)]);
        // `b` is no longer ignored, `c` now is: the order changed.
        let fresh = table(
            &["/r/c"],
            &[("/r/a", None), ("/r/b/x", None), ("/r/c", Some(0))],
        );
        assert_eq!(same_paths(&old, &fresh), vec![Some(0), Some(2), Some(1)]);
        for (i, e) in fresh.entries.iter().enumerate() {
            assert_eq!(fresh.find(&e.path), Some(i));
        }
        assert_eq!(fresh.find(Path::new("/r/b")), None);
    }
}
