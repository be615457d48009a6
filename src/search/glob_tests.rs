//! Behaviour of glob on real temporary trees.

use super::cancel::CancelToken;
use super::glob::{run, EntryKind, GlobOptions};
use super::SortOrder;
use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

fn touch(p: &Path, age_secs: u64) {
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, "x").unwrap();
    let when = SystemTime::now() - Duration::from_secs(age_secs);
    fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

fn names(root: &Path, o: GlobOptions) -> Vec<String> {
    run(root, None, &o, &CancelToken::new(None))
        .unwrap()
        .entries
        .into_iter()
        .map(|e| e.path.text)
        .collect()
}

fn opts(pattern: &str, limit: usize) -> GlobOptions {
    GlobOptions {
        pattern: pattern.into(),
        limit,
        ..Default::default()
    }
}

#[test]
fn newest_first_with_a_bounded_limit() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..30u64 {
        touch(&t.path().join(format!("d{}/f{i}.c", i % 4)), 1000 - i * 10);
    }
    touch(&t.path().join("skip.h"), 1);
    let r = run(t.path(), None, &opts("*.c", 3), &CancelToken::new(None)).unwrap();
    let got: Vec<_> = r.entries.iter().map(|e| e.path.text.clone()).collect();
    assert_eq!(got, vec!["d1/f29.c", "d0/f28.c", "d3/f27.c"]);
    assert_eq!(r.total, 30);
    assert!(r.limit_reached);
}

#[test]
fn a_pattern_with_a_slash_matches_the_relative_path() {
    let t = tempfile::tempdir().unwrap();
    touch(&t.path().join("src/a.ts"), 10);
    touch(&t.path().join("lib/src/b.ts"), 5);
    let mut o = opts("src/*.ts", 10);
    o.sort = SortOrder::Path;
    assert_eq!(names(t.path(), o), vec!["src/a.ts"]);
    let mut o = opts("**/src/*.ts", 10);
    o.sort = SortOrder::Path;
    assert_eq!(names(t.path(), o), vec!["lib/src/b.ts", "src/a.ts"]);
}

#[test]
fn ignored_entries_are_listed_after_project_files_even_when_newer() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join(".gitignore"), "node_modules/\n").unwrap();
    touch(&t.path().join("node_modules/x/new.js"), 1);
    touch(&t.path().join("src/old.js"), 1000);
    let r = run(t.path(), None, &opts("*.js", 10), &CancelToken::new(None)).unwrap();
    let got: Vec<_> = r
        .entries
        .iter()
        .map(|e| (e.path.text.clone(), e.ignored))
        .collect();
    assert_eq!(
        got,
        vec![
            ("src/old.js".into(), false),
            ("node_modules/x/new.js".into(), true)
        ]
    );
    assert_eq!(r.ignored[0].path, "node_modules/");
    assert_eq!(r.ignored[0].matches, 1);
}

#[test]
fn when_the_project_fills_the_limit_ignored_roots_are_not_walked() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join(".gitignore"), "node_modules/\n").unwrap();
    touch(&t.path().join("node_modules/x/new.js"), 1);
    touch(&t.path().join("a.js"), 10);
    let r = run(t.path(), None, &opts("*.js", 1), &CancelToken::new(None)).unwrap();
    assert_eq!(r.entries.len(), 1);
    assert_eq!(r.ignored_unsearched, vec!["node_modules/"]);
}

#[test]
fn ignored_files_the_pattern_cannot_take_are_not_named_unsearched() {
    let t = tempfile::tempdir().unwrap();
    // The Linux tree's root .gitignore: `.*` sets every dot-file aside.
    fs::write(t.path().join(".gitignore"), ".*\nnode_modules/\nbuild.js\n").unwrap();
    for f in [".clang-format", ".editorconfig", "build.js"] {
        touch(&t.path().join(f), 5);
    }
    touch(&t.path().join("node_modules/x/new.js"), 1);
    touch(&t.path().join("a.js"), 10);
    let mut o = opts("*.js", 1);
    o.walk.hidden = true;
    let r = run(t.path(), None, &o, &CancelToken::new(None)).unwrap();
    assert_eq!(r.entries.len(), 1);
    // The directory may hold matches and the ignored `build.js` is one;
    // `.clang-format` and `.editorconfig` could not have matched.
    assert_eq!(r.ignored_unsearched, vec!["build.js", "node_modules/"]);
    assert!(r.limit_reached);
}

#[test]
fn directories_can_be_listed() {
    let t = tempfile::tempdir().unwrap();
    touch(&t.path().join("a/b/c.txt"), 10);
    let mut o = opts("b", 10);
    o.kind = EntryKind::Dir;
    assert_eq!(names(t.path(), o), vec!["a/b"]);
}

#[test]
fn bad_patterns_are_rejected() {
    let t = tempfile::tempdir().unwrap();
    assert!(run(t.path(), None, &opts("", 1), &CancelToken::new(None)).is_err());
    assert!(run(t.path(), None, &opts("a[", 1), &CancelToken::new(None)).is_err());
    let e = run(
        t.path(),
        Some("nope"),
        &opts("*", 1),
        &CancelToken::new(None),
    )
    .err()
    .unwrap();
    assert!(e.to_string().starts_with("Path not found"));
}

#[test]
fn several_ignored_roots_are_walked_together_and_counted_apart() {
    let t = tempfile::tempdir().unwrap();
    fs::write(
        t.path().join(".gitignore"),
        "dist/\nnode_modules/\n*.gen.js\n",
    )
    .unwrap();
    touch(&t.path().join("dist/a.js"), 5);
    touch(&t.path().join("dist/sub/b.js"), 6);
    touch(&t.path().join("node_modules/p/c.js"), 7);
    touch(&t.path().join("x.gen.js"), 8);
    touch(&t.path().join("src/main.js"), 100);
    let r = run(t.path(), None, &opts("*.js", 10), &CancelToken::new(None)).unwrap();
    let got: Vec<_> = r.entries.iter().map(|e| e.path.text.clone()).collect();
    assert_eq!(
        got,
        vec![
            "src/main.js",
            "dist/a.js",
            "dist/sub/b.js",
            "node_modules/p/c.js",
            "x.gen.js"
        ]
    );
    let counts: Vec<_> = r
        .ignored
        .iter()
        .map(|i| (i.path.clone(), i.matches))
        .collect();
    assert_eq!(
        counts,
        vec![
            ("dist/".into(), 2),
            ("node_modules/".into(), 1),
            ("x.gen.js".into(), 1)
        ]
    );
    assert_eq!(r.total, 5);
}
