//! Ranked file discovery (`locate`) and relation tracing (`trace`), built on
//! the walker (`crate::search`) and tree-sitter outlines
//! (`crate::structure`). Napi-free: `src/napi/discover.rs` only converts.
//!
//! Both commands share one token layer (`tokens`), so every identifier form
//! of a query means the same thing, and both print agentgrep's text shapes
//! (rendered here, so the CLI and the Pi tools print the same bytes).

mod answer;
mod bearing;
pub mod content;
pub mod context;
mod context_debug;
pub mod dsl;
pub mod files;
mod final_order;
pub mod finish;
mod forms;
mod go_implementers;
mod identifiers;
pub mod locate;
mod locate_pass;
mod locate_render;
mod locate_score;
mod pass;
mod phrase;
mod query;
mod question;
mod rarity;
mod region_facts;
mod regions;
pub mod relate;
pub mod role;
mod text_forms;
pub mod tokens;
pub mod trace;
mod trace_file;
mod trace_render;
pub mod warm;
mod word_feed;

#[cfg(test)]
mod context_tests;
#[cfg(test)]
mod implementation_tests;
#[cfg(test)]
mod index_tests;
#[cfg(test)]
mod ranking_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod topic_tests;
#[cfg(test)]
mod trace_tests;
#[cfg(test)]
mod unicode_tests;

use crate::error_code::{CodedError, ErrorCode};
use crate::search::SearchError;

/// Errors a caller can act on; the text names the input and, for the trace
/// DSL, shows a valid query.
#[derive(Debug)]
pub enum DiscoverError {
    EmptyQuery,
    /// The query has no letters or digits (`--`, `/`).
    NoWords(String),
    Dsl(String),
    NotADirectory(String),
    Search(SearchError),
}

impl DiscoverError {
    /// The query language's errors are a bad pattern; a file given as the
    /// directory to search is the wrong kind of path.
    pub fn code(&self) -> ErrorCode {
        match self {
            DiscoverError::EmptyQuery | DiscoverError::NoWords(_) | DiscoverError::Dsl(_) => {
                ErrorCode::InvalidPattern
            }
            DiscoverError::NotADirectory(_) => ErrorCode::NotAFile,
            DiscoverError::Search(e) => e.code(),
        }
    }

    /// One of each variant of its own, for the glue's `errorSamples()` (`src/napi/error.rs`).
    pub fn samples() -> Vec<DiscoverError> {
        let dsl = dsl::TraceQuery::parse("relation:defined").err();
        [
            DiscoverError::EmptyQuery,
            DiscoverError::NoWords("--".into()),
        ]
        .into_iter()
        .chain(dsl)
        .chain([DiscoverError::NotADirectory("/x/a.txt".into())])
        .collect()
    }
}

impl From<DiscoverError> for CodedError {
    fn from(e: DiscoverError) -> Self {
        CodedError::new(e.code(), e.to_string())
    }
}

impl std::fmt::Display for DiscoverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DiscoverError::EmptyQuery => write!(f, "Query must not be empty"),
            DiscoverError::NoWords(q) => write!(
                f,
                "Query has no letters or digits: {q:?} (give words or an identifier, e.g. auth status)"
            ),
            DiscoverError::Dsl(msg) => write!(f, "{msg}"),
            DiscoverError::NotADirectory(p) => {
                write!(f, "Not a directory: {p} (give the directory to search in)")
            }
            DiscoverError::Search(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for DiscoverError {}

/// A score as results show it: one decimal (ranking uses the full value).
pub fn shown_score(score: f64) -> f64 {
    (score * 10.0).round() / 10.0
}

impl From<SearchError> for DiscoverError {
    fn from(e: SearchError) -> Self {
        DiscoverError::Search(e)
    }
}
