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
//! through a shared mmap, and other mount namespaces. Ignore files are
//! watched themselves as well: a write to one through any name reaches
//! its own watch, and it re-classifies the files below it.

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
    /// Paths of the tree whose entry was created, deleted, moved or
    /// re-typed (and a directory whose ignore file or `.git` changed):
    /// the places the table is brought up to date at, each with what lies
    /// below it.
    pub relist: Vec<PathBuf>,
    /// A change no path of the tree places: the rules of a directory above
    /// the root, a repository's `info/exclude`, a rule file written through
    /// a hard link. The file table must be walked whole again.
    pub unplaced: bool,
    /// The kernel dropped events (queue overflow): the picture cannot be
    /// trusted until rebuilt.
    pub overflow: bool,
}

/// Whether a change of entry `name` re-classifies what lies below its
/// directory: an ignore file, or a `.git` or `.jj` (which makes it a
/// repository).
pub(super) fn is_rule_file(name: &std::ffi::OsStr) -> bool {
    name == ".git" || name == ".jj" || crate::search::IGNORE_FILES.iter().any(|f| name == *f)
}

/// What a watched directory stands for. One directory may stand for
/// several: a root named `a/..` has the tree's own `a` among its ancestors
/// as written, and a root named through a symlink has its real parents
/// beside the ones its name passes through.
#[derive(Debug, Clone)]
enum Role {
    /// A directory of the tree, by the table's spelling of its path.
    Tree(PathBuf),
    /// A directory above the root: its ignore files and `.git` count (the
    /// walk's classification reads them), and so does `down`, the name on
    /// the way down to the root (a move of it puts another tree there).
    Above { down: Option<OsString> },
    /// A `.git` folder (of the root, an ancestor or a nested repository):
    /// only `info` counts.
    GitDir,
    /// A `.git/info` folder: only `exclude` counts.
    GitInfo,
    /// An ignore file of the tree, watched itself: written through a hard
    /// link made later from outside the tree, it changes without a word
    /// to its directory's watch, only to its own.
    RuleFile,
}

/// The directories above `root` and, for each, the name on the way down:
/// both as `root` is written (the walk's classifier reads the ignore files
/// of those directories) and as it resolves (the folders whose entries
/// lead to the real root). `None` when `root` does not resolve.
fn above(root: &Path) -> Option<Vec<(PathBuf, Option<OsString>)>> {
    let real = std::fs::canonicalize(root).ok()?;
    let mut out = Vec::new();
    for chain in [root, real.as_path()] {
        for (child, parent) in chain.ancestors().zip(chain.ancestors().skip(1)) {
            let down = child.file_name().map(|n| n.to_os_string());
            out.push((parent.to_path_buf(), down));
        }
    }
    Some(out)
}

/// The opening words of a failure that is the inotify watch limit: a
/// state the index recovers from by itself once the tree fits (see
/// `LiveIndex`), not a verdict on the tree.
pub const WATCH_LIMIT: &str = "the inotify watch limit is reached";

/// Why the index cannot watch the tree when the watch limit is met: the
/// setting by name and value, how many watches this index held (one per
/// directory, and the tree has more), and what to do. ENOSPC's own text,
/// "No space left on device", reads like a full disk.
pub fn watch_limit_reason(limit: Option<u64>, held: usize) -> String {
    let limit = limit.map_or_else(|| "unknown".to_string(), |n| n.to_string());
    format!(
        "{WATCH_LIMIT} (fs.inotify.max_user_watches = {limit}, for all of this user's processes): \
         the index needs one watch per directory and held {held} when the next one was refused. \
         Searches scan meanwhile; raise the limit (e.g. sysctl fs.inotify.max_user_watches=524288) \
         or search a smaller directory, and the index rebuilds by itself once the tree fits"
    )
}

/// `fs.inotify.max_user_watches` as the kernel has it now.
fn max_user_watches() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(target_os = "linux")]
mod imp {
    use super::*;
    use inotify::{EventMask, Inotify, WatchMask, Watches};

    pub struct Watcher {
        inotify: Mutex<Inotify>,
        /// Watch descriptor → what its directory stands for, as of the
        /// last walk.
        roles: Mutex<HashMap<i32, Vec<Role>>>,
        /// The first failure to add a watch: the picture cannot be trusted
        /// without it.
        failed: Mutex<Option<String>>,
        /// Watches added so far, and at most how many may be (`None`: as
        /// many as the kernel allows; tests set a cap to meet the limit
        /// without changing the machine's setting).
        added: std::sync::atomic::AtomicUsize,
        cap: Option<usize>,
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

    /// For a file's own watch: its writes, metadata (a link count that
    /// changes), and its going away.
    fn file_mask() -> WatchMask {
        WatchMask::MODIFY
            | WatchMask::ATTRIB
            | WatchMask::DELETE_SELF
            | WatchMask::MOVE_SELF
            | WatchMask::DONT_FOLLOW
    }

    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|p| p.into_inner())
    }

    impl Watcher {
        /// A watcher that holds at most `cap` watches (`None`: the kernel's
        /// limit); past it, an add fails as the watch limit does.
        pub fn with_cap(cap: Option<usize>) -> std::io::Result<Watcher> {
            Ok(Watcher {
                inotify: Mutex::new(Inotify::init()?),
                roles: Mutex::new(HashMap::new()),
                failed: Mutex::new(None),
                added: std::sync::atomic::AtomicUsize::new(0),
                cap,
            })
        }

        fn fail(&self, what: &Path, e: impl std::fmt::Display) {
            let mut f = lock(&self.failed);
            f.get_or_insert_with(|| format!("cannot watch {}: {e}", what.display()));
        }

        /// Adds one watch, counting it; the cap and the kernel's ENOSPC
        /// (its watch limit) fail as [`watch_limit_reason`] words it.
        fn add_counted(
            &self,
            watches: &mut Watches,
            path: &Path,
            mask: WatchMask,
        ) -> std::io::Result<i32> {
            use std::sync::atomic::Ordering;
            let held = self.added.load(Ordering::Relaxed);
            let refused = self.cap.is_some_and(|cap| held >= cap);
            let added = if refused {
                Err(std::io::Error::from_raw_os_error(libc::ENOSPC))
            } else {
                watches
                    .add(path, mask)
                    .map(|wd| wd.get_watch_descriptor_id())
            };
            match &added {
                Ok(_) => {
                    self.added.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => {
                    let limit = if refused {
                        self.cap.map(|c| c as u64)
                    } else {
                        max_user_watches()
                    };
                    let mut f = lock(&self.failed);
                    f.get_or_insert_with(|| watch_limit_reason(limit, held));
                }
                Err(_) => {}
            }
            added
        }

        /// Watches `dir` by the path it resolves to (a watch that does not
        /// follow links fails on a symlinked name), as `role`; a failure is
        /// kept.
        fn add_resolved(&self, watches: &mut Watches, dir: &Path, role: Role) {
            let added = std::fs::canonicalize(dir)
                .and_then(|real| self.add_counted(watches, &real, mask()));
            match added {
                Ok(id) => {
                    lock(&self.roles).entry(id).or_default().push(role);
                }
                Err(e) => self.fail(dir, e),
            }
        }

        /// Forgets the tree directories at or below `path` (a moved or
        /// deleted subtree, about to be walked again where it is now): a
        /// directory moved elsewhere keeps its kernel watch, and its events
        /// must not be taken for its old place.
        pub fn forget_under(&self, path: &Path) {
            let below = |d: &Path| crate::search::path_order::at_or_below(d, path);
            // Bytes, not components: this runs over every watch of the tree
            // (5,000 on the Linux tree) for each place a change is applied at.
            lock(&self.roles).retain(|_, roles| {
                roles.retain(|r| !matches!(r, Role::Tree(d) if below(d)));
                !roles.is_empty()
            });
        }

        /// Forgets what each watch stands for; the walk about to run adds
        /// back what still holds (a directory moved out keeps its kernel
        /// watch, but its events are no longer attributed).
        pub fn forget(&self) {
            lock(&self.roles).clear();
        }

        /// Watches the root and every directory above it (see [`above`]).
        /// Any of them that cannot be watched is a failure: a change of
        /// the rules there would go unseen.
        pub fn watch_root(&self, root: &Path) {
            let mut watches = lock(&self.inotify).watches();
            let Some(dirs) = above(root) else {
                self.fail(root, "it does not resolve");
                return;
            };
            for (dir, down) in dirs {
                self.add_resolved(&mut watches, &dir, Role::Above { down });
            }
            self.add_resolved(&mut watches, root, Role::Tree(root.to_path_buf()));
        }

        /// Watches the `.git` folder `git` (for an `info` created in it)
        /// and its `info` (for `exclude`), where they are folders.
        pub fn watch_git(&self, git: &Path) {
            let mut watches = lock(&self.inotify).watches();
            if git.is_dir() {
                self.add_resolved(&mut watches, git, Role::GitDir);
                let info = git.join("info");
                if info.is_dir() {
                    self.add_resolved(&mut watches, &info, Role::GitInfo);
                }
            }
        }

        /// A handle threads of a walk can add watches through.
        pub fn adder(&self) -> Adder<'_> {
            Adder {
                watches: lock(&self.inotify).watches(),
                owner: self,
            }
        }

        pub fn failure(&self) -> Option<String> {
            lock(&self.failed).clone()
        }

        /// Reads every event queued so far, without blocking.
        pub fn drain(&self) -> Changes {
            let mut changes = Changes::default();
            let mut buf = vec![0u8; 64 * 1024];
            let mut inotify = lock(&self.inotify);
            let roles = lock(&self.roles);
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
                    for role in roles.get(&wd).into_iter().flatten() {
                        classify(&mut changes, role, ev.name, ev.mask);
                    }
                }
                if !any {
                    break;
                }
            }
            changes
        }
    }

    /// The watched directory itself went away or was moved.
    fn gone(mask: EventMask) -> bool {
        mask.intersects(EventMask::DELETE_SELF | EventMask::MOVE_SELF | EventMask::IGNORED)
    }

    fn classify(
        changes: &mut Changes,
        role: &Role,
        name: Option<&std::ffi::OsStr>,
        mask: EventMask,
    ) {
        let counts = match (role, name) {
            (Role::Tree(dir), name) => return in_tree(changes, dir, name, mask),
            (Role::RuleFile, _) => true,
            (_, None) => gone(mask),
            (Role::Above { down }, Some(n)) => is_rule_file(n) || down.as_deref() == Some(n),
            (Role::GitDir, Some(n)) => n == "info",
            (Role::GitInfo, Some(n)) => n == "exclude",
        };
        changes.unplaced |= counts;
    }

    fn in_tree(changes: &mut Changes, dir: &Path, name: Option<&std::ffi::OsStr>, mask: EventMask) {
        let Some(name) = name else {
            // The watched directory itself: deleted, moved, or chmod'ed.
            changes.relist.push(dir.to_path_buf());
            changes.dirty.push(dir.to_path_buf());
            return;
        };
        let content_only = (mask.contains(EventMask::MODIFY) || mask.contains(EventMask::ATTRIB))
            && !mask.contains(EventMask::ISDIR);
        if is_rule_file(name) {
            // It re-classifies everything below its directory.
            changes.relist.push(dir.to_path_buf());
        } else if !content_only {
            changes.relist.push(dir.join(name));
        }
        changes.dirty.push(dir.join(name));
    }

    pub struct Adder<'a> {
        watches: Watches,
        owner: &'a Watcher,
    }

    impl Adder<'_> {
        /// Watches `dir`, a directory of the tree (before it is listed). A
        /// failure is kept: the picture cannot be trusted without the watch.
        pub fn add(&mut self, dir: &Path) {
            self.add_as(dir, mask(), Role::Tree(dir.to_path_buf()));
        }

        /// Watches `file`, an ignore file of the tree (before it is
        /// stamped). A failure is kept, as for a directory.
        pub fn add_rule_file(&mut self, file: &Path) {
            self.add_as(file, file_mask(), Role::RuleFile);
        }

        fn add_as(&mut self, path: &Path, mask: WatchMask, role: Role) {
            match self.owner.add_counted(&mut self.watches, path, mask) {
                Ok(id) => {
                    lock(&self.owner.roles).entry(id).or_default().push(role);
                }
                Err(e) => {
                    // An entry that vanished, was replaced (by a file or a
                    // link) or cannot be read is the walk's business: its
                    // parent's watch saw the change, or the walk reports it.
                    // Only the watch limit and similar failures make the
                    // picture blind.
                    if !matches!(
                        e.raw_os_error(),
                        Some(libc::ENOENT) | Some(libc::EACCES) | Some(libc::ENOTDIR)
                    ) {
                        self.owner.fail(path, e);
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
        pub fn with_cap(_cap: Option<usize>) -> std::io::Result<Watcher> {
            let _ = (max_user_watches, watch_limit_reason);
            Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "the index watches trees with inotify, which only Linux has",
            ))
        }
        pub fn adder(&self) -> Adder<'_> {
            Adder(std::marker::PhantomData)
        }
        pub fn forget(&self) {}
        pub fn forget_under(&self, _path: &Path) {}
        pub fn watch_root(&self, _root: &Path) {}
        pub fn watch_git(&self, _git: &Path) {}
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
        pub fn add_rule_file(&mut self, _file: &Path) {}
    }
    #[allow(dead_code)]
    fn unused(_: &Mutex<HashMap<i32, PathBuf>>, _: OsString, _: Role) {
        let _ = above;
    }
}

pub use imp::Watcher;
