//! `trace`'s work on one file: during the pass, how much its lines look
//! like the relation from text alone; then, for the few kept, its regions
//! (classified in `regions`), its score and reasons, and the symbols
//! bearing on the subject.

use super::answer::TracedFile;
use super::bearing::{bearing_symbols, STRUCTURE_ITEMS};
use super::dsl::Relation;
use super::files::{read_text, shown_path};
use super::question::Question;
use super::regions::{build_regions, RegionKind};
use super::relate::{shape, spelt_as_subject, Occurrence, Shape};
use super::role::Role;
use super::tokens;
use crate::search::CancelToken;
use crate::structure::{Language, Symbol};
use std::path::Path;

/// Occurrences kept per file (enough to rank it and build its regions).
pub(crate) const MAX_OCCURRENCES: usize = 200;

#[cfg(test)]
fn lines_of(buf: &[u8]) -> Vec<&[u8]> {
    buf.split(|b| *b == b'\n').collect()
}

/// Bytes whose line ends [`LineAt`] counts at once.
const LINE_BLOCK: usize = 256;

/// Line `n` (1-based, as `lines_of(buf)[n - 1]`; empty past the end) of a
/// text, walked on from the line asked before: the occurrences come in
/// line order. Splitting every candidate's whole text into lines was a
/// fifth of trace `_printk`'s time on the Linux tree (thousands of
/// candidates, a handful of occurrences each).
struct LineAt<'a> {
    buf: &'a [u8],
    line: u32,
    start: usize,
}

impl<'a> LineAt<'a> {
    fn new(buf: &'a [u8]) -> Self {
        LineAt {
            buf,
            line: 1,
            start: 0,
        }
    }

    fn get(&mut self, n: u32) -> &'a [u8] {
        if n == 0 {
            return &[];
        }
        if n < self.line {
            (self.line, self.start) = (1, 0);
        }
        while self.line < n {
            // Whole blocks holding fewer line ends than are left to pass
            // are counted, not searched line by line (lines are short).
            let rest = &self.buf[self.start..];
            if let Some(block) = rest.get(..LINE_BLOCK) {
                let ends = block.iter().filter(|&&b| b == b'\n').count() as u32;
                if ends < n - self.line {
                    (self.line, self.start) = (self.line + ends, self.start + LINE_BLOCK);
                    continue;
                }
            }
            let Some(i) = memchr::memchr(b'\n', rest) else {
                // Past the end. A skipped block may have left `start`
                // inside the last line: asked for that line next, the walk
                // would not run and would answer from there (the
                // property test below found it), so it starts over.
                (self.line, self.start) = (1, 0);
                return &[];
            };
            (self.line, self.start) = (self.line + 1, self.start + i + 1);
        }
        let rest = &self.buf[self.start..];
        &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())]
    }
}

/// How much one file's lines look like the relation, from text alone.
pub(crate) fn lexical_score(question: &Question, rel: &str, buf: &[u8], occ: &[Occurrence]) -> f64 {
    let mut lines = LineAt::new(buf);
    let relation = question.known();
    let mut score = 2.0 * occ.len().min(10) as f64;
    let mut seen_line = 0;
    // The line's text, checked once for all its occurrences (a minified
    // line of 400 KB holds dozens).
    let mut text = "";
    for o in occ {
        // A new line: its text, and the points its words earn once.
        let new_line = o.line != seen_line;
        if new_line {
            seen_line = o.line;
            text = std::str::from_utf8(lines.get(o.line)).unwrap_or("");
        }
        // `printk(` is no call of `_printk`: only the subject's own
        // spelling weighs as a definition, call or assignment.
        let spelt = spelt_as_subject(&question.query.subject, text, o);
        let weight = match (shape(text, o), relation) {
            _ if !spelt => 0.0,
            (Shape::Definition, Some(Relation::Defined | Relation::Implementation)) => 40.0,
            (Shape::Call, Some(Relation::CalledFrom)) => 30.0,
            (Shape::Assignment, Some(Relation::Populated)) => 30.0,
            (Shape::Definition, _) => 10.0,
            _ => 0.0,
        };
        score += weight;
        if new_line {
            let line_tokens = tokens::split(text);
            if question
                .relation_tokens
                .iter()
                .any(|w| line_tokens.contains(w))
            {
                score += 8.0;
            }
            score += 10.0
                * question
                    .support
                    .iter()
                    .filter(|s| tokens::contains_run(&line_tokens, s))
                    .count() as f64;
        }
    }
    if tokens::contains_run(&tokens::split(rel), &question.subject.tokens) {
        score += 20.0;
    }
    score - Role::of(rel).penalty()
}

/// Structure for one candidate: regions, their kinds and scores.
pub(crate) fn traced(
    question: &Question,
    root: &Path,
    file: &Path,
    ignored: bool,
    cancel: &CancelToken,
) -> Option<TracedFile> {
    let mut buf = Vec::new();
    let meta = read_text(file, &mut buf)?;
    let occ = question.subject.find(&buf, MAX_OCCURRENCES);
    if occ.is_empty() {
        return None; // changed since the walk
    }
    let path = shown_path(root, file);
    let role = Role::of(&path.text);
    let language = Language::detect(file, &buf);
    let stop = || cancel.is_stopped();
    let parsed = language.and_then(|l| crate::search::outline_and_uses_of(l, &meta, &buf, &stop));
    let (outline, uses) = match parsed {
        Some((o, u)) => (Some(o), u),
        None => (None, Default::default()),
    };
    // Decoded once: a region's facts read an occurrence's line several
    // times, and a 400 KB minified line was decoded and copied each time.
    // Line by line or whole, a lossy decode gives the same lines: a line
    // end is ASCII, so no invalid sequence spans one.
    let text = String::from_utf8_lossy(&buf);
    let lines: Vec<&str> = text.split('\n').collect();
    let mut regions = build_regions(question, role, outline.as_deref(), &lines, &occ, &uses);
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
            question.query.relation.name()
        ));
    }
    why.push(format!(
        "{} of {}",
        counted(occ.len(), "occurrence", "occurrences"),
        question.query.subject
    ));
    let path_tokens = tokens::split(&path.text);
    if tokens::contains_run(&path_tokens, &question.subject.tokens) {
        score += 20.0;
        why.push("the path names the subject".to_string());
    }
    for s in &question.support {
        if tokens::contains_run(&path_tokens, s) {
            score += 10.0;
            why.push(format!("the path names support term {}", s.join("_")));
        }
    }
    if role.penalty() > 0.0 {
        score -= role.penalty();
        why.push(format!("{} file: ranked down", role.as_str()));
    }
    if ignored {
        why.push("excluded by ignore rules: listed after the project's files".to_string());
    }
    let (structure, more_symbols) = match &outline {
        Some(o) => {
            let hits: Vec<u32> = occ.iter().map(|o| o.line).collect();
            let names = |s: &Symbol| {
                tokens::contains_run(&tokens::split(&s.name), &question.subject.tokens)
            };
            let max = STRUCTURE_ITEMS;
            bearing_symbols(&o.symbols, names, &hits, max)
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
        ignored,
    })
}

/// `1 region`, `3 regions`: a count with its noun in the right number.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::{lines_of, LineAt};
    use proptest::prelude::*;

    proptest! {
        /// Walking on to a line finds what splitting the text into lines
        /// found, in any order of asking, past the end and at line 0.
        #[test]
        fn a_line_walked_to_is_the_line_split_out(
            text in "[a\\n\\r\u{e9}]{0,1200}",
            asked in prop::collection::vec(0u32..700, 0..20),
        ) {
            let buf = text.as_bytes();
            let lines = lines_of(buf);
            let mut at = LineAt::new(buf);
            for n in asked {
                let want = n.checked_sub(1).and_then(|i| lines.get(i as usize).copied()).unwrap_or_default();
                prop_assert_eq!(at.get(n), want, "line {}", n);
            }
        }
    }
}
