//! The on-disk store of a root's index, shared by every process that
//! indexes that root.
//!
//! Layout: `<base>/<hash of the root>/` (base: the config's folder,
//! `$PI_UTILS_INDEX_DIR`, else `~/.cache/pi-utils/index`; folders 0700,
//! files 0600) holds
//! - `gen-<N>`: a complete *generation*, the file table and the postings in
//!   one file (its bytes and their checks: `format.rs`). It is written as
//!   `gen-<N>.tmp` and renamed, so a reader only ever sees a complete
//!   file; a file that does not check out (a crash before its pages reached
//!   the disk, a truncation, a flipped byte) is removed and never trusted.
//!   Readers use the highest complete generation. A generation file is
//!   never written once renamed: older ones are unlinked after a newer one
//!   is in place, which leaves the mappings of processes still reading them
//!   valid.
//! - `table-<N>`: generation N's table stamped again by a later process
//!   (see [`Store::write_table`]), read instead of the generation's own.
//! - `lock`: an advisory lock (`flock`) held by the one process writing
//!   this folder (building, re-validating, writing a generation); another
//!   process waits for it (searching by scan meanwhile) and then reuses what
//!   the winner wrote.
//! - `last-used`: touched when a process opens the folder; the least
//!   recently used folders are evicted past the total cap (`evict.rs`).

use super::format::{self, Meta};
use super::lists::ListSource;
use super::postings::Postings;
use super::table::Table;
use super::IndexConfig;
use crate::search::CancelToken;
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The store folder of one root.
#[derive(Debug, Clone)]
pub struct Store {
    pub dir: PathBuf,
    pub(super) base: PathBuf,
    /// The base was given (config, `$PI_UTILS_INDEX_DIR`): it is created
    /// (0700) like any cache folder, but never again once this process has
    /// seen it and it was removed (a test's folder, removed after it).
    pub(super) explicit: bool,
}

/// A complete generation read back.
pub struct Saved {
    /// Its number: its table may be saved again apart (`write_table`).
    pub generation: u64,
    pub meta: Meta,
    pub table: Table,
    pub postings: Postings,
}

/// The writer lock of a store folder, released when dropped.
pub struct WriterLock {
    _file: File,
}

fn base_of(config: &IndexConfig) -> (PathBuf, bool) {
    let given = (config.store.as_ref())
        .map(|p| p.as_os_str().to_os_string())
        .or_else(|| std::env::var_os("PI_UTILS_INDEX_DIR"));
    match given {
        Some(d) if !d.is_empty() => (PathBuf::from(d), true),
        _ => (
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(std::env::temp_dir)
                .join(".cache/pi-utils/index"),
            false,
        ),
    }
}

/// Whether this process has used the given `base` (and, with `mark`,
/// records that it has now).
fn seen_base(base: &Path, mark: bool) -> bool {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static SEEN: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if mark {
        !seen.insert(base.to_path_buf())
    } else {
        seen.contains(base)
    }
}

impl Store {
    pub fn of(root: &Path, config: &IndexConfig) -> Store {
        use std::hash::{Hash, Hasher};
        let (base, explicit) = base_of(config);
        let mut h = std::collections::hash_map::DefaultHasher::new();
        root.as_os_str().hash(&mut h);
        Store {
            dir: base.join(format!("{:016x}", h.finish())),
            base,
            explicit,
        }
    }

    /// Creates the folder (mode 0700, and its base where that is missing)
    /// unless its base was given and has been removed since this process
    /// last saw it; Err says why it cannot be used.
    pub fn prepare(&self) -> io::Result<()> {
        if self.explicit && !self.base.is_dir() && seen_base(&self.base, false) {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "the index folder {} was removed while in use",
                    self.base.display()
                ),
            ));
        }
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)?;
        if self.explicit {
            seen_base(&self.base, true);
        }
        Ok(())
    }

    pub(super) fn lock_file(&self) -> io::Result<File> {
        fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(self.dir.join("lock"))
    }

    /// Takes the writer lock, waiting while another process holds it;
    /// `Ok(None)` when `cancel` stops the wait.
    pub fn lock(&self, cancel: &CancelToken) -> io::Result<Option<WriterLock>> {
        loop {
            if let Some(held) = self.try_lock()? {
                return Ok(Some(held));
            }
            if cancel.is_stopped() {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The writer lock if no other process holds it, without waiting:
    /// `Ok(None)` when one does.
    pub fn try_lock(&self) -> io::Result<Option<WriterLock>> {
        let f = self.lock_file()?;
        match f.try_lock() {
            Ok(()) => Ok(Some(WriterLock { _file: f })),
            Err(fs::TryLockError::WouldBlock) => Ok(None),
            Err(fs::TryLockError::Error(e)) => Err(e),
        }
    }

    /// Complete generation files (by name), newest first.
    fn generations(&self) -> Vec<(u64, PathBuf)> {
        let mut v: Vec<(u64, PathBuf)> = fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name();
                let n = name.to_str()?.strip_prefix("gen-")?.parse().ok()?;
                Some((n, e.path()))
            })
            .collect();
        v.sort_by_key(|g| std::cmp::Reverse(g.0));
        v
    }

    /// The number the next generation gets.
    pub fn next_generation(&self) -> u64 {
        self.generations().first().map_or(1, |g| g.0 + 1)
    }

    /// The newest generation that checks out. Damaged ones are removed on
    /// the way (they are never trusted, and a later build replaces them).
    pub fn open_newest(&self, root: &Path) -> Option<Saved> {
        for (generation, path) in self.generations() {
            let apart = self.newer_table(generation, root);
            match format::read_generation(&path, root, apart.is_none()) {
                Ok((own, postings)) => {
                    let (meta, table) = apart.or(own)?;
                    return Some(Saved {
                        generation,
                        meta,
                        table,
                        postings,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                    let _ = fs::remove_file(&path);
                    let _ = fs::remove_file(self.table_path(generation));
                }
                // Gone meanwhile (a newer one replaced it) or unreadable.
                Err(_) => {}
            }
        }
        None
    }

    fn table_path(&self, n: u64) -> PathBuf {
        self.dir.join(format!("table-{n}"))
    }

    /// The table saved for generation `n` after it was written (see
    /// [`Store::write_table`]), if one checks out; a damaged one is removed.
    fn newer_table(&self, n: u64, root: &Path) -> Option<(Meta, Table)> {
        let path = self.table_path(n);
        let bytes = fs::read(&path).ok()?;
        let found = format::parse_table_file(&bytes, root);
        if found.is_none() {
            let _ = fs::remove_file(&path);
        }
        found
    }

    /// Saves `table` (from a walk after `meta.walk_start`) as the table of
    /// generation `n`, whose postings it was matched with, so the next
    /// process can stamp it in place instead of walking: without it, a
    /// tree whose shape changed once would be walked at every start until
    /// a new generation is written. The stamps of the files at `unread`
    /// (indices, ascending) are left out: they are not in the postings, so
    /// the next process counts them as changed again (and merges them once
    /// there are many).
    /// The caller holds the lock.
    pub fn write_table(
        &self,
        n: u64,
        root: &Path,
        table: &Table,
        meta: &Meta,
        unread: &[usize],
    ) -> io::Result<()> {
        let body = format::table_file(root, table, meta, unread)?;
        let tmp = self.dir.join(format!("table-{n}.tmp"));
        let result = (|| {
            let mut f = fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)?;
            // Not fsynced: a crash that leaves the renamed file short or
            // zeroed fails its checksum and marker, and only costs a walk.
            f.write_all(&body)?;
            fs::rename(&tmp, self.table_path(n))
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }

    /// Writes generation `n` of `root` (the caller holds the lock): the
    /// table, then `sources` merged, then the trailer; renamed into place,
    /// older generations and leftovers removed. Returns the new file's
    /// postings, mapped.
    ///
    /// Not fsynced, like a table file: a crash that leaves the renamed file
    /// short, zeroed or half written fails its trailer, its checksum or a
    /// block's sum (every block is checked before it is used), and costs a
    /// build, which is all an fsync would have saved; the fsync was 40-60 ms
    /// of every build of the Linux tree, on the critical path.
    pub fn write_generation(
        &self,
        n: u64,
        root: &Path,
        table: &Table,
        meta: &Meta,
        sources: &[&dyn ListSource],
    ) -> io::Result<Postings> {
        let tmp = self.dir.join(format!("gen-{n}.tmp"));
        let done = self.dir.join(format!("gen-{n}"));
        let _ = fs::remove_file(&tmp);
        let result = (|| {
            // Read too: its blocks are summed from the file once written.
            let f = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)?;
            format::write_generation(&f, root, table, meta, sources)?;
            // A table saved apart for an earlier generation of this number
            // (since removed) must never be read with this one.
            let _ = fs::remove_file(self.table_path(n));
            fs::rename(&tmp, &done)
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        self.clean(n);
        let (_, postings) = format::read_generation(&done, root, false)?;
        Ok(postings)
    }

    /// Removes generations older than `keep`, every table saved apart (the
    /// new generation has none yet) and leftovers of writers that died (the
    /// caller holds the lock, so no one else is writing).
    fn clean(&self, keep: u64) {
        for e in fs::read_dir(&self.dir).into_iter().flatten().flatten() {
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            let old = (name.strip_prefix("gen-"))
                .and_then(|n| n.parse::<u64>().ok())
                .is_some_and(|n| n < keep);
            if old || name.starts_with("table-") || name.ends_with(".tmp") {
                let _ = fs::remove_file(e.path());
            }
        }
    }

    /// Removes this root's folder and nothing else; whether there was one.
    pub fn remove(&self) -> bool {
        fs::remove_dir_all(&self.dir).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::blocks::BLOCK_SHIFT;
    use crate::index::builder::Builder;
    use crate::index::format::time_of;
    use crate::index::keys::trigrams_of;
    use crate::index::planner::{plan, Query};
    use crate::index::table::Entry;
    use crate::search::stamp::Stamp;
    use crate::search::IgnoredRoot;

    fn table_of(root: &Path, n: usize) -> Table {
        let entries = (0..n)
            .map(|i| Entry {
                path: root.join(format!("d/f{i}.txt")),
                ignored_root: (i == n - 1).then_some(0),
                stamp: Some(Stamp {
                    size: i as u64,
                    mtime: (1_700_000_000 + i as i64, 5),
                    ctime: (1_700_000_000 + i as i64, 6),
                    ino: 100 + i as u64,
                    nlink: 1,
                }),
                doc: (i % 2 == 0).then_some(i as u32),
            })
            .collect();
        Table {
            entries,
            ignored_roots: vec![IgnoredRoot {
                path: root.join("node_modules"),
                is_dir: true,
            }],
            errors: Default::default(),
            dirs: vec![
                (root.to_path_buf(), None),
                (
                    root.join("d"),
                    Some(Stamp {
                        size: 7,
                        mtime: (1, 2),
                        ctime: (3, 4),
                        ino: 5,
                        nlink: 6,
                    }),
                ),
            ]
            .into(),
            rule_files: vec![(PathBuf::from("/.gitignore"), None)],
        }
    }

    fn meta() -> Meta {
        Meta {
            walk_start: time_of(1_800_000_000, 1),
            built_at: time_of(1_800_000_001, 2),
            next_doc: 120,
        }
    }

    fn write_one(store: &Store, root: &Path) -> Postings {
        let mut b = Builder::default();
        b.add(0, &trigrams_of(b"needle"));
        b.add(4, &trigrams_of(b"haystack"));
        // Enough lists that the blob spans several checksum blocks.
        for doc in 6..120 {
            b.add(
                doc,
                &trigrams_of(format!("line {doc} of file {doc}").as_bytes()),
            );
        }
        let sorted = b.into_sorted();
        store.prepare().unwrap();
        let n = store.next_generation();
        store
            .write_generation(n, root, &table_of(root, 5), &meta(), &[&sorted])
            .unwrap()
    }

    fn test_store(base: &Path, root: &Path) -> Store {
        let config = IndexConfig {
            store: Some(base.to_path_buf()),
            ..Default::default()
        };
        Store::of(root, &config)
    }

    #[test]
    fn a_generation_round_trips_and_the_newest_one_is_opened() {
        let base = tempfile::tempdir().unwrap();
        let root = Path::new("/some/root");
        let store = test_store(base.path(), root);
        let p = write_one(&store, root);
        assert_eq!(docs(&p, &plan("needle", false, false)), Some(vec![0]));
        write_one(&store, root);
        let names: Vec<String> = (fs::read_dir(&store.dir).unwrap().flatten())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["gen-2".to_string()], "the older one is removed");
        let saved = store.open_newest(root).unwrap();
        assert_eq!(saved.generation, 2);
        assert_eq!(saved.meta, meta());
        let want = table_of(root, 5);
        assert_eq!(saved.table.entries.len(), 5);
        for (a, b) in saved.table.entries.iter().zip(&want.entries) {
            assert_eq!(
                (&a.path, a.ignored_root, a.stamp, a.doc),
                (&b.path, b.ignored_root, b.stamp, b.doc)
            );
        }
        assert_eq!(saved.table.ignored_roots[0].path, root.join("node_modules"));
        assert_eq!(saved.table.dirs, want.dirs);
        assert_eq!(saved.table.rule_files, want.rule_files);
        assert_eq!(
            docs(&saved.postings, &plan("hays", false, false)),
            Some(vec![4])
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&store.dir), 0o700);
        assert_eq!(mode(&store.dir.join("gen-2")), 0o600);
        // Another root's name in the file: not this root's index.
        assert!(test_store(base.path(), root)
            .open_newest(Path::new("/other"))
            .is_none());
    }

    /// The documents `q` allows in `p` (the tests' tables stay far below
    /// 65,536 documents), in order.
    fn docs(p: &Postings, q: &Query) -> Option<Vec<u32>> {
        p.eval(q, 1 << 16, &mut { u64::MAX })
            .map(|d| d.ones().map(|d| d as u32).collect())
    }

    /// Every key of `p` with its documents, `None` where its list failed
    /// its checksum.
    fn every_list(p: &Postings) -> Vec<(u32, Option<Vec<u32>>)> {
        (0..ListSource::key_count(p))
            .map(|i| ListSource::key(p, i))
            .map(|k| (k, docs(p, &Query::Tri(k))))
            .collect()
    }

    #[test]
    fn every_flipped_byte_or_truncation_is_detected_before_use_and_the_file_removed() {
        let base = tempfile::tempdir().unwrap();
        let root = Path::new("/r");
        let store = test_store(base.path(), root);
        write_one(&store, root);
        let path = store.dir.join("gen-1");
        let good = fs::read(&path).unwrap();
        let truth = every_list(&store.open_newest(root).unwrap().postings);
        assert!(good.len() > 4 << BLOCK_SHIFT, "spans several blocks");
        let (mut at_open, mut at_use) = (0, 0);
        for at in (0..good.len()).step_by(7).chain([good.len() - 1]) {
            let mut bad = good.clone();
            bad[at] ^= 0x20;
            fs::write(&path, &bad).unwrap();
            let Some(saved) = store.open_newest(root) else {
                assert!(!path.exists(), "a damaged generation is removed");
                at_open += 1;
                continue;
            };
            // In a posting list: the table, keys and offsets are intact,
            // a list's block fails when first read, and no list is ever
            // answered narrower than the truth.
            assert!(!saved.postings.is_damaged(), "flip {at}: nothing read yet");
            for (got, want) in every_list(&saved.postings).iter().zip(&truth) {
                assert_eq!(got.0, want.0);
                if let Some(docs) = &got.1 {
                    assert_eq!(Some(docs), want.1.as_ref(), "flip {at}: a list read wrong");
                }
            }
            assert!(
                saved.postings.is_damaged(),
                "flipped byte {at} never caught"
            );
            assert!(
                !path.exists(),
                "flip {at}: the damaged generation is removed"
            );
            at_use += 1;
        }
        assert!(
            at_open > 0 && at_use > 0,
            "{at_open} at open, {at_use} at use"
        );
        for cut in [1, 16, 48, good.len() / 2, good.len() - 1] {
            fs::write(&path, &good[..good.len() - cut]).unwrap();
            assert!(store.open_newest(root).is_none(), "cut by {cut} trusted");
        }
        fs::write(&path, &good).unwrap();
        assert!(store.open_newest(root).is_some());
        // A damaged newer one falls back to the older complete one.
        fs::write(store.dir.join("gen-9"), &good[..100]).unwrap();
        assert_eq!(store.open_newest(root).unwrap().generation, 1);
    }

    #[test]
    fn a_leftover_temp_file_is_never_read_and_is_cleaned_by_the_next_writer() {
        let base = tempfile::tempdir().unwrap();
        let root = Path::new("/r");
        let store = test_store(base.path(), root);
        store.prepare().unwrap();
        fs::write(store.dir.join("gen-5.tmp"), b"half written").unwrap();
        assert!(store.open_newest(root).is_none());
        write_one(&store, root);
        assert!(!store.dir.join("gen-5.tmp").exists());
    }

    #[test]
    fn the_writer_lock_is_exclusive_and_a_waiter_can_be_cancelled() {
        let base = tempfile::tempdir().unwrap();
        let store = test_store(base.path(), Path::new("/r"));
        store.prepare().unwrap();
        let held = store.lock(&CancelToken::new(None)).unwrap().unwrap();
        let cancel = CancelToken::new(None);
        cancel.cancel();
        assert!(
            store.lock(&cancel).unwrap().is_none(),
            "held: the waiter gives up"
        );
        drop(held);
        assert!(store.lock(&cancel).unwrap().is_some());
    }

    #[test]
    fn a_given_base_that_does_not_exist_is_created_private() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let fresh = base.path().join("new/index");
        let store = test_store(&fresh, Path::new("/r"));
        store.prepare().unwrap();
        assert!(store.dir.is_dir());
        for dir in [&fresh, &store.dir] {
            let mode = fs::metadata(dir).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", dir.display());
        }
    }

    #[test]
    fn a_given_base_that_was_removed_is_not_created_again() {
        let base = tempfile::tempdir().unwrap();
        let gone = base.path().join("gone");
        let store = test_store(&gone, Path::new("/r"));
        store.prepare().unwrap();
        fs::remove_dir_all(&gone).unwrap();
        let err = store.prepare().unwrap_err();
        assert!(err.to_string().contains("removed"), "{err}");
        assert!(!gone.exists());
    }
}
