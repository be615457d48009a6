//! The hand-written walks (`sorted_walk`, `parallel_walk`) against the walk
//! they replace: `ignore::WalkBuilder` with our classifier behind its
//! `filter_entry`, on a tree built to trip them (nested rules and
//! negations, every ignore file, hidden entries, `.git` as a directory and
//! as a file, symlinks, a FIFO, names that sort differently bytewise and
//! by component, a non-UTF-8 name), under each filter option.

use super::cancel::CancelToken;
use super::classify::MapClassifier;
use super::walk::{ErrorLog, IgnoredRoot, WalkOptions, Walker};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use ignore::WalkBuilder;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

fn tree() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let write = |p: &str, body: &str| {
        let p = r.join(p);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    };
    write(".gitignore", "*.log\n!keep.log\nbuild/\n/top-only.txt\n");
    write("keep.log", "x");
    write("drop.log", "x");
    write("top-only.txt", "x");
    write("a/top-only.txt", "x");
    write("a.b", "x");
    write("a-b/c.rs", "x");
    write("a/b.rs", "x");
    write("a/build/out.rs", "x");
    write("a/.hidden.rs", "x");
    write(".dotdir/x.rs", "x");
    write("B/upper.rs", "x");
    write("_/u.rs", "x");
    write("src/.ignore", "gen/\n");
    write("src/.rgignore", "!gen/\n");
    write("src/gen/g.rs", "x");
    write("src/lib.rs", "x");
    write("src/deep/.gitignore", "*.rs\n!keep.rs\n");
    write("src/deep/keep.rs", "x");
    write("src/deep/gone.rs", "x");
    write("sub/.git", "gitdir: elsewhere\n");
    write("sub/.gitignore", "*.tmp\n");
    write("sub/x.tmp", "x");
    write(".git/config", "x");
    write("node_modules/p/i.js", "x");
    write(".gitignore2", "x");
    fs::write(r.join(".rgignore"), "node_modules/\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::os::unix::fs::symlink(r.join("a"), r.join("link-to-a")).unwrap();
        std::os::unix::fs::symlink(r.join(".gitignore"), r.join("src/deep/.ignore")).unwrap();
        let fifo = std::ffi::CString::new(r.join("pipe").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let odd = std::ffi::OsStr::from_bytes(b"odd\xff.rs");
        fs::write(r.join(odd), "x").unwrap();
    }
    t
}

/// The walk before the hand-written ones: ignore's sorted walk with the
/// classifier in `filter_entry`, as `Walker` built it.
fn oracle(
    root: &Path,
    start: &Path,
    opts: &WalkOptions,
    classify: bool,
) -> (Vec<PathBuf>, Vec<IgnoredRoot>) {
    let mut ob = OverrideBuilder::new(root);
    for g in &opts.globs {
        ob.add(g).unwrap();
    }
    let mut tb = TypesBuilder::new();
    tb.add_defaults();
    for t in &opts.types {
        tb.select(t);
    }
    let classifier = classify.then(|| Arc::new(MapClassifier::new(root)));
    let ignored = Arc::new(Mutex::new(Vec::new()));
    let sink = ignored.clone();
    let mut b = WalkBuilder::new(start);
    b.standard_filters(false)
        .hidden(!opts.hidden)
        .follow_links(false)
        .overrides(ob.build().unwrap())
        .types(tb.build().unwrap())
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |e| {
            let kind = e.file_type();
            let dir = kind.is_some_and(|t| t.is_dir());
            if e.file_name() == ".git" || !(dir || kind.is_some_and(|t| t.is_file())) {
                return false;
            }
            if let Some(c) = &classifier {
                if c.is_ignored(e.path(), dir) {
                    sink.lock().unwrap().push(IgnoredRoot {
                        path: e.path().to_path_buf(),
                        is_dir: dir,
                    });
                    return false;
                }
                if dir {
                    c.enter_dir(e.path());
                }
            }
            true
        });
    let files = b
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.path().to_path_buf())
        .collect();
    let out = std::mem::take(&mut *ignored.lock().unwrap());
    (files, out)
}

fn option_sets() -> Vec<WalkOptions> {
    let base = WalkOptions::default();
    vec![
        base.clone(),
        WalkOptions {
            hidden: false,
            ..base.clone()
        },
        WalkOptions {
            globs: vec!["*.rs".into()],
            hidden: false,
            ..base.clone()
        },
        WalkOptions {
            globs: vec!["!a/**".into(), "!*.b".into()],
            ..base.clone()
        },
        WalkOptions {
            types: vec!["rust".into()],
            hidden: false,
            ..base.clone()
        },
        WalkOptions { threads: 8, ..base },
    ]
}

#[test]
fn the_sorted_walk_gives_the_files_order_and_ignored_roots_of_the_ignore_walk() {
    let t = tree();
    let root = t.path();
    for opts in option_sets() {
        let walker = Walker::new(root.to_path_buf(), opts.clone()).unwrap();
        let (cancel, mut errors) = (CancelToken::new(None), ErrorLog::default());
        let mut files = Vec::new();
        let roots = walker.walk_sorted(&cancel, &mut errors, |p| {
            files.push(p.to_path_buf());
            true
        });
        let (want_files, want_roots) = oracle(root, root, &opts, true);
        assert_eq!(files, want_files, "{opts:?}");
        assert_eq!(paths(&roots), paths(&want_roots), "{opts:?}");
        assert!(!want_roots.is_empty());
        for r in roots.iter().filter(|r| r.is_dir) {
            let mut inside = Vec::new();
            walker.walk_ignored_sorted(r, &cancel, &mut errors, |p| {
                inside.push(p.to_path_buf());
                true
            });
            assert_eq!(inside, oracle(root, &r.path, &opts, false).0, "{opts:?}");
        }
        assert_eq!(errors.count, 0, "{:?}", errors.first);
    }
}

#[test]
fn the_parallel_walk_visits_the_same_entries_on_any_thread_count() {
    let t = tree();
    let root = t.path();
    for opts in option_sets() {
        let (want_files, want_roots) = oracle(root, root, &opts, true);
        for threads in [1, 3, 8] {
            let walker = Walker::new(
                root.to_path_buf(),
                WalkOptions {
                    threads,
                    ..opts.clone()
                },
            )
            .unwrap();
            let seen = Mutex::new(Vec::new());
            let errors = Mutex::new(ErrorLog::default());
            let roots = walker.walk_parallel(&[], &CancelToken::new(None), &errors, || {
                |e: &super::parallel_walk::WalkEntry<'_>| {
                    if e.is_file() {
                        seen.lock().unwrap().push(e.path().to_path_buf());
                    }
                    true
                }
            });
            let mut seen = seen.into_inner().unwrap();
            seen.sort();
            let mut want = want_files.clone();
            want.sort();
            assert_eq!(seen, want, "{opts:?} threads {threads}");
            assert_eq!(
                paths(&roots),
                paths(&want_roots),
                "{opts:?} threads {threads}"
            );
        }
    }
}

#[test]
fn a_parallel_walk_stops_when_a_visitor_says_so() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..400 {
        let d = t.path().join(format!("d{}", i % 20));
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join(format!("f{i}")), "x").unwrap();
    }
    let walker = Walker::new(
        t.path().to_path_buf(),
        WalkOptions {
            threads: 4,
            ..Default::default()
        },
    )
    .unwrap();
    let seen = std::sync::atomic::AtomicUsize::new(0);
    let errors = Mutex::new(ErrorLog::default());
    walker.walk_parallel(&[], &CancelToken::new(None), &errors, || {
        |_: &super::parallel_walk::WalkEntry<'_>| {
            seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < 10
        }
    });
    // Each of the four threads may finish the entry it is on.
    assert!(seen.into_inner() <= 10 + 4 + 1);
}

fn paths(roots: &[IgnoredRoot]) -> Vec<(PathBuf, bool)> {
    roots.iter().map(|r| (r.path.clone(), r.is_dir)).collect()
}
