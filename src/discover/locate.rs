//! `locate`: ranked file discovery. One pass over the files (a parallel
//! walk, or a ready index's table) scores every path and reads the files
//! the index allows for what they say (`locate_pass`, scored in
//! `locate_score`); a bounded heap keeps the best. This file plans the
//! call and finishes it: the files best named by their paths are read for
//! the words they lack, the few best are outlined to confirm "defines a
//! symbol of that name" and list the symbols bearing on the question, a
//! test or docs file is put after code on its words, and the text is
//! rendered.

pub use super::answer::{LocateResult, LocatedFile};
use super::bearing::{bearing_symbols, shares_a_word};
use super::content::{ContentQuery, ContentScore, MAX_CONTENT_BYTES, MAX_CONTENT_READS};
use super::files::{read_small, read_text, shown_path, small_file_len, Scope, MAX_READ_BYTES};
use super::final_order::{code_first_on_its_topic, sources_before_their_headers, Topic};
use super::locate_pass::{Best, Candidate, ContentBudget, Pass};
use super::locate_score::{combine, definition_signal, missing_cost, score_path};
use super::pass::{self, map_parallel, TopK};
use super::phrase::Phrases;
use super::query::{FuzzyToken, Query};
use super::role::Role;
use super::word_feed::{source_for_words, MAX_SOFT_BYTES, MAX_SOFT_READS};
use super::DiscoverError;
use crate::index::IndexMode;
use crate::search::CancelToken;
use crate::search::{FileFeed, FileSource, KnownStamp, WalkOptions};
use crate::structure::{Language, Outline, Symbol};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Structure items locate shows per file, and the files that show them:
/// the symbols bearing on the question in the first files are what an
/// agent reads; the rest were most of what it paid for (issue 45).
const LOCATE_STRUCTURE_ITEMS: usize = 3;
const LOCATE_STRUCTURE_FILES: usize = 3;
/// Candidates beyond `limit` that are read for the definition signal.
const EXTRA_READ: usize = 10;

#[derive(Debug, Clone)]
pub struct LocateOptions {
    pub query: String,
    pub limit: usize,
    pub walk: WalkOptions,
    pub timeout: Option<Duration>,
    /// Whether a ready index's file table may stand in for the walk.
    pub index: IndexMode,
}

impl Default for LocateOptions {
    fn default() -> Self {
        LocateOptions {
            query: String::new(),
            limit: 10,
            walk: WalkOptions::default(),
            timeout: None,
            index: IndexMode::IfReady,
        }
    }
}

/// A validated locate: bad input is rejected before any walking starts.
pub struct LocatePlan {
    opts: LocateOptions,
    query: Query,
    content: Option<ContentQuery>,
    scope: Scope,
}

impl LocatePlan {
    pub fn new(cwd: &Path, path: Option<&str>, opts: LocateOptions) -> Result<Self, DiscoverError> {
        let query = Query::parse(&opts.query)?;
        let scope = Scope::new(cwd, path, opts.walk.clone(), opts.index)?;
        let content = ContentQuery::quoting(&query.tokens, Phrases::of(&query.raw));
        Ok(LocatePlan {
            opts,
            query,
            content,
            scope,
        })
    }

    pub fn run(&self, cancel: &CancelToken) -> LocateResult {
        let _running = super::warm::calling();
        run_plan(self, cancel)
    }

    /// The directory searched; shown paths are relative to it.
    pub fn root(&self) -> &Path {
        &self.scope.root
    }
}

fn run_plan(plan: &LocatePlan, cancel: &CancelToken) -> LocateResult {
    let started = Instant::now();
    let root = &plan.scope.root;
    let limit = plan.opts.limit;
    let keep = if limit == 0 { 0 } else { limit + EXTRA_READ };
    let q = &plan.query;
    // A ready index may raise how many words a file read must hold (see
    // `word_feed`): the pass asks what the narrowing asked.
    let (source, needing, index) = match plan.content.as_ref().filter(|_| limit > 0) {
        Some(cq) => {
            let (source, min_points, index) = source_for_words(&plan.scope, cq);
            (source, Some(cq.needing_points(min_points)), index)
        }
        None => {
            let (source, index) = plan.scope.source(None);
            (source, None, index)
        }
    };
    let content = needing.as_ref();
    let budget = ContentBudget::new(!matches!(source, FileSource::Feed(_)));
    let root_bytes = root.as_os_str().as_encoded_bytes();
    let pass = Pass {
        q,
        content,
        budget: &budget,
        root,
        root_bytes,
        rel_start: root_bytes.len() + usize::from(!root_bytes.ends_with(b"/")),
    };
    // More candidates than the pass may read: give up on the text before
    // reading any (on the Linux tree `sched fair` allows thousands, and
    // reading 4,000 of them only to give up cost seconds).
    if let FileSource::Feed(feed) = &source {
        if content.is_some() && too_much_to_read(feed.as_ref()) {
            budget.give_up();
        }
    }
    let visited = pass::visit(
        &plan.scope,
        &source,
        cancel,
        Best::new(keep),
        |best| best.room_left(limit, budget.gave_up()),
        || Best::new(keep),
        |ignored| pass.visitor(ignored),
    );
    let best = visited.tally;
    let gave_up = budget.gave_up();
    let (heap, matched, by_path) = if gave_up {
        (best.by_path, best.matched_path, TopK::new(0))
    } else {
        (best.heap, best.matched, best.by_path)
    };
    let mut chosen: Vec<Candidate> = heap.into_vec();
    if let Some(cq) = content.filter(|_| !gave_up) {
        // Those ranked by path alone so far are read again below.
        let (said, unread): (Vec<Candidate>, Vec<Candidate>) =
            chosen.into_iter().partition(|c| c.content.is_some());
        let by_path = by_path.into_vec().into_iter().chain(unread);
        let named = read_named_files(q, cq, root, by_path, &said);
        chosen = said;
        chosen.extend(named);
        chosen.sort_by(|a, b| b.cmp(a));
        chosen.truncate(keep);
    }
    chosen.sort_by(|a, b| b.cmp(a));
    let mut files = finish(q, content, root, chosen, cancel);
    sources_before_their_headers(&mut files);
    code_first_on_its_topic(&mut files);
    files.sort_by(|a, b| {
        (!b.0.ignored)
            .cmp(&!a.0.ignored)
            .then(b.0.score.total_cmp(&a.0.score))
            .then(a.1.cmp(&b.1))
    });
    for (f, ..) in files.iter_mut().skip(LOCATE_STRUCTURE_FILES) {
        f.more_symbols += f.structure.len();
        f.structure.clear();
    }
    let (reads, bytes) = budget.bounds();
    let content_note = if gave_up {
        Some(format!(
            "ranked by path only: more than {reads} files or {} MiB to read for their text (a ready index narrows them)",
            bytes >> 20
        ))
    } else {
        // The walk reads every file; the index only those holding the
        // question's rarer words, when too many hold fewer.
        content.filter(|read| read.min_points() > 0).map(|read| {
            let all: u32 = read.points().iter().sum();
            format!(
                "read only files holding words worth {}% of the {} words (rarer words worth more): more than {MAX_SOFT_READS} files or {} MiB hold less",
                (100 * read.min_points()).div_ceil(all.max(1)),
                read.words().count(),
                MAX_SOFT_BYTES >> 20
            )
        })
    };
    let mut result = LocateResult {
        query: q.raw.clone(),
        files: files.into_iter().take(limit).map(|(f, ..)| f).collect(),
        candidates: matched,
        files_seen: best.seen,
        ignored_unsearched: (plan.scope).unvisited(&visited.ignored_roots, visited.ignored_visited),
        content_note,
        errors: visited.errors,
        index,
        ..LocateResult::default()
    };
    (result.cancelled, result.timed_out, result.elapsed_ms) = pass::ended(cancel, started);
    result.text = super::locate_render::render(&result);
    result
}

/// Whether the content pass would give up on the project's candidates:
/// more of them than it may read, or more bytes than it may read in them
/// (`sched fair` on the Linux tree: 1,571 candidates, 64 MiB read before
/// it gave up, most of that call's time). Every project candidate is read
/// unless the pass gives up, so the outcome is known before reading: the
/// table's sizes say when it may be over, and the files' own sizes (as
/// the read opens them) decide.
fn too_much_to_read(feed: &dyn FileFeed) -> bool {
    let over = MAX_CONTENT_READS as usize + 1;
    if feed.project_candidates().take(over).count() == over {
        return true;
    }
    let small = |size: u64| size <= MAX_READ_BYTES;
    let kept: u64 = (feed.project().filter(|f| f.candidate))
        .filter_map(|f| match f.stamp {
            KnownStamp::Kept { size, .. } => Some(size).filter(|&s| small(s)),
            _ => None,
        })
        .sum();
    if kept <= MAX_CONTENT_BYTES {
        return false;
    }
    let mut bytes = 0;
    for path in feed.project_candidates() {
        bytes += small_file_len(path).unwrap_or(0);
        if bytes > MAX_CONTENT_BYTES {
            return true;
        }
    }
    false
}

/// The files best named by their paths that the content pass did not
/// take (their text lacks one of its words), read now for which of the
/// words their paths lack they hold: `reloader.rb` for "reload changed
/// source files in development" lacked four words in its path, and
/// `changed` in its text, so it ranked 500 points below files that only
/// mentioned the words (issue 45). Read in path order's best few only.
fn read_named_files(
    q: &Query,
    cq: &ContentQuery,
    root: &Path,
    by_path: impl Iterator<Item = Candidate>,
    chosen: &[Candidate],
) -> Vec<Candidate> {
    let mut matchers = q.matchers();
    let mut buf = Vec::new();
    let mut out: Vec<Candidate> = Vec::new();
    for c in by_path {
        let taken = |x: &Candidate| x.path == c.path;
        if chosen.iter().any(taken) || out.iter().any(taken) {
            continue;
        }
        let text = read_text(&c.path, &mut buf).is_some();
        if !text {
            out.push(c); // ranked by its path, as before
            continue;
        }
        let rel = shown_path(root, &c.path).text;
        let by_path = score_path(q, &rel, &mut matchers, false);
        if let Some(s) = combine(Some(cq), &rel, by_path.as_ref(), Some(cq.measure_any(&buf))) {
            out.push(Candidate {
                score: s.score,
                base: s.base,
                refund: s.refund,
                content: s.content,
                ..c
            });
        }
    }
    out
}

/// Reads and outlines the candidates (in parallel: each parse is a few ms),
/// adds the definition signal, and returns them with their walk rank.
fn finish(
    q: &Query,
    content: Option<&ContentQuery>,
    root: &Path,
    chosen: Vec<Candidate>,
    cancel: &CancelToken,
) -> Vec<(LocatedFile, usize, Topic)> {
    map_parallel(&chosen, || {
        let mut matchers = q.matchers();
        move |rank, c: &Candidate| {
            let (file, topic) = located(q, content, root, c, &mut matchers, cancel);
            Some((file, rank, topic))
        }
    })
}

fn located(
    q: &Query,
    content: Option<&ContentQuery>,
    root: &Path,
    c: &Candidate,
    matchers: &mut [FuzzyToken],
    cancel: &CancelToken,
) -> (LocatedFile, Topic) {
    let path = shown_path(root, &c.path);
    let by_path = score_path(q, &path.text, matchers, true);
    let missing = by_path.as_ref().map_or(0, |p| p.missing);
    let mut topic: Vec<bool> = by_path
        .as_ref()
        .map_or_else(|| vec![false; q.tokens.len()], |p| p.met.clone());
    if let Some(said) = &c.content {
        for (t, &holds) in topic.iter_mut().zip(&said.holds) {
            *t |= holds;
        }
    }
    let mut names_all = (c.content.as_ref())
        .and_then(|said| said.named.as_ref())
        .is_some_and(|n| n.defined);
    let found_by_path = by_path.is_some();
    let mut why = by_path.map(|p| p.why).unwrap_or_default();
    let lexical = c
        .content
        .as_ref()
        .map_or(0.0, ContentScore::definition_points);
    let mut score = c.base;
    let outline = if cancel.is_stopped() {
        None
    } else {
        read_outline(&c.path, cancel)
    };
    let (mut structure, mut more_symbols, mut language) = (Vec::new(), 0, None);
    let mut outline_defines = false;
    if let Some(outline) = &outline {
        language = Some(outline.language);
        if let Some((bonus, reason, exact)) = definition_signal(q, outline) {
            names_all |= bonus >= 200.0;
            outline_defines = bonus >= lexical;
            score += bonus.max(lexical);
            if outline_defines {
                // Named in the text because it is defined here: counted once.
                score -= c.content.as_ref().map_or(0.0, ContentScore::mention_points);
            }
            if exact {
                // `src/auth/mod.rs` defining `AuthStatus` lacks `status` only
                // in its path: the symbol names it. So does a file found by
                // its text alone, which paid for the words its text lacks.
                let cost = missing_cost(q.tokens.len());
                let paid = match (found_by_path, &c.content) {
                    (true, _) => cost * missing as f64 - c.refund,
                    (false, Some(said)) => cost * said.lacks().count() as f64,
                    (false, None) => 0.0,
                };
                score += paid.max(0.0);
            }
            why.insert(0, reason);
        } else {
            score += lexical;
        }
        let hits: Vec<u32> = (c.content.as_ref())
            .into_iter()
            .flat_map(|said| {
                [
                    said.phrase.map(|p| p.line),
                    said.named.as_ref().map(|n| n.line),
                ]
            })
            .flatten()
            .collect();
        let bears = |s: &Symbol| shares_a_word(&s.name, &q.tokens);
        (structure, more_symbols) =
            bearing_symbols(&outline.symbols, bears, &hits, LOCATE_STRUCTURE_ITEMS);
    } else {
        score += lexical;
        language = Language::from_path(&c.path).or(language);
    }
    if let Some(said) = &c.content {
        // Words the text holds cost the path nothing (their cost was given
        // back): "path lacks" names only those missing from both.
        let held = |w: &str| (q.tokens.iter().zip(&said.holds)).any(|(t, &h)| h && t == w);
        for line in why.iter_mut() {
            if let Some(words) = line.strip_prefix("path lacks ") {
                let left: Vec<&str> = words.split(", ").filter(|w| !held(w)).collect();
                *line = match left.is_empty() {
                    true => String::new(),
                    false => format!("path lacks {}", left.join(", ")),
                };
            }
        }
        why.retain(|w| !w.is_empty());
    }
    if let (Some(said), Some(cq)) = (&c.content, content) {
        let mut lines = said.why(cq);
        if outline_defines && said.named.as_ref().is_some_and(|n| n.defined) {
            lines.retain(|l| !l.starts_with("text defines"));
        }
        why.extend(lines);
        why.splice(0..0, said.phrase_why(cq));
    }
    if c.ignored {
        why.push("excluded by ignore rules: listed after the project's files".to_string());
    }
    let file = LocatedFile {
        role: Role::of(&path.text),
        path,
        score,
        language,
        why,
        structure,
        more_symbols,
        ignored: c.ignored,
    };
    (file, (!names_all).then_some(topic))
}

fn read_outline(path: &Path, cancel: &CancelToken) -> Option<Arc<Outline>> {
    let lang = Language::from_path(path)?;
    let mut source = Vec::new();
    let meta = read_small(path, &mut source)?;
    let lang = Language::detect(path, &source).unwrap_or(lang);
    crate::search::outline_of(lang, &meta, &source, &|| cancel.is_stopped())
}

/// Validate and run in one call (tests, CLI-like callers).
pub fn run(
    cwd: &Path,
    path: Option<&str>,
    opts: LocateOptions,
    cancel: &CancelToken,
) -> Result<LocateResult, DiscoverError> {
    Ok(LocatePlan::new(cwd, path, opts)?.run(cancel))
}
