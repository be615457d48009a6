//! The index must never change an answer: every search through it gives
//! the text the scan gives. The differential test runs random sequences of
//! tree operations, each followed at once (no sleep) by a batch of searches
//! through the index and through a forced scan, and compares them.

use super::{source_for, warm, IndexConfig, IndexMode, IndexUse};
use crate::search::{
    CancelToken, EntryKind, GlobOptions, GlobPlan, GlobResult, GrepMode, GrepOptions, GrepPlan,
    Hit, SearchError, SortOrder, WalkOptions,
};
use proptest::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};

/// Bounds that index any tree, with the postings files in `store` (the
/// test's own temp folder: the user's cache is never touched).
pub(super) fn test_config(store: &Path) -> IndexConfig {
    IndexConfig {
        min_files: 0,
        // Every query with a literal narrows: the differential tests check
        // the candidates, not the fallback.
        decode_per_file: u64::MAX,
        store: Some(store.to_path_buf()),
        // The test trees are small: every change takes the merge path
        // unless a test asks for the other.
        max_unread: 0,
        ..Default::default()
    }
}

/// Everything a renderer could show of a search, as one text.
fn render(hits: &[Hit], s: &crate::search::GrepSummary) -> String {
    let mut out = String::new();
    for h in hits {
        let ctx = |v: &Vec<crate::search::ContextLine>| {
            v.iter()
                .map(|c| format!("{}-{}[{},{}]", c.line, c.text, c.cut_before, c.cut_after))
                .collect::<Vec<_>>()
                .join("|")
        };
        out.push_str(&format!(
            "{}{}:{}:{}:{}:{}[{},{}] b={} a={} sym={:?} st={:?}\n",
            h.path.text,
            if h.ignored { " (ignored)" } else { "" },
            h.line,
            h.column,
            h.count,
            h.text,
            h.cut_before,
            h.cut_after,
            ctx(&h.before),
            ctx(&h.after),
            h.symbol,
            h.structure,
        ));
    }
    out.push_str(&format!(
        "matches={} files={} limit={} binary={} {:?} errors={} {:?} ignored={:?}\n",
        s.matches,
        s.files_with_matches,
        s.limit_reached,
        s.binary_skipped,
        (s.binary_stopped.iter())
            .map(|b| (&b.path.text, b.offset, b.ignored))
            .collect::<Vec<_>>(),
        s.errors.count,
        s.errors.first,
        s.ignored,
    ));
    out.push_str(&format!("unsearched={:?}\n", s.ignored_unsearched));
    out
}

/// grep's plan as the napi glue makes it: over the source the index picks.
pub(super) fn plan_grep(
    cwd: &Path,
    path: Option<&str>,
    opts: GrepOptions,
    mode: IndexMode,
) -> Result<(GrepPlan, IndexUse), SearchError> {
    let plan = GrepPlan::new(cwd, path, opts)?;
    Ok(plan.serve(|own, narrowing| source_for(own, narrowing, mode)))
}

/// glob as the napi glue runs it.
fn glob(plan: &GlobPlan, mode: IndexMode, cancel: &CancelToken) -> (GlobResult, IndexUse) {
    let (source, how) = source_for(plan.source(), &plan.narrowing(), mode);
    (plan.run_over(&source, cancel), how)
}

pub(super) fn search(root: &Path, opts: &GrepOptions, mode: IndexMode) -> (String, IndexUse) {
    search_in(root, None, opts, mode)
}

/// A search of `sub` (a directory below `root`, or `root` itself).
fn search_in(
    root: &Path,
    sub: Option<&str>,
    opts: &GrepOptions,
    mode: IndexMode,
) -> (String, IndexUse) {
    let (plan, used) = plan_grep(root, sub, opts.clone(), mode).expect("valid search");
    let mut hits = Vec::new();
    let summary = plan.run(&CancelToken::new(None), |b| {
        hits.extend(b);
        true
    });
    (render(&hits, &summary), used)
}

/// Everything a glob's caller could show, as one text.
fn glob_text(
    root: &Path,
    sub: Option<&str>,
    opts: &GlobOptions,
    mode: IndexMode,
) -> (String, IndexUse) {
    let plan = GlobPlan::new(root, sub, opts.clone()).expect("valid glob");
    let (r, used) = glob(&plan, mode, &CancelToken::new(None));
    let mut out = String::new();
    for e in &r.entries {
        out.push_str(&format!(
            "{} {:?} dir={} {} {} ignored={}\n",
            e.path.text, e.path.raw_hex, e.is_dir, e.mtime_ms, e.size, e.ignored
        ));
    }
    out.push_str(&format!(
        "total={} limit={} errors={} {:?} ignored={:?} unsearched={:?}\n",
        r.total,
        r.limit_reached,
        r.errors.count,
        r.errors.first,
        r.ignored
            .iter()
            .map(|i| (&i.path, i.matches))
            .collect::<Vec<_>>(),
        r.ignored_unsearched,
    ));
    (out, used)
}

/// The globs each step runs: by name and by path, newest first and in path
/// order, hidden off, limits that the project alone fills (the ignored
/// roots then go unsearched) and that leave room for ignored files, and
/// kinds that list directories (the table serves those only when no
/// directory matches).
fn globs() -> Vec<GlobOptions> {
    let base = |pattern: &str, limit: usize| GlobOptions {
        pattern: pattern.into(),
        limit,
        walk: WalkOptions {
            threads: 2,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut v = vec![
        base("*.txt", 3),
        base("*", 100),
        base("*", 1),
        base("*.log", 10),
        base("a/**", 100),
        base("**/c/*", 100),
        GlobOptions {
            sort: SortOrder::Path,
            ..base("*", 5)
        },
        GlobOptions {
            kind: EntryKind::Dir,
            ..base("*", 100)
        },
        base("*.js", 0),
    ];
    // Files and directories, as the glob tool lists them, and directories
    // alone: the table answers when no directory matches, the walk when
    // one does.
    let kinds = [
        (EntryKind::Any, "*.txt", 100),
        (EntryKind::Any, "*.txt", 2),
        (EntryKind::Any, "c", 100),
        (EntryKind::Any, "**/c/*", 100),
        (EntryKind::Dir, "*.txt", 100),
    ];
    v.extend(kinds.map(|(kind, p, limit)| GlobOptions {
        kind,
        ..base(p, limit)
    }));
    let mut g = base("*", 100);
    g.walk.hidden = false;
    v.push(g);
    let mut g = base("*.txt", 100);
    g.walk.no_ignore = false;
    v.push(g);
    v
}

/// Directories below the root that each step also searches: with rules
/// of their own or not, inside an ignored directory, one that may not
/// exist at the moment.
pub(crate) const SUBDIRS: [&str; 4] = ["a", "a/c", "b", "node_modules"];

/// The searches each step runs: literals, regexes with and without a
/// required literal, case folding (with the long s that folds to `s`),
/// globs, types, hidden off, context, every mode, limits that cut.
fn searches() -> Vec<GrepOptions> {
    let base = |pattern: &str| GrepOptions {
        pattern: pattern.into(),
        walk: WalkOptions {
            threads: 2,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut v = vec![
        base("needle"),
        GrepOptions {
            ignore_case: true,
            before: 1,
            after: 1,
            ..base("NEEDLE")
        },
        GrepOptions {
            ignore_case: true,
            ..base("struct")
        },
        base("struct [a-z_]+_operations \\{"),
        base("hay|needle"),
        base("e"),
        GrepOptions {
            literal: true,
            ..base("a.b(")
        },
        GrepOptions {
            mode: GrepMode::Files,
            ..base("needle")
        },
        GrepOptions {
            mode: GrepMode::Count,
            ..base("hay")
        },
        GrepOptions {
            limit: Some(2),
            ..base("needle")
        },
        GrepOptions {
            limit: Some(1),
            mode: GrepMode::Files,
            ..base("hay")
        },
        GrepOptions {
            sort: SortOrder::Mtime,
            ..base("needle")
        },
        GrepOptions {
            ignored_count_only: true,
            ..base("needle")
        },
        GrepOptions {
            group: true,
            ..base("needle")
        },
        // No literal to narrow by, but a limit: fed the table in walk order.
        GrepOptions {
            limit: Some(3),
            ..base("e")
        },
        GrepOptions {
            limit: Some(2),
            mode: GrepMode::Files,
            sort: SortOrder::Mtime,
            ..base("h.y")
        },
        GrepOptions {
            limit: Some(4),
            ignored_count_only: true,
            before: 1,
            ..base("[a-z]")
        },
    ];
    let mut g = base("needle");
    g.walk.globs = vec!["*.txt".into()];
    v.push(g);
    let mut g = base("needle");
    g.walk.globs = vec!["!a/**".into()];
    v.push(g);
    let mut g = base("needle");
    g.walk.types = vec!["rust".into()];
    v.push(g);
    let mut g = base("needle");
    g.walk.hidden = false;
    v.push(g);
    v
}

#[derive(Debug, Clone)]
pub(crate) enum Op {
    Write(usize, usize),
    Append(usize, usize),
    Truncate(usize),
    Delete(usize),
    RenameFile(usize, usize),
    RenameDir(usize, usize),
    Binary(usize),
    Gitignore(usize, usize),
    Symlink(usize, usize),
    Chmod000(usize),
    /// A file replaced by a FIFO (never opened by a search, indexed or not).
    Fifo(usize),
    /// A directory's permissions taken away and given back.
    ChmodDir(usize, bool),
    /// A new directory holding files and a directory of its own, made in
    /// one of the tree's directories.
    NewTree(usize, usize),
    /// A directory moved into another (an ignored one, at times) for good.
    MoveInto(usize, usize),
    /// Thirty files written at once in a new folder of a directory.
    Burst(usize, usize),
}

pub(crate) const FILES: [&str; 12] = [
    "a.txt",
    "b.rs",
    ".hidden.txt",
    "a/x.txt",
    "a/y.rs",
    "a/c/deep.txt",
    "b/z.txt",
    "node_modules/m/i.js",
    "out.log",
    "b/c/w.rs",
    "a/c/v.log",
    "n.txt",
];
pub(crate) const DIRS: [&str; 5] = ["a", "b", "a/c", "b/c", "node_modules"];
const TEXTS: [&str; 6] = [
    "no match\nneedle here\nhay\n",
    "struct foo_operations {\n  needle,\n}\n",
    "NEEDLE upper\nſtruct long s\n",
    "fn needle() {\n    let hay = 1;\n}\n",
    "a.b( literal\ne\n",
    "nothing at all\n",
];
pub(crate) const RULES: [&str; 4] = ["*.log\n", "node_modules/\na/c/\n", "!out.log\n*.txt\n", ""];

pub(crate) fn op() -> impl Strategy<Value = Op> {
    let f = 0..FILES.len();
    let d = 0..DIRS.len();
    let t = 0..TEXTS.len();
    prop_oneof![
        4 => (f.clone(), t.clone()).prop_map(|(a, b)| Op::Write(a, b)),
        2 => (f.clone(), t.clone()).prop_map(|(a, b)| Op::Append(a, b)),
        1 => f.clone().prop_map(Op::Truncate),
        1 => f.clone().prop_map(Op::Delete),
        1 => (f.clone(), f.clone()).prop_map(|(a, b)| Op::RenameFile(a, b)),
        1 => (d.clone(), d.clone()).prop_map(|(a, b)| Op::RenameDir(a, b)),
        1 => f.clone().prop_map(Op::Binary),
        2 => (d.clone(), 0..RULES.len()).prop_map(|(a, b)| Op::Gitignore(a, b)),
        1 => (f.clone(), f.clone()).prop_map(|(a, b)| Op::Symlink(a, b)),
        1 => f.clone().prop_map(Op::Chmod000),
        1 => f.prop_map(Op::Fifo),
        1 => (d.clone(), any::<bool>()).prop_map(|(a, b)| Op::ChmodDir(a, b)),
        2 => (0..=DIRS.len(), t.clone()).prop_map(|(a, b)| Op::NewTree(a, b)),
        1 => (d.clone(), d).prop_map(|(a, b)| Op::MoveInto(a, b)),
        1 => (0..=DIRS.len(), t).prop_map(|(a, b)| Op::Burst(a, b)),
    ]
}

/// Opens for writing without blocking: a path an earlier op turned into a
/// FIFO would otherwise wait for a reader forever (it fails with ENXIO).
fn open_w(path: &Path, append: bool, truncate: bool) -> std::io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .write(true)
        .append(append)
        .truncate(truncate)
        .create(append || truncate)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

fn write(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    if let Ok(mut f) = open_w(path, false, true) {
        let _ = f.write_all(bytes);
    }
}

pub(crate) fn apply(root: &Path, op: &Op) {
    let p = |i: usize| root.join(FILES[i]);
    let parent = |q: &PathBuf| {
        if let Some(d) = q.parent() {
            let _ = fs::create_dir_all(d);
        }
    };
    match *op {
        Op::Write(f, t) => {
            parent(&p(f));
            write(&p(f), TEXTS[t].as_bytes());
        }
        Op::Append(f, t) => {
            use std::io::Write;
            parent(&p(f));
            if let Ok(mut h) = open_w(&p(f), true, false) {
                let _ = h.write_all(TEXTS[t].as_bytes());
            }
        }
        Op::Truncate(f) => {
            if let Ok(h) = open_w(&p(f), false, false) {
                let _ = h.set_len(0);
            }
        }
        Op::Delete(f) => {
            let _ = fs::remove_file(p(f));
        }
        Op::RenameFile(a, b) => {
            parent(&p(b));
            let _ = fs::rename(p(a), p(b));
        }
        Op::RenameDir(a, b) => {
            let (from, to) = (root.join(DIRS[a]), root.join(format!("{}2", DIRS[b])));
            let _ = fs::rename(&from, &to);
            // And back under the other name, so the tree keeps changing shape.
            let _ = fs::rename(&to, root.join(DIRS[b]));
        }
        Op::Binary(f) => {
            parent(&p(f));
            write(&p(f), b"needle before\0hay after\n");
        }
        Op::Gitignore(d, r) => {
            let dir = if d == 0 {
                root.to_path_buf()
            } else {
                root.join(DIRS[d])
            };
            let _ = fs::create_dir_all(&dir);
            let _ = fs::write(dir.join(".gitignore"), RULES[r]);
        }
        Op::Symlink(a, b) => {
            parent(&p(b));
            let _ = fs::remove_file(p(b));
            let _ = std::os::unix::fs::symlink(p(a), p(b));
        }
        Op::Chmod000(f) => {
            use std::os::unix::fs::PermissionsExt;
            let _ = fs::set_permissions(p(f), fs::Permissions::from_mode(0o000));
        }
        Op::Fifo(f) => {
            parent(&p(f));
            let _ = fs::remove_file(p(f));
            let c = std::ffi::CString::new(p(f).into_os_string().into_encoded_bytes()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
        }
        Op::ChmodDir(d, off) => {
            use std::os::unix::fs::PermissionsExt;
            let mode = if off { 0o000 } else { 0o755 };
            let _ = fs::set_permissions(root.join(DIRS[d]), fs::Permissions::from_mode(mode));
        }
        Op::NewTree(d, t) => {
            let at = dir_or_root(root, d).join("fresh");
            let _ = fs::create_dir_all(at.join("deeper"));
            write(&at.join("deeper/f.txt"), TEXTS[t].as_bytes());
            write(&at.join("g.rs"), TEXTS[(t + 1) % TEXTS.len()].as_bytes());
        }
        Op::MoveInto(a, b) => {
            let to = root.join(DIRS[b]).join("moved");
            let _ = fs::rename(root.join(DIRS[a]), to);
        }
        Op::Burst(d, t) => {
            let at = dir_or_root(root, d).join("burst");
            let _ = fs::create_dir_all(&at);
            for i in 0..30 {
                write(
                    &at.join(format!("b{i}.txt")),
                    TEXTS[(t + i) % TEXTS.len()].as_bytes(),
                );
            }
        }
    }
}

/// `DIRS[d]` below `root`, or `root` itself for `d == DIRS.len()`.
fn dir_or_root(root: &Path, d: usize) -> PathBuf {
    DIRS.get(d)
        .map_or_else(|| root.to_path_buf(), |x| root.join(x))
}

/// How many searches of each kind used the index.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Used {
    pub(super) grep: usize,
    pub(super) glob: usize,
    pub(super) sub_grep: usize,
    pub(super) sub_glob: usize,
}

/// Runs every search and glob both ways, of the root and of each
/// subdirectory that exists; returns how many used the index.
pub(super) fn compare_all(root: &Path, step: &str) -> Used {
    let mut used = Used::default();
    let count = |how: IndexUse| (how == IndexUse::Used) as usize;
    for opts in searches() {
        let (scan, _) = search(root, &opts, IndexMode::Off);
        let (via, how) = search(root, &opts, IndexMode::IfReady);
        assert_eq!(via, scan, "{step}: {:?} ({})", opts.pattern, how.as_str());
        used.grep += count(how);
    }
    for opts in globs() {
        let (scan, _) = glob_text(root, None, &opts, IndexMode::Off);
        let (via, how) = glob_text(root, None, &opts, IndexMode::IfReady);
        assert_eq!(
            via,
            scan,
            "{step}: glob {:?} ({})",
            opts.pattern,
            how.as_str()
        );
        used.glob += count(how);
    }
    for sub in SUBDIRS {
        if !std::fs::symlink_metadata(root.join(sub)).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        for opts in searches().iter().step_by(3) {
            let (scan, _) = search_in(root, Some(sub), opts, IndexMode::Off);
            let (via, how) = search_in(root, Some(sub), opts, IndexMode::IfReady);
            assert_eq!(
                via,
                scan,
                "{step}: {:?} in {sub} ({})",
                opts.pattern,
                how.as_str()
            );
            used.sub_grep += count(how);
        }
        for opts in globs() {
            let (scan, _) = glob_text(root, Some(sub), &opts, IndexMode::Off);
            let (via, how) = glob_text(root, Some(sub), &opts, IndexMode::IfReady);
            let what = format!(
                "{step}: glob {:?} in {sub} ({})",
                opts.pattern,
                how.as_str()
            );
            assert_eq!(via, scan, "{what}");
            used.sub_glob += count(how);
        }
    }
    used
}

impl std::ops::AddAssign for Used {
    fn add_assign(&mut self, o: Used) {
        self.grep += o.grep;
        self.glob += o.glob;
        self.sub_grep += o.sub_grep;
        self.sub_glob += o.sub_glob;
    }
}

pub(super) fn seeded_tree() -> tempfile::TempDir {
    seeded(false)
}

/// The seeded tree, as a git repository or not: a search of a directory
/// below a repository's root keeps the root's rules, one below a plain
/// directory does not.
pub(crate) fn seeded(repo: bool) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    if repo {
        fs::create_dir(t.path().join(".git")).unwrap();
    }
    for (i, f) in FILES.iter().enumerate() {
        let path = t.path().join(f);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, TEXTS[i % TEXTS.len()]).unwrap();
    }
    fs::write(t.path().join(".gitignore"), "node_modules/\n*.log\n").unwrap();
    t
}

/// Builds the index of `root`; the returned folder holds its postings
/// store and must outlive the test's use of the index.
#[must_use]
pub(crate) fn ready(root: &Path) -> tempfile::TempDir {
    let store = tempfile::tempdir().unwrap();
    ready_in(root, store.path());
    store
}

pub(super) fn ready_in(root: &Path, store: &Path) {
    let status = warm(root, test_config(store), &CancelToken::new(None)).expect("index builds");
    assert!(status.mapped, "the postings are a mapped file");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, max_shrink_iters: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_search_through_the_index_gives_the_scans_text(ops in proptest::collection::vec(op(), 1..12), repo in any::<bool>()) {
        let t = seeded(repo);
        let root = t.path().to_path_buf();
        let _store = ready(&root);
        let mut used = compare_all(&root, "start");
        prop_assert!(used.glob > 0, "glob never listed the table");
        prop_assert!(used.sub_glob > 0 || !repo, "a subdirectory never used the index");
        for (i, o) in ops.iter().enumerate() {
            apply(&root, o);
            used += compare_all(&root, &format!("after op {i} {o:?}"));
        }
        super::drop_root(&root);
        // Without this a non-root run could not remove the tree.
        for d in DIRS {
            apply(&root, &Op::ChmodDir(DIRS.iter().position(|x| *x == d).unwrap_or(0), false));
        }
        prop_assert!(used.grep > 0, "the index was never used");
    }
}

#[test]
fn an_edit_is_seen_by_the_very_next_search_and_the_index_is_used() {
    let t = seeded_tree();
    let root = t.path();
    let _store = ready(root);
    let opts = GrepOptions {
        pattern: "fresh_word_42".into(),
        ..Default::default()
    };
    let (before, how) = search(root, &opts, IndexMode::IfReady);
    assert_eq!(how, IndexUse::Used);
    assert!(before.starts_with("matches=0"), "{before}");
    fs::write(root.join("a/x.txt"), "now fresh_word_42 is here\n").unwrap();
    let (after, how) = search(root, &opts, IndexMode::IfReady);
    assert_eq!(how, IndexUse::Used);
    assert!(after.contains("a/x.txt:1:5:1:now fresh_word_42"), "{after}");
    fs::create_dir_all(root.join("new/dir")).unwrap();
    fs::write(root.join("new/dir/f.txt"), "fresh_word_42 again\n").unwrap();
    let (after, _) = search(root, &opts, IndexMode::IfReady);
    assert!(
        after.contains("new/dir/f.txt:1:1:1:fresh_word_42"),
        "{after}"
    );
    super::drop_root(root);
}

#[test]
fn a_burst_that_overflows_the_watcher_makes_the_index_stale_then_rebuilt() {
    let t = seeded_tree();
    let root = t.path();
    let store = ready(root);
    let limit: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(16384);
    let burst = (limit + 1000).max(20_000);
    let dir = root.join("burst");
    fs::create_dir(&dir).unwrap();
    // The directory's own watch is added by the rewalk the first search
    // does; the burst then lands in it.
    let opts = GrepOptions {
        pattern: "needle".into(),
        ..Default::default()
    };
    search(root, &opts, IndexMode::IfReady);
    for i in 0..burst {
        fs::write(
            dir.join(format!("f{i}")),
            if i == 7 { "needle\n" } else { "" },
        )
        .unwrap();
    }
    let (scan, _) = search(root, &opts, IndexMode::Off);
    let (via, how) = search(root, &opts, IndexMode::IfReady);
    assert_eq!(how, IndexUse::Stale);
    assert_eq!(via, scan);
    ready_in(root, store.path());
    let (via, how) = search(root, &opts, IndexMode::IfReady);
    assert_eq!(how, IndexUse::Used);
    assert_eq!(via, scan);
    assert!(via.contains("burst/f7:1:1:1:needle"), "{via}");
    super::drop_root(root);
}

#[test]
fn a_tree_below_the_floor_is_not_indexed_and_says_why() {
    let t = seeded_tree();
    let config = IndexConfig {
        min_files: 1000,
        ..Default::default()
    };
    let err = warm(t.path(), config, &CancelToken::new(None)).unwrap_err();
    assert!(err.contains("fewer than index.minFiles (1000)"), "{err}");
    super::drop_root(t.path());
}

#[cfg(unix)]
#[test]
fn a_root_with_a_non_utf8_name_is_indexed_and_matches_the_scan() {
    use std::os::unix::ffi::OsStrExt;
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join(std::ffi::OsStr::from_bytes(b"r\xffoot"));
    fs::create_dir(&root).unwrap();
    fs::write(root.join("a.txt"), "needle\n").unwrap();
    fs::write(
        root.join(std::ffi::OsStr::from_bytes(b"n\xfe.txt")),
        "needle too\n",
    )
    .unwrap();
    let _store = ready(&root);
    let used = compare_all(&root, "non-utf8 root");
    assert!(used.grep > 0 && used.glob > 0, "{used:?}");
    super::drop_root(&root);
}

#[test]
fn a_root_that_vanishes_is_answered_by_the_scan() {
    let t = seeded_tree();
    let root = t.path().join("a");
    let _store = ready(&root);
    fs::remove_dir_all(&root).unwrap();
    let opts = GrepOptions {
        pattern: "needle".into(),
        ..Default::default()
    };
    assert!(plan_grep(&root, None, opts, IndexMode::IfReady).is_err());
    super::drop_root(&root);
}

#[test]
fn a_tree_above_the_ceiling_is_not_indexed_and_the_walk_stops_early() {
    let t = seeded_tree();
    let config = IndexConfig {
        min_files: 0,
        max_files: 3,
        ..Default::default()
    };
    let err = warm(t.path(), config, &CancelToken::new(None)).unwrap_err();
    assert_eq!(err, "more files than index.maxFiles (3)");
    super::drop_root(t.path());
}

#[test]
fn a_search_inside_an_indexed_directory_uses_the_roots_index_and_starts_no_second() {
    let t = seeded(true);
    fs::write(t.path().join("a/c/v.log"), "needle in a log\n").unwrap();
    let _store = ready(t.path());
    let sub = t.path().join("a");
    let opts = GrepOptions {
        pattern: "needle".into(),
        ..Default::default()
    };
    let (_, how) = plan_grep(&sub, None, opts.clone(), IndexMode::Auto).unwrap();
    assert_eq!(
        how,
        IndexUse::Used,
        "in a repository the root's rules hold in a/"
    );
    assert!(
        super::status_of(&sub).is_none(),
        "no index was started for a/"
    );
    let (scan, _) = search_in(t.path(), Some("a"), &opts, IndexMode::Off);
    let (via, _) = search_in(t.path(), Some("a"), &opts, IndexMode::IfReady);
    assert_eq!(via, scan);
    assert!(via.contains("c/v.log (ignored)"), "the root's *.log: {via}");
    super::drop_root(t.path());
}

#[test]
fn a_directory_below_the_root_keeps_the_roots_rules_without_a_repository() {
    // No repository: a walk of a/ reads the root's .gitignore too (parent
    // ignore files apply wherever a search starts, as in rg), so a/c/v.log
    // is ignored there as in the root's table, which answers for a/.
    let t = seeded(false);
    fs::write(t.path().join("a/c/v.log"), "needle in a log\n").unwrap();
    let _store = ready(t.path());
    let opts = GrepOptions {
        pattern: "needle".into(),
        ..Default::default()
    };
    let (scan, _) = search_in(t.path(), Some("a"), &opts, IndexMode::Off);
    let (via, how) = search_in(t.path(), Some("a"), &opts, IndexMode::IfReady);
    assert_eq!(how, IndexUse::Used);
    assert_eq!(via, scan);
    assert!(via.contains("c/v.log (ignored)"), "{via}");
    // b/ holds nothing the root's rules ignore: its walk is the table's.
    let (scan, _) = search_in(t.path(), Some("b"), &opts, IndexMode::Off);
    let (via, how) = search_in(t.path(), Some("b"), &opts, IndexMode::IfReady);
    assert_eq!(how, IndexUse::Used);
    assert_eq!(via, scan);
    // Inside an ignored directory the table classified nothing: scanned.
    let (scan, _) = search_in(t.path(), Some("node_modules"), &opts, IndexMode::Off);
    let (via, how) = search_in(t.path(), Some("node_modules"), &opts, IndexMode::IfReady);
    assert_eq!(how, IndexUse::Scan);
    assert_eq!(via, scan);
    super::drop_root(t.path());
}

#[test]
fn a_hard_linked_file_written_through_its_other_name_is_still_found() {
    let t = seeded_tree();
    let root = t.path();
    fs::write(root.join("b/z.txt"), "nothing yet\n").unwrap();
    fs::hard_link(root.join("b/z.txt"), root.join("a/linked.txt")).unwrap();
    let _store = ready(root);
    use std::io::Write;
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(root.join("b/z.txt"))
        .unwrap();
    f.write_all(b"hardlink_word_7\n").unwrap();
    drop(f);
    let opts = GrepOptions {
        pattern: "hardlink_word_7".into(),
        ..Default::default()
    };
    let (scan, _) = search(root, &opts, IndexMode::Off);
    let (via, how) = search(root, &opts, IndexMode::IfReady);
    assert_eq!(how, IndexUse::Used);
    assert_eq!(via, scan);
    assert!(via.contains("a/linked.txt:2"), "{via}");
    super::drop_root(root);
}

#[test]
fn a_query_that_cannot_be_narrowed_reads_the_table_in_walk_order() {
    let t = seeded(true);
    let root = t.path();
    let _store = ready(root);
    // With a limit it walks: it ends in the first files either way.
    let limited = GrepOptions {
        pattern: "e".into(),
        limit: Some(2),
        ..Default::default()
    };
    let (scan, _) = search(root, &limited, IndexMode::Off);
    let (via, how) = search(root, &limited, IndexMode::IfReady);
    assert_eq!(how, IndexUse::Scan);
    assert_eq!(via, scan);
    // Without one (every mode), the table gives the files: a file written
    // just before is among them, since the feed is the fresh table.
    fs::write(root.join(".0first.txt"), "e first\n").unwrap();
    for mode in [GrepMode::Content, GrepMode::Count, GrepMode::Files] {
        let all = GrepOptions {
            limit: None,
            mode,
            ..limited.clone()
        };
        let (via, how) = search(root, &all, IndexMode::IfReady);
        assert_eq!(how, IndexUse::Used);
        assert_eq!(via, search(root, &all, IndexMode::Off).0, "{mode:?}");
        assert!(via.contains(".0first.txt"), "{mode:?}: {via}");
        let (via, how) = search_in(root, Some("a"), &all, IndexMode::IfReady);
        assert_eq!(how, IndexUse::Used);
        assert_eq!(via, search_in(root, Some("a"), &all, IndexMode::Off).0);
    }
    super::drop_root(root);
}

#[test]
fn an_ignore_file_written_above_the_root_is_seen_by_the_very_next_search() {
    let t = tempfile::tempdir().unwrap();
    // The parent is the repository: its rules apply to the project below.
    fs::create_dir(t.path().join(".git")).unwrap();
    let root = t.path().join("proj");
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("src/a.rs"), "needle in code\n").unwrap();
    fs::write(root.join("notes.txt"), "needle in notes\n").unwrap();
    let _store = ready(&root);
    let opts = GrepOptions {
        pattern: "needle".into(),
        ..Default::default()
    };
    let both = |step: &str| {
        let (scan, _) = search(&root, &opts, IndexMode::Off);
        let (via, how) = search(&root, &opts, IndexMode::IfReady);
        assert_eq!(via, scan, "{step}");
        assert_eq!(how, IndexUse::Used, "{step}");
        via
    };
    let before = both("before");
    // The repository's rules make the notes ignored: searched last, and
    // labelled so.
    fs::write(t.path().join(".gitignore"), "*.txt\n").unwrap();
    let after = both("after the parent's .gitignore");
    assert_ne!(after, before, "the classification changed");
    fs::remove_file(t.path().join(".gitignore")).unwrap();
    assert_eq!(both("after it was removed"), before);
    super::drop_root(&root);
}

#[test]
fn a_listing_of_files_and_directories_uses_the_table_unless_a_directory_matches() {
    let t = seeded_tree();
    let root = t.path();
    let _store = ready(root);
    let any = |pattern: &str| GlobOptions {
        pattern: pattern.into(),
        kind: EntryKind::Any,
        ..Default::default()
    };
    let (scan, _) = glob_text(root, None, &any("*.txt"), IndexMode::Off);
    let (via, how) = glob_text(root, None, &any("*.txt"), IndexMode::IfReady);
    assert_eq!(via, scan);
    assert_eq!(how, IndexUse::Used, "no directory is named *.txt");
    // `a/c` and `b/c` are directories named `c`: the table cannot list them.
    let (scan, _) = glob_text(root, None, &any("c"), IndexMode::Off);
    let (via, how) = glob_text(root, None, &any("c"), IndexMode::IfReady);
    assert_eq!(via, scan);
    assert!(scan.contains("dir=true"), "{scan}");
    assert_eq!(how, IndexUse::Scan);
    // A directory made since is one the table learns of.
    fs::create_dir(root.join("b/d.txt")).unwrap();
    let (scan, _) = glob_text(root, None, &any("*.txt"), IndexMode::Off);
    let (via, how) = glob_text(root, None, &any("*.txt"), IndexMode::IfReady);
    assert_eq!(via, scan);
    assert!(scan.contains("b/d.txt"), "{scan}");
    assert_eq!(how, IndexUse::Scan);
    super::drop_root(root);
}
