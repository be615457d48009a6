//! The one way into the index: [`source_for`] decides whether a search of
//! a directory (grep, glob, locate, trace) runs over the file table of a
//! ready index, narrowed by its postings or not, or walks, and says how it
//! was served.
//!
//! The table hands out exactly the files the search's own walk would (see
//! `view.rs`), in its order, each with the stamp the table keeps and
//! whether the postings allow the search's pattern in it. It never decides
//! a match: a file ruled out is one the pattern cannot match, which a
//! content search skips and discovery still counts as seen.

use super::chunked::Chunked;
use super::planner::{self, Query};
use super::roots::index_for;
use super::table::{self, Table, DELTA_DOC, NO_DOC};
use super::view::TableView;
use super::{IndexMode, IndexUse};
use crate::search::path_order::at_or_below;
use crate::search::stamp::Stamp;
use crate::search::{FileFeed, FileSource, IgnoredRoot, KnownStamp, Narrowing, SourceFile};
use fixedbitset::FixedBitSet;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// The source a search of the walk `source` runs over, and how the index
/// served it: a feed from the table of a ready index of the directory (or
/// of one above it) that can give the walk's files, else the walk itself.
/// A source that is no walk (one named file) is kept. Only
/// [`IndexMode::Auto`] starts an index.
pub fn source_for(
    source: FileSource,
    narrowing: &Narrowing<'_>,
    mode: IndexMode,
) -> (FileSource, IndexUse) {
    if mode == IndexMode::Off {
        return (source, IndexUse::Off);
    }
    let FileSource::Walk(walker) = source else {
        return (source, IndexUse::Scan);
    };
    let Some(idx) = index_for(walker.root(), mode) else {
        return (FileSource::Walk(walker), IndexUse::Off);
    };
    let q = (narrowing.pattern).map(|p| planner::plan(p, narrowing.literal, narrowing.ignore_case));
    // A search with a limit that the postings cannot narrow walks: it
    // usually ends in its first files (`e`, limit 100, in the first two
    // on the Linux tree), which the walk reaches after listing a few
    // directories, while the table's feed queues files ahead and hands
    // over every ignored root first (1.2 against 0.9 ms).
    if narrowing.limited && matches!(q, Some(Query::All)) {
        return (FileSource::Walk(walker), IndexUse::Scan);
    }
    let found = idx.with_fresh(|pic| {
        let view = TableView::new(&pic.table, idx.root(), &walker)?;
        // The table knows its directories by path only (every one its walk
        // listed, ignored ones too): a listing that wants directories is
        // answered from its files only when none the walk of the view's
        // root would meet is one it takes.
        if let Some(dirs) = narrowing.dirs {
            let root = walker.root();
            let taken = |d: &Path| at_or_below(d, root) && dirs.takes_dir(d);
            if pic.table.dirs.iter().any(|(d, _)| taken(d)) {
                return None;
            }
        }
        let docs = q.as_ref().and_then(|q| pic.narrowed(q, idx.config()));
        // The delta's files are ruled out by a bit each, as the
        // generation's are: its lists are evaluated once, here.
        let delta_docs = q.as_ref().and_then(|q| pic.delta_narrowed(q));
        Some(TableFeed {
            table: pic.table.clone(),
            doc_at: pic.doc_at.clone(),
            view,
            docs,
            delta_docs,
        })
    });
    match found {
        Ok(feed) => (FileSource::Feed(Box::new(feed)), IndexUse::Used),
        Err(how) => (FileSource::Walk(walker), how),
    }
}

/// The files of a view, read off a snapshot of the table as the search
/// asks for them (a change while it runs copies the table first).
struct TableFeed {
    table: Arc<Table>,
    view: TableView,
    /// The table's documents by entry, taken with it (see `Picture::doc_at`).
    doc_at: Arc<Chunked<u32>>,
    /// The documents the pattern allows; `None`: every file is a candidate.
    docs: Option<FixedBitSet>,
    /// The delta's slots the pattern allows (see `Delta::allowed`); `None`:
    /// all of them.
    delta_docs: Option<FixedBitSet>,
}

impl TableFeed {
    /// Whether the file whose document by entry is `d` may hold a match:
    /// not ruled out by the postings (or the delta, for a file it read),
    /// and always for a file whose contents neither holds.
    fn allows(&self, d: u32) -> bool {
        let (set, at) = match d {
            NO_DOC => return true,
            d if table::in_postings(d) => (&self.docs, d),
            d => (&self.delta_docs, d - DELTA_DOC),
        };
        set.as_ref().is_none_or(|s| s.contains(at as usize))
    }

    /// The files of the table positions `run` the view admits.
    fn files_in(&self, run: Range<usize>) -> Box<dyn Iterator<Item = SourceFile<'_>> + '_> {
        let docs = self.doc_at.range(run.clone());
        Box::new(
            (self.table.entries.range(run).zip(docs))
                .filter(|(e, _)| self.view.admits(e))
                .map(|(e, &d)| SourceFile {
                    path: &e.path,
                    candidate: self.allows(d),
                    stamp: known(e.stamp),
                }),
        )
    }
}

impl FileFeed for TableFeed {
    fn ignored_roots(&self) -> &[IgnoredRoot] {
        self.view.ignored_roots(&self.table)
    }

    fn project(&self) -> Box<dyn Iterator<Item = SourceFile<'_>> + '_> {
        self.files_in(self.view.project_range())
    }

    fn ignored(&self, index: usize) -> Box<dyn Iterator<Item = SourceFile<'_>> + '_> {
        self.files_in(self.view.ignored_range(index))
    }

    fn project_candidates(&self) -> Box<dyn Iterator<Item = &Path> + '_> {
        self.candidates_in(self.view.project_range())
    }

    fn ignored_candidates(&self, index: usize) -> Box<dyn Iterator<Item = &Path> + '_> {
        self.candidates_in(self.view.ignored_range(index))
    }
}

impl TableFeed {
    /// The candidates among the entries at `run`, found by their documents
    /// alone: an entry ruled out is never read.
    fn candidates_in(&self, run: Range<usize>) -> Box<dyn Iterator<Item = &Path> + '_> {
        // Chunk by chunk of the table, beside its documents: an entry's
        // place is known without looking it up, and only the documents are
        // read until one is allowed.
        let entries = (self.table.entries.slices(run)).flat_map(move |(start, chunk)| {
            let doc_at = self.doc_at.range(start..start + chunk.len());
            (chunk.iter().zip(doc_at))
                .filter(move |(_, &d)| self.allows(d))
                .map(|(e, _)| e)
        });
        Box::new(
            entries
                .filter(|e| self.view.admits(e))
                .map(|e| e.path.as_path()),
        )
    }
}

/// A table stamp as the search may use it: a write through another name of
/// a hard-linked file may not be reported for this one, so such a file's
/// stamp is read afresh when asked (glob and discovery show times and
/// sizes from the table).
fn known(stamp: Option<Stamp>) -> KnownStamp {
    match stamp {
        Some(s) if s.nlink > 1 => KnownStamp::Read,
        Some(s) => KnownStamp::Kept {
            mtime: s.mtime,
            size: s.size,
        },
        None => KnownStamp::Missing,
    }
}
