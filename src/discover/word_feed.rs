//! The files locate reads for their text when a question's text need not
//! hold every word: a ready index narrows by each word's first letters
//! alone, and a file is read when enough of those narrowings keep it.
//! (One regex cannot say "any three of six words": as alternatives of
//! every choice it planned to twenty ANDs, past the postings' decode
//! budget.) Without an index every file is read, and the text decides.

use super::content::{ContentQuery, MAX_CONTENT_BYTES, MAX_CONTENT_READS};
use super::files::{Scope, MAX_READ_BYTES};
use crate::index::IndexUse;
use crate::search::{FileFeed, FileSource, IgnoredRoot, KnownStamp, SourceFile};

/// The source for the content pass of `cq`, the points its candidates'
/// words must reach (0, or more when a ready index found more files
/// holding the words than the pass may read), and how the index was used.
pub(crate) fn source_for_words(scope: &Scope, cq: &ContentQuery) -> (FileSource, u32, IndexUse) {
    let needed = cq.needed();
    let patterns = cq.narrow_each();
    if needed >= patterns.len() {
        let (source, index) = scope.source(Some(cq.narrow()));
        return (source, 0, index);
    }
    let (first, index) = scope.source(Some(&patterns[0]));
    let FileSource::Feed(first) = first else {
        return (first, 0, index); // a walk reads every file
    };
    let mut feeds = vec![first];
    for p in &patterns[1..] {
        match scope.source(Some(p)) {
            (FileSource::Feed(f), _) => feeds.push(f),
            // The index went away between two calls: every file is read,
            // as a walk would.
            (other, use_) => return (other, 0, use_),
        }
    }
    match HoldingEnough::new(feeds, needed, cq.points()) {
        Ok(feed) => {
            let min_points = feed.min_points;
            (FileSource::Feed(Box::new(feed)), min_points, index)
        }
        // The feeds disagree on the files (the index changed between
        // them): the first word's narrowing alone, a superset of any need.
        Err(first) => (FileSource::Feed(first), 0, index),
    }
}

/// The first word's feed, with a file a candidate when at least `needed`
/// of the words' narrowings keep it, worth at least `min_points`.
struct HoldingEnough {
    base: Box<dyn FileFeed>,
    project: Vec<bool>,
    ignored: Vec<Vec<bool>>,
    min_points: u32,
}

/// What the words' narrowings say of one file: how many keep it, the
/// points of those words, and its size as the index knows it (0: unknown).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Kept {
    words: usize,
    points: u32,
    size: u64,
}

impl HoldingEnough {
    /// Counts, file by file, the narrowings that keep it, and raises the
    /// points their words must reach until the project's candidates fit
    /// the content pass's bounds (the walk reads every file instead, so it
    /// never raises them).
    fn new(
        feeds: Vec<Box<dyn FileFeed>>,
        needed: usize,
        points: &[u32],
    ) -> Result<HoldingEnough, Box<dyn FileFeed>> {
        let project = kept(feeds.iter().map(|f| f.project()).collect(), points);
        let roots = feeds[0].ignored_roots().len();
        let ignored: Option<Vec<_>> = (0..roots)
            .map(|r| kept(feeds.iter().map(|f| f.ignored(r)).collect(), points))
            .collect();
        let (Some(project), Some(ignored)) = (project, ignored) else {
            return Err(feeds.into_iter().next().expect("one feed per word"));
        };
        let min_points = fitting_points(&project, needed, points.iter().sum());
        let pick = |part: &[Kept]| {
            (part.iter())
                .map(|k| k.words >= needed && k.points >= min_points)
                .collect()
        };
        Ok(HoldingEnough {
            project: pick(&project),
            ignored: ignored.iter().map(|p| pick(p)).collect(),
            base: feeds.into_iter().next().expect("one feed per word"),
            min_points,
        })
    }
}

type Part<'a> = Box<dyn Iterator<Item = SourceFile<'a>> + 'a>;

/// For each file of one part (the project, or an ignored root), in step
/// over every word's feed: what the narrowings say of it. `None` when the
/// feeds list other files.
fn kept(mut parts: Vec<Part<'_>>, points: &[u32]) -> Option<Vec<Kept>> {
    let mut out = Vec::new();
    loop {
        let Some(first) = parts[0].next() else {
            return parts[1..]
                .iter_mut()
                .all(|p| p.next().is_none())
                .then_some(out);
        };
        let mut k = Kept {
            words: usize::from(first.candidate),
            points: if first.candidate { points[0] } else { 0 },
            size: 0,
        };
        for (p, worth) in parts[1..].iter_mut().zip(&points[1..]) {
            let f = p.next()?;
            if f.path.as_os_str() != first.path.as_os_str() {
                return None;
            }
            k.words += usize::from(f.candidate);
            k.points += if f.candidate { *worth } else { 0 };
        }
        k.size = match first.stamp {
            KnownStamp::Kept { size, .. } if size <= MAX_READ_BYTES => size,
            _ => 0,
        };
        out.push(k);
    }
}

/// The least points, from none up to every word's, that the words of
/// files holding `needed` of them must reach for those files to fit the
/// bounds of a read (every word's when none does: the pass then reads them
/// within its own bounds, or gives up, as on an AND of them all). Points,
/// not a number of words: a file holding the question's rarer words is
/// kept before one holding more of its common ones (issue 45: vim's
/// `mark.c` for "the jump list that ctrl-o and ctrl-i walk through" never
/// says "through", and holding five of five words was asked of it).
fn fitting_points(project: &[Kept], needed: usize, all: u32) -> u32 {
    let mut levels: Vec<u32> = (project.iter())
        .filter(|k| k.words >= needed)
        .map(|k| k.points)
        .collect();
    levels.push(0);
    levels.sort_unstable();
    levels.dedup();
    (levels.into_iter())
        .find(|&p| fits(project, needed, p))
        .unwrap_or(all)
}

/// Files (and bytes) a call reads at most for a question some of whose
/// words a file may lack: half of [`MAX_CONTENT_READS`]. Such a question
/// lets in many more files than one needing every word, and each is
/// measured for up to six words: on the Linux tree "which scheduler class
/// picks the next task to run on a cpu" read 4,000 files in 380 ms, twice
/// the time of reading those holding its three longest. A quarter cost
/// vim and git a tenth of their held-out hits (unseen-4 hit@3 0.84 → 0.79).
pub(crate) const MAX_SOFT_READS: u64 = MAX_CONTENT_READS / 2;
pub(crate) const MAX_SOFT_BYTES: u64 = MAX_CONTENT_BYTES / 2;

/// Whether the files holding `needed` words worth `min_points` fit the
/// bounds of a read.
fn fits(project: &[Kept], needed: usize, min_points: u32) -> bool {
    let (mut files, mut bytes) = (0u64, 0u64);
    for k in project {
        if k.words >= needed && k.points >= min_points {
            files += 1;
            bytes += k.size;
        }
    }
    files <= MAX_SOFT_READS && bytes <= MAX_SOFT_BYTES
}

impl FileFeed for HoldingEnough {
    fn ignored_roots(&self) -> &[IgnoredRoot] {
        self.base.ignored_roots()
    }

    fn project(&self) -> Box<dyn Iterator<Item = SourceFile<'_>> + '_> {
        Box::new(with_flags(self.base.project(), &self.project))
    }

    fn ignored(&self, index: usize) -> Box<dyn Iterator<Item = SourceFile<'_>> + '_> {
        Box::new(with_flags(self.base.ignored(index), &self.ignored[index]))
    }
}

fn with_flags<'a>(
    files: impl Iterator<Item = SourceFile<'a>> + 'a,
    flags: &'a [bool],
) -> impl Iterator<Item = SourceFile<'a>> + 'a {
    files
        .zip(flags)
        .map(|(f, &candidate)| SourceFile { candidate, ..f })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(n: u64, words: usize, points: u32, size: u64) -> impl Iterator<Item = Kept> {
        (0..n).map(move |_| Kept {
            words,
            points,
            size,
        })
    }

    #[test]
    fn the_points_rise_only_until_the_files_fit_the_bounds() {
        // 5,000 files hold two common words (100 points), 300 a common and
        // a rare one (250), 10 three words (400).
        let project: Vec<Kept> = (files(5000, 2, 100, 100))
            .chain(files(300, 2, 250, 100))
            .chain(files(10, 3, 400, 100))
            .collect();
        assert_eq!(
            fitting_points(&project, 2, 600),
            250,
            "the rare word's files"
        );
        assert_eq!(fitting_points(&project[..2000], 2, 600), 0, "2,000 fit");
        // Bytes count too: 100 files of 1 MiB are past 32 MiB.
        let big: Vec<Kept> = (files(100, 3, 300, 1 << 20))
            .chain(files(2, 4, 400, 1 << 20))
            .collect();
        assert_eq!(fitting_points(&big, 2, 400), 400);
        let none: Vec<Kept> = files(5000, 4, 400, 1).collect();
        assert_eq!(
            fitting_points(&none, 2, 400),
            400,
            "every word when nothing fits"
        );
        // Files holding fewer than the need are never counted.
        let few: Vec<Kept> = (files(5000, 1, 500, 1)).chain(files(5, 2, 10, 1)).collect();
        assert_eq!(fitting_points(&few, 2, 600), 0);
    }
}
