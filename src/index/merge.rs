//! Posting lists of several sources merged key by key into the layout a
//! segment or generation keeps (the blob, then keys, then offsets). A big
//! merge (a build's final one) runs in two lanes, each over a range of the
//! keys: it was a third of a second on one core while the other idled.

use super::postings::{first_varint, partition_point, varint_bytes, Layout, ListSource, DROP_STEP};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Write};
use std::path::Path;

/// What one lane wrote: its keys, where each key's list starts in the
/// lane's bytes, and how many bytes it wrote.
struct Lane {
    keys: Vec<u32>,
    offsets: Vec<u64>,
    len: u64,
}

/// The first list of `s` whose key is `from` or more.
fn first_at_least(s: &dyn ListSource, from: u32) -> usize {
    partition_point(s.key_count(), |i| s.key(i) < from)
}

/// Writes the lists of the keys in `from..to` (`to` none: to the last) of
/// `sources`, merged. Every document of a source must be greater than
/// every document of the sources before it (segments of one build in
/// order; an older generation, then the files read again since): a key's
/// lists are then concatenated, only the first step of each later list
/// re-encoded from the previous list's end.
fn merge_keys(
    w: &mut impl Write,
    sources: &[&dyn ListSource],
    from: u32,
    to: Option<u32>,
) -> io::Result<Lane> {
    let mut cursor: Vec<usize> = sources.iter().map(|s| first_at_least(*s, from)).collect();
    // Each source's first list not given back yet.
    let mut kept = cursor.clone();
    let head = |i: usize, c: usize| {
        let s = sources[i];
        (c < s.key_count())
            .then(|| s.key(c))
            .filter(|&k| to.is_none_or(|t| k < t))
    };
    // Each source's next key and the source, least first (of one key, the
    // earlier source first: its documents come first). Scanning every
    // source's next key for each key was most of merging the ~50 runs of
    // the Linux tree's build.
    let mut heads: BinaryHeap<Reverse<(u32, usize)>> = (0..sources.len())
        .filter_map(|i| Some(Reverse((head(i, cursor[i])?, i))))
        .collect();
    let mut lane = Lane {
        keys: Vec::new(),
        offsets: Vec::new(),
        len: 0,
    };
    let mut having = Vec::with_capacity(sources.len());
    while let Some(&Reverse((key, _))) = heads.peek() {
        having.clear();
        while let Some(&Reverse((k, i))) = heads.peek() {
            if k != key {
                break;
            }
            heads.pop();
            having.push(i);
            cursor[i] += 1;
            // A source's keys increase: its next one is for a later round.
            if let Some(next) = head(i, cursor[i]) {
                heads.push(Reverse((next, i)));
            }
        }
        lane.keys.push(key);
        lane.offsets.push(lane.len);
        let mut end = 0u32;
        for (n, &i) in having.iter().enumerate() {
            let s = sources[i];
            let bytes = s.list(cursor[i] - 1).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a posting list failed its checksum",
                )
            })?;
            let rest = if n == 0 {
                bytes
            } else {
                let Some((first, used)) = first_varint(bytes) else {
                    continue;
                };
                // On the stack: a `Vec` here was an allocation for every
                // list but a key's first (~10 M over the Linux tree).
                let (head, len) = varint_bytes(first.wrapping_sub(end));
                w.write_all(&head[..len])?;
                lane.len += len as u64;
                &bytes[used..]
            };
            w.write_all(rest)?;
            lane.len += rest.len() as u64;
            if n + 1 < having.len() {
                end = s.end(cursor[i] - 1, bytes);
            }
            if s.list_start(cursor[i]) - s.list_start(kept[i]) >= DROP_STEP as u64 {
                s.done_between(kept[i], cursor[i]);
                kept[i] = cursor[i];
            }
        }
    }
    Ok(lane)
}

/// Writes the keys and offsets that follow the blob, for lanes written one
/// after the other.
fn write_index(w: &mut impl Write, lanes: &[Lane]) -> io::Result<Layout> {
    let mut keys = 0;
    for lane in lanes {
        for k in &lane.keys {
            w.write_all(&k.to_le_bytes())?;
        }
        keys += lane.keys.len();
    }
    let mut base = 0u64;
    for lane in lanes {
        for o in &lane.offsets {
            w.write_all(&(base + o).to_le_bytes())?;
        }
        base += lane.len;
    }
    w.write_all(&base.to_le_bytes())?;
    Ok(Layout {
        at: 0,
        blob: base as usize,
        keys,
    })
}

/// Writes the lists of `sources` merged key by key (see `merge_keys`).
pub fn write_merged(w: &mut impl Write, sources: &[&dyn ListSource]) -> io::Result<Layout> {
    let lane = merge_keys(w, sources, 0, None)?;
    write_index(w, &[lane])
}

/// Below this many list bytes a merge stays in one lane.
const SPLIT_BYTES: u64 = if cfg!(test) { 1 } else { 16 << 20 };

/// The lower lane's share of the list bytes, in per cent. It also writes
/// the head (the generation's table, ~30 ms on the Linux tree) while the
/// upper lane has started, hashes what it writes, and then copies the upper
/// lane's file after it. Split at half of the biggest source's bytes (59 %
/// of all of them there) it ended 130 ms after the upper lane; at 40 % and
/// with the table written before either lane started, the two ended
/// together; with the table in the lower lane, 40 % ended 45 ms after the
/// upper one, and a third ends with it.
const LOWER_PERCENT: u64 = 34;

/// The first key of the upper lane: where the sources' list bytes below
/// it reach the lower lane's share, when the merge is worth two lanes.
fn split_key(sources: &[&dyn ListSource]) -> Option<u32> {
    let total: u64 = sources.iter().map(|s| s.size()).sum();
    if total < SPLIT_BYTES || crate::search::cores() < 2 {
        return None;
    }
    let bytes_below = |key: u32| -> u64 {
        (sources.iter())
            .map(|s| s.list_start(first_at_least(*s, key)))
            .sum()
    };
    let end: u64 = sources.iter().map(|s| s.list_start(s.key_count())).sum();
    let want = end * LOWER_PERCENT / 100;
    let key = partition_point(1 << 24, |k| bytes_below(k as u32) < want) as u32;
    // A split that leaves either lane nothing is no split.
    let lower = bytes_below(key);
    (lower > 0 && lower < end).then_some(key)
}

/// `head`, then [`write_merged`], to `w`, the merge in two lanes: the keys
/// below `split_key` written to `w` on this thread (after `head`) while
/// another thread, started first, writes the rest to a file in `spill_dir`
/// (created and unlinked at once), then copied after them. The bytes are
/// those of `head` and [`write_merged`]. `head` runs while the upper lane
/// merges: a generation's table took 30 ms of the Linux tree's build with
/// the other core idle.
pub fn write_merged_in_lanes<W: Write>(
    w: &mut W,
    sources: &[&dyn ListSource],
    spill_dir: &Path,
    head: impl FnOnce(&mut W) -> io::Result<()>,
) -> io::Result<Layout> {
    let Some(split) = split_key(sources) else {
        head(w)?;
        return write_merged(w, sources);
    };
    let spill = unlinked_file(spill_dir, "lane")?;
    let (lower, upper) = std::thread::scope(|scope| {
        let upper = scope.spawn(|| -> io::Result<Lane> {
            let mut out = io::BufWriter::with_capacity(1 << 20, &spill);
            let lane = merge_keys(&mut out, sources, split, None)?;
            out.flush()?;
            Ok(lane)
        });
        let lower = head(w).and_then(|()| merge_keys(w, sources, 0, Some(split)));
        (lower, upper.join())
    });
    let lower = lower?;
    let upper = upper.map_err(|_| io::Error::other("a merge lane panicked"))??;
    copy_spilled(&spill, upper.len, w)?;
    write_index(w, &[lower, upper])
}

/// A new file in `dir`, readable and writable by this user only, and
/// already unlinked: nothing of it is left behind whatever happens next (a
/// build's segments, a merge lane's half).
pub(super) fn unlinked_file(dir: &Path, prefix: &str) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("{prefix}-{}-{seq}.tmp", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path);
    let _ = std::fs::remove_file(&path);
    f
}

/// Copies the first `len` bytes of `spill` to `w`.
fn copy_spilled(spill: &std::fs::File, len: u64, w: &mut impl Write) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0u64;
    while at < len {
        let want = buf.len().min((len - at) as usize);
        let got = spill.read_at(&mut buf[..want], at)?;
        if got == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "a merge lane's file came back short",
            ));
        }
        w.write_all(&buf[..got])?;
        at += got as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::postings::{write_segment, Builder};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn two_lanes_write_the_bytes_of_one(
            // Runs of documents, each document a few keys from a small
            // range (so that keys are shared across runs) or anywhere.
            runs in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::collection::btree_set(prop_oneof![0u32..64, 0u32..(1 << 24)], 0..12),
                    0..20,
                ),
                1..5,
            ),
            as_segment in any::<bool>(),
        ) {
            let mut doc = 0u32;
            let sorted: Vec<_> = runs.iter().map(|docs| {
                let mut b = Builder::default();
                for keys in docs {
                    b.add(doc, &keys.iter().copied().collect::<Vec<u32>>());
                    doc += 1;
                }
                b.into_sorted()
            }).collect();
            let dir = tempfile::tempdir().unwrap();
            let segment = as_segment.then(|| write_segment(dir.path(), &sorted[0], &mut Vec::new()).unwrap());
            let mut sources: Vec<&dyn ListSource> = sorted.iter().map(|s| s as &dyn ListSource).collect();
            if let Some(seg) = &segment {
                sources[0] = seg;
            }
            let mut one = Vec::new();
            let one_layout = write_merged(&mut one, &sources).unwrap();
            let mut two = Vec::new();
            // The lower lane's head is written before its lists.
            let head = b"head";
            let two_layout = write_merged_in_lanes(&mut two, &sources, dir.path(), |w| {
                w.extend_from_slice(head);
                Ok(())
            })
            .unwrap();
            prop_assert_eq!(&two[..head.len()], head);
            prop_assert_eq!(&two[head.len()..], &one[..]);
            prop_assert_eq!((two_layout.blob, two_layout.keys), (one_layout.blob, one_layout.keys));
            // Nothing left in the folder: the lane's file was unlinked.
            prop_assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        }
    }

    #[test]
    fn the_split_gives_the_lower_lane_a_third_of_the_bytes() {
        let mut b = Builder::default();
        for doc in 0..100 {
            b.add(doc, &(0..50u32).collect::<Vec<_>>());
        }
        let sorted = b.into_sorted();
        // 50 lists of the same size: the upper lane starts at the 18th key
        // (on a machine of more than one core), of one source or of two
        // that hold the keys between them.
        let cores = crate::search::cores();
        assert_eq!(split_key(&[&sorted]), (cores > 1).then_some(17));
        let (mut low, mut high) = (Builder::default(), Builder::default());
        for doc in 0..100 {
            low.add(doc, &(0..25u32).collect::<Vec<_>>());
            high.add(doc, &(25..50u32).collect::<Vec<_>>());
        }
        let (low, high) = (low.into_sorted(), high.into_sorted());
        assert_eq!(split_key(&[&low, &high]), (cores > 1).then_some(17));
    }
}
