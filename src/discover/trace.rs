//! `trace`: one pass over the files finds every occurrence of the subject
//! (all probes share it: no walk per relation); a bounded heap keeps the
//! files whose lines look most like the relation (`trace_file`); only those
//! are outlined and searched for call sites, which turn occurrences into
//! regions of a kind (`regions`). This file plans the call, ranks the
//! traced files (those answering the relation first, code before tests)
//! and keeps the best regions over all of them.

pub use super::answer::{TraceResult, TracedFile};
use super::dsl::TraceQuery;
use super::files::{look_through, read_text, shown_path, Look, Scope, LOOK_WINDOW};
use super::go_implementers;
use super::pass::{self, map_parallel, Tally, TopK};
use super::question::Question;
use super::regions::{wanted_kind, RegionKind};
use super::role::Role;
use super::trace_file::{lexical_score, traced, MAX_OCCURRENCES};
use super::DiscoverError;
use crate::index::IndexMode;
use crate::search::CancelToken;
use crate::search::{SourceFile, WalkOptions};
use crate::structure::Language;
use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Files parsed for structure whatever `max_files` is, the best by their
/// text first; the best answer is always one of them, so it never depends
/// on how many files are shown (a shortlist sized by `max_files` dropped
/// `src/router.ts` for a benchmark file unless 12 were asked for).
const SHORTLIST: usize = 20;

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
    question: Question,
    scope: Scope,
}

impl TracePlan {
    pub fn new(
        cwd: &Path,
        path: Option<&str>,
        mut opts: TraceOptions,
    ) -> Result<Self, DiscoverError> {
        opts.max_files = opts.max_files.max(1);
        let question = Question::new(TraceQuery::parse(&opts.query)?)?;
        let scope = Scope::new(cwd, path, opts.walk.clone(), opts.index)?;
        Ok(TracePlan {
            opts,
            question,
            scope,
        })
    }

    pub fn run(&self, cancel: &CancelToken) -> TraceResult {
        let _running = super::warm::calling();
        run_plan(self, cancel)
    }
}

/// What the pass found: the files whose lines look most like the
/// relation, the files read, and those that mention the subject.
struct Found {
    best: TopK<Candidate>,
    scanned: u64,
    matched: u64,
}

impl Found {
    fn new(keep: usize) -> Found {
        Found {
            best: TopK::new(keep),
            scanned: 0,
            matched: 0,
        }
    }
}

impl Tally for Found {
    fn merge(&mut self, other: Found) {
        self.scanned += other.scanned;
        self.matched += other.matched;
        self.best.absorb(other.best);
    }
}

/// One thread's visitor: it reads each file the index allows, finds the
/// subject, and keeps the file by how much its lines look like the
/// relation.
fn visitor<'a>(
    plan: &'a TracePlan,
    ignored: bool,
) -> impl FnMut(&mut Found, &SourceFile<'_>) + Send + 'a {
    let root = &plan.scope.root;
    let question = &plan.question;
    // Without a kind or path filter no file's relative path is needed
    // before it is known to mention the subject.
    let filtered = question.query.kind.is_some() || question.query.path.is_some();
    let mut buf = Vec::new();
    move |found: &mut Found, v: &SourceFile<'_>| {
        let path = v.path;
        if filtered && !question.in_scope(&shown_path(root, path).text) {
            return;
        }
        found.scanned += 1;
        // Counted as the walk counts it, but not read: the index
        // says the subject is not in it.
        if !v.candidate {
            return;
        }
        // A large file is looked through first: most hold no occurrence.
        let subject = &question.subject;
        let look = match subject.longest_match() {
            Some(longest) => look_through(
                path,
                &mut buf,
                LOOK_WINDOW,
                longest.saturating_sub(1),
                |b| subject.may_occur(b),
            ),
            None => Look::Present,
        };
        match look {
            Look::Skip | Look::Absent => return,
            Look::Read => {}
            Look::Present => {
                if read_text(path, &mut buf).is_none() {
                    return;
                }
            }
        }
        let occ = question.subject.find(&buf, MAX_OCCURRENCES);
        if occ.is_empty() {
            return;
        }
        found.matched += 1;
        let rel = shown_path(root, path).text;
        found.best.push(Candidate {
            score: lexical_score(question, &rel, &buf, &occ),
            path: path.to_path_buf(),
            ignored,
        });
    }
}

fn run_plan(plan: &TracePlan, cancel: &CancelToken) -> TraceResult {
    let started = Instant::now();
    let root = &plan.scope.root;
    let keep = plan.opts.max_files.max(SHORTLIST);
    let (source, index) = plan.scope.source(Some(plan.question.subject.narrowing()));
    let visited = pass::visit(
        &plan.scope,
        &source,
        cancel,
        Found::new(keep),
        |_| true,
        || Found::new(keep),
        |ignored| visitor(plan, ignored),
    );
    let found = visited.tally;
    let candidates = found.best.into_sorted();
    let wanted = plan.question.known().and_then(wanted_kind);
    // Each is a parse or two (5 to 20 ms for a large C file): once the
    // index has narrowed the pass over the files, most of a trace. The
    // project's files come first (`Candidate`'s order); the ignored ones
    // are parsed only when they could be shown (see `ignored_could_show`).
    let project = candidates.iter().take_while(|c| !c.ignored).count();
    let trace_from = |first: usize, some: &[Candidate]| {
        map_parallel(some, || {
            |i, c: &Candidate| {
                Some((
                    traced(&plan.question, root, &c.path, c.ignored, cancel)?,
                    first + i < SHORTLIST,
                ))
            }
        })
    };
    let mut files: Vec<(TracedFile, bool)> = trace_from(0, &candidates[..project]);
    if ignored_could_show(&files, plan.opts.max_files, wanted) {
        files.extend(trace_from(project, &candidates[project..]));
    }
    let mut implemented = wanted == Some(RegionKind::Implementation)
        && files.iter().any(|(f, _)| states_implementation(f));
    if wanted == Some(RegionKind::Implementation) && !implemented {
        add_go_implementers(plan, &mut files, cancel);
        implemented = files.iter().any(|(f, _)| states_implementation(f));
    }
    // The shortlist first: the files beyond it (there when more than
    // SHORTLIST are asked for) only follow, so the best stays the same.
    files.sort_by(|(a, a_short), (b, b_short)| {
        b_short
            .cmp(a_short)
            .then((!b.ignored).cmp(&!a.ignored))
            .then(answers(b, wanted, implemented).cmp(&answers(a, wanted, implemented)))
            .then(tier(a).total_cmp(&tier(b)))
            .then(b.score.total_cmp(&a.score))
            .then(a.path.text.cmp(&b.path.text))
    });
    let mut files: Vec<TracedFile> = files.into_iter().map(|(f, _)| f).collect();
    files.truncate(plan.opts.max_files);
    let structure_found = files.iter().any(|f| !f.structure.is_empty());
    keep_best_regions(&mut files, plan.opts.max_regions);
    let mut result = TraceResult {
        query: Some(plan.question.query.clone()),
        files,
        files_matched: found.matched,
        files_scanned: found.scanned,
        structure_found,
        errors: visited.errors,
        index,
        ..TraceResult::default()
    };
    (result.cancelled, result.timed_out, result.elapsed_ms) = pass::ended(cancel, started);
    result.text = super::trace_render::render(&result);
    result
}

/// Whether an ignored file could be among the files shown: they rank after
/// every shortlisted project file that traced, so not once `max_files` of
/// those did. Parsing them anyway cost a first trace in this repository
/// 800 ms: a 2.6 MB bundle under `node_modules` mentioning the subject was
/// outlined and never shown. An implementation question reads them all
/// (which files state an implementation decides the order).
fn ignored_could_show(
    project: &[(TracedFile, bool)],
    max_files: usize,
    wanted: Option<RegionKind>,
) -> bool {
    wanted == Some(RegionKind::Implementation)
        || project.iter().filter(|(_, short)| *short).count() < max_files
}

/// Whether a file's best region is what the relation asks for (2): such
/// files come first, so a test full of calls never hides the one
/// production caller, and "best answer likely in" names a file that
/// answers. Where none does, a file that only defines the subject comes
/// after those that use it (0): "who calls it" is never answered by its
/// definition (issue 45: axios's `dispatchRequest`). The implementation of
/// a function is its definition; of an interface, trait or class, the
/// types that state they implement it (`implemented`: some production file
/// has one), which then come before its definition (issue 45: junit's
/// `ParentRunner.java` above `BlockJUnit4ClassRunner`).
fn answers(f: &TracedFile, wanted: Option<RegionKind>, implemented: bool) -> u8 {
    let first = f.regions.first().map(|r| r.kind);
    match wanted {
        None => 2,
        Some(k) if first == Some(k) => 2,
        Some(RegionKind::Implementation)
            if first == Some(RegionKind::Definition) && !implemented =>
        {
            2
        }
        Some(RegionKind::Callsite)
            if (f.regions.iter()).all(|r| r.kind == RegionKind::Definition) =>
        {
            0
        }
        Some(_) => 1,
    }
}

/// The Go types that implement the subject by their methods, when it is a
/// Go interface that a listed file defines (`go_implementers`): each joins
/// the shortlist, or leads the regions of a file already in it (the
/// interface and its implementation in one file).
fn add_go_implementers(
    plan: &TracePlan,
    files: &mut Vec<(TracedFile, bool)>,
    cancel: &CancelToken,
) {
    let root = &plan.scope.root;
    let subject = plan.question.query.subject.as_str();
    let methods = (files.iter())
        .filter(|(f, _)| f.language == Some(Language::Go))
        .filter(|(f, _)| (f.regions.iter()).any(|r| r.kind == RegionKind::Definition))
        .find_map(|(f, _)| go_implementers::interface_methods(&root.join(&f.path.text), subject));
    let Some(methods) = methods else {
        return;
    };
    for found in go_implementers::implementers(&plan.scope, root, &methods, subject, cancel) {
        match files
            .iter_mut()
            .find(|(f, _)| f.path.text == found.path.text)
        {
            Some((f, _)) => {
                f.score = f.score.max(found.score);
                f.why.extend(found.why);
                f.regions.splice(0..0, found.regions);
            }
            None => files.push((found, true)),
        }
    }
}

/// Whether a production file's best region is a type that states it
/// implements the subject.
fn states_implementation(f: &TracedFile) -> bool {
    f.role == Role::Code
        && !f.ignored
        && f.regions.first().is_some_and(|r| {
            r.kind == RegionKind::Implementation && r.states_implementation && !r.in_test
        })
}

/// Among files that answer: the project's code first, then type
/// declarations (`.d.ts`: they restate what a sibling file implements),
/// then tests, docs, vendored and generated files (ranked down, not out).
/// A code file whose best region is a test (`#[test]` in `src/diff.rs`)
/// ranks as a test file.
fn tier(f: &TracedFile) -> f64 {
    let declarations = [".d.ts", ".d.mts", ".d.cts"]
        .iter()
        .any(|ext| f.path.text.ends_with(ext));
    let test = f.regions.first().is_some_and(|r| r.in_test);
    let role = match test {
        true => f.role.penalty().max(Role::Test.penalty()),
        false => f.role.penalty(),
    };
    role + if declarations { 10.0 } else { 0.0 }
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
            query: &self.question.query,
            subject_pattern: self.question.subject.pattern(),
            relation_tokens: &self.question.relation_tokens,
            support: &self.question.support,
            wanted: self.question.known().and_then(wanted_kind),
            max_files: self.opts.max_files,
            max_regions: self.opts.max_regions,
            shortlist: SHORTLIST,
            max_occurrences: MAX_OCCURRENCES,
        }
    }
}
