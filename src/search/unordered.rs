//! The unordered pipeline, for whole-tree file and count listings with no
//! limit: the parallel walker's threads search as they walk (as ripgrep
//! does), and the per-file results are sorted once at the end. Output order
//! is the same as the ordered pipeline's; only the files with a match are
//! held in memory.

use super::cancel::CancelToken;
use super::file_search::{FileOutcome, FileSearcher};
use super::grep::{GrepPlan, GrepSummary, Hit, IgnoredCount};
use super::ordered::mtime_of;
use super::walk::{Deferred, ErrorLog, Walker};
use super::SortOrder;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Instant, SystemTime};

struct Found {
    path: PathBuf,
    group: Option<usize>,
    hit: Hit,
}

#[derive(Default)]
struct Tally {
    found: Vec<Found>,
    files_searched: u64,
    binary_skipped: u64,
    errors: ErrorLog,
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
    // Filled once the project walk has set the ignored roots aside.
    let roots: OnceLock<Vec<Deferred>> = OnceLock::new();
    // Searches one file and records what came of it; `group` is the ignored
    // root it lies under. Shared by the walker threads and the single-file case.
    let search_one = |searcher: &mut FileSearcher, path: &Path, group: Option<usize>| {
        // File and count listings: no structure to show.
        let outcome = searcher.search(path, group, false, &stop);
        let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
        match outcome {
            FileOutcome::Searched { hits, .. } => {
                t.files_searched += 1;
                for hit in hits {
                    t.found.push(Found {
                        path: path.to_path_buf(),
                        group,
                        hit,
                    });
                }
            }
            FileOutcome::Binary => {
                t.files_searched += 1;
                t.binary_skipped += 1;
            }
            FileOutcome::Failed(msg) => t.errors.push(msg),
            FileOutcome::Skipped => {}
        }
    };
    let new_searcher =
        || FileSearcher::new(&plan.opts, plan.matcher.clone(), plan.display_root.clone());
    // `ignored`: the walk is over the ignored roots, so each entry's group is
    // found from its path.
    let visitor_for = |ignored: bool| {
        let roots = &roots;
        let search_one = &search_one;
        let mut searcher = new_searcher();
        move |e: &ignore::DirEntry| {
            if e.file_type().is_some_and(|t| t.is_file()) {
                let group = if ignored {
                    roots.get().and_then(|d| Walker::group_of(d, e.path()))
                } else {
                    None
                };
                search_one(&mut searcher, e.path(), group);
            }
            true
        }
    };
    let deferred = match &plan.single {
        Some(file) => {
            if plan.walker.accepts_file(file) {
                search_one(&mut new_searcher(), file, None);
            }
            Vec::new()
        }
        None => plan
            .walker
            .walk_parallel(&[], cancel, &walk_errors, || visitor_for(false)),
    };
    // Every ignored root in one parallel walk; each entry's group is the
    // root it lies under.
    let deferred: &[Deferred] = roots.get_or_init(|| deferred);
    if !deferred.is_empty() && !cancel.is_stopped() {
        plan.walker
            .walk_parallel(deferred, cancel, &walk_errors, || visitor_for(true));
    }

    let mut tally = tally.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut summary = GrepSummary::default();
    let key = |f: &Found| (f.group.map_or(0, |g| g + 1), f.path.clone());
    match plan.opts.sort {
        SortOrder::Path => tally.found.sort_by_key(key),
        SortOrder::Mtime => {
            let mut keyed: Vec<(usize, std::cmp::Reverse<SystemTime>, PathBuf, Found)> = tally
                .found
                .drain(..)
                .map(|f| {
                    (
                        f.group.map_or(0, |_| 1),
                        std::cmp::Reverse(mtime_of(&f.path)),
                        f.path.clone(),
                        f,
                    )
                })
                .collect();
            keyed.sort_by(|a, b| (a.0, a.1, &a.2).cmp(&(b.0, b.1, &b.2)));
            tally.found = keyed.into_iter().map(|k| k.3).collect();
        }
    }
    let mut per_group: Vec<IgnoredCount> = deferred
        .iter()
        .map(|d| IgnoredCount {
            path: d.label(&plan.display_root),
            ..Default::default()
        })
        .collect();
    let project_has_matches = tally.found.iter().any(|f| f.group.is_none());
    let count_only = plan.opts.ignored_count_only && project_has_matches;
    let mut batch = Vec::new();
    let mut consumer_gone = false;
    for f in tally.found {
        if let (Some(g), true) = (f.group, count_only) {
            per_group[g].matches += f.hit.count;
            per_group[g].files += 1;
            summary.files_with_matches += 1;
            continue;
        }
        summary.matches += f.hit.count;
        summary.files_with_matches += 1;
        if let Some(g) = f.group {
            per_group[g].matches += f.hit.count;
            per_group[g].files += 1;
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
    summary
        .errors
        .merge(walk_errors.into_inner().unwrap_or_else(|p| p.into_inner()));
    summary.ignored = per_group.into_iter().filter(|g| g.files > 0).collect();
    if cancel.is_stopped() {
        summary.ignored_unsearched = deferred
            .iter()
            .map(|d| d.label(&plan.display_root))
            .collect();
    }
    (summary.cancelled, summary.timed_out) = cancel.flags();
    summary.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    summary
}
