//! `grep()`: validates synchronously, then searches on a dedicated thread
//! (never libuv's pool, so `fs` calls in the same process are not starved)
//! and hands out batches that JS pulls with `nextBatch()`. A consumer that
//! stops pulling applies back-pressure; one that drops the handle or calls
//! `cancel()` stops the walk.

use super::convert::{cwd_of, GrepOptions};
use super::error::{coded_error, to_js};
use super::signal::{check_not_aborted, subscribe};
use crate::index::{source_for, IndexMode};
use crate::search::{
    CancelToken, ContextLine as CoreLine, ErrorCode, FileStructure, GrepPlan,
    GrepSummary as CoreSummary, Hit, HitSymbol,
};
use napi::bindgen_prelude::*;
use napi::tokio::sync::{mpsc, Mutex as AsyncMutex};
use napi_derive::napi;
use std::sync::{Arc, Mutex};

#[napi(object)]
pub struct ContextLine {
    pub line: u32,
    pub text: String,
    /// Characters cut before the shown text (long lines are windowed).
    pub cut_before: u32,
    /// Characters cut after the shown text.
    pub cut_after: u32,
}

/// One matching line (`content` mode) or one file (`files`/`count` modes, where `line` is 0).
#[napi(object)]
pub struct GrepHit {
    /// Path relative to the search root, `/`-separated. Non-UTF-8 names are
    /// shown lossily with a `#b=<hex>` suffix.
    pub path: String,
    /// Hex of the raw relative path bytes, only for non-UTF-8 names.
    pub path_bytes: Option<String>,
    /// Whether ignore rules would have excluded this file.
    pub ignored: bool,
    pub line: u32,
    /// 1-based byte column of the first match on the line.
    pub column: u32,
    /// Line text, lossy UTF-8, line terminator and CR removed, windowed to `maxLineLength`.
    pub text: String,
    pub cut_before: u32,
    pub cut_after: u32,
    /// Context lines before this match not already shown with an earlier match.
    pub context_before: Vec<ContextLine>,
    /// Context lines after this match not shown with a later match.
    pub context_after: Vec<ContextLine>,
    /// Matching lines this entry stands for: 1 in content mode, 0 for a
    /// matching line shown in the after-context of the last match `maxCount`
    /// counted (as `rg -m N -A M` shows it), and for the lines after the
    /// first of a multi-line match (it counts once, as in rg).
    pub count: i64,
    /// With `group`, in a grouped file: the symbol this hit is shown under,
    /// normally the innermost one enclosing the line (in a file with 12 to
    /// 23 hits, possibly its top-level ancestor, to keep the groups few).
    /// Absent at file scope and in files that are not grouped.
    pub symbol: Option<GrepSymbol>,
    /// With `group`: present on the first hit of each grouped file, and only
    /// there. A file whose first hit lacks it is not grouped (print it flat).
    pub file_structure: Option<GrepFileStructure>,
}

/// A symbol as grep grouping shows it.
#[napi(object)]
pub struct GrepSymbol {
    #[napi(
        ts_type = "'function' | 'method' | 'class' | 'struct' | 'enum' | 'interface' | 'trait' | 'impl' | 'module' | 'namespace' | 'type' | 'constant' | 'macro' | 'section'"
    )]
    pub kind: String,
    pub name: String,
    /// 1-based, inclusive.
    pub start_line: u32,
    /// 1-based, inclusive.
    pub end_line: u32,
}

/// A grouped file's structure, as its header and `other:` hint show it.
#[napi(object)]
pub struct GrepFileStructure {
    #[napi(
        ts_type = "'rust' | 'typescript' | 'tsx' | 'javascript' | 'python' | 'go' | 'java' | 'c' | 'cpp' | 'ruby' | 'markdown'"
    )]
    pub language: String,
    /// Lines in the file.
    pub total_lines: u32,
    /// Symbols in the file, at every depth.
    pub total_symbols: u32,
    /// Top-level symbols holding none of the file's shown hits, in source
    /// order: at most 4 (2 in a file with 12 or more hits).
    pub others: Vec<GrepSymbol>,
    /// Further top-level symbols without hits, not listed in `others`.
    pub others_omitted: u32,
}

#[napi(object)]
pub struct IgnoredCount {
    /// Ignored root, e.g. `node_modules/`.
    pub path: String,
    pub matches: i64,
    pub files: i64,
}

/// A file holding a NUL byte that matched: its hits are those before the
/// NUL. A file found by the walk was not searched past the 64 KiB block
/// holding it (rg's "stopped searching binary file after match"); a file
/// named alone was, but a match past the NUL only puts it here (rg's
/// "binary file matches").
#[napi(object)]
pub struct BinaryStop {
    pub path: String,
    /// Hex of the raw path bytes, when they are not UTF-8 (as on hits).
    pub path_bytes: Option<String>,
    /// Byte offset of the first NUL byte the search met.
    pub offset: i64,
    pub ignored: bool,
}

#[napi(object)]
pub struct GrepSummary {
    pub matches: i64,
    pub files_with_matches: i64,
    pub files_searched: i64,
    /// `maxCount` was reached; more matches may exist.
    pub limit_reached: bool,
    pub timed_out: bool,
    pub cancelled: bool,
    /// Files dropped at a NUL byte before any match was shown (in count
    /// mode, whatever they matched: rg -c drops them too).
    pub binary_skipped: i64,
    /// Content mode: files whose hits stop at a NUL byte, in output order.
    pub binary_stopped: Vec<BinaryStop>,
    /// Unreadable files and directories; the search went on.
    pub error_count: i64,
    /// The first few error messages.
    pub errors: Vec<String>,
    /// Matches in ignored files per ignored root, as far as they were searched.
    pub ignored: Vec<IgnoredCount>,
    /// Ignored roots the search stopped before finishing (or never reached).
    pub ignored_unsearched: Vec<String>,
    pub elapsed_ms: f64,
    /// How the live index served this search: `used` (only its candidates
    /// were read), `scan` (ready, but it could not narrow this search),
    /// `building`, `stale` (being rebuilt after the watcher lost events),
    /// `off` (no index for this directory, or `index: false`).
    #[napi(ts_type = "'used' | 'scan' | 'building' | 'stale' | 'off'")]
    pub index: String,
    /// Set on one search only (the first once the index is ready): the
    /// directory's index could not be saved in the store (folder not
    /// writable, disk full), so it lives in this process's memory.
    pub index_notice: Option<String>,
}

fn line_out(l: CoreLine) -> ContextLine {
    ContextLine {
        line: l.line as u32,
        text: l.text,
        cut_before: l.cut_before as u32,
        cut_after: l.cut_after as u32,
    }
}

fn symbol_out(s: HitSymbol) -> GrepSymbol {
    GrepSymbol {
        kind: s.kind.as_str().to_string(),
        name: s.name,
        start_line: s.start_line,
        end_line: s.end_line,
    }
}

fn structure_out(s: FileStructure) -> GrepFileStructure {
    GrepFileStructure {
        language: s.language.name().to_string(),
        total_lines: s.total_lines,
        total_symbols: s.total_symbols as u32,
        others: s.others.into_iter().map(symbol_out).collect(),
        others_omitted: s.others_omitted as u32,
    }
}

fn hit_out(h: Hit) -> GrepHit {
    GrepHit {
        path: h.path.text.clone(),
        path_bytes: h.path.raw_hex.clone(),
        ignored: h.ignored,
        line: h.line as u32,
        column: h.column as u32,
        text: h.text,
        cut_before: h.cut_before as u32,
        cut_after: h.cut_after as u32,
        context_before: h.before.into_iter().map(line_out).collect(),
        context_after: h.after.into_iter().map(line_out).collect(),
        count: h.count as i64,
        symbol: h.symbol.map(symbol_out),
        file_structure: h.structure.map(|s| structure_out(*s)),
    }
}

fn summary_out(
    s: CoreSummary,
    index: crate::index::IndexUse,
    index_notice: Option<String>,
) -> GrepSummary {
    GrepSummary {
        matches: s.matches as i64,
        files_with_matches: s.files_with_matches as i64,
        files_searched: s.files_searched as i64,
        limit_reached: s.limit_reached,
        timed_out: s.timed_out,
        cancelled: s.cancelled,
        binary_skipped: s.binary_skipped as i64,
        binary_stopped: s
            .binary_stopped
            .into_iter()
            .map(|b| BinaryStop {
                path: b.path.text.clone(),
                path_bytes: b.path.raw_hex.clone(),
                offset: b.offset as i64,
                ignored: b.ignored,
            })
            .collect(),
        error_count: s.errors.count as i64,
        errors: s.errors.first,
        ignored: s
            .ignored
            .into_iter()
            .map(|c| IgnoredCount {
                path: c.path,
                matches: c.matches as i64,
                files: c.files as i64,
            })
            .collect(),
        ignored_unsearched: s.ignored_unsearched,
        elapsed_ms: s.elapsed_ms,
        index: index.as_str().to_string(),
        index_notice,
    }
}

/// A running search. Pull batches with `nextBatch()` until it resolves
/// `null`, then read `summary()`.
#[napi]
pub struct GrepSearch {
    rx: Arc<AsyncMutex<mpsc::Receiver<Vec<Hit>>>>,
    summary: Arc<Mutex<Option<CoreSummary>>>,
    cancel: CancelToken,
    index: crate::index::IndexUse,
    index_notice: Option<String>,
}

#[napi]
impl GrepSearch {
    /// The next batch of results in output order, or `null` when the search is over.
    #[napi(ts_return_type = "Promise<GrepHit[] | null>")]
    pub async fn next_batch(&self) -> Option<Vec<GrepHit>> {
        let batch = self.rx.lock().await.recv().await?;
        Some(batch.into_iter().map(hit_out).collect())
    }

    /// Totals; `null` until `nextBatch()` has resolved `null`.
    #[napi]
    pub fn summary(&self) -> Option<GrepSummary> {
        let s = self
            .summary
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        s.map(|s| summary_out(s, self.index, self.index_notice.clone()))
    }

    /// Stops the search; results already produced stay available.
    #[napi]
    pub fn cancel(&self) {
        self.cancel.cancel();
    }
}

/// Starts a content search. Throws at once on bad input: empty or invalid
/// pattern (with the regex engine's explanation), `Path not found: <path>`,
/// unknown type, bad glob, or an already aborted `signal`.
#[napi(catch_unwind)]
pub fn grep(env: Env, options: GrepOptions) -> Result<GrepSearch> {
    crate::fault::panic_if_injected("grep-call");
    let core = options.to_core().map_err(|e| to_js(&env, e))?;
    let cwd = cwd_of(&options.cwd).map_err(|e| to_js(&env, e))?;
    let cancel = CancelToken::new(core.timeout);
    check_not_aborted(&env, options.signal.as_ref())?;
    let mode = IndexMode::for_grep(options.index);
    let plan = GrepPlan::new(&cwd, options.path.as_deref(), core).map_err(|e| to_js(&env, e))?;
    let (plan, index) = plan.serve(|own, narrowing| source_for(own, narrowing, mode));
    let index_notice = crate::index::take_notice(&cwd, options.path.as_deref());
    // Dropped when the search thread ends, which removes the listener.
    let subscription = subscribe(&env, options.signal.as_ref(), &cancel)?;
    let (tx, rx) = mpsc::channel::<Vec<Hit>>(4);
    let summary = Arc::new(Mutex::new(None));
    let summary_slot = summary.clone();
    let token = cancel.clone();
    std::thread::Builder::new()
        .name("pi-utils-grep".into())
        .spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                plan.run(&token, |batch| tx.blocking_send(batch).is_ok())
            }));
            // Before the end is seen: a search through the index holds the
            // table until its plan goes, and a change applied by the next
            // search would otherwise copy the whole table to write it.
            drop(plan);
            let summary = result.unwrap_or_else(|_| {
                let mut s = CoreSummary::default();
                s.errors.push("internal error: the search panicked".into());
                s.cancelled = true;
                s
            });
            *summary_slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(summary);
            drop(subscription);
            drop(tx);
        })
        .map_err(|e| {
            coded_error(
                &env,
                ErrorCode::Internal,
                format!("cannot start search thread: {e}"),
            )
        })?;
    Ok(GrepSearch {
        rx: Arc::new(AsyncMutex::new(rx)),
        summary,
        cancel,
        index,
        index_notice,
    })
}
