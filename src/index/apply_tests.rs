//! A change costs what it changed: each kind of change is applied where it
//! happened (the directories listed are only the changed ones), and every
//! search after it still gives the scan's text.

use super::apply::Applied;
use super::roots::applied_of;
use super::tests::{compare_all, ready, search, seeded};
use super::{IndexMode, IndexUse};
use crate::search::GrepOptions;
use std::fs;
use std::path::Path;

/// One search through the index (which applies what changed), then every
/// search compared with the scan; what the refresh applied in place.
fn after(root: &Path, step: &str) -> Applied {
    let opts = GrepOptions {
        pattern: "needle".into(),
        ..Default::default()
    };
    let (_, how) = search(root, &opts, IndexMode::IfReady);
    assert_eq!(how, IndexUse::Used, "{step}: the index served");
    let applied = applied_of(root).expect("ready");
    compare_all(root, step);
    applied
}

#[test]
fn each_change_is_applied_where_it_happened_and_answers_as_the_scan() {
    for repo in [false, true] {
        let t = seeded(repo);
        let root = t.path();
        let _store = ready(root);
        let applied = |places, listed| Applied { places, listed };

        fs::write(root.join("a/new.txt"), "a new needle\n").unwrap();
        assert_eq!(
            after(root, "one file created"),
            applied(1, 0),
            "no directory listed"
        );
        fs::remove_file(root.join("a/new.txt")).unwrap();
        assert_eq!(after(root, "that file deleted"), applied(1, 0));
        fs::create_dir_all(root.join("x/y/z")).unwrap();
        fs::write(root.join("x/y/z/f.txt"), "needle deep\n").unwrap();
        assert_eq!(
            after(root, "mkdir -p x/y/z and one file"),
            applied(1, 3),
            "only the new directories"
        );
        fs::rename(root.join("a"), root.join("a2")).unwrap();
        assert_eq!(
            after(root, "a folder renamed"),
            applied(2, 2),
            "the moved folder and its one subfolder"
        );
        for i in 0..20 {
            fs::write(
                root.join(format!("node_modules/m/gen{i}.js")),
                "needle gen\n",
            )
            .unwrap();
        }
        let built = after(root, "20 files in an ignored folder");
        assert_eq!(built.listed, 0, "{built:?}");
        fs::write(root.join("b/.gitignore"), "*.rs\n").unwrap();
        assert_eq!(
            after(root, "an ignore file below the root"),
            applied(1, 2),
            "b and b/c re-walked"
        );
        fs::rename(root.join("b"), root.join("node_modules/b")).unwrap();
        let moved = after(root, "a folder moved into an ignored one");
        assert_eq!(moved.places, 2, "{moved:?}");
        fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        assert_eq!(
            after(root, "the root's own rules: the whole walk"),
            Applied::default()
        );
        super::drop_root(root);
    }
}

/// A file created or deleted in a table of hundreds of entries moves the
/// entries of the chunks it touches, not the table's tail (chunks are four
/// entries in tests): the work is counted, not timed.
#[test]
fn one_file_created_or_deleted_moves_a_few_chunks_not_the_table() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    for d in 0..30 {
        fs::create_dir_all(root.join(format!("d{d:02}/sub"))).unwrap();
        for f in 0..10 {
            let text = format!("file {f} of {d} needle\n");
            fs::write(root.join(format!("d{d:02}/f{f}.txt")), &text).unwrap();
        }
    }
    let _store = ready(root);
    let opts = GrepOptions {
        pattern: "needle".into(),
        ..Default::default()
    };
    search(root, &opts, IndexMode::IfReady);
    let table = 300;
    for (step, change) in [
        (
            "created",
            &(|p: &Path| fs::write(p, "new needle\n").unwrap()) as &dyn Fn(&Path),
        ),
        ("deleted", &|p: &Path| fs::remove_file(p).unwrap()),
    ] {
        super::chunked::tally::take();
        change(&root.join("d03/new.txt"));
        let (via, how) = search(root, &opts, IndexMode::IfReady);
        let moved = super::chunked::tally::take();
        assert_eq!(how, IndexUse::Used);
        assert_eq!(via, search(root, &opts, IndexMode::Off).0, "{step}");
        assert_eq!(
            applied_of(root),
            Some(Applied {
                places: 1,
                listed: 0
            })
        );
        // The entries' splice and the documents' one, each in at most two
        // chunks of at most twice four.
        assert!(
            moved > 0 && moved <= 32 && moved * 8 < table,
            "{step}: {moved} entries moved"
        );
    }
    super::drop_root(root);
}
