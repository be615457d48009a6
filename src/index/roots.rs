//! The indexes of this process, one per search root: which one serves a
//! search (see `serve.rs`), and starting, warming, dropping them.

use super::live::{IndexStatus, LiveIndex};
use super::{IndexConfig, IndexMode};
use crate::search::{resolve_target, CancelToken, Target};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

struct Roots {
    roots: HashMap<PathBuf, Arc<LiveIndex>>,
    /// The bounds a search-started build uses: the last ones `warm` got.
    config: IndexConfig,
}

fn roots() -> &'static Mutex<Roots> {
    static R: OnceLock<Mutex<Roots>> = OnceLock::new();
    R.get_or_init(|| {
        Mutex::new(Roots {
            roots: HashMap::new(),
            config: IndexConfig::default(),
        })
    })
}

fn lock() -> std::sync::MutexGuard<'static, Roots> {
    roots().lock().unwrap_or_else(|p| p.into_inner())
}

fn lookup(root: &Path, start: Option<IndexConfig>) -> Option<Arc<LiveIndex>> {
    let mut r = lock();
    if let Some(idx) = r.roots.get(root) {
        // An index left off under other bounds is tried again under these
        // (a search-started build said "too few files", then a warm with a
        // lower floor asks again).
        let retry = matches!(&start, Some(c) if c != idx.config())
            && matches!(idx.status().state, super::State::Off(_));
        if !retry {
            return Some(idx.clone());
        }
    }
    let config = start?;
    let idx = LiveIndex::start(root.to_path_buf(), config);
    r.roots.insert(root.to_path_buf(), idx.clone());
    Some(idx)
}

/// The directory a search of `path` walks, if it walks one.
fn search_dir(cwd: &Path, path: Option<&str>) -> Option<PathBuf> {
    match resolve_target(cwd, path).ok()? {
        Target::Dir(d) => Some(d),
        Target::File(_) => None,
    }
}

/// The index that serves a search of directory `dir`: with
/// [`IndexMode::Auto`] its own, started if there is none and `dir` is not
/// inside an indexed directory (that is searched by scan rather than given
/// a second index and watcher of its own); else the nearest indexed
/// directory's at or above it.
pub(super) fn index_for(dir: &Path, mode: IndexMode) -> Option<Arc<LiveIndex>> {
    let start = (mode == IndexMode::Auto)
        .then(|| {
            let r = lock();
            let nested = r.roots.keys().any(|k| k != dir && dir.starts_with(k));
            (!nested).then(|| r.config.clone())
        })
        .flatten();
    lookup(dir, start).or_else(|| serving(dir))
}

/// The index that can serve a search of directory `dir`: its own, else
/// that of the nearest indexed directory above it (which answers for `dir`
/// when its table can give `dir`'s own walk).
fn serving(dir: &Path) -> Option<Arc<LiveIndex>> {
    let r = lock();
    dir.ancestors().find_map(|a| r.roots.get(a).cloned())
}

/// Starts (if needed) the index of directory `root` with `config` and waits
/// until it is ready; Err with the reason it will not be.
pub fn warm(root: &Path, config: IndexConfig, cancel: &CancelToken) -> Result<IndexStatus, String> {
    lock().config = config.clone();
    let mut idx = lookup(root, Some(config.clone())).ok_or_else(|| "cannot start".to_string())?;
    if idx.wait_ready(cancel).is_err() && idx.config() != &config {
        // It was building under other bounds (a search started it) and
        // ended off: try these.
        idx = lookup(root, Some(config)).ok_or_else(|| "cannot start".to_string())?;
    }
    idx.wait_ready(cancel)?;
    Ok(idx.status())
}

/// Starts building `root`'s index with `config` unless it has one; returns
/// at once with its status.
pub fn start(root: &Path, config: IndexConfig) -> IndexStatus {
    lock().config = config.clone();
    let idx = lookup(root, Some(config));
    idx.map(|i| i.status())
        .unwrap_or_else(|| IndexStatus::without_picture(super::State::Off("cannot start".into())))
}

/// The status of `root`'s index; `None` when there is none in this process.
pub fn status_of(root: &Path) -> Option<IndexStatus> {
    lookup(root, None).map(|i| i.status())
}

/// Once per index: the notice for a search of `path` that its index could
/// not be saved in the store (the grep summary's `indexNotice`).
pub fn take_notice(cwd: &Path, path: Option<&str>) -> Option<String> {
    let dir = search_dir(cwd, path)?;
    lookup(&dir, None)?.take_notice()
}

/// What the last refresh of `root`'s index applied in place.
#[cfg(test)]
pub(crate) fn applied_of(root: &Path) -> Option<super::apply::Applied> {
    lookup(root, None)?.last_applied()
}

/// How many files `root`'s delta holds (`None`: no ready index).
#[cfg(test)]
pub(crate) fn delta_len_of(root: &Path) -> Option<usize> {
    lookup(root, None)?.delta_len()
}

/// Whether `root`'s delta has read everything it was given.
#[cfg(test)]
pub(crate) fn delta_settled_of(root: &Path) -> bool {
    lookup(root, None).is_some_and(|i| i.delta_settled())
}

/// Forgets `root`'s index in this process (stopping its build and its
/// watcher), as the end of the process does: the store keeps it.
pub fn forget_root(root: &Path) -> bool {
    let idx = lock().roots.remove(root);
    match idx {
        Some(idx) => {
            idx.stop();
            true
        }
        None => false,
    }
}

/// Forgets `root`'s index and removes its folder from the store (that
/// root's folder and nothing else). Returns whether there was either.
pub fn drop_root(root: &Path) -> bool {
    let config = {
        let r = lock();
        r.roots
            .get(root)
            .map_or(&r.config, |idx| idx.config())
            .clone()
    };
    let had = forget_root(root);
    super::store::Store::of(root, &config).remove() || had
}
