//! `--debug-plan` and `--debug-score` for trace and locate: the probes a
//! trace ran and why, and the terms behind each shown file's score. Printed
//! after the answer, for people tuning queries or a harness.

use super::answer::LocateResult;
use super::answer::TraceResult;
use super::context::{penalty_text, FileMark, Marks};
use super::dsl::{Relation, RelationTerm};
use super::role::Role;
use super::trace::TracePlan;
use std::fmt::Write;

fn shape_rule(relation: &RelationTerm) -> &'static str {
    match relation {
        RelationTerm::Known(Relation::Defined | Relation::Implementation) => {
            "definition-shaped lines +40 each (the relation asks where it is defined)"
        }
        RelationTerm::Known(Relation::CalledFrom) => {
            "call-shaped lines +30 each (the relation asks for callers), definitions +10"
        }
        RelationTerm::Known(Relation::Populated) => {
            "assignment-shaped lines +30 each (the relation asks where it is set), definitions +10"
        }
        _ => "definition-shaped lines +10 each (no shape is specific to this relation)",
    }
}

/// The probes of one trace, in the order they run, each with why.
pub(crate) fn trace_plan(plan: &TracePlan, r: &TraceResult) -> String {
    let p = plan.parts();
    let q = p.query;
    let mut out = String::from("debug plan:\n");
    let _ = writeln!(
        out,
        "  probe 1 (subject): regex {} on token boundaries, at most {} occurrences per file: \
         finds {:?} in every identifier form (snake, camel, kebab, upper) in one pass over the files",
        p.subject_pattern, p.max_occurrences, q.subject
    );
    let _ = writeln!(
        out,
        "    ran over {} files, {} mention the subject (+2 per occurrence, at most 10 counted; +20 when the path names it)",
        r.files_scanned, r.files_matched
    );
    let _ = writeln!(out, "  probe 2 (line shape): {}", shape_rule(&q.relation));
    if p.relation_tokens.is_empty() {
        let _ = writeln!(
            out,
            "  probe 3 (relation words): none: relation {} is answered by shape and structure alone",
            q.relation.name()
        );
    } else {
        let _ = writeln!(
            out,
            "  probe 3 (relation words): +8 per subject line holding one of {} (the words relation {} stands for)",
            p.relation_tokens.join(", "),
            q.relation.name()
        );
    }
    for (i, s) in p.support.iter().enumerate() {
        let _ = writeln!(
            out,
            "  probe {} (support): +10 per subject line holding the run {} (support:{})",
            4 + i,
            s.join(" "),
            q.support.get(i).map_or("", String::as_str)
        );
    }
    if let Some(k) = q.kind {
        let _ = writeln!(
            out,
            "  filter: kind:{} (files of other roles are not read)",
            k.name()
        );
    }
    if let Some(path) = &q.path {
        let _ = writeln!(
            out,
            "  filter: path:{path} (only paths under or containing it)"
        );
    }
    let _ = writeln!(
        out,
        "  structure: the best {} files by the probes above are outlined; their symbols turn occurrences into regions{}",
        p.shortlist,
        p.wanted
            .map(|k| format!("; files holding a {} region rank first (the kind the relation asks for)", k.as_str()))
            .unwrap_or_default()
    );
    let _ = writeln!(
        out,
        "  limits: {} files, {} regions (best regions over all files); file list from: {}",
        p.max_files,
        p.max_regions,
        r.index.as_str()
    );
    out
}

fn context_line(out: &mut String, mark: Option<&FileMark>) {
    if let Some(m) = mark {
        let _ = writeln!(
            out,
            "     context: {}{}{}",
            m.state.name(),
            match m.known_symbols_omitted() {
                0 => String::new(),
                n => format!(", {n} known symbols left out"),
            },
            if m.focused { ", a focus file" } else { "" }
        );
    }
}

/// `  1. path: score (role, its penalty, ignored)`.
fn file_line(out: &mut String, i: usize, path: &str, score: f64, role: Role, ignored: bool) {
    let _ = writeln!(
        out,
        "  {}. {path}: {score:.2} ({}{}{})",
        i + 1,
        role.as_str(),
        penalty_text(role),
        if ignored {
            ", ignored: ranked after the project's files"
        } else {
            ""
        }
    );
}

/// Each shown file's score and the terms behind it.
pub(crate) fn trace_score(r: &TraceResult, marks: Option<&Marks>) -> String {
    let mut out = String::from("debug score:\n");
    for (i, f) in r.files.iter().enumerate() {
        file_line(&mut out, i, &f.path.text, f.score, f.role, f.ignored);
        out.push_str(
            "     = best region + 0.25 x the next three, plus path and relation bonuses:\n",
        );
        for w in &f.why {
            let _ = writeln!(out, "     + {w}");
        }
        for (j, g) in f.regions.iter().enumerate() {
            let _ = writeln!(
                out,
                "     region {}: {} @ {}-{} ({}) {:.2}: {}",
                j + 1,
                g.label,
                g.start_line,
                g.end_line,
                g.kind.as_str(),
                g.score,
                g.why.join("; ")
            );
        }
        context_line(&mut out, marks.and_then(|m| m.files.get(i)));
    }
    out
}

/// Each shown file's score and the signals that made it.
pub(crate) fn locate_score(r: &LocateResult, marks: Option<&Marks>) -> String {
    let mut out = String::from("debug score:\n");
    for (i, f) in r.files.iter().enumerate() {
        file_line(&mut out, i, &f.path.text, f.score, f.role, f.ignored);
        for w in &f.why {
            let _ = writeln!(out, "     + {w}");
        }
        context_line(&mut out, marks.and_then(|m| m.files.get(i)));
    }
    let _ = writeln!(
        out,
        "  candidates: {} of {} files seen",
        r.candidates, r.files_seen
    );
    out
}
