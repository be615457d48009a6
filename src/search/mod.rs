//! Content search and file discovery. Everything here is napi-free so it can be
//! tested with plain `cargo test`; `src/lib.rs` only converts types.

pub mod cancel;
pub mod classify;
pub mod display;
pub mod file_search;
pub mod glob;
pub mod grep;
pub mod line_window;
pub mod ordered;
pub mod outline_cache;
pub mod unordered;
pub mod walk;

/// Errors a caller can act on. Their `Display` text is what reaches the user,
/// so each one names the offending input.
#[derive(Debug)]
pub enum SearchError {
    EmptyPattern,
    InvalidPattern(String),
    PathNotFound(String),
    NotSearchable(String),
    InvalidGlob(String),
    UnknownType(String),
}

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SearchError::EmptyPattern => write!(f, "Pattern must not be empty"),
            SearchError::InvalidPattern(msg) => write!(f, "Invalid pattern: {msg}"),
            SearchError::PathNotFound(p) => write!(f, "Path not found: {p}"),
            SearchError::NotSearchable(p) => {
                write!(
                    f,
                    "Not a regular file or directory (FIFO, socket or device): {p}"
                )
            }
            SearchError::InvalidGlob(msg) => write!(f, "Invalid glob: {msg}"),
            SearchError::UnknownType(t) => write!(
                f,
                "Unknown file type: {t} (use ripgrep's type names, e.g. rust, ts, py, c)"
            ),
        }
    }
}

impl std::error::Error for SearchError {}

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
