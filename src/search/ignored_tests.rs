//! One definition of "ignored": the default mode sets aside exactly what
//! `noIgnore: false` drops, and both agree with ripgrep's own walk (the
//! `ignore` crate's, as rg 15 configures it) inside a repository.

use super::cancel::CancelToken;
use super::walk::{ErrorLog, WalkOptions, Walker};
use ignore::WalkBuilder;
use proptest::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};

fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, body).unwrap();
}

/// The files of a walk from `start`, relative to it: the default mode's
/// project files, its ignored files (every file under each ignored root),
/// and the files of `noIgnore: false`.
fn both_modes(start: &Path) -> (Vec<String>, Vec<String>, Vec<String>) {
    both_modes_with(start, true)
}

fn both_modes_with(start: &Path, hidden: bool) -> (Vec<String>, Vec<String>, Vec<String>) {
    let rel = |p: &Path| p.strip_prefix(start).unwrap().display().to_string();
    let walk = |no_ignore: bool| {
        let opts = WalkOptions {
            no_ignore,
            hidden,
            threads: 2,
            ..Default::default()
        };
        let w = Walker::new(start.to_path_buf(), opts).unwrap();
        let (mut files, mut errors, cancel) =
            (Vec::new(), ErrorLog::default(), CancelToken::new(None));
        let roots = w.walk_sorted(&cancel, &mut errors, |p| {
            files.push(rel(p));
            true
        });
        let mut ignored = Vec::new();
        for r in &roots {
            w.walk_ignored_sorted(r, &cancel, &mut errors, |p| {
                ignored.push(rel(p));
                true
            });
        }
        ignored.sort();
        (files, ignored)
    };
    let (project, ignored) = walk(true);
    let (kept, none) = walk(false);
    assert!(none.is_empty());
    (project, ignored, kept)
}

/// rg's own walk from `start` (rg 15's settings: ignore files of the
/// parents, `.git/info/exclude`, global excludes, `.rgignore`, and a
/// `.gitignore` only inside a repository), files relative to `start`.
fn rg_walk(start: &Path) -> Vec<String> {
    rg_walk_with(start, true)
}

fn rg_walk_with(start: &Path, hidden: bool) -> Vec<String> {
    let mut b = WalkBuilder::new(start);
    b.standard_filters(false)
        .hidden(!hidden)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .ignore(true)
        .parents(true)
        .require_git(true)
        .add_custom_ignore_filename(".rgignore")
        .filter_entry(|e| e.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b));
    b.build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.path().strip_prefix(start).unwrap().display().to_string())
        .collect()
}

/// A `.jj` folder makes a repository root as a `.git` does (the `ignore`
/// crate 0.4.35, rg 15.2 checked): a repository's `.gitignore` stops at a
/// nested `foo/.jj`, so rg lists `foo/bar/sherlock` from `foo/bar`.
#[test]
fn a_jj_folder_makes_a_repository_root_as_a_git_folder_does() {
    let t = tempfile::tempdir().unwrap();
    fs::create_dir_all(t.path().join(".git")).unwrap();
    write(t.path(), ".gitignore", "sherlock\n");
    fs::create_dir_all(t.path().join("foo/.jj")).unwrap();
    write(t.path(), "foo/bar/sherlock", "Sherlock\n");
    let start = t.path().join("foo/bar");
    let (project, ignored, kept) = both_modes(&start);
    assert_eq!((&project, &kept), (&vec!["sherlock".to_string()], &project));
    assert!(ignored.is_empty());
    assert_eq!(rg_walk(&start), project);
}

/// Regression (rg's `misc.rs` nested repository case): `.gitignore` =
/// `sherlock` above `foo/.git`; searched from `foo/bar`, rg finds
/// `foo/bar/sherlock`. Our `noIgnore: false` searched nothing, and the
/// default mode called the file a project file: the modes disagreed.
#[test]
fn a_gitignore_above_a_nested_repository_does_not_apply_inside_it() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), ".gitignore", "sherlock\n");
    fs::create_dir_all(t.path().join("foo/.git")).unwrap();
    write(t.path(), "foo/bar/sherlock", "Sherlock\n");
    write(t.path(), "sherlock", "Sherlock\n");
    for start in [t.path().join("foo/bar"), t.path().join("foo")] {
        let (project, ignored, kept) = both_modes(&start);
        assert_eq!(project, kept, "{start:?}");
        assert!(ignored.is_empty(), "{start:?} {ignored:?}");
        assert!(project.iter().any(|p| p.ends_with("sherlock")), "{start:?}");
    }
    let (project, ignored, kept) = both_modes(t.path());
    assert_eq!(
        (project.clone(), ignored),
        (kept, vec!["sherlock".to_string()])
    );
    assert!(project.contains(&"foo/bar/sherlock".to_string()));
}

/// Regression: `.ignore` = `/a/b` at the root of a project that is not a
/// repository. Searching the root set `a/b/test.txt` aside; searching `a`
/// called it a project file. Parent ignore files apply wherever the search
/// starts, as in rg.
#[test]
fn a_parent_ignore_file_applies_when_the_search_starts_in_a_subfolder() {
    let t = tempfile::tempdir().unwrap();
    for name in [".ignore", ".rgignore", ".gitignore"] {
        write(t.path(), name, "/a/b\n");
        write(t.path(), "a/b/test.txt", "x\n");
        write(t.path(), "a/x.txt", "x\n");
        let (project, ignored, kept) = both_modes(&t.path().join("a"));
        assert_eq!(
            (&project, &ignored),
            (&kept, &vec!["b/test.txt".to_string()]),
            "{name}"
        );
        assert_eq!(project, vec!["x.txt"], "{name}");
        fs::remove_file(t.path().join(name)).unwrap();
    }
}

/// rg: an `.ignore` match outranks a `.gitignore` match whatever their
/// depths, and `.ignore` files above the repository root still apply.
/// `.ignore` = `*.log` above `repo/.git`, `repo/d/.gitignore` = `!keep.log`:
/// rg 15 lists only `d/y.txt` from `repo`.
#[test]
fn an_ignore_file_above_the_repository_outranks_a_deeper_gitignore() {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), ".ignore", "*.log\n");
    fs::create_dir_all(t.path().join("repo/.git")).unwrap();
    write(t.path(), "repo/d/.gitignore", "!keep.log\n");
    for f in ["keep.log", "x.log", "y.txt"] {
        write(t.path(), &format!("repo/d/{f}"), "x\n");
    }
    let start = t.path().join("repo");
    let (project, ignored, kept) = both_modes(&start);
    assert_eq!(project, vec!["d/.gitignore", "d/y.txt"]);
    assert_eq!(ignored, vec!["d/keep.log", "d/x.log"]);
    assert_eq!(kept, project);
    assert_eq!(rg_walk(&start), project);
}

/// Regression (rg's `regression.rs` r90): `.gitignore` = `!.foo` brings
/// the dot-file `.foo` back without `--hidden`; we skipped it with
/// `hidden: false`. Both modes and both walks now keep it, and the
/// parallel walk (glob) too.
#[test]
fn a_dot_file_named_by_a_negated_rule_is_searched_without_hidden() {
    let t = tempfile::tempdir().unwrap();
    fs::create_dir_all(t.path().join(".git")).unwrap();
    write(t.path(), ".gitignore", "!.foo\n!.dir/\n");
    write(t.path(), ".foo", "test\n");
    write(t.path(), ".bar", "test\n");
    write(t.path(), ".dir/x", "test\n");
    write(t.path(), "a", "test\n");
    let (project, ignored, kept) = both_modes_with(t.path(), false);
    assert_eq!(project, vec![".dir/x", ".foo", "a"]);
    assert!(ignored.is_empty());
    assert_eq!(kept, project);
    assert_eq!(rg_walk_with(t.path(), false), project);
    for no_ignore in [true, false] {
        let opts = WalkOptions {
            no_ignore,
            hidden: false,
            threads: 2,
            ..Default::default()
        };
        let w = Walker::new(t.path().to_path_buf(), opts).unwrap();
        let seen = std::sync::Mutex::new(Vec::new());
        let errors = std::sync::Mutex::new(ErrorLog::default());
        w.walk_parallel(&[], &CancelToken::new(None), &errors, || {
            |e: &super::parallel_walk::WalkEntry<'_>| {
                if e.is_file() {
                    let p = e.path().strip_prefix(t.path()).unwrap();
                    seen.lock().unwrap().push(p.display().to_string());
                }
                true
            }
        });
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        assert_eq!(seen, project, "parallel, no_ignore {no_ignore}");
    }
}

/// A tree under test: a parent directory `p` with ignore files of its own,
/// a repository `p/r` with nested repositories, rule files and excludes.
#[derive(Debug, Clone)]
struct Case {
    /// (directory index, ignore file index, patterns)
    rules: Vec<(usize, usize, Vec<usize>)>,
    /// Directories (by index, not the repository root) holding a `.git`,
    /// with an optional exclude pattern, and the kind of mark (see
    /// [`Mark`]).
    repos: Vec<(usize, Option<usize>, Mark)>,
    /// Where the search starts (a directory index).
    start: usize,
}

/// What makes a directory a repository root.
#[derive(Debug, Clone, Copy)]
enum Mark {
    /// A `.git` folder, its exclude in `.git/info`.
    Git,
    /// A `.jj` folder (Jujutsu; no exclude of its own).
    Jj,
    /// A worktree: a `.git` file naming (absolutely) a folder of a main
    /// repository elsewhere, whose `commondir` leads to that repository's
    /// `.git`, where the exclude is.
    Worktree,
}

const DIRS: [&str; 7] = ["..", "", "a", "a/b", "a/b/c", "d", "d/e"];
const FILES: [&str; 6] = ["x.log", "keep.log", "y.txt", "z.rs", "f", ".h"];
const PATTERNS: [&str; 13] = [
    "*.log",
    "!keep.log",
    "/y.txt",
    "b/",
    "!b/",
    "*.rs",
    "c",
    "!*.rs",
    "e",
    "x.log",
    "!c",
    "/a",
    "!.h",
];

fn case() -> impl Strategy<Value = Case> {
    let rule = (
        0..DIRS.len(),
        0..3usize,
        prop::collection::vec(0..PATTERNS.len(), 1..3),
    );
    let mark = prop_oneof![Just(Mark::Git), Just(Mark::Jj), Just(Mark::Worktree)];
    let repo = (2..DIRS.len(), prop::option::of(0..PATTERNS.len()), mark);
    (
        prop::collection::vec(rule, 0..7),
        prop::collection::vec(repo, 0..3),
        1..DIRS.len(),
    )
        .prop_map(|(rules, repos, start)| Case {
            rules,
            repos,
            start,
        })
}

fn build(c: &Case) -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("p/r");
    let dir = |i: usize| repo.join(DIRS[i]);
    for i in 1..DIRS.len() {
        for f in FILES {
            write(&dir(i), f, "x\n");
        }
    }
    fs::create_dir_all(repo.join(".git/info")).unwrap();
    for (k, (d, exclude, mark)) in c.repos.iter().enumerate() {
        // One `.git` a directory (a `.jj` may sit beside it).
        if !matches!(mark, Mark::Jj) && dir(*d).join(".git").exists() {
            continue;
        }
        let git = match mark {
            Mark::Git => dir(*d).join(".git"),
            Mark::Jj => {
                fs::create_dir_all(dir(*d).join(".jj")).unwrap();
                continue;
            }
            Mark::Worktree => {
                let main = t.path().join(format!("main{k}/.git"));
                write(&main, "worktrees/w/commondir", "../..\n");
                let gitdir = main.join("worktrees/w");
                write(&dir(*d), ".git", &format!("gitdir: {}\n", gitdir.display()));
                main
            }
        };
        fs::create_dir_all(git.join("info")).unwrap();
        if let Some(p) = exclude {
            write(&git, "info/exclude", &format!("{}\n", PATTERNS[*p]));
        }
    }
    for (d, f, pats) in &c.rules {
        let body: String = pats.iter().map(|p| format!("{}\n", PATTERNS[*p])).collect();
        let path = dir(*d).join(super::IGNORE_FILES[*f]);
        let old = fs::read_to_string(&path).unwrap_or_default();
        fs::write(path, old + &body).unwrap();
    }
    let start = dir(c.start);
    (t, start)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Over random trees with nested repositories, excludes, parent ignore
    /// files and every kind of ignore file: the default mode's project
    /// files are exactly `noIgnore: false`'s and rg's walk, and what it
    /// sets aside is everything else.
    #[test]
    fn both_modes_classify_every_file_as_rg_does(c in case(), hidden in any::<bool>()) {
        let (_t, start) = build(&c);
        let (project, ignored, kept) = both_modes_with(&start, hidden);
        prop_assert_eq!(&project, &kept);
        prop_assert_eq!(&project, &rg_walk_with(&start, hidden));
        if !hidden {
            return Ok(());
        }
        let mut all: Vec<String> = project.iter().chain(&ignored).cloned().collect();
        all.sort();
        let mut every = Vec::new();
        for e in walkdir(&start) {
            every.push(e);
        }
        every.sort();
        prop_assert_eq!(all, every);
    }
}

/// Every regular file below `dir` outside `.git`, relative to it.
fn walkdir(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let kind = e.file_type().unwrap();
            if e.file_name() == ".git" {
                continue;
            }
            if kind.is_dir() {
                stack.push(e.path());
            } else if kind.is_file() {
                out.push(e.path().strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out
}
