//! A long list kept in chunks of a few thousand items: replacing a run of
//! it moves the items of the chunks the run touches, not the list's tail.
//! The file table of four Linux trees is 346,520 entries (36 MB); kept in
//! one vector, one file created or deleted moved most of it.
//!
//! A position is found by a binary search over the chunks' starts, then
//! within the chunk; passes go chunk by chunk.

use std::ops::{Index, IndexMut, Range};

/// Items per chunk when made whole or split; a chunk grows to twice this
/// before it is split, and one under a quarter of it joins a neighbour.
/// Small in tests, so that runs cross chunk boundaries.
#[cfg(not(test))]
const CHUNK: usize = 2048;
#[cfg(test)]
const CHUNK: usize = 4;

#[derive(Debug, Clone)]
pub struct Chunked<T> {
    /// None empty.
    chunks: Vec<Vec<T>>,
    /// Each chunk's first position, then the length.
    starts: Vec<usize>,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            starts: vec![0],
        }
    }
}

impl<T> From<Vec<T>> for Chunked<T> {
    fn from(items: Vec<T>) -> Self {
        items.into_iter().collect()
    }
}

impl<T> FromIterator<T> for Chunked<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut out = Chunked::default();
        let mut chunk = Vec::with_capacity(CHUNK);
        for item in items {
            chunk.push(item);
            if chunk.len() == CHUNK {
                out.chunks
                    .push(std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK)));
            }
        }
        if !chunk.is_empty() {
            out.chunks.push(chunk);
        }
        out.restart(0);
        out
    }
}

impl<T: PartialEq> PartialEq for Chunked<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T> IntoIterator for Chunked<T> {
    type Item = T;
    type IntoIter = std::iter::Flatten<std::vec::IntoIter<Vec<T>>>;
    fn into_iter(self) -> Self::IntoIter {
        self.chunks.into_iter().flatten()
    }
}

impl<'a, T> IntoIterator for &'a Chunked<T> {
    type Item = &'a T;
    type IntoIter = std::iter::Flatten<std::slice::Iter<'a, Vec<T>>>;
    fn into_iter(self) -> Self::IntoIter {
        self.chunks.iter().flatten()
    }
}

impl<T> Index<usize> for Chunked<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        let (k, at) = self.locate(i);
        &self.chunks[k][at]
    }
}

impl<T> IndexMut<usize> for Chunked<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        let (k, at) = self.locate(i);
        &mut self.chunks[k][at]
    }
}

impl<T> Chunked<T> {
    pub fn len(&self) -> usize {
        self.starts.last().copied().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The chunk holding position `i` and where in it (panics past the end).
    fn locate(&self, i: usize) -> (usize, usize) {
        assert!(i < self.len(), "position {i} of {}", self.len());
        let k = self.starts.partition_point(|&s| s <= i) - 1;
        (k, i - self.starts[k])
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        (i < self.len()).then(|| &self[i])
    }

    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        (i < self.len()).then(|| &mut self[i])
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + Clone + '_ {
        self.chunks.iter().flatten()
    }

    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut T> + '_ {
        self.chunks.iter_mut().flatten()
    }

    /// The items at `r`, in order.
    pub fn range(&self, r: Range<usize>) -> impl DoubleEndedIterator<Item = &T> + Clone + '_ {
        self.slices(r).flat_map(|(_, s)| s.iter())
    }

    /// The items at `r`, to change in place.
    pub fn range_mut(&mut self, r: Range<usize>) -> impl Iterator<Item = &mut T> + '_ {
        let starts = &self.starts;
        (self.chunks.iter_mut().enumerate())
            .filter(move |(k, _)| starts[*k] < r.end && starts[k + 1] > r.start)
            .flat_map(move |(k, c)| {
                let (lo, hi) = (r.start.max(starts[k]), r.end.min(starts[k + 1]));
                c[lo - starts[k]..hi - starts[k]].iter_mut()
            })
    }

    /// The items at `r` as the slices of the chunks holding them, each with
    /// the position of its first item.
    pub fn slices(
        &self,
        r: Range<usize>,
    ) -> impl DoubleEndedIterator<Item = (usize, &[T])> + Clone + '_ {
        let r = r.start.min(self.len())..r.end.min(self.len());
        let chunks = match r.is_empty() {
            true => 0..0,
            false => self.locate(r.start).0..self.locate(r.end - 1).0 + 1,
        };
        let (starts, items) = (&self.starts, &self.chunks);
        chunks.map(move |k| {
            let (lo, hi) = (r.start.max(starts[k]), r.end.min(starts[k + 1]));
            (lo, &items[k][lo - starts[k]..hi - starts[k]])
        })
    }

    /// The items in pieces of at most about `size` (whole chunks when
    /// `size` is smaller than one), for threads that share a pass.
    pub fn parts(&self, size: usize) -> Vec<&[T]> {
        let mut out = Vec::new();
        for c in &self.chunks {
            out.extend(c.chunks(size.max(1)));
        }
        out
    }

    /// The first position of `r` whose item `before` is false for, where it
    /// holds for a first run of them (as `slice::partition_point`).
    pub fn partition_point_in(&self, r: Range<usize>, before: impl Fn(&T) -> bool) -> usize {
        let (lo, hi) = (r.start, r.end.min(self.len()));
        if lo >= hi {
            return lo;
        }
        let (k0, k1) = (self.locate(lo).0, self.locate(hi - 1).0);
        // The first chunk whose last item in the range `before` is false
        // for, by a binary search over the chunks; then inside it.
        let last = |j: usize| &self.chunks[j][hi.min(self.starts[j + 1]) - 1 - self.starts[j]];
        let (mut a, mut b) = (k0, k1 + 1);
        while a < b {
            let m = (a + b) / 2;
            match before(last(m)) {
                true => a = m + 1,
                false => b = m,
            }
        }
        if a > k1 {
            return hi;
        }
        let (from, to) = (lo.max(self.starts[a]), hi.min(self.starts[a + 1]));
        let chunk = &self.chunks[a][from - self.starts[a]..to - self.starts[a]];
        from + chunk.partition_point(before)
    }

    /// As `slice::partition_point`, over the whole list.
    pub fn partition_point(&self, before: impl Fn(&T) -> bool) -> usize {
        self.partition_point_in(0..self.len(), before)
    }

    /// As `slice::binary_search_by`, over the whole list.
    pub fn binary_search_by(
        &self,
        order: impl Fn(&T) -> std::cmp::Ordering,
    ) -> Result<usize, usize> {
        let at = self.partition_point(|x| order(x).is_lt());
        match self.get(at).map(&order) {
            Some(std::cmp::Ordering::Equal) => Ok(at),
            _ => Err(at),
        }
    }

    /// Replaces the items at `r` with `items`, moving only the items of the
    /// chunks the run starts and ends in.
    pub fn splice(&mut self, r: Range<usize>, items: Vec<T>) {
        let len = self.len();
        assert!(r.start <= r.end && r.end <= len, "{r:?} of {len}");
        if self.chunks.is_empty() {
            *self = items.into();
            return;
        }
        // Where the run starts: the end of the last chunk for a run at the
        // very end.
        let (k, at) = match r.start < len {
            true => self.locate(r.start),
            false => (
                self.chunks.len() - 1,
                self.chunks[self.chunks.len() - 1].len(),
            ),
        };
        let (k2, at2) = match r.end < len {
            true => self.locate(r.end),
            false => (
                self.chunks.len() - 1,
                self.chunks[self.chunks.len() - 1].len(),
            ),
        };
        #[cfg(test)]
        tally::moved(self.chunks[k].len() + if k2 != k { self.chunks[k2].len() } else { 0 });
        if k2 == k {
            self.chunks[k].splice(at..at2, items);
        } else {
            self.chunks[k].truncate(at);
            self.chunks[k].extend(items);
            self.chunks[k2].drain(..at2);
            self.chunks.drain(k + 1..k2);
        }
        self.tidy(k);
    }

    /// Splits an overgrown chunk `k`, drops emptied chunks, and joins a small one to its neighbour; then recounts
    /// the starts from there.
    fn tidy(&mut self, k: usize) {
        if self.chunks[k].len() > 2 * CHUNK {
            let mut rest = std::mem::take(&mut self.chunks[k]);
            let mut pieces = Vec::new();
            while rest.len() > CHUNK {
                let tail = rest.split_off(CHUNK);
                pieces.push(rest);
                rest = tail;
            }
            pieces.push(rest);
            self.chunks.splice(k..k + 1, pieces);
        }
        // Those before `k` are untouched (none empty).
        self.chunks.retain(|c| !c.is_empty());
        let from = k.saturating_sub(1);
        for j in [k, from] {
            let small = |c: &Vec<T>| c.len() < CHUNK / 4;
            if j + 1 < self.chunks.len()
                && (small(&self.chunks[j]) || small(&self.chunks[j + 1]))
                && self.chunks[j].len() + self.chunks[j + 1].len() <= 2 * CHUNK
            {
                let next = self.chunks.remove(j + 1);
                self.chunks[j].extend(next);
            }
        }
        self.restart(from);
    }

    /// Recounts the starts of the chunks from `k` on.
    fn restart(&mut self, k: usize) {
        let k = k.min(self.chunks.len());
        self.starts.truncate(k + 1);
        if self.starts.is_empty() {
            self.starts.push(0);
        }
        let mut at = self.starts[k];
        for c in &self.chunks[k..] {
            at += c.len();
            self.starts.push(at);
        }
    }
}

/// How many items the splices of this thread moved, for the tests that
/// check a change costs what it changed.
#[cfg(test)]
pub(super) mod tally {
    use std::cell::Cell;
    thread_local!(static MOVED: Cell<usize> = const { Cell::new(0) });

    pub fn moved(n: usize) {
        MOVED.with(|m| m.set(m.get() + n));
    }

    /// The items moved since the last call.
    pub fn take() -> usize {
        MOVED.with(|m| m.replace(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splices at every place, of every length, with 0-9 new items, against
    /// a plain vector.
    #[test]
    fn splices_anywhere_give_what_a_vector_gives() {
        for n in [0, 1, 3, 4, 5, 9, 17, 40] {
            for start in 0..=n {
                for end in start..=n {
                    for add in [0, 1, 2, 5, 9] {
                        let mut v: Vec<u32> = (0..n as u32).collect();
                        let mut c: Chunked<u32> = v.clone().into();
                        let items: Vec<u32> = (1000..1000 + add).collect();
                        v.splice(start..end, items.clone());
                        c.splice(start..end, items);
                        let got: Vec<u32> = c.iter().copied().collect();
                        assert_eq!(got, v, "n {n} {start}..{end} +{add}");
                        assert_eq!(c.len(), v.len());
                        assert!(c.chunks.iter().all(|c| !c.is_empty()));
                        for (i, x) in v.iter().enumerate() {
                            assert_eq!(c[i], *x);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn searches_and_ranges_read_across_chunks() {
        let v: Vec<u32> = (0..50).map(|x| x * 2).collect();
        let mut c: Chunked<u32> = v.clone().into();
        // Uneven chunks.
        c.splice(7..7, vec![13, 13, 13, 13, 13, 13, 13, 13, 13]);
        c.splice(30..33, vec![]);
        let mut v2 = v.clone();
        v2.splice(7..7, vec![13; 9]);
        v2.splice(30..33, vec![]);
        for x in 0..110 {
            assert_eq!(
                c.partition_point(|&y| y < x),
                v2.partition_point(|&y| y < x)
            );
            assert_eq!(c.binary_search_by(|y| y.cmp(&x)).is_ok(), v2.contains(&x));
            for lo in [0, 3, 8, 16, 31, 40] {
                for hi in [lo, lo + 1, lo + 9, 56] {
                    let want = lo + v2[lo..hi].partition_point(|&y| y < x);
                    assert_eq!(c.partition_point_in(lo..hi, |&y| y < x), want);
                }
            }
        }
        for lo in [0, 5, 12, 40] {
            for hi in [lo, lo + 3, 56] {
                let got: Vec<u32> = c.range(lo..hi).copied().collect();
                assert_eq!(got, v2[lo..hi]);
                let mut at = lo;
                for (start, s) in c.slices(lo..hi) {
                    assert_eq!(start, at);
                    at += s.len();
                }
                assert_eq!(at, hi);
            }
        }
        let parts: Vec<u32> = c.parts(3).concat();
        assert_eq!(parts, v2);
    }

    #[test]
    fn a_splice_moves_the_chunks_it_touches_not_the_list() {
        let mut c: Chunked<u32> = (0..4000).collect();
        tally::take();
        c.splice(2000..2000, vec![7]);
        c.splice(100..101, vec![]);
        assert!(
            tally::take() <= 4 * CHUNK,
            "a splice moved more than its chunks"
        );
    }
}
