//! Building a picture: the store's writer lock, the table walk, then every
//! file read once (`read.rs`: on one thread per core, each thread taking
//! parts of the table in turn and filling its own lists over the part's
//! run of documents); the parts, written as segments, are merged key by
//! key into the generation. Or, when the store holds a generation of this
//! root, that generation re-validated (`revalidate.rs`: only the files
//! that changed read again), unless so much changed that a build from
//! scratch costs less.

use super::builder::Sorted;
use super::format::Meta;
use super::lists::ListSource;
use super::merge::merge_in_memory;
use super::postings::Postings;
use super::read::{read_files, Part};
use super::revalidate::{fresh_table, revalidate};
use super::store::{Store, WriterLock};
use super::table::{self, Entry, Table};
use super::watch::Watcher;
use super::{IndexConfig, NotBuilt};
use crate::search::CancelToken;
use std::path::Path;
use std::time::SystemTime;

pub struct Built {
    pub table: Table,
    pub postings: Postings,
    pub watcher: Watcher,
    /// The device and inode the root named when the walk began.
    pub root_id: (u64, u64),
    /// Why the picture could not be saved in the store (unwritable, disk
    /// full); `None`: it is saved (or was reused as saved).
    pub unsaved: Option<String>,
    /// Re-validated from a saved generation: how many files were read
    /// again; `None`: built from scratch.
    pub reread: Option<usize>,
    /// Re-validated by walking the tree (`true`) or by stamping the saved
    /// table in place; `None`: built from scratch.
    pub walked: Option<bool>,
}

const SAVED_NONE: &str = "no index of this tree was saved by an earlier process";
const SAVED_BUSY: &str = "another process is writing this tree's index";
const SAVED_STALE: &str = "the saved index is out of date (too many files changed since)";

/// Holds glibc's mmap threshold at its documented default (128 KiB), for
/// the whole process, from the first build on. glibc otherwise raises it
/// each time a large block it mapped is freed (up to 32 MB); the build's
/// file buffers, key lists and growing posting lists are then carved out
/// of its per-thread arenas and leave them fragmented past what
/// `malloc_trim` can give back: 53-89 MB of anonymous memory stayed after a
/// build of the Linux tree, 31 MB with the threshold held.
fn hold_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// The build's transient buffers are freed by now; glibc keeps freed
/// memory in its arenas unless asked, which would show as resident memory
/// of the Node process long after the build.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Builds (or re-validates) the picture of `root`. The store's writer lock
/// is held throughout: a second process building the same root waits for
/// it (its searches scan meanwhile) and then re-validates what the first
/// one wrote instead of building again.
pub fn build(root: &Path, config: &IndexConfig, cancel: &CancelToken) -> Result<Built, NotBuilt> {
    hold_mmap_threshold();
    let store = Store::of(root, config);
    if config.saved_only && !store.dir.is_dir() {
        return Err(NotBuilt::Off(SAVED_NONE.into()));
    }
    let (lock, mut unsaved) = take_lock(&store, config, cancel)?;
    if lock.is_some() {
        store.touch();
    }
    let watcher = Watcher::with_cap(config.watch_cap).map_err(|e| NotBuilt::Off(e.to_string()))?;
    let root_id = table::identity(root)
        .ok_or_else(|| NotBuilt::Failed(format!("cannot stat {}", root.display())))?;
    let walk_start = SystemTime::now();
    let saved = lock.as_ref().and_then(|_| store.open_newest(root));
    if config.saved_only && saved.is_none() {
        return Err(NotBuilt::Off(SAVED_NONE.into()));
    }
    let (saved, mut table) = fresh_table(root, config, saved, &watcher, cancel)?;
    if let Some(f) = watcher.failure() {
        // The watch limit is a state the index leaves by itself (stale, built
        // again later); any other watch failure turns it off.
        if f.starts_with(super::watch::WATCH_LIMIT) {
            return Err(NotBuilt::Failed(f));
        }
        return Err(NotBuilt::Off(f));
    }
    check_file_count(table.entries.len(), config)?;
    if let Some(saved) = saved {
        let walked = saved.walked;
        let found = revalidate(root, config, &store, saved, &mut table, walk_start, cancel);
        if let Some(result) = found {
            let (postings, why, reread) = result?;
            release_freed_memory();
            return Ok(Built {
                table,
                postings,
                watcher,
                root_id,
                unsaved: why.or(unsaved),
                reread: Some(reread),
                walked: Some(walked),
            });
        }
    }
    if config.saved_only {
        return Err(NotBuilt::Off(SAVED_STALE.into()));
    }
    let segment_dir = lock.as_ref().map(|_| store.dir.as_path());
    let parts = read_every_file(&mut table, root, segment_dir, cancel)?;
    let saving = lock.as_ref().map(|_| &store);
    let postings = save_or_merge(
        root,
        config,
        saving,
        &table,
        walk_start,
        parts,
        &mut unsaved,
    )?;
    if lock.is_some() && unsaved.is_none() {
        store.evict(config.max_bytes);
    }
    drop(lock);
    release_freed_memory();
    Ok(Built {
        table,
        postings,
        watcher,
        root_id,
        unsaved,
        reread: None,
        walked: None,
    })
}

/// The store's writer lock, and why the picture will not be saved when
/// there is none. A saved-only picture does not wait for another writer.
fn take_lock(
    store: &Store,
    config: &IndexConfig,
    cancel: &CancelToken,
) -> Result<(Option<WriterLock>, Option<String>), NotBuilt> {
    let dir = store.dir.display();
    Ok(match store.prepare() {
        Err(e) => (None, Some(format!("cannot create {dir}: {e}"))),
        Ok(()) if config.saved_only => match store.try_lock() {
            Ok(Some(l)) => (Some(l), None),
            Ok(None) => return Err(NotBuilt::Off(SAVED_BUSY.into())),
            Err(e) => return Err(NotBuilt::Off(format!("cannot lock {dir}: {e}"))),
        },
        Ok(()) => match store.lock(cancel) {
            Ok(Some(l)) => (Some(l), None),
            Ok(None) => return Err(NotBuilt::Failed("stopped".into())),
            Err(e) => (None, Some(format!("cannot lock {dir}: {e}"))),
        },
    })
}

fn check_file_count(n: usize, config: &IndexConfig) -> Result<(), NotBuilt> {
    if n < config.min_files {
        return Err(NotBuilt::Off(format!(
            "{n} files, fewer than index.minFiles ({})",
            config.min_files
        )));
    }
    if n > config.max_files {
        // The walk stopped there: the tree may hold many more.
        return Err(NotBuilt::Off(format!(
            "more files than index.maxFiles ({})",
            config.max_files
        )));
    }
    Ok(())
}

/// Reads every file of `table` for a build from scratch (documents are the
/// table's positions), setting each entry's document. The lists come back
/// in parts (see `read_files`), each written as a segment in `segment_dir`
/// (kept in memory without one).
fn read_every_file(
    table: &mut Table,
    root: &Path,
    segment_dir: Option<&Path>,
    cancel: &CancelToken,
) -> Result<Vec<Part>, NotBuilt> {
    let files: Vec<&Entry> = table.entries.iter().collect();
    let read = read_files(&files, 0, root, segment_dir, cancel);
    drop(files);
    let Some(read) = read else {
        return Err(NotBuilt::Failed("stopped".into()));
    };
    for (i, e) in table.entries.iter_mut().enumerate() {
        let single = e.stamp.is_some_and(|s| s.nlink == 1);
        e.doc = (read.indexed[i] && single).then_some(i as u32);
    }
    let mut parts = read.parts;
    if parts.is_empty() {
        parts.push(Box::new(Sorted::default()));
    }
    Ok(parts)
}

/// The postings of `parts` merged (a build from scratch of `table`, walked
/// from `walk_start`): written as the store's next generation when `store`
/// is given (the caller holds its lock), else, or when that
/// fails (`unsaved` says why), merged in memory.
fn save_or_merge(
    root: &Path,
    config: &IndexConfig,
    store: Option<&Store>,
    table: &Table,
    walk_start: SystemTime,
    parts: Vec<Part>,
    unsaved: &mut Option<String>,
) -> Result<Postings, NotBuilt> {
    let sources: Vec<&dyn ListSource> = parts
        .iter()
        .map(|p| p.as_ref() as &dyn ListSource)
        .collect();
    if let Some(no) = config.too_big(sources.iter().map(|s| s.size()).sum()) {
        return Err(no);
    }
    let meta = &Meta {
        walk_start,
        built_at: SystemTime::now(),
        next_doc: table.entries.len() as u32,
    };
    let Some(store) = store else {
        return Ok(merge_in_memory(&sources));
    };
    match store.write_generation(store.next_generation(), root, table, meta, &sources) {
        Ok(p) => Ok(p),
        Err(e) => {
            *unsaved = Some(format!("cannot write {}: {e}", store.dir.display()));
            Ok(merge_in_memory(&sources))
        }
    }
}
