//! The table section of a saved index (its layout: the top of
//! `format.rs`), written as the whole of a table file's body and as the
//! start of a generation.

use super::{secs, time_of, Meta, MAGIC};
use crate::index::table::{dirs_in_order, Entry, Table};
use crate::search::stamp::Stamp;
use crate::search::IgnoredRoot;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

fn put_bytes(w: &mut impl Write, b: &[u8]) -> io::Result<()> {
    w.write_all(&(b.len() as u32).to_le_bytes())?;
    w.write_all(b)
}

/// `p` relative to `root`. A walk's paths are `root`, a `/` and plain
/// names: their bytes are cut there. Others (a `.` or an empty component,
/// a trailing `/`) go component by component, which was most of writing
/// the Linux tree's table (21 ms).
fn rel<'a>(root: &Path, p: &'a Path) -> &'a [u8] {
    let plain = |rest: &[u8]| {
        !rest.is_empty()
            && !rest
                .split(|&b| b == b'/')
                .any(|name| name.is_empty() || name == b".")
    };
    let bytes = p.as_os_str().as_bytes();
    let rest = bytes.strip_prefix(root.as_os_str().as_bytes());
    match rest.and_then(|r| r.strip_prefix(b"/")) {
        Some(rest) if plain(rest) && !root.as_os_str().as_bytes().ends_with(b"/") => rest,
        _ => p.strip_prefix(root).unwrap_or(p).as_os_str().as_bytes(),
    }
}

/// `stamp_of`: the stamp written for each entry (a table file leaves out
/// those of files not in the postings).
pub fn put_table(
    w: &mut impl Write,
    root: &Path,
    table: &Table,
    meta: &Meta,
    stamp_of: impl Fn(usize, &Entry) -> Option<Stamp>,
) -> io::Result<()> {
    w.write_all(MAGIC)?;
    for t in [meta.walk_start, meta.built_at] {
        let (s, ns) = secs(t);
        w.write_all(&s.to_le_bytes())?;
        w.write_all(&ns.to_le_bytes())?;
    }
    w.write_all(&meta.next_doc.to_le_bytes())?;
    put_bytes(w, root.as_os_str().as_bytes())?;
    w.write_all(&(table.ignored_roots.len() as u32).to_le_bytes())?;
    for r in &table.ignored_roots {
        w.write_all(&[r.is_dir as u8])?;
        put_bytes(w, rel(root, &r.path))?;
    }
    w.write_all(&(table.entries.len() as u32).to_le_bytes())?;
    for (i, e) in table.entries.iter().enumerate() {
        put_bytes(w, rel(root, &e.path))?;
        w.write_all(&e.ignored_root.unwrap_or(u32::MAX).to_le_bytes())?;
        let stamp = stamp_of(i, e);
        let flags = stamp.is_some() as u8 | (e.doc.is_some() as u8) << 1;
        w.write_all(&[flags])?;
        if let Some(s) = &stamp {
            put_stamp_fields(w, s)?;
        }
        if let Some(d) = e.doc {
            w.write_all(&d.to_le_bytes())?;
        }
    }
    w.write_all(&(table.dirs.len() as u32).to_le_bytes())?;
    for (path, stamp) in &table.dirs {
        put_bytes(w, rel(root, path))?;
        put_stamp(w, stamp)?;
    }
    // Outside the root: absolute paths.
    w.write_all(&(table.rule_files.len() as u32).to_le_bytes())?;
    for (path, stamp) in &table.rule_files {
        put_bytes(w, path.as_os_str().as_bytes())?;
        put_stamp(w, stamp)?;
    }
    Ok(())
}

fn put_stamp(w: &mut impl Write, stamp: &Option<Stamp>) -> io::Result<()> {
    w.write_all(&[stamp.is_some() as u8])?;
    match stamp {
        Some(s) => put_stamp_fields(w, s),
        None => Ok(()),
    }
}

fn put_stamp_fields(w: &mut impl Write, s: &Stamp) -> io::Result<()> {
    w.write_all(&s.size.to_le_bytes())?;
    for (a, b) in [s.mtime, s.ctime] {
        w.write_all(&a.to_le_bytes())?;
        w.write_all(&b.to_le_bytes())?;
    }
    w.write_all(&s.ino.to_le_bytes())?;
    w.write_all(&s.nlink.to_le_bytes())
}

/// The table [`put_table`] wrote as the whole of `bytes`; `None` on
/// anything short, odd or left over.
pub fn parse_table(bytes: &[u8], root: &Path) -> Option<(Meta, Table)> {
    let mut r = Reader { b: bytes, at: 0 };
    let found = read_table(&mut r, root)?;
    (r.at == bytes.len()).then_some(found)
}

/// Reads what [`put_table`] wrote; `None` on anything short or odd.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.b.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    /// What [`put_stamp`] wrote.
    fn stamp(&mut self) -> Option<Option<Stamp>> {
        match self.u8()? {
            0 => Some(None),
            _ => self.stamp_fields().map(Some),
        }
    }

    /// What [`put_stamp_fields`] wrote.
    fn stamp_fields(&mut self) -> Option<Stamp> {
        Some(Stamp {
            size: self.u64()?,
            mtime: (self.i64()?, self.i64()?),
            ctime: (self.i64()?, self.i64()?),
            ino: self.u64()?,
            nlink: self.u64()?,
        })
    }

    fn path(&mut self, root: &Path) -> Option<PathBuf> {
        let b = self.bytes()?;
        let p = Path::new(std::ffi::OsStr::from_bytes(b));
        Some(if b.is_empty() {
            root.to_path_buf()
        } else {
            root.join(p)
        })
    }
}

fn read_table(r: &mut Reader, root: &Path) -> Option<(Meta, Table)> {
    if r.take(8)? != MAGIC {
        return None;
    }
    let (ws, wn) = (r.i64()?, r.u32()?);
    let (bs, bn) = (r.i64()?, r.u32()?);
    let next_doc = r.u32()?;
    if r.bytes()? != root.as_os_str().as_bytes() {
        return None;
    }
    let n_roots = r.u32()? as usize;
    let mut ignored_roots = Vec::with_capacity(n_roots.min(1 << 16));
    for _ in 0..n_roots {
        let is_dir = r.u8()? != 0;
        ignored_roots.push(IgnoredRoot {
            path: r.path(root)?,
            is_dir,
        });
    }
    let n = r.u32()? as usize;
    let mut entries = Vec::with_capacity(n.min(1 << 20));
    for _ in 0..n {
        let path = r.path(root)?;
        let ignored_root = Some(r.u32()?).filter(|&i| i != u32::MAX);
        if ignored_root.is_some_and(|i| i as usize >= n_roots) {
            return None;
        }
        let flags = r.u8()?;
        let stamp = if flags & 1 != 0 {
            Some(r.stamp_fields()?)
        } else {
            None
        };
        let doc = if flags & 2 != 0 { Some(r.u32()?) } else { None };
        if doc.is_some_and(|d| d >= next_doc) {
            return None;
        }
        entries.push(Entry {
            path,
            ignored_root,
            stamp,
            doc,
        });
    }
    let n_dirs = r.u32()? as usize;
    let mut dirs = Vec::with_capacity(n_dirs.min(1 << 20));
    for _ in 0..n_dirs {
        dirs.push((r.path(root)?, r.stamp()?));
    }
    let n_rules = r.u32()? as usize;
    let mut rule_files = Vec::with_capacity(n_rules.min(1 << 10));
    for _ in 0..n_rules {
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(r.bytes()?));
        rule_files.push((path, r.stamp()?));
    }
    let meta = Meta {
        walk_start: time_of(ws, wn),
        built_at: time_of(bs, bn),
        next_doc,
    };
    let table = Table {
        entries: entries.into(),
        ignored_roots,
        errors: Default::default(),
        dirs: dirs_in_order(dirs),
        rule_files,
    };
    Some((meta, table))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_path_relative_to_the_root_is_what_stripping_its_components_gives(
            root in proptest::collection::vec("r|s|\\.|", 0..3),
            names in proptest::collection::vec("[a-c]{1,2}|\\.|\\.\\.|", 0..4),
            trailing in any::<bool>(),
        ) {
            let root = format!("/{}", root.join("/"));
            let under = format!("{root}/{}{}", names.join("/"), if trailing { "/" } else { "" });
            for p in [under.as_str(), root.as_str(), "/elsewhere/a"] {
                let (root, p) = (Path::new(&root), Path::new(p));
                let want = p.strip_prefix(root).unwrap_or(p).as_os_str().as_bytes();
                prop_assert_eq!(rel(root, p), want, "{:?} under {:?}", p, root);
            }
        }
    }
}
