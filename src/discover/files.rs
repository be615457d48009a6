//! Where both commands get their files (the directory's [`FileSource`]:
//! a ready index's table or the walk, visited by `pass::visit`), how they
//! read them and how a file's path is shown.

use super::DiscoverError;
use crate::index::{IndexMode, IndexUse};
use crate::search::{
    display_bytes, relative_bytes, resolve_target, DisplayPath, FileSource, IgnoredRoot, Narrowing,
    Target, WalkOptions, Walker,
};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Files larger than this are neither searched by trace nor outlined by
/// locate: memory and time per file stay bounded.
pub const MAX_READ_BYTES: u64 = 4 * 1024 * 1024;

/// Reads a regular file of at most `MAX_READ_BYTES` into `buf` (which a
/// walker thread reuses across its files: a fresh buffer per file cost more
/// in page faults than trace's search). Opened non-blocking and checked on
/// the open descriptor, so a FIFO swapped in since the walk never blocks us.
pub fn read_small(path: &Path, buf: &mut Vec<u8>) -> Option<std::fs::Metadata> {
    let (file, meta) = open_small(path)?;
    buf.clear();
    read_on(file.take(MAX_READ_BYTES), meta.len(), buf)?;
    Some(meta)
}

/// Reads the rest of `file` (of `len` bytes in all) after what `buf`
/// holds, in one read when the size holds.
fn read_on(mut file: impl Read, len: u64, buf: &mut Vec<u8>) -> Option<()> {
    buf.reserve((len as usize).saturating_sub(buf.len()));
    file.read_to_end(buf).ok().map(drop)
}

/// A regular file of at most `MAX_READ_BYTES`, opened as [`read_small`]
/// opens it, with its metadata.
fn open_small(path: &Path) -> Option<(std::fs::File, std::fs::Metadata)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    (meta.is_file() && meta.len() <= MAX_READ_BYTES).then_some((file, meta))
}

/// The size [`read_small`] would read from `path` (it counts against a
/// read budget), without reading it.
pub fn small_file_len(path: &Path) -> Option<u64> {
    open_small(path).map(|(_, meta)| meta.len())
}

/// The window [`look_through`] reads a large file in.
pub const LOOK_WINDOW: usize = 256 * 1024;

/// What [`look_through`] found in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// [`read_text`] would turn it away (binary, unreadable): skip it.
    Skip,
    /// No window holds what was looked for: skip it.
    Absent,
    /// A window past the first may hold it: read it whole.
    Present,
    /// No larger than a window, or the first window may hold it: `buf`
    /// now holds the whole text file, as [`read_text`] would have read it.
    Read,
}

/// Reads a text file as [`read_text`] does, but one larger than
/// `window` bytes is first looked through for what `holds` finds, a
/// window at a time, each window starting with the last
/// `overlap` bytes of the one before (one less than the longest match, so
/// no match is ever cut in two). Most files a trace reads hold no
/// occurrence of its subject (on the Linux tree `copy_process` allows
/// 3,000 files, 260 MB, and 17 name it): reading those through a window
/// that stays in the cache, instead of whole into a buffer of up to 4 MiB
/// that does not, was most of such a trace. `buf` is the reader's.
pub fn look_through(
    path: &Path,
    buf: &mut Vec<u8>,
    window: usize,
    overlap: usize,
    holds: impl Fn(&[u8]) -> bool,
) -> Look {
    let Some((file, meta)) = open_small(path) else {
        return Look::Skip;
    };
    let mut file = file.take(MAX_READ_BYTES);
    let whole = |file, buf: &mut Vec<u8>| match read_on(file, meta.len(), buf) {
        Some(()) if is_text(buf) => Look::Read,
        _ => Look::Skip,
    };
    if meta.len() <= window as u64 || overlap >= window {
        buf.clear();
        return whole(file, buf);
    }
    let mut kept = 0;
    let mut first = true;
    loop {
        buf.resize(kept + window, 0);
        let Some(n) = fill(&mut file, &mut buf[kept..]) else {
            return Look::Skip;
        };
        let end = kept + n;
        if first && !is_text(&buf[..end]) {
            return Look::Skip;
        }
        if holds(&buf[..end]) {
            if !first {
                return Look::Present;
            }
            // Nothing dropped yet: the rest follows what was read.
            buf.truncate(end);
            return whole(file, buf);
        }
        first = false;
        if n < window {
            return Look::Absent;
        }
        let keep = overlap.min(end);
        buf.copy_within(end - keep..end, 0);
        kept = keep;
    }
}

/// Reads until `out` is full or the file ends; the bytes read, `None` on
/// an error.
fn fill(file: &mut impl Read, out: &mut [u8]) -> Option<usize> {
    let mut n = 0;
    while n < out.len() {
        match file.read(&mut out[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(n)
}

/// Whether bytes read are text: no NUL early on, as ripgrep decides.
pub fn is_text(buf: &[u8]) -> bool {
    memchr::memchr(0, &buf[..buf.len().min(8192)]).is_none()
}

/// A text file's metadata and bytes (see [`read_small`], [`is_text`]).
pub fn read_text(path: &Path, buf: &mut Vec<u8>) -> Option<std::fs::Metadata> {
    let meta = read_small(path, buf)?;
    is_text(buf).then_some(meta)
}

/// A file's path as results show it: relative to the searched `root`.
pub fn shown_path(root: &Path, path: &Path) -> DisplayPath {
    display_bytes(&relative_bytes(root, path))
}

/// A validated search directory with its walk, and whether an index may
/// stand in for the walk.
pub struct Scope {
    pub root: PathBuf,
    walker: Arc<Walker>,
    index: IndexMode,
}

impl Scope {
    pub fn new(
        cwd: &Path,
        path: Option<&str>,
        walk: WalkOptions,
        index: IndexMode,
    ) -> Result<Scope, DiscoverError> {
        let root = match resolve_target(cwd, path)? {
            Target::Dir(d) => d,
            Target::File(f) => return Err(DiscoverError::NotADirectory(f.display().to_string())),
        };
        let walker = Arc::new(Walker::new(root.clone(), walk)?);
        Ok(Scope {
            root,
            walker,
            index,
        })
    }

    /// The directory's files: from the table of a ready index of it (or of
    /// one above it) when that can give them, each marked whether the
    /// regex `narrow` may match it, else the walk; with how the index
    /// served.
    pub fn source(&self, narrow: Option<&str>) -> (FileSource, IndexUse) {
        let narrowing = Narrowing {
            pattern: narrow,
            ..Narrowing::default()
        };
        let walk = FileSource::Walk(self.walker.clone());
        crate::index::source_for(walk, &narrowing, self.index)
    }

    /// Threads a visit of [`Scope::source`] runs on.
    pub fn threads(&self) -> usize {
        self.walker.options().threads
    }

    /// The labels of the ignored roots left unvisited: all of `roots`
    /// unless `visited`.
    pub fn unvisited(&self, roots: &[IgnoredRoot], visited: bool) -> Vec<String> {
        match visited {
            true => Vec::new(),
            false => roots.iter().map(|d| d.label(&self.root)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::relate::Subject;
    use proptest::prelude::*;

    fn piece() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "copy_process",
            "CopyProcess",
            "COPY-PROCESS",
            "copy",
            "process",
            "_printk",
            "printk",
            "_",
            "-",
            " ",
            "\n",
            "x",
            "y",
            "ypr",
            "\0",
        ])
        .prop_map(str::to_string)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

        /// Looking through a file a window at a time never turns away a
        /// file whose whole read shows the subject, wherever the windows
        /// cut it.
        #[test]
        fn a_look_through_windows_never_misses_an_occurrence(
            text in prop::collection::vec(piece(), 1..40),
            subject in prop::sample::select(vec!["copy_process", "process", "_printk", "printk"]),
            window in 4usize..48,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("f.c");
            std::fs::write(&path, text.concat()).unwrap();
            let subject = Subject::new(subject).unwrap();
            let overlap = subject.longest_match().unwrap() - 1;
            let mut buf = Vec::new();
            let look = look_through(&path, &mut buf, window, overlap, |b| subject.may_occur(b));
            let mut again = Vec::new();
            let text = read_text(&path, &mut again).is_some();
            let whole = text && !subject.find(&again, 1).is_empty();
            if whole {
                prop_assert!(look != Look::Skip && look != Look::Absent, "{look:?}");
            }
            if look == Look::Read {
                // What a whole read gives, byte for byte.
                prop_assert!(text);
                prop_assert_eq!(&buf, &again);
            }
        }
    }

    #[test]
    fn a_small_file_is_read_and_a_binary_one_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let (small, binary, absent) = (
            dir.path().join("small.c"),
            dir.path().join("bin.o"),
            dir.path().join("other.c"),
        );
        std::fs::write(&small, "copy_process();\n").unwrap();
        std::fs::write(&binary, b"\0copy_process();\n".repeat(10)).unwrap();
        std::fs::write(&absent, "copy_page();\n".repeat(10)).unwrap();
        let s = Subject::new("copy_process").unwrap();
        let look = |p: &Path| look_through(p, &mut Vec::new(), 32, 11, |b| s.may_occur(b));
        assert_eq!(look(&small), Look::Read);
        assert_eq!(look(&binary), Look::Skip);
        assert_eq!(look(&absent), Look::Absent);
        assert_eq!(s.longest_match(), Some(12));
    }
}
