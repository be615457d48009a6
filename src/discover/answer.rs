//! What `locate` and `trace` answer: the ranked files with their reasons,
//! structure and (trace) regions, the counts, and how the pass ended. The
//! commands fill these, the renderers print them and the glue converts
//! them; none of those needs another's code to read them.

use super::dsl::TraceQuery;
use super::regions::Region;
use super::role::Role;
use crate::index::IndexUse;
use crate::search::{DisplayPath, ErrorLog};
use crate::structure::{Language, Symbol};

#[derive(Debug, Clone)]
pub struct LocatedFile {
    pub path: DisplayPath,
    pub score: f64,
    pub role: Role,
    pub language: Option<Language>,
    /// The signals that scored, in words.
    pub why: Vec<String>,
    /// The symbols bearing on the query (see `bearing_symbols`), in the first files only.
    pub structure: Vec<Symbol>,
    pub more_symbols: usize,
    pub ignored: bool,
}

#[derive(Debug, Clone, Default)]
pub struct LocateResult {
    pub query: String,
    pub files: Vec<LocatedFile>,
    /// Files whose path or text matched the query at all.
    pub candidates: u64,
    pub files_seen: u64,
    /// Ignored roots not walked (the project alone filled the list, or the
    /// walk stopped).
    pub ignored_unsearched: Vec<String>,
    pub timed_out: bool,
    pub cancelled: bool,
    /// Set when files' contents were not searched (too many to read
    /// without a ready index): the ranking is by path alone.
    pub content_note: Option<String>,
    pub errors: ErrorLog,
    pub elapsed_ms: f64,
    /// `Used`: the paths came from the index's table (no walk).
    pub index: IndexUse,
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct TracedFile {
    pub path: DisplayPath,
    pub role: Role,
    pub language: Option<Language>,
    pub score: f64,
    pub why: Vec<String>,
    pub structure: Vec<Symbol>,
    pub more_symbols: usize,
    pub regions: Vec<Region>,
    pub ignored: bool,
}

#[derive(Debug, Clone, Default)]
pub struct TraceResult {
    pub query: Option<TraceQuery>,
    pub files: Vec<TracedFile>,
    /// Files with at least one occurrence of the subject.
    pub files_matched: u64,
    pub files_scanned: u64,
    /// Whether any shown file had structure (else regions are plain
    /// word-boundary matches, and the text says so).
    pub structure_found: bool,
    pub timed_out: bool,
    pub cancelled: bool,
    pub errors: ErrorLog,
    pub elapsed_ms: f64,
    /// `Used`: the files came from the index's table and only those its
    /// postings allow were read.
    pub index: IndexUse,
    pub text: String,
}
