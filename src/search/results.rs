//! What a content search hands back: hits (with their context lines and,
//! with grouping, their symbols) and the summary. Shared by both pipelines,
//! the file searcher and the napi glue, so it lives apart from the options
//! and the plan in `grep.rs`.

use super::cancel::CancelToken;
use super::display::DisplayPath;
use super::walk::ErrorLog;
use crate::structure::{Language, Symbol, SymbolKind};
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextLine {
    pub line: u64,
    pub text: String,
    pub cut_before: usize,
    pub cut_after: usize,
}

/// One matching line (content mode) or one file (files / count modes,
/// where `line` is 0 and `count` holds the number of matching lines). In
/// content mode `count` is 1, or 0 for a matching line shown only as part
/// of the after-context past `limit` (as `rg -m N -A M` shows it).
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

/// A file holding a NUL byte that matched: its hits are those before the
/// NUL (rg's binary rule). A file found by the walk was not searched past
/// the 64 KiB block holding the NUL (rg: "WARNING: stopped searching binary
/// file after match"); a file named alone was, and a match past the NUL is
/// only reported by this entry (rg: "binary file matches").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryStop {
    /// Display path, as on the file's hits.
    pub path: Arc<DisplayPath>,
    /// Byte offset of the first NUL the search met.
    pub offset: u64,
    pub ignored: bool,
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
    /// Files dropped at a NUL byte before any match (count mode: whatever
    /// they matched, as `rg -c` drops them).
    pub binary_skipped: u64,
    /// Content mode: files whose shown hits stop at a NUL byte, in output
    /// order (each has hits shown, or is the one file named).
    pub binary_stopped: Vec<BinaryStop>,
    pub errors: ErrorLog,
    /// Matches found in ignored files, per ignored root, as far as searched.
    pub ignored: Vec<IgnoredCount>,
    /// Ignored roots the search stopped before finishing.
    pub ignored_unsearched: Vec<String>,
    pub elapsed_ms: f64,
}

impl GrepSummary {
    /// The tail both pipelines end with: walk errors joined to the file
    /// errors, why the search stopped, and how long it took.
    pub(super) fn close(&mut self, walk_errors: ErrorLog, cancel: &CancelToken, started: Instant) {
        self.errors.merge(walk_errors);
        (self.cancelled, self.timed_out) = cancel.flags();
        self.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    }
}
