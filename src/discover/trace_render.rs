//! `trace` text in agentgrep's shape: `query parameters:`, `top results: N
//! files, M regions`, `best answer likely in <path>`, the ranked list (one
//! line per file), then per file its `regions:` (line numbers right-aligned
//! per region: the answer comes first), `why:` and `structure:`.

use super::answer::{TraceResult, TracedFile};
use super::context::{self, FileMark, Marks};
use super::locate_render::{file_details, file_heading, ranked_list, FileBlock};
use std::fmt::Write;

pub(crate) fn render(r: &TraceResult) -> String {
    render_marked(r, None)
}

/// With a harness context's marks: known regions named, not inlined.
pub(crate) fn render_marked(r: &TraceResult, marks: Option<&Marks>) -> String {
    let mark = |i: usize| marks.and_then(|m| m.files.get(i));
    let mut out = String::new();
    out.push_str("query parameters:\n");
    if let Some(q) = &r.query {
        let _ = writeln!(out, "  subject: {}", q.subject);
        let _ = writeln!(out, "  relation: {}", q.relation.name());
        if !q.support.is_empty() {
            let _ = writeln!(out, "  support: {}", q.support.join(", "));
        }
        if let Some(k) = q.kind {
            let _ = writeln!(out, "  kind: {}", k.name());
        }
        if let Some(p) = &q.path {
            let _ = writeln!(out, "  path: {p}");
        }
    }
    let regions: usize = r.files.iter().map(|f| f.regions.len()).sum();
    let _ = writeln!(
        out,
        "top results: {} files, {regions} regions",
        r.files.len()
    );
    match r.files.first() {
        Some(best) => {
            let _ = writeln!(out, "best answer likely in {}", best.path.text);
        }
        None => {
            let _ = writeln!(
                out,
                "no file mentions the subject ({} files searched)",
                r.files_scanned
            );
            return out;
        }
    }
    ranked_list(&mut out, r.files.iter().map(|f| block_of(f, None)));
    if !r.structure_found {
        out.push_str("note: no structure was found in these files (no known language); regions are word-boundary matches\n");
    }
    for (i, f) in r.files.iter().enumerate() {
        // The regions first: they are the answer, and what a reader cut
        // short still sees (issue 45); the reasons and structure follow.
        file_heading(&mut out, i + 1, &block_of(f, mark(i)));
        region_list(&mut out, f, mark(i));
        file_details(&mut out, block_of(f, mark(i)));
    }
    out
}

/// A file's `regions:`, each with its kind, reasons and lines (or the
/// context's line for one the model has).
fn region_list(out: &mut String, f: &TracedFile, mark: Option<&FileMark>) {
    if f.regions.is_empty() {
        return;
    }
    out.push_str("   regions:\n");
    for (j, g) in f.regions.iter().enumerate() {
        if let Some(line) = context::region_line(&f.path.text, g, mark, j) {
            out.push_str(&line);
            continue;
        }
        let _ = writeln!(out, "   - {} @ {}-{}", g.label, g.start_line, g.end_line);
        let _ = writeln!(out, "     kind: {}", g.kind.as_str());
        context::region_note(out, mark, j);
        if !g.why.is_empty() {
            let _ = writeln!(out, "     why: {}", g.why.join("; "));
        }
        for line in aligned(&g.body) {
            let _ = writeln!(out, "       {line}");
        }
    }
}

/// A region's body with its `N: ` numbers right-aligned, so that `9:` and
/// `10:` do not shift the code they number by a column.
fn aligned(body: &[String]) -> Vec<String> {
    let width = body.iter().map(|l| number_width(l)).max().unwrap_or(0);
    body.iter()
        .map(|line| match number_width(line) {
            0 => line.clone(),
            n => format!("{}{line}", " ".repeat(width - n)),
        })
        .collect()
}

/// Digits of a body line's `N: ` prefix (0 for `...` lines): numbers are
/// right-aligned within a region so the code's indentation lines up.
fn number_width(line: &str) -> usize {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && line[digits..].starts_with(": ") {
        digits
    } else {
        0
    }
}

fn block_of<'a>(f: &'a TracedFile, mark: Option<&'a FileMark>) -> FileBlock<'a> {
    FileBlock {
        path: &f.path.text,
        role: f.role,
        language: f.language,
        why: &f.why,
        structure: &f.structure,
        more_symbols: f.more_symbols,
        mark,
    }
}

#[cfg(test)]
mod tests {
    use super::aligned;

    /// Issue 29: `9:` beside `10:` broke the code's indentation by a column.
    #[test]
    fn line_numbers_are_right_aligned_within_a_region() {
        let body: Vec<String> = ["9: fn a() {", "10:     b();", "...", "100: }"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            aligned(&body),
            ["  9: fn a() {", " 10:     b();", "...", "100: }"]
        );
    }
}
