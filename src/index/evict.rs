//! The store's folders of all roots together, kept under the cap
//! (`index.maxDiskMB`): each process marks the folder of the root it opens
//! as used, and a build that wrote a generation evicts the least recently
//! used folders of other roots until all of them fit.

use super::store::Store;
use std::fs;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

impl Store {
    /// Marks the folder used now (for the least-recently-used eviction).
    pub fn touch(&self) {
        let _ = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(self.dir.join("last-used"))
            .and_then(|f| f.set_modified(SystemTime::now()));
    }

    /// Bytes the folder's files take.
    fn size_of(dir: &Path) -> u64 {
        (fs::read_dir(dir).into_iter().flatten().flatten())
            .filter_map(|e| e.metadata().ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum()
    }

    /// Evicts the least recently used root folders of the base until all
    /// of them together take at most `cap` bytes. This folder is never
    /// evicted, nor one whose writer lock another process holds.
    pub fn evict(&self, cap: u64) -> Vec<PathBuf> {
        let mut folders: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        let mut total = 0u64;
        for e in fs::read_dir(&self.base).into_iter().flatten().flatten() {
            let path = e.path();
            let is_store = (e.file_name().to_str())
                .is_some_and(|n| n.len() == 16 && n.bytes().all(|b| b.is_ascii_hexdigit()));
            if !is_store || !path.is_dir() {
                continue;
            }
            let size = Store::size_of(&path);
            total += size;
            if path == self.dir {
                continue;
            }
            let used = fs::metadata(path.join("last-used"))
                .or_else(|_| fs::metadata(&path))
                .and_then(|m| m.modified())
                .unwrap_or(UNIX_EPOCH);
            folders.push((used, size, path));
        }
        folders.sort();
        let mut evicted = Vec::new();
        for (_, size, path) in folders {
            if total <= cap {
                break;
            }
            let other = Store {
                dir: path.clone(),
                base: self.base.clone(),
                explicit: self.explicit,
            };
            let busy = other
                .lock_file()
                .map(|f| f.try_lock().is_err())
                .unwrap_or(false);
            if busy {
                continue;
            }
            if fs::remove_dir_all(&path).is_ok() {
                total = total.saturating_sub(size);
                evicted.push(path);
            }
        }
        evicted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::format::time_of;
    use crate::index::IndexConfig;
    use crate::search::CancelToken;
    use std::fs::File;

    #[test]
    fn eviction_removes_the_least_recently_used_roots_but_never_this_one() {
        let base = tempfile::tempdir().unwrap();
        let config = IndexConfig {
            store: Some(base.path().to_path_buf()),
            ..Default::default()
        };
        let stores: Vec<Store> = (0..4)
            .map(|i| Store::of(Path::new(&format!("/root{i}")), &config))
            .collect();
        for (i, s) in stores.iter().enumerate() {
            s.prepare().unwrap();
            fs::write(s.dir.join("gen-1"), vec![0u8; 1000]).unwrap();
            let f = File::options()
                .write(true)
                .create(true)
                .truncate(false)
                .open(s.dir.join("last-used"))
                .unwrap();
            f.set_modified(time_of(1_700_000_000 + i as i64 * 10, 0))
                .unwrap();
        }
        // The oldest (root0) is the one in use: it stays; root1, then root2 go.
        let evicted = stores[0].evict(2500);
        assert_eq!(evicted, vec![stores[1].dir.clone(), stores[2].dir.clone()]);
        assert!(stores[0].dir.exists() && stores[3].dir.exists());
        // A folder whose lock another writer holds is skipped.
        let _held = stores[3].lock(&CancelToken::new(None)).unwrap().unwrap();
        assert!(stores[0].evict(0).is_empty());
        assert!(stores[3].remove());
        assert!(
            stores[0].dir.exists(),
            "remove takes that root's folder only"
        );
    }
}
