//! Opening and stat-ing a walked file relative to its directory.
//!
//! Opening by absolute path makes the kernel look up every component again:
//! on the Linux tree under `~/.cache/...` that is nine lookups per file, a
//! tenth of a whole-tree search's CPU. Files come in path order, so the
//! next file is almost always in the directory of the last one: each
//! searcher keeps that directory open (`O_PATH`) and opens the file by its
//! name in it. Should that fail (the directory went away since), the file
//! is opened by its full path as before. A directory renamed away and
//! replaced in the middle of a search may be read as it was when its files
//! were listed: a change made while a search runs is seen or not, either
//! way, as with an open by path. Glob stats every matching entry for its
//! mtime, and does so the same way ([`DirStat`]).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// Opens without blocking: a FIFO swapped in after the walk must not hang
/// the open. `extra`: more `open` flags (`O_NOFOLLOW`).
pub(super) fn open_nonblocking(path: &Path, extra: i32) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | extra)
            .open(path)
    }
    #[cfg(not(unix))]
    File::open(path)
}

/// The directory a searcher opened its last file in.
#[derive(Default)]
pub struct DirOpener {
    /// More flags for every open: the index's reader adds `O_NOFOLLOW`,
    /// so that a link swapped in for a file since the walk is not read as
    /// that file's content.
    extra_flags: i32,
    #[cfg(target_os = "linux")]
    last: Option<(PathBuf, std::os::fd::OwnedFd)>,
    /// The directory of the last file, opened by its path: a directory is
    /// opened for the files after it only from its second file on. The
    /// files an index leaves are mostly one to a directory, where opening
    /// each directory first was two calls more per file.
    #[cfg(target_os = "linux")]
    by_path: Option<PathBuf>,
}

impl DirOpener {
    /// An opener that fails on a symbolic link rather than following it.
    #[cfg(unix)]
    pub fn not_following_links() -> Self {
        DirOpener {
            extra_flags: libc::O_NOFOLLOW,
            ..DirOpener::default()
        }
    }

    pub fn open(&mut self, path: &Path) -> io::Result<File> {
        #[cfg(target_os = "linux")]
        if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
            let open = self.last.as_ref().is_some_and(|(d, _)| d == dir);
            if open || self.by_path.as_deref() == Some(dir) {
                if let Some(file) = self.open_in(dir, name) {
                    return Ok(file);
                }
            } else {
                self.last = None;
                self.by_path = Some(dir.to_path_buf());
            }
        }
        open_nonblocking(path, self.extra_flags)
    }

    #[cfg(target_os = "linux")]
    fn open_in(&mut self, dir: &Path, name: &std::ffi::OsStr) -> Option<File> {
        use std::ffi::CString;
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        use std::os::unix::ffi::OsStrExt;
        if self.last.as_ref().is_none_or(|(d, _)| d != dir) {
            self.last = None;
            let c = CString::new(dir.as_os_str().as_bytes()).ok()?;
            let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
            // SAFETY: `c` is a valid NUL-terminated string; the returned fd
            // is owned by the `OwnedFd` at once.
            let fd = unsafe { libc::open(c.as_ptr(), flags) };
            if fd < 0 {
                return None;
            }
            self.last = Some((dir.to_path_buf(), unsafe { OwnedFd::from_raw_fd(fd) }));
        }
        let (_, dirfd) = self.last.as_ref()?;
        let c = CString::new(name.as_bytes()).ok()?;
        let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC | self.extra_flags;
        // SAFETY: as above; a valid directory fd and a NUL-terminated name.
        let fd = unsafe { libc::openat(dirfd.as_raw_fd(), c.as_ptr(), flags) };
        if fd < 0 {
            // Gone or replaced: forget it, and let the caller try the path.
            self.last = None;
            return None;
        }
        Some(unsafe { File::from_raw_fd(fd) })
    }
}

/// What glob needs of an entry's metadata (its own, not a symlink target's).
#[derive(Debug, Clone, Copy)]
pub struct MtimeSize {
    pub mtime: std::time::SystemTime,
    pub size: u64,
}

impl From<&std::fs::Metadata> for MtimeSize {
    fn from(m: &std::fs::Metadata) -> Self {
        MtimeSize {
            mtime: m.modified().unwrap_or(std::time::SystemTime::UNIX_EPOCH),
            size: m.len(),
        }
    }
}

/// A directory being listed, opened (`O_PATH`) on the first stat of one of
/// its entries and closed with the listing.
pub struct DirStat<'a> {
    dir: &'a Path,
    #[cfg(target_os = "linux")]
    fd: std::cell::OnceCell<Option<std::os::fd::OwnedFd>>,
}

impl<'a> DirStat<'a> {
    pub fn new(dir: &'a Path) -> Self {
        DirStat {
            dir,
            #[cfg(target_os = "linux")]
            fd: std::cell::OnceCell::new(),
        }
    }

    /// The mtime and size of entry `name`, by `fstatat` in the directory, or by path
    /// when that fails.
    pub(super) fn mtime_size(&self, name: &std::ffi::OsStr) -> io::Result<MtimeSize> {
        #[cfg(target_os = "linux")]
        if let Some(s) = self.stat_in(name) {
            return Ok(s);
        }
        std::fs::symlink_metadata(self.dir.join(name)).map(|m| MtimeSize::from(&m))
    }

    /// Entry `name`'s own `lstat`, by `fstatat` in the directory, or by
    /// path when that fails.
    #[cfg(unix)]
    pub fn lstat(&self, name: &std::ffi::OsStr) -> Option<libc::stat> {
        #[cfg(target_os = "linux")]
        if let Some(st) = self.lstat_in(name) {
            return Some(st);
        }
        lstat_path(&self.dir.join(name))
    }

    #[cfg(target_os = "linux")]
    fn lstat_in(&self, name: &std::ffi::OsStr) -> Option<libc::stat> {
        use std::ffi::CString;
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        use std::os::unix::ffi::OsStrExt;
        let fd = self.fd.get_or_init(|| {
            let c = CString::new(self.dir.as_os_str().as_bytes()).ok()?;
            let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
            // SAFETY: a valid NUL-terminated path; the fd is owned at once.
            let fd = unsafe { libc::open(c.as_ptr(), flags) };
            (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
        });
        let fd = fd.as_ref()?;
        let c = CString::new(name.as_bytes()).ok()?;
        // SAFETY: `st` is plain data the call fills in; fd and name are valid.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let rc = unsafe {
            libc::fstatat(
                fd.as_raw_fd(),
                c.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        (rc == 0).then_some(st)
    }

    #[cfg(target_os = "linux")]
    fn stat_in(&self, name: &std::ffi::OsStr) -> Option<MtimeSize> {
        let st = self.lstat_in(name)?;
        // As std reads it: seconds may be negative (before 1970), the
        // nanoseconds are always added.
        let epoch = std::time::UNIX_EPOCH;
        let secs = std::time::Duration::from_secs(st.st_mtime.unsigned_abs());
        let whole = if st.st_mtime >= 0 {
            epoch.checked_add(secs)
        } else {
            epoch.checked_sub(secs)
        };
        let nanos = std::time::Duration::from_nanos(st.st_mtime_nsec.clamp(0, 999_999_999) as u64);
        let mtime = whole.and_then(|t| t.checked_add(nanos)).unwrap_or(epoch);
        Some(MtimeSize {
            mtime,
            size: st.st_size.max(0) as u64,
        })
    }
}

/// `path`'s own `lstat` (a symlink's, not its target's).
#[cfg(unix)]
pub(super) fn lstat_path(path: &Path) -> Option<libc::stat> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: `st` is plain data the call fills in; the path is valid.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::lstat(c.as_ptr(), &mut st) } == 0).then_some(st)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn read(o: &mut DirOpener, p: &Path) -> io::Result<String> {
        let mut s = String::new();
        o.open(p)?.read_to_string(&mut s)?;
        Ok(s)
    }

    #[test]
    fn files_open_by_name_in_the_last_directory_and_by_path_when_it_is_gone() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("1"), "a1").unwrap();
        std::fs::write(a.join("2"), "a2").unwrap();
        std::fs::write(b.join("1"), "b1").unwrap();
        let mut o = DirOpener::default();
        assert_eq!(read(&mut o, &a.join("1")).unwrap(), "a1");
        assert_eq!(read(&mut o, &a.join("2")).unwrap(), "a2");
        assert_eq!(read(&mut o, &b.join("1")).unwrap(), "b1");
        assert_eq!(read(&mut o, &a.join("1")).unwrap(), "a1");
        // The kept directory is deleted and made anew: the name is looked up
        // in the old one, fails, and the path finds the new file.
        std::fs::remove_dir_all(&a).unwrap();
        std::fs::create_dir_all(&a).unwrap();
        std::fs::write(a.join("3"), "new a3").unwrap();
        assert_eq!(read(&mut o, &a.join("3")).unwrap(), "new a3");
        let missing = read(&mut o, &t.path().join("nope/1")).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_stamp_in_the_directory_is_the_entry_own_metadata() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("f"), "12345").unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::new(1_000_000, 123);
        std::fs::File::options()
            .write(true)
            .open(t.path().join("f"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("f", t.path().join("l")).unwrap();
        let dir = DirStat::new(t.path());
        for name in ["f", "l"] {
            let want = MtimeSize::from(&std::fs::symlink_metadata(t.path().join(name)).unwrap());
            let got = dir.mtime_size(std::ffi::OsStr::new(name)).unwrap();
            assert_eq!((got.mtime, got.size), (want.mtime, want.size), "{name}");
        }
        assert_eq!(
            dir.mtime_size(std::ffi::OsStr::new("f")).unwrap().mtime,
            old
        );
        let missing = t.path().join("nope");
        let gone = DirStat::new(&missing);
        assert!(gone.mtime_size(std::ffi::OsStr::new("f")).is_err());
    }
}
