//! `trace` and `locate` with a harness context (issue 46): each shown file
//! is checked against what the model already has ([`crate::context`]), and
//! the renderers ask here how to print a file's note, its `structure:` list
//! and each region. An omitted region is always named with its range.
//! (`finish` applies the marks to an answer.)

use super::regions::Region;
use super::role::Role;
use crate::context::{Disk, FileState, HarnessContext, RegionState};
use crate::search::DisplayPath;
use crate::structure::{symbol_label, Language, Symbol};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// What the context made of one shown file.
#[derive(Debug, Clone)]
pub struct FileMark {
    pub state: FileState,
    /// Per symbol of the file's `structure`: whether the model has it.
    pub known_symbols: Vec<bool>,
    /// Per region (trace only).
    pub regions: Vec<RegionState>,
    /// Listed in `focus_files` (shown by `--debug-score` only).
    pub focused: bool,
}

impl FileMark {
    pub fn changed(&self) -> Option<&[String]> {
        self.state.changed()
    }

    pub fn known_symbols_omitted(&self) -> usize {
        self.known_symbols.iter().filter(|k| **k).count()
    }

    pub fn already_shown(&self, region: usize) -> bool {
        matches!(self.regions.get(region), Some(RegionState::AlreadyShown))
    }

    pub fn region_changed(&self, region: usize) -> Option<&[String]> {
        match self.regions.get(region) {
            Some(RegionState::Changed(r)) => Some(r),
            _ => None,
        }
    }
}

/// Marks per shown file (same order as the result's files).
#[derive(Debug, Clone, Default)]
pub struct Marks {
    pub files: Vec<FileMark>,
}

/// What to add to a trace or locate besides its answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extras<'a> {
    pub context: Option<&'a HarnessContext>,
    pub debug_plan: bool,
    pub debug_score: bool,
}

/// The file a display path names under `root` (raw bytes for a non-UTF-8 name).
fn native_path(root: &Path, p: &DisplayPath) -> PathBuf {
    #[cfg(unix)]
    if let Some(hex) = &p.raw_hex {
        use std::os::unix::ffi::OsStrExt;
        let bytes: Option<Vec<u8>> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
            .collect();
        if let Some(bytes) = bytes {
            return root.join(std::ffi::OsStr::from_bytes(&bytes));
        }
    }
    root.join(&p.text)
}

/// One file's mark: its state from its bytes and full outline now, which
/// of `structure` the model has, and each region's state.
pub(crate) fn mark_file(
    root: &Path,
    path: &DisplayPath,
    structure: &[Symbol],
    regions: &[(u32, u32)],
    ctx: &HarnessContext,
) -> FileMark {
    let focused = ctx.focus.contains(&path.text);
    let unknown = || FileMark {
        state: FileState::Unknown,
        known_symbols: vec![false; structure.len()],
        regions: vec![RegionState::New; regions.len()],
        focused,
    };
    if !ctx.mentions(&path.text) {
        return unknown();
    }
    let native = native_path(root, path);
    let mut bytes = Vec::new();
    let Some(meta) = super::files::read_small(&native, &mut bytes) else {
        return FileMark {
            state: FileState::Changed(vec!["cannot be read now".into()]),
            ..unknown()
        };
    };
    let outline = Language::detect(&native, &bytes)
        .and_then(|l| crate::search::outline_of(l, &meta, &bytes, &|| false));
    let disk = Disk {
        bytes: &bytes,
        symbols: outline.as_ref().map(|o| o.symbols.as_slice()),
    };
    let state = ctx.file_state(&path.text, &disk);
    FileMark {
        known_symbols: structure
            .iter()
            .map(|s| ctx.symbol_known(&path.text, s, &state))
            .collect(),
        regions: regions
            .iter()
            .map(|r| ctx.region_state(&path.text, *r, &disk, &state))
            .collect(),
        state,
        focused,
    }
}

/// A changed file's note, right after its path.
pub(crate) fn file_note(out: &mut String, mark: Option<&FileMark>) {
    if let Some(reasons) = mark.and_then(FileMark::changed) {
        let _ = writeln!(
            out,
            "   changed since you last saw it: {}",
            reasons.join("; ")
        );
    }
}

/// A file's `structure:` list without the symbols the model has; `false`
/// when there is no mark (the renderer prints the list itself).
pub(crate) fn structure_list(
    out: &mut String,
    structure: &[Symbol],
    more: usize,
    mark: Option<&FileMark>,
) -> bool {
    let Some(mark) = mark else { return false };
    let known = mark.known_symbols_omitted();
    if known == 0 {
        return false;
    }
    if matches!(mark.state, FileState::Unchanged { .. }) {
        let _ = writeln!(
            out,
            "   structure: {} symbols, unchanged since you last saw them",
            structure.len() + more
        );
        return true;
    }
    out.push_str("   structure:\n");
    for (s, k) in structure.iter().zip(&mark.known_symbols) {
        if !k {
            let _ = writeln!(
                out,
                "   {}- {}",
                "  ".repeat(s.depth as usize),
                symbol_label(s)
            );
        }
    }
    if more > 0 {
        let _ = writeln!(out, "   ... {more} more symbols");
    }
    let noun = if known == 1 { "symbol" } else { "symbols" };
    let _ = writeln!(out, "   ({known} {noun} you already have not repeated)");
    true
}

/// A region the model has, unchanged: one line naming it and its range
/// (`None`: print the region as usual).
pub(crate) fn region_line(
    path: &str,
    g: &Region,
    mark: Option<&FileMark>,
    i: usize,
) -> Option<String> {
    mark.filter(|m| m.already_shown(i)).map(|_| {
        format!(
            "   - {} @ {}-{} (already shown: {path}:{}-{}, unchanged)\n",
            g.label, g.start_line, g.end_line, g.start_line, g.end_line
        )
    })
}

/// A changed region's note, printed with the region.
pub(crate) fn region_note(out: &mut String, mark: Option<&FileMark>, i: usize) {
    if let Some(reasons) = mark.and_then(|m| m.region_changed(i)) {
        let _ = writeln!(out, "     changed since you saw it: {}", reasons.join("; "));
    }
}

/// A role's score penalty in words (debug output).
pub(crate) fn penalty_text(role: Role) -> String {
    let p = role.penalty();
    if p == 0.0 {
        String::new()
    } else {
        format!(", role penalty -{p}")
    }
}
