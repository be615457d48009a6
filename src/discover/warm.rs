//! Parsing a tree's files ahead of its first `locate` or `trace`. With the
//! index ready, a call's own work takes a few ms; its first parses of the
//! files it shows took the rest: tree-sitter reads about 10 MB/s here, and
//! a first locate on vim parses ten files of 1.4 MB (350 ms, 50 ms the
//! second time). When an index starts, one low-priority thread parses the
//! tree's files into the outline and name-use caches (`search::outline_cache`),
//! the largest first (they cost a call the most), until it has added half of
//! what they hold: the session's first call, a model reply or more later,
//! finds them parsed. It parses nothing while a `locate` or `trace` runs. A
//! file changed since is parsed again when a call needs it (the cache is
//! keyed by its stamps), so nothing read here can answer stale.

use super::files::{read_small, Scope};
use crate::index::IndexMode;
use crate::search::{
    holds_structure, outline_and_uses_of, CancelToken, ErrorLog, KnownStamp, SourceFile,
    WalkOptions, STRUCTURE_CACHE_FILES, STRUCTURE_CACHE_WEIGHT,
};
use crate::structure::Language;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The share of the caches' bounds a warm adds at most: the other half
/// stays for what calls parse.
pub const WARM_SHARE: f64 = 0.5;

/// What a warm did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Warmed {
    /// Files parsed now.
    pub parsed: usize,
    /// Files found parsed already (an earlier warm or call).
    pub cached: usize,
    /// Files left unparsed: the caches reached their share, or it stopped.
    pub left: usize,
}

/// The tree's files in a parsed language, the largest first (ties by path,
/// so two warms go the same way).
fn parsed_files(root: &Path, cancel: &CancelToken) -> Vec<(u64, PathBuf)> {
    let walk = WalkOptions {
        threads: 1,
        ..WalkOptions::default()
    };
    let Ok(scope) = Scope::new(root, None, walk, IndexMode::IfReady) else {
        return Vec::new();
    };
    let (source, _) = scope.source(None);
    let found = Mutex::new(Vec::new());
    let errors = Mutex::new(ErrorLog::default());
    source.visit_all(
        1,
        cancel,
        &errors,
        || false, // ignored files come after the project's: not warmed
        |_| {
            |f: &SourceFile<'_>| {
                if Language::from_path(f.path).is_some() {
                    let size = match f.stamp {
                        KnownStamp::Kept { size, .. } => size,
                        _ => std::fs::metadata(f.path).map_or(0, |m| m.len()),
                    };
                    let mut found = found.lock().unwrap_or_else(|p| p.into_inner());
                    found.push((size, f.path.to_path_buf()));
                }
                true
            }
        },
    );
    let mut files = found.into_inner().unwrap_or_else(|p| p.into_inner());
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    files
}

/// Parses `root`'s files into the caches on `threads` threads, the
/// largest first, until what it added takes `share` of their bounds or
/// `stop` says so (asked between files). Reads as locate does
/// (`read_small`, the language detected as a call detects it), so a call
/// finds exactly the entries parsed here. Measured by what it adds, not by
/// how full the caches are: the tree warmed last may push out the least
/// recently used entries of another.
pub fn warm(root: &Path, share: f64, threads: usize, stop: &(dyn Fn() -> bool + Sync)) -> Warmed {
    let files = parsed_files(root, &CancelToken::new(None));
    let budget = |bound: usize| (share * bound as f64) as usize;
    let (max_files, max_weight) = (
        budget(STRUCTURE_CACHE_FILES),
        budget(STRUCTURE_CACHE_WEIGHT),
    );
    let next = AtomicUsize::new(0);
    let [parsed, cached, left, symbols, uses] = [(); 5].map(|_| AtomicUsize::new(0));
    let work = || {
        lower_this_threads_priority();
        let mut buf = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((_, path)) = files.get(i) else { break };
            let spent = parsed.load(Ordering::Relaxed) >= max_files
                || symbols.load(Ordering::Relaxed) >= max_weight
                || uses.load(Ordering::Relaxed) >= max_weight;
            if spent || stop() {
                left.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            let (Some(lang), Some(meta)) = (Language::from_path(path), read_small(path, &mut buf))
            else {
                continue;
            };
            let lang = Language::detect(path, &buf).unwrap_or(lang);
            if holds_structure(lang, &meta) {
                cached.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            // A parse a call interrupts is thrown away and done again
            // once no call runs.
            loop {
                wait_for_calls();
                if let Some((o, u)) = outline_and_uses_of(lang, &meta, &buf, &calls_running) {
                    if !calls_running() {
                        parsed.fetch_add(1, Ordering::Relaxed);
                        symbols.fetch_add(o.symbols.len(), Ordering::Relaxed);
                        uses.fetch_add(u.len(), Ordering::Relaxed);
                        break;
                    }
                }
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads.max(1) {
            s.spawn(work);
        }
        work();
    });
    Warmed {
        parsed: parsed.into_inner(),
        cached: cached.into_inner(),
        left: left.into_inner(),
    }
}

/// The `locate` and `trace` calls running now: the warm parses nothing
/// while one runs. A lower priority alone left them slower: on the Linux
/// tree a locate asked while the warm ran took a median 252 ms, 101 ms
/// without it.
static CALLS: AtomicUsize = AtomicUsize::new(0);

/// Held by a running call (see [`CALLS`]).
pub(crate) struct Calling(());

impl Drop for Calling {
    fn drop(&mut self) {
        CALLS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Marks a call as running until the value is dropped.
pub(crate) fn calling() -> Calling {
    CALLS.fetch_add(1, Ordering::Relaxed);
    Calling(())
}

fn calls_running() -> bool {
    CALLS.load(Ordering::Relaxed) > 0
}

fn wait_for_calls() {
    while calls_running() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Starts warming `root` on a thread of its own at low priority, once per
/// root in this process; it stops when the root's index is dropped or
/// another root's warm starts. The
/// thread holds no handle to Node and never keeps the process alive.
pub fn warm_in_background(root: PathBuf) -> bool {
    static STARTED: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    {
        let mut started = STARTED.lock().unwrap_or_else(|p| p.into_inner());
        if !started
            .get_or_insert_with(HashSet::new)
            .insert(root.clone())
        {
            return false;
        }
    }
    // Only the warm started last runs: the tree whose index started last is
    // the one being asked about, and two warms would share the cores.
    static LATEST: AtomicUsize = AtomicUsize::new(0);
    let mine = LATEST.fetch_add(1, Ordering::Relaxed) + 1;
    let spawned = std::thread::Builder::new()
        .name("pi-utils-warm".into())
        .spawn(move || {
            let threads = crate::search::cores().min(2);
            warm(&root, WARM_SHARE, threads, &|| {
                LATEST.load(Ordering::Relaxed) != mine || crate::index::status_of(&root).is_none()
            });
        });
    spawned.is_ok()
}

/// Nice 10 for the calling thread only, once per thread (Linux sets a thread's priority by
/// its id): the warm yields both cores to the calls it prepares for.
fn lower_this_threads_priority() {
    // SAFETY: gettid has no preconditions; setpriority on our own thread
    // id changes nothing but this thread's scheduling.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn structure_held(path: &Path) -> bool {
        let mut buf = Vec::new();
        let meta = read_small(path, &mut buf).unwrap();
        let lang = Language::detect(path, &buf).unwrap();
        holds_structure(lang, &meta)
    }

    #[test]
    fn a_warm_parses_the_largest_files_first_once_and_stops_when_told() {
        let t = tempfile::tempdir().unwrap();
        let body = |n: usize| {
            (0..n)
                .map(|i| format!("fn f{i}() {{ g{i}(); }}\n"))
                .collect::<String>()
        };
        let (small, mid, large) = (
            t.path().join("a.rs"),
            t.path().join("b.py"),
            t.path().join("c.rs"),
        );
        fs::write(&small, body(2)).unwrap();
        fs::write(&mid, "def f():\n    return g()\n".repeat(20)).unwrap();
        fs::write(&large, body(200)).unwrap();
        fs::write(t.path().join("notes.txt"), "not a parsed language").unwrap();
        let waits = tempfile::tempdir().unwrap();
        let waiting = waits.path().join("w.rs");
        fs::write(&waiting, body(5)).unwrap();
        // Old enough to be cached (ctime cannot be set back, so wait it out).
        std::thread::sleep(crate::search::stamp::RACY + std::time::Duration::from_millis(100));

        // Stopped after one file: the largest is the one parsed.
        let asked = AtomicUsize::new(0);
        let one = warm(t.path(), 1.0, 1, &|| {
            asked.fetch_add(1, Ordering::Relaxed) >= 1
        });
        assert_eq!(
            one,
            Warmed {
                parsed: 1,
                cached: 0,
                left: 2
            }
        );
        assert!(structure_held(&large));
        assert!(!structure_held(&mid) && !structure_held(&small));

        // Then the rest; what is parsed is not parsed again.
        assert_eq!(
            warm(t.path(), 1.0, 2, &|| false),
            Warmed {
                parsed: 2,
                cached: 1,
                left: 0
            }
        );
        assert!(structure_held(&mid) && structure_held(&small));
        assert_eq!(
            warm(t.path(), 1.0, 2, &|| false),
            Warmed {
                parsed: 0,
                cached: 3,
                left: 0
            }
        );

        // No share, nothing parsed.
        fs::write(&large, body(201)).unwrap();
        assert_eq!(
            warm(t.path(), 0.0, 1, &|| false),
            Warmed {
                parsed: 0,
                cached: 0,
                left: 3
            }
        );

        // Nothing is parsed while a call runs; then it is.
        let call = calling();
        std::thread::scope(|s| {
            let warming = s.spawn(|| warm(waits.path(), 1.0, 1, &|| false));
            std::thread::sleep(std::time::Duration::from_millis(300));
            assert!(!structure_held(&waiting), "parsed while a call ran");
            drop(call);
            let done = warming.join().unwrap();
            assert_eq!(done.parsed, 1);
        });
        assert!(structure_held(&waiting));

        // A file changed since is not taken as parsed: a call parses it anew.
        fs::write(&small, body(3)).unwrap();
        assert!(!structure_held(&small));
    }
}
