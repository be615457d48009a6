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

/// The source for the content pass of `cq`, the need it was narrowed for
/// (the query's own, or more when a ready index found more files holding
/// fewer words than the pass may read), and how the index was used.
pub(crate) fn source_for_words(scope: &Scope, cq: &ContentQuery) -> (FileSource, usize, IndexUse) {
    let needed = cq.needed();
    let patterns = cq.narrow_each();
    if needed >= patterns.len() {
        let (source, index) = scope.source(Some(cq.narrow()));
        return (source, needed, index);
    }
    let (first, index) = scope.source(Some(&patterns[0]));
    let FileSource::Feed(first) = first else {
        return (first, needed, index); // a walk reads every file
    };
    let mut feeds = vec![first];
    for p in &patterns[1..] {
        match scope.source(Some(p)) {
            (FileSource::Feed(f), _) => feeds.push(f),
            // The index went away between two calls: every file is read,
            // as a walk would.
            (other, use_) => return (other, needed, use_),
        }
    }
    match HoldingEnough::new(feeds, needed) {
        Ok(feed) => {
            let needed = feed.needed;
            (FileSource::Feed(Box::new(feed)), needed, index)
        }
        // The feeds disagree on the files (the index changed between
        // them): the first word's narrowing alone, a superset of any need.
        Err(first) => (FileSource::Feed(first), needed, index),
    }
}

/// The first word's feed, with a file a candidate when at least `needed`
/// of the words' narrowings keep it.
struct HoldingEnough {
    base: Box<dyn FileFeed>,
    project: Vec<bool>,
    ignored: Vec<Vec<bool>>,
    needed: usize,
}

impl HoldingEnough {
    /// Counts, file by file, the narrowings that keep it, and raises the
    /// need until the project's candidates fit the content pass's bounds
    /// (the walk reads every file instead, so it never raises it).
    fn new(
        feeds: Vec<Box<dyn FileFeed>>,
        needed: usize,
    ) -> Result<HoldingEnough, Box<dyn FileFeed>> {
        let project = kept(feeds.iter().map(|f| f.project()).collect());
        let roots = feeds[0].ignored_roots().len();
        let ignored: Option<Vec<_>> = (0..roots)
            .map(|r| kept(feeds.iter().map(|f| f.ignored(r)).collect()))
            .collect();
        let (Some(project), Some(ignored)) = (project, ignored) else {
            return Err(feeds.into_iter().next().expect("one feed per word"));
        };
        let needed = fitting_need(&project, needed, feeds.len());
        let pick = |part: &[(usize, u64)]| part.iter().map(|&(k, _)| k >= needed).collect();
        Ok(HoldingEnough {
            project: pick(&project),
            ignored: ignored.iter().map(|p| pick(p)).collect(),
            base: feeds.into_iter().next().expect("one feed per word"),
            needed,
        })
    }
}

type Part<'a> = Box<dyn Iterator<Item = SourceFile<'a>> + 'a>;

/// For each file of one part (the project, or an ignored root), in step
/// over every word's feed: how many keep it, and its size as the index
/// knows it (0: unknown). `None` when the feeds list other files.
fn kept(mut parts: Vec<Part<'_>>) -> Option<Vec<(usize, u64)>> {
    let mut out = Vec::new();
    loop {
        let Some(first) = parts[0].next() else {
            return parts[1..]
                .iter_mut()
                .all(|p| p.next().is_none())
                .then_some(out);
        };
        let mut count = usize::from(first.candidate);
        for p in &mut parts[1..] {
            let f = p.next()?;
            if f.path.as_os_str() != first.path.as_os_str() {
                return None;
            }
            count += usize::from(f.candidate);
        }
        let size = match first.stamp {
            KnownStamp::Kept { size, .. } if size <= MAX_READ_BYTES => size,
            _ => 0,
        };
        out.push((count, size));
    }
}

/// The least need, from `needed` up to every one of `words`, whose files
/// fit the bounds of a read (every word when none does: the pass then
/// reads them within its own bounds, or gives up, as on an AND of them all).
fn fitting_need(project: &[(usize, u64)], needed: usize, words: usize) -> usize {
    (needed..=words)
        .find(|&n| fits(project, n))
        .unwrap_or(words)
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

/// Whether the files holding `needed` words fit the bounds of a read.
fn fits(project: &[(usize, u64)], needed: usize) -> bool {
    let (mut files, mut bytes) = (0u64, 0u64);
    for &(k, size) in project {
        if k >= needed {
            files += 1;
            bytes += size;
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

    #[test]
    fn the_need_rises_only_until_the_files_fit_the_bounds() {
        let files = |n: u64, words: usize, size: u64| (0..n).map(move |_| (words, size));
        // 5,000 files hold two words, 300 three, 10 all four.
        let project: Vec<(usize, u64)> = (files(5000, 2, 100))
            .chain(files(300, 3, 100))
            .chain(files(10, 4, 100))
            .collect();
        assert_eq!(fitting_need(&project, 2, 4), 3);
        assert_eq!(fitting_need(&project[..2000], 2, 4), 2, "2,000 fit");
        // Bytes count too: 100 files of 1 MiB are past 32 MiB.
        let big: Vec<(usize, u64)> = files(100, 3, 1 << 20).chain(files(2, 4, 1 << 20)).collect();
        assert_eq!(fitting_need(&big, 2, 4), 4);
        let none: Vec<(usize, u64)> = files(5000, 4, 1).collect();
        assert_eq!(fitting_need(&none, 2, 4), 4, "every word when nothing fits");
    }
}
