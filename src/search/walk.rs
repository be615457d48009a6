//! The one walker configuration shared by grep and glob, and the ignored
//! roots it sets aside for a second phase.
//!
//! Rules that hold whatever the flags: `.git` is never entered, symlinks are
//! not followed, no ripgrep config is read, and only regular files are ever
//! handed out (FIFOs, sockets and devices would hang or mislead a search).

pub use super::classify::IgnoredRoot;
use super::classify::RuleChain;
use super::SearchError;
use ignore::overrides::{Override, OverrideBuilder};
use ignore::types::{Types, TypesBuilder};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// Include dot-files and dot-directories (`.git` excepted).
    pub hidden: bool,
    /// Search what ignore rules exclude, but only after everything else.
    pub no_ignore: bool,
    /// ripgrep-style globs; `!` excludes.
    pub globs: Vec<String>,
    /// ripgrep type names.
    pub types: Vec<String>,
    pub threads: usize,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            hidden: true,
            no_ignore: true,
            globs: Vec::new(),
            types: Vec::new(),
            threads: default_threads(),
        }
    }
}

/// One more thread than cores: in the ordered grep pipeline the walker
/// thread spends much of its time blocked, and a third searcher on two
/// cores cut a whole-tree search by ~6 % (the parallel walks are unaffected).
pub fn default_threads() -> usize {
    cores().saturating_add(1).min(8)
}

/// The cores this process may use, asked once: `available_parallelism`
/// opens and reads three cgroup files of `/proc` and `/sys` on every call,
/// which was twice per search, 0.07-0.09 ms of a rare literal's search
/// through the index (0.6 ms in all). A quota changed while the process
/// runs is not followed, as a thread pool sized at its start does not.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}

/// Errors that do not stop a search: counted, and the first few kept.
#[derive(Debug, Default, Clone)]
pub struct ErrorLog {
    pub count: u64,
    pub first: Vec<String>,
}

impl ErrorLog {
    const KEEP: usize = 5;
    pub fn push(&mut self, msg: String) {
        self.count += 1;
        if self.first.len() < Self::KEEP {
            self.first.push(msg);
        }
    }
    pub fn merge(&mut self, other: ErrorLog) {
        self.count += other.count;
        for m in other.first {
            if self.first.len() < Self::KEEP {
                self.first.push(m);
            }
        }
    }
}

/// What the caller asked to search, after resolving it against `cwd`.
#[derive(Debug, Clone)]
pub enum Target {
    Dir(PathBuf),
    File(PathBuf),
}

/// Resolves `path` against `cwd`. The display root is the directory for a
/// directory target and the file's parent for a file target (so a single
/// file shows by its name, as in Pi).
pub fn resolve_target(cwd: &Path, path: Option<&str>) -> Result<Target, SearchError> {
    let raw = match path {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => cwd.to_path_buf(),
    };
    let abs = if raw.is_absolute() {
        raw
    } else {
        cwd.join(raw)
    };
    // Follow a symlink given explicitly, like rg does for explicit paths; one
    // that leads nowhere is named as the link it is, not as a missing path.
    let meta = std::fs::metadata(&abs).map_err(|_| match std::fs::read_link(&abs) {
        Ok(target) => SearchError::BrokenSymlink {
            path: abs.display().to_string(),
            target: target.display().to_string(),
        },
        Err(_) => SearchError::PathNotFound(abs.display().to_string()),
    })?;
    if meta.is_dir() {
        Ok(Target::Dir(abs))
    } else if meta.is_file() {
        Ok(Target::File(abs))
    } else {
        Err(SearchError::NotSearchable(abs.display().to_string()))
    }
}

/// See [`Walker::filter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Filtered {
    Keep,
    Skip,
    /// Skipped for its dot-name alone.
    Hidden,
}

/// See [`Walker::filters`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filters {
    None,
    /// Dot-names are skipped, nothing else.
    Hidden,
    /// Globs or types decide.
    Paths,
}

pub struct Walker {
    pub(super) root: PathBuf,
    pub(super) opts: WalkOptions,
    overrides: Override,
    types: Types,
}

impl Walker {
    pub fn new(root: PathBuf, opts: WalkOptions) -> Result<Self, SearchError> {
        let mut ob = OverrideBuilder::new(&root);
        for g in &opts.globs {
            ob.add(g)
                .map_err(|e| SearchError::InvalidGlob(e.to_string()))?;
        }
        let overrides = ob
            .build()
            .map_err(|e| SearchError::InvalidGlob(e.to_string()))?;
        // Loading rg's ~700 default type definitions costs ~0.3 ms, a
        // fifth of a one-hit search: only a type filter needs them.
        let types = if opts.types.is_empty() {
            Types::empty()
        } else {
            let mut tb = TypesBuilder::new();
            tb.add_defaults();
            for t in &opts.types {
                // `all`, as rg's `-t all`: every file of some known type.
                if t != "all" && !tb.definitions().iter().any(|d| d.name() == t) {
                    return Err(SearchError::UnknownType(t.clone()));
                }
                tb.select(t);
            }
            tb.build()
                .map_err(|e| SearchError::UnknownType(e.to_string()))?
        };
        Ok(Walker {
            root,
            opts,
            overrides,
            types,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn options(&self) -> &WalkOptions {
        &self.opts
    }

    /// Whether a single explicitly named file passes the glob and type
    /// filters (rg applies them to explicit files too).
    pub fn accepts_file(&self, path: &Path) -> bool {
        if self.overrides.matched(path, false).is_ignore() {
            return false;
        }
        !self.types.matched(path, false).is_ignore()
    }

    /// Whether `ignore`'s own filters would skip this entry: overrides
    /// first (a match either way decides), then types, then hidden names
    /// unless a type whitelisted it. For `sorted_walk` and `parallel_walk`,
    /// which do the walk `ignore` would do when no ignore rule is on.
    pub(super) fn skips(&self, path: &Path, name: &std::ffi::OsStr, is_dir: bool) -> bool {
        self.filter(path, name, is_dir) != Filtered::Keep
    }

    /// What [`Walker::skips`] decides, telling apart an entry skipped only
    /// for its dot-name: an ignore rule that names it (`!.foo`) brings it
    /// back, as in `ignore`'s walk (see [`Walker::rescues`]).
    pub(super) fn filter(&self, path: &Path, name: &std::ffi::OsStr, is_dir: bool) -> Filtered {
        let skip = |s: bool| if s { Filtered::Skip } else { Filtered::Keep };
        if !self.overrides.is_empty() {
            let m = self.overrides.matched(path, is_dir);
            if m.is_ignore() || m.is_whitelist() {
                return skip(m.is_ignore());
            }
        }
        let mut whitelisted = false;
        if !self.types.is_empty() {
            let m = self.types.matched(path, is_dir);
            if m.is_ignore() {
                return Filtered::Skip;
            }
            whitelisted = m.is_whitelist();
        }
        if !whitelisted && !self.opts.hidden && name.as_encoded_bytes().starts_with(b".") {
            Filtered::Hidden
        } else {
            Filtered::Keep
        }
    }

    /// Whether a dot-entry the hidden filter skipped is walked after all:
    /// the ignore rules in force in its directory (`chain`) name it with a
    /// `!` rule, the one decision of [`Walker::excludes`] read the other way.
    pub(super) fn rescues(&self, chain: &RuleChain, path: &Path, is_dir: bool) -> bool {
        chain.is_whitelisted(path, is_dir)
    }

    /// What `admits` has to look at: nothing (every entry below the root
    /// is admitted), names alone (only the hidden filter is on), or the
    /// globs and types too. Lets a caller going through a whole table skip
    /// the per-path work `admits` would do.
    pub fn filters(&self) -> Filters {
        if !self.overrides.is_empty() || !self.types.is_empty() {
            Filters::Paths
        } else if self.opts.hidden {
            Filters::None
        } else {
            Filters::Hidden
        }
    }

    /// Whether a walk from the root with no ignore rule on would reach
    /// `path` (a path below the root): the filters `skips` applies to each
    /// entry are applied to every directory on the way down and to the
    /// entry itself. For a file list made from a table of the unfiltered
    /// walk (the index), so that it holds what this walk would hand out.
    pub fn admits(&self, path: &Path, is_dir: bool) -> bool {
        let Ok(rel) = path.strip_prefix(&self.root) else {
            return false;
        };
        // Without globs or types only the hidden filter can skip, and it
        // looks at names alone: no path need be built (a glob of the
        // index's table asks this for every file of the tree).
        if self.overrides.is_empty() && self.types.is_empty() {
            let dot =
                |c: std::path::Component<'_>| c.as_os_str().as_encoded_bytes().starts_with(b".");
            return self.opts.hidden || !rel.components().any(dot);
        }
        let mut at = self.root.clone();
        let mut parts = rel.components().peekable();
        while let Some(part) = parts.next() {
            let name = part.as_os_str();
            at.push(name);
            let dir = parts.peek().is_some() || is_dir;
            if self.skips(&at, name, dir) {
                return false;
            }
        }
        true
    }

    /// Whether the ignore rules exclude this entry, `chain` being the rules
    /// in force in its directory: the one decision both modes take (the
    /// default sets the entry aside, `noIgnore: false` drops it). Globs
    /// and types do not enter it (unlike rg, a glob naming an ignored file
    /// does not re-include it), so that the index's table, classified
    /// once without filters, holds the same answer for every search.
    pub(super) fn excludes(&self, chain: &RuleChain, path: &Path, is_dir: bool) -> bool {
        chain.is_ignored(path, is_dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::CancelToken;
    use std::fs;

    fn files(w: &Walker) -> (Vec<String>, Vec<String>) {
        let mut seen = Vec::new();
        let mut errors = ErrorLog::default();
        let ignored = w.walk_sorted(&CancelToken::new(None), &mut errors, |p| {
            seen.push(p.strip_prefix(w.root()).unwrap().display().to_string());
            true
        });
        let d = ignored
            .iter()
            .map(|d| d.path.strip_prefix(w.root()).unwrap().display().to_string())
            .collect();
        (seen, d)
    }

    #[test]
    fn git_dir_is_never_walked_and_ignored_roots_are_set_aside_in_order() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::create_dir_all(r.join(".git")).unwrap();
        fs::write(r.join(".git/config"), "x").unwrap();
        fs::create_dir_all(r.join("node_modules/a")).unwrap();
        fs::write(r.join("node_modules/a/i.js"), "x").unwrap();
        fs::write(r.join(".gitignore"), "node_modules/\nout.log\n").unwrap();
        fs::write(r.join("out.log"), "x").unwrap();
        fs::write(r.join("b.txt"), "x").unwrap();
        fs::write(r.join(".hidden"), "x").unwrap();
        let w = Walker::new(r.to_path_buf(), WalkOptions::default()).unwrap();
        let (seen, ignored) = files(&w);
        assert_eq!(seen, vec![".gitignore", ".hidden", "b.txt"]);
        assert_eq!(ignored, vec!["node_modules", "out.log"]);
    }

    #[test]
    fn respecting_ignore_drops_ignored_entries_and_hidden_can_be_off() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::write(r.join(".gitignore"), "out.log\n").unwrap();
        fs::write(r.join("out.log"), "x").unwrap();
        fs::write(r.join("b.txt"), "x").unwrap();
        let opts = WalkOptions {
            no_ignore: false,
            hidden: false,
            ..Default::default()
        };
        let w = Walker::new(r.to_path_buf(), opts).unwrap();
        let (seen, ignored) = files(&w);
        assert_eq!(seen, vec!["b.txt"]);
        assert!(ignored.is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn fifos_and_symlink_loops_are_skipped() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let fifo = std::ffi::CString::new(r.join("pipe").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        std::os::unix::fs::symlink(r, r.join("loop")).unwrap();
        fs::write(r.join("a.txt"), "x").unwrap();
        let w = Walker::new(r.to_path_buf(), WalkOptions::default()).unwrap();
        let (seen, _) = files(&w);
        assert_eq!(seen, vec!["a.txt"]);
    }

    /// Regression: rg's `-t all` (every file with a known type) was
    /// rejected as an unknown type. rg 15 lists Makefile, a.rs and b.txt.
    #[test]
    fn type_all_selects_every_file_with_a_known_type() {
        let t = tempfile::tempdir().unwrap();
        for name in ["a.rs", "b.txt", "c.zzz", "Makefile", "noext"] {
            fs::write(t.path().join(name), "x").unwrap();
        }
        for types in [vec!["all"], vec!["all", "rust"]] {
            let opts = WalkOptions {
                types: types.iter().map(|t| t.to_string()).collect(),
                ..Default::default()
            };
            let w = Walker::new(t.path().to_path_buf(), opts).unwrap();
            assert_eq!(files(&w).0, vec!["Makefile", "a.rs", "b.txt"], "{types:?}");
        }
    }

    #[test]
    fn unknown_type_and_bad_glob_are_errors() {
        let t = tempfile::tempdir().unwrap();
        let opts = WalkOptions {
            types: vec!["nosuchtype".into()],
            ..Default::default()
        };
        let err = Walker::new(t.path().to_path_buf(), opts).err().unwrap();
        assert!(err.to_string().contains("nosuchtype"));
        let opts = WalkOptions {
            globs: vec!["a[".into()],
            ..Default::default()
        };
        assert!(Walker::new(t.path().to_path_buf(), opts).is_err());
    }

    #[test]
    fn missing_path_says_path_not_found() {
        let t = tempfile::tempdir().unwrap();
        let err = resolve_target(t.path(), Some("nope")).unwrap_err();
        assert!(err.to_string().starts_with("Path not found: "));
    }

    // Regression: `grep hello t/sub/loop` with `loop` a symlink to a directory.
    #[cfg(unix)]
    #[test]
    fn a_symlink_named_as_the_path_is_followed_but_links_inside_it_are_not() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::create_dir(r.join("real")).unwrap();
        fs::write(r.join("real/a.txt"), "x").unwrap();
        std::os::unix::fs::symlink("..", r.join("real/up")).unwrap();
        std::os::unix::fs::symlink("real", r.join("link")).unwrap();
        let root = match resolve_target(r, Some("link")).unwrap() {
            Target::Dir(p) => p,
            other => panic!("a link to a directory is a directory: {other:?}"),
        };
        assert_eq!(root, r.join("link"), "shown as the path the user named");
        let w = Walker::new(root, WalkOptions::default()).unwrap();
        assert_eq!(
            files(&w).0,
            vec!["a.txt"],
            "real/up is a link met during the walk"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_symlink_is_named_with_its_target() {
        let t = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("nowhere", t.path().join("dangling")).unwrap();
        let err = resolve_target(t.path(), Some("dangling")).unwrap_err();
        let link = t.path().join("dangling");
        assert_eq!(
            err.to_string(),
            format!("Broken symlink: {} -> nowhere", link.display())
        );
        assert_eq!(err.code().as_str(), "PATH_NOT_FOUND");
    }
}
