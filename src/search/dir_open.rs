//! Opening a searched file relative to its directory.
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
//! way, as with an open by path.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// Opens without blocking: a FIFO swapped in after the walk must not hang
/// the open.
pub(super) fn open_nonblocking(path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
    }
    #[cfg(not(unix))]
    File::open(path)
}

/// The directory a searcher opened its last file in.
#[derive(Default)]
pub(super) struct DirOpener {
    #[cfg(target_os = "linux")]
    last: Option<(PathBuf, std::os::fd::OwnedFd)>,
}

impl DirOpener {
    pub(super) fn open(&mut self, path: &Path) -> io::Result<File> {
        #[cfg(target_os = "linux")]
        if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
            if let Some(file) = self.open_in(dir, name) {
                return Ok(file);
            }
        }
        open_nonblocking(path)
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
        let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC;
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
}
