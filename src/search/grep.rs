//! Streaming content search: options, the validated plan and the choice of
//! pipeline (the results it yields are in `results.rs`).
//!
//! A plan runs one of two pipelines over its [`FileSource`]. `ordered` (the
//! default) hands files in output order to searcher threads; a collector
//! puts results back in that order, applies the global limit and emits
//! batches, so output is the same whatever the thread count and a limit
//! reached early stops the source. `unordered` serves whole-tree file/count
//! listings with no limit: a parallel walk searches as it goes and the
//! per-file results are sorted at the end, like ripgrep. Either way files
//! the ignore rules exclude are searched after the project's own.

use super::cancel::CancelToken;
use super::file_search::FileSearcher;
use super::local_fs::short_read_ends_file;
use super::results::{GrepSummary, Hit};
use super::source::{FileList, FileSource, ListedFile, Narrowing};
use super::walk::{resolve_target, Target, WalkOptions, Walker};
use super::{SearchError, SortOrder};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, MmapChoice, Searcher, SearcherBuilder};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Longest line shown whole; longer ones are cut to a window around the
/// first match.
pub const DEFAULT_MAX_LINE_LENGTH: usize = 500;

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
    /// The tool's `limit`, the JS option `maxCount` (`rg -m`): one name
    /// here, as glob's and locate's.
    pub limit: Option<u64>,
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
            limit: None,
            max_line_length: DEFAULT_MAX_LINE_LENGTH,
            ignored_count_only: false,
            walk: WalkOptions::default(),
            timeout: None,
            group: false,
        }
    }
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
        .map_err(|e| SearchError::InvalidPattern(pattern_error(opts, e.to_string())))
}

/// The parse error as the user should read it: grep-regex reports it against
/// the `(?:...)` it wraps the pattern in, so the caret would sit under text
/// the user never typed. Parsing the pattern itself gives the same error
/// against their own text (the wrapper's message stays for errors that only
/// the compiled whole has, such as size limits). A `\|` or `\(` is a basic
/// regex habit (grep, sed, vim) that means a literal character here.
fn pattern_error(opts: &GrepOptions, wrapped: String) -> String {
    let own = pattern_parser(opts.ignore_case)
        .parse(&opts.pattern)
        .err()
        .map_or(wrapped, |e| e.to_string());
    if has_basic_regex_escape(&opts.pattern) {
        format!("{own}\n{BASIC_REGEX_HINT}")
    } else {
        own
    }
}

/// A parser that reads a pattern as the matcher built by [`build_matcher`]
/// does (grep-regex's settings for these options), for whoever must see
/// the same regex: the user's parse errors, the index's planner.
pub fn pattern_parser(ignore_case: bool) -> regex_syntax::Parser {
    regex_syntax::ParserBuilder::new()
        .case_insensitive(ignore_case)
        .multi_line(true)
        .utf8(false)
        .build()
}

/// Said under a parse error of a pattern written with basic-regex escapes.
pub const BASIC_REGEX_HINT: &str =
    "hint: Rust regex uses | and ( unescaped; \\| and \\( match the characters themselves";

fn has_basic_regex_escape(pattern: &str) -> bool {
    ["\\|", "\\(", "\\)"].iter().any(|e| pattern.contains(e))
}

/// The searcher of one search thread. Binary detection is rg's: a file
/// found by the walk quits at its first NUL byte (matches already seen are
/// kept); a file the search was given by name (`named`) converts, so its
/// search goes on past the NUL, and [`super::file_search`] stops at the
/// first match there, as rg's printer does.
pub(super) fn build_searcher(opts: &GrepOptions, named: bool) -> Searcher {
    let content = opts.mode == GrepMode::Content;
    SearcherBuilder::new()
        .line_number(opts.mode != GrepMode::Files)
        .before_context(if content { opts.before } else { 0 })
        .after_context(if content { opts.after } else { 0 })
        .multi_line(opts.multiline)
        // rg's maxCount in multi-line mode: a match counts once however
        // many lines it spans, and matches that share a line are reported
        // together up to the limit. Line by line, the sink counts.
        .max_matches(opts.limit.filter(|_| opts.multiline))
        .memory_map(MmapChoice::never())
        .binary_detection(if named {
            BinaryDetection::convert(0)
        } else {
            BinaryDetection::quit(0)
        })
        .build()
}

/// A validated search, ready to run: bad input (empty or invalid pattern,
/// missing path, unknown type, bad glob) is rejected here, before any thread
/// starts, so callers can report it at once.
pub struct GrepPlan {
    pub(super) opts: GrepOptions,
    pub(super) matcher: RegexMatcher,
    pub(super) source: FileSource,
    /// Paths are shown relative to this directory.
    pub(super) display_root: PathBuf,
    /// Whether a short read of a file is its end (see `local_fs`), decided
    /// once for the search.
    pub(super) short_read_ends_file: bool,
    /// The search was given one file by name (rg's explicit file): its
    /// binary detection converts instead of quitting (see [`build_searcher`]).
    pub(super) named: bool,
}

impl GrepPlan {
    pub fn new(cwd: &Path, path: Option<&str>, opts: GrepOptions) -> Result<Self, SearchError> {
        let matcher = build_matcher(&opts)?;
        let target = resolve_target(cwd, path)?;
        let (walk_root, single) = match target {
            Target::Dir(d) => (d, None),
            Target::File(f) => {
                let parent = f.parent().map(Path::to_path_buf).unwrap_or_default();
                (parent, Some(f))
            }
        };
        let walker = Walker::new(walk_root.clone(), opts.walk.clone())?;
        let named = single.is_some();
        let source = match single {
            None => FileSource::Walk(Arc::new(walker)),
            // A named file is a list of one, if it passes the glob and type
            // filters (rg applies them to explicit files too).
            Some(file) => FileSource::List(FileList {
                ignored_roots: Vec::new(),
                files: (walker.accepts_file(&file))
                    .then_some(ListedFile {
                        path: file,
                        ignored_root: None,
                    })
                    .into_iter()
                    .collect(),
            }),
        };
        Ok(GrepPlan {
            opts,
            matcher,
            source,
            short_read_ends_file: short_read_ends_file(&walk_root),
            display_root: walk_root,
            named,
        })
    }

    /// A search over a given list of files instead of a walk; paths are
    /// shown relative to `display_root`. The walk options (globs, types,
    /// hidden, ignore rules) are not applied: the list is searched as given.
    pub fn over_files(
        display_root: PathBuf,
        files: FileList,
        opts: GrepOptions,
    ) -> Result<Self, SearchError> {
        Ok(GrepPlan {
            matcher: build_matcher(&opts)?,
            opts,
            source: FileSource::List(files),
            short_read_ends_file: short_read_ends_file(&display_root),
            display_root,
            named: false,
        })
    }

    /// What a source of this search's files may narrow them by.
    pub fn narrowing(&self) -> Narrowing<'_> {
        Narrowing {
            pattern: Some(&self.opts.pattern),
            literal: self.opts.literal,
            ignore_case: self.opts.ignore_case,
            limited: self.opts.limit.is_some(),
            dirs: None,
        }
    }

    /// This search over what `serve` makes of its own source (the walk of
    /// a directory, or a named file's list) and its [`Narrowing`]: the same
    /// files from elsewhere, such as an index's candidates, searched as
    /// given like [`GrepPlan::over_files`]. The plan's matcher is kept
    /// rather than compiled again.
    pub fn serve<U>(
        mut self,
        serve: impl FnOnce(FileSource, &Narrowing<'_>) -> (FileSource, U),
    ) -> (Self, U) {
        let own = std::mem::replace(&mut self.source, FileSource::List(FileList::default()));
        let (source, how) = serve(own, &self.narrowing());
        self.source = source;
        (self, how)
    }

    /// A searcher of this plan's files, one per search thread.
    pub(super) fn file_searcher(&self) -> FileSearcher<'_> {
        FileSearcher::new(
            &self.opts,
            self.matcher.clone(),
            self.display_root.clone(),
            self.short_read_ends_file,
            self.named,
        )
    }

    /// Runs the search, calling `emit` with ordered batches on the calling
    /// thread. `emit` returns false when the consumer has gone away; the
    /// search then stops as if cancelled.
    pub fn run(&self, cancel: &CancelToken, emit: impl FnMut(Vec<Hit>) -> bool) -> GrepSummary {
        if self.opts.limit.is_none() && self.opts.mode != GrepMode::Content {
            super::unordered::run(self, cancel, emit)
        } else {
            super::ordered::run(self, cancel, emit)
        }
    }
}

/// Validates and runs in one call: what the tests need.
#[cfg(test)]
pub(super) fn run(
    cwd: &Path,
    path: Option<&str>,
    opts: &GrepOptions,
    cancel: &CancelToken,
    emit: impl FnMut(Vec<Hit>) -> bool,
) -> Result<GrepSummary, SearchError> {
    Ok(GrepPlan::new(cwd, path, opts.clone())?.run(cancel, emit))
}
