//! locate and trace through a ready index must answer exactly as by
//! walking: the same random tree operations as the index's own
//! differential test, each followed at once by discovery queries run both
//! ways, with every text and count compared.

use super::locate::{self, LocateOptions};
use super::trace::{self, TraceOptions};
use crate::index::tests::{apply, op, ready, seeded, Op, DIRS, SUBDIRS};
use crate::index::{IndexMode, IndexUse};
use crate::search::{CancelToken, WalkOptions};
use proptest::prelude::*;
use std::path::Path;

const LOCATE: [&str; 10] = [
    "x",
    // A quoted phrase (`phrase`): files saying it are read for it alike.
    "'needle here' upper",
    // Four words: a file's text need hold only two, and the index narrows
    // by each word's letters and counts them (`word_feed`).
    "needle hay deep struct",
    "deep",
    "a c",
    "node modules",
    "w rs",
    "hidden",
    "Y",
    "out log",
];
const TRACE: [&str; 6] = [
    "subject:needle relation:defined",
    "subject:needle relation:called_from support:hay",
    // `(?i)struct` also matches `ſtruct`: the planner must keep that file.
    "subject:struct relation:implementation",
    "subject:FooOperations relation:implementation",
    "subject:hay relation:populated kind:code",
    "subject:needle relation:rendered path:a",
];

fn walk(hidden: bool, no_ignore: bool) -> WalkOptions {
    WalkOptions {
        hidden,
        no_ignore,
        threads: 2,
        ..Default::default()
    }
}

/// Everything a caller of locate sees, as one text.
fn located(
    root: &Path,
    sub: Option<&str>,
    query: &str,
    limit: usize,
    walk: WalkOptions,
    index: IndexMode,
) -> (String, IndexUse) {
    let opts = LocateOptions {
        query: query.into(),
        limit,
        walk,
        timeout: None,
        index,
    };
    let r = locate::run(root, sub, opts, &CancelToken::new(None)).expect("valid query");
    let scores: Vec<String> = r
        .files
        .iter()
        .map(|f| format!("{}={}", f.path.text, f.score))
        .collect();
    let text = format!(
        "{}\ncandidates={} seen={} unsearched={:?} errors={} {:?} scores={scores:?}",
        r.text, r.candidates, r.files_seen, r.ignored_unsearched, r.errors.count, r.errors.first
    );
    (text, r.index)
}

/// Everything a caller of trace sees, as one text.
fn traced(root: &Path, sub: Option<&str>, query: &str, index: IndexMode) -> (String, IndexUse) {
    let opts = TraceOptions {
        query: query.into(),
        walk: walk(true, true),
        index,
        ..Default::default()
    };
    let r = trace::run(root, sub, opts, &CancelToken::new(None)).expect("valid query");
    let text = format!(
        "{}\nmatched={} scanned={} structure={} errors={} {:?}",
        r.text, r.files_matched, r.files_scanned, r.structure_found, r.errors.count, r.errors.first
    );
    (text, r.index)
}

/// Runs every query both ways, of the root and of each subdirectory that
/// exists (a subdirectory is listed from the root's table when its own
/// walk would classify alike); returns how many used the index, at the
/// root and in subdirectories.
fn compare_all(root: &Path, step: &str) -> (usize, usize) {
    let (mut used, mut sub_used) = (0, 0);
    let subs = SUBDIRS
        .into_iter()
        .filter(|d| std::fs::symlink_metadata(root.join(d)).is_ok_and(|m| m.is_dir()));
    for sub in std::iter::once(None).chain(subs.map(Some)) {
        // At the root: a limit the project alone fills (ignored roots
        // unsearched), one that leaves room for ignored files, hidden off.
        let cases: &[(usize, bool)] = match sub {
            None => &[(1, true), (10, true), (10, false)],
            Some(_) => &[(10, true)],
        };
        for q in LOCATE {
            for &(limit, hidden) in cases {
                let w = walk(hidden, true);
                let (scan, _) = located(root, sub, q, limit, w.clone(), IndexMode::Off);
                let (via, how) = located(root, sub, q, limit, w, IndexMode::IfReady);
                let what = format!("{step}: locate {q:?} in {sub:?} limit {limit}");
                assert_eq!(via, scan, "{what} ({})", how.as_str());
                *if sub.is_some() {
                    &mut sub_used
                } else {
                    &mut used
                } += usize::from(how == IndexUse::Used);
            }
        }
        for q in TRACE {
            let (scan, _) = traced(root, sub, q, IndexMode::Off);
            let (via, how) = traced(root, sub, q, IndexMode::IfReady);
            let what = format!("{step}: trace {q:?} in {sub:?}");
            assert_eq!(via, scan, "{what} ({})", how.as_str());
            *if sub.is_some() {
                &mut sub_used
            } else {
                &mut used
            } += usize::from(how == IndexUse::Used);
        }
    }
    (used, sub_used)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, max_shrink_iters: 32, ..ProptestConfig::default() })]

    #[test]
    fn locate_and_trace_through_the_index_give_the_walks_text(ops in proptest::collection::vec(op(), 1..10), repo in any::<bool>()) {
        let t = seeded(repo);
        let root = t.path().to_path_buf();
        let _store = ready(&root);
        let (mut used, sub_used) = compare_all(&root, "start");
        prop_assert!(used > 0, "discovery never used the index");
        // Below a repository's root a walk keeps the root's rules, so the
        // root's table answers for a subdirectory.
        prop_assert!(sub_used > 0 || !repo, "a subdirectory never used the index");
        for (i, o) in ops.iter().enumerate() {
            apply(&root, o);
            used += compare_all(&root, &format!("after op {i} {o:?}")).0;
        }
        crate::index::drop_root(&root);
        for (d, _) in DIRS.iter().enumerate() {
            apply(&root, &Op::ChmodDir(d, false));
        }
        prop_assert!(used > ops.len(), "the index served too few of the queries: {used}");
    }
}

#[test]
fn trace_reads_only_the_files_the_postings_allow_but_counts_every_file() {
    let t = seeded(false);
    let root = t.path();
    let _store = ready(root);
    let (scan, _) = traced(
        root,
        None,
        "subject:needle relation:defined",
        IndexMode::Off,
    );
    let (via, how) = traced(
        root,
        None,
        "subject:needle relation:defined",
        IndexMode::IfReady,
    );
    assert_eq!(how, IndexUse::Used);
    assert_eq!(via, scan);
    // A file written after the build is seen at once, through the index.
    std::fs::write(root.join("a/fresh.rs"), "fn brand_new_subject() {}\n").unwrap();
    let (via, how) = traced(
        root,
        None,
        "subject:brand_new_subject relation:defined",
        IndexMode::IfReady,
    );
    assert_eq!(how, IndexUse::Used);
    assert!(via.contains("best answer likely in a/fresh.rs"), "{via}");
    crate::index::drop_root(root);
}

#[test]
fn discovery_never_starts_an_index_of_its_own() {
    let t = seeded(false);
    let root = t.path();
    let (_, how) = located(root, None, "deep", 10, walk(true, true), IndexMode::IfReady);
    assert_eq!(how, IndexUse::Off);
    assert!(
        crate::index::status_of(root).is_none(),
        "locate started an index"
    );
    let (_, how) = traced(
        root,
        None,
        "subject:needle relation:defined",
        IndexMode::IfReady,
    );
    assert_eq!(how, IndexUse::Off);
    assert!(
        crate::index::status_of(root).is_none(),
        "trace started an index"
    );
}
