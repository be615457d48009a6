//! `grep()`: its JS options and their conversion to the core's (the doc
//! comments become the `index.d.ts` contract), its hit and summary shapes.
//! It validates synchronously, then searches on a dedicated thread
//! (never libuv's pool, so `fs` calls in the same process are not starved)
//! and hands out batches that JS pulls with `nextBatch()`. A consumer that
//! stops pulling applies back-pressure; one that drops the handle or calls
//! `cancel()` stops the walk.

use super::convert::{cwd_of, parse_choice, sort_order, timeout_of, walk_options};
use super::error::{coded_error, to_js};
use super::signal::{check_not_aborted, subscribe};
use crate::index::{source_for, IndexMode};
use crate::search::{
    CancelToken, CodedError, ContextLine as CoreLine, ErrorCode, FileStructure, GrepMode,
    GrepOptions as CoreOptions, GrepPlan, GrepSummary as CoreSummary, Hit, HitSymbol,
};
use napi::bindgen_prelude::*;
use napi::tokio::sync::{mpsc, Mutex as AsyncMutex};
use napi_derive::napi;
use std::sync::{Arc, Mutex};

/// Options for `grep`.
#[napi(object, object_to_js = false)]
pub struct GrepOptions<'a> {
    /// Regex (Rust regex syntax, as ripgrep) or, with `literal`, a plain string. Must not be empty.
    pub pattern: String,
    /// A directory or one file; relative paths resolve against `cwd`. Default: `cwd`.
    pub path: Option<String>,
    /// Base for a relative `path`. Default: `process.cwd()`.
    pub cwd: Option<String>,
    /// Treat `pattern` as a literal string. Default false.
    pub literal: Option<bool>,
    /// Case-insensitive match. Default false.
    pub ignore_case: Option<bool>,
    /// Let a match span lines (`\n` in the pattern). Default false.
    pub multiline: Option<bool>,
    /// Lines of context before and after each match. Default 0.
    pub context: Option<u32>,
    /// Lines of context before each match; overrides `context`.
    pub before: Option<u32>,
    /// Lines of context after each match; overrides `context`.
    pub after: Option<u32>,
    /// Include globs, ripgrep style (`*.ts`, `src/**`); a `!` prefix excludes.
    pub glob: Option<Vec<String>>,
    /// ripgrep type names from the default type table (`rust`, `ts`, `py`, ...),
    /// or `all` (every file of a known type), as `rg -t` takes them.
    #[napi(js_name = "type")]
    pub file_type: Option<Either<String, Vec<String>>>,
    /// Search dot-files and dot-directories. Default true. `.git` is never searched.
    pub hidden: Option<bool>,
    /// Default true: files excluded by `.gitignore`, `.ignore`, `.rgignore` and
    /// `.git/info/exclude` are searched too, but after the project's own files,
    /// and marked `ignored`. False: they are skipped, as ripgrep does.
    pub no_ignore: Option<bool>,
    /// Limit: matching lines in `content` mode, files in `files`/`count` modes.
    pub max_count: Option<u32>,
    /// Longer lines are cut to a window of this many characters around the
    /// first match. Default 500.
    pub max_line_length: Option<u32>,
    /// `content` (default): matching lines with context; `files`: one entry per
    /// file with a match; `count`: one entry per file with its matching-line count.
    #[napi(ts_type = "'content' | 'files' | 'count'")]
    pub mode: Option<String>,
    /// `path` (default): component-wise byte order of the relative path, like
    /// `rg --sort path`; `mtime`: newest file first, ties by path.
    #[napi(ts_type = "'path' | 'mtime'")]
    pub sort: Option<String>,
    /// Searcher threads. Default: available cores + 1, at most 8.
    pub threads: Option<u32>,
    /// Stop after this many milliseconds and report `timedOut` with partial results.
    pub timeout_ms: Option<u32>,
    /// Once the project has a match, only count matches in ignored files
    /// (per ignored root, in the summary) instead of listing them. Default false.
    pub ignored_count_only: Option<bool>,
    /// Cancels the search; results so far are kept and `cancelled` is set.
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
    /// `content` mode: group each file's hits by the symbol enclosing them.
    /// A hit then carries `symbol` (innermost enclosing function, method,
    /// class, Markdown section, ...; absent at file scope) and the first hit
    /// of the file `fileStructure`. The structure comes from the read that
    /// searched the file (or, for a file unchanged since an earlier search
    /// in this process, from a small cache). Files that are not grouped
    /// carry neither field: languages without a grammar, files over 8 MiB
    /// (streamed), files without symbols, dense files (24 or more hits
    /// shown, or 12 to 23 hits that would make more than 8 groups), and
    /// files that start after 512 output lines (hits and context lines of
    /// earlier files). Default false.
    pub group: Option<bool>,
    /// Default true: when the live index of the search directory is ready,
    /// only the files it cannot rule out are read (same results, same
    /// order); the first search of a directory starts building it. False
    /// forces the scan and starts nothing. The summary's `index` says which.
    pub index: Option<bool>,
}

impl GrepOptions<'_> {
    pub fn to_core(&self) -> std::result::Result<CoreOptions, CodedError> {
        let d = CoreOptions::default();
        let before_context = self.context.map_or(d.before, |c| c as usize);
        let after_context = self.context.map_or(d.after, |c| c as usize);
        let mode = parse_choice("mode", &self.mode, &["content", "files", "count"])?;
        Ok(CoreOptions {
            pattern: self.pattern.clone(),
            literal: self.literal.unwrap_or(d.literal),
            ignore_case: self.ignore_case.unwrap_or(d.ignore_case),
            multiline: self.multiline.unwrap_or(d.multiline),
            before: self.before.map_or(before_context, |b| b as usize),
            after: self.after.map_or(after_context, |a| a as usize),
            mode: match mode {
                Some("content") => GrepMode::Content,
                Some("files") => GrepMode::Files,
                Some("count") => GrepMode::Count,
                _ => d.mode,
            },
            sort: sort_order(&self.sort, d.sort)?,
            limit: self.max_count.map(u64::from).or(d.limit),
            max_line_length: self
                .max_line_length
                .map_or(d.max_line_length, |m| m as usize),
            ignored_count_only: self.ignored_count_only.unwrap_or(d.ignored_count_only),
            walk: walk_options(
                self.hidden,
                self.no_ignore,
                self.glob.clone(),
                self.file_type.as_ref().map(|t| match t {
                    Either::A(s) => Either::A(s.clone()),
                    Either::B(v) => Either::B(v.clone()),
                }),
                self.threads,
            ),
            timeout: timeout_of(self.timeout_ms, d.timeout),
            group: self.group.unwrap_or(d.group),
        })
    }
}

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
        ts_type = "'rust' | 'typescript' | 'tsx' | 'javascript' | 'python' | 'go' | 'java' | 'c' | 'cpp' | 'ruby' | 'php' | 'swift' | 'markdown'"
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
