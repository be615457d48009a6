//! JS-facing option and result shapes, and their conversion to the core's.
//! Every option is documented here because these comments become the
//! `index.d.ts` contract.

use crate::search::{
    CodedError, EntryKind, ErrorCode, GlobOptions as CoreGlobOptions, GrepMode as CoreMode,
    GrepOptions as CoreGrepOptions, SortOrder, WalkOptions,
};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::time::Duration;

pub(super) fn parse_choice<'a>(
    field: &str,
    value: &Option<String>,
    choices: &[&'a str],
) -> std::result::Result<Option<&'a str>, CodedError> {
    match value {
        None => Ok(None),
        Some(v) => choices
            .iter()
            .find(|c| **c == v.as_str())
            .map(|c| Some(*c))
            .ok_or_else(|| {
                CodedError::new(
                    ErrorCode::InvalidOption,
                    format!("Invalid {field}: {v} (expected {})", choices.join(", ")),
                )
            }),
    }
}

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

/// Missing options take the core's defaults.
pub(super) fn walk_options(
    hidden: Option<bool>,
    no_ignore: Option<bool>,
    globs: Option<Vec<String>>,
    types: Option<Either<String, Vec<String>>>,
    threads: Option<u32>,
) -> WalkOptions {
    let d = WalkOptions::default();
    WalkOptions {
        hidden: hidden.unwrap_or(d.hidden),
        no_ignore: no_ignore.unwrap_or(d.no_ignore),
        globs: globs.unwrap_or(d.globs),
        types: match types {
            None => d.types,
            Some(Either::A(t)) => vec![t],
            Some(Either::B(ts)) => ts,
        },
        threads: threads.map_or(d.threads, |t| (t as usize).clamp(1, 64)),
    }
}

impl GrepOptions<'_> {
    pub fn to_core(&self) -> std::result::Result<CoreGrepOptions, CodedError> {
        let d = CoreGrepOptions::default();
        let before_context = self.context.map_or(d.before, |c| c as usize);
        let after_context = self.context.map_or(d.after, |c| c as usize);
        let mode = parse_choice("mode", &self.mode, &["content", "files", "count"])?;
        let sort = parse_choice("sort", &self.sort, &["path", "mtime"])?;
        Ok(CoreGrepOptions {
            pattern: self.pattern.clone(),
            literal: self.literal.unwrap_or(d.literal),
            ignore_case: self.ignore_case.unwrap_or(d.ignore_case),
            multiline: self.multiline.unwrap_or(d.multiline),
            before: self.before.map_or(before_context, |b| b as usize),
            after: self.after.map_or(after_context, |a| a as usize),
            mode: match mode {
                Some("content") => CoreMode::Content,
                Some("files") => CoreMode::Files,
                Some("count") => CoreMode::Count,
                _ => d.mode,
            },
            sort: match sort {
                Some("path") => SortOrder::Path,
                Some("mtime") => SortOrder::Mtime,
                _ => d.sort,
            },
            max_count: self.max_count.map(u64::from).or(d.max_count),
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
            timeout: self
                .timeout_ms
                .map(|ms| Duration::from_millis(ms.into()))
                .or(d.timeout),
            group: self.group.unwrap_or(d.group),
        })
    }
}

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
    pub fn to_core(&self) -> std::result::Result<CoreGlobOptions, CodedError> {
        let d = CoreGlobOptions::default();
        let kind = parse_choice("kind", &self.kind, &["file", "dir", "any"])?;
        let sort = parse_choice("sort", &self.sort, &["path", "mtime"])?;
        Ok(CoreGlobOptions {
            pattern: self.pattern.clone(),
            limit: self.limit.map_or(d.limit, |l| l as usize),
            kind: match kind {
                Some("file") => EntryKind::File,
                Some("dir") => EntryKind::Dir,
                Some("any") => EntryKind::Any,
                _ => d.kind,
            },
            sort: match sort {
                Some("path") => SortOrder::Path,
                Some("mtime") => SortOrder::Mtime,
                _ => d.sort,
            },
            walk: walk_options(self.hidden, self.no_ignore, None, None, self.threads),
            timeout: self
                .timeout_ms
                .map(|ms| Duration::from_millis(ms.into()))
                .or(d.timeout),
        })
    }
}

pub fn cwd_of(cwd: &Option<String>) -> std::result::Result<std::path::PathBuf, CodedError> {
    match cwd {
        Some(c) => Ok(std::path::PathBuf::from(c)),
        None => std::env::current_dir().map_err(|e| CodedError::new(ErrorCode::Io, e.to_string())),
    }
}
