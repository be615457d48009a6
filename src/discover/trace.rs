//! `trace`: one pass over the files finds every occurrence of the subject
//! (all probes share it: no walk per relation); a bounded heap keeps the
//! files whose lines look most like the relation; only those are outlined
//! and searched for call sites, which turn occurrences into regions of a
//! kind (definition, callsite, render-site, handler, assignment, ...).

use super::dsl::{KindFilter, Relation, RelationTerm, TraceQuery};
use super::files::{map_parallel, read_small, Scope};
use super::relate::{
    c_initialised_type, c_variable_definition, shape, whole_identifier, Occurrence, Shape, Subject,
};
use super::role::Role;
use super::tokens;
use super::DiscoverError;
use crate::index::{IndexMode, IndexUse};
use crate::search::CancelToken;
use crate::search::{display_bytes, relative_bytes, DisplayPath};
use crate::search::{ErrorLog, SourceFile, WalkOptions};
use crate::structure::calls::UseKind;
use crate::structure::{self, Language, Outline, Symbol, SymbolKind};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Occurrences kept per file (enough to rank it and build its regions).
const MAX_OCCURRENCES: usize = 200;
/// Files parsed for structure whatever `max_files` is, the best by their
/// text first; the best answer is always one of them, so it never depends
/// on how many files are shown (a shortlist sized by `max_files` dropped
/// `src/router.ts` for a benchmark file unless 12 were asked for).
const SHORTLIST: usize = 20;
/// A region up to this many lines is shown whole.
pub const FULL_REGION_LINES: u32 = 20;
/// Shown lines are cut to this many characters.
const MAX_LINE_CHARS: usize = 240;

#[derive(Debug, Clone)]
pub struct TraceOptions {
    pub query: String,
    /// At least one file is shown, whatever is asked.
    pub max_files: usize,
    pub max_regions: usize,
    pub walk: WalkOptions,
    pub timeout: Option<Duration>,
    /// Whether a ready index may list the files and rule out those that
    /// cannot mention the subject.
    pub index: IndexMode,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            query: String::new(),
            max_files: 5,
            max_regions: 6,
            walk: WalkOptions::default(),
            timeout: None,
            index: IndexMode::IfReady,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionKind {
    Definition,
    Implementation,
    Callsite,
    RenderSite,
    Handler,
    TriggerSite,
    Source,
    Assignment,
    Related,
    Reference,
}

impl RegionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RegionKind::Definition => "definition",
            RegionKind::Implementation => "implementation",
            RegionKind::Callsite => "callsite",
            RegionKind::RenderSite => "render-site",
            RegionKind::Handler => "handler",
            RegionKind::TriggerSite => "trigger-site",
            RegionKind::Source => "source",
            RegionKind::Assignment => "assignment",
            RegionKind::Related => "related",
            RegionKind::Reference => "reference",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Region {
    pub kind: RegionKind,
    /// `function render_status` or `<file scope>`.
    pub label: String,
    pub start_line: u32,
    pub end_line: u32,
    pub score: f64,
    /// `NN: text` lines: the whole region when it is short, else its first
    /// line and the subject's lines.
    pub body: Vec<String>,
    pub full_region: bool,
    pub why: Vec<String>,
}

impl Region {
    /// Lines from `start_line` to `end_line`, both counted.
    pub fn line_count(&self) -> u32 {
        self.end_line + 1 - self.start_line
    }
}

#[derive(Debug, Clone)]
pub struct TracedFile {
    pub path: DisplayPath,
    pub role: Role,
    pub language: Option<Language>,
    pub score: f64,
    pub why: Vec<String>,
    pub structure: Vec<Symbol>,
    pub more_symbols: usize,
    pub regions: Vec<Region>,
    pub ignored: bool,
}

#[derive(Debug, Clone, Default)]
pub struct TraceResult {
    pub query: Option<TraceQuery>,
    pub files: Vec<TracedFile>,
    /// Files with at least one occurrence of the subject.
    pub files_matched: u64,
    pub files_scanned: u64,
    /// Whether any shown file had structure (else regions are plain
    /// word-boundary matches, and the text says so).
    pub structure_found: bool,
    pub timed_out: bool,
    pub cancelled: bool,
    pub errors: ErrorLog,
    pub elapsed_ms: f64,
    /// `Used`: the files came from the index's table and only those its
    /// postings allow were read.
    pub index: IndexUse,
    pub text: String,
}

/// A file that mentions the subject, before structure.
#[derive(Debug, Clone)]
struct Candidate {
    score: f64,
    path: PathBuf,
    ignored: bool,
}

impl PartialEq for Candidate {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Candidate {}
impl Ord for Candidate {
    fn cmp(&self, o: &Self) -> Ordering {
        (!self.ignored)
            .cmp(&!o.ignored)
            .then(self.score.total_cmp(&o.score))
            .then(o.path.cmp(&self.path))
    }
}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

pub struct TracePlan {
    opts: TraceOptions,
    query: TraceQuery,
    subject: Subject,
    relation_tokens: Vec<String>,
    support: Vec<Vec<String>>,
    scope: Scope,
}

impl TracePlan {
    pub fn new(
        cwd: &Path,
        path: Option<&str>,
        mut opts: TraceOptions,
    ) -> Result<Self, DiscoverError> {
        opts.max_files = opts.max_files.max(1);
        let query = TraceQuery::parse(&opts.query)?;
        let subject = Subject::new(&query.subject)
            .ok_or_else(|| DiscoverError::NoWords(query.subject.clone()))?;
        let relation_tokens = match &query.relation {
            RelationTerm::Known(r) => r.words().iter().map(|w| w.to_string()).collect(),
            RelationTerm::Custom(c) => tokens::split(c),
        };
        let support = query
            .support
            .iter()
            .map(|s| tokens::split(s))
            .filter(|t| !t.is_empty())
            .collect();
        let scope = Scope::new(cwd, path, opts.walk.clone(), opts.index)?;
        Ok(TracePlan {
            opts,
            query,
            subject,
            relation_tokens,
            support,
            scope,
        })
    }

    pub fn run(&self, cancel: &CancelToken) -> TraceResult {
        run_plan(self, cancel)
    }

    fn known(&self) -> Option<Relation> {
        match self.query.relation {
            RelationTerm::Known(r) => Some(r),
            RelationTerm::Custom(_) => None,
        }
    }

    fn in_scope(&self, rel: &str) -> bool {
        let role = Role::of(rel);
        let kind_ok = match self.query.kind {
            None => true,
            Some(KindFilter::Code) => !matches!(role, Role::Docs | Role::Test),
            Some(KindFilter::Docs) => role == Role::Docs,
            Some(KindFilter::Tests) => role == Role::Test,
        };
        let path_ok = self.query.path.as_ref().is_none_or(|p| {
            let p = p.trim_start_matches("./").trim_end_matches('/');
            rel == p || rel.starts_with(&format!("{p}/")) || rel.contains(p)
        });
        kind_ok && path_ok
    }
}

/// A text file's metadata and bytes; binary files (a NUL early on, as
/// ripgrep decides) hold no regions.
fn read_text(path: &Path, buf: &mut Vec<u8>) -> Option<std::fs::Metadata> {
    let meta = read_small(path, buf)?;
    (memchr::memchr(0, &buf[..buf.len().min(8192)]).is_none()).then_some(meta)
}

fn lines_of(buf: &[u8]) -> Vec<&[u8]> {
    buf.split(|b| *b == b'\n').collect()
}

/// How much one file's lines look like the relation, from text alone.
fn lexical_score(plan: &TracePlan, rel: &str, buf: &[u8], occ: &[Occurrence]) -> f64 {
    let lines = lines_of(buf);
    let relation = plan.known();
    let mut score = 2.0 * occ.len().min(10) as f64;
    let mut seen_line = 0;
    for o in occ {
        let text = std::str::from_utf8(lines.get(o.line as usize - 1).copied().unwrap_or_default())
            .unwrap_or("");
        let weight = match (shape(text, o), relation) {
            (Shape::Definition, Some(Relation::Defined | Relation::Implementation)) => 40.0,
            (Shape::Call, Some(Relation::CalledFrom)) => 30.0,
            (Shape::Assignment, Some(Relation::Populated)) => 30.0,
            (Shape::Definition, _) => 10.0,
            _ => 0.0,
        };
        score += weight;
        if o.line != seen_line {
            seen_line = o.line;
            let line_tokens = tokens::split(text);
            if plan.relation_tokens.iter().any(|w| line_tokens.contains(w)) {
                score += 8.0;
            }
            score += 10.0
                * plan
                    .support
                    .iter()
                    .filter(|s| tokens::contains_run(&line_tokens, s))
                    .count() as f64;
        }
    }
    if tokens::contains_run(&tokens::split(rel), &plan.subject.tokens) {
        score += 20.0;
    }
    score - Role::of(rel).penalty()
}

fn run_plan(plan: &TracePlan, cancel: &CancelToken) -> TraceResult {
    let started = Instant::now();
    let root = &plan.scope.root;
    let keep = plan.opts.max_files.max(SHORTLIST);
    let heap: Mutex<BinaryHeap<Reverse<Candidate>>> = Mutex::new(BinaryHeap::new());
    // Files read, and files that mention the subject (atomics: one lock per
    // file of the tree was measurable on two cores).
    let (scanned, matched) = (AtomicU64::new(0), AtomicU64::new(0));
    let errors = Mutex::new(ErrorLog::default());
    // Without a kind or path filter no file's relative path is needed
    // before it is known to mention the subject.
    let filtered = plan.query.kind.is_some() || plan.query.path.is_some();
    let subject = plan.subject.pattern();
    let (source, index) = plan.scope.source(Some(subject));
    source.visit_all(
        plan.scope.threads(),
        cancel,
        &errors,
        || true,
        |ignored| {
            let (heap, scanned, matched) = (&heap, &scanned, &matched);
            let mut buf = Vec::new();
            move |v: &SourceFile<'_>| {
                let path = v.path;
                if filtered && !plan.in_scope(&display_bytes(&relative_bytes(root, path)).text) {
                    return true;
                }
                scanned.fetch_add(1, AtomicOrdering::Relaxed);
                // Counted as the walk counts it, but not read: the index
                // says the subject is not in it.
                if !v.candidate || read_text(path, &mut buf).is_none() {
                    return true;
                }
                let occ = plan.subject.find(&buf, MAX_OCCURRENCES);
                if occ.is_empty() {
                    return true;
                }
                matched.fetch_add(1, AtomicOrdering::Relaxed);
                let rel = display_bytes(&relative_bytes(root, path)).text;
                let score = lexical_score(plan, &rel, &buf, &occ);
                let mut h = heap.lock().unwrap_or_else(|p| p.into_inner());
                h.push(Reverse(Candidate {
                    score,
                    path: path.to_path_buf(),
                    ignored,
                }));
                if h.len() > keep {
                    h.pop();
                }
                true
            }
        },
    );
    let mut candidates: Vec<Candidate> = heap
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|Reverse(c)| c)
        .collect();
    candidates.sort_by(|a, b| b.cmp(a));
    // Each is a parse or two (5 to 20 ms for a large C file): once the
    // index has narrowed the pass over the files, most of a trace.
    let files = map_parallel(&candidates, || {
        |rank, c: &Candidate| Some((traced(plan, root, c, cancel)?, rank < SHORTLIST))
    });
    let wanted = plan.known().and_then(wanted_kind);
    let mut files: Vec<(TracedFile, bool)> = files;
    // The shortlist first: the files beyond it (there when more than
    // SHORTLIST are asked for) only follow, so the best stays the same.
    files.sort_by(|(a, a_short), (b, b_short)| {
        b_short
            .cmp(a_short)
            .then((!b.ignored).cmp(&!a.ignored))
            .then(answers(b, wanted).cmp(&answers(a, wanted)))
            .then(tier(a).total_cmp(&tier(b)))
            .then(b.score.total_cmp(&a.score))
            .then(a.path.text.cmp(&b.path.text))
    });
    let mut files: Vec<TracedFile> = files.into_iter().map(|(f, _)| f).collect();
    files.truncate(plan.opts.max_files);
    let structure_found = files.iter().any(|f| !f.structure.is_empty());
    keep_best_regions(&mut files, plan.opts.max_regions);
    let (scanned, matched) = (scanned.into_inner(), matched.into_inner());
    let mut result = TraceResult {
        query: Some(plan.query.clone()),
        files,
        files_matched: matched,
        files_scanned: scanned,
        structure_found,
        errors: errors.into_inner().unwrap_or_else(|p| p.into_inner()),
        index,
        ..TraceResult::default()
    };
    (result.cancelled, result.timed_out) = cancel.flags();
    result.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    result.text = super::trace_render::render(&result);
    result
}

/// The region kind a relation asks for, where it names one.
fn wanted_kind(relation: Relation) -> Option<RegionKind> {
    Some(match relation {
        Relation::Defined => RegionKind::Definition,
        Relation::CalledFrom => RegionKind::Callsite,
        Relation::Populated => RegionKind::Assignment,
        Relation::Implementation => RegionKind::Implementation,
        Relation::Rendered => RegionKind::RenderSite,
        Relation::Handled => RegionKind::Handler,
        Relation::TriggeredFrom => RegionKind::TriggerSite,
        Relation::ComesFrom => RegionKind::Source,
    })
}

/// Whether a file's best region is what the relation asks for: such files
/// come first, so a test full of calls never hides the one production
/// caller, and "best answer likely in" names a file that answers.
fn answers(f: &TracedFile, wanted: Option<RegionKind>) -> bool {
    wanted.is_none_or(|k| {
        f.regions.first().is_some_and(|r| {
            r.kind == k || (k == RegionKind::Implementation && r.kind == RegionKind::Definition)
        })
    })
}

/// Among files that answer: the project's code first, then type
/// declarations (`.d.ts`: they restate what a sibling file implements),
/// then tests, docs, vendored and generated files (ranked down, not out).
fn tier(f: &TracedFile) -> f64 {
    let declarations = [".d.ts", ".d.mts", ".d.cts"]
        .iter()
        .any(|ext| f.path.text.ends_with(ext));
    f.role.penalty() + if declarations { 10.0 } else { 0.0 }
}

/// At most `max` regions over all files, the best first; every file keeps
/// its structure and reasons even when its regions are cut.
fn keep_best_regions(files: &mut [TracedFile], max: usize) {
    let mut all: Vec<(f64, usize, usize)> = Vec::new();
    for (fi, f) in files.iter().enumerate() {
        for (ri, r) in f.regions.iter().enumerate() {
            // The best file's best region is the answer: always shown
            // (issue 45: a test's regions, scored higher before its file
            // was ranked down, took every place). Others rank as their
            // files do, tests and docs down.
            let key = if (fi, ri) == (0, 0) {
                f64::INFINITY
            } else {
                r.score - f.role.penalty()
            };
            all.push((key, fi, ri));
        }
    }
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let kept: std::collections::HashSet<(usize, usize)> =
        all.iter().take(max).map(|&(_, f, r)| (f, r)).collect();
    for (fi, f) in files.iter_mut().enumerate() {
        let mut ri = 0;
        f.regions.retain(|_| {
            let k = kept.contains(&(fi, ri));
            ri += 1;
            k
        });
    }
}

/// Structure for one candidate: regions, their kinds and scores.
fn traced(
    plan: &TracePlan,
    root: &Path,
    c: &Candidate,
    cancel: &CancelToken,
) -> Option<TracedFile> {
    let mut buf = Vec::new();
    let meta = read_text(&c.path, &mut buf)?;
    let occ = plan.subject.find(&buf, MAX_OCCURRENCES);
    if occ.is_empty() {
        return None; // changed since the walk
    }
    let path = display_bytes(&relative_bytes(root, &c.path));
    let role = Role::of(&path.text);
    let language = Language::detect(&c.path, &buf);
    let stop = || cancel.is_stopped();
    let parsed = language.and_then(|l| crate::search::outline_and_uses_of(l, &meta, &buf, &stop));
    let (outline, uses) = match parsed {
        Some((o, u)) => (Some(o), u),
        None => (None, Default::default()),
    };
    let lines = lines_of(&buf);
    let mut regions = build_regions(plan, role, outline.as_deref(), &lines, &occ, &uses);
    regions.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.start_line.cmp(&b.start_line))
    });
    let mut why = Vec::new();
    let mut score = regions.first().map_or(0.0, |r| r.score);
    score += 0.25 * regions.iter().skip(1).take(3).map(|r| r.score).sum::<f64>();
    let count = |k: RegionKind| regions.iter().filter(|r| r.kind == k).count();
    for (kind, word) in [
        (RegionKind::Definition, "definition"),
        (RegionKind::Callsite, "call site"),
        (RegionKind::Assignment, "assignment"),
    ] {
        match count(kind) {
            0 => {}
            1 => why.push(format!("1 {word} region")),
            n => why.push(format!("{n} {word} regions")),
        }
    }
    let name_regions = regions
        .iter()
        .filter(|r| r.why.iter().any(|w| w.starts_with("enclosing")))
        .count();
    if name_regions > 0 {
        why.push(format!(
            "{} inside a symbol named for {}",
            counted(name_regions, "region", "regions"),
            plan.query.relation.name()
        ));
    }
    why.push(format!(
        "{} of {}",
        counted(occ.len(), "occurrence", "occurrences"),
        plan.query.subject
    ));
    let path_tokens = tokens::split(&path.text);
    if tokens::contains_run(&path_tokens, &plan.subject.tokens) {
        score += 20.0;
        why.push("the path names the subject".to_string());
    }
    for s in &plan.support {
        if tokens::contains_run(&path_tokens, s) {
            score += 10.0;
            why.push(format!("the path names support term {}", s.join("_")));
        }
    }
    if role.penalty() > 0.0 {
        score -= role.penalty();
        why.push(format!("{} file: ranked down", role.as_str()));
    }
    if c.ignored {
        why.push("excluded by ignore rules: listed after the project's files".to_string());
    }
    let (structure, more_symbols) = match &outline {
        Some(o) => {
            let hits: Vec<u32> = occ.iter().map(|o| o.line).collect();
            let names =
                |s: &Symbol| tokens::contains_run(&tokens::split(&s.name), &plan.subject.tokens);
            let max = super::bearing::STRUCTURE_ITEMS;
            super::bearing::bearing_symbols(&o.symbols, names, &hits, max)
        }
        None => (Vec::new(), 0),
    };
    Some(TracedFile {
        path,
        role,
        language,
        score,
        why,
        structure,
        more_symbols,
        regions,
        ignored: c.ignored,
    })
}

/// Where a group of occurrences lives: a symbol (by index) or a run of
/// file-scope lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Home {
    Symbol(usize),
    FileScope(u32),
}

fn is_type_like(kind: SymbolKind) -> bool {
    matches!(
        kind,
        SymbolKind::Impl
            | SymbolKind::Class
            | SymbolKind::Struct
            | SymbolKind::Trait
            | SymbolKind::Interface
            | SymbolKind::Enum
    )
}

fn build_regions(
    plan: &TracePlan,
    role: Role,
    outline: Option<&Outline>,
    lines: &[&[u8]],
    occ: &[Occurrence],
    uses: &[structure::calls::NameUse],
) -> Vec<Region> {
    let named_subject = |s: &Symbol| tokens::names_symbol_as(&s.name, &plan.query.subject);
    // Group occurrences by home, in order of first appearance.
    let mut homes: Vec<(Home, Vec<&Occurrence>)> = Vec::new();
    for o in occ {
        let home = match outline.and_then(|ol| ol.enclosing(o.line).map(|i| (ol, i))) {
            Some((ol, mut i)) => {
                // Inside the subject's own definition, the definition is the region.
                let mut at = Some(i);
                while let Some(j) = at {
                    if named_subject(&ol.symbols[j]) {
                        i = j;
                        break;
                    }
                    at = ol.symbols[j].parent;
                }
                Home::Symbol(i)
            }
            None => Home::FileScope(o.line),
        };
        let joins_file_scope = |h: &Home| matches!((h, home), (Home::FileScope(a), Home::FileScope(b)) if b <= *a + 3 && b >= *a);
        match homes.last_mut() {
            Some((h, list)) if *h == home || joins_file_scope(h) => {
                if let Home::FileScope(_) = home {
                    *h = home; // extends the run to this line
                }
                list.push(o);
            }
            _ => match homes.iter_mut().find(|(h, _)| *h == home) {
                Some((_, list)) => list.push(o),
                None => homes.push((home, vec![o])),
            },
        }
    }
    homes
        .into_iter()
        .map(|(home, list)| region_for(plan, role, outline, lines, home, &list, uses))
        .collect()
}

fn text_of(lines: &[&[u8]], n: u32) -> String {
    let raw = line_text(lines, n);
    let trimmed = raw.trim_end();
    let cut: String = trimmed.chars().take(MAX_LINE_CHARS).collect();
    format!("{n}: {cut}")
}

/// A region's kind, score and reasons as the signals add up: the first
/// signal that names a kind decides it, so callers bump the one the
/// relation asks for first.
struct Verdict {
    kind: RegionKind,
    score: f64,
    why: Vec<String>,
}

impl Verdict {
    fn bump(&mut self, kind: RegionKind, points: f64, reason: String) {
        self.score += points;
        self.why.push(reason);
        if self.kind == RegionKind::Reference {
            self.kind = kind;
        }
    }
}

/// What the occurrences of one region show, read once whatever the
/// relation: each relation's scoring weighs some of them.
struct Signals<'a> {
    symbol: Option<&'a Symbol>,
    label: String,
    start: u32,
    end: u32,
    /// The region defines the subject (see [`defines_subject`]).
    defines: bool,
    /// A type-like symbol (class, impl, trait, ...) named for the subject.
    implements: bool,
    calls: usize,
    renders: usize,
    assigns: usize,
    /// The enclosing symbol's name holds one of the relation's words.
    named_for_relation: bool,
    /// Where the relation's words and support terms are looked for: the
    /// region's first 401 lines (a long one is not split to its end).
    body_tokens: Vec<String>,
    /// A function or method stated without a body (a prototype, a method
    /// of an interface or trait on one line).
    bodiless: bool,
}

/// One region's kind, score, reasons and shown lines. Each relation's
/// scoring is its own function, so what one relation weighs reads (and
/// changes) apart from the others.
fn region_for(
    plan: &TracePlan,
    role: Role,
    outline: Option<&Outline>,
    lines: &[&[u8]],
    home: Home,
    list: &[&Occurrence],
    uses: &[structure::calls::NameUse],
) -> Region {
    let s = signals(plan, role, outline, lines, home, list, uses);
    let relation = plan.known();
    let mut acc = Verdict {
        kind: RegionKind::Reference,
        score: 5.0 + 2.0 * list.len().min(5) as f64,
        why: Vec::new(),
    };
    // The order of these bumps decides the kind when several apply: the one
    // the relation asks for comes first.
    match relation {
        Some(Relation::Defined) => bump_defined(&mut acc, &s),
        Some(Relation::Implementation) => bump_implementation(&mut acc, &s),
        Some(Relation::CalledFrom) => bump_called_from(&mut acc, &s),
        Some(Relation::Populated) => bump_populated(&mut acc, &s),
        Some(Relation::Rendered) => bump_rendered(&mut acc, &s),
        _ => {}
    }
    bump_relation_words(&mut acc, plan, &s);
    bump_other_signals(&mut acc, plan, &s);
    let (body, full_region) = region_body(lines, s.start, s.end, list);
    Region {
        kind: acc.kind,
        label: s.label,
        start_line: s.start,
        end_line: s.end,
        score: acc.score,
        body,
        full_region,
        why: acc.why,
    }
}

/// The score of the kind a relation asks for.
const PRIMARY: f64 = 100.0;

fn bump_defined(acc: &mut Verdict, s: &Signals) {
    if s.defines {
        acc.bump(
            RegionKind::Definition,
            PRIMARY,
            "defines the subject".into(),
        );
    }
    if s.implements {
        acc.bump(
            RegionKind::Implementation,
            40.0,
            format!("{} of the subject", s.label),
        );
    }
}

fn bump_implementation(acc: &mut Verdict, s: &Signals) {
    if s.implements {
        acc.bump(
            RegionKind::Implementation,
            PRIMARY,
            format!("{} implements the subject", s.label),
        );
    }
    if s.defines {
        acc.bump(RegionKind::Definition, 80.0, "defines the subject".into());
    }
}

fn bump_called_from(acc: &mut Verdict, s: &Signals) {
    let calls = s.calls;
    // The subject's own definition is never its call site, recursion included.
    if calls > 0 && !s.defines {
        acc.bump(
            RegionKind::Callsite,
            PRIMARY + 5.0 * calls.min(4) as f64,
            format!("calls the subject ({calls}x)"),
        );
    }
}

fn bump_populated(acc: &mut Verdict, s: &Signals) {
    let assigns = s.assigns;
    if assigns > 0 {
        acc.bump(
            RegionKind::Assignment,
            PRIMARY,
            format!("assigns the subject ({assigns}x)"),
        );
    }
}

fn bump_rendered(acc: &mut Verdict, s: &Signals) {
    if s.renders > 0 {
        acc.bump(
            RegionKind::RenderSite,
            90.0,
            "renders the subject as an element".into(),
        );
    }
}

/// The relations without a signal of their own (handled, triggered_from,
/// comes_from, ...) are found by their words: in the enclosing symbol's
/// name (the region is then of the relation's kind), else in its body.
fn bump_relation_words(acc: &mut Verdict, plan: &TracePlan, s: &Signals) {
    let relation = plan.known();
    let name = plan.query.relation.name();
    // Populated and implementation have signals of their own: a
    // function merely named like them (`init*`) is no assignment.
    let own_signal = matches!(
        relation,
        Some(Relation::Populated | Relation::Implementation)
    );
    if s.named_for_relation && own_signal {
        acc.score += 25.0;
        acc.why
            .push(format!("enclosing {} is named for {name}", s.label));
    } else if s.named_for_relation
        && relation != Some(Relation::Defined)
        && relation != Some(Relation::CalledFrom)
    {
        let kind = relation
            .and_then(wanted_kind)
            .unwrap_or(RegionKind::Related);
        let why = format!("enclosing {} is named for {name}", s.label);
        acc.bump(kind, PRIMARY, why);
    } else if !plan.relation_tokens.is_empty()
        && (plan.relation_tokens.iter()).any(|w| s.body_tokens.contains(w))
    {
        acc.score += 25.0;
        acc.why.push(format!("{name} words occur here"));
    }
}

/// What counts whatever the relation asked: a definition, its exact name
/// and its body, calls and assignments the relation did not score, and
/// the support terms.
fn bump_other_signals(acc: &mut Verdict, plan: &TracePlan, s: &Signals) {
    let relation = plan.known();
    if s.defines && acc.kind != RegionKind::Definition {
        acc.bump(RegionKind::Definition, 20.0, "defines the subject".into());
    }
    // `_printk` and `printk` are one identifier to the token layer, but a
    // definition spelt exactly as asked is the one the user means.
    let exact = s
        .symbol
        .is_some_and(|sym| tokens::own_name(&sym.name) == plan.query.subject);
    // Not where implementations are asked for: the subject's own
    // definition must not climb above them by its name.
    if s.defines && exact && relation != Some(Relation::Implementation) {
        acc.score += 50.0;
        acc.why
            .push(format!("named exactly {}", plan.query.subject));
    }
    // A prototype (`int _printk(const char *fmt, ...);`, a `declare
    // function`) states the name; the definition with a body is the answer.
    if s.defines && s.bodiless {
        acc.score -= 60.0;
        acc.why.push("a declaration without a body".into());
    }
    // `type HonoRequest = ...` names a shape; a class or function of that
    // name is the thing itself (this bonus was an "implementation" of the
    // class by its own name before issue 45).
    if s.defines && s.symbol.is_some_and(|sym| sym.kind == SymbolKind::Type) {
        acc.score -= 15.0;
        acc.why.push("a type alias".into());
    }
    if s.calls > 0
        && !s.defines
        && acc.kind != RegionKind::Callsite
        && relation != Some(Relation::CalledFrom)
    {
        acc.bump(RegionKind::Callsite, 10.0, "calls the subject".into());
    }
    if s.assigns > 0 && acc.kind != RegionKind::Assignment && relation != Some(Relation::Populated)
    {
        acc.bump(RegionKind::Assignment, 10.0, "assigns the subject".into());
    }
    for term in &plan.support {
        if tokens::contains_run(&s.body_tokens, term) {
            acc.score += 25.0;
            acc.why
                .push(format!("support term {} occurs here", term.join("_")));
        }
    }
}

/// The region's span and label, and what its occurrences are: from
/// structure first, then from their shape.
fn signals<'a>(
    plan: &TracePlan,
    role: Role,
    outline: Option<&'a Outline>,
    lines: &[&[u8]],
    home: Home,
    list: &[&Occurrence],
    uses: &[structure::calls::NameUse],
) -> Signals<'a> {
    let subject = &plan.subject.tokens;
    let symbol = match home {
        Home::Symbol(i) => outline.map(|o| &o.symbols[i]),
        Home::FileScope(_) => None,
    };
    let (start, end, label) = match symbol {
        Some(s) => (
            s.start_line,
            s.end_line,
            format!("{} {}", s.kind.as_str(), s.name),
        ),
        None => {
            // `struct Curl_cftype Curl_cft_ssl = {`: a C variable defined here.
            let variable = list.iter().find_map(|o| {
                let text = line_text(lines, o.line);
                c_variable_definition(&text, o).then(|| text[o.start..o.end].to_string())
            });
            let label =
                variable.map_or_else(|| "<file scope>".to_string(), |v| format!("variable {v}"));
            (list[0].line, list[list.len() - 1].line, label)
        }
    };
    let line_text = |n: u32| line_text(lines, n);
    let raw = plan.query.subject.as_str();
    let is_call = |o: &Occurrence| is_call(raw, symbol, uses, &line_text(o.line), o);
    let is_render = |o: &Occurrence| {
        uses.iter().any(|u| {
            u.line == o.line && u.kind == UseKind::Render && tokens::same_name(&u.name, subject)
        })
    };
    let assigns = list
        .iter()
        .filter(|o| shape(&line_text(o.line), o) == Shape::Assignment)
        .count();
    let name_tokens = symbol.map(|s| tokens::split(&s.name)).unwrap_or_default();
    let named_for_relation = !plan.relation_tokens.is_empty()
        && plan.relation_tokens.iter().any(|w| name_tokens.contains(w));
    let body_tokens: Vec<String> = (start..=end.min(start + 400))
        .flat_map(|n| tokens::split(&line_text(n)))
        .collect();
    Signals {
        symbol,
        defines: defines_subject(raw, role, outline, symbol, lines, list),
        implements: implements(plan, symbol, lines, list),
        calls: list.iter().filter(|o| is_call(o)).count(),
        renders: list.iter().filter(|o| is_render(o)).count(),
        assigns,
        named_for_relation,
        body_tokens,
        bodiless: symbol.is_some_and(|s| is_bodiless(s, outline, lines)),
        label,
        start,
        end,
    }
}

fn line_text(lines: &[&[u8]], n: u32) -> String {
    String::from_utf8_lossy(lines.get(n as usize - 1).copied().unwrap_or_default()).into_owned()
}

/// `1 region`, `3 regions`: a count with its noun in the right number.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Whether occurrence `o` (on a line reading `text`) calls the subject.
/// The subject's own definition is no call of it, whatever a parser or
/// the line's shape say (`func (c *Client) Get(` looks like one).
fn is_call(
    subject: &str,
    symbol: Option<&Symbol>,
    uses: &[structure::calls::NameUse],
    text: &str,
    o: &Occurrence,
) -> bool {
    let definition_line = symbol
        .filter(|s| tokens::names_symbol_as(&s.name, subject))
        .map(|s| s.start_line);
    let own = definition_line == Some(o.line) || shape(text, o) == Shape::Definition;
    // `__handle_mm_fault(` is another function's call (issue 45): the
    // occurrence must be the whole identifier called.
    !own && whole_identifier(text, o)
        && (uses.iter().any(|u| {
            u.line == o.line && u.kind == UseKind::Call && same_identifier(&u.name, text, o)
        }) || (uses.is_empty() && shape(text, o) == Shape::Call))
}

/// Whether a called name is the identifier at the occurrence, not one that
/// holds it: `foo.bar` is called as `bar`; `__bar` is not `bar`.
fn same_identifier(called: &str, text: &str, o: &Occurrence) -> bool {
    text.get(o.start..o.end)
        .is_some_and(|at| tokens::own_name(called).trim_start_matches(['.', ':', '#']) == at)
}

/// Whether the region defines the subject: its symbol is named for it, or,
/// in a file without structure, a line has a definition's shape.
fn defines_subject(
    subject: &str,
    role: Role,
    outline: Option<&Outline>,
    symbol: Option<&Symbol>,
    lines: &[&[u8]],
    list: &[&Occurrence],
) -> bool {
    // Prose never defines code: a docs line such as `Using trace_printk() in
    // ...` has a definition's shape only by accident.
    let prose = role == Role::Docs;
    // A heading named for the subject is about it, not its definition (as
    // in locate).
    symbol
        .is_some_and(|s| s.kind != SymbolKind::Section && tokens::names_symbol_as(&s.name, subject))
        || (symbol.is_none()
            && !prose
            && outline.is_none_or(|o| o.symbols.is_empty())
            && list
                .iter()
                .any(|o| shape(&line_text(lines, o.line), o) == Shape::Definition))
        // A C variable's definition at file scope, which outlines do not list.
        || (symbol.is_none()
            && !prose
            && list
                .iter()
                .any(|o| c_variable_definition(&line_text(lines, o.line), o)))
}

/// Whether the region implements the subject: a class, impl or other type
/// whose name holds it without being it (`FooImpl`, `impl Foo for Bar`), or
/// whose first line names it (`class Bar implements Foo`), or a C struct of
/// functions initialised as one (`const struct Curl_ssl Curl_ssl_openssl =
/// {`). The subject's own `interface Foo` is its definition, not an
/// implementation (issue 45).
fn implements(
    plan: &TracePlan,
    symbol: Option<&Symbol>,
    lines: &[&[u8]],
    list: &[&Occurrence],
) -> bool {
    let subject = &plan.subject.tokens;
    let c_struct = list
        .iter()
        .any(|o| c_initialised_type(&line_text(lines, o.line), o));
    c_struct
        || symbol.is_some_and(|s| {
            is_type_like(s.kind)
                && !tokens::names_symbol_as(&s.name, &plan.query.subject)
                && (tokens::contains_run(&tokens::split(&s.name), subject)
                    || list.iter().any(|o| o.line == s.start_line))
        })
}

/// A function or method ending in `;` (a prototype), or one stated on one
/// line inside an interface or trait.
fn is_bodiless(s: &Symbol, outline: Option<&Outline>, lines: &[&[u8]]) -> bool {
    let in_interface = s.start_line == s.end_line
        && s.parent
            .and_then(|p| outline.map(|o| o.symbols[p].kind))
            .is_some_and(|k| matches!(k, SymbolKind::Interface | SymbolKind::Trait));
    matches!(s.kind, SymbolKind::Function | SymbolKind::Method)
        && (line_text(lines, s.end_line).trim_end().ends_with(';') || in_interface)
}

/// The lines shown for a region from `start` to `end` with the subject at
/// `list`: all of them when few (then `true`), else its first line and up
/// to six lines with the subject.
fn region_body(lines: &[&[u8]], start: u32, end: u32, list: &[&Occurrence]) -> (Vec<String>, bool) {
    let line_count = end + 1 - start;
    if line_count <= FULL_REGION_LINES {
        return ((start..=end).map(|n| text_of(lines, n)).collect(), true);
    }
    let mut body = vec![text_of(lines, start)];
    let mut shown = 0;
    let mut previous = start;
    for o in list {
        if o.line == previous {
            continue;
        }
        if shown == 6 {
            let more = list.iter().filter(|x| x.line > previous).count();
            let noun = if more == 1 { "line" } else { "lines" };
            body.push(format!("... {more} more {noun} with the subject"));
            break;
        }
        if o.line > previous + 1 {
            body.push("...".to_string());
        }
        body.push(text_of(lines, o.line));
        previous = o.line;
        shown += 1;
    }
    (body, false)
}

/// Validate and run in one call.
pub fn run(
    cwd: &Path,
    path: Option<&str>,
    opts: TraceOptions,
    cancel: &CancelToken,
) -> Result<TraceResult, DiscoverError> {
    Ok(TracePlan::new(cwd, path, opts)?.run(cancel))
}

/// The plan as `--debug-plan` shows it (`context_debug.rs`).
pub(crate) struct PlanParts<'a> {
    pub query: &'a TraceQuery,
    pub subject_pattern: &'a str,
    pub relation_tokens: &'a [String],
    pub support: &'a [Vec<String>],
    pub wanted: Option<RegionKind>,
    pub max_files: usize,
    pub max_regions: usize,
    pub shortlist: usize,
    pub max_occurrences: usize,
}

impl TracePlan {
    /// The directory searched; shown paths are relative to it.
    pub fn root(&self) -> &Path {
        &self.scope.root
    }

    pub(crate) fn parts(&self) -> PlanParts<'_> {
        PlanParts {
            query: &self.query,
            subject_pattern: self.subject.pattern(),
            relation_tokens: &self.relation_tokens,
            support: &self.support,
            wanted: self.known().and_then(wanted_kind),
            max_files: self.opts.max_files,
            max_regions: self.opts.max_regions,
            shortlist: SHORTLIST,
            max_occurrences: MAX_OCCURRENCES,
        }
    }
}
