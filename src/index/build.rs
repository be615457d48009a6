//! Building a picture: the table walk, then every file read once on a few
//! threads and its trigrams appended to the postings in document order.

use super::postings::{trigrams_of, Builder, Postings, MAX_INDEXED_BYTES};
use super::table::{self, Table};
use super::watch::Watcher;
use super::IndexConfig;
use crate::search::CancelToken;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Documents per unit of work handed to a reader thread.
const CHUNK: usize = 128;

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
    let next = AtomicUsize::new(0);
    let chunks = n.div_ceil(CHUNK);
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Vec<Option<Vec<u32>>>)>(threads * 2);
    let mut builder = Builder::default();
    let entries = &table.entries;
    let indexed: Vec<bool> = std::thread::scope(|scope| {
        for _ in 0..threads {
            let (tx, next) = (tx.clone(), &next);
            scope.spawn(move || loop {
                let c = next.fetch_add(1, Ordering::Relaxed);
                if c >= chunks || cancel.is_stopped() {
                    break;
                }
                let part = &entries[c * CHUNK..((c + 1) * CHUNK).min(n)];
                let keys = part
                    .iter()
                    .map(|e| read_for_index(&e.path).map(|b| trigrams_of(&b)))
                    .collect();
                if tx.send((c, keys)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        // Chunks arrive out of order; documents are appended in order.
        let mut waiting = BTreeMap::new();
        let mut want = 0usize;
        let mut indexed = vec![false; n];
        for (c, keys) in rx {
            waiting.insert(c, keys);
            while let Some(keys) = waiting.remove(&want) {
                for (i, k) in keys.into_iter().enumerate() {
                    let doc = want * CHUNK + i;
                    if let Some(k) = k {
                        builder.add(doc as u32, &k);
                        indexed[doc] = true;
                    }
                }
                want += 1;
            }
        }
        indexed
    });
    if cancel.is_stopped() {
        return Err(NotBuilt::Failed("stopped".into()));
    }
    for (i, e) in table.entries.iter_mut().enumerate() {
        e.doc = indexed[i].then_some(i as u32);
    }
    let postings = builder.finish();
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
