//! `trace` text in agentgrep's shape: `query parameters:`, `top results: N
//! files, M regions`, `best answer likely in <path>`, then per file `role:`,
//! `why:`, `structure:` and `regions:`.

use super::locate_render::{file_block, FileBlock};
use super::trace::TraceResult;
use std::fmt::Write;

pub(crate) fn render(r: &TraceResult) -> String {
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
    if !r.structure_found {
        out.push_str("note: no structure was found in these files (no known language); regions are word-boundary matches\n");
    }
    for (i, f) in r.files.iter().enumerate() {
        let block = FileBlock {
            path: &f.path.text,
            role: f.role,
            language: f.language,
            why: &f.why,
            structure: &f.structure,
            more_symbols: f.more_symbols,
        };
        file_block(&mut out, i + 1, block);
        if f.regions.is_empty() {
            continue;
        }
        out.push_str("   regions:\n");
        for g in &f.regions {
            let _ = writeln!(out, "   - {} @ {}-{}", g.label, g.start_line, g.end_line);
            let _ = writeln!(out, "     kind: {}", g.kind.as_str());
            if !g.why.is_empty() {
                let _ = writeln!(out, "     why: {}", g.why.join("; "));
            }
            for line in &g.body {
                let _ = writeln!(out, "       {line}");
            }
        }
    }
    out
}
