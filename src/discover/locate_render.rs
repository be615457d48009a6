//! `locate` text in agentgrep's `find` shape: `query:`, `top files: N`, the
//! ranked list (one line per file, with its role and language), then per
//! file its rank and name, `why:` and `structure:`. (Each block's own
//! `role:` line, agentgrep's, said again what the ranked list says: a
//! tenth of a ten-file answer, issue 45's half the words.)

use super::answer::LocateResult;
use super::context::{self, FileMark, Marks};
use super::role::Role;
use crate::structure::{symbol_label, Language, Symbol};
use std::fmt::Write;

/// One result: its heading, then `why:` and `structure:`.
pub(crate) fn file_block(out: &mut String, rank: usize, f: FileBlock<'_>) {
    file_heading(out, rank, &f);
    file_details(out, f);
}

/// A result's heading: rank and file name (the ranked list above gives its
/// path under the same rank: said twice, a ten-file answer's paths were a
/// quarter of it on a Java tree, issue 45), and the context's note when the
/// file changed since the model saw it (trace prints its regions right after).
pub(crate) fn file_heading(out: &mut String, rank: usize, f: &FileBlock<'_>) {
    let name = f.path.rsplit('/').next().unwrap_or(f.path);
    let _ = writeln!(out, "\n{rank}. {name}");
    context::file_note(out, f.mark);
}

/// A result's `why:` and `structure:`.
pub(crate) fn file_details(out: &mut String, f: FileBlock<'_>) {
    out.push_str("   why:\n");
    for w in f.why {
        let _ = writeln!(out, "   - {w}");
    }
    if f.structure.is_empty() || context::structure_list(out, f.structure, f.more_symbols, f.mark) {
        return;
    }
    out.push_str("   structure:\n");
    for s in f.structure {
        let _ = writeln!(
            out,
            "   {}- {}",
            "  ".repeat(s.depth as usize),
            symbol_label(s)
        );
    }
    if f.more_symbols > 0 {
        let _ = writeln!(out, "   ... {} more symbols", f.more_symbols);
    }
}

/// The ranked files, one line each (`1. src/auth/mod.rs (source, rust)`),
/// before their details: the answer is what a collapsed view shows first.
pub(crate) fn ranked_list<'a>(out: &mut String, files: impl Iterator<Item = FileBlock<'a>>) {
    for (i, f) in files.enumerate() {
        let lang = f
            .language
            .map(|l| format!(", {}", l.name()))
            .unwrap_or_default();
        let _ = writeln!(out, "{}. {} ({}{lang})", i + 1, f.path, f.role.as_str());
    }
}

pub(crate) struct FileBlock<'a> {
    pub path: &'a str,
    pub role: Role,
    pub language: Option<Language>,
    pub why: &'a [String],
    pub structure: &'a [Symbol],
    pub more_symbols: usize,
    /// What a harness context made of the file.
    pub mark: Option<&'a FileMark>,
}

pub(crate) fn render(r: &LocateResult) -> String {
    render_marked(r, None)
}

/// With a harness context's marks: changed files flagged, known symbols skipped.
pub(crate) fn render_marked(r: &LocateResult, marks: Option<&Marks>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "query: {}", r.query);
    let _ = writeln!(out, "top files: {}", r.files.len());
    if let Some(note) = &r.content_note {
        let _ = writeln!(out, "note: {note}");
    }
    let blocks = || {
        r.files.iter().enumerate().map(|(i, f)| FileBlock {
            path: &f.path.text,
            role: f.role,
            language: f.language,
            why: &f.why,
            structure: &f.structure,
            more_symbols: f.more_symbols,
            mark: marks.and_then(|m| m.files.get(i)),
        })
    };
    ranked_list(&mut out, blocks());
    for (i, block) in blocks().enumerate() {
        file_block(&mut out, i + 1, block);
    }
    out
}
