//! Harness context (issue 46): what a harness says the model has already
//! seen (files, regions, symbols, with confidences), read from the seed's
//! JSON and checked against the disk, so `outline`, `trace` and `locate` can
//! shorten what the model already has and flag what changed since.
//!
//! The contract (field names, thresholds, the text the model sees) is
//! written in the README's "Harness context" section. Napi-free; the
//! renderers call [`HarnessContext::file_state`] and friends.
//!
//! Safety rule: a fact the context records (size, content hash, a symbol's
//! lines) that disagrees with the disk makes the file "changed", whatever the
//! confidences say; only then can a changed file never be shown as
//! unchanged.

mod debug;
mod fingerprint;
mod outline_view;
mod parse;

pub use debug::{structure_debug, StructureSeen};
pub use fingerprint::{fingerprint, Fingerprint};
pub use outline_view::{outline_text, OutlineView};
pub use parse::{parse_json_str, parse_value};

use crate::structure::Symbol;

/// Confidences at or above this are "high": enough to leave something out.
pub const HIGH: f64 = 0.8;
/// `current_version_confidence` below this means "changed since".
pub const LOW: f64 = 0.5;
/// `prune_confidence` at least this allows leaving something out.
pub const PRUNE: f64 = 0.5;
/// Items of the compact outline.
pub const COMPACT_ITEMS: usize = 8;
/// The version this build reads.
pub const VERSION: u64 = 1;

/// The confidences and notes every entry carries (absent = 0).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Signals {
    pub structure: f64,
    pub body: f64,
    pub current: f64,
    pub prune: f64,
    pub source_strength: Option<String>,
    pub reasons: Vec<String>,
}

impl Signals {
    /// Whether the body may be left out: a strength that saw only
    /// structure or single lines never allows it.
    fn body_strength_ok(&self) -> bool {
        !matches!(
            self.source_strength.as_deref(),
            Some("outline_only" | "match_line_only" | "snippet" | "summary_only")
        )
    }

    fn body_known(&self) -> bool {
        self.body >= HIGH && self.current >= HIGH && self.prune >= PRUNE && self.body_strength_ok()
    }

    /// The reasons a harness gave for "changed" (those starting with it).
    fn changed_reasons(&self) -> impl Iterator<Item = &String> {
        self.reasons.iter().filter(|r| r.starts_with("changed"))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct KnownFile {
    pub path: String,
    pub signals: Signals,
    pub size: Option<u64>,
    pub content_hash: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KnownRegion {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub signals: Signals,
    pub content_hash: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KnownSymbol {
    pub path: String,
    pub symbol: String,
    pub kind: Option<String>,
    pub start_line: Option<u32>,
    pub end_line: Option<u32>,
    pub signals: Signals,
}

/// A parsed, validated context. `ignored_version` is set (and everything
/// else empty) when the version is one this build does not read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HarnessContext {
    pub ignored_version: Option<u64>,
    pub files: Vec<KnownFile>,
    pub regions: Vec<KnownRegion>,
    pub symbols: Vec<KnownSymbol>,
    pub focus: Vec<String>,
}

/// What the context and the disk say about one file.
#[derive(Debug, Clone, PartialEq)]
pub enum FileState {
    /// No entry names this path: full output.
    Unknown,
    /// Entries, but not enough to leave anything out.
    Known,
    /// The model has its structure (and, with `body`, all of its text) and
    /// nothing recorded disagrees with the disk.
    Unchanged { body: bool },
    /// Changed since the model saw it: the reasons, never empty.
    Changed(Vec<String>),
}

impl FileState {
    pub fn name(&self) -> &'static str {
        match self {
            FileState::Unknown => "unknown",
            FileState::Known => "known",
            FileState::Unchanged { .. } => "unchanged",
            FileState::Changed(_) => "changed",
        }
    }

    pub fn changed(&self) -> Option<&[String]> {
        match self {
            FileState::Changed(r) => Some(r),
            _ => None,
        }
    }
}

/// What the context says about one region of a file.
#[derive(Debug, Clone, PartialEq)]
pub enum RegionState {
    New,
    AlreadyShown,
    Changed(Vec<String>),
}

/// The bytes of a file as it is now, and its symbols when a grammar read it.
pub struct Disk<'a> {
    pub bytes: &'a [u8],
    pub symbols: Option<&'a [Symbol]>,
}

/// `xxh3:` and 16 hex digits of XXH3-64 (seed 0) of `bytes`.
pub fn content_hash(bytes: &[u8]) -> String {
    format!("xxh3:{:016x}", xxhash_rust::xxh3::xxh3_64(bytes))
}

/// The bytes of lines `start..=end` (1-based), each with its `\n`; lines
/// past the end contribute nothing.
pub fn line_bytes(bytes: &[u8], start: u32, end: u32) -> &[u8] {
    let stop = line_start(bytes, end.saturating_add(1));
    &bytes[line_start(bytes, start).min(stop)..stop]
}

/// Where 1-based line `n` begins (the length when the file is shorter).
fn line_start(bytes: &[u8], n: u32) -> usize {
    if n <= 1 {
        return 0;
    }
    memchr::memchr_iter(b'\n', bytes)
        .nth(n as usize - 2)
        .map_or(bytes.len(), |p| p + 1)
}

/// The hash of lines `start..=end`, as `known_regions[].content_hash` records it.
pub fn region_hash(bytes: &[u8], start: u32, end: u32) -> String {
    content_hash(line_bytes(bytes, start, end))
}

fn symbol_matches(k: &KnownSymbol, s: &Symbol) -> bool {
    k.symbol == s.name
        && k.kind.as_deref().is_none_or(|kind| kind == s.kind.as_str())
        && k.start_line.is_none_or(|l| l == s.start_line)
        && k.end_line.is_none_or(|l| l == s.end_line)
}

fn overlaps(a: (u32, u32), b: (u32, u32)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

fn push_unique(out: &mut Vec<String>, r: &str) {
    if !out.iter().any(|o| o == r) {
        out.push(r.to_string());
    }
}

impl HarnessContext {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.regions.is_empty() && self.symbols.is_empty()
    }

    pub fn mentions(&self, path: &str) -> bool {
        self.files.iter().any(|f| f.path == path)
            || self.regions.iter().any(|r| r.path == path)
            || self.symbols.iter().any(|s| s.path == path)
    }

    /// The `known_files` entries of `path`, merged: the max of structure,
    /// body and prune, the min of current-version; `None` without one.
    pub fn file_signals(&self, path: &str) -> Option<Signals> {
        let mut merged: Option<Signals> = None;
        for f in self.files.iter().filter(|f| f.path == path) {
            let s = &f.signals;
            match &mut merged {
                None => merged = Some(s.clone()),
                Some(m) => {
                    m.structure = m.structure.max(s.structure);
                    m.body = m.body.max(s.body);
                    m.prune = m.prune.max(s.prune);
                    m.current = m.current.min(s.current);
                    if !s.body_strength_ok() {
                        m.source_strength = s.source_strength.clone();
                    }
                    m.reasons.extend(s.reasons.iter().cloned());
                }
            }
        }
        merged
    }

    /// Facts recorded for the file (size, hash, symbols' places) that the
    /// disk contradicts, in words; empty when all hold or none is recorded.
    pub fn disagreements(&self, path: &str, disk: &Disk<'_>) -> Vec<String> {
        let mut out = Vec::new();
        for f in self.files.iter().filter(|f| f.path == path) {
            if let Some(size) = f.size {
                let now = disk.bytes.len() as u64;
                if size != now {
                    push_unique(
                        &mut out,
                        &format!("size differs from what you saw ({size} -> {now} bytes)"),
                    );
                }
            }
            if let Some(h) = &f.content_hash {
                if *h != content_hash(disk.bytes) {
                    push_unique(&mut out, "content differs from what you saw");
                }
            }
        }
        if let Some(symbols) = disk.symbols {
            let misplaced = self
                .symbols
                .iter()
                .filter(|k| k.path == path && !symbols.iter().any(|s| symbol_matches(k, s)))
                .count();
            match misplaced {
                0 => {}
                1 => out.push("1 symbol is not where you saw it".into()),
                n => out.push(format!("{n} symbols are not where you saw them")),
            }
        }
        out
    }

    /// The file's state: changed (a harness said so, or a fact disagrees),
    /// unchanged (high structure and current-version, prune allowed),
    /// known, or unknown.
    pub fn file_state(&self, path: &str, disk: &Disk<'_>) -> FileState {
        if !self.mentions(path) {
            return FileState::Unknown;
        }
        let mut reasons = Vec::new();
        let file = self.file_signals(path);
        let mut said_changed = false;
        if let Some(s) = &file {
            if s.current < LOW {
                said_changed = true;
                s.changed_reasons()
                    .for_each(|r| push_unique(&mut reasons, r));
            }
        }
        for r in self.regions.iter().filter(|r| r.path == path) {
            if r.signals.current < LOW {
                said_changed = true;
                r.signals
                    .changed_reasons()
                    .for_each(|x| push_unique(&mut reasons, x));
            }
        }
        for r in self.disagreements(path, disk) {
            push_unique(&mut reasons, &r);
        }
        if said_changed || !reasons.is_empty() {
            if reasons.is_empty() {
                reasons.push("since you last saw it".into());
            }
            return FileState::Changed(reasons);
        }
        match file {
            Some(s) if s.structure >= HIGH && s.current >= HIGH && s.prune >= PRUNE => {
                FileState::Unchanged {
                    body: s.body_known(),
                }
            }
            _ => FileState::Known,
        }
    }

    /// One region of a file whose state is `file`: already shown (covered
    /// by an unchanged known region, or the whole file is known), changed
    /// (overlaps something the model saw that changed), or new.
    pub fn region_state(
        &self,
        path: &str,
        range: (u32, u32),
        disk: &Disk<'_>,
        file: &FileState,
    ) -> RegionState {
        let mut changed = Vec::new();
        let mut covered = false;
        for k in self.regions.iter().filter(|k| k.path == path) {
            let known = (k.start_line, k.end_line);
            if !overlaps(known, range) {
                continue;
            }
            let hash_ok = k
                .content_hash
                .as_ref()
                .map(|h| *h == region_hash(disk.bytes, k.start_line, k.end_line));
            if k.signals.current < LOW || hash_ok == Some(false) {
                k.signals
                    .changed_reasons()
                    .for_each(|r| push_unique(&mut changed, r));
                if hash_ok == Some(false) {
                    push_unique(
                        &mut changed,
                        &format!(
                            "lines {}-{} differ from what you saw",
                            k.start_line, k.end_line
                        ),
                    );
                }
                if changed.is_empty() {
                    changed.push("since you last saw it".into());
                }
                continue;
            }
            let file_ok = hash_ok == Some(true) || file.changed().is_none();
            if known.0 <= range.0 && range.1 <= known.1 && k.signals.body_known() && file_ok {
                covered = true;
            } else if hash_ok.is_none() && !file_ok {
                file.changed()
                    .into_iter()
                    .flatten()
                    .for_each(|r| push_unique(&mut changed, r));
            }
        }
        if !changed.is_empty() {
            return RegionState::Changed(changed);
        }
        if covered || matches!(file, FileState::Unchanged { body: true }) {
            return RegionState::AlreadyShown;
        }
        // The whole file was read and has changed since: every region of it
        // is one the model has an old copy of.
        if let (Some(reasons), Some(s)) = (file.changed(), self.file_signals(path)) {
            if s.body >= HIGH && s.body_strength_ok() {
                return RegionState::Changed(reasons.to_vec());
            }
        }
        RegionState::New
    }

    /// Whether the model already has this symbol of a file whose state is
    /// `file` (so `structure:` lists may skip it).
    pub fn symbol_known(&self, path: &str, s: &Symbol, file: &FileState) -> bool {
        match file {
            FileState::Unknown | FileState::Changed(_) => false,
            FileState::Unchanged { .. } => true,
            FileState::Known => self.symbols.iter().any(|k| {
                k.path == path
                    && k.signals.structure >= HIGH
                    && k.signals.current >= HIGH
                    && symbol_matches(k, s)
            }),
        }
    }

    /// Every reason any entry for `path` gives (for debug output).
    pub fn all_reasons(&self, path: &str) -> Vec<String> {
        let mut out = Vec::new();
        let files = self
            .files
            .iter()
            .filter(|f| f.path == path)
            .map(|f| &f.signals);
        let regions = self
            .regions
            .iter()
            .filter(|r| r.path == path)
            .map(|r| &r.signals);
        let symbols = self
            .symbols
            .iter()
            .filter(|s| s.path == path)
            .map(|s| &s.signals);
        for s in files.chain(regions).chain(symbols) {
            s.reasons.iter().for_each(|r| push_unique(&mut out, r));
        }
        out
    }

    /// The note an ignored context adds to the text, if any.
    pub fn version_note(&self) -> Option<String> {
        self.ignored_version.map(|v| {
            format!("note: harness context version {v} is not understood (this build reads {VERSION}); ignored")
        })
    }
}

#[cfg(test)]
mod tests;
