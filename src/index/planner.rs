//! The regex → trigram query planner: what a file must contain for the
//! pattern to have any chance of matching in it.
//!
//! The pattern is parsed the way the searcher parses it (`regex-syntax`, the
//! parser under `grep-regex`), and each node of its HIR is summarised, after
//! Russ Cox's "Regular Expression Matching with a Trigram Index", as either
//! the small set of strings it can match exactly, or a necessary condition (an
//! AND/OR of trigrams). The summary is only ever *weaker* than the regex: any
//! node it cannot describe becomes "anything" ([`Query::All`]), so a file the
//! query rules out is one the regex cannot match. The index prunes; the
//! searcher decides.
//!
//! Trigrams are ASCII-lowercased on both sides (index and query), so one
//! index serves case-sensitive and case-insensitive searches. Case folding
//! beyond ASCII comes from the parser itself: under `(?i)` it turns `s` into
//! the class `[Ssſ]`, whose members become alternative strings here.

use regex_syntax::hir::{Class, Hir, HirKind};
use std::collections::BTreeSet;

/// A necessary condition on a file's (lowercased) trigrams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// No condition: every file is a candidate.
    All,
    Tri(u32),
    And(Vec<Query>),
    /// `Or(vec![])` is "no file": a pattern that matches nothing.
    Or(Vec<Query>),
}

/// Most strings an exact set may hold before it is turned into a query.
const MAX_EXACT: usize = 64;
/// Most members a class may have to be expanded into alternatives.
const MAX_CLASS: usize = 8;

/// ASCII lowercase of one byte: the index's folding.
pub fn fold(b: u8) -> u8 {
    b.to_ascii_lowercase()
}

/// The key of the trigram starting at `s[0]` (bytes already folded or not).
pub fn trigram(a: u8, b: u8, c: u8) -> u32 {
    ((fold(a) as u32) << 16) | ((fold(b) as u32) << 8) | fold(c) as u32
}

/// Plans `pattern` as the searcher will run it. A pattern that does not parse
/// here (it parsed for the searcher, or we would not be asked) is planned as
/// [`Query::All`]: the scan decides.
pub fn plan(pattern: &str, literal: bool, ignore_case: bool) -> Query {
    let escaped;
    let source = if literal {
        escaped = regex_syntax::escape(pattern);
        &escaped
    } else {
        pattern
    };
    let parsed = crate::search::pattern_parser(ignore_case).parse(source);
    match parsed {
        Ok(hir) => simplify(info(&hir).into_query()),
        Err(_) => Query::All,
    }
}

/// What one HIR node is known to match.
struct Info {
    /// The folded strings it matches exactly, when few; `None` when unknown.
    exact: Option<BTreeSet<Vec<u8>>>,
    /// A necessary condition, used when `exact` is `None`.
    query: Query,
}

impl Info {
    fn exact(set: BTreeSet<Vec<u8>>) -> Info {
        Info {
            exact: Some(set),
            query: Query::All,
        }
    }
    fn empty_string() -> Info {
        Info::exact(BTreeSet::from([Vec::new()]))
    }
    fn anything() -> Info {
        Info {
            exact: None,
            query: Query::All,
        }
    }
    fn into_query(self) -> Query {
        match self.exact {
            Some(set) => set_query(&set),
            None => self.query,
        }
    }
}

/// Every string of `set` contains all its trigrams: the OR over the strings
/// of the AND of each one's trigrams. A string shorter than three bytes has
/// none, so it makes the whole set unnarrowable.
fn set_query(set: &BTreeSet<Vec<u8>>) -> Query {
    let mut any = Vec::with_capacity(set.len());
    for s in set {
        if s.len() < 3 {
            return Query::All;
        }
        let all: BTreeSet<u32> = s.windows(3).map(|w| trigram(w[0], w[1], w[2])).collect();
        any.push(Query::And(all.into_iter().map(Query::Tri).collect()));
    }
    Query::Or(any)
}

fn and(a: Query, b: Query) -> Query {
    match (a, b) {
        (Query::All, q) | (q, Query::All) => q,
        (Query::And(mut x), Query::And(y)) => {
            x.extend(y);
            Query::And(x)
        }
        (Query::And(mut x), q) | (q, Query::And(mut x)) => {
            x.push(q);
            Query::And(x)
        }
        (a, b) => Query::And(vec![a, b]),
    }
}

fn info(hir: &Hir) -> Info {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::empty_string(),
        HirKind::Literal(lit) => {
            Info::exact(BTreeSet::from([lit.0.iter().copied().map(fold).collect()]))
        }
        HirKind::Class(class) => class_info(class),
        HirKind::Capture(c) => info(&c.sub),
        HirKind::Repetition(r) => {
            let sub = info(&r.sub);
            match (r.min, r.max) {
                (0, Some(1)) => match sub.exact {
                    Some(mut set) if set.len() < MAX_EXACT => {
                        set.insert(Vec::new());
                        Info::exact(set)
                    }
                    _ => Info::anything(),
                },
                (0, _) => Info::anything(),
                // At least one copy: what one copy needs, the repetition needs.
                _ => Info {
                    exact: None,
                    query: sub.into_query(),
                },
            }
        }
        HirKind::Concat(subs) => concat_info(subs),
        HirKind::Alternation(subs) => {
            let infos: Vec<Info> = subs.iter().map(info).collect();
            let mut union = BTreeSet::new();
            let mut all_exact = true;
            for i in &infos {
                match &i.exact {
                    Some(s) => union.extend(s.iter().cloned()),
                    None => all_exact = false,
                }
            }
            if all_exact && union.len() <= MAX_EXACT {
                return Info::exact(union);
            }
            let mut any = Vec::with_capacity(infos.len());
            for i in infos {
                match i.into_query() {
                    Query::All => return Info::anything(),
                    q => any.push(q),
                }
            }
            Info {
                exact: None,
                query: Query::Or(any),
            }
        }
    }
}

fn class_info(class: &Class) -> Info {
    let mut set = BTreeSet::new();
    match class {
        Class::Unicode(c) => {
            let mut n = 0usize;
            for r in c.ranges() {
                n += (r.end() as u32 - r.start() as u32) as usize + 1;
                if n > MAX_CLASS {
                    return Info::anything();
                }
                for cp in r.start() as u32..=r.end() as u32 {
                    if let Some(ch) = char::from_u32(cp) {
                        let mut buf = [0u8; 4];
                        let s = ch.encode_utf8(&mut buf).as_bytes();
                        set.insert(s.iter().copied().map(fold).collect());
                    }
                }
            }
        }
        Class::Bytes(c) => {
            let mut n = 0usize;
            for r in c.ranges() {
                n += (r.end() - r.start()) as usize + 1;
                if n > MAX_CLASS {
                    return Info::anything();
                }
                for b in r.start()..=r.end() {
                    set.insert(vec![fold(b)]);
                }
            }
        }
    }
    Info::exact(set)
}

/// Concatenation: exact sets multiply while they stay small; when they would
/// not, what is known so far is turned into a query and ANDed with the rest
/// (trigrams spanning that boundary are lost, which only weakens the query).
fn concat_info(subs: &[Hir]) -> Info {
    let mut acc: BTreeSet<Vec<u8>> = BTreeSet::from([Vec::new()]);
    let mut query = Query::All;
    let mut flushed = false;
    for sub in subs {
        let i = info(sub);
        match i.exact {
            Some(s) if acc.len() * s.len() <= MAX_EXACT => {
                let mut next = BTreeSet::new();
                for a in &acc {
                    for b in &s {
                        let mut x = a.clone();
                        x.extend_from_slice(b);
                        next.insert(x);
                    }
                }
                acc = next;
            }
            Some(s) => {
                query = and(query, set_query(&acc));
                flushed = true;
                acc = s;
            }
            None => {
                query = and(and(query, set_query(&acc)), i.query);
                flushed = true;
                acc = BTreeSet::from([Vec::new()]);
            }
        }
    }
    if !flushed {
        return Info::exact(acc);
    }
    Info {
        exact: None,
        query: and(query, set_query(&acc)),
    }
}

/// Flattens nested ANDs/ORs, drops duplicate terms, and folds `All`.
pub fn simplify(q: Query) -> Query {
    match q {
        Query::And(xs) => {
            let mut out: Vec<Query> = Vec::new();
            for x in xs.into_iter().map(simplify) {
                match x {
                    Query::All => {}
                    Query::And(ys) => out.extend(ys),
                    x => out.push(x),
                }
            }
            out.dedup();
            match out.len() {
                0 => Query::All,
                1 => out.pop().unwrap_or(Query::All),
                _ => Query::And(out),
            }
        }
        Query::Or(xs) => {
            let mut out: Vec<Query> = Vec::new();
            for x in xs.into_iter().map(simplify) {
                match x {
                    Query::All => return Query::All,
                    Query::Or(ys) => out.extend(ys),
                    x => out.push(x),
                }
            }
            if out.len() == 1 {
                return out.pop().unwrap_or(Query::All);
            }
            factor_common_terms(out)
        }
        q => q,
    }
}

/// `(C ∧ R1) ∨ (C ∧ R2)` as `C ∧ (R1 ∨ R2)`: the same files, but the
/// terms every branch needs are evaluated once, and a search can stop on
/// them before the OR. Without it a case-insensitive literal holding `s`
/// or `k` (whose folds `ſ` and the Kelvin sign make 2ⁿ branches of the
/// whole word) cost every branch's every trigram against the postings'
/// decode budget, and the index allowed every file.
fn factor_common_terms(branches: Vec<Query>) -> Query {
    let terms = |q: &Query| -> Vec<Query> {
        match q {
            Query::And(ys) => ys.clone(),
            x => vec![x.clone()],
        }
    };
    let Some(first) = branches.first() else {
        return Query::Or(branches);
    };
    let mut common = terms(first);
    for b in &branches[1..] {
        let t = terms(b);
        common.retain(|c| t.contains(c));
    }
    if common.is_empty() {
        return Query::Or(branches);
    }
    let mut rest = Vec::with_capacity(branches.len());
    for b in &branches {
        let left: Vec<Query> = terms(b)
            .into_iter()
            .filter(|t| !common.contains(t))
            .collect();
        if left.is_empty() {
            // This branch needs only the common terms: so does the OR.
            return simplify(Query::And(common));
        }
        rest.push(Query::And(left));
    }
    common.push(Query::Or(rest));
    simplify(Query::And(common))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tri(s: &str) -> Query {
        let b = s.as_bytes();
        Query::Tri(trigram(b[0], b[1], b[2]))
    }

    #[test]
    fn a_literal_needs_each_of_its_trigrams() {
        assert_eq!(
            plan("sched", false, false),
            Query::And(vec![tri("che"), tri("hed"), tri("sch")])
        );
    }

    #[test]
    fn patterns_without_a_three_byte_literal_cannot_be_narrowed() {
        for p in ["e", "ab", ".", "a.*", "\\w+", "(ab)*c", "x?yz"] {
            assert_eq!(plan(p, false, false), Query::All, "{p}");
        }
    }

    #[test]
    fn alternation_is_an_or_and_a_regex_metachar_in_literal_mode_is_text() {
        assert_eq!(
            plan("foo|bar", false, false),
            Query::Or(vec![tri("bar"), tri("foo")])
        );
        assert_eq!(plan("a.b", true, false), tri("a.b"));
        assert_eq!(plan("foo|e", false, false), Query::All);
    }

    #[test]
    fn case_insensitive_keeps_unicode_folds_as_alternatives() {
        // (?i)s also matches U+017F (long s), whose UTF-8 is two bytes.
        let q = plan("sab", false, true);
        let Query::Or(branches) = q else {
            panic!("{q:?}")
        };
        assert_eq!(branches.len(), 2, "s and ſ");
        assert!(branches.contains(&tri("sab")));
    }

    #[test]
    fn the_trigrams_every_case_fold_needs_are_taken_out_of_the_or() {
        // Three `s` and a `k` fold four ways each... 16 branches of the whole word before.
        let q = plan("kernel_established", false, true);
        let Query::And(terms) = &q else {
            panic!("{q:?}")
        };
        for t in [
            "ern", "rne", "nel", "el_", "l_e", "tab", "abl", "bli", "hed",
        ] {
            assert!(
                terms.contains(&tri(t)),
                "{t} is needed by every fold: {q:?}"
            );
        }
        assert!(
            terms.iter().any(|t| matches!(t, Query::Or(_))),
            "the folds stay alternatives: {q:?}"
        );
    }

    /// Whether a file holding exactly `have` trigrams may match `q`.
    fn admits(q: &Query, have: &[u32]) -> bool {
        match q {
            Query::All => true,
            Query::Tri(t) => have.contains(t),
            Query::And(xs) => xs.iter().all(|x| admits(x, have)),
            Query::Or(xs) => xs.iter().any(|x| admits(x, have)),
        }
    }

    fn random_query(depth: u32) -> impl proptest::strategy::Strategy<Value = Query> {
        use proptest::prelude::*;
        let leaf = prop_oneof![Just(Query::All), (0u32..6).prop_map(Query::Tri)];
        leaf.prop_recursive(depth, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Query::And),
                proptest::collection::vec(inner, 0..4).prop_map(Query::Or),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn simplifying_never_changes_which_files_a_query_admits(
            q in random_query(3),
            have in proptest::collection::vec(0u32..6, 0..6),
        ) {
            proptest::prop_assert_eq!(admits(&simplify(q.clone()), &have), admits(&q, &have));
        }
    }

    #[test]
    fn concat_keeps_the_literal_parts_around_unknown_ones() {
        let q = plan("struct [a-z_]+_operations \\{", false, false);
        let Query::And(terms) = q else {
            panic!("{q:?}")
        };
        assert!(terms.contains(&tri("str")));
        assert!(terms.contains(&tri("ope")));
        assert!(terms.contains(&tri("s {")));
    }

    #[test]
    fn an_empty_class_matches_no_file() {
        assert_eq!(
            plan("[^\\x00-\\x{10FFFF}]abc", false, false),
            Query::Or(vec![])
        );
    }
}
