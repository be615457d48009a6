//! Region classification for `trace`: a file's occurrences of the subject
//! grouped by the symbol (or run of file-scope lines) holding them, and
//! each group judged from what its lines show (defines, implements, calls,
//! renders, assigns the subject, named for the relation) into a kind
//! (definition, callsite, render-site, handler, assignment, ...), a score
//! with its reasons, and the lines shown.

use super::dsl::Relation;
use super::question::Question;
use super::region_facts::{
    defines_subject, go_asserted_symbol, implements, in_test, is_bodiless, is_call, line_text,
    symbol_label, Implements,
};
use super::relate::{c_variable_definition, shape, spelt_as_subject, Occurrence, Shape};
use super::role::Role;
use super::tokens;
use crate::structure::calls::UseKind;
use crate::structure::{self, Outline, Symbol, SymbolKind};

/// A region up to this many lines is shown whole.
pub const FULL_REGION_LINES: u32 = 20;
/// Shown lines are cut to this many characters.
const MAX_LINE_CHARS: usize = 240;

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
    /// Inside a test (`#[test]`, `mod tests`, `@Test`, `def test_*`): ranked
    /// as a test file is, whatever the file's own role.
    pub in_test: bool,
    /// Its header (or a Go assertion) states that it implements the subject:
    /// `implements Foo`, `impl Foo for`, `var _ Foo = (*bar)(nil)`.
    pub states_implementation: bool,
}

impl Region {
    /// Lines from `start_line` to `end_line`, both counted.
    pub fn line_count(&self) -> u32 {
        self.end_line + 1 - self.start_line
    }
}

/// The region kind a relation asks for, where it names one.
pub(crate) fn wanted_kind(relation: Relation) -> Option<RegionKind> {
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

/// Where a group of occurrences lives: a symbol (by index) or a run of
/// file-scope lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Home {
    Symbol(usize),
    FileScope(u32),
}

pub(crate) fn build_regions(
    question: &Question,
    role: Role,
    outline: Option<&Outline>,
    lines: &[&str],
    occ: &[Occurrence],
    uses: &[structure::calls::NameUse],
) -> Vec<Region> {
    let named_subject = |s: &Symbol| tokens::names_symbol_as(&s.name, &question.query.subject);
    // Group occurrences by home, in order of first appearance.
    let mut homes: Vec<(Home, Vec<&Occurrence>)> = Vec::new();
    for o in occ {
        // `var _ Foo = (*bar)(nil)` states that type `bar` implements
        // `Foo`: the occurrence belongs to `bar`'s region.
        let asserted = outline.and_then(|ol| go_asserted_symbol(ol, lines, o));
        let enclosing = outline.and_then(|ol| ol.enclosing(o.line).map(|i| (ol, i)));
        let home = match (asserted, enclosing) {
            (Some(t), _) => Home::Symbol(t),
            (None, Some((ol, mut i))) => {
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
            (None, None) => Home::FileScope(o.line),
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
        .map(|(home, list)| region_for(question, role, outline, lines, home, &list, uses))
        .collect()
}

fn text_of(lines: &[&str], n: u32) -> String {
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
    /// A type-like symbol (class, impl, trait, ...) that implements the
    /// subject, and how we know (see [`Implements`]).
    implements: Option<Implements>,
    /// Inside a test function or module (see [`in_test`]).
    in_test: bool,
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
    question: &Question,
    role: Role,
    outline: Option<&Outline>,
    lines: &[&str],
    home: Home,
    list: &[&Occurrence],
    uses: &[structure::calls::NameUse],
) -> Region {
    let s = signals(question, role, outline, lines, home, list, uses);
    let relation = question.known();
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
    bump_relation_words(&mut acc, question, &s);
    bump_other_signals(&mut acc, question, &s);
    if s.in_test {
        acc.score -= Role::Test.penalty();
        acc.why.push("inside a test: ranked down".into());
    }
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
        in_test: s.in_test,
        states_implementation: s.implements == Some(Implements::Declared),
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
    if let Some(how) = s.implements {
        acc.bump(RegionKind::Implementation, 40.0, how.why(&s.label));
    }
}

fn bump_implementation(acc: &mut Verdict, s: &Signals) {
    // A type whose header names the subject (`implements Foo`, `impl Foo
    // for`, a struct of functions) implements it; one merely named like it
    // (`EventCountFoo extends AbstractFoo`) may do so only through another,
    // which then comes first (issue 45: commons-lang's CircuitBreaker).
    match s.implements {
        Some(how @ Implements::Declared) => {
            acc.bump(RegionKind::Implementation, PRIMARY, how.why(&s.label))
        }
        Some(how @ Implements::Named) => acc.bump(
            RegionKind::Implementation,
            PRIMARY - 10.0,
            how.why(&s.label),
        ),
        None => {}
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
fn bump_relation_words(acc: &mut Verdict, question: &Question, s: &Signals) {
    let relation = question.known();
    let name = question.query.relation.name();
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
    } else if !question.relation_tokens.is_empty()
        && (question.relation_tokens.iter()).any(|w| s.body_tokens.contains(w))
    {
        acc.score += 25.0;
        acc.why.push(format!("{name} words occur here"));
    }
}

/// What counts whatever the relation asked: a definition, its exact name
/// and its body, calls and assignments the relation did not score, and
/// the support terms.
fn bump_other_signals(acc: &mut Verdict, question: &Question, s: &Signals) {
    let relation = question.known();
    if s.defines && acc.kind != RegionKind::Definition {
        acc.bump(RegionKind::Definition, 20.0, "defines the subject".into());
    }
    // `_printk` and `printk` are one identifier to the token layer, but a
    // definition spelt exactly as asked is the one the user means.
    let exact = s
        .symbol
        .is_some_and(|sym| tokens::own_name(&sym.name) == question.query.subject);
    // Not where implementations are asked for: the subject's own
    // definition must not climb above them by its name.
    if s.defines && exact && relation != Some(Relation::Implementation) {
        acc.score += 50.0;
        acc.why
            .push(format!("named exactly {}", question.query.subject));
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
    for term in &question.support {
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
    question: &Question,
    role: Role,
    outline: Option<&'a Outline>,
    lines: &[&str],
    home: Home,
    list: &[&Occurrence],
    uses: &[structure::calls::NameUse],
) -> Signals<'a> {
    let subject = &question.subject.tokens;
    let symbol = match home {
        Home::Symbol(i) => outline.map(|o| &o.symbols[i]),
        Home::FileScope(_) => None,
    };
    let (start, end, label) = match symbol {
        Some(s) => (s.start_line, s.end_line, symbol_label(outline, s)),
        None => {
            // `struct Curl_cftype Curl_cft_ssl = {`: a C variable defined here.
            let variable = list.iter().find_map(|o| {
                let text = line_text(lines, o.line);
                c_variable_definition(text, o).then(|| text[o.start..o.end].to_string())
            });
            let label =
                variable.map_or_else(|| "<file scope>".to_string(), |v| format!("variable {v}"));
            (list[0].line, list[list.len() - 1].line, label)
        }
    };
    let line_text = |n: u32| line_text(lines, n);
    let raw = question.query.subject.as_str();
    let is_call = |o: &Occurrence| is_call(raw, symbol, uses, line_text(o.line), o);
    let is_render = |o: &Occurrence| {
        uses.iter().any(|u| {
            u.line == o.line && u.kind == UseKind::Render && tokens::same_name(&u.name, subject)
        })
    };
    let assigns = list
        .iter()
        .filter(|o| {
            let text = line_text(o.line);
            shape(text, o) == Shape::Assignment && spelt_as_subject(raw, text, o)
        })
        .count();
    let name_tokens = symbol.map(|s| tokens::split(&s.name)).unwrap_or_default();
    let named_for_relation = !question.relation_tokens.is_empty()
        && question
            .relation_tokens
            .iter()
            .any(|w| name_tokens.contains(w));
    let body_tokens: Vec<String> = (start..=end.min(start + 400))
        .flat_map(|n| tokens::split(line_text(n)))
        .collect();
    Signals {
        symbol,
        defines: defines_subject(raw, role, outline, symbol, lines, list),
        implements: implements(question, symbol, lines, list),
        in_test: symbol.is_some_and(|s| in_test(outline, s, lines)),
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

/// The lines shown for a region from `start` to `end` with the subject at
/// `list`: all of them when few (then `true`), else its first line and up
/// to six lines with the subject.
pub(super) fn region_body(
    lines: &[&str],
    start: u32,
    end: u32,
    list: &[&Occurrence],
) -> (Vec<String>, bool) {
    let line_count = end + 1 - start;
    if line_count <= FULL_REGION_LINES {
        let mut body: Vec<String> = (start..=end).map(|n| text_of(lines, n)).collect();
        // A Go assertion naming the type is homed at the type (see
        // `build_regions`): its line is the evidence, so it is shown too.
        let mut outside: Vec<u32> = (list.iter().map(|o| o.line))
            .filter(|n| !(start..=end).contains(n))
            .collect();
        outside.dedup();
        for n in outside {
            body.push("...".to_string());
            body.push(text_of(lines, n));
        }
        return (body, true);
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
