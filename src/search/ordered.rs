//! The ordered pipeline, in three parts: a producer thread numbers the
//! source's files in output order, searcher threads work ahead by a bounded
//! window, and the [`Collector`] (on the calling thread) restores the order,
//! applies the limit and emits batches.

use super::cancel::CancelToken;
use super::file_search::{attach_structure, FileOutcome};
use super::grep::GrepPlan;
use super::grep_options::{GrepMode, GrepOptions};
use super::path_order::path_order;
use super::results::{GrepSummary, Hit, IgnoredCount};
use super::source::{mtime_of, FileSource};
use super::walk::{ErrorLog, IgnoredRoot};
use super::SortOrder;
use crate::structure::group::GROUPED_OUTPUT_LINES;
use crossbeam_channel::{Receiver, Sender};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// Batches are flushed at this size, or after `FLUSH_INTERVAL`.
const BATCH_SIZE: usize = 256;
const FLUSH_INTERVAL: Duration = Duration::from_millis(50);
/// How far the producer may run ahead of the collector, in files (task
/// batches, one file each at first). A search with a limit runs at most that
/// many ahead (at least 8): the collector learns that the limit is reached
/// only after the files before it are done, and whatever the searchers had
/// started past it is read to the end for nothing. `static`, limit 1: 1.75
/// -> 1.17 ms by scan, 1.95 -> 1.48 ms through the index.
const LOOKAHEAD: usize = 128;
const MIN_LOOKAHEAD: usize = 8;
/// Files go to the searchers in batches of up to this many, and come back
/// so: one channel hand-over (and, as often as not, one thread woken) per
/// file was a tenth of a full walk's time on two cores.
const MAX_TASK_BATCH: usize = 16;

/// Files or their results as they travel between the threads: the first
/// files of a search go one by one, and a one-file batch allocates nothing
/// (a `Vec` per file, freed on another thread, made `static`, limit 100, a
/// fifth slower).
enum Batch<T> {
    One(T),
    Many(Vec<T>),
}

impl<T> IntoIterator for Batch<T> {
    type Item = T;
    type IntoIter = std::iter::Chain<std::option::IntoIter<T>, std::vec::IntoIter<T>>;

    fn into_iter(self) -> Self::IntoIter {
        let (one, many) = match self {
            Batch::One(t) => (Some(t), Vec::new()),
            Batch::Many(v) => (None, v),
        };
        one.into_iter().chain(many)
    }
}

/// The batch size for file number `seq`: single files first, so a search
/// that ends in its first files is not held up filling a batch, then
/// growing to [`MAX_TASK_BATCH`].
fn batch_size(seq: u64) -> usize {
    ((seq / 1024) as usize).clamp(1, MAX_TASK_BATCH)
}

/// A file to search and where its hits go in the output.
struct FileTask {
    seq: u64,
    path: PathBuf,
    /// Index of the ignored root this file lies under, if any.
    ignored_root: Option<usize>,
}

/// What came of a [`FileTask`].
struct Searched {
    seq: u64,
    /// Kept to name where a limit cut the walk (see [`Collector::finish`]).
    path: PathBuf,
    ignored_root: Option<usize>,
    outcome: FileOutcome,
}

/// What the collector tells the other threads. They run ahead of it, so
/// they may see a change late (some work wasted), never early.
#[derive(Default)]
struct Progress {
    /// Limit reached or consumer gone: stop producing and searching.
    halt: AtomicBool,
    /// The project has a match: with `ignored_count_only`, ignored files
    /// are from now on only counted, so searchers need not outline them.
    project_matched: AtomicBool,
    /// Output lines (hits and context) listed so far: files that come after
    /// `GROUPED_OUTPUT_LINES` print flat, so searchers need not outline them.
    listed_lines: AtomicU64,
}

impl Progress {
    fn halted(&self, cancel: &CancelToken) -> bool {
        self.halt.load(Ordering::Relaxed) || cancel.is_stopped()
    }

    /// An ignored file found after the project matched is only counted.
    fn counted_only(&self, opts: &GrepOptions, ignored_root: Option<usize>) -> bool {
        ignored_root.is_some()
            && opts.ignored_count_only
            && self.project_matched.load(Ordering::Relaxed)
    }
}

/// Sends the source's files, numbered in output order: project files, then
/// ignored ones, each part in path order or newest first. Returns the
/// ignored roots and the walk's errors.
fn produce(
    source: &FileSource,
    sort: SortOrder,
    cancel: &CancelToken,
    progress: &Progress,
    tasks: Sender<Batch<FileTask>>,
) -> (Vec<IgnoredRoot>, ErrorLog) {
    let mut batches = Batches {
        tasks,
        pending: Vec::new(),
        seq: 0,
    };
    let found = produce_into(source, sort, cancel, progress, &mut batches);
    batches.flush();
    found
}

/// The producer's side of the task channel: files numbered in output order,
/// sent in batches (see [`batch_size`]).
struct Batches {
    tasks: Sender<Batch<FileTask>>,
    pending: Vec<FileTask>,
    seq: u64,
}

impl Batches {
    /// False once every searcher has gone.
    fn push(&mut self, path: &Path, ignored_root: Option<usize>) -> bool {
        self.pending.push(FileTask {
            seq: self.seq,
            path: path.to_path_buf(),
            ignored_root,
        });
        self.seq += 1;
        self.pending.len() < batch_size(self.seq) || self.flush()
    }

    fn flush(&mut self) -> bool {
        let batch = match self.pending.len() {
            0 => return true,
            // Popped: the pending list keeps its room for the next file.
            1 => Batch::One(self.pending.pop().expect("one pending file")),
            _ => Batch::Many(std::mem::take(&mut self.pending)),
        };
        self.tasks.send(batch).is_ok()
    }
}

fn produce_into(
    source: &FileSource,
    sort: SortOrder,
    cancel: &CancelToken,
    progress: &Progress,
    batches: &mut Batches,
) -> (Vec<IgnoredRoot>, ErrorLog) {
    let mut errors = ErrorLog::default();
    let mut send = |path: &Path, ignored_root: Option<usize>| -> bool {
        !progress.halted(cancel) && batches.push(path, ignored_root)
    };
    let stopped = || progress.halted(cancel);
    if sort == SortOrder::Path {
        let roots = source.project_files(cancel, &mut errors, |p| send(p, None));
        for i in 0..roots.len() {
            if stopped()
                || !source.ignored_files(&roots, i, cancel, &mut errors, |p| send(p, Some(i)))
            {
                break;
            }
        }
        return (roots, errors);
    }
    let mut files: Vec<Dated> = Vec::new();
    let roots = source.project_files(cancel, &mut errors, |p| {
        files.push((mtime_of(p), p.to_path_buf(), None));
        !stopped()
    });
    if !send_newest_first(files, &mut send) || roots.is_empty() {
        return (roots, errors);
    }
    // All ignored files newest first, whatever root they lie under.
    let mut ignored: Vec<Dated> = Vec::new();
    for i in 0..roots.len() {
        let listed = source.ignored_files(&roots, i, cancel, &mut errors, |p| {
            ignored.push((mtime_of(p), p.to_path_buf(), Some(i)));
            !stopped()
        });
        if !listed {
            return (roots, errors);
        }
    }
    send_newest_first(ignored, &mut send);
    (roots, errors)
}

/// A file with its modification time and ignored root, for `--sort mtime`.
type Dated = (SystemTime, PathBuf, Option<usize>);

/// Sends `files` newest first, ties by path (by [`path_order`]: a tree
/// unpacked from an archive ties every file); false when a send was
/// refused.
fn send_newest_first(
    mut files: Vec<Dated>,
    send: &mut impl FnMut(&Path, Option<usize>) -> bool,
) -> bool {
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| path_order(&a.1, &b.1)));
    files.iter().all(|(_, p, root)| send(p, *root))
}

/// One searcher thread: searches tasks until the producer is done.
fn search_files(
    plan: &GrepPlan,
    cancel: &CancelToken,
    progress: &Progress,
    tasks: Receiver<Batch<FileTask>>,
    results: Sender<Batch<Searched>>,
) {
    let opts = &plan.opts;
    let stop = || progress.halted(cancel);
    let mut searcher = plan.file_searcher();
    for batch in tasks.iter() {
        // The last file searched is held apart: a batch of one is sent
        // without allocating.
        let (mut done, mut last) = (Vec::new(), None);
        for task in batch {
            // Once halted the collector keeps nothing more: leaving (rather
            // than answering each queued file "skipped") ends the search
            // without passing the files queued ahead through it, and the
            // producer's next send fails once every searcher has gone.
            if stop() {
                return;
            }
            let shown = !progress.counted_only(opts, task.ignored_root)
                && progress.listed_lines.load(Ordering::Relaxed) < GROUPED_OUTPUT_LINES;
            let outcome = searcher.search(&task.path, task.ignored_root, shown, &stop);
            let searched = Searched {
                seq: task.seq,
                path: task.path,
                ignored_root: task.ignored_root,
                outcome,
            };
            done.extend(last.replace(searched));
        }
        let batch = match last {
            Some(searched) if done.is_empty() => Batch::One(searched),
            last => {
                done.extend(last);
                Batch::Many(done)
            }
        };
        if results.send(batch).is_err() {
            return;
        }
    }
}

/// Restores output order, applies the limit, tallies the summary and emits
/// batches.
struct Collector<'a, E> {
    opts: &'a GrepOptions,
    cancel: &'a CancelToken,
    progress: &'a Progress,
    emit: E,
    pending: BTreeMap<u64, Searched>,
    next: u64,
    batch: Vec<Hit>,
    last_flush: Instant,
    summary: GrepSummary,
    per_root: BTreeMap<usize, IgnoredCount>,
    /// The last ignored root a file was collected from.
    last_root_reached: Option<usize>,
    /// The file whose hits reached the limit.
    cut_at: Option<PathBuf>,
    consumer_gone: bool,
    /// Matches (content) or files (other modes) emitted.
    listed: u64,
}

impl<'a, E: FnMut(Vec<Hit>) -> bool> Collector<'a, E> {
    fn new(
        opts: &'a GrepOptions,
        cancel: &'a CancelToken,
        progress: &'a Progress,
        emit: E,
    ) -> Self {
        Collector {
            opts,
            cancel,
            progress,
            emit,
            pending: BTreeMap::new(),
            next: 0,
            batch: Vec::new(),
            last_flush: Instant::now(),
            summary: GrepSummary::default(),
            per_root: BTreeMap::new(),
            last_root_reached: None,
            cut_at: None,
            consumer_gone: false,
            listed: 0,
        }
    }

    /// Takes one searched file (in any order) and collects every file now
    /// next in output order. Returns false once the consumer has gone.
    fn accept(&mut self, searched: Searched) -> bool {
        self.pending.insert(searched.seq, searched);
        while let Some(searched) = self.pending.remove(&self.next) {
            self.next += 1;
            // After a limit, cancel or timeout, results already computed
            // ahead are dropped: the caller asked to stop, not to drain.
            if self.progress.halted(self.cancel) {
                continue;
            }
            self.collect(searched);
            if !self.flush(false) {
                return false;
            }
        }
        true
    }

    fn collect(&mut self, searched: Searched) {
        let root = searched.ignored_root;
        match searched.outcome {
            FileOutcome::Skipped => return,
            FileOutcome::Binary => {
                self.summary.files_searched += 1;
                self.summary.binary_skipped += 1;
            }
            FileOutcome::Failed(msg) => self.summary.errors.push(msg),
            FileOutcome::Searched {
                hits,
                full_count,
                outline,
                binary,
            } => {
                self.summary.files_searched += 1;
                // A named file may match past its NUL byte only.
                let mut shown = hits.is_empty();
                if !hits.is_empty() {
                    shown = self.collect_hits(root, hits, full_count, outline.as_deref());
                    if self.summary.limit_reached && self.cut_at.is_none() {
                        self.cut_at = Some(searched.path);
                    }
                }
                if let (Some(stop), true) = (binary, shown) {
                    self.summary.binary_stopped.push(stop);
                }
            }
        }
        if root.is_some() {
            self.last_root_reached = root;
        }
    }

    /// Returns whether any of the file's hits are listed.
    fn collect_hits(
        &mut self,
        root: Option<usize>,
        mut hits: Vec<Hit>,
        full_count: u64,
        outline: Option<&crate::structure::Outline>,
    ) -> bool {
        let opts = self.opts;
        let progress = self.progress;
        let count_only = progress.counted_only(opts, root);
        let file_matches: u64 = if opts.mode == GrepMode::Content {
            full_count.max(hits.iter().map(|h| h.count).sum())
        } else {
            hits.iter().map(|h| h.count).sum()
        };
        match root {
            Some(r) => {
                let e = self.per_root.entry(r).or_default();
                e.files += 1;
                if count_only {
                    e.matches += file_matches;
                }
            }
            None => progress.project_matched.store(true, Ordering::Relaxed),
        }
        self.summary.files_with_matches += 1;
        if count_only {
            return false;
        }
        let room = opts.limit.unwrap_or(u64::MAX) - self.listed;
        cut_to_room(&mut hits, room, opts);
        // After the cut: groups describe the hits shown.
        let lines_before = progress.listed_lines.load(Ordering::Relaxed);
        if let Some(outline) = outline {
            if lines_before < GROUPED_OUTPUT_LINES {
                attach_structure(outline, &mut hits);
            }
        }
        let lines: usize = hits
            .iter()
            .map(|h| 1 + h.before.len() + h.after.len())
            .sum();
        progress
            .listed_lines
            .store(lines_before + lines as u64, Ordering::Relaxed);
        let kept: u64 = hits.iter().map(|h| h.count).sum();
        self.summary.matches += kept;
        if let Some(r) = root {
            self.per_root.entry(r).or_default().matches += kept;
        }
        self.listed += hits.iter().map(|h| listed_units(h, opts)).sum::<u64>();
        let any = !hits.is_empty();
        self.batch.extend(hits);
        if self.listed >= opts.limit.unwrap_or(u64::MAX) {
            self.summary.limit_reached = true;
            progress.halt.store(true, Ordering::Relaxed);
        }
        any
    }

    /// Emits the batch when it is full or due (or, with `force`, whenever it
    /// holds anything). Returns false once the consumer has gone.
    fn flush(&mut self, force: bool) -> bool {
        if self.consumer_gone {
            return false;
        }
        let due = self.batch.len() >= BATCH_SIZE || self.last_flush.elapsed() >= FLUSH_INTERVAL;
        if !(force || due) {
            return true;
        }
        if !self.batch.is_empty() && !(self.emit)(std::mem::take(&mut self.batch)) {
            self.consumer_gone = true;
            self.progress.halt.store(true, Ordering::Relaxed);
            return false;
        }
        self.last_flush = Instant::now();
        true
    }

    /// Whether the walk can only have met `root` while running ahead of the
    /// searchers, past the file whose hits reached the limit. How far ahead
    /// it ran is a matter of timing, so such roots are left out of the
    /// unsearched list: the same search then always names the same roots,
    /// and a search answered from the index's file list names the ones the
    /// scan does. Always named: roots before the cut in path order, those in
    /// a directory above the cut (the walk sets a directory's ignored
    /// entries aside when it lists it), and all of them once the project
    /// walk had finished (the cut fell in an ignored root).
    fn met_after_cut(&self, root: &IgnoredRoot) -> bool {
        match (&self.cut_at, self.last_root_reached, self.opts.sort) {
            (Some(cut), None, SortOrder::Path) => {
                root.path.as_path() > cut.as_path()
                    && !root.path.parent().is_some_and(|dir| cut.starts_with(dir))
            }
            _ => false,
        }
    }

    /// The summary, once every file has been collected: per ignored root,
    /// its counts and whether the search stopped before finishing it.
    fn finish(mut self, roots: &[IgnoredRoot], display_root: &Path) -> GrepSummary {
        let stopped_early = self.progress.halted(self.cancel);
        self.flush(true);
        // Labelled only when listed: a search over the index's table is
        // handed every ignored root of the tree (388 on the Linux tree),
        // and one that stops early lists few.
        for (i, root) in roots.iter().enumerate() {
            if let Some(c) = self.per_root.get(&i) {
                if c.matches > 0 || c.files > 0 {
                    self.summary.ignored.push(IgnoredCount {
                        path: root.label(display_root),
                        ..c.clone()
                    });
                }
            }
            let finished = match self.last_root_reached {
                Some(r) => i < r || (i == r && !stopped_early),
                None => false,
            };
            if stopped_early && !finished && !self.met_after_cut(root) {
                self.summary
                    .ignored_unsearched
                    .push(root.label(display_root));
            }
        }
        if self.consumer_gone {
            self.cancel.cancel();
        }
        self.summary
    }
}

pub(super) fn run(
    plan: &GrepPlan,
    cancel: &CancelToken,
    emit: impl FnMut(Vec<Hit>) -> bool,
) -> GrepSummary {
    let started = Instant::now();
    let progress = Progress::default();
    let lookahead =
        (plan.opts.limit).map_or(LOOKAHEAD, |m| (m as usize).clamp(MIN_LOOKAHEAD, LOOKAHEAD));
    let (task_tx, task_rx) = crossbeam_channel::bounded::<Batch<FileTask>>(lookahead);
    let (result_tx, result_rx) = crossbeam_channel::unbounded::<Batch<Searched>>();
    let mut collector = Collector::new(&plan.opts, cancel, &progress, emit);
    let (roots, walk_errors) = std::thread::scope(|scope| {
        let progress = &progress;
        let producer =
            scope.spawn(move || produce(&plan.source, plan.opts.sort, cancel, progress, task_tx));
        for _ in 0..plan.opts.walk.threads.max(1) {
            let (tasks, results) = (task_rx.clone(), result_tx.clone());
            scope.spawn(move || search_files(plan, cancel, progress, tasks, results));
        }
        drop((task_rx, result_tx));
        'collect: for batch in result_rx.iter() {
            for searched in batch {
                if !collector.accept(searched) {
                    break 'collect;
                }
            }
        }
        // Drain so every searcher can exit, and with them the producer.
        for _ in result_rx.iter() {}
        producer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    let mut summary = collector.finish(&roots, &plan.display_root);
    summary.close(walk_errors, cancel, started);
    summary
}

/// What one hit takes of the limit: a counted matching line in content
/// mode (a line shown in the trailing after-context takes nothing), a file
/// in the files and count modes.
fn listed_units(hit: &Hit, opts: &GrepOptions) -> u64 {
    if opts.mode == GrepMode::Content {
        hit.count
    } else {
        1
    }
}

/// Cuts one file's hits to the `room` left under the limit. In content
/// mode the last hit kept keeps its after-context window as `rg -m N -A M`
/// prints it: the `after` lines that follow it, matching ones shown as
/// matches that are not counted (`count` 0), and nothing past the window;
/// a multi-line match keeps all its lines.
fn cut_to_room(hits: &mut Vec<Hit>, room: u64, opts: &GrepOptions) {
    if opts.mode != GrepMode::Content {
        hits.truncate(room.min(hits.len() as u64) as usize);
        return;
    }
    if room == 0 {
        hits.clear();
        return;
    }
    let mut counted = 0;
    let Some(last) = hits.iter().position(|h| {
        counted += h.count;
        h.count > 0 && counted == room
    }) else {
        return;
    };
    // A multi-line match's other lines (`count` 0, the lines right after
    // its first) are part of it; its window starts after its last line.
    let mut last_line = hits[last].line;
    let mut keep = last + 1;
    while opts.multiline
        && keep < hits.len()
        && hits[keep].count == 0
        && hits[keep].line == last_line + 1
    {
        last_line += 1;
        keep += 1;
    }
    let end = last_line + opts.after as u64;
    while keep < hits.len() && hits[keep].line <= end {
        let h = &mut hits[keep];
        h.count = 0;
        h.after.retain(|c| c.line <= end);
        keep += 1;
    }
    hits.truncate(keep);
}
