//! Go types that implement an interface without naming it. Go has no
//! `implements`: a type implements an interface by having its methods, and
//! the file that holds it often never says the interface's name (issue 45:
//! gin's `jsonApi` in `codec/json/json.go` implements `Core`, a word that
//! file holds only in its copyright line). When `relation:implementation`
//! finds no type that states it implements the subject, and the subject is
//! a Go interface, the types with every one of its methods are looked for
//! in a second pass, narrowed by the index to files defining one of them.

use super::answer::TracedFile;
use super::bearing::{bearing_symbols, STRUCTURE_ITEMS};
use super::files::{read_small, read_text, shown_path, Scope};
use super::region_facts::{is_type_like, symbol_label};
use super::regions::{region_body, Region, RegionKind};
use super::role::Role;
use crate::search::{CancelToken, ErrorLog, SourceFile};
use crate::structure::{Language, Outline, SymbolKind};
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// An interface with more methods is not looked for this way: few types
/// have them all, and the pass would cost more than it finds.
const MAX_METHODS: usize = 16;

/// At most this many implementing types are shown.
const MAX_TYPES: usize = 5;

/// The methods of the Go interface `subject` defined in `file`, when it
/// holds one with at least one method of its own (embedded interfaces are
/// not followed).
pub(super) fn interface_methods(file: &Path, subject: &str) -> Option<Vec<String>> {
    let outline = outline_of(file)?;
    let at = (outline.symbols.iter())
        .position(|s| s.kind == SymbolKind::Interface && s.name == subject)?;
    let methods: BTreeSet<String> = (outline.symbols.iter())
        .filter(|s| s.parent == Some(at) && s.kind == SymbolKind::Method)
        .map(|s| s.name.clone())
        .collect();
    (!methods.is_empty() && methods.len() <= MAX_METHODS).then(|| methods.into_iter().collect())
}

fn outline_of(file: &Path) -> Option<Arc<Outline>> {
    let mut buf = Vec::new();
    let meta = read_small(file, &mut buf)?;
    go_outline(file, &meta, &buf)
}

/// The outline of `source` (the contents of `file`, which `meta`
/// describes) when it is Go: cached, or parsed and cached.
fn go_outline(file: &Path, meta: &std::fs::Metadata, source: &[u8]) -> Option<Arc<Outline>> {
    let lang = Language::detect(file, source)?;
    (lang == Language::Go)
        .then(|| crate::search::outline_of(lang, meta, source, &|| false))
        .flatten()
}

/// The receiver type of each method a Go file defines, with its methods:
/// `func (c *Client) Do(` gives `Client` → `Do`.
fn methods_by_receiver(text: &str) -> BTreeMap<&str, BTreeSet<&str>> {
    static METHOD: OnceLock<Regex> = OnceLock::new();
    let method = METHOD.get_or_init(|| {
        Regex::new(r"(?m)^func\s*\(\s*(?:\w+\s+)?\*?\s*(\w+)(?:\[[^\]]*\])?\s*\)\s*(\w+)\s*[\[(]")
            .unwrap()
    });
    let mut by_type: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for c in method.captures_iter(text) {
        let (Some(t), Some(m)) = (c.get(1), c.get(2)) else {
            continue;
        };
        by_type.entry(t.as_str()).or_default().insert(m.as_str());
    }
    by_type
}

/// Whether a file builds only when a tag is asked for: its `//go:build`
/// line names a tag that is neither negated nor an operating system,
/// architecture, `cgo` or Go version (`//go:build go_json` does;
/// `//go:build !jsoniter && !go_json` and `//go:build linux` do not). Such
/// an implementation is the alternative, not the one a build uses.
fn needs_a_tag(text: &str) -> bool {
    const USUAL: [&str; 12] = [
        "linux", "darwin", "windows", "freebsd", "unix", "amd64", "arm64", "386", "arm", "cgo",
        "ignore", "js",
    ];
    let Some(line) = text
        .lines()
        .take_while(|l| l.trim().is_empty() || l.trim_start().starts_with("//"))
        .find_map(|l| l.trim().strip_prefix("//go:build"))
    else {
        return false;
    };
    let mut negated = false;
    let mut needs = false;
    let mut word = String::new();
    for ch in line.chars().chain([' ']) {
        if ch.is_alphanumeric() || ch == '_' || ch == '.' {
            word.push(ch);
            continue;
        }
        if !word.is_empty() {
            let usual = USUAL.contains(&word.as_str()) || word.starts_with("go1");
            needs |= !negated && !usual;
            word.clear();
            negated = false;
        }
        if ch == '!' {
            negated = true;
        }
    }
    needs
}

/// The files (other than tests) that define types with every method of
/// the interface, each with a region for the type; `defined_in` is the
/// interface's own file. Looked for over `scope`'s files, narrowed to
/// those defining the method of the longest name.
pub(super) fn implementers(
    scope: &Scope,
    root: &Path,
    methods: &[String],
    subject: &str,
    cancel: &CancelToken,
) -> Vec<TracedFile> {
    let Some(narrow) = methods.iter().max_by_key(|m| m.len()) else {
        return Vec::new();
    };
    let pattern = format!(r"\)\s*{}\s*[\[(]", regex::escape(narrow));
    let (source, _) = scope.source(Some(&pattern));
    let candidates = Mutex::new(Vec::<PathBuf>::new());
    let errors = Mutex::new(ErrorLog::default());
    source.visit_all(
        scope.threads(),
        cancel,
        &errors,
        || false,
        |_| {
            |f: &SourceFile<'_>| {
                let name = f.path.to_string_lossy();
                if f.candidate && name.ends_with(".go") && !name.ends_with("_test.go") {
                    let mut c = candidates.lock().unwrap_or_else(|p| p.into_inner());
                    c.push(f.path.to_path_buf());
                }
                true
            }
        },
    );
    let mut candidates = candidates.into_inner().unwrap_or_else(|p| p.into_inner());
    candidates.sort();
    let mut found = Vec::new();
    let mut buf = Vec::new();
    for path in candidates {
        if found.len() >= MAX_TYPES || cancel.is_stopped() {
            break;
        }
        let Some(meta) = read_text(&path, &mut buf) else {
            continue;
        };
        let text = String::from_utf8_lossy(&buf);
        let types: Vec<&str> = methods_by_receiver(&text)
            .into_iter()
            .filter(|(_, have)| methods.iter().all(|m| have.contains(m.as_str())))
            .map(|(t, _)| t)
            .collect();
        if types.is_empty() {
            continue;
        }
        let Some(outline) = go_outline(&path, &meta, &buf) else {
            continue;
        };
        let lines: Vec<&str> = text.split('\n').collect();
        let alternative = needs_a_tag(&text);
        for t in types {
            let Some(s) = (outline.symbols.iter())
                .find(|s| (is_type_like(s.kind) || s.kind == SymbolKind::Type) && s.name == t)
            else {
                continue;
            };
            let (body, full_region) = region_body(&lines, s.start_line, s.end_line, &[]);
            let label = symbol_label(Some(&outline), s);
            let mut why = vec![format!(
                "{label} has every method of the subject ({})",
                methods.join(", ")
            )];
            let mut score = 100.0;
            if alternative {
                score -= 10.0;
                why.push("built only with a tag its //go:build line names: ranked down".into());
            }
            let region = Region {
                kind: RegionKind::Implementation,
                label,
                start_line: s.start_line,
                end_line: s.end_line,
                score,
                body,
                full_region,
                why,
                in_test: false,
                states_implementation: true,
            };
            let (structure, more_symbols) = bearing_symbols(
                &outline.symbols,
                |x| x.name == t,
                &[s.start_line],
                STRUCTURE_ITEMS,
            );
            let path_shown = shown_path(root, &path);
            found.push(TracedFile {
                role: Role::of(&path_shown.text),
                path: path_shown,
                language: Some(Language::Go),
                score,
                why: vec![format!("implements {subject} by its methods")],
                structure,
                more_symbols,
                regions: vec![region],
                ignored: false,
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_gathered_by_their_receiver_type() {
        let text = "package p\n\nfunc (j jsonApi) Marshal(v any) ([]byte, error) {}\nfunc (jsonApi) Unmarshal(b []byte, v any) error {}\nfunc (r *routeRegexp[T]) Match(req *http.Request) bool {}\nfunc free() {}\n";
        let by = methods_by_receiver(text);
        assert_eq!(
            by.get("jsonApi")
                .map(|m| m.iter().copied().collect::<Vec<_>>()),
            Some(vec!["Marshal", "Unmarshal"])
        );
        assert!(by.get("routeRegexp").is_some_and(|m| m.contains("Match")));
        assert_eq!(by.len(), 2, "a function is no method: {by:?}");
    }

    #[test]
    fn a_file_built_only_with_an_asked_for_tag_is_told_apart() {
        assert!(needs_a_tag("//go:build go_json\n\npackage json\n"));
        assert!(needs_a_tag(
            "// Copyright\n\n//go:build sonic && (linux || windows)\n"
        ));
        assert!(!needs_a_tag("//go:build !jsoniter && !go_json && !(sonic && (linux || windows || darwin) && amd64)\n"));
        assert!(!needs_a_tag("//go:build linux && amd64\n"));
        assert!(
            !needs_a_tag("package p\n\n//go:build go_json\n"),
            "after the package clause it is no constraint"
        );
        assert!(!needs_a_tag("package p\n"));
    }
}
