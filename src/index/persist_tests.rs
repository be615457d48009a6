//! The store across processes: what one process saved, the next one
//! re-validates and uses, and every search still gives the scan's text;
//! damaged, deleted or unwritable stores and two writers at once never give
//! a wrong answer.
//!
//! "Another process" is a fresh index of the same root over the same store
//! folder after `forget_root` (what the end of a process does), and in one
//! test two real processes: this test binary started twice.

use super::store::Store;
use super::tests::{apply, compare_all, op, plan_grep, search, seeded_tree, test_config, Op, DIRS};
use super::{forget_root, start, status_of, take_notice, warm, IndexConfig};
use super::{IndexMode, IndexStatus, IndexUse, State};
use crate::search::{CancelToken, GrepOptions};
use proptest::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The tests' racy window: short, so the tree need not age for seconds.
const RACY: Duration = Duration::from_millis(20);

fn config(store: &Path) -> IndexConfig {
    IndexConfig {
        racy: RACY,
        ..test_config(store)
    }
}

/// Lets the tree's ctimes fall out of the racy window of the next walk
/// (otherwise every file is, rightly, read again by the next process).
fn settle() {
    std::thread::sleep(RACY * 3);
}

fn warm_in(root: &Path, store: &Path) -> IndexStatus {
    warm(root, config(store), &CancelToken::new(None)).expect("index ready")
}

/// [`warm_in`], leaving up to `max_unread` changed files unread.
fn warm_leaving(root: &Path, store: &Path, max_unread: usize) -> IndexStatus {
    let config = IndexConfig {
        max_unread,
        ..config(store)
    };
    warm(root, config, &CancelToken::new(None)).expect("index ready")
}

fn store_of(root: &Path, store: &Path) -> Store {
    Store::of(root, &config(store))
}

fn generations(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = (fs::read_dir(dir).into_iter().flatten().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("gen-"))
        .collect();
    v.sort();
    v
}

fn opts(pattern: &str) -> GrepOptions {
    GrepOptions {
        pattern: pattern.into(),
        ..Default::default()
    }
}

/// A seeded tree and an empty store folder for its index.
fn tree_and_store() -> (tempfile::TempDir, tempfile::TempDir) {
    (seeded_tree(), tempfile::tempdir().unwrap())
}

/// A seeded tree whose index one process built and saved, then forgot:
/// the tree, the store folder, the root's folder in it.
fn saved_tree() -> (tempfile::TempDir, tempfile::TempDir, PathBuf) {
    let (t, store) = tree_and_store();
    settle();
    warm_in(t.path(), store.path());
    forget_root(t.path());
    let dir = store_of(t.path(), store.path()).dir;
    (t, store, dir)
}

/// `pattern` through the index and by scan: how the index served it, and
/// the text (asserted to be the scan's).
fn both_ways(root: &Path, pattern: &str) -> (IndexUse, String) {
    let (scan, _) = search(root, &opts(pattern), IndexMode::Off);
    let (via, how) = search(root, &opts(pattern), IndexMode::IfReady);
    assert_eq!(via, scan, "{pattern} ({})", how.as_str());
    (how, via)
}

fn give_back_dirs(root: &Path) {
    for d in 0..DIRS.len() {
        apply(root, &Op::ChmodDir(d, false));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, max_shrink_iters: 32, ..ProptestConfig::default() })]

    /// Built in one process, the tree changed while no process watched it,
    /// opened by the next: every search gives the scan's text, and keeps
    /// doing so as the tree changes under the second process's watch.
    #[test]
    fn the_next_process_revalidates_the_saved_index_and_answers_as_the_scan(
        offline in proptest::collection::vec(op(), 0..8),
        online in proptest::collection::vec(op(), 0..4),
        // Changed while no process watched, before a third process (which
        // may start from the table the second one saved apart).
        later in proptest::collection::vec(op(), 0..4),
        // Changed files merged into a new generation, or left unread.
        max_unread in prop_oneof![Just(0usize), Just(64usize)],
    ) {
        let t = seeded_tree();
        let root = t.path().to_path_buf();
        let store = tempfile::tempdir().unwrap();
        settle();
        let first = warm_in(&root, store.path());
        prop_assert_eq!(first.reread, None, "the first process builds");
        forget_root(&root);
        for o in &offline {
            apply(&root, o);
        }
        let second = warm_leaving(&root, store.path(), max_unread);
        prop_assert!(second.reread.is_some(), "the second process re-validates");
        let mut used = compare_all(&root, "reopened");
        for (i, o) in online.iter().enumerate() {
            apply(&root, o);
            used += compare_all(&root, &format!("after online op {i} {o:?}"));
        }
        prop_assert!(used.grep > 0, "the index was never used");
        forget_root(&root);
        for o in &later {
            apply(&root, o);
        }
        let third = warm_leaving(&root, store.path(), max_unread);
        prop_assert!(third.reread.is_some(), "the third process re-validates");
        compare_all(&root, "third process");
        super::drop_root(&root);
        give_back_dirs(&root);
    }
}

#[test]
fn only_the_files_changed_meanwhile_are_read_again() {
    let (t, store) = tree_and_store();
    let root = t.path();
    settle();
    warm_in(root, store.path());
    let dir = store_of(root, store.path()).dir;
    let before = generations(&dir);
    assert_eq!(before.len(), 1);
    forget_root(root);

    let same = warm_in(root, store.path());
    assert_eq!(same.reread, Some(0), "nothing changed, nothing read");
    assert_eq!(generations(&dir), before, "and no generation written");
    forget_root(root);

    // Same size, mtime set back: only the ctime tells.
    let f = root.join("a.txt");
    let old = fs::metadata(&f).unwrap().modified().unwrap();
    let text = fs::read_to_string(&f).unwrap().replace("needle", "xeedle");
    fs::write(&f, text).unwrap();
    fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let changed = warm_in(root, store.path());
    assert_eq!(changed.reread, Some(1));
    assert_ne!(generations(&dir), before, "a new generation holds it");
    assert_eq!(generations(&dir).len(), 1, "the older one is removed");
    let (how, via) = both_ways(root, "xeedle");
    assert_eq!(how, IndexUse::Used);
    assert!(via.contains("a.txt:2:1:1:xeedle here"), "{via}");
    compare_all(root, "after one offline edit");
    super::drop_root(root);
}

#[test]
fn a_tree_whose_shape_changed_is_walked_once_then_stamped_in_place_again() {
    let (t, store, dir) = saved_tree();
    let root = t.path();
    let same = warm_in(root, store.path());
    assert_eq!(
        (same.reread, same.walked),
        (Some(0), Some(false)),
        "stamped in place"
    );
    forget_root(root);

    // A new file: its directory changed, so the next start walks, and
    // saves the walked table beside the generation (the new file left
    // unread, nothing merged).
    fs::write(root.join("a/c/new.rs"), "fn brand_new_needle() {}\n").unwrap();
    settle();
    let walked = warm_leaving(root, store.path(), 64);
    assert_eq!((walked.reread, walked.walked), (Some(0), Some(true)));
    assert_eq!(generations(&dir).len(), 1, "no generation written");
    assert!(dir.join("table-1").is_file(), "the walked table is saved");
    compare_all(root, "after the walk");
    forget_root(root);

    // Nothing changed since: stamped in place from the saved table; the
    // new file is still unread (not in the postings), still found.
    let again = warm_leaving(root, store.path(), 64);
    assert_eq!((again.reread, again.walked), (Some(0), Some(false)));
    let (_, via) = both_ways(root, "brand_new_needle");
    assert!(via.contains("new.rs"), "{via}");
    compare_all(root, "stamped from the saved table");
    forget_root(root);

    // A damaged saved table is removed and never used: the generation's
    // own table is, and the tree is walked (and its table saved again).
    let table = dir.join("table-1");
    let mut bytes = fs::read(&table).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    fs::write(&table, &bytes).unwrap();
    let damaged = warm_leaving(root, store.path(), 64);
    assert_eq!(damaged.walked, Some(true), "the damaged table was not used");
    assert_ne!(fs::read(&table).unwrap(), bytes, "saved again, whole");
    compare_all(root, "after a damaged saved table");
    forget_root(root);

    // Enough changed files to merge: a new generation, and no table apart
    // is left that could be read with it.
    for i in 0..3 {
        fs::write(root.join(format!("a/many{i}.txt")), "merged\n").unwrap();
    }
    settle();
    let merged = warm_leaving(root, store.path(), 0);
    assert!(merged.reread.is_some_and(|n| n >= 3), "{merged:?}");
    assert_eq!(generations(&dir), vec!["gen-2".to_string()]);
    assert!(!dir.join("table-1").exists() && !dir.join("table-2").exists());
    compare_all(root, "after the merge");
    super::drop_root(root);
}

#[test]
fn a_few_files_changed_meanwhile_are_left_unread_and_nothing_is_written() {
    let (t, store) = tree_and_store();
    let root = t.path();
    settle();
    warm_in(root, store.path());
    let dir = store_of(root, store.path()).dir;
    let before = generations(&dir);
    forget_root(root);
    fs::write(root.join("a.txt"), "no match\nxeedle here\nhay\n").unwrap();
    fs::write(root.join("a/fresh.txt"), "xeedle in a new file\n").unwrap();
    let next = warm_leaving(root, store.path(), 64);
    assert_eq!(next.reread, Some(0), "nothing read again");
    assert_eq!(generations(&dir), before, "and no generation written");
    // The two files have no document: every search reads them.
    let (how, via) = both_ways(root, "xeedle");
    assert_eq!(how, IndexUse::Used);
    assert!(via.contains("a.txt:2:1:1:xeedle here"), "{via}");
    assert!(
        via.contains("a/fresh.txt:1:1:1:xeedle in a new file"),
        "{via}"
    );
    compare_all(root, "after two offline edits, left unread");
    forget_root(root);
    // Past the bound they are read and merged into a new generation.
    let merged = warm_leaving(root, store.path(), 1);
    assert_eq!(merged.reread, Some(2));
    assert_ne!(generations(&dir), before, "a new generation holds them");
    compare_all(root, "after the merge");
    super::drop_root(root);
}

#[test]
fn a_damaged_generation_is_never_trusted_the_next_process_builds_again() {
    let (t, store, dir) = saved_tree();
    let root = t.path();
    let gen = dir.join(&generations(&dir)[0]);
    let good = fs::read(&gen).unwrap();
    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 1;
    let damages: [(&str, Vec<u8>); 3] = [
        ("a flipped byte", flipped),
        ("a truncation", good[..good.len() - 10].to_vec()),
        ("an empty file", Vec::new()),
    ];
    for (what, bytes) in damages {
        // As a crash or a disk would leave it, not as a writer does.
        fs::write(&gen, &bytes).unwrap();
        let status = warm_in(root, store.path());
        assert_eq!(status.reread, None, "{what}: built from scratch");
        assert!(status.mapped);
        assert!(compare_all(root, what).grep > 0);
        forget_root(root);
        let now = generations(&dir);
        assert_eq!(now.len(), 1, "{what}: {now:?}");
        fs::rename(dir.join(&now[0]), &gen).unwrap();
    }
    super::drop_root(root);
}

/// Where a generation's posting blob lies: its offset and length, from
/// the trailer (words 0 and 1 of the last 48 bytes).
fn blob_of(file: &[u8]) -> (usize, usize) {
    let t = &file[file.len() - 48..];
    let word = |i: usize| u64::from_le_bytes(t[i * 8..i * 8 + 8].try_into().unwrap()) as usize;
    (word(0), word(1))
}

/// A tree whose index's posting blob spans many checksum blocks, built
/// and saved; its generation file with every block wholly inside the
/// blob flipped (the table and key directory, checked at open, intact).
fn damaged_blob() -> (tempfile::TempDir, tempfile::TempDir, Vec<u8>) {
    let (t, store) = tree_and_store();
    let root = t.path();
    fs::create_dir(root.join("many")).unwrap();
    for i in 0..60 {
        let text = format!("word{i}x alpha{i}q zeta_{i}_omega\n");
        fs::write(root.join(format!("many/m{i}.txt")), text).unwrap();
    }
    settle();
    warm_in(root, store.path());
    forget_root(root);
    let dir = store_of(root, store.path()).dir;
    let gen = dir.join(&generations(&dir)[0]);
    let mut bytes = fs::read(&gen).unwrap();
    let (at, blob) = blob_of(&bytes);
    let block = 1usize << super::blocks::BLOCK_SHIFT;
    let (from, to) = (at.div_ceil(block) * block, (at + blob) / block * block);
    assert!(to > from + block, "the test tree's blob spans blocks");
    for b in &mut bytes[from..to] {
        *b ^= 0xff;
    }
    fs::write(&gen, &bytes).unwrap();
    (t, store, bytes)
}

/// After the damage was met: built again from scratch into a new
/// generation, which searches use.
fn rebuilt_from_scratch(root: &Path, store: &Path, damaged: &[u8]) {
    let rebuilt = warm_in(root, store);
    assert_eq!(rebuilt.reread, None, "built again from scratch");
    let dir = store_of(root, store).dir;
    let now = generations(&dir);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(fs::read(dir.join(&now[0])).unwrap(), damaged);
    assert!(compare_all(root, "rebuilt").grep > 0);
    super::drop_root(root);
}

#[test]
fn damaged_posting_lists_are_caught_when_a_search_first_reads_them() {
    let (t, store, damaged) = damaged_blob();
    let opened = warm_in(t.path(), store.path());
    assert_eq!(opened.reread, Some(0), "the damage is not seen at open");
    compare_all(t.path(), "over damaged lists");
    rebuilt_from_scratch(t.path(), store.path(), &damaged);
}

#[test]
fn damaged_posting_lists_met_while_merging_changed_files_start_a_build_from_scratch() {
    let (t, store, damaged) = damaged_blob();
    fs::write(
        t.path().join("many/m3.txt"),
        "changed while no process watched\n",
    )
    .unwrap();
    settle();
    // No file left unread: the changed one is merged with every saved list.
    let status = warm_leaving(t.path(), store.path(), 0);
    assert_eq!(status.reread, None, "the merge met the damage");
    compare_all(t.path(), "after the merge was given up");
    rebuilt_from_scratch(t.path(), store.path(), &damaged);
}

#[test]
fn the_store_folder_deleted_between_two_searches() {
    let (t, store) = tree_and_store();
    let root = t.path();
    warm_in(root, store.path());
    let dir = store_of(root, store.path()).dir;
    let (_, how) = search(root, &opts("needle"), IndexMode::IfReady);
    assert_eq!(how, IndexUse::Used);
    fs::remove_dir_all(&dir).unwrap();
    // The mapping outlives the file.
    assert!(compare_all(root, "store folder deleted").grep > 0);
    fs::write(root.join("b/z.txt"), "needle after the deletion\n").unwrap();
    assert!(compare_all(root, "store folder deleted, then an edit").grep > 0);
    forget_root(root);
    let again = warm_in(root, store.path());
    assert_eq!(again.reread, None);
    assert_eq!(generations(&dir).len(), 1, "the next build saves again");
    assert!(compare_all(root, "rebuilt").grep > 0);
    super::drop_root(root);
}

#[test]
fn an_unwritable_store_still_answers_and_says_so_once() {
    let (t, store) = tree_and_store();
    let root = t.path();
    // A file where the root's folder would go: nothing can be created.
    let dir = store_of(root, store.path()).dir;
    fs::write(&dir, "in the way").unwrap();
    let status = warm_in(root, store.path());
    assert_eq!(status.state, State::Ready);
    assert!(!status.mapped, "held in memory");
    let why = status.unsaved.expect("says why it is not saved");
    assert!(why.contains("cannot create"), "{why}");
    assert!(compare_all(root, "unwritable store").grep > 0);
    let notice = take_notice(root, None).expect("told once");
    assert!(notice.contains("could not be saved"), "{notice}");
    assert_eq!(take_notice(root, None), None, "and only once");
    assert_eq!(fs::read_to_string(&dir).unwrap(), "in the way");
    forget_root(root);
}

#[test]
fn a_second_writer_waits_for_the_lock_scans_meanwhile_then_reuses_the_first_ones_generation() {
    let (t, store) = tree_and_store();
    let root = t.path();
    warm_in(root, store.path());
    forget_root(root);
    let held = (store_of(root, store.path()).lock(&CancelToken::new(None)))
        .unwrap()
        .unwrap();
    let status = start(root, config(store.path()));
    assert_eq!(status.state, State::Building);
    assert_eq!(both_ways(root, "needle").0, IndexUse::Building);
    assert_eq!(
        status_of(root).unwrap().state,
        State::Building,
        "still waiting"
    );
    drop(held);
    let status = warm_in(root, store.path());
    assert!(status.reread.is_some(), "re-validated, not built again");
    assert!(compare_all(root, "after the wait").grep > 0);
    super::drop_root(root);
}

#[test]
fn the_total_cap_evicts_the_least_recently_used_root_and_drop_removes_only_its_own() {
    let (t1, t2) = (seeded_tree(), seeded_tree());
    let store = tempfile::tempdir().unwrap();
    warm_in(t1.path(), store.path());
    forget_root(t1.path());
    let dir1 = store_of(t1.path(), store.path()).dir;
    let size: u64 = (fs::read_dir(&dir1).unwrap().flatten())
        .map(|e| e.metadata().unwrap().len())
        .sum();
    let capped = IndexConfig {
        max_bytes: size * 3 / 2,
        ..config(store.path())
    };
    warm(t2.path(), capped, &CancelToken::new(None)).unwrap();
    let dir2 = store_of(t2.path(), store.path()).dir;
    assert!(!dir1.exists(), "the least recently used root is evicted");
    assert!(dir2.exists(), "the one in use is kept");
    assert!(compare_all(t2.path(), "after eviction").grep > 0);

    warm_in(t1.path(), store.path());
    assert!(dir1.exists());
    assert!(super::drop_root(t2.path()));
    assert!(!dir2.exists(), "drop removes that root's folder");
    assert!(dir1.exists(), "and nothing else");
    super::drop_root(t1.path());
}

const CHILD: &str = "PI_UTILS_TEST_INDEX_CHILD";

/// The child of `two_processes_building_one_root_at_once` (ignored unless
/// started by it): builds the root it is given and prints its status.
#[test]
#[ignore]
fn child_builds_the_root_it_is_given() {
    let Some(arg) = std::env::var_os(CHILD) else {
        return;
    };
    let arg = PathBuf::from(arg);
    if let Some(limit) = std::env::var_os(FILE_SIZE_LIMIT) {
        // As a full disk does to a writer: a write past the limit fails
        // (EFBIG, with the signal ignored), whatever was written before it
        // stays.
        let limit: u64 = limit.to_string_lossy().parse().unwrap();
        let rl = libc::rlimit {
            rlim_cur: limit,
            rlim_max: limit,
        };
        // SAFETY: plain calls on this process, with valid arguments.
        unsafe {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &rl), 0);
        }
    }
    let (root, store) = (arg.join("root"), arg.join("store"));
    let status = warm_in(&root, &store);
    let (scan, _) = search(&root, &opts("needle"), IndexMode::Off);
    let (via, how) = search(&root, &opts("needle"), IndexMode::IfReady);
    println!(
        "CHILD reread={:?} mapped={} used={} same={} how={:?} unsaved={:?} notice={:?}",
        status.reread,
        status.mapped,
        how == IndexUse::Used,
        via == scan,
        how,
        status.unsaved,
        take_notice(&root, None),
    );
    forget_root(&root);
}

/// The child's file size limit, in bytes (its writes past it fail).
const FILE_SIZE_LIMIT: &str = "PI_UTILS_TEST_INDEX_CHILD_FSIZE";

/// A seeded tree at `<top>/root` and an empty `<top>/store`, for children.
fn child_top() -> (tempfile::TempDir, PathBuf) {
    let top = tempfile::tempdir().unwrap();
    let t = seeded_tree();
    let root = top.path().join("root");
    fs::rename(t.path(), &root).unwrap();
    fs::create_dir(top.path().join("store")).unwrap();
    (top, root)
}

/// Starts the child on `top` (see [`child_top`]), with `env` set.
fn spawn_child(top: &Path, env: &[(&str, &str)]) -> std::process::Child {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "index::persist_tests::child_builds_the_root_it_is_given",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, top)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// The line a child printed, once it has ended.
fn line_of(child: std::process::Child) -> String {
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // The harness prints the test's name on the same line.
    let at = (text.find("CHILD ")).unwrap_or_else(|| panic!("child said nothing: {text}"));
    text[at..].lines().next().unwrap_or("").to_string()
}

#[test]
fn a_disk_that_fills_while_the_generation_is_written_leaves_none_of_it_and_the_index_answers() {
    let (top, root) = child_top();
    // Past the header and part of the table, short of the whole file.
    let line = line_of(spawn_child(top.path(), &[(FILE_SIZE_LIMIT, "600")]));
    assert!(line.contains("mapped=false used=true same=true"), "{line}");
    assert!(line.contains("unsaved=Some(\"cannot write"), "{line}");
    assert!(
        line.contains("notice=Some(\"The index of this directory could not be saved"),
        "{line}"
    );
    let dir = store_of(&root, &top.path().join("store")).dir;
    let left: Vec<String> = (fs::read_dir(&dir).unwrap().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !matches!(n.as_str(), "lock" | "last-used"))
        .collect();
    assert!(left.is_empty(), "nothing half-written is left: {left:?}");
    // With room again, the next process builds and saves it.
    let line = line_of(spawn_child(top.path(), &[]));
    assert!(
        line.contains("reread=None mapped=true used=true same=true"),
        "{line}"
    );
}

#[test]
fn two_processes_building_one_root_at_once() {
    let (top, root) = child_top();
    let (a, b) = (spawn_child(top.path(), &[]), spawn_child(top.path(), &[]));
    let lines: Vec<String> = [a, b].into_iter().map(line_of).collect();
    for l in &lines {
        assert!(l.contains("mapped=true used=true same=true"), "{l}");
    }
    let built = lines.iter().filter(|l| l.contains("reread=None")).count();
    assert_eq!(built, 1, "one builds, the other re-validates: {lines:?}");
    let dir = store_of(&root, &top.path().join("store")).dir;
    let files: Vec<String> = (fs::read_dir(&dir).unwrap().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !matches!(n.as_str(), "lock" | "last-used"))
        .collect();
    assert_eq!(
        files.len(),
        1,
        "one complete generation, nothing left over: {files:?}"
    );
    // The shared store answers a third "process" as well.
    let _ = plan_grep(&root, None, opts("needle"), IndexMode::Off).unwrap();
    let third = warm_in(&root, &top.path().join("store"));
    assert!(third.reread.is_some());
    super::drop_root(&root);
}

/// Regression: a binary file is counted as skipped by every search that
/// reaches it, so the index must never prune it (it was pruned when present
/// at build time; the differential test found it once files changed while
/// no process watched were read again).
#[test]
fn a_binary_file_present_at_build_time_is_never_pruned() {
    let t = seeded_tree();
    let root = t.path();
    fs::write(root.join("a.txt"), b"needle before\0hay after\n").unwrap();
    let store = tempfile::tempdir().unwrap();
    warm_in(root, store.path());
    let (how, via) = both_ways(root, "struct");
    assert_eq!(how, IndexUse::Used);
    assert!(via.contains("binary=1"), "{via}");
    // A match in a block before the NUL is shown (rg's rule), through the
    // index as by the scan.
    let late = format!("early needle\n{}late needle\0\n", "filler\n".repeat(12_000));
    fs::write(root.join("late.txt"), late).unwrap();
    let (_, via) = both_ways(root, "early needle");
    assert!(via.contains("[(\"late.txt\", 84024, false)]"), "{via}");
    super::drop_root(root);
}

/// Regression: a root named through a symlink was stamped as the link
/// (lstat), which no file created in the real directory changes, so the
/// next process took its saved table over without the new file while the
/// scan found it.
#[test]
fn a_root_named_through_a_symlink_sees_a_file_created_offline_at_its_top() {
    let real = seeded_tree();
    let top = tempfile::tempdir().unwrap();
    let link = top.path().join("link");
    std::os::unix::fs::symlink(real.path(), &link).unwrap();
    let store = tempfile::tempdir().unwrap();
    settle();
    warm_in(&link, store.path());
    forget_root(&link);
    fs::write(real.path().join("new.txt"), "offlinecreated\n").unwrap();
    warm_in(&link, store.path());
    let (_, via) = both_ways(&link, "offlinecreated");
    assert!(via.contains("new.txt"), "the new file is found: {via}");
    compare_all(&link, "after an offline create under a symlinked root");
    super::drop_root(&link);
}
