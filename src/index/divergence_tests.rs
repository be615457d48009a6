//! Regressions of issue 31: nine ways the index once answered differently
//! from the scan. Each test warms the index, changes the tree the way a
//! user did, and compares every search through the index with the scan at
//! once (one process) and, where the change can happen while no process
//! watches, after the next process re-validated the saved index.

use super::tests::{apply, compare_all, op, search, seeded, test_config, Op, DIRS, RULES};
use super::{forget_root, warm, IndexConfig, IndexMode, IndexUse};
use crate::search::{CancelToken, GrepOptions};
use proptest::prelude::*;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

const RACY: Duration = Duration::from_millis(20);

fn config(store: &Path) -> IndexConfig {
    IndexConfig {
        racy: RACY,
        ..test_config(store)
    }
}

fn warm_in(root: &Path, store: &Path) {
    warm(root, config(store), &CancelToken::new(None)).expect("index ready");
}

/// Lets ctimes fall out of the racy window of the next walk.
fn settle() {
    std::thread::sleep(RACY * 3);
}

fn opts(pattern: &str) -> GrepOptions {
    GrepOptions {
        pattern: pattern.into(),
        ..Default::default()
    }
}

/// `pattern` both ways from `root` (asserted equal); the scan's text.
fn same_text(root: &Path, pattern: &str, step: &str) -> String {
    let (scan, _) = search(root, &opts(pattern), IndexMode::Off);
    let (via, how) = search(root, &opts(pattern), IndexMode::IfReady);
    assert_eq!(via, scan, "{step}: {pattern} ({})", how.as_str());
    scan
}

/// Runs `change` on a warm index (one process), then again on a second
/// tree whose index was saved and forgotten first (the next process
/// re-validates it); every search agrees with the scan both times, and
/// `check` sees that the change is visible in the scan's text.
fn in_one_process_and_across(
    make: impl Fn() -> (tempfile::TempDir, std::path::PathBuf),
    change: impl Fn(&Path),
    check: impl Fn(&Path),
) {
    for across in [false, true] {
        let (t, root) = make();
        let store = tempfile::tempdir().unwrap();
        settle();
        warm_in(&root, store.path());
        compare_all(&root, "warm");
        if across {
            forget_root(&root);
        }
        change(&root);
        if across {
            settle();
            warm_in(&root, store.path());
        }
        let step = if across {
            "next process"
        } else {
            "same process"
        };
        compare_all(&root, step);
        check(&root);
        super::drop_root(&root);
        drop(t);
    }
}

/// The check of a change of rules: `needle` found in `file`, now ignored,
/// through the index as by the scan.
fn ignored_after(file: &'static str) -> impl Fn(&Path) {
    move |root| {
        let text = same_text(root, "needle", "after");
        assert!(text.contains(&format!("{file} (ignored)")), "{text}");
    }
}

/// Rules `*.txt` written in place (as an editor that keeps the inode does)
/// to `outside/rules`, beside the tree, which the tree links to.
fn edit_outside_rules(root: &Path) {
    let outside = root.parent().unwrap().join("outside/rules");
    let mut f = fs::OpenOptions::new().write(true).open(outside).unwrap();
    std::io::Write::write_all(&mut f, b"*.txt\n").unwrap();
}

fn seeded_root(repo: bool) -> (tempfile::TempDir, std::path::PathBuf) {
    let t = seeded(repo);
    let root = t.path().to_path_buf();
    (t, root)
}

/// Little-endian UTF-16 with a BOM: `你好 wide` has no NUL byte when the
/// ASCII is left out, so the searcher transcodes it rather than calling
/// it binary.
fn utf16_bom(text: &str) -> Vec<u8> {
    let mut out = vec![0xff, 0xfe];
    for u in text.encode_utf16() {
        out.extend_from_slice(&u.to_le_bytes());
    }
    assert!(!out.contains(&0), "no NUL byte");
    out
}

#[test]
fn cause_1_a_utf16_file_with_a_bom_is_searched_as_the_scan_transcodes_it() {
    in_one_process_and_across(
        || {
            let (t, root) = seeded_root(false);
            fs::write(root.join("a/wide.txt"), utf16_bom("你好世界")).unwrap();
            (t, root)
        },
        |root| fs::write(root.join("b/wide2.txt"), utf16_bom("世界你好")).unwrap(),
        |root| {
            let text = same_text(root, "你好", "after");
            assert!(text.contains("a/wide.txt:1:"), "{text}");
            assert!(text.contains("b/wide2.txt:1:"), "{text}");
        },
    );
}

#[test]
fn cause_3_a_nested_repositorys_info_exclude_edited() {
    in_one_process_and_across(
        || {
            let (t, root) = seeded_root(true);
            fs::create_dir_all(root.join("a/.git/info")).unwrap();
            fs::write(root.join("a/.git/info/exclude"), "").unwrap();
            (t, root)
        },
        |root| fs::write(root.join("a/.git/info/exclude"), "*.txt\n").unwrap(),
        ignored_after("a/x.txt"),
    );
}

#[test]
fn cause_4_git_info_created_after_the_warm_in_the_root() {
    in_one_process_and_across(
        || seeded_root(true),
        |root| {
            fs::create_dir_all(root.join(".git/info")).unwrap();
            fs::write(root.join(".git/info/exclude"), "*.txt\n").unwrap();
        },
        ignored_after("a.txt"),
    );
}

#[test]
fn cause_4_git_info_created_after_the_warm_in_an_ancestor() {
    in_one_process_and_across(
        || {
            let t = tempfile::tempdir().unwrap();
            fs::create_dir(t.path().join(".git")).unwrap();
            let seed = seeded(false);
            let root = t.path().join("proj");
            copy_tree(seed.path(), &root);
            (t, root)
        },
        |root| {
            let top = root.parent().unwrap();
            fs::create_dir_all(top.join(".git/info")).unwrap();
            fs::write(top.join(".git/info/exclude"), "*.txt\n").unwrap();
        },
        ignored_after("a.txt"),
    );
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap().flatten() {
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// A tree beside a folder `outside` (not searched) that may hold the
/// targets of its links.
fn with_outside() -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    fs::create_dir(t.path().join("outside")).unwrap();
    let seed = seeded(true);
    let root = t.path().join("proj");
    copy_tree(seed.path(), &root);
    (t, root)
}

#[test]
fn cause_5_a_symlinked_gitignore_whose_target_outside_the_tree_is_edited() {
    in_one_process_and_across(
        || {
            let (t, root) = with_outside();
            let target = t.path().join("outside/rules");
            fs::write(&target, "").unwrap();
            symlink(&target, root.join("a/.gitignore")).unwrap();
            (t, root)
        },
        edit_outside_rules,
        ignored_after("a/x.txt"),
    );
}

#[test]
fn cause_5_a_symlinked_gitignore_whose_target_inside_the_tree_is_edited() {
    in_one_process_and_across(
        || {
            let (t, root) = seeded_root(true);
            fs::write(root.join("b/rules.txt"), "").unwrap();
            symlink("../b/rules.txt", root.join("a/.gitignore")).unwrap();
            (t, root)
        },
        |root| fs::write(root.join("b/rules.txt"), "*.txt\n").unwrap(),
        ignored_after("a/x.txt"),
    );
}

#[test]
fn cause_5_an_ancestors_symlinked_gitignore_whose_target_is_edited() {
    in_one_process_and_across(
        || {
            let (t, root) = with_outside();
            // The ancestor is the repository; its rules reach the tree.
            fs::create_dir(t.path().join(".git")).unwrap();
            fs::remove_dir(root.join(".git")).unwrap();
            let target = t.path().join("outside/rules");
            fs::write(&target, "").unwrap();
            symlink(&target, t.path().join(".gitignore")).unwrap();
            (t, root)
        },
        edit_outside_rules,
        ignored_after("a.txt"),
    );
}

#[test]
fn cause_6_a_gitignore_hard_linked_outside_the_tree_and_edited_there() {
    in_one_process_and_across(
        || {
            let (t, root) = with_outside();
            fs::write(root.join("a/.gitignore"), "").unwrap();
            fs::hard_link(root.join("a/.gitignore"), t.path().join("outside/rules")).unwrap();
            (t, root)
        },
        edit_outside_rules,
        ignored_after("a/x.txt"),
    );
}

#[test]
fn cause_6_an_info_exclude_hard_linked_outside_the_tree_and_edited_there() {
    in_one_process_and_across(
        || {
            let (t, root) = with_outside();
            fs::create_dir_all(root.join(".git/info")).unwrap();
            fs::write(root.join(".git/info/exclude"), "").unwrap();
            fs::hard_link(
                root.join(".git/info/exclude"),
                t.path().join("outside/rules"),
            )
            .unwrap();
            (t, root)
        },
        edit_outside_rules,
        ignored_after("a.txt"),
    );
}

/// A change of contents, of shape and of rules, each checked at once.
fn edits_of_every_kind(root: &Path) {
    fs::write(root.join("a/x.txt"), "fresh_word_31 here\n").unwrap();
    let text = same_text(root, "fresh_word_31", "content edit");
    assert!(text.contains("x.txt:1:"), "{text}");
    fs::create_dir_all(root.join("a/new")).unwrap();
    fs::write(root.join("a/new/n.txt"), "fresh_word_31 new\n").unwrap();
    let text = same_text(root, "fresh_word_31", "new file");
    assert!(text.contains("n.txt:1:"), "{text}");
    fs::write(root.join(".gitignore"), "*.txt\n").unwrap();
    let text = same_text(root, "fresh_word_31", "rules");
    assert!(text.contains("n.txt (ignored)"), "{text}");
}

#[test]
fn cause_7_a_root_named_through_a_symlink_sees_every_edit() {
    let t = tempfile::tempdir().unwrap();
    let seed = seeded(true);
    copy_tree(seed.path(), &t.path().join("real"));
    symlink("real", t.path().join("link")).unwrap();
    let root = t.path().join("link");
    let store = tempfile::tempdir().unwrap();
    warm_in(&root, store.path());
    edits_of_every_kind(&root);
    compare_all(&root, "through the link");
    let (_, how) = search(&root, &opts("fresh_word_31"), IndexMode::IfReady);
    assert_eq!(how, IndexUse::Used, "the index still serves");
    super::drop_root(&root);
}

#[test]
fn cause_7_an_ancestor_named_through_a_symlink_sees_rule_changes_above() {
    let t = tempfile::tempdir().unwrap();
    fs::create_dir_all(t.path().join("real/.git/info")).unwrap();
    let seed = seeded(false);
    copy_tree(seed.path(), &t.path().join("real/proj"));
    symlink("real", t.path().join("link")).unwrap();
    let root = t.path().join("link/proj");
    let store = tempfile::tempdir().unwrap();
    warm_in(&root, store.path());
    edits_of_every_kind(&root);
    fs::write(t.path().join("real/.gitignore"), "*.rs\n").unwrap();
    let text = same_text(&root, "needle", "ancestor's rules");
    assert!(text.contains("b.rs (ignored)"), "{text}");
    fs::write(t.path().join("real/.git/info/exclude"), "node_modules/\n").unwrap();
    let text = same_text(&root, "needle", "ancestor's exclude");
    assert!(text.contains("node_modules/m/i.js (ignored)"), "{text}");
    compare_all(&root, "through the linked ancestor");
    super::drop_root(&root);
}

#[test]
fn cause_8_a_root_named_with_dot_dot_sees_every_edit() {
    let (t, real) = seeded_root(true);
    let root = real.join("a/..");
    let store = tempfile::tempdir().unwrap();
    warm_in(&root, store.path());
    edits_of_every_kind(&root);
    // The textual ancestor `a` is a directory of the tree itself.
    fs::write(real.join("a/y.rs"), "fresh_word_31 in a\n").unwrap();
    let text = same_text(&root, "fresh_word_31", "in the textual ancestor");
    assert!(text.contains("y.rs:1:"), "{text}");
    compare_all(&root, "dot-dot root");
    drop(t);
    super::drop_root(&root);
}

/// `current -> v1`, each version a project; the root is `current/proj`.
fn versions() -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    for v in ["v1", "v2"] {
        let seed = seeded(true);
        copy_tree(seed.path(), &t.path().join(v).join("proj"));
    }
    fs::write(t.path().join("v2/proj/a.txt"), "only_in_v2 needle\n").unwrap();
    symlink("v1", t.path().join("current")).unwrap();
    let root = t.path().join("current/proj");
    (t, root)
}

/// `ln -sfn v2 current`: a new link renamed over the old one.
fn switch_to_v2(root: &Path) {
    let top = root.parent().unwrap().parent().unwrap();
    symlink("v2", top.join("current.tmp")).unwrap();
    fs::rename(top.join("current.tmp"), top.join("current")).unwrap();
}

#[test]
fn cause_9_a_parent_symlink_switched_to_another_tree() {
    in_one_process_and_across(versions, switch_to_v2, |root| {
        let text = same_text(root, "only_in_v2", "after the switch");
        assert!(text.contains("a.txt:1:"), "{text}");
    });
}

#[test]
fn cause_9_a_parent_folder_renamed_and_replaced() {
    in_one_process_and_across(
        || {
            let t = tempfile::tempdir().unwrap();
            let seed = seeded(true);
            copy_tree(seed.path(), &t.path().join("p/proj"));
            let root = t.path().join("p/proj");
            (t, root)
        },
        |root| {
            let p = root.parent().unwrap();
            fs::rename(p, p.with_file_name("p_old")).unwrap();
            fs::create_dir_all(root.join("a")).unwrap();
            fs::write(root.join("a/other.txt"), "needle elsewhere\n").unwrap();
        },
        |root| {
            let text = same_text(root, "needle", "after the rename");
            assert!(text.contains("a/other.txt:1:"), "{text}");
            assert!(text.contains("errors=0"), "{text}");
        },
    );
}

#[test]
fn cause_9_the_root_itself_renamed_away_is_never_answered_from_the_old_table() {
    let (t, root) = seeded_root(true);
    let store = tempfile::tempdir().unwrap();
    warm_in(&root, store.path());
    let moved = t.path().with_extension("moved");
    fs::rename(&root, &moved).unwrap();
    fs::create_dir(&root).unwrap();
    fs::write(root.join("a.txt"), "needle replaced\n").unwrap();
    let text = same_text(&root, "needle", "root replaced");
    assert!(
        text.contains("a.txt:1:") && text.contains("matches=1"),
        "{text}"
    );
    super::drop_root(&root);
    let _ = fs::remove_dir_all(&moved);
}

/// What inotify cannot see: a link made from outside the tree after the
/// warm and written through that outside name raises no event in the tree
/// (the link count and the write are reported to the inode's own watches
/// and the outside directory's only), so the process that watches cannot
/// know without stamping every file at every search. The next process
/// stamps every file and never trusts one with a second link.
#[test]
fn cause_2_a_hard_link_made_outside_and_written_there_is_seen_by_the_next_process() {
    let (t, root) = with_outside();
    let store = tempfile::tempdir().unwrap();
    settle();
    warm_in(&root, store.path());
    forget_root(&root);
    let outside = t.path().join("outside/z.txt");
    fs::hard_link(root.join("b/z.txt"), &outside).unwrap();
    settle();
    warm_in(&root, store.path());
    // Written through the outside name while this process watches.
    let mut f = fs::OpenOptions::new().append(true).open(outside).unwrap();
    std::io::Write::write_all(&mut f, b"hardlink_word_31\n").unwrap();
    let text = same_text(&root, "hardlink_word_31", "after");
    assert!(text.contains("b/z.txt:"), "{text}");
    compare_all(&root, "hard link made outside");
    super::drop_root(&root);
}

/// Operations of the kinds, on a tree at `top/current/root`
/// (`current` a symlink to `p`, beside `p.alt`, another version of the
/// tree, and `outside`, where links may point).
#[derive(Debug, Clone)]
enum Odd {
    /// A directory's `.gitignore` made a symlink to rules in the tree or
    /// outside it, then those rules edited in place.
    SymlinkRules(usize, usize, bool),
    EditLinkedRules(usize, usize),
    /// A directory's `.gitignore` hard-linked from outside, then edited
    /// there in place.
    HardLinkRules(usize),
    EditHardLinked(usize, usize),
    /// A nested repository with rules in its `.git/info/exclude`.
    NestedRepo(usize, usize),
    /// `.git/info/exclude` created (or edited) in the root, or in `p`
    /// above it (which makes `p` the repository).
    GitInfo(bool, usize),
    /// `p` renamed away and back.
    ParentRenamed,
    /// `p` and `p.alt` trade names.
    ParentSwapped,
    /// `current` switched to the other version (`ln -sfn`).
    LinkSwitched,
}

fn odd() -> impl Strategy<Value = Odd> {
    let d = 0..DIRS.len() + 1;
    let r = 0..RULES.len();
    prop_oneof![
        (d.clone(), r.clone(), any::<bool>()).prop_map(|(d, r, o)| Odd::SymlinkRules(d, r, o)),
        (d.clone(), r.clone()).prop_map(|(d, r)| Odd::EditLinkedRules(d, r)),
        d.clone().prop_map(Odd::HardLinkRules),
        (d.clone(), r.clone()).prop_map(|(d, r)| Odd::EditHardLinked(d, r)),
        (1..DIRS.len() + 1, r.clone()).prop_map(|(d, r)| Odd::NestedRepo(d, r)),
        (any::<bool>(), r).prop_map(|(up, r)| Odd::GitInfo(up, r)),
        Just(Odd::ParentRenamed),
        Just(Odd::ParentSwapped),
        Just(Odd::LinkSwitched),
    ]
}

#[derive(Debug, Clone)]
enum AnyOp {
    Plain(Op),
    Odd(Odd),
}

fn any_op() -> impl Strategy<Value = AnyOp> {
    prop_oneof![2 => op().prop_map(AnyOp::Plain), 3 => odd().prop_map(AnyOp::Odd)]
}

/// Directory `d` of the tree: the root for 0, else `DIRS[d - 1]`.
fn dir_of(root: &Path, d: usize) -> std::path::PathBuf {
    match d {
        0 => root.to_path_buf(),
        d => root.join(DIRS[d - 1]),
    }
}

fn write_in_place(path: &Path, text: &str) {
    if let Ok(mut f) = fs::OpenOptions::new().write(true).truncate(true).open(path) {
        let _ = std::io::Write::write_all(&mut f, text.as_bytes());
    }
}

fn apply_odd(top: &Path, root: &Path, op: &Odd) {
    let outside = top.join("outside");
    match *op {
        Odd::SymlinkRules(d, r, out) => {
            let dir = dir_of(root, d);
            let _ = fs::create_dir_all(&dir);
            let target = match out {
                true => outside.join(format!("rules{d}")),
                false => root.join(format!("rules{d}.txt")),
            };
            let _ = fs::write(&target, RULES[r]);
            let _ = fs::remove_file(dir.join(".gitignore"));
            let _ = symlink(&target, dir.join(".gitignore"));
        }
        Odd::EditLinkedRules(d, r) => {
            write_in_place(&outside.join(format!("rules{d}")), RULES[r]);
            write_in_place(&root.join(format!("rules{d}.txt")), RULES[r]);
        }
        Odd::HardLinkRules(d) => {
            let dir = dir_of(root, d);
            let _ = fs::create_dir_all(&dir);
            let rules = dir.join(".gitignore");
            if fs::symlink_metadata(&rules).is_err() {
                let _ = fs::write(&rules, "");
            }
            let link = outside.join(format!("hard{d}"));
            let _ = fs::remove_file(&link);
            let _ = fs::hard_link(&rules, &link);
        }
        Odd::EditHardLinked(d, r) => write_in_place(&outside.join(format!("hard{d}")), RULES[r]),
        Odd::NestedRepo(d, r) => {
            let info = dir_of(root, d).join(".git/info");
            let _ = fs::create_dir_all(&info);
            let _ = fs::write(info.join("exclude"), RULES[r]);
        }
        Odd::GitInfo(up, r) => {
            let at = if up {
                top.join("current")
            } else {
                root.to_path_buf()
            };
            let _ = fs::create_dir_all(at.join(".git/info"));
            let _ = fs::write(at.join(".git/info/exclude"), RULES[r]);
        }
        Odd::ParentRenamed => {
            let _ = fs::rename(top.join("p"), top.join("p.away"));
            let _ = fs::rename(top.join("p.away"), top.join("p"));
        }
        Odd::ParentSwapped => {
            let _ = fs::rename(top.join("p"), top.join("p.away"));
            let _ = fs::rename(top.join("p.alt"), top.join("p"));
            let _ = fs::rename(top.join("p.away"), top.join("p.alt"));
        }
        Odd::LinkSwitched => {
            let to = match fs::read_link(top.join("current")) {
                Ok(t) if t == Path::new("p") => "p.alt",
                _ => "p",
            };
            let _ = symlink(to, top.join("current.new"));
            let _ = fs::rename(top.join("current.new"), top.join("current"));
        }
    }
}

fn apply_any(top: &Path, root: &Path, op: &AnyOp) {
    match op {
        AnyOp::Plain(o) => apply(root, o),
        AnyOp::Odd(o) => apply_odd(top, root, o),
    }
}

/// `top/current/root`, two versions of the seeded tree (the second with
/// `a.txt` of its own), and `outside`.
fn linked_versions() -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    for v in ["p", "p.alt"] {
        let seed = seeded(true);
        copy_tree(seed.path(), &t.path().join(v).join("root"));
    }
    fs::write(t.path().join("p.alt/root/a.txt"), "needle of the alt\n").unwrap();
    fs::create_dir(t.path().join("outside")).unwrap();
    symlink("p", t.path().join("current")).unwrap();
    let root = t.path().join("current/root");
    (t, root)
}

fn give_back_dirs(top: &Path) {
    for v in ["p", "p.alt"] {
        for d in 0..DIRS.len() {
            apply(&top.join(v).join("root"), &Op::ChmodDir(d, false));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, max_shrink_iters: 32, ..ProptestConfig::default() })]

    /// The random-operations differential test of `tests.rs`, with the
    /// operations of issue 31 among the plain ones: in one process, and
    /// with some of them made while no process watched.
    #[test]
    fn every_search_gives_the_scans_text_through_links_nested_repos_and_moved_parents(
        offline in proptest::collection::vec(any_op(), 0..5),
        online in proptest::collection::vec(any_op(), 1..10),
    ) {
        let (t, root) = linked_versions();
        let top = t.path().to_path_buf();
        let store = tempfile::tempdir().unwrap();
        settle();
        warm_in(&root, store.path());
        if !offline.is_empty() {
            forget_root(&root);
            for o in &offline {
                apply_any(&top, &root, o);
            }
            give_back_dirs(&top);
            settle();
            warm(&root, config(store.path()), &CancelToken::new(None))
                .map_err(|e| TestCaseError::fail(format!("next process: {e}")))?;
        }
        compare_all(&root, "start");
        for (i, o) in online.iter().enumerate() {
            apply_any(&top, &root, o);
            compare_all(&root, &format!("after op {i} {o:?}"));
        }
        super::drop_root(&root);
        give_back_dirs(&top);
    }
}
