//! Outline text in the shape agentgrep (a grep for coding agents) prints, so the CLI and the Pi tool print the
//! same thing: `- function auth_status @ 3-6 (4 lines)`, two spaces of
//! indent per depth.

use super::limit::limit;
use super::outline::{Outline, Symbol};
use std::fmt::Write;

/// `kind name @ start-end (n lines)`, without indent or bullet; grep
/// grouping uses it as a group heading.
pub fn symbol_label(s: &Symbol) -> String {
    let n = s.line_count();
    format!(
        "{} {} @ {}-{} ({n} {})",
        s.kind.as_str(),
        s.name,
        s.start_line,
        s.end_line,
        if n == 1 { "line" } else { "lines" }
    )
}

/// One line per symbol, indented by depth.
pub fn render_symbols(symbols: &[Symbol], out: &mut String) {
    for s in symbols {
        for _ in 0..s.depth {
            out.push_str("  ");
        }
        out.push_str("- ");
        out.push_str(&symbol_label(s));
        out.push('\n');
    }
}

/// The whole outline of one file: a short header, then the structure cut to
/// `max_items` with a note of what was left out.
pub fn render_outline(path: &str, outline: Option<&Outline>, max_items: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "file: {path}");
    let Some(outline) = outline else {
        out.push_str("language: unknown\nsymbols: none (no grammar for this file type)\n");
        return out;
    };
    let _ = writeln!(out, "language: {}", outline.language.name());
    let _ = writeln!(out, "lines: {}", outline.total_lines);
    if outline.symbols.is_empty() {
        out.push_str("symbols: none found\n");
        return out;
    }
    let cut = limit(&outline.symbols, max_items);
    let _ = writeln!(out, "symbols: {}", outline.symbols.len());
    if outline.has_errors {
        out.push_str("note: the file has syntax errors; some ranges may be incomplete\n");
    }
    out.push_str("structure:\n");
    render_symbols(&cut.symbols, &mut out);
    if cut.omitted > 0 {
        let _ = writeln!(
            out,
            "... {} more symbols omitted (deepest first; maxItems={max_items})",
            cut.omitted
        );
    }
    out
}
