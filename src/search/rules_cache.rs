//! The compiled ignore rules of each directory, kept between searches.
//!
//! An agent greps the same tree dozens of times, and every search used to
//! parse and compile each directory's `.gitignore`/`.ignore`/`.rgignore`
//! again: the Linux tree's root `.gitignore` alone costs ~0.5 ms to compile,
//! a third of a one-hit search. A compiled set is reused while every file it
//! was built from has the same identity and change stamps; files changed in
//! the last couple of seconds are not cached (a rewrite within the stamps'
//! granularity could otherwise go unseen), like the outline cache's racy window.

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

/// Identity and change stamps of one rules file.
pub(super) type Stamp = (u64, u64, u64, i64, i64, i64, i64);

#[derive(PartialEq, Eq, Hash)]
struct Key {
    dir: PathBuf,
    files: Vec<(PathBuf, Stamp)>,
}

/// Entries kept at most; past it the cache starts over.
const CAPACITY: usize = 4096;
const RACY: Duration = Duration::from_secs(2);

fn cache() -> &'static Mutex<HashMap<Key, Option<Arc<Gitignore>>>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Option<Arc<Gitignore>>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

pub(super) fn stamp(m: &std::fs::Metadata) -> Stamp {
    (
        m.dev(),
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    )
}

/// Whether a file last changed before the racy window (a change within
/// the stamps' granularity could otherwise go unseen).
pub(super) fn settled(m: &std::fs::Metadata, now: SystemTime) -> bool {
    let now = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let before = now - RACY.as_secs() as i64;
    m.mtime() < before && m.ctime() < before
}

/// The compiled rules of `dir`: the repository's exclude file `exclude`
/// when given (its patterns are relative to `dir`), then each of `names`
/// that `has_file` says is a regular file there (later files win, so the
/// caller orders them by precedence). `None` when there are none.
pub(super) fn rules_of_dir(
    dir: &Path,
    exclude_file: Option<&Path>,
    names: &[&str],
    has_file: impl Fn(&str) -> bool,
) -> Option<Arc<Gitignore>> {
    let now = SystemTime::now();
    let mut files = Vec::new();
    let mut cacheable = true;
    let mut exclude = None;
    if let Some(path) = exclude_file {
        let path = path.to_path_buf();
        if let Ok(m) = std::fs::metadata(&path) {
            if m.is_file() {
                cacheable &= settled(&m, now);
                files.push((path.clone(), stamp(&m)));
                exclude = Some(path);
            }
        }
    }
    for name in names {
        if !has_file(name) {
            continue;
        }
        let path = dir.join(name);
        // Gone since the listing: `GitignoreBuilder::add` reports it and
        // the rest still counts, as before the cache.
        let s = match std::fs::metadata(&path) {
            Ok(m) => {
                cacheable &= settled(&m, now);
                stamp(&m)
            }
            Err(_) => {
                cacheable = false;
                (0, 0, 0, 0, 0, 0, 0)
            }
        };
        files.push((path, s));
    }
    if files.is_empty() {
        return None;
    }
    let key = Key {
        dir: dir.to_path_buf(),
        files,
    };
    if cacheable {
        if let Some(hit) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return hit.clone();
        }
    }
    let built = build(dir, exclude.as_deref(), &key.files);
    if cacheable {
        let mut c = cache().lock().unwrap_or_else(|e| e.into_inner());
        if c.len() >= CAPACITY {
            c.clear();
        }
        c.insert(key, built.clone());
    }
    built
}

fn build(dir: &Path, exclude: Option<&Path>, files: &[(PathBuf, Stamp)]) -> Option<Arc<Gitignore>> {
    let mut builder = GitignoreBuilder::new(dir);
    let mut any = false;
    for (path, _) in files {
        if Some(path.as_path()) == exclude {
            any |= builder.add(path).is_none();
        } else {
            // A partly malformed file still contributes its valid lines.
            builder.add(path);
            any = true;
        }
    }
    if !any {
        return None;
    }
    builder.build().ok().filter(|g| !g.is_empty()).map(Arc::new)
}
