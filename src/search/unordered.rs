//! The unordered pipeline, for whole-tree file and count listings with no
//! limit: the source's threads search as they walk (as ripgrep does), and
//! the per-file results are sorted once at the end. Output order
//! is the same as the ordered pipeline's; only the files with a match are
//! held in memory.

use super::cancel::CancelToken;
use super::file_search::FileOutcome;
use super::grep::GrepPlan;
use super::path_order::path_order;
use super::results::{GrepSummary, Hit, IgnoredCount};
use super::source::mtime_of;
use super::walk::ErrorLog;
use super::SortOrder;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime};

struct Found {
    path: PathBuf,
    ignored_root: Option<usize>,
    hit: Hit,
}

#[derive(Default)]
struct Tally {
    found: Vec<Found>,
    files_searched: u64,
    binary_skipped: u64,
    errors: ErrorLog,
}

impl Tally {
    fn record(&mut self, path: &Path, ignored_root: Option<usize>, outcome: FileOutcome) {
        match outcome {
            FileOutcome::Searched { hits, .. } => {
                self.files_searched += 1;
                for hit in hits {
                    self.found.push(Found {
                        path: path.to_path_buf(),
                        ignored_root,
                        hit,
                    });
                }
            }
            FileOutcome::Binary => {
                self.files_searched += 1;
                self.binary_skipped += 1;
            }
            FileOutcome::Failed(msg) => self.errors.push(msg),
            FileOutcome::Skipped => {}
        }
    }

    fn merge(&mut self, other: Tally) {
        self.found.extend(other.found);
        self.files_searched += other.files_searched;
        self.binary_skipped += other.binary_skipped;
        self.errors.merge(other.errors);
    }
}

/// One walking thread's share of the tally, added to the whole once, when
/// the thread's visitor is dropped, rather than through a lock all the
/// walking threads took once per file.
struct ThreadTally<'a> {
    mine: Tally,
    whole: &'a Mutex<Tally>,
}

impl Drop for ThreadTally<'_> {
    fn drop(&mut self) {
        let mine = std::mem::take(&mut self.mine);
        (self.whole.lock().unwrap_or_else(|p| p.into_inner())).merge(mine);
    }
}

pub(super) fn run(
    plan: &GrepPlan,
    cancel: &CancelToken,
    mut emit: impl FnMut(Vec<Hit>) -> bool,
) -> GrepSummary {
    let started = Instant::now();
    let tally = Mutex::new(Tally::default());
    let walk_errors = Mutex::new(ErrorLog::default());
    let stop = || cancel.is_stopped();
    let roots = plan
        .source
        .visit_parallel(plan.opts.walk.threads, cancel, &walk_errors, || {
            let mut searcher = plan.file_searcher();
            let mut share = ThreadTally {
                mine: Tally::default(),
                whole: &tally,
            };
            let stop = &stop;
            move |path: &Path, ignored_root: Option<usize>| {
                // File and count listings: no structure to show.
                let outcome = searcher.search(path, ignored_root, false, stop);
                share.mine.record(path, ignored_root, outcome);
            }
        });

    let mut tally = tally.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut summary = GrepSummary::default();
    // Paths by `path_order`: `sort_by_key` cloned both paths for every
    // comparison, and `Path::cmp` parses them into components.
    match plan.opts.sort {
        SortOrder::Path => {
            let class = |f: &Found| f.ignored_root.map_or(0, |g| g + 1);
            (tally.found).sort_by(|a, b| {
                (class(a).cmp(&class(b))).then_with(|| path_order(&a.path, &b.path))
            });
        }
        SortOrder::Mtime => {
            let mut keyed: Vec<(usize, std::cmp::Reverse<SystemTime>, Found)> = tally
                .found
                .drain(..)
                .map(|f| {
                    let newest = std::cmp::Reverse(mtime_of(&f.path));
                    (f.ignored_root.map_or(0, |_| 1), newest, f)
                })
                .collect();
            keyed.sort_by(|a, b| {
                ((a.0, a.1).cmp(&(b.0, b.1))).then_with(|| path_order(&a.2.path, &b.2.path))
            });
            tally.found = keyed.into_iter().map(|k| k.2).collect();
        }
    }
    let mut per_root: Vec<IgnoredCount> = roots
        .iter()
        .map(|d| IgnoredCount {
            path: d.label(&plan.display_root),
            ..Default::default()
        })
        .collect();
    let project_has_matches = tally.found.iter().any(|f| f.ignored_root.is_none());
    let count_only = plan.opts.ignored_count_only && project_has_matches;
    let mut batch = Vec::new();
    let mut consumer_gone = false;
    for f in tally.found {
        if let (Some(r), true) = (f.ignored_root, count_only) {
            per_root[r].matches += f.hit.count;
            per_root[r].files += 1;
            summary.files_with_matches += 1;
            continue;
        }
        summary.matches += f.hit.count;
        summary.files_with_matches += 1;
        if let Some(r) = f.ignored_root {
            per_root[r].matches += f.hit.count;
            per_root[r].files += 1;
        }
        if !consumer_gone {
            batch.push(f.hit);
            if batch.len() >= 256 && !emit(std::mem::take(&mut batch)) {
                consumer_gone = true;
            }
        }
    }
    if !consumer_gone && !batch.is_empty() && !emit(batch) {
        consumer_gone = true;
    }
    if consumer_gone {
        cancel.cancel();
    }
    summary.files_searched = tally.files_searched;
    summary.binary_skipped = tally.binary_skipped;
    summary.errors = tally.errors;
    summary.ignored = per_root.into_iter().filter(|c| c.files > 0).collect();
    if cancel.is_stopped() {
        summary.ignored_unsearched = roots.iter().map(|d| d.label(&plan.display_root)).collect();
    }
    let walk_errors = walk_errors.into_inner().unwrap_or_else(|p| p.into_inner());
    summary.close(walk_errors, cancel, started);
    summary
}
