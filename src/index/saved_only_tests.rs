//! A saved-only index (`IndexConfig::saved_only`, what the CLI asks for):
//! it answers from what an earlier process saved, as the scan would, and
//! otherwise is off at once. It never builds, merges or waits for another
//! process's writer, and never writes a generation.

use super::store::Store;
use super::tests::{apply, compare_all, op, search, seeded_tree, test_config};
use super::{forget_root, warm, IndexConfig, IndexMode, IndexStatus, IndexUse};
use crate::search::{CancelToken, GrepOptions};
use proptest::prelude::*;
use std::fs;
use std::path::Path;
use std::time::Duration;

const RACY: Duration = Duration::from_millis(20);

fn config(store: &Path) -> IndexConfig {
    IndexConfig {
        racy: RACY,
        ..test_config(store)
    }
}

fn saved_only(store: &Path) -> IndexConfig {
    IndexConfig {
        saved_only: true,
        // The test trees have a few dozen files: let the changes stay unread.
        max_unread: 64,
        ..config(store)
    }
}

fn settle() {
    std::thread::sleep(RACY * 3);
}

fn warm_saved_only(root: &Path, store: &Path) -> Result<IndexStatus, String> {
    warm(root, saved_only(store), &CancelToken::new(None))
}

/// The generation files of every root in the store, by name.
fn generations(store: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(store)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|root| fs::read_dir(root.path()).into_iter().flatten().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("gen-"))
        .collect();
    v.sort();
    v
}

#[test]
fn with_nothing_saved_it_is_off_at_once_and_creates_nothing() {
    let t = seeded_tree();
    let store = tempfile::tempdir().unwrap();
    let why = warm_saved_only(t.path(), store.path()).unwrap_err();
    assert!(why.contains("no index of this tree was saved"), "{why}");
    assert_eq!(
        fs::read_dir(store.path()).unwrap().count(),
        0,
        "no store folder"
    );
    let (_, how) = search(
        t.path(),
        &GrepOptions {
            pattern: "needle".into(),
            ..Default::default()
        },
        IndexMode::IfReady,
    );
    assert_eq!(how, IndexUse::Off);
    forget_root(t.path());
}

#[test]
fn while_another_process_writes_the_index_it_is_off_at_once() {
    let t = seeded_tree();
    let store = tempfile::tempdir().unwrap();
    settle();
    warm(t.path(), config(store.path()), &CancelToken::new(None)).unwrap();
    forget_root(t.path());
    let held = Store::of(t.path(), &config(store.path())).lock(&CancelToken::new(None));
    let _held = held.unwrap().expect("the writer lock");
    let why = warm_saved_only(t.path(), store.path()).unwrap_err();
    assert!(why.contains("another process is writing"), "{why}");
    forget_root(t.path());
}

#[test]
fn too_many_changed_files_turn_it_off_instead_of_merging() {
    let t = seeded_tree();
    let store = tempfile::tempdir().unwrap();
    settle();
    warm(t.path(), config(store.path()), &CancelToken::new(None)).unwrap();
    forget_root(t.path());
    let before = generations(store.path());
    for f in ["a.txt", "b.txt"] {
        let _ = fs::write(t.path().join(f), "rewritten needle\n");
    }
    let few = IndexConfig {
        max_unread: 0,
        ..saved_only(store.path())
    };
    let why = warm(t.path(), few, &CancelToken::new(None)).unwrap_err();
    assert!(why.contains("out of date"), "{why}");
    assert_eq!(generations(store.path()), before, "nothing merged or built");
    forget_root(t.path());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, max_shrink_iters: 32, ..ProptestConfig::default() })]

    /// Built and saved by one process, changed while none watched, opened
    /// saved-only by the next: every search gives the scan's text, and no
    /// generation is written.
    #[test]
    fn a_saved_only_index_answers_as_the_scan_after_offline_changes(
        offline in proptest::collection::vec(op(), 0..6),
    ) {
        let t = seeded_tree();
        let root = t.path().to_path_buf();
        let store = tempfile::tempdir().unwrap();
        settle();
        warm(&root, config(store.path()), &CancelToken::new(None)).unwrap();
        forget_root(&root);
        let before = generations(store.path());
        for o in &offline {
            apply(&root, o);
        }
        match warm_saved_only(&root, store.path()) {
            Ok(status) => {
                prop_assert!(status.reread.is_some(), "re-validated, not built");
                let used = compare_all(&root, "saved-only");
                prop_assert!(used.grep > 0, "the index was never used");
            }
            // A change that left the tree unwalkable the saved way is off.
            Err(why) => prop_assert!(why.contains("out of date") || why.contains("files"), "{}", why),
        }
        prop_assert_eq!(generations(store.path()), before);
        forget_root(&root);
        for d in 0..super::tests::DIRS.len() {
            apply(&root, &super::tests::Op::ChmodDir(d, false));
        }
    }
}
