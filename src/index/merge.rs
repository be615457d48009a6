//! Posting lists of several sources merged key by key into the layout a
//! segment or generation keeps (the blob, then keys, then offsets). A big
//! merge (a build's final one) runs in two lanes, each over a range of the
//! keys: it was a third of a second on one core while the other idled.

use super::codec::{first_varint, partition_point, varint_bytes, varint_bytes_in};
use super::lists::{ListSource, DROP_STEP};
use super::postings::{Layout, Postings};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;

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
/// re-encoded from the previous list's end. `keep_length`: a re-encoded
/// step takes as many bytes as the value it replaces (never fewer: it is
/// smaller), so the lane writes exactly its sources' list bytes.
fn merge_keys(
    w: &mut impl Write,
    sources: &[&dyn ListSource],
    from: u32,
    to: Option<u32>,
    keep_length: bool,
) -> io::Result<Lane> {
    let mut cursor: Vec<usize> = sources.iter().map(|s| first_at_least(*s, from)).collect();
    // Each source's first list not given back yet.
    let mut kept = cursor.clone();
    let below_to = |k: u32| to.is_none_or(|t| k < t);
    let mut lane = Lane {
        keys: Vec::new(),
        offsets: Vec::new(),
        len: 0,
    };
    // One block of keys at a time: each source's lists in the block, in
    // source order, then put in key order by counting (stable: of one key,
    // the earlier source first, as its documents come first). Taking each
    // next key from a heap of the sources' next keys was a fifth of the
    // merge's time on the Linux tree's ~50 runs.
    let mut found: Vec<Found> = Vec::new();
    let mut in_order: Vec<Found> = Vec::new();
    let mut counts = vec![0u32; KEY_BLOCK as usize + 1];
    loop {
        let next = (sources.iter().zip(&cursor))
            .filter(|(s, &c)| c < s.key_count())
            .map(|(s, &c)| s.key(c))
            .filter(|&k| below_to(k))
            .min();
        let Some(next) = next else { break };
        let base = next & !(KEY_BLOCK - 1);
        let block_end = base.saturating_add(KEY_BLOCK);
        found.clear();
        for (i, s) in sources.iter().enumerate() {
            let (n, mut c) = (s.key_count(), cursor[i]);
            while c < n {
                let k = s.key(c);
                if k >= block_end || !below_to(k) {
                    break;
                }
                found.push(Found {
                    key: k - base,
                    source: i as u32,
                    list: c,
                });
                c += 1;
            }
            cursor[i] = c;
        }
        counts.fill(0);
        for f in &found {
            counts[f.key as usize + 1] += 1;
        }
        for k in 1..counts.len() {
            counts[k] += counts[k - 1];
        }
        in_order.clear();
        in_order.resize(found.len(), Found::default());
        for f in &found {
            let at = &mut counts[f.key as usize];
            in_order[*at as usize] = *f;
            *at += 1;
        }
        for same in in_order.chunk_by(|a, b| a.key == b.key) {
            write_key(w, sources, base + same[0].key, same, keep_length, &mut lane)?;
        }
        for (i, s) in sources.iter().enumerate() {
            if s.list_start(cursor[i]) - s.list_start(kept[i]) >= DROP_STEP as u64 {
                s.done_between(kept[i], cursor[i]);
                kept[i] = cursor[i];
            }
        }
    }
    Ok(lane)
}

/// Keys a merge puts in order at a time: a block's lists fit the core's
/// caches.
const KEY_BLOCK: u32 = 1 << 10;

/// A source's list of a key in the block being merged.
#[derive(Clone, Copy, Default)]
struct Found {
    /// The key, less the block's first.
    key: u32,
    source: u32,
    list: usize,
}

/// Writes the lists of `key` (one per source that has it, in source order)
/// as one (see [`merge_keys`]).
fn write_key(
    w: &mut impl Write,
    sources: &[&dyn ListSource],
    key: u32,
    lists: &[Found],
    keep_length: bool,
    lane: &mut Lane,
) -> io::Result<()> {
    lane.keys.push(key);
    lane.offsets.push(lane.len);
    let mut end = 0u32;
    for (n, f) in lists.iter().enumerate() {
        let s = sources[f.source as usize];
        let bytes = s.list(f.list).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "a posting list failed its checksum",
            )
        })?;
        let rest = if n == 0 {
            bytes
        } else {
            let Some((first, used)) = first_varint(bytes) else {
                if keep_length {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "a posting list does not start with a varint",
                    ));
                }
                continue;
            };
            // On the stack: a `Vec` here was an allocation for every
            // list but a key's first (~10 M over the Linux tree).
            let step = first.wrapping_sub(end);
            let (head, len) = match keep_length {
                true => (varint_bytes_in(step, used), used),
                false => varint_bytes(step),
            };
            w.write_all(&head[..len])?;
            lane.len += len as u64;
            &bytes[used..]
        };
        w.write_all(rest)?;
        lane.len += rest.len() as u64;
        if n + 1 < lists.len() {
            end = s.end(f.list, bytes);
        }
    }
    Ok(())
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
    let lane = merge_keys(w, sources, 0, None, false)?;
    write_index(w, &[lane])
}

/// Below this many list bytes a merge stays in one lane.
const SPLIT_BYTES: u64 = if cfg!(test) { 1 } else { 16 << 20 };

/// The lower lane's share of the list bytes, in per cent. Both lanes start
/// once the generation's table is written and write their own part of the
/// file; the lower one writes a little more (its widened steps) and its
/// keys' lists are more of them per byte. On the Linux tree 42 % ended
/// 8-25 ms before the upper lane.
const LOWER_PERCENT: u64 = 45;

/// The first key of the upper lane, where the sources' list bytes below
/// it reach the lower lane's share, and those bytes; `None` when the merge
/// is not worth two lanes.
fn split_key(sources: &[&dyn ListSource]) -> Option<(u32, u64)> {
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
    (lower > 0 && lower < end).then_some((key, lower))
}

/// Writes to `file` at increasing offsets, without a file position: the
/// two lanes of a merge write one file at once.
pub struct Placed<'a> {
    pub file: &'a File,
    /// Where the next byte goes.
    pub at: u64,
}

impl Write for Placed<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write_at(buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// [`write_merged`] into `file` from offset `at`, in two lanes when the
/// merge is big enough: the keys below `split_key` on this thread, the
/// rest on another, each writing at its own place in the file. The lower
/// lane keeps every re-encoded step as wide as the value it replaces, so
/// it writes exactly its sources' bytes below the split and the upper
/// lane knows where to start; those steps are at most a few bytes of a
/// key's list each. Returns where the written layout ends.
///
/// The upper lane used to write to a file of its own, copied after the
/// lower lane's once both were done: 95 MB written twice on the Linux tree,
/// 30-140 ms of the build with one core working (fresh page cache pages
/// are slow to fill in a VM).
pub fn write_merged_in_lanes(
    file: &File,
    at: u64,
    sources: &[&dyn ListSource],
) -> io::Result<(Layout, u64)> {
    let writer = |at: u64| io::BufWriter::with_capacity(1 << 20, Placed { file, at });
    let lane_at = |lane: io::Result<Lane>, mut w: io::BufWriter<Placed>| {
        let lane = lane?;
        w.flush()?;
        Ok::<_, io::Error>((lane, w.get_ref().at))
    };
    let Some((split, lower_bytes)) = split_key(sources) else {
        let mut w = writer(at);
        let layout = write_merged(&mut w, sources)?;
        w.flush()?;
        return Ok((layout, w.get_ref().at));
    };
    let (lower, upper) = std::thread::scope(|scope| {
        let upper = scope.spawn(|| {
            let mut w = writer(at + lower_bytes);
            lane_at(merge_keys(&mut w, sources, split, None, false), w)
        });
        let mut w = writer(at);
        let lower = lane_at(merge_keys(&mut w, sources, 0, Some(split), true), w);
        (lower, upper.join())
    });
    let (lower, lower_end) = lower?;
    let (upper, end) = upper.map_err(|_| io::Error::other("a merge lane panicked"))??;
    if lower_end != at + lower_bytes {
        return Err(io::Error::other(
            "the lower merge lane's bytes differ from its sources'",
        ));
    }
    let mut w = writer(end);
    let layout = write_index(&mut w, &[lower, upper])?;
    w.flush()?;
    Ok((layout, w.get_ref().at))
}

/// `sources` merged into memory (when no file can be written).
pub fn merge_in_memory(sources: &[&dyn ListSource]) -> Postings {
    let mut bytes = Vec::new();
    match write_merged(&mut bytes, sources) {
        Ok(layout) => Postings::memory(bytes, layout).unwrap_or_default(),
        Err(_) => Postings::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::builder::Builder;
    use crate::index::lists::write_segment;
    use crate::index::planner::Query;
    use proptest::prelude::*;

    /// Every key of `p` with its documents.
    fn every_list(p: &Postings) -> Vec<(u32, Option<Vec<u32>>)> {
        (0..ListSource::key_count(p))
            .map(|i| ListSource::key(p, i))
            .map(|k| {
                let docs = p.eval(&Query::Tri(k), 1 << 16, &mut { u64::MAX });
                (k, docs.map(|d| d.ones().map(|d| d as u32).collect()))
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn two_lanes_write_the_lists_of_one(
            // Runs of documents, each document a few keys from a small
            // range (so that keys are shared across runs) or anywhere, and
            // some runs far apart in documents (wide first steps).
            runs in proptest::collection::vec(
                (
                    proptest::collection::vec(
                        proptest::collection::btree_set(prop_oneof![0u32..64, 0u32..(1 << 24)], 0..12),
                        0..20,
                    ),
                    prop_oneof![Just(0u32), 0u32..40_000],
                ),
                1..5,
            ),
            as_segment in any::<bool>(),
        ) {
            let mut doc = 0u32;
            let sorted: Vec<_> = runs.iter().map(|(docs, gap)| {
                doc += gap;
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
            let one = Postings::memory(one, one_layout).unwrap();
            // The lanes write after what the file holds already.
            let file = tempfile::tempfile_in(dir.path()).unwrap();
            file.write_all_at(b"head", 0).unwrap();
            let (layout, end) = write_merged_in_lanes(&file, 4, &sources).unwrap();
            let mut bytes = vec![0u8; end as usize];
            file.read_exact_at(&mut bytes, 0).unwrap();
            prop_assert_eq!(&bytes[..4], b"head");
            prop_assert_eq!(end as usize, 4 + layout.len());
            let two = Postings::memory(bytes[4..].to_vec(), layout).unwrap();
            prop_assert_eq!(every_list(&two), every_list(&one));
            // Wider steps in the lower lane at most: never more bytes than
            // the sources gave.
            let given: u64 = sources.iter().map(|s| s.list_start(s.key_count())).sum();
            prop_assert!(layout.blob as u64 <= given);
            prop_assert!(layout.blob >= one_layout.blob);
        }
    }

    #[test]
    fn the_split_gives_the_lower_lane_its_share_of_the_bytes() {
        let mut b = Builder::default();
        for doc in 0..100 {
            b.add(doc, &(0..50u32).collect::<Vec<_>>());
        }
        let sorted = b.into_sorted();
        // 50 lists of the same size: the upper lane starts at the 24th key
        // (on a machine of more than one core), of one source or of two
        // that hold the keys between them.
        let cores = crate::search::cores();
        let list = sorted.list_start(1);
        assert_eq!(
            split_key(&[&sorted]),
            (cores > 1).then_some((23, 23 * list))
        );
        let (mut low, mut high) = (Builder::default(), Builder::default());
        for doc in 0..100 {
            low.add(doc, &(0..25u32).collect::<Vec<_>>());
            high.add(doc, &(25..50u32).collect::<Vec<_>>());
        }
        let (low, high) = (low.into_sorted(), high.into_sorted());
        assert_eq!(
            split_key(&[&low, &high]),
            (cores > 1).then_some((23, 23 * list))
        );
    }
}
