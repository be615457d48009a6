//! Re-validating a saved generation at a start: the table as the tree is
//! now (the saved one stamped again in place by `restamp.rs`, or a walk),
//! compared with the saved one; each file whose stamp is unchanged and
//! settled keeps its saved document, and the rest are read again and their
//! postings merged after the saved ones into a new generation, or left
//! unread (always candidates) while they are few. `build.rs` builds from
//! scratch when so much changed that this would cost more.

use super::format::Meta;
use super::lists::ListSource;
use super::postings::Postings;
use super::read::{read_files, Part};
use super::restamp::restamp;
use super::store::{Saved, Store};
use super::table::{self, Entry, Table};
use super::watch::Watcher;
use super::{IndexConfig, NotBuilt};
use crate::search::stamp::Stamp;
use crate::search::CancelToken;
use std::path::Path;
use std::time::SystemTime;

/// A saved-only picture (`IndexConfig::saved_only`) leaves at most one file
/// in this many unread; past that a search through it reads too many files
/// one by one, and the scan is as fast.
pub const SAVED_ONLY_UNREAD_SHARE: usize = 20;

/// Whether a stamp was last changed long enough before the walk of the
/// generation `meta` describes that, unchanged now, it proves nothing
/// changed since (see `search::stamp::RACY`); `None` when no stamp can.
fn settled_before(meta: &Meta, config: &IndexConfig) -> Option<impl Fn(&Stamp) -> bool + Sync> {
    let (walk_start, racy) = (meta.walk_start, config.racy);
    (walk_start.checked_sub(racy)).map(|_| move |s: &Stamp| s.settled(walk_start, racy))
}

/// The postings a re-validation ends with, why they are not saved (if
/// not), and how many files were read again.
pub(super) type Revalidated = (Postings, Option<String>, usize);

/// What re-validation needs of a saved generation: its postings and, for
/// each file of the fresh table, the saved file of the same path (`was`,
/// an index into `files`: its stamp and document).
pub(super) struct SavedFiles {
    /// The generation's number, and whether the fresh table came from a
    /// walk (the saved one could not be stamped in place).
    generation: u64,
    pub(super) walked: bool,
    meta: Meta,
    postings: Postings,
    files: Vec<(Option<Stamp>, Option<u32>)>,
    was: Vec<Option<usize>>,
}

impl SavedFiles {
    /// `saved` against a table from a fresh walk.
    fn against_walk(saved: Saved, fresh: &Table) -> SavedFiles {
        SavedFiles {
            was: table::same_paths(&saved.table, fresh),
            files: (saved.table.entries.iter())
                .map(|e| (e.stamp, e.doc))
                .collect(),
            generation: saved.generation,
            walked: true,
            meta: saved.meta,
            postings: saved.postings,
        }
    }

    /// `saved` whose table was stamped again in place (`restamp`): the
    /// fresh table is the saved one, with `stamps`.
    fn restamped(saved: Saved, stamps: Vec<Option<Stamp>>) -> (SavedFiles, Table) {
        let mut table = saved.table;
        let files = (table.entries.iter()).map(|e| (e.stamp, e.doc)).collect();
        for (e, s) in table.entries.iter_mut().zip(stamps) {
            e.stamp = s;
        }
        let was = (0..table.entries.len()).map(Some).collect();
        let saved = SavedFiles {
            generation: saved.generation,
            walked: false,
            meta: saved.meta,
            postings: saved.postings,
            files,
            was,
        };
        (saved, table)
    }
}

/// The saved generation's documents for the files of the fresh `table`
/// whose stamp is unchanged; the rest (changed, new, racily stamped) are
/// read again and their postings merged after the saved ones into a new
/// generation. `None`: so much changed (or so much of the saved postings
/// is dead) that a build from scratch is cheaper and smaller.
#[allow(clippy::too_many_arguments)]
pub(super) fn revalidate(
    root: &Path,
    config: &IndexConfig,
    store: &Store,
    saved: SavedFiles,
    table: &mut Table,
    walk_start: SystemTime,
    cancel: &CancelToken,
) -> Option<Result<Revalidated, NotBuilt>> {
    let settled = settled_before(&saved.meta, config)?;
    // A trusted file without a document was read and found unindexable
    // (binary, too big, unreadable): it stays so without a second read.
    let trusted = |s: &Stamp| s.nlink == 1 && settled(s);
    let (changed, live) = carry_over(table, saved.was, &saved.files, trusted);
    let next = saved.meta.next_doc as usize;
    let dead = next.saturating_sub(live);
    let n = table.entries.len();
    let rebuild = (changed.len() > 1000 && changed.len() * 4 > n)
        || (dead > 1000 && dead * 2 > next + changed.len())
        || next + changed.len() >= u32::MAX as usize;
    if rebuild {
        return None;
    }
    // A few changed files are left without a document (see
    // `IndexConfig::max_unread`): searches read them, nothing is written.
    // A saved-only picture never merges: it takes more unread files, or none.
    let unread_cap = if config.saved_only {
        config.max_unread.max(n / SAVED_ONLY_UNREAD_SHARE)
    } else {
        config.max_unread
    };
    if config.saved_only && changed.len() > unread_cap {
        return None;
    }
    if changed.len() <= unread_cap {
        if saved.walked && table.errors.count == 0 {
            // The saved table could not be stamped in place; this one can,
            // next time. Not saved: the next start walks again.
            let meta = Meta {
                walk_start,
                ..saved.meta
            };
            let _ = store.write_table(saved.generation, root, table, &meta, &changed);
        }
        return Some(Ok((saved.postings, None, 0)));
    }
    let Some(parts) = read_changed(table, &changed, next, root, &store.dir, cancel) else {
        return Some(Err(NotBuilt::Failed("stopped".into())));
    };
    let mut sources: Vec<&dyn ListSource> = vec![&saved.postings];
    sources.extend(parts.iter().map(|p| p.as_ref() as &dyn ListSource));
    if let Some(no) = config.too_big(sources.iter().map(|s| s.size()).sum()) {
        return Some(Err(no));
    }
    let meta = Meta {
        walk_start,
        built_at: SystemTime::now(),
        next_doc: (next + changed.len()) as u32,
    };
    let written = store.write_generation(store.next_generation(), root, table, &meta, &sources);
    if written.is_err() && saved.postings.is_damaged() {
        // A saved list failed its checksum while being merged (the file is
        // gone from the store by now): build from scratch.
        return None;
    }
    Some(Ok(match written {
        Ok(p) => (p, None, changed.len()),
        Err(e) => {
            // Not saved: the changed files stay unread (always candidates)
            // over the saved postings, still mapped.
            for &i in &changed {
                table.entries[i].doc = None;
            }
            let why = format!("cannot write {}: {e}", store.dir.display());
            (saved.postings, Some(why), 0)
        }
    }))
}

/// Gives each file of `table` whose stamp is unchanged and `trusted` its
/// saved document (`was` and `files` as in [`SavedFiles`]); the others,
/// returned by index, are to be read again. Also: how many saved documents
/// are still in use.
fn carry_over(
    table: &mut Table,
    was: Vec<Option<usize>>,
    files: &[(Option<Stamp>, Option<u32>)],
    trusted: impl Fn(&Stamp) -> bool,
) -> (Vec<usize>, usize) {
    let mut changed = Vec::new();
    let mut live = 0usize;
    for (i, (e, was)) in table.entries.iter_mut().zip(was).enumerate() {
        e.doc = None;
        // A file with more than one link is never trusted to the postings.
        let Some(s) = e.stamp.filter(|s| s.nlink == 1) else {
            continue;
        };
        let was = was.map(|j| files[j]);
        match was.filter(|o| o.0.is_some_and(|w| w == s && trusted(&w))) {
            Some((_, doc)) => {
                e.doc = doc;
                live += doc.is_some() as usize;
            }
            None => changed.push(i),
        }
    }
    (changed, live)
}

/// Reads the files at `changed` (indices into `table`) as documents `next`
/// on, in order, and sets their documents; `None` when stopped.
fn read_changed(
    table: &mut Table,
    changed: &[usize],
    next: usize,
    root: &Path,
    segment_dir: &Path,
    cancel: &CancelToken,
) -> Option<Vec<Part>> {
    let files: Vec<&Entry> = changed.iter().map(|&i| &table.entries[i]).collect();
    let read = read_files(&files, next as u32, root, Some(segment_dir), cancel)?;
    drop(files);
    for (j, &i) in changed.iter().enumerate() {
        table.entries[i].doc = read.indexed[j].then_some((next + j) as u32);
    }
    Some(read.parts)
}

/// The table as the tree is now, with what re-validation needs of `saved`.
/// Most starts find the tree as it was saved: its directories and files
/// are then stamped where they are, without listing the tree.
pub(super) fn fresh_table(
    root: &Path,
    config: &IndexConfig,
    saved: Option<Saved>,
    watcher: &Watcher,
    cancel: &CancelToken,
) -> Result<(Option<SavedFiles>, Table), NotBuilt> {
    let restamped = saved.as_ref().and_then(|s| {
        let settled = settled_before(&s.meta, config)?;
        restamp(root, &s.table, watcher, &settled, cancel)
    });
    Ok(match (saved, restamped) {
        (Some(saved), Some(stamps)) => {
            let (saved, table) = SavedFiles::restamped(saved, stamps);
            (Some(saved), table)
        }
        (saved, _) => {
            let table = table::walk(root, watcher, cancel, config.max_files);
            let table = table.map_err(NotBuilt::Failed)?;
            (saved.map(|s| SavedFiles::against_walk(s, &table)), table)
        }
    })
}
