//! The inotify watch limit is a state the index leaves by itself: met, the
//! index is stale with a reason that names the setting, searches scan (with
//! the scan's answer) and say so once; once the tree fits again, the next
//! search after the retry interval builds it again and it serves.

use super::tests::{search, test_config};
use super::{drop_root, start, status_of, take_notice, IndexConfig, IndexMode, IndexUse, State};
use crate::search::GrepOptions;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

fn opts() -> GrepOptions {
    GrepOptions {
        pattern: "zqxneedle".into(),
        ..Default::default()
    }
}

/// Searches until `want` serves or `within` passes; the last way it served.
fn search_until(root: &Path, want: IndexUse, within: Duration) -> IndexUse {
    let end = Instant::now() + within;
    loop {
        let (via, how) = search(root, &opts(), IndexMode::Auto);
        let (scan, _) = search(root, &opts(), IndexMode::Off);
        assert_eq!(via, scan, "every answer is the scan's ({})", how.as_str());
        if how == want || Instant::now() > end {
            return how;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn past_the_watch_limit_the_index_is_stale_says_why_and_recovers_once_the_tree_fits() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("tree");
    for d in 0..40 {
        let dir = root.join(format!("d{d:02}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("f.txt"), format!("zqxneedle {d}\n")).unwrap();
    }
    let store = tempfile::tempdir().unwrap();
    // Room for the directories above the root and a few of the tree's.
    let config = IndexConfig {
        watch_cap: Some(24),
        stale_retry: Duration::from_millis(50),
        ..test_config(store.path())
    };
    start(&root, config);
    let how = search_until(&root, IndexUse::Stale, Duration::from_secs(20));
    assert_eq!(
        how,
        IndexUse::Stale,
        "the index cannot watch 40 directories with 24 watches"
    );
    let State::Stale(why) = status_of(&root).expect("an index").state else {
        panic!("stale, with a reason");
    };
    assert!(why.contains("fs.inotify.max_user_watches = 24"), "{why}");
    assert!(why.contains("one watch per directory"), "{why}");
    assert!(
        !why.contains("No space left"),
        "not worded as a full disk: {why}"
    );
    let notice = take_notice(&root, None).expect("the grep tool is told why searches scan");
    assert!(
        notice.contains("scan instead of using its index"),
        "{notice}"
    );
    assert_eq!(take_notice(&root, None), None, "once");

    // The tree shrinks to fit: the index builds again by itself.
    for d in 4..40 {
        fs::remove_dir_all(root.join(format!("d{d:02}"))).unwrap();
    }
    let how = search_until(&root, IndexUse::Used, Duration::from_secs(20));
    assert_eq!(
        how,
        IndexUse::Used,
        "recovered without indexDrop or indexWarm"
    );
    assert_eq!(status_of(&root).unwrap().state, State::Ready);
    drop_root(&root);
}
