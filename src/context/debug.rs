//! `--debug-structure` (`debugStructure`): what `outline` saw (the file it
//! opened, its size, the grammar and why, whether it parsed) and what a
//! harness context made of it. For people tuning a harness, not the model.

use super::{Disk, FileState, HarnessContext, Signals};
use crate::structure::{Language, Outline};
use std::fmt::Write;
use std::path::Path;

/// What `outline` had in hand for one file.
pub struct StructureSeen<'a> {
    pub given: &'a str,
    pub path: &'a Path,
    pub source: &'a [u8],
    pub language: Option<Language>,
    pub outline: Option<&'a Outline>,
    pub max_items: usize,
}

pub fn structure_debug(seen: &StructureSeen<'_>, ctx: Option<&HarnessContext>) -> String {
    let mut out = String::from("debug structure:\n");
    let _ = writeln!(out, "  opened: {}", seen.path.display());
    let lines = crate::structure::count_lines(seen.source);
    let _ = writeln!(out, "  bytes: {}, lines: {lines}", seen.source.len());
    match seen.language {
        Some(l) => {
            let _ = writeln!(out, "  language: {} (from the file name)", l.name());
        }
        None => {
            let why = match seen.path.extension() {
                Some(ext) => format!("no grammar for \".{}\" files", ext.to_string_lossy()),
                None => "the name has no extension a grammar is known for".to_string(),
            };
            let _ = writeln!(out, "  language: none ({why})");
        }
    }
    match (seen.language, seen.outline) {
        (None, _) => out.push_str("  parsed: false (no grammar reads this file type)\n"),
        (Some(_), None) => out.push_str("  parsed: false (the parse was stopped)\n"),
        (Some(_), Some(o)) => {
            let _ = writeln!(
                out,
                "  parsed: true{}",
                if o.has_errors {
                    " (with syntax errors: symbols near them may be missing)"
                } else {
                    ""
                }
            );
            let shown = o.symbols.len().min(seen.max_items);
            let _ = writeln!(
                out,
                "  symbols: {} found, {shown} within maxItems={}",
                o.symbols.len(),
                seen.max_items
            );
        }
    }
    context_lines(&mut out, seen, ctx);
    out
}

fn signals_text(s: &Signals) -> String {
    format!(
        "structure {}, body {}, current {}, prune {}{}",
        s.structure,
        s.body,
        s.current,
        s.prune,
        s.source_strength
            .as_deref()
            .map(|x| format!(", {x}"))
            .unwrap_or_default()
    )
}

fn context_lines(out: &mut String, seen: &StructureSeen<'_>, ctx: Option<&HarnessContext>) {
    let Some(ctx) = ctx else {
        out.push_str("  context: none given\n");
        return;
    };
    if let Some(v) = ctx.ignored_version {
        let _ = writeln!(out, "  context: version {v} ignored");
        return;
    }
    if !ctx.mentions(seen.given) {
        let _ = writeln!(
            out,
            "  context: no entry for {:?} (paths are compared exactly as displayed)",
            seen.given
        );
        return;
    }
    let disk = Disk {
        bytes: seen.source,
        symbols: seen.outline.map(|o| o.symbols.as_slice()),
    };
    let state = ctx.file_state(seen.given, &disk);
    let _ = writeln!(out, "  context: {}", state.name());
    if let Some(s) = ctx.file_signals(seen.given) {
        let _ = writeln!(out, "  known file: {}", signals_text(&s));
    }
    let symbols = ctx.symbols.iter().filter(|k| k.path == seen.given).count();
    let regions = ctx.regions.iter().filter(|k| k.path == seen.given).count();
    let _ = writeln!(out, "  known symbols: {symbols}, known regions: {regions}");
    let facts = ctx.disagreements(seen.given, &disk);
    if facts.is_empty() {
        out.push_str("  recorded facts: none disagree with the disk\n");
    } else {
        let _ = writeln!(out, "  recorded facts that disagree: {}", facts.join("; "));
    }
    let reasons = ctx.all_reasons(seen.given);
    if !reasons.is_empty() {
        let _ = writeln!(out, "  reasons given: {}", reasons.join("; "));
    }
    if let FileState::Known = state {
        out.push_str("  compact form: no (needs structure and current >= 0.8, prune >= 0.5)\n");
    }
}
