//! `locate`: ranked file discovery. Every path is scored from its tokens
//! alone during one parallel walk (a bounded heap keeps the best); only the
//! few best are then read and outlined, to add "defines a symbol of that
//! name" and the structure shown with each result.

use super::files::{map_parallel, Scope, Visit};
use super::role::{is_entry_point, Role};
use super::tokens::{self, TokenMatch};
use super::DiscoverError;
use crate::index::{IndexMode, IndexUse};
use crate::search::CancelToken;
use crate::search::{display_bytes, relative_bytes, DisplayPath};
use crate::search::{ErrorLog, WalkOptions};
use crate::structure::{self, Language, Outline, Symbol, SymbolKind};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// Structure items shown per file, as agentgrep shows them.
pub const STRUCTURE_ITEMS: usize = 8;
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
    /// Up to [`STRUCTURE_ITEMS`] symbols (deepest dropped first).
    pub structure: Vec<Symbol>,
    pub more_symbols: usize,
    pub ignored: bool,
}

#[derive(Debug, Clone, Default)]
pub struct LocateResult {
    pub query: String,
    pub files: Vec<LocatedFile>,
    /// Files whose path matched the query at all.
    pub candidates: u64,
    pub files_seen: u64,
    /// Ignored roots not walked (the project alone filled the list, or the
    /// walk stopped).
    pub ignored_unsearched: Vec<String>,
    pub timed_out: bool,
    pub cancelled: bool,
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
    /// One substring finder per token, built once for every path.
    finders: Vec<memchr::memmem::Finder<'static>>,
}

impl Query {
    pub fn parse(raw: &str) -> Result<Query, DiscoverError> {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(DiscoverError::EmptyQuery);
        }
        let mut toks = tokens::split(trimmed);
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
                .map(|t| memchr::memmem::Finder::new(t.as_bytes()).into_owned())
                .collect(),
            tokens: toks,
            path_form,
        })
    }

    /// False only for a path that [`score_path`] cannot score. A path
    /// scores when a token meets one of its tokens whole or as a prefix (or
    /// a run of its tokens written together), when every token meets it
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
    let matched_tokens = in_name.len() + in_dir.len();
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
        .filter(|nt| joined || q.tokens.iter().any(|t| nt.starts_with(t.as_str())))
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
        if !in_name.is_empty() {
            why.push(format!("file name matches {}", in_name.join(", ")));
        }
        if coverage >= 0.999 && !in_name.is_empty() {
            why.push("the query names the whole file".to_string());
        }
        if !in_dir.is_empty() {
            why.push(format!("directory matches {}", in_dir.join(", ")));
        }
        if path_hit {
            why.push(format!("path contains {}", q.raw));
        }
        if !fuzzy.is_empty() {
            why.push(format!("fuzzy match for {}", fuzzy.join(", ")));
        }
        if !missing.is_empty() {
            why.push(format!("path lacks {}", missing.join(", ")));
        }
        if entry_of_match {
            why.push(format!("entry point of {dir}/"));
        }
        if role.penalty() > 0.0 {
            why.push(format!("{} file: ranked down", role.as_str()));
        }
    }
    Some(PathScore {
        score,
        why,
        missing: missing.len(),
    })
}

/// A path's score, its reasons (when asked), and how many query tokens it
/// lacks (a definition named by the whole query supplies those).
#[derive(Debug, Default)]
pub(crate) struct PathScore {
    pub score: f64,
    pub why: Vec<String>,
    pub missing: usize,
}

/// A scored path in the walk's heap; the greatest is the best.
#[derive(Debug, Clone, PartialEq)]
struct Candidate {
    score: f64,
    mtime: SystemTime,
    path: PathBuf,
    ignored: bool,
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
    keep: usize,
    matched: u64,
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
        for Reverse(c) in std::mem::take(&mut self.best.heap) {
            all.push(c);
        }
    }
}

impl Best {
    fn would_keep(&self, score: f64, ignored: bool) -> bool {
        if self.heap.len() < self.keep {
            return true;
        }
        self.heap
            .peek()
            .is_some_and(|Reverse(worst)| (!ignored, score) >= (!worst.ignored, worst.score))
    }

    fn push(&mut self, c: Candidate) {
        self.heap.push(Reverse(c));
        if self.heap.len() > self.keep {
            self.heap.pop();
        }
    }
}

/// A validated locate: bad input is rejected before any walking starts.
pub struct LocatePlan {
    opts: LocateOptions,
    query: Query,
    scope: Scope,
}

impl LocatePlan {
    pub fn new(cwd: &Path, path: Option<&str>, opts: LocateOptions) -> Result<Self, DiscoverError> {
        let query = Query::parse(&opts.query)?;
        let scope = Scope::new(cwd, path, opts.walk.clone(), opts.index)?;
        Ok(LocatePlan { opts, query, scope })
    }

    pub fn run(&self, cancel: &CancelToken) -> LocateResult {
        run_plan(self, cancel)
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
    // Where a path below the root starts: paths are the root's with names
    // pushed on, so the prefilter reads the part below it in place.
    let root_bytes = root.as_os_str().as_encoded_bytes();
    let rel_start = root_bytes.len() + usize::from(!root_bytes.ends_with(b"/"));
    let (unsearched, index) = plan.scope.for_each_file(
        None,
        cancel,
        &errors,
        // Ignored files rank after the project's own: walk them only when
        // the project did not fill the list.
        || best.lock().unwrap_or_else(|p| p.into_inner()).heap.len() < limit,
        |ignored| {
            // Each thread keeps its own best and hands it over when its
            // part of the walk ends: the order is total, so the union's
            // best are the same as one shared heap's, without a lock per path.
            let mut mine = ThreadBest {
                best: Best {
                    keep,
                    ..Best::default()
                },
                into: &best,
                matchers: q.matchers(),
                scratch: Vec::new(),
            };
            move |v: &Visit<'_>| {
                let path = v.path;
                mine.best.seen += 1;
                let bytes = path.as_os_str().as_encoded_bytes();
                let below = bytes
                    .strip_prefix(root_bytes)
                    .and_then(|b| b.get(rel_start - root_bytes.len()..));
                if !below.is_none_or(|b| q.may_match(b, &mut mine.scratch)) {
                    return true;
                }
                let rel = display_bytes(&relative_bytes(root, path)).text;
                let scored = score_path(q, &rel, &mut mine.matchers, false);
                if let Some(PathScore { score, .. }) = scored {
                    mine.best.matched += 1;
                    if mine.best.would_keep(score, ignored) {
                        mine.best.push(Candidate {
                            score,
                            mtime: v.mtime(),
                            path: path.to_path_buf(),
                            ignored,
                        });
                    }
                }
                true
            }
        },
    );
    let best = best.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut chosen: Vec<Candidate> = best.heap.into_iter().map(|Reverse(c)| c).collect();
    chosen.sort_by(|a, b| b.cmp(a));
    let mut files = finish(q, root, chosen, cancel);
    files.sort_by(|a, b| {
        (!b.0.ignored)
            .cmp(&!a.0.ignored)
            .then(b.0.score.total_cmp(&a.0.score))
            .then(a.1.cmp(&b.1))
    });
    let mut result = LocateResult {
        query: q.raw.clone(),
        files: files.into_iter().take(limit).map(|(f, _)| f).collect(),
        candidates: best.matched,
        files_seen: best.seen,
        ignored_unsearched: unsearched,
        errors: errors.into_inner().unwrap_or_else(|p| p.into_inner()),
        index,
        ..LocateResult::default()
    };
    (result.cancelled, result.timed_out) = cancel.flags();
    result.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    result.text = super::locate_render::render(&result);
    result
}

/// Reads and outlines the candidates (in parallel: each parse is a few ms),
/// adds the definition signal, and returns them with their walk rank.
fn finish(
    q: &Query,
    root: &Path,
    chosen: Vec<Candidate>,
    cancel: &CancelToken,
) -> Vec<(LocatedFile, usize)> {
    map_parallel(&chosen, || {
        let mut matchers = q.matchers();
        move |rank, c: &Candidate| Some((located(q, root, c, &mut matchers, cancel), rank))
    })
}

fn located(
    q: &Query,
    root: &Path,
    c: &Candidate,
    matchers: &mut [FuzzyToken],
    cancel: &CancelToken,
) -> LocatedFile {
    let path = display_bytes(&relative_bytes(root, &c.path));
    let PathScore {
        mut why, missing, ..
    } = score_path(q, &path.text, matchers, true).unwrap_or_default();
    let mut score = c.score;
    let outline = if cancel.is_stopped() {
        None
    } else {
        read_outline(&c.path, cancel)
    };
    let (mut structure, mut more_symbols, mut language) = (Vec::new(), 0, None);
    if let Some(outline) = outline {
        language = Some(outline.language);
        if let Some((bonus, reason, exact)) = definition_signal(q, &outline) {
            score += bonus;
            if exact {
                // `src/auth/mod.rs` defining `AuthStatus` lacks `status` only
                // in its path: the symbol names it.
                score += MISSING_TOKEN_COST * missing as f64;
            }
            why.insert(0, reason);
        }
        let cut = structure::limit(&outline.symbols, STRUCTURE_ITEMS);
        structure = cut.symbols;
        more_symbols = cut.omitted;
    } else {
        language = Language::from_path(&c.path).or(language);
    }
    if c.ignored {
        why.push("excluded by ignore rules: listed after the project's files".to_string());
    }
    LocatedFile {
        role: Role::of(&path.text),
        path,
        score,
        language,
        why,
        structure,
        more_symbols,
        ignored: c.ignored,
    }
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
    if let Some(s) = code_symbols
        .clone()
        .find(|s| tokens::same_name(&s.name, &q.tokens))
    {
        return Some((250.0, format!("defines {}", describe(s)), true));
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
