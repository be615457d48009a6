//! A new file is read once in the background; after that a search whose
//! pattern its keys rule out does not read it, and any change to it (even
//! one that keeps its size, at once) is seen by the next search as the
//! scan sees it.

use super::roots::{delta_len_of, delta_settled_of};
use super::tests::{apply, compare_all, op, plan_grep, ready, search, seeded, Op, DIRS};
use super::{IndexMode, IndexUse};
use crate::search::{CancelToken, GrepOptions};
use proptest::prelude::*;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

/// Files read by a literal search through the index, and whether it served.
fn files_read(root: &Path, pattern: &str) -> (u64, IndexUse) {
    let opts = GrepOptions {
        pattern: pattern.into(),
        literal: true,
        ..Default::default()
    };
    let (plan, used) = plan_grep(root, None, opts, IndexMode::IfReady).expect("valid search");
    let summary = plan.run(&CancelToken::new(None), |_| true);
    (summary.files_searched, used)
}

/// A literal search through the index gives the scan's text.
fn same_as_scan(root: &Path, pattern: &str, step: &str) {
    let opts = GrepOptions {
        pattern: pattern.into(),
        literal: true,
        ..Default::default()
    };
    let (scan, _) = search(root, &opts, IndexMode::Off);
    let (via, how) = search(root, &opts, IndexMode::IfReady);
    assert_eq!(how, IndexUse::Used, "{step}");
    assert_eq!(via, scan, "{step}: {pattern}");
}

/// Searches until the delta holds `n` files (each search takes in what the
/// background read, and may start the next batch).
fn until_delta_holds(root: &Path, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while delta_len_of(root) != Some(n) {
        assert!(
            Instant::now() < deadline,
            "the delta never held {n} files: {:?}",
            delta_len_of(root)
        );
        files_read(root, "needle");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_new_file_is_read_once_then_left_out_by_its_keys_until_it_changes() {
    let t = seeded(true);
    let root = t.path();
    let _store = ready(root);
    let new = root.join("a/new_file.txt");
    fs::write(&new, "alpha_unique_word\n").unwrap();
    // The first searches read it (nothing is known of it yet).
    let (before, how) = files_read(root, "zq_not_anywhere");
    assert_eq!(how, IndexUse::Used);
    assert!(before >= 1, "the new file is read: {before}");
    until_delta_holds(root, 1);
    let (after, how) = files_read(root, "zq_not_anywhere");
    assert_eq!(how, IndexUse::Used);
    assert_eq!(after, before - 1, "its keys rule it out: not read again");
    let (found, _) = files_read(root, "alpha_unique");
    assert!(found >= 1, "a pattern its keys allow still reads it");
    compare_all(root, "the delta holds the new file");
    same_as_scan(root, "alpha_unique", "the delta holds the new file");

    // Rewritten at once with the same size: its keys are dropped, the next
    // search finds the new text as the scan does.
    fs::write(&new, "zq_not_anywhere!!\n").unwrap();
    assert_eq!(fs::metadata(&new).unwrap().len(), 18);
    let (read, _) = files_read(root, "zq_not_anywhere");
    assert_eq!(read, before, "changed: read again");
    same_as_scan(root, "zq_not_anywhere", "rewritten with the same size");
    same_as_scan(root, "alpha_unique", "rewritten with the same size");
    compare_all(root, "rewritten with the same size");
    until_delta_holds(root, 1);
    same_as_scan(root, "zq_not_anywhere", "read again into the delta");
    compare_all(root, "read again into the delta");

    // Moved away with its folder and deleted: nothing stale answers.
    fs::rename(root.join("a"), root.join("a_moved")).unwrap();
    compare_all(root, "its folder renamed");
    same_as_scan(root, "zq_not_anywhere", "its folder renamed");
    fs::remove_file(root.join("a_moved/new_file.txt")).unwrap();
    compare_all(root, "deleted");
    super::drop_root(root);
}

/// Searches until the delta has read everything the changes so far gave it.
fn until_settled(root: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !delta_settled_of(root) {
        assert!(Instant::now() < deadline, "the delta never settled");
        // A tree the index does not serve now (a folder it cannot read)
        // takes nothing in: there is nothing to wait for.
        if files_read(root, "needle").1 != IndexUse::Used {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, max_shrink_iters: 32, ..ProptestConfig::default() })]

    /// The differential test with the delta given time to read between the
    /// changes: every search is compared with the scan right after each
    /// change (the delta may hold keys of the file as it was) and again once
    /// the delta has read the changed files.
    #[test]
    fn searches_over_the_delta_give_the_scans_text(ops in proptest::collection::vec(op(), 1..10), repo in any::<bool>()) {
        let t = seeded(repo);
        let root = t.path().to_path_buf();
        let _store = ready(&root);
        for (i, o) in ops.iter().enumerate() {
            apply(&root, o);
            compare_all(&root, &format!("after op {i} {o:?}"));
            until_settled(&root);
            compare_all(&root, &format!("after op {i} {o:?}, the delta settled"));
        }
        super::drop_root(&root);
        for d in DIRS {
            apply(&root, &Op::ChmodDir(DIRS.iter().position(|x| *x == d).unwrap_or(0), false));
        }
    }
}

/// Files past the rebuild threshold wait in the delta while searches come
/// (no rebuild competes with them), and are folded into a new generation
/// once the searches stop; every answer is the scan's before and after.
#[test]
fn files_past_the_threshold_wait_in_the_delta_and_are_folded_once_searches_stop() {
    let t = seeded(false);
    let root = t.path();
    let store = tempfile::tempdir().unwrap();
    let config = super::IndexConfig {
        fold_idle: Duration::from_millis(400),
        ..super::tests::test_config(store.path())
    };
    super::warm(root, config, &CancelToken::new(None)).expect("index builds");
    let built_at = || super::status_of(root).and_then(|s| s.built_at);
    let built = built_at();
    // Over the threshold of 256 files waiting for the postings.
    fs::create_dir(root.join("burst")).unwrap();
    for i in 0..300 {
        fs::write(root.join(format!("burst/f{i}.txt")), format!("burst {i}\n")).unwrap();
    }
    until_delta_holds(root, 300);
    assert_eq!(built_at(), built, "no rebuild while the searches come");
    same_as_scan(root, "burst 17", "files in the delta");
    let deadline = Instant::now() + Duration::from_secs(60);
    while built_at() == built {
        assert!(Instant::now() < deadline, "the delta was never folded");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(delta_len_of(root), Some(0), "the new generation holds them");
    assert_eq!(files_read(root, "burst 299"), (1, IndexUse::Used));
    same_as_scan(root, "burst 17", "after the fold");
    compare_all(root, "after the fold");
    super::drop_root(root);
}
