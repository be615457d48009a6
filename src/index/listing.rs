//! The file table as discovery reads it: `locate` ranks paths and `trace`
//! reads the files that may mention its subject, and both would otherwise
//! walk the tree first. A listing hands them the files a walk of the
//! directory would hand out, from the table of a ready index, with each
//! file's modification time (locate's tie-breaker) and, when a pattern was
//! given, whether the postings allow it to match.
//!
//! Like a search over candidates, it never decides anything: a file the
//! postings rule out is one the pattern cannot match, and the caller still
//! counts it as seen, so results and counts are the walk's.

use super::live::system_time;
use super::scope::Scope;
use super::table::{Entry, Stamp, Table};
use crate::search::IgnoredRoot;
use fixedbitset::FixedBitSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// One file of a listing.
#[derive(Debug, Clone, Copy)]
pub struct ListedEntry<'a> {
    pub path: &'a Path,
    stamp: Option<Stamp>,
    /// False only when the postings rule the listing's pattern out for this
    /// file (always true without a pattern).
    pub candidate: bool,
}

impl ListedEntry<'_> {
    /// The modification time the walk's `stat` would give; only asked for
    /// the few files a caller keeps.
    pub fn mtime(&self) -> SystemTime {
        let stamp = Stamp::current(self.stamp, self.path);
        stamp.map_or(UNIX_EPOCH, |s| system_time(s.mtime))
    }
}

/// The files of one walk of a directory, read off a snapshot of the table
/// (a change while the caller runs copies the table first).
pub struct Listing {
    table: Arc<Table>,
    scope: Scope,
    /// The documents the pattern allows; `None`: every file may match.
    docs: Option<FixedBitSet>,
}

impl Listing {
    pub(super) fn new(table: Arc<Table>, scope: Scope, docs: Option<FixedBitSet>) -> Listing {
        Listing { table, scope, docs }
    }

    /// The ignored roots the walk would set aside, in path order.
    pub fn ignored_roots(&self) -> &[IgnoredRoot] {
        &self.scope.ignored_roots
    }

    /// The project's files, in the walk's order.
    pub fn project(&self) -> Vec<ListedEntry<'_>> {
        let files = self.scope.project(&self.table);
        files.map(|e| self.listed(e)).collect()
    }

    /// The files under ignored root `index` of [`Listing::ignored_roots`].
    pub fn ignored(&self, index: usize) -> Vec<ListedEntry<'_>> {
        let files = self.scope.ignored(&self.table, index);
        files.map(|e| self.listed(e)).collect()
    }

    fn listed<'a>(&'a self, e: &'a Entry) -> ListedEntry<'a> {
        let candidate = is_candidate(self.docs.as_ref(), e);
        ListedEntry {
            path: &e.path,
            stamp: e.stamp,
            candidate,
        }
    }
}

/// Whether `e` may hold a match: not ruled out by `docs` (the documents a
/// query allows; `None`: all), and always for a file whose contents are
/// not in the postings.
pub(super) fn is_candidate(docs: Option<&FixedBitSet>, e: &Entry) -> bool {
    match (docs, e.doc) {
        (Some(docs), Some(d)) => docs.contains(d as usize),
        _ => true,
    }
}
