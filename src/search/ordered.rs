//! The ordered pipeline: one walker thread numbers files in output order,
//! searcher threads work ahead by a bounded window, and the collector (the
//! calling thread) restores the order, applies the limit and emits.

use super::cancel::CancelToken;
use super::file_search::{attach_structure, FileOutcome, FileSearcher};
use super::grep::{GrepMode, GrepPlan, GrepSummary, Hit, IgnoredCount};
use super::walk::{Deferred, ErrorLog};
use super::SortOrder;
use crate::structure::group::GROUPED_OUTPUT_LINES;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// Batches are flushed at this size, or after `FLUSH_INTERVAL`.
const BATCH_SIZE: usize = 256;
const FLUSH_INTERVAL: Duration = Duration::from_millis(50);
/// How far the walker may run ahead of the collector, in files.
const LOOKAHEAD: usize = 128;

/// A file to search and where its hits go in the output.
struct Job {
    seq: u64,
    path: PathBuf,
    /// Index of the ignored root this file lies under, if any.
    group: Option<usize>,
}

struct Done {
    seq: u64,
    group: Option<usize>,
    outcome: FileOutcome,
}

pub(super) fn mtime_of(path: &Path) -> SystemTime {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

pub(super) fn run(
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
    // Set by the collector once the project has a match: from then on, with
    // `ignored_count_only`, ignored files are only counted (the collector
    // reads it for that), so searchers need not outline them. Searchers run ahead of the collector, so they
    // may see it late (an outline wasted), never early.
    let project_matched = AtomicBool::new(false);
    // Output lines (hits and context) the collector has listed so far; the
    // same reasoning lets searchers skip outlining files that will come
    // after `GROUPED_OUTPUT_LINES` and so print flat.
    let listed_lines = AtomicU64::new(0);
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
                    if producer_stop() {
                        break;
                    }
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
            let project_matched = &project_matched;
            let listed_lines = &listed_lines;
            scope.spawn(move || {
                let mut fs = FileSearcher::new(opts, matcher, display_root);
                for job in job_rx.iter() {
                    let outcome = if stop() {
                        FileOutcome::Skipped
                    } else {
                        let counted_only = job.group.is_some()
                            && opts.ignored_count_only
                            && project_matched.load(Ordering::Relaxed);
                        let shown = !counted_only
                            && listed_lines.load(Ordering::Relaxed) < GROUPED_OUTPUT_LINES;
                        fs.search(&job.path, job.group, shown, stop)
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
        let mut last_group_done: Option<usize> = None;
        let mut consumer_gone = false;
        let limit = opts.max_count.unwrap_or(u64::MAX);
        let mut listed = 0u64; // matches (content) or files (other modes) emitted

        'outer: for done in done_rx.iter() {
            pending.insert(done.seq, done);
            while let Some(done) = pending.remove(&next) {
                next += 1;
                // After a limit, cancel or timeout, results already computed
                // ahead are dropped: the caller asked to stop, not to drain.
                if halt.load(Ordering::Relaxed) || cancel.is_stopped() {
                    continue;
                }
                match done.outcome {
                    FileOutcome::Skipped => continue,
                    FileOutcome::Binary => {
                        summary.files_searched += 1;
                        summary.binary_skipped += 1;
                    }
                    FileOutcome::Failed(msg) => summary.errors.push(msg),
                    FileOutcome::Searched {
                        mut hits,
                        full_count,
                        outline,
                    } => {
                        summary.files_searched += 1;
                        let count_only = done.group.is_some()
                            && opts.ignored_count_only
                            && project_matched.load(Ordering::Relaxed);
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
                                project_matched.store(true, Ordering::Relaxed);
                            }
                        }
                        if !count_only && !hits.is_empty() {
                            let room = limit - listed;
                            if hits.len() as u64 > room {
                                hits.truncate(room as usize);
                            }
                            // After the cut: groups describe the hits shown.
                            let lines_before = listed_lines.load(Ordering::Relaxed);
                            if let Some(outline) = &outline {
                                if lines_before < GROUPED_OUTPUT_LINES {
                                    attach_structure(outline, &mut hits);
                                }
                            }
                            let lines: usize = hits
                                .iter()
                                .map(|h| 1 + h.before.len() + h.after.len())
                                .sum();
                            listed_lines.store(lines_before + lines as u64, Ordering::Relaxed);
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
            let label = d.label(display_root);
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
    (summary.cancelled, summary.timed_out) = cancel.flags();
    summary.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    summary
}
