//! `locate`'s visit of each file during the pass: its path scored (when
//! the prefilter lets it), its text read within the content budget (when
//! the index says it may hold the words), and the file kept when it ranks
//! among the best, by path and text and by path alone.

use super::content::{
    ContentQuery, ContentScore, MAX_CONTENT_BYTES, MAX_CONTENT_READS, MAX_WALK_BYTES,
    MAX_WALK_READS,
};
use super::files::{is_text, read_small, shown_path};
use super::locate_score::{combine, score_path};
use super::pass::{Tally, TopK};
use super::query::{FuzzyToken, Query};
use crate::search::SourceFile;
use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as AtomicOrdering};
use std::time::SystemTime;

/// A scored file in the walk's heap; the greatest is the best.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Candidate {
    pub(crate) score: f64,
    pub(crate) mtime: SystemTime,
    pub(crate) path: PathBuf,
    pub(crate) ignored: bool,
    /// `score` without the text's definition points (the outline's replace them).
    pub(crate) base: f64,
    /// What the text said, when it was read and matched.
    pub(crate) content: Option<ContentScore>,
    /// Points given back of what the path's lacking tokens cost: those the
    /// text holds, and, in a question that describes, the discount on
    /// those it lacks too (`locate_score::combine`).
    pub(crate) refund: f64,
}

impl Eq for Candidate {}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        // Project files before ignored ones, then score, then newest,
        // then path order: the same tree always gives the same list.
        (!self.ignored)
            .cmp(&!other.ignored)
            .then(self.score.total_cmp(&other.score))
            .then(self.mtime.cmp(&other.mtime))
            .then(other.path.cmp(&self.path))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One thread's best files, and in the end the pass's.
pub(crate) struct Best {
    pub(crate) heap: TopK<Candidate>,
    /// The same files ranked by path alone: the answer when the content
    /// pass gives up (too many files to read).
    pub(crate) by_path: TopK<Candidate>,
    pub(crate) matched: u64,
    pub(crate) matched_path: u64,
    pub(crate) seen: u64,
}

impl Best {
    pub(crate) fn new(keep: usize) -> Best {
        Best {
            heap: TopK::new(keep),
            by_path: TopK::new(keep),
            matched: 0,
            matched_path: 0,
            seen: 0,
        }
    }

    /// Whether the project left room in the list: ignored files rank after
    /// the project's own, so they are visited only then.
    pub(crate) fn room_left(&self, limit: usize, gave_up: bool) -> bool {
        let filled = if gave_up { &self.by_path } else { &self.heap };
        filled.len() < limit
    }
}

impl Tally for Best {
    fn merge(&mut self, other: Best) {
        self.seen += other.seen;
        self.matched += other.matched;
        self.matched_path += other.matched_path;
        self.heap.absorb(other.heap);
        self.by_path.absorb(other.by_path);
    }
}

/// Whether a file scored `score` ranks at least as the worst kept.
fn beats(score: f64, ignored: bool) -> impl FnOnce(&Candidate) -> bool {
    move |worst| (!ignored, score) >= (!worst.ignored, worst.score)
}

/// Files read for their text so far, over every walker thread, against
/// the pass's bounds, and whether the pass gave up (then every thread
/// stops reading).
pub(crate) struct ContentBudget {
    reads: AtomicU64,
    bytes: AtomicU64,
    gave_up: AtomicBool,
    max_reads: u64,
    max_bytes: u64,
}

impl ContentBudget {
    /// The bounds for reading `walked` (every file) or a ready index's
    /// candidates: see [`MAX_WALK_READS`] for why they differ.
    pub(crate) fn new(walked: bool) -> ContentBudget {
        let (max_reads, max_bytes) = if walked {
            (MAX_WALK_READS, MAX_WALK_BYTES)
        } else {
            (MAX_CONTENT_READS, MAX_CONTENT_BYTES)
        };
        ContentBudget {
            reads: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            gave_up: AtomicBool::new(false),
            max_reads,
            max_bytes,
        }
    }

    /// What the pass may read, for the note when it gave up.
    pub(crate) fn bounds(&self) -> (u64, u64) {
        (self.max_reads, self.max_bytes)
    }

    /// Whether one more file may be read.
    fn take_read(&self) -> bool {
        if self.gave_up.load(AtomicOrdering::Relaxed) {
            return false;
        }
        if self.reads.fetch_add(1, AtomicOrdering::Relaxed) >= self.max_reads {
            self.gave_up.store(true, AtomicOrdering::Relaxed);
            return false;
        }
        true
    }

    fn add_bytes(&self, n: u64) -> bool {
        if self.bytes.fetch_add(n, AtomicOrdering::Relaxed) + n > self.max_bytes {
            self.gave_up.store(true, AtomicOrdering::Relaxed);
            return false;
        }
        true
    }

    /// Stops every thread reading (before the pass, when the index allows
    /// more files than may be read).
    pub(crate) fn give_up(&self) {
        self.gave_up.store(true, AtomicOrdering::Relaxed);
    }

    pub(crate) fn gave_up(&self) -> bool {
        self.gave_up.load(AtomicOrdering::Relaxed)
    }
}

/// A text file's bytes for the content pass, within its budget.
fn read_for_content(path: &Path, buf: &mut Vec<u8>, budget: &ContentBudget) -> bool {
    if !budget.take_read() {
        return false;
    }
    let Some(meta) = read_small(path, buf) else {
        return false;
    };
    budget.add_bytes(meta.len()) && is_text(buf)
}

/// What every thread of the pass over the files shares.
#[derive(Clone, Copy)]
pub(crate) struct Pass<'a> {
    pub(crate) q: &'a Query,
    /// The text's query, when the text is read at all.
    pub(crate) content: Option<&'a ContentQuery>,
    pub(crate) budget: &'a ContentBudget,
    pub(crate) root: &'a Path,
    pub(crate) root_bytes: &'a [u8],
    /// Where a path below the root starts: paths are the root's with names
    /// pushed on, so the prefilter reads the part below it in place.
    pub(crate) rel_start: usize,
}

/// One thread's reusable buffers: the fuzzy matchers, the prefilter's
/// scratch and the text read.
struct Scratch {
    matchers: Vec<FuzzyToken>,
    letters: Vec<u8>,
    buf: Vec<u8>,
}

impl<'a> Pass<'a> {
    /// One thread's visitor: it scores each file into the thread's best.
    pub(crate) fn visitor(
        &self,
        ignored: bool,
    ) -> impl FnMut(&mut Best, &SourceFile<'_>) + Send + 'a {
        let mut scratch = Scratch {
            matchers: self.q.matchers(),
            letters: Vec::new(),
            buf: Vec::new(),
        };
        let pass = *self;
        move |best: &mut Best, v: &SourceFile<'_>| pass.visit(best, &mut scratch, v, ignored)
    }

    /// Scores one file by its path and (a candidate, within the budget)
    /// its text, and keeps it when it ranks.
    fn visit(&self, b: &mut Best, scratch: &mut Scratch, v: &SourceFile<'_>, ignored: bool) {
        let (q, path) = (self.q, v.path);
        b.seen += 1;
        let below = (path.as_os_str().as_encoded_bytes())
            .strip_prefix(self.root_bytes)
            .and_then(|b| b.get(self.rel_start - self.root_bytes.len()..));
        let may_match = below.is_none_or(|b| q.may_match(b, &mut scratch.letters));
        let buf = &mut scratch.buf;
        let said = self.content.filter(|_| v.candidate).and_then(|c| {
            read_for_content(path, buf, self.budget)
                .then(|| c.score(buf))
                .flatten()
        });
        if !may_match && said.is_none() {
            return;
        }
        let rel = shown_path(self.root, path).text;
        let by_path = if may_match {
            score_path(q, &rel, &mut scratch.matchers, false)
        } else {
            None
        };
        let Some(scored) = combine(self.content, &rel, by_path.as_ref(), said) else {
            return;
        };
        b.matched += 1;
        let keeps = b.heap.would_keep(beats(scored.score, ignored));
        let path_score = by_path.as_ref().map(|p| p.score);
        let keeps_path = path_score.is_some_and(|s| b.by_path.would_keep(beats(s, ignored)));
        if !keeps && !keeps_path {
            b.matched_path += u64::from(path_score.is_some());
            return;
        }
        let c = Candidate {
            score: scored.score,
            mtime: v.mtime(),
            path: path.to_path_buf(),
            ignored,
            base: scored.base,
            content: scored.content,
            refund: scored.refund,
        };
        if let Some(s) = path_score {
            b.matched_path += 1;
            if keeps_path {
                b.by_path.push(Candidate {
                    score: s,
                    base: s,
                    content: None,
                    refund: 0.0,
                    ..c.clone()
                });
            }
        }
        if keeps {
            b.heap.push(c);
        }
    }
}
