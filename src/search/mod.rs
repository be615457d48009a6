//! Content search and file discovery. Everything here is napi-free so it can
//! be tested with plain `cargo test`; `src/napi` only converts its types.
//!
//! The submodules are private: callers use what is re-exported here.

mod buffers;
mod cancel;
mod classify;
mod dir_open;
mod display;
mod display_lookup;
mod error;
mod file_search;
mod glob;
mod grep;
mod grep_options;
mod line_window;
mod local_fs;
mod matcher;
mod near_names;
mod ordered;
mod outline_cache;
mod outline_file;
mod parallel_walk;
pub mod path_order;
mod pipeline;
mod results;
mod rules_cache;
mod sorted_walk;
mod source;
pub mod stamp;
mod unordered;
mod walk;
mod walk_start;

pub use cancel::{CancelToken, StopReason};
pub use classify::{
    chain_in, classifies_alike, global_excludes_apply, global_rule_files, repository_exclude,
    Classifier, RuleChain, IGNORE_FILES,
};
pub use dir_open::{DirOpener, DirStat};
pub use display::{display_bytes, relative_bytes, DisplayPath};
pub use error::{CodedError, ErrorCode, SearchError};
pub use file_search::fill;
pub use glob::{
    EntryKind, GlobEntry, GlobIgnored, GlobOptions, GlobPlan, GlobResult,
    DEFAULT_LIMIT as DEFAULT_GLOB_LIMIT,
};
pub use grep::{
    build_matcher, pattern_parser, GrepMode, GrepOptions, GrepPlan, DEFAULT_MAX_LINE_LENGTH,
};
pub use local_fs::short_read_ends_file;
pub use outline_cache::{
    holds_structure, outline_and_uses_of, outline_of, MAX_ENTRIES as STRUCTURE_CACHE_FILES,
    MAX_SYMBOLS as STRUCTURE_CACHE_WEIGHT,
};
pub use outline_file::{
    outline_file, outline_file_with, read_named, FileOutline, OutlineExtras,
    DEFAULT_MAX_ITEMS as DEFAULT_OUTLINE_MAX_ITEMS, MAX_FILE_BYTES as MAX_OUTLINE_FILE_BYTES,
};
pub use parallel_walk::Start as WalkStart;
pub use parallel_walk::WalkEntry;
pub use path_order::{file_name_bytes, path_order};
pub use results::{
    BinaryStop, ContextLine, FileStructure, GrepSummary, Hit, HitSymbol, IgnoredCount,
};
pub use source::{
    system_time, FileFeed, FileList, FileSource, KnownStamp, ListedFile, Narrowing, SourceFile,
    TakesDir,
};
pub use walk::{
    cores, default_threads, resolve_target, ErrorLog, Filters, IgnoredRoot, Target, WalkOptions,
    Walker,
};

/// Sorting shared by grep and glob.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortOrder {
    /// Component-wise byte order of the relative path (what a sorted
    /// directory walk yields, like `rg --sort path`).
    #[default]
    Path,
    /// Newest modification time first, ties broken by path.
    Mtime,
}

#[cfg(test)]
mod glob_tests;
#[cfg(test)]
mod grep_tests;
#[cfg(test)]
mod grouping_tests;
#[cfg(test)]
mod ignored_tests;
#[cfg(test)]
mod scan_tests;
#[cfg(test)]
mod source_tests;
#[cfg(test)]
mod walk_oracle_tests;
