//! `glob()`: its JS options and their conversion to the core's (the doc
//! comments become the `index.d.ts` contract), its result shape. It
//! validates synchronously, walks on tokio's blocking pool (not
//! libuv's) and resolves with the newest entries.

use super::convert::{cwd_of, parse_choice, sort_order, timeout_of, walk_options};
use super::error::to_js;
use super::signal::{check_not_aborted, run_cancellable};
use crate::index::{source_for, IndexMode};
use crate::search::{
    CancelToken, CodedError, EntryKind, GlobOptions as CoreOptions, GlobPlan,
    GlobResult as CoreResult,
};
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// Options for `glob`.
#[napi(object, object_to_js = false)]
pub struct GlobOptions<'a> {
    /// A glob. Without `/` it matches the file name at any depth (`*.ts`);
    /// with `/` it matches the path relative to `path` (`src/**/*.ts`).
    pub pattern: String,
    /// Directory to search; relative paths resolve against `cwd`. Default: `cwd`.
    pub path: Option<String>,
    /// Base for a relative `path`. Default: `process.cwd()`.
    pub cwd: Option<String>,
    /// Most entries returned. Default 200.
    pub limit: Option<u32>,
    /// Include dot-files and dot-directories. Default true. `.git` never.
    pub hidden: Option<bool>,
    /// Default true: ignored files are listed too, after the project's own.
    pub no_ignore: Option<bool>,
    /// `file` (default), `dir` or `any`.
    #[napi(ts_type = "'file' | 'dir' | 'any'")]
    pub kind: Option<String>,
    /// `mtime` (default): newest first, ties by path; `path`: path order.
    #[napi(ts_type = "'path' | 'mtime'")]
    pub sort: Option<String>,
    /// Walker threads. Default: available cores + 1, at most 8.
    pub threads: Option<u32>,
    /// Stop after this many milliseconds and report `timedOut`.
    pub timeout_ms: Option<u32>,
    /// Cancels the walk; entries found so far are returned with `cancelled`.
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
    /// False: walk even when a ready index could list the entries (for
    /// tests and benchmarks).
    pub index: Option<bool>,
}

impl GlobOptions<'_> {
    pub fn to_core(&self) -> std::result::Result<CoreOptions, CodedError> {
        let d = CoreOptions::default();
        let kind = parse_choice("kind", &self.kind, &["file", "dir", "any"])?;
        Ok(CoreOptions {
            pattern: self.pattern.clone(),
            limit: self.limit.map_or(d.limit, |l| l as usize),
            kind: match kind {
                Some("file") => EntryKind::File,
                Some("dir") => EntryKind::Dir,
                Some("any") => EntryKind::Any,
                _ => d.kind,
            },
            sort: sort_order(&self.sort, d.sort)?,
            walk: walk_options(self.hidden, self.no_ignore, None, None, self.threads),
            timeout: timeout_of(self.timeout_ms, d.timeout),
        })
    }
}

#[napi(object)]
pub struct GlobEntry {
    /// Relative to the search root, `/`-separated (non-UTF-8: `#b=` suffix).
    pub path: String,
    /// Hex of the raw relative path bytes, only for non-UTF-8 names.
    pub path_bytes: Option<String>,
    pub is_dir: bool,
    pub mtime_ms: f64,
    pub size: f64,
    /// Whether ignore rules would have excluded it.
    pub ignored: bool,
}

#[napi(object)]
pub struct GlobIgnored {
    pub path: String,
    pub matches: i64,
}

#[napi(object)]
pub struct GlobResult {
    /// Project entries first (in the chosen order), then ignored ones.
    pub entries: Vec<GlobEntry>,
    /// Everything that matched, listed or not.
    pub total: i64,
    pub limit_reached: bool,
    pub timed_out: bool,
    pub cancelled: bool,
    pub error_count: i64,
    pub errors: Vec<String>,
    /// Matches under each ignored root that was walked.
    pub ignored: Vec<GlobIgnored>,
    /// Ignored roots that were not walked (the limit was already full, or the walk stopped).
    pub ignored_unsearched: Vec<String>,
    pub elapsed_ms: f64,
    /// How the directory's live index served this glob: `used` (listed from
    /// its file table, no walk), `scan` (ready, but this glob walked: kind
    /// `dir`/`any`, `noIgnore: false`, or a subdirectory the table cannot
    /// answer for), `building`, `stale`, or `off` (no index, or `index: false`).
    #[napi(ts_type = "'used' | 'scan' | 'building' | 'stale' | 'off'")]
    pub index: String,
}

fn result_out(r: CoreResult, index: crate::index::IndexUse) -> GlobResult {
    GlobResult {
        entries: r
            .entries
            .into_iter()
            .map(|e| GlobEntry {
                path: e.path.text,
                path_bytes: e.path.raw_hex,
                is_dir: e.is_dir,
                mtime_ms: e.mtime_ms,
                size: e.size as f64,
                ignored: e.ignored,
            })
            .collect(),
        total: r.total as i64,
        limit_reached: r.limit_reached,
        timed_out: r.timed_out,
        cancelled: r.cancelled,
        error_count: r.errors.count as i64,
        errors: r.errors.first,
        ignored: r
            .ignored
            .into_iter()
            .map(|i| GlobIgnored {
                path: i.path,
                matches: i.matches as i64,
            })
            .collect(),
        ignored_unsearched: r.ignored_unsearched,
        elapsed_ms: r.elapsed_ms,
        index: index.as_str().to_string(),
    }
}

/// Lists files (or directories) matching `pattern`, newest first by default.
/// Throws at once on an empty or invalid pattern, `Path not found: <path>`,
/// or an already aborted `signal`.
#[napi(catch_unwind, ts_return_type = "Promise<GlobResult>")]
pub fn glob<'env>(env: &'env Env, options: GlobOptions) -> Result<PromiseRaw<'env, GlobResult>> {
    let core = options.to_core().map_err(|e| to_js(env, e))?;
    let cwd = cwd_of(&options.cwd).map_err(|e| to_js(env, e))?;
    let cancel = CancelToken::new(core.timeout);
    check_not_aborted(env, options.signal.as_ref())?;
    let plan = GlobPlan::new(&cwd, options.path.as_deref(), core).map_err(|e| to_js(env, e))?;
    let mode = IndexMode::for_listing(options.index);
    run_cancellable(
        env,
        "glob",
        options.signal.as_ref(),
        &cancel,
        move |cancel| {
            let (source, index) = source_for(plan.source(), &plan.narrowing(), mode);
            Ok((plan.run_over(&source, cancel), index))
        },
        |(r, index)| result_out(r, index),
    )
}
