//! A `locate` or `trace` answer finished for its caller: each shown file
//! marked with what the harness context says the model already has, the
//! text rendered again with those marks, and the debug sections asked
//! for (`--debug-plan`, `--debug-score`).

use super::answer::{LocateResult, TraceResult};
use super::context::{mark_file, Extras, Marks};
use super::locate::LocatePlan;
use super::regions::Region;
use super::trace::TracePlan;
use crate::search::DisplayPath;
use crate::structure::Symbol;
use std::fmt::Write;
use std::path::Path;

fn ranges(regions: &[Region]) -> Vec<(u32, u32)> {
    regions.iter().map(|g| (g.start_line, g.end_line)).collect()
}

/// Each shown file's mark (path, structure, region ranges); `None`
/// without a context this build reads.
fn marks_of<'a>(
    root: &Path,
    files: impl Iterator<Item = (&'a DisplayPath, &'a [Symbol], Vec<(u32, u32)>)>,
    extras: Extras<'_>,
) -> Option<Marks> {
    let ctx = extras.context.filter(|c| c.ignored_version.is_none())?;
    Some(Marks {
        files: files
            .map(|(path, structure, regions)| mark_file(root, path, structure, &regions, ctx))
            .collect(),
    })
}

/// Marks a trace's files, re-renders its text with them and appends the
/// debug sections asked for. `None` without a (readable-version) context.
pub fn finish_trace(plan: &TracePlan, r: &mut TraceResult, extras: Extras<'_>) -> Option<Marks> {
    let files = r
        .files
        .iter()
        .map(|f| (&f.path, &f.structure[..], ranges(&f.regions)));
    let marks = marks_of(plan.root(), files, extras);
    if marks.is_some() {
        r.text = super::trace_render::render_marked(r, marks.as_ref());
    }
    version_note(&mut r.text, extras);
    if extras.debug_plan {
        r.text.push('\n');
        r.text.push_str(&super::context_debug::trace_plan(plan, r));
    }
    if extras.debug_score {
        r.text.push('\n');
        r.text
            .push_str(&super::context_debug::trace_score(r, marks.as_ref()));
    }
    marks
}

/// The same for locate (no regions; `debug_plan` does not apply).
pub fn finish_locate(plan: &LocatePlan, r: &mut LocateResult, extras: Extras<'_>) -> Option<Marks> {
    let files = r
        .files
        .iter()
        .map(|f| (&f.path, &f.structure[..], Vec::new()));
    let marks = marks_of(plan.root(), files, extras);
    if marks.is_some() {
        r.text = super::locate_render::render_marked(r, marks.as_ref());
    }
    version_note(&mut r.text, extras);
    if extras.debug_score {
        r.text.push('\n');
        r.text
            .push_str(&super::context_debug::locate_score(r, marks.as_ref()));
    }
    marks
}

fn version_note(text: &mut String, extras: Extras<'_>) {
    if let Some(note) = extras.context.and_then(|c| c.version_note()) {
        let _ = writeln!(text, "{note}");
    }
}
