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
use super::delta::Delta;
use super::planner::{self, Query};
use super::roots::index_for;
use super::table::{Entry, Table, NO_DOC};
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
        // Only a query that can rule a file out makes the delta worth asking.
        let delta = (q.as_ref())
            .filter(|q| !matches!(q, Query::All) && pic.delta.len() > 0)
            .map(|q| (pic.delta.clone(), q.clone()));
        Some(TableFeed {
            table: pic.table.clone(),
            doc_at: pic.doc_at.clone(),
            view,
            docs,
            delta,
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
    /// The keys of files read since the generation, and the query to test
    /// them with: a file without a document is a candidate unless they
    /// rule it out.
    delta: Option<(Arc<Delta>, Query)>,
}

impl TableFeed {
    fn file<'a>(&self, e: &'a Entry) -> SourceFile<'a> {
        SourceFile {
            path: &e.path,
            candidate: allows(self.docs.as_ref(), e.doc) && self.delta_allows(e),
            stamp: known(e.stamp),
        }
    }

    /// Whether the delta leaves `e` a candidate (always, for a file with a
    /// document: the postings decided that).
    fn delta_allows(&self, e: &Entry) -> bool {
        match &self.delta {
            Some((delta, q)) if e.doc.is_none() => delta.allows(&e.path, e.stamp, q),
            _ => true,
        }
    }
}

impl FileFeed for TableFeed {
    fn ignored_roots(&self) -> &[IgnoredRoot] {
        self.view.ignored_roots(&self.table)
    }

    fn project(&self) -> Box<dyn Iterator<Item = SourceFile<'_>> + '_> {
        Box::new(self.view.project(&self.table).map(|e| self.file(e)))
    }

    fn ignored(&self, index: usize) -> Box<dyn Iterator<Item = SourceFile<'_>> + '_> {
        Box::new(self.view.ignored(&self.table, index).map(|e| self.file(e)))
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
        let docs = self.docs.as_ref();
        // Chunk by chunk of the table, beside its documents: an entry's
        // place is known without looking it up, and only the documents are
        // read until one is allowed.
        let entries = (self.table.entries.slices(run)).flat_map(move |(start, chunk)| {
            let doc_at = self.doc_at.range(start..start + chunk.len());
            (chunk.iter().zip(doc_at))
                .filter(move |(_, &d)| allows(docs, Some(d).filter(|&d| d != NO_DOC)))
                .map(|(e, _)| e)
        });
        Box::new(
            entries
                .filter(|e| self.view.admits(e) && self.delta_allows(e))
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

/// Whether the file of document `doc` may hold a match: not ruled out by
/// `docs` (the documents a query allows; `None`: all), and always for a
/// file whose contents are not in the postings (`doc` is `None`).
fn allows(docs: Option<&FixedBitSet>, doc: Option<u32>) -> bool {
    match (docs, doc) {
        (Some(docs), Some(d)) => docs.contains(d as usize),
        _ => true,
    }
}
