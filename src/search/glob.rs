//! File discovery, newest first.
//!
//! A parallel walk feeds a bounded top-K heap, so memory is O(limit) and the
//! walk keeps full speed (a sorted walk such as `rg --sortr=modified` is
//! single-threaded). Ignored entries are set aside by the walk and listed
//! after the project's own files, since a fresh `node_modules` is newer than
//! every source file.

use super::cancel::CancelToken;
use super::dir_open::MtimeSize;
use super::display::{display_bytes, relative_bytes, DisplayPath};
use super::parallel_walk::WalkEntry;
use super::path_order::{file_name_bytes, path_order};
use super::source::{FileFeed, FileSource, Narrowing, SourceFile, TakesDir};
use super::walk::{resolve_target, ErrorLog, IgnoredRoot, Target, WalkOptions, Walker};
use super::{SearchError, SortOrder};
use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EntryKind {
    #[default]
    File,
    Dir,
    Any,
}

/// Entries listed when the caller sets no limit.
pub const DEFAULT_LIMIT: usize = 200;

#[derive(Debug, Clone)]
pub struct GlobOptions {
    pub pattern: String,
    pub limit: usize,
    pub kind: EntryKind,
    pub sort: SortOrder,
    pub walk: WalkOptions,
    pub timeout: Option<Duration>,
}

impl Default for GlobOptions {
    fn default() -> Self {
        GlobOptions {
            pattern: String::new(),
            limit: DEFAULT_LIMIT,
            kind: EntryKind::File,
            sort: SortOrder::Mtime,
            walk: WalkOptions::default(),
            timeout: None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct GlobEntry {
    pub path: DisplayPath,
    pub is_dir: bool,
    pub mtime_ms: f64,
    pub size: u64,
    pub ignored: bool,
}

#[derive(Debug, Clone, Default)]
pub struct GlobIgnored {
    pub path: String,
    pub matches: u64,
}

#[derive(Debug, Clone, Default)]
pub struct GlobResult {
    pub entries: Vec<GlobEntry>,
    /// Everything that matched, listed or not.
    pub total: u64,
    pub limit_reached: bool,
    pub timed_out: bool,
    pub cancelled: bool,
    pub errors: ErrorLog,
    pub ignored: Vec<GlobIgnored>,
    /// Ignored roots not walked (the project alone filled the limit, or the
    /// search stopped first).
    pub ignored_unsearched: Vec<String>,
    pub elapsed_ms: f64,
}

/// How one entry is matched: by file name, or by path relative to the root.
struct PatternMatcher {
    /// A set of the one glob rather than its matcher: a set tries cheap
    /// strategies first (a hash of the extension for `*.c`, of the name
    /// for `Makefile`) where the matcher always runs the glob's regex, 15 %
    /// of a glob over the index's table of the Linux tree.
    glob: GlobSet,
    by_path: bool,
    /// For a name pattern that is `*` and then plain characters (`*.c`,
    /// `*_test.go`), those characters: a name matches when it ends with
    /// them, a byte comparison where even the set's extension lookup
    /// hashes the extension and builds a candidate (a quarter of such a
    /// glob over a table).
    suffix: Option<Vec<u8>>,
}

impl PatternMatcher {
    fn new(pattern: &str) -> Result<Self, SearchError> {
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
        if pattern.is_empty() {
            return Err(SearchError::InvalidGlob("pattern must not be empty".into()));
        }
        let by_path = pattern.contains('/');
        // A pattern without `/` is matched against a file name, which holds
        // no `/`: letting `*` match one changes no answer, and only then may
        // the set match `*.c` by its extension.
        let glob = GlobBuilder::new(pattern)
            .literal_separator(by_path)
            .backslash_escape(true)
            .build()
            .map_err(|e| SearchError::InvalidGlob(e.to_string()))?;
        let glob = GlobSetBuilder::new()
            .add(glob)
            .build()
            .map_err(|e| SearchError::InvalidGlob(e.to_string()))?;
        let suffix = (pattern.strip_prefix('*'))
            .filter(|rest| !by_path && !rest.contains(['*', '?', '[', ']', '{', '}', '\\']))
            .map(|rest| rest.as_bytes().to_vec());
        Ok(PatternMatcher {
            glob,
            by_path,
            suffix,
        })
    }

    fn matches(&self, root: &Path, path: &Path) -> bool {
        if self.by_path {
            let rel = path.strip_prefix(root).unwrap_or(path);
            self.glob.is_match_candidate(&Candidate::new(rel))
        } else {
            let bytes = path.as_os_str().as_bytes();
            if let (Some(suffix), Some(last)) = (&self.suffix, bytes.last()) {
                // Not ending in `/` or `.`, the path ends with its name, and
                // a suffix without `/` lies within it.
                if !matches!(last, b'/' | b'.') {
                    return bytes.ends_with(suffix);
                }
            }
            match (file_name_bytes(path), &self.suffix) {
                (Some(name), Some(suffix)) => name.ends_with(suffix),
                (Some(name), None) => {
                    let name = std::ffi::OsStr::from_bytes(name);
                    self.glob.is_match_candidate(&Candidate::new(name))
                }
                (None, _) => false,
            }
        }
    }
}

/// Heap key where the greatest element is the one to drop first.
#[derive(Debug, PartialEq, Eq)]
enum Key {
    Mtime(Reverse<SystemTime>, PathBuf),
    Path(PathBuf),
}

/// Paths by [`path_order`]: a tree unpacked from an archive gives every
/// file one mtime, and each file offered to a full heap was then compared
/// by `Path::cmp`, which parses both paths into components.
impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self, other) {
            (Key::Mtime(t, p), Key::Mtime(u, q)) => t.cmp(u).then_with(|| path_order(p, q)),
            (Key::Path(p), Key::Path(q)) => path_order(p, q),
            (Key::Mtime(..), Key::Path(_)) => std::cmp::Ordering::Less,
            (Key::Path(_), Key::Mtime(..)) => std::cmp::Ordering::Greater,
        }
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// An entry that matched, as the top-K heap keeps it.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct GlobMatch {
    key: Key,
    is_dir: bool,
    size: u64,
    mtime: SystemTime,
    ignored_root: Option<usize>,
}

struct TopK {
    heap: BinaryHeap<GlobMatch>,
    limit: usize,
    total: u64,
}

impl TopK {
    fn new(limit: usize) -> Self {
        TopK {
            heap: BinaryHeap::with_capacity(limit.min(4096) + 1),
            limit,
            total: 0,
        }
    }

    fn push(&mut self, c: GlobMatch) {
        self.total += 1;
        if self.limit == 0 {
            return;
        }
        if self.heap.len() < self.limit {
            self.heap.push(c);
        } else if let Some(top) = self.heap.peek() {
            if c < *top {
                self.heap.pop();
                self.heap.push(c);
            }
        }
    }
}

fn kind_matches(kind: EntryKind, is_dir: bool) -> bool {
    match kind {
        EntryKind::File => !is_dir,
        EntryKind::Dir => is_dir,
        EntryKind::Any => true,
    }
}

fn candidate(
    sort: SortOrder,
    path: &Path,
    mtime_size: Option<MtimeSize>,
    is_dir: bool,
    ignored_root: Option<usize>,
) -> GlobMatch {
    let mtime = mtime_size.map_or(SystemTime::UNIX_EPOCH, |s| s.mtime);
    let key = match sort {
        SortOrder::Mtime => Key::Mtime(Reverse(mtime), path.to_path_buf()),
        SortOrder::Path => Key::Path(path.to_path_buf()),
    };
    GlobMatch {
        key,
        is_dir,
        size: mtime_size.map_or(0, |s| s.size),
        mtime,
        ignored_root,
    }
}

fn path_of(c: &GlobMatch) -> &Path {
    match &c.key {
        Key::Mtime(_, p) | Key::Path(p) => p,
    }
}

fn ms_since_epoch(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

fn visitor<'a>(
    opts: &'a GlobOptions,
    matcher: &'a PatternMatcher,
    root: &'a Path,
    ignored_root: Option<usize>,
    top: &'a Mutex<TopK>,
) -> impl FnMut(&WalkEntry<'_>) -> bool + Send + 'a {
    move |e| {
        let is_dir = e.is_dir();
        if kind_matches(opts.kind, is_dir) && matcher.matches(root, e.path()) {
            let c = candidate(opts.sort, e.path(), e.mtime_size(), is_dir, ignored_root);
            top.lock().unwrap_or_else(|p| p.into_inner()).push(c);
        }
        true
    }
}

/// A validated glob: bad input is rejected before any walking starts.
pub struct GlobPlan {
    opts: GlobOptions,
    matcher: PatternMatcher,
    root: PathBuf,
    walker: Arc<Walker>,
}

impl GlobPlan {
    pub fn new(cwd: &Path, path: Option<&str>, opts: GlobOptions) -> Result<Self, SearchError> {
        let matcher = PatternMatcher::new(&opts.pattern)?;
        let root = match resolve_target(cwd, path)? {
            Target::Dir(d) => d,
            Target::File(f) => {
                return Err(SearchError::NotSearchable(format!(
                    "{} is a file; glob needs a directory",
                    f.display()
                )))
            }
        };
        let walker = Arc::new(Walker::new(root.clone(), opts.walk.clone())?);
        Ok(GlobPlan {
            opts,
            matcher,
            root,
            walker,
        })
    }

    pub fn run(&self, cancel: &CancelToken) -> GlobResult {
        run_plan(self, &self.walker, cancel)
    }
}

/// Visitor for the ignored trees: like `visitor`, but each entry is counted
/// under the ignored root it lies under.
fn ignored_visitor<'a>(
    opts: &'a GlobOptions,
    matcher: &'a PatternMatcher,
    root: &'a Path,
    roots: &'a [IgnoredRoot],
    per_root: &'a [AtomicU64],
    top: &'a Mutex<TopK>,
) -> impl FnMut(&WalkEntry<'_>) -> bool + Send + 'a {
    move |e| {
        let is_dir = e.is_dir();
        if kind_matches(opts.kind, is_dir) && matcher.matches(root, e.path()) {
            let ignored_root = IgnoredRoot::index_of(roots, e.path());
            if let Some(r) = ignored_root {
                per_root[r].fetch_add(1, Ordering::Relaxed);
            }
            let c = candidate(opts.sort, e.path(), e.mtime_size(), is_dir, ignored_root);
            top.lock().unwrap_or_else(|p| p.into_inner()).push(c);
        }
        true
    }
}

/// Validates and runs in one call: what the tests need.
#[cfg(test)]
pub(super) fn run(
    cwd: &Path,
    path: Option<&str>,
    opts: &GlobOptions,
    cancel: &CancelToken,
) -> Result<GlobResult, SearchError> {
    Ok(GlobPlan::new(cwd, path, opts.clone())?.run(cancel))
}

fn run_plan(plan: &GlobPlan, walker: &Walker, cancel: &CancelToken) -> GlobResult {
    let started = Instant::now();
    let opts = &plan.opts;
    let matcher = &plan.matcher;
    let root = &plan.root;
    let errors = Mutex::new(ErrorLog::default());
    let project = Mutex::new(TopK::new(opts.limit));
    let roots = walker.walk_parallel(&[], cancel, &errors, || {
        visitor(opts, matcher, root, None, &project)
    });
    let project = project.into_inner().unwrap_or_else(|p| p.into_inner());
    let room = opts.limit.saturating_sub(project.heap.len());
    let mut ignored = None;
    if room > 0 && !roots.is_empty() && !cancel.is_stopped() {
        let top = Mutex::new(TopK::new(room));
        let per_root: Vec<AtomicU64> = roots.iter().map(|_| AtomicU64::new(0)).collect();
        for (i, d) in roots.iter().enumerate() {
            if kind_matches(opts.kind, d.is_dir) && matcher.matches(root, &d.path) {
                let meta = std::fs::symlink_metadata(&d.path).ok();
                let mtime_size = meta.as_ref().map(MtimeSize::from);
                let c = candidate(opts.sort, &d.path, mtime_size, d.is_dir, Some(i));
                top.lock().unwrap_or_else(|p| p.into_inner()).push(c);
                per_root[i].fetch_add(1, Ordering::Relaxed);
            }
        }
        let dirs: Vec<IgnoredRoot> = roots.iter().filter(|d| d.is_dir).cloned().collect();
        if !dirs.is_empty() {
            walker.walk_parallel(&dirs, cancel, &errors, || {
                ignored_visitor(opts, matcher, root, &roots, &per_root, &top)
            });
        }
        let top = top.into_inner().unwrap_or_else(|p| p.into_inner());
        let totals = per_root.iter().map(|n| n.load(Ordering::Relaxed)).collect();
        ignored = Some((top.heap.into_sorted_vec(), top.total, totals));
    }
    let errors = errors.into_inner().unwrap_or_else(|p| p.into_inner());
    finish(plan, started, project, ignored, &roots, errors, cancel)
}

impl GlobPlan {
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The walk this plan runs, as a source that another of the same
    /// files may stand in for (see [`GlobPlan::run_over`]).
    pub fn source(&self) -> FileSource {
        FileSource::Walk(self.walker.clone())
    }

    /// What a source of this glob's files may narrow them by: nothing, and
    /// directories are wanted (those its pattern matches) unless only
    /// files are listed.
    pub fn narrowing(&self) -> Narrowing<'_> {
        Narrowing {
            dirs: (self.opts.kind != EntryKind::File).then_some(self as &dyn TakesDir),
            ..Narrowing::default()
        }
    }

    /// Runs over `source`: a walk, or every regular file the walk of this
    /// plan would visit (its hidden filter applied), with the ignored roots
    /// that walk would set aside. A list of files only serves plans listing
    /// files (`EntryKind::File`): directories are not in it. The result is
    /// the walk's: the same entries, totals, ignored counts and unsearched
    /// roots.
    pub fn run_over(&self, source: &FileSource, cancel: &CancelToken) -> GlobResult {
        let feed: &dyn FileFeed = match source {
            FileSource::Walk(walker) => return run_plan(self, walker, cancel),
            FileSource::List(list) => list,
            FileSource::Feed(feed) => feed.as_ref(),
        };
        let started = Instant::now();
        let opts = &self.opts;
        let roots = feed.ignored_roots();
        let mut project = TopK::new(opts.limit);
        // Ignored files are kept to the limit and cut to the room the
        // project leaves once it is known: the top of the top is the top.
        let mut ignored = TopK::new(opts.limit);
        let mut per_root = vec![0u64; roots.len()];
        let parts = (0..roots.len()).map(|i| (Some(i), feed.ignored(i)));
        let files = std::iter::once((None, feed.project()))
            .chain(parts)
            .flat_map(|(root, part)| part.map(move |f| (root, f)));
        for (n, (ignored_root, f)) in files.enumerate() {
            if n % 4096 == 0 && cancel.is_stopped() {
                break;
            }
            // A source serves a listing of directories only when none
            // matches (see `Narrowing::dirs`): its files are the answer.
            if !kind_matches(opts.kind, false) || !self.matcher.matches(&self.root, f.path) {
                continue;
            }
            let top = match ignored_root {
                None => &mut project,
                Some(i) => {
                    per_root[i] += 1;
                    &mut ignored
                }
            };
            top.offer(opts.sort, &f, ignored_root);
        }
        let room = opts.limit.saturating_sub(project.heap.len());
        let walked = room > 0 && !roots.is_empty() && !cancel.is_stopped();
        let ignored = walked.then(|| {
            let mut chosen = ignored.heap.into_sorted_vec();
            chosen.truncate(room);
            (chosen, ignored.total, per_root)
        });
        finish(
            self,
            started,
            project,
            ignored,
            roots,
            ErrorLog::default(),
            cancel,
        )
    }
}

impl TakesDir for GlobPlan {
    fn takes_dir(&self, dir: &Path) -> bool {
        kind_matches(self.opts.kind, true) && self.matcher.matches(&self.root, dir)
    }
}

impl TopK {
    /// Pushes a listed file, building its entry (a path copy) only when
    /// the heap would keep it.
    fn offer(&mut self, sort: SortOrder, f: &SourceFile<'_>, ignored_root: Option<usize>) {
        let (mtime, size) = f.current().unwrap_or((SystemTime::UNIX_EPOCH, 0));
        if self.limit > 0 && self.heap.len() >= self.limit {
            let worse = self.heap.peek().is_some_and(|top| match (sort, &top.key) {
                (SortOrder::Mtime, Key::Mtime(Reverse(t), p)) => Reverse(mtime)
                    .cmp(&Reverse(*t))
                    .then_with(|| path_order(f.path, p))
                    .is_ge(),
                (_, Key::Path(p)) | (_, Key::Mtime(_, p)) => path_order(f.path, p).is_ge(),
            });
            if worse {
                self.total += 1;
                return;
            }
        }
        let kept = MtimeSize { mtime, size };
        self.push(candidate(sort, f.path, Some(kept), false, ignored_root));
    }
}

/// What the walk of the ignored roots found: the entries chosen (within
/// the room the project left), how many matched, and per root how many.
type IgnoredFound = (Vec<GlobMatch>, u64, Vec<u64>);

/// The result of a glob from what its project part and (when the ignored
/// roots were walked) its ignored part found.
fn finish(
    plan: &GlobPlan,
    started: Instant,
    project: TopK,
    ignored: Option<IgnoredFound>,
    roots: &[IgnoredRoot],
    errors: ErrorLog,
    cancel: &CancelToken,
) -> GlobResult {
    let opts = &plan.opts;
    let root = &plan.root;
    let mut result = GlobResult::default();
    let mut chosen: Vec<GlobMatch> = project.heap.into_sorted_vec();
    result.total = project.total;
    let label = |d: &IgnoredRoot| d.label(root);
    // Not searched and could have matched: a directory may hold matches, an
    // ignored file only when the pattern takes it (`.clang-format` is no
    // answer to `*.rs`, and named it for 380 of the Linux tree's roots).
    let unsearched = || {
        (roots.iter())
            .filter(|d| d.is_dir || plan.matcher.matches(root, &d.path))
            .map(label)
            .collect()
    };
    let mut ignored_totals = vec![0u64; roots.len()];
    match ignored {
        Some((found, total, per_root)) => {
            if cancel.is_stopped() {
                result.ignored_unsearched = unsearched();
            }
            ignored_totals = per_root;
            result.total += total;
            chosen.extend(found);
        }
        None => result.ignored_unsearched = unsearched(),
    }
    for (i, d) in roots.iter().enumerate() {
        if ignored_totals[i] > 0 {
            result.ignored.push(GlobIgnored {
                path: label(d),
                matches: ignored_totals[i],
            });
        }
    }
    result.limit_reached = result.total > chosen.len() as u64
        || !result.ignored_unsearched.is_empty() && chosen.len() >= opts.limit;
    result.entries = chosen
        .iter()
        .map(|c| GlobEntry {
            path: display_bytes(&relative_bytes(root, path_of(c))),
            is_dir: c.is_dir,
            mtime_ms: ms_since_epoch(c.mtime),
            size: c.size,
            ignored: c.ignored_root.is_some(),
        })
        .collect();
    result.errors = errors;
    (result.cancelled, result.timed_out) = cancel.flags();
    result.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    result
}

#[cfg(test)]
mod matcher_tests {
    use super::PatternMatcher;
    use globset::GlobBuilder;
    use proptest::prelude::*;
    use std::path::Path;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        /// The set's strategies and the suffix test answer as the glob's own
        /// regex does, with
        /// `*` kept from matching `/`, for names and for relative paths.
        #[test]
        fn the_set_answers_as_the_globs_regex(
            pattern in proptest::sample::select(vec![
                "*.c", "*.C", "Makefile", "*file", "Make*", "*.{c,h}", "[a-c]*.rs", "?.c", "**/*.c",
                "src/*.c", "src/**", "**/x", "*", "a*b*c", "\\*.c", "*.tar.gz", ".*", "*.",
                "*c", "*M", "*/", "*.[ch]", "*.{c,h}", "*\\.c", "*a*", "*?",
            ]),
            rel in "[a-cMx.*]{1,3}(/[a-cMx.*]{1,4}){0,3}\\.(c|C|h|rs|gz|)",
        ) {
            let root = Path::new("/r");
            let path = root.join(&rel);
            let ours = PatternMatcher::new(pattern).unwrap();
            let regex = GlobBuilder::new(pattern).literal_separator(true).backslash_escape(true)
                .build().unwrap().compile_matcher();
            let expected = if pattern.contains('/') {
                regex.is_match(path.strip_prefix(root).unwrap())
            } else {
                path.file_name().is_some_and(|n| regex.is_match(n))
            };
            prop_assert_eq!(ours.matches(root, &path), expected, "{} on {}", pattern, rel);
        }
    }
}
