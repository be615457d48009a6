//! `locate()` and `trace()`: options in, the core's results out. Both
//! validate synchronously (bad queries reject at once), then run on tokio's
//! blocking pool, like `glob()`.

use super::context::context_of;
use super::convert::{cwd_of, walk_options};
use super::error::to_js;
use super::signal::{check_not_aborted, run_cancellable};
use crate::discover::context::{Extras, FileMark, Marks};
use crate::discover::finish::{finish_locate, finish_trace};
use crate::discover::locate::{
    LocateOptions as CoreLocateOptions, LocatePlan, LocateResult as CoreLocateResult,
};
use crate::discover::shown_score;
use crate::discover::trace::{
    TraceOptions as CoreTraceOptions, TracePlan, TraceResult as CoreTraceResult,
};
use crate::index::IndexMode;
use crate::search::CancelToken;
use crate::structure::Symbol;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::time::Duration;

/// Options for `locate`.
#[napi(object, object_to_js = false)]
pub struct LocateOptions<'a> {
    /// Words or an identifier in any form: `auth status`, `AuthStatus`,
    /// `auth_status`, `auth-status`, `src/auth`. Must hold a letter or digit.
    pub query: String,
    /// Directory to search; relative paths resolve against `cwd`. Default: `cwd`.
    pub path: Option<String>,
    /// Base for a relative `path`. Default: `process.cwd()`.
    pub cwd: Option<String>,
    /// Most files returned. Default 10.
    pub limit: Option<u32>,
    /// Include globs, ripgrep style; a `!` prefix excludes.
    pub glob: Option<Vec<String>>,
    /// ripgrep type names (`rust`, `ts`, `py`, ...).
    #[napi(js_name = "type")]
    pub file_type: Option<Either<String, Vec<String>>>,
    /// Include dot-files and dot-directories. Default true. `.git` never.
    pub hidden: Option<bool>,
    /// Default true: files the ignore rules exclude are ranked too, after
    /// the project's own (walked only when the project did not fill the list).
    pub no_ignore: Option<bool>,
    /// Default true: a ready live index of the directory (or of one above
    /// it) lists the files from its table instead of walking. `false`
    /// always walks (tests and benchmarks). Never starts an index.
    pub index: Option<bool>,
    /// Walker threads. Default: available cores + 1, at most 8.
    pub threads: Option<u32>,
    /// Stop after this many milliseconds and report `timedOut` with the best so far.
    pub timeout_ms: Option<u32>,
    /// Cancels the walk; the best files so far are returned with `cancelled`.
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
    /// What the model already has (README: "Harness context"): changed
    /// files are flagged, symbols it has are left out of `structure:`.
    #[napi(ts_type = "HarnessContext")]
    pub context: Option<serde_json::Value>,
    /// The same as a JSON string (not both).
    pub context_json: Option<String>,
    /// Append `debug score:`: each file's score and the signals behind it.
    pub debug_score: Option<bool>,
}

/// One symbol of a shown file's structure.
#[napi(object)]
pub struct DiscoverSymbol {
    pub kind: String,
    pub name: String,
    pub start_line: u32,
    pub end_line: u32,
    pub line_count: u32,
    pub depth: u32,
}

#[napi(object)]
pub struct LocatedFile {
    /// 1-based.
    pub rank: u32,
    /// Relative to the search root, `/`-separated (non-UTF-8: `#b=` suffix).
    pub path: String,
    /// Hex of the raw relative path bytes, only for non-UTF-8 names.
    pub path_bytes: Option<String>,
    pub score: f64,
    /// `code`, `test`, `bench`, `example`, `docs`, `config`, `vendored`, `generated` or `other`.
    pub role: String,
    /// Grammar name when one reads the file.
    pub language: Option<String>,
    /// The signals that scored, in words.
    pub why: Vec<String>,
    /// Up to 8 symbols, deepest levels dropped first.
    pub structure: Vec<DiscoverSymbol>,
    pub more_symbols: u32,
    /// Whether ignore rules exclude it (such files rank after the project's).
    pub ignored: bool,
    /// The context says (or its recorded facts show) the file changed since the model saw it.
    pub changed_since_seen: bool,
    /// Symbols of `structure` the context says the model has, left out of `text`.
    pub known_symbols_omitted: u32,
}

#[napi(object)]
pub struct LocateResult {
    pub query: String,
    /// Best first.
    pub files: Vec<LocatedFile>,
    /// Files whose path matched the query at all.
    pub candidates: i64,
    pub files_seen: i64,
    /// Ignored roots not walked (the project filled the list, or the walk stopped).
    pub ignored_unsearched: Vec<String>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub error_count: i64,
    pub errors: Vec<String>,
    pub elapsed_ms: f64,
    /// `used`: the paths came from the live index's table (no walk);
    /// `scan`, `building`, `stale`, `off`: the tree was walked.
    #[napi(ts_type = "'used' | 'scan' | 'building' | 'stale' | 'off'")]
    pub index: String,
    /// The result as the `locate` tool and `pi-utils locate` print it.
    pub text: String,
}

pub(super) fn symbols_out(symbols: &[Symbol]) -> Vec<DiscoverSymbol> {
    symbols
        .iter()
        .map(|s| DiscoverSymbol {
            kind: s.kind.as_str().to_string(),
            name: s.name.clone(),
            start_line: s.start_line,
            end_line: s.end_line,
            line_count: s.line_count(),
            depth: s.depth,
        })
        .collect()
}

fn mark_of(marks: &Option<Marks>, i: usize) -> Option<&FileMark> {
    marks.as_ref().and_then(|m| m.files.get(i))
}

fn locate_out((r, marks): (CoreLocateResult, Option<Marks>)) -> LocateResult {
    LocateResult {
        files: r
            .files
            .into_iter()
            .enumerate()
            .map(|(i, f)| LocatedFile {
                changed_since_seen: mark_of(&marks, i).is_some_and(|m| m.changed().is_some()),
                known_symbols_omitted: mark_of(&marks, i)
                    .map_or(0, |m| m.known_symbols_omitted() as u32),
                rank: i as u32 + 1,
                path: f.path.text,
                path_bytes: f.path.raw_hex,
                score: shown_score(f.score),
                role: f.role.as_str().to_string(),
                language: f.language.map(|l| l.name().to_string()),
                why: f.why,
                structure: symbols_out(&f.structure),
                more_symbols: f.more_symbols as u32,
                ignored: f.ignored,
            })
            .collect(),
        query: r.query,
        candidates: r.candidates as i64,
        files_seen: r.files_seen as i64,
        ignored_unsearched: r.ignored_unsearched,
        timed_out: r.timed_out,
        cancelled: r.cancelled,
        error_count: r.errors.count as i64,
        errors: r.errors.first,
        elapsed_ms: r.elapsed_ms,
        index: r.index.as_str().to_string(),
        text: r.text,
    }
}

fn timeout_of(ms: Option<u32>) -> Option<Duration> {
    ms.map(|ms| Duration::from_millis(ms.into()))
}

/// Ranks files by how well their path (and, for the best few, their
/// symbols) matches `query`. Rejects at once on an empty query, one without
/// letters or digits, a missing path, a bad glob or type, or an aborted signal.
#[napi(catch_unwind, ts_return_type = "Promise<LocateResult>")]
pub fn locate<'env>(
    env: &'env Env,
    options: LocateOptions,
) -> Result<PromiseRaw<'env, LocateResult>> {
    let cwd = cwd_of(&options.cwd).map_err(|e| to_js(env, e))?;
    let d = CoreLocateOptions::default();
    let core = CoreLocateOptions {
        query: options.query.clone(),
        limit: options.limit.map_or(d.limit, |n| n as usize),
        walk: walk_options(
            options.hidden,
            options.no_ignore,
            options.glob.clone(),
            options.file_type.as_ref().map(|t| match t {
                Either::A(s) => Either::A(s.clone()),
                Either::B(v) => Either::B(v.clone()),
            }),
            options.threads,
        ),
        timeout: timeout_of(options.timeout_ms),
        index: IndexMode::for_listing(options.index),
    };
    let context = context_of(env, options.context, options.context_json.as_deref())?;
    let debug_score = options.debug_score.unwrap_or(false);
    let cancel = CancelToken::new(core.timeout);
    check_not_aborted(env, options.signal.as_ref())?;
    let plan = LocatePlan::new(&cwd, options.path.as_deref(), core).map_err(|e| to_js(env, e))?;
    run_cancellable(
        env,
        "locate",
        options.signal.as_ref(),
        &cancel,
        move |cancel| {
            let mut r = plan.run(cancel);
            let extras = Extras {
                context: context.as_ref(),
                debug_plan: false,
                debug_score,
            };
            let marks = finish_locate(&plan, &mut r, extras);
            Ok((r, marks))
        },
        locate_out,
    )
}

/// Options for `trace`.
#[napi(object, object_to_js = false)]
pub struct TraceOptions<'a> {
    /// `subject:X relation:R [support:S]... [kind:code|docs|tests] [path:P]`
    /// (`key=value` also accepted). Relations: defined, called_from,
    /// triggered_from, rendered, populated, comes_from, handled,
    /// implementation (and agentgrep's aliases); any other word is a custom term.
    pub query: String,
    /// Directory to search; relative paths resolve against `cwd`. Default: `cwd`.
    pub path: Option<String>,
    /// Base for a relative `path`. Default: `process.cwd()`.
    pub cwd: Option<String>,
    /// Most files shown. Default 5.
    pub max_files: Option<u32>,
    /// Most regions shown over all files, the best first. Default 6.
    pub max_regions: Option<u32>,
    /// Include dot-files and dot-directories. Default true. `.git` never.
    pub hidden: Option<bool>,
    /// Default true: files the ignore rules exclude are traced too and ranked
    /// after the project's own.
    pub no_ignore: Option<bool>,
    /// Default true: a ready live index of the directory (or of one above
    /// it) lists the files from its table instead of walking. `false`
    /// always walks (tests and benchmarks). Never starts an index.
    pub index: Option<bool>,
    /// Walker threads. Default: available cores + 1, at most 8.
    pub threads: Option<u32>,
    /// Stop after this many milliseconds and report `timedOut` with what was found.
    pub timeout_ms: Option<u32>,
    /// Cancels the trace; what was found so far is returned with `cancelled`.
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
    /// What the model already has (README: "Harness context"): regions it
    /// has, unchanged, are named with their range instead of inlined;
    /// changed ones are marked; `structure:` skips symbols it has.
    #[napi(ts_type = "HarnessContext")]
    pub context: Option<serde_json::Value>,
    /// The same as a JSON string (not both).
    pub context_json: Option<String>,
    /// Append `debug plan:`: the probes run and why each was chosen.
    pub debug_plan: Option<bool>,
    /// Append `debug score:`: each file's and region's score and its terms.
    pub debug_score: Option<bool>,
}

#[napi(object)]
pub struct TraceRegion {
    /// `definition`, `implementation`, `callsite`, `render-site`, `handler`,
    /// `trigger-site`, `source`, `assignment`, `related` or `reference`.
    pub kind: String,
    /// `function render_status`, or `<file scope>`.
    pub label: String,
    pub start_line: u32,
    pub end_line: u32,
    pub line_count: u32,
    pub score: f64,
    /// `N: text` lines: the whole region when `fullRegion`, else its first
    /// line and the lines holding the subject.
    pub body: Vec<String>,
    pub full_region: bool,
    pub why: Vec<String>,
    /// The model has these lines, unchanged (context): `body` is empty and
    /// `text` names the range instead.
    pub already_shown: bool,
    /// The model saw these lines and they changed since (context).
    pub changed_since_shown: bool,
}

#[napi(object)]
pub struct TracedFile {
    pub path: String,
    pub path_bytes: Option<String>,
    pub role: String,
    pub language: Option<String>,
    pub score: f64,
    pub why: Vec<String>,
    pub structure: Vec<DiscoverSymbol>,
    pub more_symbols: u32,
    pub regions: Vec<TraceRegion>,
    pub ignored: bool,
    /// The context says (or its recorded facts show) the file changed since the model saw it.
    pub changed_since_seen: bool,
    /// Symbols of `structure` the context says the model has, left out of `text`.
    pub known_symbols_omitted: u32,
}

#[napi(object)]
pub struct TraceQueryOut {
    pub subject: String,
    pub relation: String,
    pub support: Vec<String>,
    pub kind: Option<String>,
    pub path: Option<String>,
}

#[napi(object)]
pub struct TraceResult {
    pub query: TraceQueryOut,
    /// Best first.
    pub files: Vec<TracedFile>,
    pub best_file: Option<String>,
    pub total_regions: u32,
    /// Files that mention the subject.
    pub files_matched: i64,
    pub files_scanned: i64,
    /// False when no shown file had structure: regions are then plain
    /// word-boundary matches.
    pub structure_found: bool,
    pub timed_out: bool,
    pub cancelled: bool,
    pub error_count: i64,
    pub errors: Vec<String>,
    pub elapsed_ms: f64,
    /// `used`: the files came from the live index's table and only those
    /// its postings allow were read; else the tree was walked.
    #[napi(ts_type = "'used' | 'scan' | 'building' | 'stale' | 'off'")]
    pub index: String,
    /// The result as the `trace` tool and `pi-utils trace` print it.
    pub text: String,
}

fn trace_out((r, marks): (CoreTraceResult, Option<Marks>)) -> TraceResult {
    let q = r
        .query
        .clone()
        .unwrap_or_else(|| crate::discover::dsl::TraceQuery {
            subject: String::new(),
            relation: crate::discover::dsl::RelationTerm::Custom(String::new()),
            support: Vec::new(),
            kind: None,
            path: None,
        });
    TraceResult {
        query: TraceQueryOut {
            subject: q.subject,
            relation: q.relation.name().to_string(),
            support: q.support,
            kind: q.kind.map(|k| k.name().to_string()),
            path: q.path,
        },
        best_file: r.files.first().map(|f| f.path.text.clone()),
        total_regions: r.files.iter().map(|f| f.regions.len() as u32).sum(),
        files: r
            .files
            .into_iter()
            .enumerate()
            .map(|(i, f)| TracedFile {
                changed_since_seen: mark_of(&marks, i).is_some_and(|m| m.changed().is_some()),
                known_symbols_omitted: mark_of(&marks, i)
                    .map_or(0, |m| m.known_symbols_omitted() as u32),
                path: f.path.text,
                path_bytes: f.path.raw_hex,
                role: f.role.as_str().to_string(),
                language: f.language.map(|l| l.name().to_string()),
                score: shown_score(f.score),
                why: f.why,
                structure: symbols_out(&f.structure),
                more_symbols: f.more_symbols as u32,
                regions: f
                    .regions
                    .into_iter()
                    .enumerate()
                    .map(|(j, g)| TraceRegion {
                        already_shown: mark_of(&marks, i).is_some_and(|m| m.already_shown(j)),
                        changed_since_shown: mark_of(&marks, i)
                            .is_some_and(|m| m.region_changed(j).is_some()),
                        line_count: g.line_count(),
                        kind: g.kind.as_str().to_string(),
                        label: g.label,
                        start_line: g.start_line,
                        end_line: g.end_line,
                        score: shown_score(g.score),
                        body: if mark_of(&marks, i).is_some_and(|m| m.already_shown(j)) {
                            Vec::new()
                        } else {
                            g.body
                        },
                        full_region: g.full_region,
                        why: g.why,
                    })
                    .collect(),
                ignored: f.ignored,
            })
            .collect(),
        files_matched: r.files_matched as i64,
        files_scanned: r.files_scanned as i64,
        structure_found: r.structure_found,
        timed_out: r.timed_out,
        cancelled: r.cancelled,
        error_count: r.errors.count as i64,
        errors: r.errors.first,
        elapsed_ms: r.elapsed_ms,
        index: r.index.as_str().to_string(),
        text: r.text,
    }
}

/// Traces a subject through the tree in one pass: its definitions, call
/// sites, assignments, or the regions a relation names. Rejects at once on a
/// DSL error (with a valid example), a missing path, or an aborted signal.
#[napi(catch_unwind, ts_return_type = "Promise<TraceResult>")]
pub fn trace<'env>(env: &'env Env, options: TraceOptions) -> Result<PromiseRaw<'env, TraceResult>> {
    let cwd = cwd_of(&options.cwd).map_err(|e| to_js(env, e))?;
    let d = CoreTraceOptions::default();
    let core = CoreTraceOptions {
        query: options.query.clone(),
        max_files: options.max_files.map_or(d.max_files, |n| n as usize),
        max_regions: options.max_regions.map_or(d.max_regions, |n| n as usize),
        walk: walk_options(
            options.hidden,
            options.no_ignore,
            None,
            None,
            options.threads,
        ),
        timeout: timeout_of(options.timeout_ms),
        index: IndexMode::for_listing(options.index),
    };
    let context = context_of(env, options.context, options.context_json.as_deref())?;
    let debug_plan = options.debug_plan.unwrap_or(false);
    let debug_score = options.debug_score.unwrap_or(false);
    let cancel = CancelToken::new(core.timeout);
    check_not_aborted(env, options.signal.as_ref())?;
    let plan = TracePlan::new(&cwd, options.path.as_deref(), core).map_err(|e| to_js(env, e))?;
    run_cancellable(
        env,
        "trace",
        options.signal.as_ref(),
        &cancel,
        move |cancel| {
            let mut r = plan.run(cancel);
            let extras = Extras {
                context: context.as_ref(),
                debug_plan,
                debug_score,
            };
            let marks = finish_trace(&plan, &mut r, extras);
            Ok((r, marks))
        },
        trace_out,
    )
}
