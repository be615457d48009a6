//! Re-validation without listing: the saved table's directories and files
//! stamped again where they are, instead of walking the tree.
//!
//! Why: at the next start the walk that compares the saved table with the
//! tree cost more than a plain walk (a watch per directory on top of it),
//! while most starts find nothing changed. A directory's ctime changes
//! whenever an entry is added, removed or renamed in it (and on chmod), so
//! a directory whose stamp is unchanged and was not racily stamped still
//! holds the entries the saved walk listed; only its files' own stamps can
//! tell whether their contents changed. Anything else — a changed
//! directory, a changed ignore file, a file that is no longer a regular
//! file — gives up, and the caller walks as before.

use super::table::{names_rules, rule_stamp, stamp_dir, watch_root, Entry, Stamped, Table};

use super::watch::Watcher;
use crate::search::stamp::Stamp;
use crate::search::{CancelToken, DirStat};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// The current stamp of each of `saved`'s files (in its order), with every
/// directory of it watched again; `None` when the tree's shape or its
/// ignore rules may have changed since `saved` was walked (the caller
/// walks). `trusted`: whether a stamp was taken late enough before the
/// saved walk that an unchanged one proves nothing changed.
pub fn restamp(
    root: &Path,
    saved: &Table,
    watcher: &Watcher,
    trusted: &(dyn Fn(&Stamp) -> bool + Sync),
    cancel: &CancelToken,
) -> Option<Vec<Option<Stamp>>> {
    if saved.errors.count > 0 || saved.dirs.get(0).is_none_or(|d| d.0 != root) {
        return None;
    }
    let ok = |s: &Option<Stamp>| s.as_ref().is_none_or(trusted);
    // The root's own rule files (those of the directories above it and of
    // its repository) come first; the rest the saved walk found below it
    // (nested repositories, symlinked ignore files), each stamped again.
    // Each repository's folders are watched before its exclude is stamped.
    let fixed = watch_root(root, watcher);
    let (own, below) = saved
        .rule_files
        .split_at(fixed.len().min(saved.rule_files.len()));
    for (p, _) in below {
        if p.file_name().is_some_and(|n| n == ".git") {
            watcher.watch_git(p);
        }
    }
    let same_below = below.iter().all(|(p, s)| rule_stamp(p) == *s);
    if fixed != own || !same_below || !saved.rule_files.iter().all(|f| ok(&f.1)) {
        return None;
    }
    let failed = AtomicBool::new(false);
    let threads = crate::search::default_threads().max(1);
    // Each directory is watched before it is stamped: a change after the
    // stamp is an event the picture applies.
    let dirs: Vec<&Stamped> = saved.dirs.iter().collect();
    std::thread::scope(|scope| {
        for part in dirs.chunks(dirs.len().div_ceil(threads).max(1)) {
            let failed = &failed;
            scope.spawn(move || {
                let mut adder = watcher.adder();
                for &(path, was) in part {
                    if failed.load(Ordering::Relaxed) || cancel.is_stopped() {
                        return;
                    }
                    adder.add(path);
                    let now = stamp_dir(path, root);
                    if was.is_none() || now != *was || !ok(was) {
                        failed.store(true, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    if failed.load(Ordering::Relaxed) || cancel.is_stopped() || watcher.failure().is_some() {
        return None;
    }
    let files: Vec<&Entry> = saved.entries.iter().collect();
    let mut stamps = vec![None; files.len()];
    std::thread::scope(|scope| {
        let size = files.len().div_ceil(threads).max(1);
        for (part, out) in files.chunks(size).zip(stamps.chunks_mut(size)) {
            let failed = &failed;
            scope.spawn(move || {
                let mut adder = watcher.adder();
                let mut dir: Option<(&Path, DirStat)> = None;
                for (e, out) in part.iter().zip(out) {
                    if failed.load(Ordering::Relaxed) || cancel.is_stopped() {
                        return;
                    }
                    let (Some(parent), Some(name)) = (e.path.parent(), e.path.file_name()) else {
                        failed.store(true, Ordering::Relaxed);
                        return;
                    };
                    if dir.as_ref().is_none_or(|d| d.0 != parent) {
                        dir = Some((parent, DirStat::new(parent)));
                    }
                    // A changed ignore file may re-classify any file below;
                    // a project's is watched before it is stamped.
                    let rules = names_rules(&e.path);
                    if rules && e.ignored_root.is_none() {
                        adder.add_rule_file(&e.path);
                    }
                    let st = dir.as_ref().and_then(|d| d.1.lstat(name));
                    let regular = st.is_some_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFREG);
                    let now = st.map(|st| Stamp::of_stat(&st));
                    if !regular || (rules && (now != e.stamp || !ok(&e.stamp))) {
                        failed.store(true, Ordering::Relaxed);
                        return;
                    }
                    *out = now;
                }
            });
        }
    });
    (!failed.load(Ordering::Relaxed) && !cancel.is_stopped()).then_some(stamps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::table;
    use std::fs;
    use std::time::{Duration, SystemTime};

    /// A project below a folder of its own (whose ignore files are an
    /// ancestor's), walked into a table once its stamps have aged.
    fn walked() -> (tempfile::TempDir, std::path::PathBuf, Table, SystemTime) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("proj");
        for d in ["src/a", "src/b", "empty", "node_modules/pkg"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            "src/a/x.c",
            "src/a/y.c",
            "src/b/z.c",
            "top.txt",
            "node_modules/pkg/i.js",
        ] {
            fs::write(root.join(f), f).unwrap();
        }
        fs::write(root.join(".gitignore"), "node_modules/\n").unwrap();
        std::thread::sleep(Duration::from_millis(30));
        let start = SystemTime::now();
        let w = Watcher::with_cap(None).unwrap();
        let table = table::walk(&root, &w, &CancelToken::new(None), usize::MAX).unwrap();
        (t, root, table, start)
    }

    fn again(root: &Path, table: &Table, start: SystemTime) -> Option<Vec<Option<Stamp>>> {
        let cutoff = start - Duration::from_millis(10);
        let trusted = move |s: &Stamp| {
            std::time::UNIX_EPOCH + Duration::new(s.ctime.0 as u64, s.ctime.1 as u32) < cutoff
        };
        let w = Watcher::with_cap(None).unwrap();
        restamp(root, table, &w, &trusted, &CancelToken::new(None))
    }

    #[test]
    fn an_unchanged_tree_is_stamped_again_without_a_walk_and_a_content_edit_shows() {
        let (_t, root, table, start) = walked();
        assert_eq!(table.dirs.len(), 7, "{:?}", table.dirs);
        let stamps = again(&root, &table, start).expect("nothing changed");
        let saved: Vec<_> = table.entries.iter().map(|e| e.stamp).collect();
        assert_eq!(stamps, saved);
        fs::write(root.join("src/a/x.c"), "longer content now").unwrap();
        let stamps = again(&root, &table, start).expect("only contents changed");
        let i = (table.entries.iter())
            .position(|e| e.path.ends_with("src/a/x.c"))
            .unwrap();
        assert_ne!(stamps[i], saved[i]);
        assert_eq!(stamps[i].unwrap().size, 18);
    }

    #[test]
    fn any_change_to_the_trees_shape_or_its_ignore_rules_gives_up() {
        #[allow(clippy::type_complexity)]
        let changes: [(&str, fn(&Path)); 11] = [
            ("a file created", |r| {
                fs::write(r.join("src/b/new.c"), "x").unwrap()
            }),
            ("a file removed", |r| {
                fs::remove_file(r.join("src/a/y.c")).unwrap()
            }),
            ("a rename", |r| {
                fs::rename(r.join("src/a/x.c"), r.join("src/a/w.c")).unwrap()
            }),
            ("in an empty dir", |r| {
                fs::write(r.join("empty/f"), "x").unwrap()
            }),
            ("in an ignored root", |r| {
                fs::write(r.join("node_modules/pkg/j.js"), "x").unwrap()
            }),
            ("a chmod of a dir", |r| {
                use std::os::unix::fs::PermissionsExt;
                fs::set_permissions(r.join("src/b"), fs::Permissions::from_mode(0o700)).unwrap()
            }),
            ("the root's .gitignore", |r| {
                fs::write(r.join(".gitignore"), "*.c\n").unwrap()
            }),
            ("an ancestor's .gitignore", |r| {
                fs::write(r.parent().unwrap().join(".gitignore"), "*.txt\n").unwrap()
            }),
            ("an ancestor becomes a repository", |r| {
                fs::create_dir(r.parent().unwrap().join(".git")).unwrap()
            }),
            ("a .git/info/exclude", |r| {
                fs::create_dir_all(r.join(".git/info")).unwrap();
                fs::write(r.join(".git/info/exclude"), "*.c\n").unwrap()
            }),
            ("a file replaced by a FIFO", |r| {
                let p = r.join("top.txt");
                fs::remove_file(&p).unwrap();
                let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            }),
        ];
        for (what, change) in changes {
            let (_t, root, table, start) = walked();
            assert!(again(&root, &table, start).is_some(), "{what}: before");
            change(&root);
            assert!(again(&root, &table, start).is_none(), "{what}: not seen");
        }
    }

    #[test]
    fn stamps_too_close_to_the_saved_walk_prove_nothing() {
        let (_t, root, table, _) = walked();
        let long_ago = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        assert!(again(&root, &table, long_ago).is_none());
    }
}
