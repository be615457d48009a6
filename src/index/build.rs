//! Building a picture: the table walk, then every file read once on a few
//! threads and its trigrams appended to the postings in document order.

use super::postings::{Builder, KeySet, Postings, MAX_INDEXED_BYTES};
use super::table::{self, Table};
use super::watch::Watcher;
use super::IndexConfig;
use crate::search::CancelToken;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Files each reader thread reads per round.
const PER_THREAD: usize = 256;

pub struct Built {
    pub table: Table,
    pub postings: Postings,
    pub watcher: Watcher,
}

/// Why a root gets no index (shown by `indexStatus`).
pub enum NotBuilt {
    Off(String),
    Failed(String),
}

/// Reads a regular file for indexing without following a link or blocking
/// on a FIFO that replaced it since the walk; `None` when it cannot be
/// indexed (it then stays a candidate for every search).
fn read_for_index(path: &Path) -> Option<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_INDEXED_BYTES {
        return None;
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    f.take(MAX_INDEXED_BYTES + 1).read_to_end(&mut buf).ok()?;
    (buf.len() as u64 <= MAX_INDEXED_BYTES).then_some(buf)
}

/// Reader threads run niced, like the builder thread itself (on Linux
/// `setpriority` on the calling thread applies to that thread only).
pub fn lower_priority() {
    #[cfg(target_os = "linux")]
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

/// Where the postings file of `root` is written (and at once unlinked):
/// `<config.store or $PI_UTILS_INDEX_DIR>/<hash>`, else
/// `~/.cache/pi-utils/index/<hash>`.
pub fn store_dir(root: &Path, config: &IndexConfig) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let env = config
        .store
        .as_ref()
        .map(|p| p.as_os_str().to_os_string())
        .or_else(|| std::env::var_os("PI_UTILS_INDEX_DIR"));
    let base = match env {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir)
            .join(".cache/pi-utils/index"),
    };
    let mut h = std::collections::hash_map::DefaultHasher::new();
    root.as_os_str().hash(&mut h);
    base.join(format!("{:016x}", h.finish()))
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

pub fn build(root: &Path, config: &IndexConfig, cancel: &CancelToken) -> Result<Built, NotBuilt> {
    let watcher = Watcher::new().map_err(|e| NotBuilt::Off(e.to_string()))?;
    let mut table =
        table::walk(root, &watcher, cancel, config.max_files).map_err(NotBuilt::Failed)?;
    if let Some(f) = watcher.failure() {
        return Err(NotBuilt::Off(f));
    }
    let n = table.entries.len();
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
    let threads = crate::search::default_threads().max(1);
    let mut builder = Builder::default();
    let mut indexed = vec![false; n];
    let mut sets: Vec<KeySet> = (0..threads).map(|_| KeySet::default()).collect();
    // Rounds of a few hundred files per thread, each thread a contiguous
    // run, joined before the next round: documents reach the postings in
    // order and at most one round of key lists is held at a time.
    let round = threads * PER_THREAD;
    for start in (0..n).step_by(round) {
        if cancel.is_stopped() {
            break;
        }
        let part = &table.entries[start..(start + round).min(n)];
        let per = part.len().div_ceil(threads);
        let results: Vec<Vec<Option<Vec<u32>>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (part.chunks(per.max(1)))
                .zip(sets.iter_mut())
                .map(|(run, set)| {
                    let len = run.len();
                    let h = scope.spawn(move || {
                        lower_priority();
                        run.iter()
                            .map(|e| read_for_index(&e.path).map(|b| set.keys_of(&b)))
                            .collect::<Vec<_>>()
                    });
                    (len, h)
                })
                .collect();
            // A reader that panicked leaves its files unindexed (always
            // candidates), keeping every later document number in place.
            handles
                .into_iter()
                .map(|(len, h)| h.join().unwrap_or_else(|_| vec![None; len]))
                .collect()
        });
        let mut doc = start;
        for run in results {
            for keys in run {
                if let Some(k) = keys {
                    builder.add(doc as u32, &k);
                    indexed[doc] = true;
                }
                doc += 1;
            }
        }
    }
    if cancel.is_stopped() {
        return Err(NotBuilt::Failed("stopped".into()));
    }
    for (i, e) in table.entries.iter_mut().enumerate() {
        let single = e.stamp.is_some_and(|s| s.nlink == 1);
        e.doc = (indexed[i] && single).then_some(i as u32);
    }
    drop(sets);
    // Out of the process's anonymous memory; in memory still if that fails.
    // A folder given explicitly (a test's, `$PI_UTILS_INDEX_DIR`) must
    // exist: one removed meanwhile is not created again.
    let dir = store_dir(root, config);
    let explicit = config.store.is_some() || std::env::var_os("PI_UTILS_INDEX_DIR").is_some();
    let usable = !explicit || dir.parent().is_some_and(Path::is_dir);
    let postings = builder.finish(usable.then_some(dir.as_path()));
    release_freed_memory();
    if postings.bytes() > config.max_bytes {
        return Err(NotBuilt::Off(format!(
            "postings of {} MB, over index.maxDiskMB ({} MB)",
            postings.bytes() >> 20,
            config.max_bytes >> 20
        )));
    }
    Ok(Built {
        table,
        postings,
        watcher,
    })
}
