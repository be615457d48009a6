//! A search over a given list of files gives what the walk gives for the
//! same files: the pipelines do not depend on where their files come from.

use super::cancel::CancelToken;
use super::grep::{GrepMode, GrepOptions, GrepPlan};
use super::results::{GrepSummary, Hit};
use super::source::{FileList, FileSource, ListedFile, SourceFile};
use super::walk::{ErrorLog, WalkOptions, Walker};
use super::SortOrder;
use std::fs;
use std::path::Path;

/// The files the walk yields, as a list: project files, then each ignored
/// root's, in path order.
fn list_of_walk(root: &Path) -> FileList {
    let walker = Walker::new(root.to_path_buf(), WalkOptions::default()).unwrap();
    let (cancel, mut errors) = (CancelToken::new(None), ErrorLog::default());
    let mut files = Vec::new();
    let roots = walker.walk_sorted(&cancel, &mut errors, |p| {
        files.push(ListedFile {
            path: p.to_path_buf(),
            ignored_root: None,
        });
        true
    });
    for (i, r) in roots.iter().enumerate() {
        walker.walk_ignored_sorted(r, &cancel, &mut errors, |p| {
            files.push(ListedFile {
                path: p.to_path_buf(),
                ignored_root: Some(i),
            });
            true
        });
    }
    FileList {
        ignored_roots: roots,
        files,
    }
}

fn collect(plan: &GrepPlan) -> (Vec<String>, GrepSummary) {
    let mut hits: Vec<Hit> = Vec::new();
    let summary = plan.run(&CancelToken::new(None), |b| {
        hits.extend(b);
        true
    });
    let shown = hits
        .iter()
        .map(|h| {
            let symbol = h.symbol.as_ref().map(|s| s.name.as_str()).unwrap_or("");
            format!(
                "{}:{}:{}:{}:{}:{symbol}:{}",
                h.path.text,
                h.line,
                h.count,
                h.ignored,
                h.text,
                h.structure.is_some()
            )
        })
        .collect();
    (shown, summary)
}

fn tree() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    fs::create_dir_all(r.join("src/deep")).unwrap();
    fs::create_dir_all(r.join("node_modules/pkg")).unwrap();
    fs::write(r.join(".gitignore"), "node_modules/\n*.log\n").unwrap();
    fs::write(
        r.join("src/a.rs"),
        "fn needle() {\n    let needle = 1;\n}\n",
    )
    .unwrap();
    fs::write(r.join("src/deep/b.rs"), "// needle\nstruct S;\n").unwrap();
    fs::write(r.join("notes.txt"), "no match here\nneedle at last\n").unwrap();
    fs::write(r.join("run.log"), "needle in a log\n").unwrap();
    fs::write(r.join("node_modules/pkg/i.js"), "const needle = 2;\n").unwrap();
    t
}

#[test]
fn grep_over_the_walks_file_list_matches_the_walk_in_every_mode() {
    let t = tree();
    let root = t.path();
    let cases = [
        (GrepMode::Content, SortOrder::Path, None, false),
        (GrepMode::Content, SortOrder::Path, None, true),
        (GrepMode::Content, SortOrder::Mtime, None, false),
        (GrepMode::Content, SortOrder::Path, Some(2), false),
        (GrepMode::Files, SortOrder::Path, None, false),
        (GrepMode::Count, SortOrder::Mtime, None, false),
        (GrepMode::Count, SortOrder::Path, Some(3), false),
    ];
    for (mode, sort, limit, group) in cases {
        let opts = GrepOptions {
            pattern: "needle".into(),
            mode,
            sort,
            limit,
            group,
            ..Default::default()
        };
        let walked = GrepPlan::new(root, None, opts.clone()).unwrap();
        let listed = GrepPlan::over_files(root.to_path_buf(), list_of_walk(root), opts).unwrap();
        let (walk_hits, walk_summary) = collect(&walked);
        let (list_hits, list_summary) = collect(&listed);
        let case = format!("{mode:?} {sort:?} {limit:?} group={group}");
        assert!(!walk_hits.is_empty(), "{case}");
        assert_eq!(list_hits, walk_hits, "{case}");
        let totals = |s: &GrepSummary| {
            (
                s.matches,
                s.files_with_matches,
                s.files_searched,
                s.limit_reached,
                s.ignored.clone(),
                s.ignored_unsearched.clone(),
            )
        };
        assert_eq!(totals(&list_summary), totals(&walk_summary), "{case}");
    }
}

#[test]
fn a_listed_file_is_searched_as_given_even_where_a_walk_would_skip_it() {
    let t = tree();
    let root = t.path();
    let list = FileList {
        ignored_roots: Vec::new(),
        files: vec![ListedFile {
            path: root.join("run.log"),
            ignored_root: None,
        }],
    };
    let opts = GrepOptions {
        pattern: "needle".into(),
        walk: WalkOptions {
            no_ignore: false,
            ..Default::default()
        },
        ..Default::default()
    };
    let (hits, summary) = collect(&GrepPlan::over_files(root.to_path_buf(), list, opts).unwrap());
    assert_eq!(hits, vec!["run.log:1:1:false:needle in a log::false"]);
    assert_eq!(summary.files_searched, 1);
}

/// What `visit_all` hands out: each file with whether it came in the
/// ignored part, sorted, and the roots' labels with whether all were visited.
fn visited_all(source: &FileSource, root: &Path, walk_ignored: bool) -> (Vec<String>, String) {
    let seen = std::sync::Mutex::new(Vec::new());
    let errors = std::sync::Mutex::new(ErrorLog::default());
    let (roots, all) = source.visit_all(
        2,
        &CancelToken::new(None),
        &errors,
        || walk_ignored,
        |ignored| {
            let seen = &seen;
            move |f: &SourceFile<'_>| {
                let rel = f.path.strip_prefix(root).unwrap().display();
                let mtime = f.mtime() > std::time::UNIX_EPOCH;
                seen.lock()
                    .unwrap()
                    .push(format!("{rel} {ignored} {mtime}"));
                true
            }
        },
    );
    let mut seen = seen.into_inner().unwrap();
    seen.sort();
    let labels: Vec<String> = roots.iter().map(|r| r.label(root)).collect();
    (seen, format!("{labels:?} {all}"))
}

#[test]
fn visit_all_over_a_list_follows_the_walk_and_its_ignored_rule() {
    let t = tree();
    let root = t.path();
    let walker = Walker::new(root.to_path_buf(), WalkOptions::default()).unwrap();
    let walk = FileSource::Walk(std::sync::Arc::new(walker));
    let list = FileSource::List(list_of_walk(root));
    for walk_ignored in [false, true] {
        let (walked, walk_roots) = visited_all(&walk, root, walk_ignored);
        let (listed, list_roots) = visited_all(&list, root, walk_ignored);
        assert_eq!(listed, walked, "walk_ignored={walk_ignored}");
        assert_eq!(list_roots, walk_roots, "walk_ignored={walk_ignored}");
        assert_eq!(
            walk_roots,
            format!(r#"["node_modules/", "run.log"] {walk_ignored}"#)
        );
        let ignored_seen = walked.iter().filter(|s| s.contains(" true ")).count();
        assert_eq!(ignored_seen, if walk_ignored { 2 } else { 0 });
        // .gitignore, notes.txt, src/a.rs, src/deep/b.rs: each with a time.
        assert_eq!(walked.len(), 4 + ignored_seen);
        assert!(walked.iter().all(|s| s.ends_with(" true")), "{walked:?}");
    }
}
