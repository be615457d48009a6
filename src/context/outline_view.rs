//! `outline` with a harness context: a compact form for a file the model
//! has and that has not changed, the symbols added/removed/moved (then the
//! full outline) for one that changed, the full outline otherwise.

use super::{Disk, FileState, HarnessContext, KnownSymbol, COMPACT_ITEMS, HIGH};
use crate::structure::{limit, render_outline, Outline, Symbol};
use std::fmt::Write;

/// The outline's text and what the context made of the file.
#[derive(Debug, Clone)]
pub struct OutlineView {
    pub text: String,
    /// `none` (no context), `unknown`, `known`, `unchanged` or `changed`.
    pub state: &'static str,
}

pub fn outline_text(
    given: &str,
    outline: Option<&Outline>,
    source: &[u8],
    max_items: usize,
    ctx: Option<&HarnessContext>,
) -> OutlineView {
    let full = || render_outline(given, outline, max_items);
    let Some(ctx) = ctx else {
        return OutlineView {
            text: full(),
            state: "none",
        };
    };
    if let Some(note) = ctx.version_note() {
        return OutlineView {
            text: format!("{}{note}\n", full()),
            state: "none",
        };
    }
    let disk = Disk {
        bytes: source,
        symbols: outline.map(|o| o.symbols.as_slice()),
    };
    let state = ctx.file_state(given, &disk);
    let text = match (&state, outline) {
        (FileState::Unchanged { .. }, Some(o)) if !o.symbols.is_empty() => compact(given, o),
        (FileState::Changed(reasons), _) => {
            let mut notes = format!("changed since you last saw it: {}\n", reasons.join("; "));
            if let Some(o) = outline {
                changes(ctx, given, o, &mut notes);
            }
            insert_after_header(&full(), &notes)
        }
        _ => full(),
    };
    OutlineView {
        text,
        state: state.name(),
    }
}

/// `kind name` of up to 8 symbols (cut as `maxItems` cuts: deepest first)
/// on one line, and a count of the rest.
fn compact(given: &str, o: &Outline) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "file: {given}");
    let _ = writeln!(out, "language: {}", o.language.name());
    let _ = writeln!(out, "lines: {}", o.total_lines);
    let _ = writeln!(
        out,
        "symbols: {} (unchanged since you last read it; compact form)",
        o.symbols.len()
    );
    let cut = limit(&o.symbols, COMPACT_ITEMS);
    let names: Vec<String> = cut
        .symbols
        .iter()
        .map(|s| format!("{} {}", s.kind.as_str(), s.name))
        .collect();
    let rest = o.symbols.len() - cut.symbols.len();
    let more = if rest > 0 {
        format!("; ... {rest} more")
    } else {
        String::new()
    };
    let _ = writeln!(out, "structure: {}{more}", names.join("; "));
    out
}

/// The full outline with `notes` after its `lines:` line (after
/// `language:` when there is none).
fn insert_after_header(full: &str, notes: &str) -> String {
    let lines: Vec<&str> = full.split_inclusive('\n').collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("lines: "))
        .or_else(|| lines.iter().position(|l| l.starts_with("language: ")))
        .map_or(lines.len(), |i| i + 1);
    let mut out: String = lines[..at].concat();
    out.push_str(notes);
    out.push_str(&lines[at..].concat());
    out
}

fn place(s: &Symbol) -> String {
    format!(
        "{} {} @ {}-{}",
        s.kind.as_str(),
        s.name,
        s.start_line,
        s.end_line
    )
}

fn same_name(k: &KnownSymbol, s: &Symbol) -> bool {
    k.symbol == s.name && k.kind.as_deref().is_none_or(|kind| kind == s.kind.as_str())
}

/// Symbols added (only when the model had the whole structure), removed
/// and moved, against `known_symbols`.
fn changes(ctx: &HarnessContext, path: &str, o: &Outline, out: &mut String) {
    let known: Vec<&KnownSymbol> = ctx.symbols.iter().filter(|k| k.path == path).collect();
    if known.is_empty() {
        out.push_str("symbol changes: not known (no symbols recorded for this file)\n");
        return;
    }
    let removed: Vec<String> = known
        .iter()
        .filter(|k| !o.symbols.iter().any(|s| same_name(k, s)))
        .map(|k| match &k.kind {
            Some(kind) => format!("{kind} {}", k.symbol),
            None => k.symbol.clone(),
        })
        .collect();
    let moved: Vec<String> = known
        .iter()
        .filter_map(|k| {
            let start = k.start_line?;
            let end = k.end_line.unwrap_or(start);
            let mut same = o.symbols.iter().filter(|s| same_name(k, s));
            let first = same.clone().next()?;
            let stayed =
                same.any(|s| s.start_line == start && k.end_line.is_none_or(|e| e == s.end_line));
            (!stayed).then(|| format!("{} (was {start}-{end})", place(first)))
        })
        .collect();
    let whole = ctx.file_signals(path).is_some_and(|s| s.structure >= HIGH);
    let added: Vec<String> = if whole {
        o.symbols
            .iter()
            .filter(|s| !known.iter().any(|k| same_name(k, s)))
            .map(place)
            .collect()
    } else {
        Vec::new()
    };
    let mut any = false;
    for (label, list) in [("added", added), ("removed", removed), ("moved", moved)] {
        if list.is_empty() {
            continue;
        }
        any = true;
        let shown: Vec<&str> = list
            .iter()
            .take(COMPACT_ITEMS)
            .map(String::as_str)
            .collect();
        let more = match list.len() - shown.len() {
            0 => String::new(),
            n => format!("; ... {n} more"),
        };
        let _ = writeln!(out, "symbols {label}: {}{more}", shown.join("; "));
    }
    if !any {
        out.push_str("symbol changes: none added, removed or moved\n");
    }
}
