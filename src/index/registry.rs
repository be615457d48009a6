//! The indexes of this process, one per search root, and the entry points
//! the napi glue calls: a search asks here whether to run over candidates
//! or as a scan.

use super::live::{IndexStatus, LiveIndex};
use super::{IndexConfig, IndexUse};
use crate::search::{resolve_target, CancelToken, GrepOptions, GrepPlan, SearchError, Target};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Whether a search may use (and start) an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexMode {
    /// Use a ready index; start building one for this root if there is none.
    Auto,
    /// Use a ready index, but start none.
    IfReady,
    /// Scan (option `index: false`).
    Off,
}

struct Registry {
    roots: HashMap<PathBuf, Arc<LiveIndex>>,
    /// The bounds a search-started build uses: the last ones `warm` got.
    config: IndexConfig,
}

fn registry() -> &'static Mutex<Registry> {
    static R: OnceLock<Mutex<Registry>> = OnceLock::new();
    R.get_or_init(|| {
        Mutex::new(Registry {
            roots: HashMap::new(),
            config: IndexConfig::default(),
        })
    })
}

fn lock() -> std::sync::MutexGuard<'static, Registry> {
    registry().lock().unwrap_or_else(|p| p.into_inner())
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

/// The plan for a search: over the index's candidates when a ready index
/// can narrow it, else the scan's own plan. Bad input is rejected exactly as
/// `GrepPlan::new` rejects it.
pub fn plan_grep(
    cwd: &Path,
    path: Option<&str>,
    opts: GrepOptions,
    mode: IndexMode,
) -> Result<(GrepPlan, IndexUse), SearchError> {
    let scan = GrepPlan::new(cwd, path, opts.clone())?;
    if mode == IndexMode::Off {
        return Ok((scan, IndexUse::Off));
    }
    let Some(dir) = search_dir(cwd, path) else {
        return Ok((scan, IndexUse::Scan));
    };
    // A directory inside one already indexed is searched by scan rather
    // than given a second index (and watcher) of its own.
    let start = (mode == IndexMode::Auto)
        .then(|| {
            let r = lock();
            let nested = r.roots.keys().any(|k| k != &dir && dir.starts_with(k));
            (!nested).then(|| r.config.clone())
        })
        .flatten();
    let Some(idx) = lookup(&dir, start).or_else(|| serving(&dir)) else {
        return Ok((scan, IndexUse::Off));
    };
    match idx.candidates(&dir, &opts) {
        Ok(feed) => Ok((scan.over_feed(Box::new(feed)), IndexUse::Used)),
        Err(u) => Ok((scan, u)),
    }
}

/// The files a walk of directory `dir` would hand out, from the table of a
/// ready index that can give them (narrowed by the regex `narrow`), for
/// discovery; Err says why the caller must walk. Starts no index: locate
/// and trace are answered in a few hundred milliseconds by walking, and a
/// build costs seconds of CPU that a session's warm-up already spends.
pub fn listing(
    dir: &Path,
    walk: &crate::search::WalkOptions,
    narrow: Option<&str>,
    mode: IndexMode,
) -> Result<super::Listing, IndexUse> {
    if mode == IndexMode::Off {
        return Err(IndexUse::Off);
    }
    let idx = serving(dir).ok_or(IndexUse::Off)?;
    idx.listing(dir, walk, narrow)
}

/// The index that can serve a search of directory `dir`: its own, else
/// that of the nearest indexed directory above it (which answers for `dir`
/// when its table can give `dir`'s own walk).
pub(super) fn serving(dir: &Path) -> Option<Arc<LiveIndex>> {
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
    idx.map(|i| i.status()).unwrap_or(IndexStatus {
        state: super::State::Off("cannot start".into()),
        files: 0,
        bytes: 0,
        mapped: false,
        built_at: None,
        unsaved: None,
        reread: None,
        walked: None,
    })
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
