//! Whether a short read of a regular file can be taken as its end, for
//! every file a search of a directory may read.
//!
//! Reading a small file costs two reads when the second one is only there
//! to see 0 bytes come back: a tenth of a whole-tree search on this VM's
//! kernel. On the local, page-cache filesystems listed here a read of a
//! regular file returns fewer bytes than asked only at the end of the file
//! (as it stood then), so the second read can go. A FUSE filesystem in
//! direct-I/O mode, or a network filesystem, may return short reads in the
//! middle: there, and wherever the mounts cannot be read, files are read
//! until a read returns 0, as rg does everywhere.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

/// Filesystems whose reads of regular files come from the page cache (or
/// memory) and are short only at the end of the file.
const LOCAL: &[&str] = &[
    "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "overlay", "f2fs", "zfs", "squashfs",
    "erofs", "bcachefs",
];

/// Whether every filesystem a walk of `root` can reach is one of
/// [`LOCAL`]: the one `root` lies on and every one mounted below it.
pub fn short_read_ends_file(root: &Path) -> bool {
    if !cfg!(target_os = "linux") {
        return false;
    }
    let Ok(root) = std::fs::canonicalize(root) else {
        return false;
    };
    let mut mounts = MOUNTS.lock().unwrap_or_else(|p| p.into_inner());
    mounts.current().is_some_and(|info| all_local(info, &root))
}

/// The mount table, read again only when the kernel says it changed: a
/// poll of an open `mountinfo` reports `POLLPRI` after any mount or unmount
/// in this namespace since the last poll, so a search costs one `poll`
/// instead of opening and parsing the table.
static MOUNTS: std::sync::Mutex<MountTable> = std::sync::Mutex::new(MountTable {
    file: None,
    text: Vec::new(),
    reads: 0,
});

struct MountTable {
    file: Option<std::fs::File>,
    text: Vec<u8>,
    /// Times the table was read (for a test).
    reads: u64,
}

/// Whether a `poll` of an open `mountinfo` (its result and `revents`) says
/// the table may have changed since the last one. No event (0) is "no":
/// taking it for a change read and parsed the table on every search.
fn poll_says_changed(n: libc::c_int, revents: libc::c_short) -> bool {
    n < 0 || (n > 0 && revents & (libc::POLLPRI | libc::POLLERR | libc::POLLNVAL) != 0)
}

impl MountTable {
    fn current(&mut self) -> Option<&[u8]> {
        use std::io::{Read, Seek};
        use std::os::fd::AsRawFd;
        let changed = match &self.file {
            None => {
                self.file = std::fs::File::open("/proc/self/mountinfo").ok();
                true
            }
            Some(f) => {
                let mut fd = libc::pollfd {
                    fd: f.as_raw_fd(),
                    events: libc::POLLPRI,
                    revents: 0,
                };
                // SAFETY: one valid pollfd, a zero timeout.
                let n = unsafe { libc::poll(&mut fd, 1, 0) };
                poll_says_changed(n, fd.revents)
            }
        };
        let file = self.file.as_mut()?;
        if changed {
            self.reads += 1;
            self.text.clear();
            let read = file.rewind().and_then(|_| file.read_to_end(&mut self.text));
            if read.is_err() {
                self.file = None;
                return None;
            }
        }
        Some(&self.text)
    }
}

/// The decision on a `mountinfo` text (proc(5)) for a canonical `root`.
fn all_local(info: &[u8], root: &Path) -> bool {
    // The mount `root` lies on: the deepest mount point above it, the last
    // one listed when several are stacked on the same point.
    let mut at: Option<(usize, bool)> = None;
    for line in info.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let Some((point, fstype)) = parse_line(line) else {
            return false;
        };
        let local = LOCAL.contains(&fstype.as_str());
        if point.starts_with(root) && point != root {
            if !local {
                return false;
            }
        } else if root.starts_with(&point) {
            let depth = point.components().count();
            if at.is_none_or(|(d, _)| depth >= d) {
                at = Some((depth, local));
            }
        }
    }
    at.is_some_and(|(_, local)| local)
}

/// The mount point and filesystem type of one `mountinfo` line.
fn parse_line(line: &[u8]) -> Option<(PathBuf, String)> {
    let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    let point = fields.get(4)?;
    let sep = fields.iter().position(|f| *f == b"-")?;
    let fstype = std::str::from_utf8(fields.get(sep + 1)?).ok()?;
    Some((unescape(point), fstype.to_string()))
}

/// Undoes the kernel's octal escapes of space, tab, newline and backslash.
fn unescape(field: &[u8]) -> PathBuf {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal = field
            .get(i + 1..i + 4)
            .filter(|d| field[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push(d.iter().fold(0u8, |n, c| n.wrapping_mul(8) + (c - b'0')));
                i += 4;
            }
            None => {
                out.push(field[i]);
                i += 1;
            }
        }
    }
    PathBuf::from(OsString::from_vec(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: u32, point: &str, fstype: &str) -> String {
        format!("{id} 1 0:{id} / {point} rw,relatime shared:1 - {fstype} none rw\n")
    }

    fn decide(lines: &[(&str, &str)], root: &str) -> bool {
        let info: String = (lines.iter().enumerate())
            .map(|(i, (p, t))| line(i as u32 + 20, p, t))
            .collect();
        all_local(info.as_bytes(), Path::new(root))
    }

    #[test]
    fn a_tree_on_a_local_filesystem_ends_files_at_a_short_read() {
        let m = [("/", "overlay"), ("/work", "ext4"), ("/proc", "proc")];
        assert!(decide(&m, "/work/repo"));
        assert!(!decide(&m, "/"), "a walk of / reaches /proc");
    }

    #[test]
    fn a_fuse_or_network_mount_on_the_way_or_below_reads_to_zero() {
        assert!(!decide(
            &[("/", "ext4"), ("/mnt/s", "fuse.sshfs")],
            "/mnt/s/x"
        ));
        assert!(!decide(&[("/", "ext4"), ("/w/r/nfs", "nfs4")], "/w/r"));
        assert!(
            decide(&[("/", "ext4"), ("/w/other", "nfs4")], "/w/r"),
            "a sibling mount is never walked"
        );
        assert!(
            !decide(&[("/", "ext4"), ("/proc", "proc")], "/proc/self"),
            "unknown: not local"
        );
    }

    #[test]
    fn the_last_mount_stacked_on_a_point_is_the_one_seen() {
        assert!(!decide(
            &[("/", "ext4"), ("/m", "ext4"), ("/m", "fuse")],
            "/m/a"
        ));
        assert!(decide(
            &[("/", "ext4"), ("/m", "fuse"), ("/m", "ext4")],
            "/m/a"
        ));
    }

    #[test]
    fn escaped_mount_points_are_read_as_bytes() {
        assert_eq!(unescape(br"/a\040b\134c"), PathBuf::from("/a b\\c"));
        assert!(!decide(&[("/", "ext4"), (r"/w/a\040b", "fuse")], "/w/a b"));
        let raw = OsString::from_vec(b"/w/\xff".to_vec());
        assert_eq!(unescape(b"/w/\\377"), PathBuf::from(raw));
    }

    /// A mount made after the table was read is seen by the next decision
    /// (the poll reports it), not only after some time.
    #[test]
    fn a_mount_made_meanwhile_is_seen_at_once() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("m");
        std::fs::create_dir(&dir).unwrap();
        let before = short_read_ends_file(&dir);
        let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
        let ramfs = c"ramfs";
        // SAFETY: valid C strings; needs CAP_SYS_ADMIN, skipped without it.
        let mounted = unsafe {
            libc::mount(
                ramfs.as_ptr(),
                c.as_ptr(),
                c"proc".as_ptr(),
                0,
                std::ptr::null(),
            )
        } == 0;
        let _ = ramfs;
        if !mounted {
            eprintln!("skipped: cannot mount here");
            return;
        }
        let after = short_read_ends_file(&dir);
        // SAFETY: the path just mounted.
        unsafe { libc::umount(c.as_ptr()) };
        let again = short_read_ends_file(&dir);
        assert!(!after, "proc mounted on the folder: not local");
        assert_eq!(again, before, "unmounted: as before");
    }

    #[test]
    fn the_table_is_read_again_only_when_a_poll_reports_a_change() {
        assert!(!poll_says_changed(0, 0), "no event: unchanged");
        assert!(poll_says_changed(1, libc::POLLPRI | libc::POLLERR));
        assert!(poll_says_changed(-1, 0), "a failed poll: read again");
        let mut table = MountTable {
            file: None,
            text: Vec::new(),
            reads: 0,
        };
        for _ in 0..50 {
            assert!(table.current().is_some());
        }
        // Another test may mount and unmount meanwhile (when it can): two
        // more reads.
        assert!(table.reads <= 3, "{} reads for 50 searches", table.reads);
    }

    #[test]
    fn a_garbled_table_reads_to_zero() {
        assert!(!all_local(b"nonsense line\n", Path::new("/")));
    }

    #[test]
    fn this_machines_temp_folder_is_decided_without_error() {
        let t = tempfile::tempdir().unwrap();
        let info = std::fs::read("/proc/self/mountinfo").unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        assert_eq!(short_read_ends_file(t.path()), all_local(&info, &root));
        assert!(!short_read_ends_file(&t.path().join("missing")));
    }
}
