//! Streaming content search: options, result types and the validated plan.
//!
//! A plan runs one of two pipelines. `ordered` (the default) walks in order
//! and hands files to searcher threads; a collector puts results back in walk
//! order, applies the global limit and emits batches, so output is the same
//! whatever the thread count and a limit reached early stops the walk.
//! `unordered` serves whole-tree file/count listings with no limit: a
//! parallel walk searches as it goes and the per-file results are sorted at
//! the end, like ripgrep. Either way files the ignore rules exclude are
//! searched after the project's own.

use super::cancel::CancelToken;
use super::display::DisplayPath;
use super::walk::{resolve_target, ErrorLog, Target, WalkOptions, Walker};
use super::{SearchError, SortOrder};
use crate::structure::{Language, Symbol, SymbolKind};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, MmapChoice, Searcher, SearcherBuilder};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

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
    /// Content mode: give hits in files read whole the symbol enclosing
    /// them and the file's first hit a [`FileStructure`] (see
    /// `crate::structure::group` for which files are grouped).
    pub group: bool,
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
            group: false,
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
    /// With `group`: the symbol this hit is shown under; `None` at file
    /// scope, and for every hit of a file that is not grouped.
    pub symbol: Option<HitSymbol>,
    /// With `group`: set on the first hit of each grouped file, and only
    /// there. Its absence on a file's first hit means "print it flat".
    pub structure: Option<Box<FileStructure>>,
}

/// A symbol as a grep hit shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitSymbol {
    pub kind: SymbolKind,
    pub name: String,
    pub start_line: u32,
    pub end_line: u32,
}

impl From<&Symbol> for HitSymbol {
    fn from(s: &Symbol) -> Self {
        HitSymbol {
            kind: s.kind,
            name: s.name.clone(),
            start_line: s.start_line,
            end_line: s.end_line,
        }
    }
}

/// What a grouped file's header shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStructure {
    pub language: Language,
    pub total_lines: u32,
    pub total_symbols: usize,
    /// Top-level symbols holding no shown hit, in source order, capped.
    pub others: Vec<HitSymbol>,
    pub others_omitted: usize,
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

pub(super) fn build_searcher(opts: &GrepOptions) -> Searcher {
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

/// A validated search, ready to run: bad input (empty or invalid pattern,
/// missing path, unknown type, bad glob) is rejected here, before any thread
/// starts, so callers can report it at once.
pub struct GrepPlan {
    pub(super) opts: GrepOptions,
    pub(super) matcher: RegexMatcher,
    pub(super) walker: Walker,
    pub(super) display_root: PathBuf,
    pub(super) single: Option<PathBuf>,
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
        if self.opts.max_count.is_none() && self.opts.mode != GrepMode::Content {
            super::unordered::run(self, cancel, emit)
        } else {
            super::ordered::run(self, cancel, emit)
        }
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
