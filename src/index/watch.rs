//! Keeps the picture fresh: an inotify instance watching every directory of
//! the tree, read without blocking at the start of each search.
//!
//! Reading the kernel's queue at that moment (rather than from a background
//! thread that forwards events over a channel, as `notify` does) is what
//! makes "a write that finished before the search began is seen by it" hold:
//! inotify queues the event inside the write's system call, so by the time
//! the writer has returned, the event is in the queue this search drains.
//!
//! Watches are added to a directory before it is listed, so nothing created
//! in it between the two is missed. What inotify cannot see, and so neither
//! can the index: writes through a hard link from outside the tree, writes
//! through a shared mmap, and other mount namespaces.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the drained events say about the tree.
#[derive(Debug, Default)]
pub struct Changes {
    /// Paths whose content may have changed (files), or below which anything
    /// may have changed (directories, and names created, deleted or moved).
    pub dirty: Vec<PathBuf>,
    /// Something other than file contents changed: entries were created,
    /// deleted, moved, or an ignore file changed. The file table must be
    /// walked again.
    pub structural: bool,
    /// The kernel dropped events (queue overflow): the picture cannot be
    /// trusted until rebuilt.
    pub overflow: bool,
}

/// Whether a change of entry `name` re-classifies what lies below its
/// directory: an ignore file, or a `.git` (which makes it a repository).
fn is_rule_file(name: &std::ffi::OsStr) -> bool {
    name == ".git" || crate::search::IGNORE_FILES.iter().any(|f| name == *f)
}

#[cfg(target_os = "linux")]
mod imp {
    use super::*;
    use inotify::{EventMask, Inotify, WatchMask, Watches};

    pub struct Watcher {
        inotify: Mutex<Inotify>,
        /// Watch descriptor → the directory it watches, as of the last walk.
        dirs: Mutex<HashMap<i32, PathBuf>>,
        /// Watches of the root's ancestors (and their `.git/info`): only a
        /// change of their ignore rules counts, which re-classifies the
        /// whole tree.
        outside: Mutex<std::collections::HashSet<i32>>,
        /// The first failure to add a watch (the watch limit, most often).
        failed: Mutex<Option<String>>,
    }

    fn mask() -> WatchMask {
        WatchMask::MODIFY
            | WatchMask::ATTRIB
            | WatchMask::CREATE
            | WatchMask::DELETE
            | WatchMask::DELETE_SELF
            | WatchMask::MOVE_SELF
            | WatchMask::MOVED_FROM
            | WatchMask::MOVED_TO
            | WatchMask::DONT_FOLLOW
            | WatchMask::ONLYDIR
    }

    impl Watcher {
        pub fn new() -> std::io::Result<Watcher> {
            Ok(Watcher {
                inotify: Mutex::new(Inotify::init()?),
                dirs: Mutex::new(HashMap::new()),
                outside: Mutex::new(Default::default()),
                failed: Mutex::new(None),
            })
        }

        /// Watches the directories above `root` (and each one's
        /// `.git/info`) for changes of the ignore rules the walk reads
        /// there. A directory that cannot be watched (no permission) is
        /// left out: its rules are still compared at the next start.
        pub fn watch_ancestors(&self, root: &Path) {
            let mut watches = (self.inotify.lock().unwrap_or_else(|p| p.into_inner())).watches();
            let mut outside = self.outside.lock().unwrap_or_else(|p| p.into_inner());
            outside.clear();
            let info = |d: &Path| d.join(".git/info");
            for dir in root.ancestors().skip(1) {
                for d in [dir.to_path_buf(), info(dir)] {
                    if let Ok(wd) = watches.add(&d, mask()) {
                        outside.insert(wd.get_watch_descriptor_id());
                    }
                }
            }
        }

        /// A handle threads of a walk can add watches through.
        pub fn adder(&self) -> Adder<'_> {
            Adder {
                watches: self
                    .inotify
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .watches(),
                owner: self,
            }
        }

        /// Forgets which directory each watch stands for; the walk about to
        /// run adds back those still in the tree (a directory moved out keeps
        /// its kernel watch, but its events are no longer attributed).
        pub fn forget_dirs(&self) {
            self.dirs.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }

        pub fn failure(&self) -> Option<String> {
            self.failed
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone()
        }

        /// Reads every event queued so far, without blocking.
        pub fn drain(&self) -> Changes {
            let mut changes = Changes::default();
            let mut buf = vec![0u8; 64 * 1024];
            let mut inotify = self.inotify.lock().unwrap_or_else(|p| p.into_inner());
            let dirs = self.dirs.lock().unwrap_or_else(|p| p.into_inner());
            let outside = self.outside.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                let events = match inotify.read_events(&mut buf) {
                    Ok(events) => events,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(_) => {
                        changes.overflow = true;
                        break;
                    }
                };
                let mut any = false;
                for ev in events {
                    any = true;
                    if ev.mask.contains(EventMask::Q_OVERFLOW) {
                        changes.overflow = true;
                        continue;
                    }
                    let wd = ev.wd.get_watch_descriptor_id();
                    if outside.contains(&wd) {
                        // Any name in a `.git/info`; only rule files above.
                        let rules = ev.name.is_some_and(is_rule_file);
                        let info = ev.name.is_some_and(|n| n == "exclude");
                        changes.structural |= rules || info;
                        continue;
                    }
                    let Some(dir) = dirs.get(&wd) else {
                        continue;
                    };
                    let name: Option<OsString> = ev.name.map(|n| n.to_os_string());
                    classify(&mut changes, dir, name, ev.mask);
                }
                if !any {
                    break;
                }
            }
            changes
        }
    }

    fn classify(changes: &mut Changes, dir: &Path, name: Option<OsString>, mask: EventMask) {
        let Some(name) = name else {
            // The watched directory itself: deleted, moved, or chmod'ed.
            changes.structural = true;
            changes.dirty.push(dir.to_path_buf());
            return;
        };
        let path = dir.join(&name);
        let in_git_info = dir.ends_with(".git/info");
        let rules = is_rule_file(&name) || in_git_info;
        let content_only = (mask.contains(EventMask::MODIFY) || mask.contains(EventMask::ATTRIB))
            && !mask.contains(EventMask::ISDIR);
        if rules || !content_only {
            changes.structural = true;
        }
        changes.dirty.push(path);
    }

    pub struct Adder<'a> {
        watches: Watches,
        owner: &'a Watcher,
    }

    impl Adder<'_> {
        /// Watches `dir` (before it is listed). A failure is kept: the
        /// picture cannot be trusted without the watch.
        pub fn add(&mut self, dir: &Path) {
            match self.watches.add(dir, mask()) {
                Ok(wd) => {
                    (self.owner.dirs.lock().unwrap_or_else(|p| p.into_inner()))
                        .insert(wd.get_watch_descriptor_id(), dir.to_path_buf());
                }
                Err(e) => {
                    // A directory that vanished or cannot be read is the
                    // walk's business (it reports it); only the watch limit
                    // and similar failures make the picture blind.
                    if !matches!(
                        e.raw_os_error(),
                        Some(libc::ENOENT) | Some(libc::EACCES) | Some(libc::ENOTDIR)
                    ) {
                        let mut f = self.owner.failed.lock().unwrap_or_else(|p| p.into_inner());
                        f.get_or_insert_with(|| format!("cannot watch {}: {e}", dir.display()));
                    }
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::*;

    /// No watcher on this platform yet: the index is never built here.
    pub struct Watcher;

    impl Watcher {
        pub fn new() -> std::io::Result<Watcher> {
            Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "the index watches trees with inotify, which only Linux has",
            ))
        }
        pub fn adder(&self) -> Adder<'_> {
            Adder(std::marker::PhantomData)
        }
        pub fn forget_dirs(&self) {}
        pub fn watch_ancestors(&self, _root: &Path) {}
        pub fn failure(&self) -> Option<String> {
            None
        }
        pub fn drain(&self) -> Changes {
            Changes::default()
        }
    }

    pub struct Adder<'a>(std::marker::PhantomData<&'a ()>);
    impl Adder<'_> {
        pub fn add(&mut self, _dir: &Path) {}
    }
    #[allow(dead_code)]
    fn unused(_: &Mutex<HashMap<i32, PathBuf>>, _: OsString) {}
}

pub use imp::Watcher;
