//! What a content search is asked: the pattern and how to read it, the
//! context, the output mode, the limit and the walk. Plain data, read by the
//! matcher, the file searcher and both pipelines.

use super::walk::WalkOptions;
use super::SortOrder;
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
