//! The compiled ignore rules of each directory, kept between searches.
//!
//! An agent greps the same tree dozens of times, and every search used to
//! parse and compile each directory's `.gitignore`/`.ignore`/`.rgignore`
//! again: the Linux tree's root `.gitignore` alone costs ~0.5 ms to compile,
//! a third of a one-hit search. A compiled set is reused while every file it
//! was built from has the same stamp (`stamp.rs`); files changed within the
//! racy window are not cached (a rewrite within the stamps' granularity
//! could otherwise go unseen).

use super::stamp::{DevStamp, RACY};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

/// The rule files a directory's set was built from, each with its stamp
/// (`None`: gone since the listing).
#[derive(PartialEq, Eq, Hash)]
struct Key {
    dir: PathBuf,
    files: Vec<(PathBuf, Option<DevStamp>)>,
}

/// Entries kept at most; past it the cache starts over.
const CAPACITY: usize = 4096;

fn cache() -> &'static Mutex<HashMap<Key, Option<Arc<Gitignore>>>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Option<Arc<Gitignore>>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
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
                let s = DevStamp::of_meta(&m);
                cacheable &= s.stamp.settled(now, RACY);
                files.push((path.clone(), Some(s)));
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
                let s = DevStamp::of_meta(&m);
                cacheable &= s.stamp.settled(now, RACY);
                Some(s)
            }
            Err(_) => {
                cacheable = false;
                None
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

fn build(
    dir: &Path,
    exclude: Option<&Path>,
    files: &[(PathBuf, Option<DevStamp>)],
) -> Option<Arc<Gitignore>> {
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
