//! Streaming content search: the validated plan (its options are in
//! `grep_options.rs`, its matcher in `matcher.rs`, the choice of pipeline in
//! `pipeline.rs`, the results it yields in `results.rs`).
//!
//! A plan runs one of two pipelines over its [`FileSource`]. `ordered` (the
//! default) hands files in output order to searcher threads; a collector
//! puts results back in that order, applies the global limit and emits
//! batches, so output is the same whatever the thread count and a limit
//! reached early stops the source. `unordered` serves whole-tree file/count
//! listings with no limit: a parallel walk searches as it goes and the
//! per-file results are sorted at the end, like ripgrep. Either way files
//! the ignore rules exclude are searched after the project's own.

#[cfg(test)]
use super::cancel::CancelToken;
use super::file_search::FileSearcher;
pub use super::grep_options::{GrepMode, GrepOptions, DEFAULT_MAX_LINE_LENGTH};
use super::local_fs::short_read_ends_file;
#[cfg(test)]
pub use super::matcher::BASIC_REGEX_HINT;
pub use super::matcher::{build_matcher, pattern_parser};
#[cfg(test)]
use super::results::{GrepSummary, Hit};
use super::source::{FileList, FileSource, ListedFile, Narrowing};
use super::walk::{resolve_target, Target, Walker};
use super::SearchError;
use grep_regex::RegexMatcher;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
