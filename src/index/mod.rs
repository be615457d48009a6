//! The live index of a search root: a file table from the same walk the scan
//! does, trigram postings over the files' contents, a planner that turns a
//! regex into a trigram query, and a watcher that keeps the picture fresh.
//!
//! It never decides a match: `source_for` (`serve.rs`), its one entry point,
//! narrows the files a search reads to the candidates the query allows and
//! hands them to `src/search` as a file source in the walk's order, where the
//! ordinary pipeline searches them with the same limits, context, grouping,
//! binary and ignored-last rules. A query it cannot narrow (no literal of
//! three bytes, or lists too long to be worth decoding) is fed every file of
//! the table in the walk's order; a picture it cannot vouch for sends the
//! search to the scan.
//!
//! The table and postings are saved as a generation in the store
//! (`store.rs`; its bytes: `format.rs`) and mapped from there, so they stay off Node's heap and the
//! next process re-validates them by one walk instead of building again.

mod apply;
mod blocks;
mod build;
mod builder;
mod chunked;
mod codec;
mod delta;
mod evict;
mod format;
mod keys;
mod lists;
mod live;
mod merge;
mod picture;
pub mod planner;
mod postings;
mod read;
mod restamp;
mod revalidate;
mod roots;
mod serve;
mod store;
mod table;
mod view;
mod watch;

pub use live::{IndexStatus, LiveIndex, State};
pub use roots::{drop_root, forget_root, start, status_of, take_notice, warm};
pub use serve::source_for;

/// Bounds on what is indexed (settings `index.minFiles`, `index.maxFiles`,
/// `index.maxDiskMB`).
#[derive(Debug, Clone, PartialEq)]
pub struct IndexConfig {
    /// Trees with fewer files are not indexed: a scan is already a few ms.
    pub min_files: usize,
    /// Trees with more files are not indexed (starting in `$HOME` must not
    /// start an hours-long build).
    pub max_files: usize,
    /// Largest the store may grow, all roots together (least recently used
    /// roots are evicted past it); also the largest one root's postings
    /// may be.
    pub max_bytes: u64,
    /// Narrowing a search may decode this many list bytes per file of the
    /// table; a query that needs more (a case-insensitive one over common
    /// trigrams ORs dozens of long lists) is fed every file instead, since
    /// the decoding would cost about what reading the tree's first files
    /// does. Performance only: the answer is the same either way.
    pub decode_per_file: u64,
    /// Where postings files go; `None`: `$PI_UTILS_INDEX_DIR`, else
    /// `~/.cache/pi-utils/index` (tests give a temp folder).
    pub store: Option<std::path::PathBuf>,
    /// A saved file whose ctime is this close to the start of the walk that
    /// stamped it is read again by the next process (see `search::stamp::RACY`,
    /// the default; tests shorten it instead of waiting seconds).
    pub racy: std::time::Duration,
    /// Files changed since the saved generation that the next process
    /// leaves unread (always candidates, read by every search) instead of
    /// merging: a merge rewrites the whole generation (128 MB and an fsync
    /// on the Linux tree, 1.1-1.4 s for one edited file), while a search
    /// only reads a few dozen more files. Past this many, they are read and
    /// merged into a new generation.
    pub max_unread: usize,
    /// Use only a picture an earlier process saved, for a one-shot process
    /// (the CLI) that would exit long before a build ends: no build, no
    /// wait for another process's writer lock, no merge. The changed files
    /// it finds are left unread (read by every search, so the answer is the
    /// scan's) while they are few (see `revalidate::SAVED_ONLY_UNREAD_SHARE`);
    /// otherwise, or with nothing saved, the index is off and searches scan.
    pub saved_only: bool,
    /// A stale index (the watch limit met, a failed build) builds again at
    /// the first search this long after it went stale, so it recovers by
    /// itself once the tree fits; tests shorten it.
    pub stale_retry: std::time::Duration,
    /// At most this many inotify watches (`None`: the kernel's limit, the
    /// default); tests set it to meet the limit without changing the
    /// machine's `fs.inotify.max_user_watches`.
    pub watch_cap: Option<usize>,
    /// Files waiting for the postings past the rebuild threshold that the
    /// delta has room for are folded into a new generation once no search
    /// came for this long (the delta keeps searches cheap until then, and
    /// a rebuild does not compete with them); tests shorten it.
    pub fold_idle: std::time::Duration,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            min_files: 1000,
            max_files: 500_000,
            max_bytes: 2048 << 20,
            decode_per_file: 4,
            store: None,
            racy: crate::search::stamp::RACY,
            max_unread: 64,
            saved_only: false,
            stale_retry: std::time::Duration::from_secs(30),
            watch_cap: None,
            fold_idle: std::time::Duration::from_secs(5),
        }
    }
}

impl IndexConfig {
    /// Why postings of `size` bytes are not built: over `max_bytes`.
    fn too_big(&self, size: u64) -> Option<NotBuilt> {
        (size > self.max_bytes).then(|| {
            NotBuilt::Off(format!(
                "postings of {} MB, over index.maxDiskMB ({} MB)",
                size >> 20,
                self.max_bytes >> 20
            ))
        })
    }
}

/// Why a root gets no index (shown by `indexStatus`).
pub(crate) enum NotBuilt {
    /// The index does not serve this root (too few or too many files, no
    /// watcher, nothing saved for a saved-only picture): it stays off.
    Off(String),
    /// A build failed or was stopped: the index goes stale and builds again
    /// later.
    Failed(String),
}

/// Whether the postings can narrow a search for `pattern` to fewer than
/// all files (the planner finds a trigram condition).
pub fn can_narrow(pattern: &str, literal: bool, ignore_case: bool) -> bool {
    !matches!(
        planner::plan(pattern, literal, ignore_case),
        planner::Query::All
    )
}

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

impl IndexMode {
    /// grep's mode for its `index` option: `false` scans; otherwise the
    /// first search of a directory starts its index.
    pub fn for_grep(index: Option<bool>) -> IndexMode {
        match index {
            Some(false) => IndexMode::Off,
            _ => IndexMode::Auto,
        }
    }

    /// The mode of glob, locate and trace for their `index` option:
    /// `false` walks; otherwise a ready index serves, but none is started:
    /// a walk answers them in a few hundred milliseconds, and a build
    /// costs seconds of CPU that a session's warm-up already spends.
    pub fn for_listing(index: Option<bool>) -> IndexMode {
        match index {
            Some(false) => IndexMode::Off,
            _ => IndexMode::IfReady,
        }
    }
}

/// How a search used the index, as its summary reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexUse {
    /// Candidates from a ready index were searched.
    Used,
    /// The index is ready but could not narrow this search (or the search
    /// is of a kind it does not serve): it ran as a scan.
    Scan,
    /// The index of this root is being built: the search ran as a scan.
    Building,
    /// The picture could not be vouched for (watcher overflow or failure):
    /// the search ran as a scan while it is rebuilt.
    Stale,
    /// No index for this root (disabled, too few or too many files, not
    /// supported here).
    #[default]
    Off,
}

impl IndexUse {
    pub fn as_str(self) -> &'static str {
        match self {
            IndexUse::Used => "used",
            IndexUse::Scan => "scan",
            IndexUse::Building => "building",
            IndexUse::Stale => "stale",
            IndexUse::Off => "off",
        }
    }
}

#[cfg(test)]
mod apply_tests;
#[cfg(test)]
mod delta_tests;
#[cfg(test)]
mod divergence_tests;
#[cfg(test)]
mod persist_tests;
#[cfg(test)]
mod saved_only_tests;
#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod watch_limit_tests;
