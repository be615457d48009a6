//! Streaming content search.
//!
//! One thread walks in order and hands files to searcher threads; a collector
//! puts their results back in walk order, applies the global limit, and
//! emits batches. So the output is the same whatever the thread count, and a
//! limit reached early stops the walk without reading the rest of the tree.
//! Files the ignore rules exclude are searched after the project's own.

use super::cancel::{CancelToken, StopReason};
use super::display::{display_bytes, relative_bytes, DisplayPath};
use super::line_window::{trim_terminator, window};
use super::walk::{resolve_target, Deferred, ErrorLog, Target, WalkOptions, Walker};
use super::{SearchError, SortOrder};
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, MmapChoice, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind,
    SinkMatch,
};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// Files up to this size are read whole into a reused buffer (one read, and
/// the buffer can serve structure extraction); larger ones are streamed.
const WHOLE_READ_LIMIT: u64 = 8 << 20;
/// Batches are flushed at this size, or after `FLUSH_INTERVAL`.
const BATCH_SIZE: usize = 256;
const FLUSH_INTERVAL: Duration = Duration::from_millis(50);
/// How far the walker may run ahead of the collector, in files.
const LOOKAHEAD: usize = 128;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GrepMode {
    #[default]
    Content,
    Files,
    Count,
}

#[derive(Debug, Clone)]
pub struct GrepOptions {
    pub pattern: String,
    pub literal: bool,
    pub ignore_case: bool,
    pub multiline: bool,
    pub before: usize,
    pub after: usize,
    pub mode: GrepMode,
    pub sort: SortOrder,
    /// Content mode: matching lines. Files and count modes: files listed.
    pub max_count: Option<u64>,
    pub max_line_length: usize,
    /// Once the project has a match, ignored files are only counted (per
    /// ignored root) instead of being emitted and filling the limit.
    pub ignored_count_only: bool,
    pub walk: WalkOptions,
    pub timeout: Option<Duration>,
}

impl Default for GrepOptions {
    fn default() -> Self {
        GrepOptions {
            pattern: String::new(),
            literal: false,
            ignore_case: false,
            multiline: false,
            before: 0,
            after: 0,
            mode: GrepMode::Content,
            sort: SortOrder::Path,
            max_count: None,
            max_line_length: 500,
            ignored_count_only: false,
            walk: WalkOptions::default(),
            timeout: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextLine {
    pub line: u64,
    pub text: String,
    pub cut_before: usize,
    pub cut_after: usize,
}

/// One matching line (content mode) or one file (files / count modes,
/// where `line` is 0 and `count` holds the number of matching lines).
#[derive(Debug, Clone)]
pub struct Hit {
    pub path: Arc<DisplayPath>,
    pub ignored: bool,
    pub line: u64,
    /// 1-based byte column of the first match on the line, like `rg --column`.
    pub column: u64,
    pub text: String,
    pub cut_before: usize,
    pub cut_after: usize,
    pub before: Vec<ContextLine>,
    pub after: Vec<ContextLine>,
    pub count: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IgnoredCount {
    /// Display path of the ignored root (`node_modules/` for a directory).
    pub path: String,
    pub matches: u64,
    pub files: u64,
}

#[derive(Debug, Clone, Default)]
pub struct GrepSummary {
    pub matches: u64,
    pub files_with_matches: u64,
    pub files_searched: u64,
    pub limit_reached: bool,
    pub timed_out: bool,
    pub cancelled: bool,
    pub binary_skipped: u64,
    pub errors: ErrorLog,
    /// Matches found in ignored files, per ignored root, as far as searched.
    pub ignored: Vec<IgnoredCount>,
    /// Ignored roots the search stopped before finishing.
    pub ignored_unsearched: Vec<String>,
    pub elapsed_ms: f64,
}

pub fn build_matcher(opts: &GrepOptions) -> Result<RegexMatcher, SearchError> {
    if opts.pattern.is_empty() {
        return Err(SearchError::EmptyPattern);
    }
    let mut b = RegexMatcherBuilder::new();
    b.case_insensitive(opts.ignore_case)
        .fixed_strings(opts.literal)
        .multi_line(true);
    if !opts.multiline {
        b.line_terminator(Some(b'\n'));
    }
    b.build(&opts.pattern)
        .map_err(|e| SearchError::InvalidPattern(e.to_string()))
}

fn build_searcher(opts: &GrepOptions) -> Searcher {
    let content = opts.mode == GrepMode::Content;
    SearcherBuilder::new()
        .line_number(opts.mode != GrepMode::Files)
        .before_context(if content { opts.before } else { 0 })
        .after_context(if content { opts.after } else { 0 })
        .multi_line(opts.multiline)
        .memory_map(MmapChoice::never())
        .binary_detection(BinaryDetection::quit(0))
        .build()
}

/// A file to search and where its hits go in the output.
struct Job {
    seq: u64,
    path: PathBuf,
    /// Index of the ignored root this file lies under, if any.
    group: Option<usize>,
}

enum FileOutcome {
    /// Hits (capped at the limit) and the file's full count of matching
    /// lines when it was asked for (ignored files in count-only mode).
    Searched(Vec<Hit>, u64),
    Binary,
    Failed(String),
    Skipped,
}

struct Done {
    seq: u64,
    group: Option<usize>,
    outcome: FileOutcome,
}

/// Per-thread search state: the buffer is reused across files.
struct FileSearcher<'a> {
    opts: &'a GrepOptions,
    matcher: RegexMatcher,
    searcher: Searcher,
    buf: Vec<u8>,
    display_root: PathBuf,
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: a FIFO swapped in after the walk must not block the open.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// Stops a streamed read when the search is cancelled, since the searcher
/// only calls back on matches.
struct CancellableReader<'a, R> {
    inner: R,
    stop: &'a dyn Fn() -> bool,
}

impl<R: Read> Read for CancellableReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if (self.stop)() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "cancelled",
            ));
        }
        self.inner.read(buf)
    }
}

impl<'a> FileSearcher<'a> {
    fn search(
        &mut self,
        path: &Path,
        group: Option<usize>,
        stop: &dyn Fn() -> bool,
    ) -> FileOutcome {
        let file = match open_nonblocking(path) {
            Ok(f) => f,
            Err(e) => return FileOutcome::Failed(format!("{}: {e}", path.display())),
        };
        let meta = match file.metadata() {
            Ok(m) => m,
            Err(e) => return FileOutcome::Failed(format!("{}: {e}", path.display())),
        };
        if !meta.is_file() {
            return FileOutcome::Skipped;
        }
        let display = Arc::new(display_bytes(&relative_bytes(&self.display_root, path)));
        let mut sink = HitSink {
            opts: self.opts,
            matcher: &self.matcher,
            display,
            ignored: group.is_some(),
            hits: Vec::new(),
            pending_before: Vec::new(),
            lines_matched: 0,
            cap: self.opts.max_count.unwrap_or(u64::MAX),
            count_past_cap: group.is_some() && self.opts.ignored_count_only,
            binary: false,
            stop,
        };
        let result = if meta.len() <= WHOLE_READ_LIMIT {
            self.buf.clear();
            let mut f = file;
            if let Err(e) = f.read_to_end(&mut self.buf) {
                return FileOutcome::Failed(format!("{}: {e}", path.display()));
            }
            if memchr::memchr(0, &self.buf).is_some() {
                return FileOutcome::Binary;
            }
            self.searcher
                .search_slice(&self.matcher, &self.buf, &mut sink)
        } else {
            let reader = CancellableReader { inner: file, stop };
            self.searcher
                .search_reader(&self.matcher, reader, &mut sink)
        };
        if let Err(e) = result {
            if e.kind() != std::io::ErrorKind::Interrupted {
                return FileOutcome::Failed(format!("{}: {e}", path.display()));
            }
        }
        if sink.binary && sink.lines_matched == 0 {
            return FileOutcome::Binary;
        }
        if self.opts.mode != GrepMode::Content && sink.lines_matched > 0 {
            sink.hits.push(Hit {
                path: sink.display.clone(),
                ignored: sink.ignored,
                line: 0,
                column: 0,
                text: String::new(),
                cut_before: 0,
                cut_after: 0,
                before: Vec::new(),
                after: Vec::new(),
                count: sink.lines_matched,
            });
        }
        FileOutcome::Searched(sink.hits, sink.lines_matched)
    }
}

struct HitSink<'a> {
    opts: &'a GrepOptions,
    matcher: &'a RegexMatcher,
    display: Arc<DisplayPath>,
    ignored: bool,
    hits: Vec<Hit>,
    pending_before: Vec<ContextLine>,
    lines_matched: u64,
    cap: u64,
    /// Keep counting (without building hits) after the cap.
    count_past_cap: bool,
    binary: bool,
    stop: &'a dyn Fn() -> bool,
}

impl HitSink<'_> {
    fn context_line(&self, line: u64, bytes: &[u8]) -> ContextLine {
        let w = window(trim_terminator(bytes), None, self.opts.max_line_length);
        ContextLine {
            line,
            text: w.text,
            cut_before: w.cut_before,
            cut_after: w.cut_after,
        }
    }
}

impl Sink for HitSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, m: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if (self.stop)() {
            return Ok(false);
        }
        match self.opts.mode {
            GrepMode::Files => {
                self.lines_matched = 1;
                return Ok(false);
            }
            GrepMode::Count => {
                self.lines_matched += m.lines().count() as u64;
                return Ok(true);
            }
            GrepMode::Content => {}
        }
        let first_line = m.line_number().unwrap_or(0);
        for (i, raw) in m.lines().enumerate() {
            if self.lines_matched >= self.cap {
                if self.count_past_cap {
                    self.lines_matched += 1;
                    continue;
                }
                return Ok(false);
            }
            let line = trim_terminator(raw);
            let focus = self
                .matcher
                .find(line)
                .ok()
                .flatten()
                .map(|mat| mat.start());
            let w = window(line, focus, self.opts.max_line_length);
            self.lines_matched += 1;
            self.hits.push(Hit {
                path: self.display.clone(),
                ignored: self.ignored,
                line: first_line + i as u64,
                column: focus.map_or(1, |f| f as u64 + 1),
                text: w.text,
                cut_before: w.cut_before,
                cut_after: w.cut_after,
                before: if i == 0 {
                    std::mem::take(&mut self.pending_before)
                } else {
                    Vec::new()
                },
                after: Vec::new(),
                count: 1,
            });
        }
        Ok(self.lines_matched < self.cap || self.opts.after > 0 || self.count_past_cap)
    }

    fn context(&mut self, _s: &Searcher, c: &SinkContext<'_>) -> Result<bool, Self::Error> {
        let line = self.context_line(c.line_number().unwrap_or(0), c.bytes());
        match c.kind() {
            SinkContextKind::Before => self.pending_before.push(line),
            SinkContextKind::After => {
                if let Some(last) = self.hits.last_mut() {
                    last.after.push(line);
                }
            }
            SinkContextKind::Other => {}
        }
        Ok(true)
    }

    fn binary_data(&mut self, _s: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// Display label of an ignored root: relative path, `/` after a directory.
fn ignored_label(root: &Path, d: &Deferred) -> String {
    let mut s = display_bytes(&relative_bytes(root, &d.path)).text;
    if d.is_dir {
        s.push('/');
    }
    s
}

fn mtime_of(path: &Path) -> SystemTime {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// A validated search, ready to run: bad input (empty or invalid pattern,
/// missing path, unknown type, bad glob) is rejected here, before any thread
/// starts, so callers can report it at once.
pub struct GrepPlan {
    opts: GrepOptions,
    matcher: RegexMatcher,
    walker: Walker,
    display_root: PathBuf,
    single: Option<PathBuf>,
}

impl GrepPlan {
    pub fn new(cwd: &Path, path: Option<&str>, opts: GrepOptions) -> Result<Self, SearchError> {
        let matcher = build_matcher(&opts)?;
        let target = resolve_target(cwd, path)?;
        let (walk_root, single) = match &target {
            Target::Dir(d) => (d.clone(), None),
            Target::File(f) => {
                let parent = f.parent().map(Path::to_path_buf).unwrap_or_default();
                (parent, Some(f.clone()))
            }
        };
        let walker = Walker::new(walk_root.clone(), opts.walk.clone())?;
        Ok(GrepPlan {
            opts,
            matcher,
            walker,
            display_root: walk_root,
            single,
        })
    }

    /// Runs the search, calling `emit` with ordered batches on the calling
    /// thread. `emit` returns false when the consumer has gone away; the
    /// search then stops as if cancelled.
    pub fn run(&self, cancel: &CancelToken, emit: impl FnMut(Vec<Hit>) -> bool) -> GrepSummary {
        run_plan(self, cancel, emit)
    }
}

/// Convenience for tests and the CLI: validate and run in one call.
pub fn run(
    cwd: &Path,
    path: Option<&str>,
    opts: &GrepOptions,
    cancel: &CancelToken,
    emit: impl FnMut(Vec<Hit>) -> bool,
) -> Result<GrepSummary, SearchError> {
    Ok(GrepPlan::new(cwd, path, opts.clone())?.run(cancel, emit))
}

fn run_plan(
    plan: &GrepPlan,
    cancel: &CancelToken,
    mut emit: impl FnMut(Vec<Hit>) -> bool,
) -> GrepSummary {
    let started = Instant::now();
    let opts = &plan.opts;
    let matcher = &plan.matcher;
    let walker = &plan.walker;
    let display_root = &plan.display_root;
    let single = &plan.single;
    let threads = opts.walk.threads.max(1);
    let halt = AtomicBool::new(false);
    let stop = || halt.load(Ordering::Relaxed) || cancel.is_stopped();
    let (job_tx, job_rx) = crossbeam_channel::bounded::<Job>(LOOKAHEAD);
    let (done_tx, done_rx) = crossbeam_channel::unbounded::<Done>();
    let deferred_out: Mutex<Vec<Deferred>> = Mutex::new(Vec::new());
    let walk_errors: Mutex<ErrorLog> = Mutex::new(ErrorLog::default());
    let mut summary = GrepSummary::default();

    std::thread::scope(|scope| {
        // Producer: walks in order and numbers the files.
        let producer_stop = &stop;
        let deferred_out = &deferred_out;
        let walk_errors = &walk_errors;
        scope.spawn(move || {
            let mut seq = 0u64;
            let mut errors = ErrorLog::default();
            let send = |path: &Path, group: Option<usize>, seq: &mut u64| -> bool {
                if producer_stop() {
                    return false;
                }
                let job = Job {
                    seq: *seq,
                    path: path.to_path_buf(),
                    group,
                };
                *seq += 1;
                job_tx.send(job).is_ok()
            };
            if let Some(file) = single {
                if walker.accepts_file(file) {
                    send(file, None, &mut seq);
                }
            } else if opts.sort == SortOrder::Path {
                let deferred = walker.walk_sorted(cancel, &mut errors, |p, g| send(p, g, &mut seq));
                *deferred_out.lock().unwrap_or_else(|p| p.into_inner()) = deferred.clone();
                for (i, d) in deferred.iter().enumerate() {
                    if !walker.walk_deferred_sorted(d, i, cancel, &mut errors, |p, g| {
                        send(p, g, &mut seq)
                    }) {
                        break;
                    }
                }
            } else {
                let mut files: Vec<(SystemTime, PathBuf)> = Vec::new();
                let deferred = walker.walk_sorted(cancel, &mut errors, |p, _| {
                    files.push((mtime_of(p), p.to_path_buf()));
                    !producer_stop()
                });
                *deferred_out.lock().unwrap_or_else(|p| p.into_inner()) = deferred.clone();
                files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
                let mut go = files.iter().all(|(_, p)| send(p, None, &mut seq));
                if go && !deferred.is_empty() {
                    let mut ignored: Vec<(SystemTime, PathBuf, usize)> = Vec::new();
                    for (i, d) in deferred.iter().enumerate() {
                        go = walker.walk_deferred_sorted(d, i, cancel, &mut errors, |p, g| {
                            ignored.push((mtime_of(p), p.to_path_buf(), g.unwrap_or(i)));
                            !producer_stop()
                        });
                        if !go {
                            break;
                        }
                    }
                    if go {
                        ignored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
                        for (_, p, g) in &ignored {
                            if !send(p, Some(*g), &mut seq) {
                                break;
                            }
                        }
                    }
                }
            }
            walk_errors
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .merge(errors);
            drop(job_tx);
        });

        // Searchers.
        for _ in 0..threads {
            let job_rx = job_rx.clone();
            let done_tx = done_tx.clone();
            let matcher = matcher.clone();
            let display_root = display_root.clone();
            let stop = &stop;
            scope.spawn(move || {
                let mut fs = FileSearcher {
                    opts,
                    matcher,
                    searcher: build_searcher(opts),
                    buf: Vec::with_capacity(64 << 10),
                    display_root,
                };
                for job in job_rx.iter() {
                    let outcome = if stop() {
                        FileOutcome::Skipped
                    } else {
                        fs.search(&job.path, job.group, stop)
                    };
                    let done = Done {
                        seq: job.seq,
                        group: job.group,
                        outcome,
                    };
                    if done_tx.send(done).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        drop(job_rx);

        // Collector: restores walk order, applies the limit, emits.
        let mut pending: BTreeMap<u64, Done> = BTreeMap::new();
        let mut next = 0u64;
        let mut batch: Vec<Hit> = Vec::new();
        let mut last_flush = Instant::now();
        let mut ignored_counts: BTreeMap<usize, IgnoredCount> = BTreeMap::new();
        let mut project_matches = 0u64;
        let mut last_group_done: Option<usize> = None;
        let mut consumer_gone = false;
        let limit = opts.max_count.unwrap_or(u64::MAX);
        let mut listed = 0u64; // matches (content) or files (other modes) emitted

        'outer: for done in done_rx.iter() {
            pending.insert(done.seq, done);
            while let Some(done) = pending.remove(&next) {
                next += 1;
                if halt.load(Ordering::Relaxed) {
                    continue;
                }
                match done.outcome {
                    FileOutcome::Skipped => continue,
                    FileOutcome::Binary => {
                        summary.files_searched += 1;
                        summary.binary_skipped += 1;
                    }
                    FileOutcome::Failed(msg) => summary.errors.push(msg),
                    FileOutcome::Searched(mut hits, full_count) => {
                        summary.files_searched += 1;
                        let count_only =
                            done.group.is_some() && opts.ignored_count_only && project_matches > 0;
                        let file_matches: u64 = if opts.mode == GrepMode::Content {
                            full_count.max(hits.len() as u64)
                        } else {
                            hits.iter().map(|h| h.count).sum()
                        };
                        if !hits.is_empty() {
                            if let Some(g) = done.group {
                                let e = ignored_counts.entry(g).or_default();
                                e.files += 1;
                                if count_only {
                                    e.matches += file_matches;
                                }
                            } else {
                                project_matches += file_matches;
                            }
                        }
                        if !count_only && !hits.is_empty() {
                            let room = limit - listed;
                            if hits.len() as u64 > room {
                                hits.truncate(room as usize);
                            }
                            let kept: u64 = hits.iter().map(|h| h.count).sum();
                            summary.matches += kept;
                            summary.files_with_matches += 1;
                            if let Some(g) = done.group {
                                ignored_counts.entry(g).or_default().matches += kept;
                            }
                            listed += hits.len() as u64;
                            batch.extend(hits);
                            if listed >= limit {
                                summary.limit_reached = true;
                                halt.store(true, Ordering::Relaxed);
                            }
                        } else if count_only && !hits.is_empty() {
                            summary.files_with_matches += 1;
                        }
                    }
                }
                if let Some(g) = done.group {
                    last_group_done = Some(g);
                }
                if batch.len() >= BATCH_SIZE || last_flush.elapsed() >= FLUSH_INTERVAL {
                    if !batch.is_empty() && !emit(std::mem::take(&mut batch)) {
                        consumer_gone = true;
                        halt.store(true, Ordering::Relaxed);
                        break 'outer;
                    }
                    last_flush = Instant::now();
                }
            }
        }
        if !consumer_gone && !batch.is_empty() && !emit(std::mem::take(&mut batch)) {
            consumer_gone = true;
        }
        // Drain so every worker can exit.
        for _ in done_rx.iter() {}

        let deferred = deferred_out
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let stopped_early = halt.load(Ordering::Relaxed) || cancel.is_stopped();
        for (i, d) in deferred.iter().enumerate() {
            let label = ignored_label(&display_root, d);
            if let Some(c) = ignored_counts.get(&i) {
                if c.matches > 0 || c.files > 0 {
                    summary.ignored.push(IgnoredCount {
                        path: label.clone(),
                        ..c.clone()
                    });
                }
            }
            let reached_and_finished = match last_group_done {
                Some(g) => i < g || (i == g && !stopped_early),
                None => false,
            };
            if stopped_early && !reached_and_finished {
                summary.ignored_unsearched.push(label);
            }
        }
        if consumer_gone {
            cancel.cancel();
        }
    });

    summary
        .errors
        .merge(walk_errors.into_inner().unwrap_or_else(|p| p.into_inner()));
    match cancel.reason() {
        Some(StopReason::Cancelled) => summary.cancelled = true,
        Some(StopReason::TimedOut) => summary.timed_out = true,
        None => {}
    }
    summary.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    summary
}
