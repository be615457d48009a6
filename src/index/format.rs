//! The bytes of a saved index: one generation file (`gen-<N>`) holds the
//! file table and the postings, and a table file (`table-<N>`) may restate
//! that generation's table. How the folder around them is kept (names,
//! lock, which generation is read, eviction) is `store.rs`'s business.
//!
//! Every integer is little-endian. `bytes` is a u32 length, then that many
//! bytes. A `time` is an i64 of seconds since the Unix epoch, then a u32 of
//! nanoseconds. A `stamp` is u64 size, i64 mtime seconds, i64 mtime
//! nanoseconds, i64 ctime seconds, i64 ctime nanoseconds, u64 inode, u64
//! link count (56 bytes); an `optional stamp` is a u8 (0: none), then a
//! stamp unless it was 0. Paths are the bytes of the OS string; "relative"
//! ones are relative to the root, empty for the root itself.
//!
//! A generation file, in order:
//!
//! ```text
//! table (from offset 0; its length is `at`)
//!   magic            8 bytes  "PIUGEN06"
//!   walk start       time     when the walk that stamped the table began
//!   built at         time
//!   next document    u32      greater than every document in the postings
//!   root             bytes    absolute; another root's file is not read
//!   ignored roots    u32 count, then per root:
//!                      is a directory  u8 (0 or 1)
//!                      path            bytes, relative
//!   entries          u32 count, then per file, in walk order:
//!                      path            bytes, relative
//!                      ignored root    u32 index into the ignored roots,
//!                                      u32::MAX for a project file
//!                      flags           u8: bit 0 a stamp follows,
//!                                          bit 1 a document follows
//!                      stamp           (bit 0)
//!                      document        u32 (bit 1), below next document
//!   directories      u32 count, then per directory listed by the walk:
//!                      path            bytes, relative
//!                      stamp           optional stamp
//!   rule files       u32 count, then per ignore file read:
//!                      path            bytes, absolute
//!                      stamp           optional stamp
//! postings (`postings.rs`)
//!   blob             every posting list, in key order, back to back. A
//!                    list is the documents holding the key, ascending,
//!                    as LEB128 varints (7 bits a byte, low bits first,
//!                    high bit set on all but the last byte; a varint may
//!                    be wider than it needs, its high groups zeros): the
//!                    first is its document + 1, each later one the step
//!                    from the document before it (never 0)
//!   keys             u32 per key, strictly ascending. A key is a trigram
//!                    of ASCII-lowercased bytes a, b, c: a << 16 | b << 8 | c
//!   offsets          u64 per key, plus one: where each key's list starts
//!                    in the blob; the first is 0, the last the blob's
//!                    length, none smaller than the one before
//! block sums         u64 per block: the xxh3-64 of each block of
//!                    1 << shift bytes (64 KiB) of everything above (the
//!                    "body"), the last block possibly short (`blocks.rs`)
//! trailer (48 bytes)
//!   at               u64      where the blob starts (the table's length)
//!   blob length      u64
//!   key count        u64
//!   block shift      u64      16; a reader takes 6 to 30
//!   checksum         u64      xxh3-64 of the block sums and the four
//!                             words above
//!   done             8 bytes  "PIUGENOK"
//! ```
//!
//! The sections must add up: `at + blob length + 4 * keys + 8 * (keys + 1)`
//! is the body's length, and the body, 8 bytes per block and the trailer
//! are the whole file. A reader checks the trailer, its checksum and these
//! sums, then the blocks of the table and of the keys and offsets at open;
//! a list's blocks are checked when a search first reads it. Anything that
//! does not check out makes the whole file damaged.
//!
//! A table file is a table exactly as above (the same magic), whose entries
//! may lack stamps their generation has (files left unread), then a u64
//! xxh3-64 of that table, then 8 bytes "PIUTABOK". It is read instead of
//! its generation's own table.
//!
//! Any change to these bytes takes a new magic (the history is at
//! [`MAGIC`]): a file of another version then reads as damaged, and is
//! built again rather than misread.

mod table_codec;

use super::blocks::{block_sums, Checked, BLOCK_SHIFT, SHIFTS};
use super::lists::ListSource;
use super::merge::{write_merged_in_lanes, Placed};
use super::postings::{Layout, Postings};
use super::table::{Entry, Table};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use table_codec::{parse_table, put_table};

/// 02: block checksums (`blocks.rs`) instead of one over the whole file.
/// 03: the table's directories and rule files, stamped (`restamp.rs`).
/// 04: rule files stamped through links, nested repositories' and
/// symlinked ignore files among them; UTF-16 files left unindexed.
/// 05: files of up to 64 MiB indexed (16 before): a saved table keeps a
/// bigger file as unindexable until it changes, so older stores are built
/// again.
/// 06: one definition of "ignored" (`search::classify`): parents'
/// `.ignore`/`.rgignore` up to `/`, `.gitignore` stopping at a nested
/// repository's root, the global excludes, a worktree's exclude file; a
/// table classified before is built again.
const MAGIC: &[u8; 8] = b"PIUGEN06";
const DONE: &[u8; 8] = b"PIUGENOK";
const TABLE_DONE: &[u8; 8] = b"PIUTABOK";
const TRAILER: usize = 48;

/// What a generation says about itself besides its table and postings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    /// When the walk that stamped its table started.
    pub walk_start: SystemTime,
    pub built_at: SystemTime,
    /// Greater than every document in its postings.
    pub next_doc: u32,
}

fn secs(t: SystemTime) -> (i64, u32) {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => (d.as_secs() as i64, d.subsec_nanos()),
        Err(_) => (0, 0),
    }
}

pub fn time_of(s: i64, ns: u32) -> SystemTime {
    UNIX_EPOCH + Duration::new(s.max(0) as u64, ns.min(999_999_999))
}

fn damaged(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why.to_string())
}

/// Writes a generation of `root` into `file` (new, opened to read and
/// write): the table, then `sources` merged (in two lanes when big, see
/// `write_merged_in_lanes`), then the block sums and the trailer. The
/// caller puts it in place.
pub fn write_generation(
    file: &File,
    root: &Path,
    table: &Table,
    meta: &Meta,
    sources: &[&dyn ListSource],
) -> io::Result<()> {
    let mut w = io::BufWriter::with_capacity(1 << 20, Placed { file, at: 0 });
    put_table(&mut w, root, table, meta, |_, e| e.stamp)?;
    w.flush()?;
    let (layout, body) = write_merged_in_lanes(file, w.get_ref().at, sources)?;
    let at = w.get_ref().at;
    // The lanes write the body out of order: its blocks are summed once it
    // is all written, from the page cache.
    let sums = block_sums(file, body, BLOCK_SHIFT)?;
    let mut tail = Vec::with_capacity(sums.len() * 8 + TRAILER);
    for s in &sums {
        tail.extend_from_slice(&s.to_le_bytes());
    }
    let words = [at, layout.blob as u64, layout.keys as u64];
    for v in words.into_iter().chain([BLOCK_SHIFT as u64]) {
        tail.extend_from_slice(&v.to_le_bytes());
    }
    let sum = xxhash_rust::xxh3::xxh3_64(&tail);
    tail.extend_from_slice(&sum.to_le_bytes());
    tail.extend_from_slice(DONE);
    file.write_all_at(&tail, body)
}

/// Reads the generation file at `path` for `root`, checking what can be
/// checked at open (see the top of this file). Its table is parsed only
/// `with_table` (a table saved apart replaces it, and a writer has it
/// already). Err(InvalidData): damaged.
pub fn read_generation(
    path: &Path,
    root: &Path,
    with_table: bool,
) -> io::Result<(Option<(Meta, Table)>, Postings)> {
    let f = File::open(path)?;
    let len = f.metadata()?.len();
    if len < (MAGIC.len() + TRAILER) as u64 {
        return Err(damaged("too short"));
    }
    let mut trailer = [0u8; TRAILER];
    f.read_exact_at(&mut trailer, len - TRAILER as u64)?;
    let word =
        |i: usize| u64::from_le_bytes(trailer[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
    if &trailer[40..] != DONE {
        return Err(damaged("no completion marker"));
    }
    let (at, blob, keys, shift) = (word(0), word(1), word(2), word(3));
    if !SHIFTS.contains(&u32::try_from(shift).unwrap_or(u32::MAX))
        || keys > len
        || blob > len
        || at > len
    {
        return Err(damaged("bad trailer"));
    }
    let layout = Layout {
        at: at as usize,
        blob: blob as usize,
        keys: keys as usize,
    };
    let body = (layout.at)
        .checked_add(layout.len())
        .ok_or_else(|| damaged("sections do not add up"))? as u64;
    let blocks = Checked::count(body, shift as u32);
    if body + blocks * 8 + TRAILER as u64 != len {
        return Err(damaged("sections do not add up"));
    }
    let mut sums = vec![0u8; blocks as usize * 8];
    f.read_exact_at(&mut sums, body)?;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&sums);
    h.update(&trailer[..32]);
    if h.digest() != word(4) {
        return Err(damaged("checksum mismatch"));
    }
    let sums = (sums.chunks_exact(8))
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    let meta = f.metadata()?;
    let checked = Arc::new(Checked::new(shift as u32, sums, body as usize).removing(path, &meta));
    // SAFETY: a complete generation file is never written again (new ones
    // are renamed over, old ones unlinked), so the mapping cannot change.
    let map = Arc::new(unsafe { memmap2::Mmap::map(&f)? });
    let keys_at = layout.at + layout.blob;
    if !checked.check(&map, 0..layout.at) || !checked.check(&map, keys_at..body as usize) {
        return Err(damaged("checksum mismatch"));
    }
    let table = match with_table {
        true => Some(parse_table(&map[..layout.at], root).ok_or_else(|| damaged("bad table"))?),
        false => None,
    };
    let postings =
        Postings::mapped_checked(map, layout, checked).ok_or_else(|| damaged("bad postings"))?;
    Ok((table, postings))
}

/// The bytes of a table file restating `table` (stamped by a walk after
/// `meta.walk_start`). The stamps of the files at `unread` (indices,
/// ascending) are left out: those files are not in the postings.
pub fn table_file(
    root: &Path,
    table: &Table,
    meta: &Meta,
    unread: &[usize],
) -> io::Result<Vec<u8>> {
    let mut body = Vec::with_capacity(table.entries.len() * 96);
    let stamp_of = |i: usize, e: &Entry| e.stamp.filter(|_| unread.binary_search(&i).is_err());
    put_table(&mut body, root, table, meta, stamp_of)?;
    let sum = xxhash_rust::xxh3::xxh3_64(&body);
    body.extend_from_slice(&sum.to_le_bytes());
    body.extend_from_slice(TABLE_DONE);
    Ok(body)
}

/// What [`table_file`] wrote as the whole of `bytes`; `None` when it does
/// not check out.
pub fn parse_table_file(bytes: &[u8], root: &Path) -> Option<(Meta, Table)> {
    let body = bytes.len().checked_sub(16)?;
    let sum = u64::from_le_bytes(bytes[body..body + 8].try_into().ok()?);
    let whole =
        &bytes[body + 8..] == TABLE_DONE && xxhash_rust::xxh3::xxh3_64(&bytes[..body]) == sum;
    whole.then(|| parse_table(&bytes[..body], root)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::builder::Builder;
    use crate::index::keys::trigrams_of;

    /// Reads a generation by the layout stated at the top of this file
    /// alone, so the statement cannot drift from what is written.
    #[test]
    fn a_generation_is_laid_out_as_the_top_of_this_file_says() {
        let root = Path::new("/r");
        let mut b = Builder::default();
        b.add(2, &trigrams_of(b"abc"));
        b.add(9, &trigrams_of(b"abcd"));
        let meta = Meta {
            walk_start: time_of(1_800_000_000, 7),
            built_at: time_of(1_800_000_001, 8),
            next_doc: 10,
        };
        let file = tempfile::tempfile().unwrap();
        write_generation(&file, root, &Table::default(), &meta, &[&b.into_sorted()]).unwrap();
        let mut bytes = vec![0u8; file.metadata().unwrap().len() as usize];
        file.read_exact_at(&mut bytes, 0).unwrap();
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
        assert_eq!(&bytes[..8], b"PIUGEN06");
        assert_eq!((u64_at(8), u32_at(16)), (1_800_000_000, 7), "walk start");
        assert_eq!((u64_at(20), u32_at(28)), (1_800_000_001, 8), "built at");
        assert_eq!(u32_at(32), 10, "next document");
        assert_eq!((u32_at(36), &bytes[40..42]), (2, &b"/r"[..]), "root");
        // No ignored roots, entries, directories or rule files.
        assert_eq!(&bytes[42..58], &[0; 16]);
        let len = bytes.len();
        let trailer = len - 48;
        assert_eq!(&bytes[len - 8..], b"PIUGENOK");
        let word = |i: usize| u64_at(trailer + i * 8) as usize;
        let (at, blob, keys, shift) = (word(0), word(1), word(2), word(3));
        assert_eq!((at, keys, shift), (58, 2, BLOCK_SHIFT as usize), "abc, bcd");
        let body = at + blob + 4 * keys + 8 * (keys + 1);
        let blocks = body.div_ceil(1 << shift);
        assert_eq!(body + 8 * blocks + 48, len, "the sections add up");
        let sums = xxhash_rust::xxh3::xxh3_64(&bytes[body..trailer + 32]);
        assert_eq!(sums, word(4) as u64);
        let first = body.min(1 << shift);
        assert_eq!(xxhash_rust::xxh3::xxh3_64(&bytes[..first]), u64_at(body));
        let keys_at = at + blob;
        let abc = (b'a' as u32) << 16 | (b'b' as u32) << 8 | b'c' as u32;
        assert_eq!(u32_at(keys_at), abc);
        let offsets: Vec<u64> = (0..=keys).map(|i| u64_at(keys_at + 8 + i * 8)).collect();
        assert_eq!(offsets, [0, 2, 3], "abc in 2 and 9, bcd in 9");
        // Document 2 as 3, then the step 7; document 9 as 10.
        assert_eq!(&bytes[at..at + blob], &[3, 7, 10]);
    }
}
