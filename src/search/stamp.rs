//! A file's stamp: what tells, without reading the file, that its contents
//! may have changed since it was last looked at, and the racy window
//! within which an unchanged stamp proves nothing. The index's file table,
//! the outline cache and the compiled-rules cache all take their stamps
//! and their window from here.
//!
//! The rule (git's "racily clean" entries): filesystem clocks are coarse,
//! so a write in the same tick as a stamp can leave size, mtime and ctime
//! as they were. A stamp therefore vouches for a file only once the file's
//! last change lies [`RACY`] or more before the stamp was taken. The last
//! change is the ctime: every write, chmod, link or rename sets it, and
//! unlike the mtime nobody can set it back (or ahead).

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A stamp taken within this long after the file's last change (or
/// before it) does not prove the file unchanged when it is found again.
pub const RACY: Duration = Duration::from_secs(2);

/// What identifies a file's content cheaply: a change to any of these means
/// the file must be read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stamp {
    pub size: u64,
    pub mtime: (i64, i64),
    /// Changed by every write and by no one else (mtime can be set back):
    /// what lets a later process trust a stored stamp.
    pub ctime: (i64, i64),
    pub ino: u64,
    /// Links to the inode. A write through one name of a hard-linked file
    /// is reported for that name's directory only, so the index never
    /// trusts a file with more than one link to its postings.
    pub nlink: u64,
}

impl Stamp {
    /// The stamp of `path` itself (a symlink's, not its target's).
    pub fn of(path: &Path) -> Option<Stamp> {
        Some(Self::of_meta(&std::fs::symlink_metadata(path).ok()?))
    }

    /// The stamp of what `path` names once links are followed: what the
    /// walk's classifier reads of a rule file.
    pub fn followed(path: &Path) -> Option<Stamp> {
        Some(Self::of_meta(&std::fs::metadata(path).ok()?))
    }

    pub fn of_meta(m: &Metadata) -> Stamp {
        Stamp {
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
            ino: m.ino(),
            nlink: m.nlink(),
        }
    }

    // `st_nlink` is 32 bits on some targets.
    #[allow(clippy::unnecessary_cast)]
    pub fn of_stat(st: &libc::stat) -> Stamp {
        Stamp {
            size: st.st_size.max(0) as u64,
            mtime: (st.st_mtime, st.st_mtime_nsec),
            ctime: (st.st_ctime, st.st_ctime_nsec),
            ino: st.st_ino,
            nlink: st.st_nlink as u64,
        }
    }

    /// When the file last changed: its ctime (a time before 1970 counts as
    /// 1970).
    pub fn changed(&self) -> SystemTime {
        let (s, ns) = self.ctime;
        UNIX_EPOCH + Duration::new(s.max(0) as u64, ns.clamp(0, 999_999_999) as u32)
    }

    /// Whether this stamp, taken at `at`, vouches for the file: its last
    /// change lies more than `window` (normally [`RACY`]; tests shorten it)
    /// before `at`.
    pub fn settled(&self, at: SystemTime, window: Duration) -> bool {
        at.checked_sub(window)
            .is_some_and(|cutoff| self.changed() < cutoff)
    }
}

/// A stamp with the device its inode is on: it tells a file from every
/// other on the machine, where a stamp alone tells it among the files of
/// one tree (the index's table). The caches that outlive a search key on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DevStamp {
    pub dev: u64,
    pub stamp: Stamp,
}

impl DevStamp {
    pub fn of_meta(m: &Metadata) -> DevStamp {
        DevStamp {
            dev: m.dev(),
            stamp: Stamp::of_meta(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_vouches_only_for_a_change_older_than_the_window() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let s = Stamp::of(&file).unwrap();
        let now = SystemTime::now();
        assert!(!s.settled(now, RACY), "just written");
        assert!(s.settled(now + RACY + Duration::from_secs(1), RACY));
        assert!(!s.settled(
            now + RACY + Duration::from_secs(1),
            Duration::from_secs(3600)
        ));
        // An mtime set ahead is no change of the contents: the ctime decides.
        let ahead = now + Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(ahead)
            .unwrap();
        let later = Stamp::of(&file).unwrap();
        assert_ne!(later, s, "set_modified changes the stamp");
        assert!(later.settled(SystemTime::now() + RACY + Duration::from_secs(1), RACY));
        // No window reaches before 1970.
        assert!(!s.settled(UNIX_EPOCH, RACY));
    }
}
