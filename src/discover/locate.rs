//! `locate`: ranked file discovery. During one parallel walk (or pass over
//! a ready index's table) every path is scored from its tokens, and files
//! are read for what they say (`content`: the query's words, an identifier
//! naming it, its definition); a bounded heap keeps the best. Only the few
//! best are then outlined, to confirm "defines a symbol of that name" and
//! show the structure with each result.

use super::content::{ContentQuery, ContentScore, MAX_CONTENT_BYTES, MAX_CONTENT_READS};
use super::files::{map_parallel, read_small, Scope};
use super::role::{is_entry_point, Role};
use super::tokens::{self, NameMatch, TokenMatch};
use super::DiscoverError;
use crate::index::{IndexMode, IndexUse};
use crate::search::CancelToken;
use crate::search::{display_bytes, relative_bytes, DisplayPath};
use crate::search::{ErrorLog, FileSource, SourceFile, WalkOptions};
use crate::structure::{Language, Outline, Symbol, SymbolKind};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// Structure items shown per file, as agentgrep shows them (trace).
pub const STRUCTURE_ITEMS: usize = 8;
/// Structure items locate shows per file, and the files that show them:
/// the symbols bearing on the question in the first files are what an
/// agent reads; the rest were most of what it paid for (issue 45).
const LOCATE_STRUCTURE_ITEMS: usize = 3;
const LOCATE_STRUCTURE_FILES: usize = 3;
/// Files larger than this are ranked by path only (not read or outlined).
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

#[derive(Debug, Clone)]
pub struct LocatedFile {
    pub path: DisplayPath,
    pub score: f64,
    pub role: Role,
    pub language: Option<Language>,
    /// The signals that scored, in words.
    pub why: Vec<String>,
    /// The symbols bearing on the query (see `bearing_symbols`), in the first files only.
    pub structure: Vec<Symbol>,
    pub more_symbols: usize,
    pub ignored: bool,
}

#[derive(Debug, Clone, Default)]
pub struct LocateResult {
    pub query: String,
    pub files: Vec<LocatedFile>,
    /// Files whose path or text matched the query at all.
    pub candidates: u64,
    pub files_seen: u64,
    /// Ignored roots not walked (the project alone filled the list, or the
    /// walk stopped).
    pub ignored_unsearched: Vec<String>,
    pub timed_out: bool,
    pub cancelled: bool,
    /// Set when files' contents were not searched (too many to read
    /// without a ready index): the ranking is by path alone.
    pub content_note: Option<String>,
    pub errors: ErrorLog,
    pub elapsed_ms: f64,
    /// `Used`: the paths came from the index's table (no walk).
    pub index: IndexUse,
    pub text: String,
}

/// The query split once, with a fuzzy matcher per token made per thread.
#[derive(Debug, Clone)]
pub struct Query {
    pub raw: String,
    pub tokens: Vec<String>,
    /// Lower-cased query when it names a path (`src/auth`), else `None`.
    path_form: Option<String>,
    /// Every token is ASCII, so [`Query::may_match`] can rule paths out.
    ascii: bool,
    /// Substring finders for each token and its [`tokens::short_forms`],
    /// built once for every path.
    finders: Vec<memchr::memmem::Finder<'static>>,
}

impl Query {
    pub fn parse(raw: &str) -> Result<Query, DiscoverError> {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(DiscoverError::EmptyQuery);
        }
        // "the middleware that sets the csrf cookie": `the`, `that` are no
        // evidence, and lacking them cost every file the same (issue 45).
        // Only words standing alone are dropped: `for` in
        // `raise_for_status` is part of a name.
        let words = trimmed.split_whitespace();
        let said: Vec<&str> = words
            .clone()
            .filter(|w| !matches!(tokens::split(w).as_slice(), [t] if tokens::is_function_word(t)))
            .collect();
        let kept = if said.is_empty() {
            words.collect()
        } else {
            said
        };
        let mut toks: Vec<String> = kept.iter().flat_map(|w| tokens::split(w)).collect();
        let mut seen = std::collections::HashSet::new();
        toks.retain(|t| seen.insert(t.clone()));
        if toks.is_empty() {
            return Err(DiscoverError::NoWords(trimmed.to_string()));
        }
        let path_form = trimmed
            .contains('/')
            .then(|| trimmed.trim_start_matches("./").to_lowercase());
        Ok(Query {
            raw: trimmed.to_string(),
            ascii: toks.iter().all(|t| t.is_ascii()),
            finders: (toks.iter())
                .flat_map(|t| std::iter::once(t.clone()).chain(tokens::short_forms(t)))
                .map(|t| memchr::memmem::Finder::new(t.as_bytes()).into_owned())
                .collect(),
            tokens: toks,
            path_form,
        })
    }

    /// False only for a path that [`score_path`] cannot score. A path
    /// scores when a token meets one of its tokens whole or as a prefix (or
    /// a run of its tokens written together, or a token abbreviating or
    /// inflecting it: those hold one of its short forms), when every token meets it
    /// fuzzily, or when it contains the query's path form. The first needs
    /// a token inside the path's letters and digits with the rest taken out
    /// (`scratch` holds them); the others need every token's letters in
    /// order in the path, which is also what frizbee's fuzzy match with no
    /// typos aligns. Checked on bytes without splitting the path into
    /// tokens, which is what scoring spends its time on; a path with
    /// non-ASCII bytes is never ruled out (`K`, the Kelvin sign, lower-cases
    /// to an ASCII `k`).
    pub(crate) fn may_match(&self, rel: &[u8], scratch: &mut Vec<u8>) -> bool {
        if !self.ascii || !rel.is_ascii() {
            return true;
        }
        if self.tokens.iter().all(|t| in_order(t.as_bytes(), rel)) {
            return true;
        }
        scratch.clear();
        let alnum = rel.iter().filter(|b| b.is_ascii_alphanumeric());
        scratch.extend(alnum.map(u8::to_ascii_lowercase));
        let letters = scratch.as_slice();
        self.finders.iter().any(|f| f.find(letters).is_some())
    }

    pub(crate) fn matchers(&self) -> Vec<FuzzyToken> {
        // No typos: on the Linux path list one allowed typo multiplied the
        // matches tenfold, nearly all noise.
        let config = frizbee::Config::default().max_typos(Some(0));
        self.tokens
            .iter()
            .map(|t| {
                let mut matcher = frizbee::Matcher::new(t.as_str(), &config);
                let exact = matcher.match_one(t.as_str(), 0).map_or(0, |m| m.score);
                FuzzyToken {
                    matcher,
                    floor: (u32::from(exact) * FUZZY_FLOOR_PERCENT / 100) as u16,
                }
            })
            .collect()
    }
}

/// Whether the bytes of `needle` (lower-case ASCII) occur in `hay` in
/// order, ignoring ASCII case.
fn in_order(needle: &[u8], hay: &[u8]) -> bool {
    let mut want = needle.iter().peekable();
    for b in hay {
        match want.peek() {
            Some(&&w) if w == b.to_ascii_lowercase() => {
                want.next();
            }
            Some(_) => {}
            None => break,
        }
    }
    want.peek().is_none()
}

/// What a lacking query token costs a path: more than a whole-token hit in
/// the file name earns (100).
const MISSING_TOKEN_COST: f64 = 150.0;

/// A fuzzy hit must score this share of the token's match on itself.
/// Measured with frizbee 0.13: `mmu` on `mmu` 68, on `memory_mu.c` 50,
/// `cfg` on `config.rs` 49 of 68, `pgalloc` on `page_alloc.c` 117 of 132 —
/// but `mmu` on `kvm-x86-pmu-ops.h`, three letters picked from two words,
/// only 38: below two thirds, such scattered letters are noise.
const FUZZY_FLOOR_PERCENT: u32 = 66;

/// One query token's fuzzy matcher and the least score that counts.
pub(crate) struct FuzzyToken {
    matcher: frizbee::Matcher,
    floor: u16,
}

impl FuzzyToken {
    fn hits(&mut self, haystack: &str) -> bool {
        self.matcher
            .match_one(haystack, 0)
            .is_some_and(|m| m.score >= self.floor)
    }
}

/// One path's score. `why` is filled only when `explain` is set, so the
/// walk builds no strings for the thousands of paths that never show.
pub(crate) fn score_path(
    q: &Query,
    rel: &str,
    matchers: &mut [FuzzyToken],
    explain: bool,
) -> Option<PathScore> {
    let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    let name_tokens = tokens::split(name);
    let dir_tokens = tokens::split(dir);
    let mut score = 0.0;
    let mut why = Vec::new();
    let (mut in_name, mut in_dir, mut fuzzy, mut missing) = (vec![], vec![], vec![], vec![]);
    let mut written: Vec<String> = Vec::new();
    let mut written_at: Vec<usize> = Vec::new();
    // Each name token's words written together, worked out once if asked.
    let mut joins: Option<Vec<Vec<&str>>> = None;
    let mut positions = Vec::new();
    // `authstatus.ts` is named by `auth status` as a whole.
    let joined = q.tokens.len() >= 2 && name_tokens.contains(&q.tokens.concat());
    for (i, t) in q.tokens.iter().enumerate() {
        let (name_match, at) = if joined {
            (TokenMatch::Exact, Some(0))
        } else {
            tokens::match_token(t, &name_tokens)
        };
        if name_match != TokenMatch::None {
            score += if name_match == TokenMatch::Exact {
                100.0
            } else {
                70.0
            };
            in_name.push(t.as_str());
            positions.push(dir_tokens.len() + at.unwrap_or(0));
            continue;
        }
        // `cfg` for config, `chunks` for chunked, `parsecfg` for parse config.
        let joins = joins.get_or_insert_with(|| {
            (name_tokens.iter())
                .map(|nt| tokens::joined_words(nt, &q.tokens))
                .collect::<Vec<_>>()
        });
        if let Some(at) = name_tokens
            .iter()
            .zip(joins.iter())
            .position(|(nt, j)| tokens::related_word(t, nt) || j.contains(&t.as_str()))
        {
            written.push(format!("{} for {t}", name_tokens[at]));
            written_at.push(dir_tokens.len() + at);
            continue;
        }
        let (dir_match, at) = tokens::match_token(t, &dir_tokens);
        if dir_match != TokenMatch::None {
            score += if dir_match == TokenMatch::Exact {
                40.0
            } else {
                25.0
            };
            in_dir.push(t.as_str());
            positions.push(at.unwrap_or(0));
            continue;
        }
        if matchers[i].hits(name) {
            score += 20.0;
            fuzzy.push(t.as_str());
        } else if matchers[i].hits(rel) {
            score += 10.0;
            fuzzy.push(t.as_str());
        } else {
            missing.push(t.as_str());
        }
    }
    // An abbreviation counts beside a word met as written, an inflected
    // word (`chunks` for chunked) or one name token holding two words
    // (`dynbuf`): alone, a `ctrl` in `timed_ctrl_public.h` is weak
    // evidence for `TcpCongestionControl`.
    let strong = written.iter().any(|w| {
        let (form, word) = w.split_once(" for ").unwrap_or(("", ""));
        tokens::inflects(word, form)
            || written
                .iter()
                .filter(|x| x.split(' ').next() == Some(form))
                .count()
                >= 2
    });
    if !in_name.is_empty() || !in_dir.is_empty() || strong {
        score += 60.0 * written.len() as f64;
        positions.extend(written_at);
    } else {
        for w in std::mem::take(&mut written) {
            let word = w.rsplit(' ').next().unwrap_or("");
            if let Some(t) = q.tokens.iter().find(|t| t.as_str() == word) {
                missing.push(t.as_str());
            }
        }
    }
    let matched_tokens = in_name.len() + in_dir.len() + written.len();
    let path_hit = q
        .path_form
        .as_ref()
        .is_some_and(|p| rel.to_lowercase().contains(p.as_str()));
    // Every token met (fuzzily at worst), or at least one met as a whole
    // token: the definition signal may still lift such a file.
    if !missing.is_empty() && matched_tokens == 0 && !path_hit {
        return None;
    }
    // A path lacking a query token ranks after those that have them all: a
    // whole-token hit earns at most 100, so three hits and a miss (`ptp_kvm_x86.c`
    // for `kvm x86 mmu`) stay below one hit and three in the directory.
    score -= MISSING_TOKEN_COST * missing.len() as f64;
    if path_hit {
        score += 60.0;
    }
    // Coverage: how much of the file name the query explains.
    let stem_len = name_tokens
        .len()
        .saturating_sub(usize::from(name.contains('.')))
        .max(1);
    let covered = name_tokens
        .iter()
        .take(stem_len)
        .filter(|nt| {
            joined
                || q.tokens.iter().any(|t| nt.starts_with(t.as_str()))
                || written
                    .iter()
                    .any(|w| w.split(' ').next() == Some(nt.as_str()))
        })
        .count();
    let coverage = covered as f64 / stem_len as f64;
    score += 40.0 * coverage;
    if positions.len() >= 2 && positions.windows(2).all(|w| w[0] <= w[1]) {
        score += 10.0;
    }
    let entry_of_match = is_entry_point(name)
        && dir.rsplit('/').next().is_some_and(|last| {
            in_dir
                .iter()
                .any(|t| tokens::match_token(t, &tokens::split(last)).0 != TokenMatch::None)
        });
    if entry_of_match {
        score += 35.0;
    }
    let role = Role::of(rel);
    score -= role.penalty();
    let depth = rel.matches('/').count() as f64;
    score -= 1.5 * depth;
    if explain {
        why = reasons(&Matched {
            q,
            dir,
            in_name: &in_name,
            written: &written,
            in_dir: &in_dir,
            fuzzy: &fuzzy,
            missing: &missing,
            whole_name: coverage >= 0.999,
            path_hit,
            entry_of_match,
            role,
        });
    }
    let met = (q.tokens.iter())
        .map(|t| !missing.contains(&t.as_str()))
        .collect();
    Some(PathScore {
        score,
        why,
        missing: missing.len(),
        met,
    })
}

/// What [`score_path`] found in one path, for its reasons.
struct Matched<'a> {
    q: &'a Query,
    dir: &'a str,
    in_name: &'a [&'a str],
    /// `cfg for config`: a name token that abbreviates or inflects a word.
    written: &'a [String],
    in_dir: &'a [&'a str],
    fuzzy: &'a [&'a str],
    missing: &'a [&'a str],
    /// Every word of the file name stands in the query.
    whole_name: bool,
    path_hit: bool,
    entry_of_match: bool,
    role: Role,
}

/// The reasons a path scored, in words. Each says one thing the path has
/// or lacks, and none contradicts another: "the query names the whole
/// file" is said only when the path has every query word, since beside
/// "path lacks manager" it would be false; a file name made only of query
/// words is said so plainly then.
fn reasons(m: &Matched<'_>) -> Vec<String> {
    let mut why = Vec::new();
    if !m.in_name.is_empty() {
        why.push(format!("file name matches {}", m.in_name.join(", ")));
    }
    if !m.written.is_empty() {
        why.push(format!("file name has {}", m.written.join(", ")));
    }
    if m.whole_name && !m.in_name.is_empty() {
        if m.missing.is_empty() && m.fuzzy.is_empty() {
            why.push("the query names the whole file".to_string());
        } else {
            why.push("every word of the file name is in the query".to_string());
        }
    }
    if !m.in_dir.is_empty() {
        why.push(format!("directory matches {}", m.in_dir.join(", ")));
    }
    if m.path_hit {
        why.push(format!("path contains {}", m.q.raw));
    }
    if !m.fuzzy.is_empty() {
        why.push(format!("fuzzy match for {}", m.fuzzy.join(", ")));
    }
    if !m.missing.is_empty() {
        why.push(format!("path lacks {}", m.missing.join(", ")));
    }
    if m.entry_of_match {
        why.push(format!("entry point of {}/", m.dir));
    }
    if m.role.penalty() > 0.0 {
        why.push(format!("{} file: ranked down", m.role.as_str()));
    }
    why
}

/// A path's score, its reasons (when asked), and how many query tokens it
/// lacks (a definition named by the whole query supplies those).
#[derive(Debug, Default)]
pub(crate) struct PathScore {
    pub score: f64,
    pub why: Vec<String>,
    pub missing: usize,
    /// Per query token: the path meets it (whole, by prefix, written
    /// differently or fuzzily).
    pub met: Vec<bool>,
}

/// A scored file in the walk's heap; the greatest is the best.
#[derive(Debug, Clone, PartialEq)]
struct Candidate {
    score: f64,
    mtime: SystemTime,
    path: PathBuf,
    ignored: bool,
    /// `score` without the text's definition points (the outline's replace them).
    base: f64,
    /// What the text said, when it was read and matched.
    content: Option<ContentScore>,
    /// Points given back for path tokens the text holds.
    refund: f64,
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

#[derive(Default)]
struct Best {
    heap: BinaryHeap<Reverse<Candidate>>,
    /// The same files ranked by path alone: the answer when the content
    /// pass gives up (too many files to read).
    by_path: BinaryHeap<Reverse<Candidate>>,
    keep: usize,
    matched: u64,
    matched_path: u64,
    seen: u64,
}

/// One walker thread's best, merged into the shared one when the thread's
/// visitor is dropped (the walk drops them before it returns).
struct ThreadBest<'a> {
    best: Best,
    into: &'a Mutex<Best>,
    matchers: Vec<FuzzyToken>,
    scratch: Vec<u8>,
}

impl Drop for ThreadBest<'_> {
    fn drop(&mut self) {
        let mut all = self.into.lock().unwrap_or_else(|p| p.into_inner());
        all.seen += self.best.seen;
        all.matched += self.best.matched;
        all.matched_path += self.best.matched_path;
        for Reverse(c) in std::mem::take(&mut self.best.heap) {
            all.push(c);
        }
        for Reverse(c) in std::mem::take(&mut self.best.by_path) {
            all.push_path(c);
        }
    }
}

impl Best {
    fn would_keep(
        heap: &BinaryHeap<Reverse<Candidate>>,
        keep: usize,
        score: f64,
        ignored: bool,
    ) -> bool {
        if heap.len() < keep {
            return true;
        }
        heap.peek()
            .is_some_and(|Reverse(worst)| (!ignored, score) >= (!worst.ignored, worst.score))
    }

    fn push(&mut self, c: Candidate) {
        push_bounded(&mut self.heap, self.keep, c);
    }

    fn push_path(&mut self, c: Candidate) {
        push_bounded(&mut self.by_path, self.keep, c);
    }
}

fn push_bounded(heap: &mut BinaryHeap<Reverse<Candidate>>, keep: usize, c: Candidate) {
    heap.push(Reverse(c));
    if heap.len() > keep {
        heap.pop();
    }
}

/// Files read for their text so far, over every walker thread, and
/// whether the pass gave up (then every thread stops reading).
#[derive(Default)]
struct ContentBudget {
    reads: AtomicU64,
    bytes: AtomicU64,
    gave_up: AtomicBool,
}

impl ContentBudget {
    /// Whether one more file may be read.
    fn take_read(&self) -> bool {
        if self.gave_up.load(AtomicOrdering::Relaxed) {
            return false;
        }
        if self.reads.fetch_add(1, AtomicOrdering::Relaxed) >= MAX_CONTENT_READS {
            self.gave_up.store(true, AtomicOrdering::Relaxed);
            return false;
        }
        true
    }

    fn add_bytes(&self, n: u64) -> bool {
        if self.bytes.fetch_add(n, AtomicOrdering::Relaxed) + n > MAX_CONTENT_BYTES {
            self.gave_up.store(true, AtomicOrdering::Relaxed);
            return false;
        }
        true
    }

    fn gave_up(&self) -> bool {
        self.gave_up.load(AtomicOrdering::Relaxed)
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
        let content = ContentQuery::new(&query.tokens);
        Ok(LocatePlan {
            opts,
            query,
            content,
            scope,
        })
    }

    pub fn run(&self, cancel: &CancelToken) -> LocateResult {
        run_plan(self, cancel)
    }

    /// The directory searched; shown paths are relative to it.
    pub fn root(&self) -> &Path {
        &self.scope.root
    }
}

/// Path tokens the text holds earn back what lacking them cost: `kill
/// grace` names `src/shell/kill.rs`, whose text says grace. (Two thirds
/// were given back until issue 45: `http_chunks.c`, named by `chunked`
/// and holding the other three words, then ranked below every file that
/// only held them, its path named nothing.)
const REFUND_SHARE: f64 = 1.0;

/// A file's place in the heap from its path score and its text's, or
/// `None` when neither matched.
fn combine(rel: &str, path: Option<&PathScore>, content: Option<ContentScore>) -> Option<Scored> {
    if path.is_none() && content.is_none() {
        return None;
    }
    let mut base = match path {
        Some(p) => p.score,
        // Ranked as a path would be: tests and docs down, deep files a little.
        None => -Role::of(rel).penalty() - 1.5 * rel.matches('/').count() as f64,
    };
    let mut refund = 0.0;
    if let Some(c) = &content {
        base += c.text_points();
        if let Some(p) = path {
            let held = (p.met.iter().zip(&c.holds))
                .filter(|(met, holds)| !**met && **holds)
                .count();
            refund = REFUND_SHARE * MISSING_TOKEN_COST * held as f64;
            base += refund;
        }
    }
    let lexical = content
        .as_ref()
        .map_or(0.0, ContentScore::definition_points);
    Some(Scored {
        score: base + lexical,
        base,
        refund,
        content,
    })
}

struct Scored {
    score: f64,
    base: f64,
    refund: f64,
    content: Option<ContentScore>,
}

/// A text file's bytes for the content pass, within its budget.
fn read_for_content(path: &Path, buf: &mut Vec<u8>, budget: &ContentBudget) -> bool {
    if !budget.take_read() {
        return false;
    }
    let Some(meta) = read_small(path, buf) else {
        return false;
    };
    budget.add_bytes(meta.len()) && memchr::memchr(0, &buf[..buf.len().min(8192)]).is_none()
}

/// What every thread of the pass over the files shares.
#[derive(Clone, Copy)]
struct Pass<'a> {
    q: &'a Query,
    /// The text's query, when the text is read at all.
    content: Option<&'a ContentQuery>,
    budget: &'a ContentBudget,
    best: &'a Mutex<Best>,
    keep: usize,
    root: &'a Path,
    root_bytes: &'a [u8],
    /// Where a path below the root starts: paths are the root's with names
    /// pushed on, so the prefilter reads the part below it in place.
    rel_start: usize,
}

impl<'a> Pass<'a> {
    /// Whether the project left room in the list: ignored files rank after
    /// the project's own, so they are visited only then.
    fn room_left(&self, limit: usize) -> bool {
        let b = self.best.lock().unwrap_or_else(|p| p.into_inner());
        let filled = if self.budget.gave_up() {
            &b.by_path
        } else {
            &b.heap
        };
        filled.len() < limit
    }

    /// One thread's visitor. Each thread keeps its own best and hands it
    /// over when its part of the visit ends: the order is total, so the
    /// union's best are the same as one shared heap's, without a lock per
    /// path.
    fn visitor(&self, ignored: bool) -> impl FnMut(&SourceFile<'_>) -> bool + Send + 'a {
        let mut mine = ThreadBest {
            best: Best {
                keep: self.keep,
                ..Best::default()
            },
            into: self.best,
            matchers: self.q.matchers(),
            scratch: Vec::new(),
        };
        let mut buf = Vec::new();
        let pass = *self;
        move |v: &SourceFile<'_>| {
            pass.visit(&mut mine, &mut buf, v, ignored);
            true
        }
    }

    /// Scores one file by its path and (a candidate, within the budget)
    /// its text, and keeps it when it ranks.
    fn visit(&self, mine: &mut ThreadBest, buf: &mut Vec<u8>, v: &SourceFile<'_>, ignored: bool) {
        let (q, path) = (self.q, v.path);
        mine.best.seen += 1;
        let below = (path.as_os_str().as_encoded_bytes())
            .strip_prefix(self.root_bytes)
            .and_then(|b| b.get(self.rel_start - self.root_bytes.len()..));
        let may_match = below.is_none_or(|b| q.may_match(b, &mut mine.scratch));
        let said = self.content.filter(|_| v.candidate).and_then(|c| {
            read_for_content(path, buf, self.budget)
                .then(|| c.score(buf))
                .flatten()
        });
        if !may_match && said.is_none() {
            return;
        }
        let rel = display_bytes(&relative_bytes(self.root, path)).text;
        let by_path = if may_match {
            score_path(q, &rel, &mut mine.matchers, false)
        } else {
            None
        };
        let Some(scored) = combine(&rel, by_path.as_ref(), said) else {
            return;
        };
        mine.best.matched += 1;
        let (b, keep) = (&mut mine.best, self.keep);
        let keeps = Best::would_keep(&b.heap, keep, scored.score, ignored);
        let path_score = by_path.as_ref().map(|p| p.score);
        let keeps_path = path_score.is_some_and(|s| Best::would_keep(&b.by_path, keep, s, ignored));
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
                b.push_path(Candidate {
                    score: s,
                    base: s,
                    content: None,
                    refund: 0.0,
                    ..c.clone()
                });
            }
        }
        if keeps {
            b.push(c);
        }
    }
}

fn run_plan(plan: &LocatePlan, cancel: &CancelToken) -> LocateResult {
    let started = Instant::now();
    let root = &plan.scope.root;
    let limit = plan.opts.limit;
    let keep = if limit == 0 { 0 } else { limit + EXTRA_READ };
    let best = Mutex::new(Best {
        keep,
        ..Best::default()
    });
    let errors = Mutex::new(ErrorLog::default());
    let q = &plan.query;
    let content = plan.content.as_ref().filter(|_| limit > 0);
    let budget = ContentBudget::default();
    let root_bytes = root.as_os_str().as_encoded_bytes();
    let pass = Pass {
        q,
        content,
        budget: &budget,
        best: &best,
        keep,
        root,
        root_bytes,
        rel_start: root_bytes.len() + usize::from(!root_bytes.ends_with(b"/")),
    };
    let (source, index) = plan.scope.source(content.map(ContentQuery::narrow));
    // More candidates than the pass may read: give up on the text before
    // reading any (on the Linux tree `sched fair` allows thousands, and
    // reading 4,000 of them only to give up cost seconds).
    if let FileSource::Feed(feed) = &source {
        let over = MAX_CONTENT_READS as usize + 1;
        if content.is_some() && feed.project_candidates().take(over).count() == over {
            budget.gave_up.store(true, AtomicOrdering::Relaxed);
        }
    }
    let (roots, visited) = source.visit_all(
        plan.scope.threads(),
        cancel,
        &errors,
        || pass.room_left(limit),
        |ignored| pass.visitor(ignored),
    );
    let best = best.into_inner().unwrap_or_else(|p| p.into_inner());
    let gave_up = budget.gave_up();
    let (heap, matched, by_path) = if gave_up {
        (best.by_path, best.matched_path, BinaryHeap::new())
    } else {
        (best.heap, best.matched, best.by_path)
    };
    let mut chosen: Vec<Candidate> = heap.into_iter().map(|Reverse(c)| c).collect();
    if let Some(cq) = content.filter(|_| !gave_up) {
        // Those ranked by path alone so far are read again below.
        let (said, unread): (Vec<Candidate>, Vec<Candidate>) =
            chosen.into_iter().partition(|c| c.content.is_some());
        let by_path = by_path.into_iter().map(|Reverse(c)| c).chain(unread);
        let named = read_named_files(q, cq, root, by_path, &said);
        chosen = said;
        chosen.extend(named);
        chosen.sort_by(|a, b| b.cmp(a));
        chosen.truncate(keep);
    }
    chosen.sort_by(|a, b| b.cmp(a));
    let mut files = finish(q, content, root, chosen, cancel);
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
    let content_note = gave_up.then(|| {
        format!(
            "ranked by path only: more than {MAX_CONTENT_READS} files or {} MiB to read for their text (a ready index narrows them)",
            MAX_CONTENT_BYTES >> 20
        )
    });
    let mut result = LocateResult {
        query: q.raw.clone(),
        files: files.into_iter().take(limit).map(|(f, ..)| f).collect(),
        candidates: matched,
        files_seen: best.seen,
        ignored_unsearched: plan.scope.unvisited(&roots, visited),
        content_note,
        errors: errors.into_inner().unwrap_or_else(|p| p.into_inner()),
        index,
        ..LocateResult::default()
    };
    (result.cancelled, result.timed_out) = cancel.flags();
    result.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    result.text = super::locate_render::render(&result);
    result
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
        let text = read_small(&c.path, &mut buf).is_some()
            && memchr::memchr(0, &buf[..buf.len().min(8192)]).is_none();
        if !text {
            out.push(c); // ranked by its path, as before
            continue;
        }
        let rel = display_bytes(&relative_bytes(root, &c.path)).text;
        let by_path = score_path(q, &rel, &mut matchers, false);
        if let Some(s) = combine(&rel, by_path.as_ref(), Some(cq.measure_any(&buf))) {
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

/// Which query words a file meets (its path or its text), or `None` when
/// it defines a symbol naming the whole query (it meets them all).
type Topic = Option<Vec<bool>>;

/// A test, bench, example, docs or other file that is not code never
/// outranks a code file that meets every query word it meets (issue 45:
/// `test/res.cookie.js` above `lib/response.js`): it is put just below
/// the lowest such code file, and its reasons say so.
fn code_first_on_its_topic(files: &mut [(LocatedFile, usize, Topic)]) {
    let covers = |a: &Topic, b: &Topic| match (a, b) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(a), Some(b)) => a.iter().zip(b).all(|(x, y)| *x || !*y),
    };
    let code: Vec<(f64, String, Topic)> = (files.iter())
        .filter(|(f, ..)| f.role == Role::Code && !f.ignored)
        .map(|(f, _, t)| (f.score, f.path.text.clone(), t.clone()))
        .collect();
    for (f, _, topic) in files.iter_mut() {
        if f.role == Role::Code || f.ignored {
            continue;
        }
        // Below every such code file, the lowest included.
        let above = (code.iter())
            .filter(|(score, _, t)| *score <= f.score && covers(t, topic))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((score, path, _)) = above {
            f.score = score - 1.0;
            // Said once: this reason says more than "ranked down".
            let down = format!("{} file: ranked down", f.role.as_str());
            f.why.retain(|w| *w != down);
            f.why.push(format!(
                "{} file: ranked after {path}, code on the same words",
                f.role.as_str()
            ));
        }
    }
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
    let path = display_bytes(&relative_bytes(root, &c.path));
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
                // in its path: the symbol names it.
                score += (MISSING_TOKEN_COST * missing as f64 - c.refund).max(0.0);
            }
            why.insert(0, reason);
        } else {
            score += lexical;
        }
        let hits: Vec<u32> = (c.content.as_ref())
            .and_then(|said| said.named.as_ref())
            .map(|n| n.line)
            .into_iter()
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

/// Whether a symbol's name shares a word with `words` (whole, by prefix,
/// abbreviated or inflected).
fn shares_a_word(name: &str, words: &[String]) -> bool {
    tokens::split(name).iter().any(|t| {
        words
            .iter()
            .any(|w| tokens::word_meets(w, t) || tokens::related_word(w, t))
    })
}

/// The symbols of a file that bear on the question, in source order, at
/// most `max_items`: those `bears` accepts (locate: the name shares
/// a word with the query; trace: it names the subject), those enclosing
/// one of the `hits` lines, and the symbols holding them. A
/// one-line statement of a name defined with a body in the same file (a
/// C prototype, a forward declaration) is left out. Returns them with how
/// many symbols are not shown (issue 45: the first eight symbols, whatever
/// they were, were two thirds of an answer).
pub(crate) fn bearing_symbols(
    symbols: &[Symbol],
    bears: impl Fn(&Symbol) -> bool,
    hits: &[u32],
    max_items: usize,
) -> (Vec<Symbol>, usize) {
    let defined_with_body: std::collections::HashSet<&str> = (symbols.iter())
        .filter(|s| s.line_count() > 1)
        .map(|s| s.name.as_str())
        .collect();
    let mut keep = vec![false; symbols.len()];
    for (i, s) in symbols.iter().enumerate() {
        let declaration = s.line_count() == 1 && defined_with_body.contains(s.name.as_str());
        let encloses = hits.iter().any(|&l| s.start_line <= l && l <= s.end_line);
        if declaration || !(encloses || bears(s)) {
            continue;
        }
        // Its owners too, so a method is shown inside its class.
        let mut at = Some(i);
        while let Some(j) = at {
            keep[j] = true;
            at = symbols[j].parent;
        }
    }
    let mut shown = Vec::new();
    let mut new_index = vec![None; symbols.len()];
    for (i, s) in symbols.iter().enumerate() {
        if !keep[i] || shown.len() >= max_items {
            continue;
        }
        let mut s = s.clone();
        s.parent = s.parent.and_then(|p| new_index[p]);
        new_index[i] = Some(shown.len());
        shown.push(s);
    }
    let omitted = symbols.len() - shown.len();
    (shown, omitted)
}

/// A symbol named like the query (in any identifier form) is the strongest
/// sign that this file is the one meant.
fn definition_signal(q: &Query, outline: &Outline) -> Option<(f64, String, bool)> {
    let describe = |s: &Symbol| {
        format!(
            "{} {} @ {}-{}",
            s.kind.as_str(),
            s.name,
            s.start_line,
            s.end_line
        )
    };
    // A Markdown heading is no definition: docs already rank by their names.
    let code = |s: &&Symbol| s.kind != SymbolKind::Section;
    // Zoekt's order: an exact symbol beats any path evidence; a partial one
    // only breaks near-ties.
    let mut code_symbols = outline.symbols.iter().filter(code);
    // Of several definitions, a top-level one with a body is the thing
    // itself; a one-line method stub or a test's helper restates it.
    let substance = |s: &Symbol| {
        20.0 * f64::from(u8::from(s.depth == 0)) + 10.0 * f64::from(u8::from(s.line_count() > 1))
    };
    let named = code_symbols
        .clone()
        .filter_map(|s| {
            let how = tokens::names_query(&s.name, &q.tokens)
                .or_else(|| tokens::names_query(tokens::own_name(&s.name), &q.tokens))?;
            Some((how, s))
        })
        .min_by(|(a, x), (b, y)| a.cmp(b).then(substance(y).total_cmp(&substance(x))));
    match named {
        Some((NameMatch::Exact, s)) => {
            return Some((
                250.0 + substance(s),
                format!("defines {}", describe(s)),
                true,
            ))
        }
        Some((how, s)) => {
            let how = if how == NameMatch::Reordered {
                "words reordered"
            } else {
                "abbreviated"
            };
            return Some((
                200.0 + substance(s),
                format!("defines {} ({how})", describe(s)),
                false,
            ));
        }
        None => {}
    }
    let s = code_symbols.find(|s| tokens::contains_run(&tokens::split(&s.name), &q.tokens))?;
    Some((
        15.0,
        format!("defines {} (name contains the query)", describe(s)),
        false,
    ))
}

fn read_outline(path: &Path, cancel: &CancelToken) -> Option<Arc<Outline>> {
    let lang = Language::from_path(path)?;
    let mut source = Vec::new();
    let meta = super::files::read_small(path, &mut source)?;
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
