//! The harness context: parsing, the outline's compact and changed forms,
//! region and symbol states, and (differential, over random edits) that a
//! changed file is never presented as unchanged when a recorded fact
//! disagrees with the disk.

use super::*;
use crate::search::{outline_file_with, OutlineExtras, DEFAULT_OUTLINE_MAX_ITEMS};
use crate::structure::{outline, Language};
use proptest::prelude::*;
use serde_json::json;
use std::path::Path;

fn ctx(v: serde_json::Value) -> HarnessContext {
    parse_value(&v).unwrap()
}

fn err(v: serde_json::Value) -> String {
    parse_value(&v).unwrap_err()
}

const SRC: &str = "fn alpha() {\n    1;\n}\n\nfn beta() {\n    2;\n}\n\nstruct Gamma;\n";

fn full_known(path: &str, bytes: &[u8]) -> serde_json::Value {
    json!({
        "path": path, "structure_confidence": 1, "body_confidence": 1,
        "current_version_confidence": 1, "prune_confidence": 1,
        "source_strength": "full_file", "size": bytes.len(),
        "content_hash": content_hash(bytes), "reasons": ["read at turn 2"]
    })
}

fn symbols_of(path: &str, src: &str) -> Vec<serde_json::Value> {
    outline(Language::Rust, src.as_bytes())
        .symbols
        .iter()
        .map(|s| {
            json!({"path": path, "symbol": s.name, "kind": s.kind.as_str(),
                   "start_line": s.start_line, "end_line": s.end_line,
                   "structure_confidence": 1, "current_version_confidence": 1})
        })
        .collect()
}

fn outlined(dir: &Path, file: &str, c: Option<&HarnessContext>) -> (String, &'static str) {
    let extras = OutlineExtras {
        context: c,
        debug_structure: false,
    };
    let o = outline_file_with(dir, file, DEFAULT_OUTLINE_MAX_ITEMS, extras).unwrap();
    (o.text, o.context)
}

#[test]
fn a_wrong_type_is_refused_naming_the_field() {
    assert_eq!(
        err(
            json!({"known_files": [{"path": "a.rs"}, {"path": "b.rs", "structure_confidence": "high"}]})
        ),
        "context.known_files[1].structure_confidence: expected a number from 0 to 1, got \"high\""
    );
    assert!(err(json!([1])).starts_with("context: expected an object"));
    assert!(
        err(json!({"known_regions": [{"path": "a", "start_line": 9, "end_line": 3}]}))
            .contains("start_line 9 is after end_line 3")
    );
    assert!(err(json!({"known_symbols": [{"path": "a"}]})).contains(".symbol: missing"));
    assert!(
        err(json!({"known_files": [{"path": "a", "content_hash": "md5:00"}]}))
            .contains("content_hash: expected \"xxh3:\"")
    );
    assert!(
        err(json!({"known_files": [{"path": "a", "prune_confidence": 1.5}]}))
            .contains("from 0 to 1")
    );
    assert!(parse_json_str("{not json")
        .unwrap_err()
        .starts_with("context: not valid JSON"));
}

#[test]
fn unknown_keys_are_ignored_and_absent_confidences_are_zero() {
    let c = ctx(json!({"version": 1, "future": true, "known_files": [{"path": "a.rs", "x": 1}]}));
    assert_eq!(c.files[0].signals, Signals::default());
}

#[test]
fn an_unknown_version_is_ignored_with_a_note_and_full_output() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("a.rs"), SRC).unwrap();
    let c = ctx(json!({"version": 2, "known_files": [full_known("a.rs", SRC.as_bytes())]}));
    assert_eq!(c.ignored_version, Some(2));
    let (plain, _) = outlined(t.path(), "a.rs", None);
    let (text, state) = outlined(t.path(), "a.rs", Some(&c));
    assert_eq!(state, "none");
    assert_eq!(
        text,
        format!("{plain}note: harness context version 2 is not understood (this build reads 1); ignored\n")
    );
}

#[test]
fn an_unchanged_known_file_gets_the_compact_outline() {
    let t = tempfile::tempdir().unwrap();
    let src: String = (0..20).map(|i| format!("fn f{i}() {{}}\n")).collect();
    std::fs::write(t.path().join("a.rs"), &src).unwrap();
    let c = ctx(json!({"known_files": [full_known("a.rs", src.as_bytes())]}));
    let (text, state) = outlined(t.path(), "a.rs", Some(&c));
    assert_eq!(state, "unchanged");
    assert_eq!(
        text,
        "file: a.rs\nlanguage: rust\nlines: 20\nsymbols: 20 (unchanged since you last read it; compact form)\n\
         structure: function f0; function f1; function f2; function f3; function f4; function f5; function f6; function f7; ... 12 more\n"
    );
    let (full, _) = outlined(t.path(), "a.rs", None);
    assert!(
        text.len() * 2 <= full.len(),
        "compact {} vs full {}",
        text.len(),
        full.len()
    );
}

#[test]
fn an_unknown_or_lossy_key_gets_the_full_outline() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("a.rs"), SRC).unwrap();
    let (full, _) = outlined(t.path(), "a.rs", None);
    for key in ["./a.rs", "A.rs", "a.rs#b=ff", "b.rs"] {
        let c = ctx(json!({"known_files": [full_known(key, SRC.as_bytes())]}));
        assert_eq!(
            outlined(t.path(), "a.rs", Some(&c)),
            (full.clone(), "unknown"),
            "{key}"
        );
    }
}

#[test]
fn low_confidences_keep_the_full_outline() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("a.rs"), SRC).unwrap();
    let (full, _) = outlined(t.path(), "a.rs", None);
    let c = ctx(
        json!({"known_files": [{"path": "a.rs", "structure_confidence": 0.9,
        "current_version_confidence": 0.9, "prune_confidence": 0.2}]}),
    );
    assert_eq!(outlined(t.path(), "a.rs", Some(&c)), (full, "known"));
}

#[test]
fn a_changed_file_says_so_lists_symbol_changes_then_the_full_outline() {
    let t = tempfile::tempdir().unwrap();
    let before = SRC;
    let after = "fn delta() {}\n\nfn alpha() {\n    1;\n}\n\nstruct Gamma;\n";
    std::fs::write(t.path().join("a.rs"), after).unwrap();
    let mut known = vec![full_known("a.rs", before.as_bytes())];
    known[0]["current_version_confidence"] = json!(0.1);
    known[0]["reasons"] = json!(["changed since you read it at turn 3", "read at turn 3"]);
    let c = ctx(json!({"known_files": known, "known_symbols": symbols_of("a.rs", before)}));
    let (text, state) = outlined(t.path(), "a.rs", Some(&c));
    assert_eq!(state, "changed");
    let (full, _) = outlined(t.path(), "a.rs", None);
    assert!(text.contains(
        "changed since you last saw it: changed since you read it at turn 3; size differs from what you saw"
    ), "{text}");
    assert!(!text.contains("read at turn 3;"), "{text}");
    assert!(
        text.contains("symbols added: function delta @ 1-1\n"),
        "{text}"
    );
    assert!(text.contains("symbols removed: function beta\n"), "{text}");
    assert!(
        text.contains(
            "symbols moved: function alpha @ 3-5 (was 1-3); struct Gamma @ 7-7 (was 9-9)\n"
        ),
        "{text}"
    );
    // The full outline follows the notes.
    let tail = &full[full.find("symbols:").unwrap()..];
    assert!(text.ends_with(tail), "{text}");
}

#[test]
fn a_changed_file_without_recorded_symbols_says_the_changes_are_not_known() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("a.rs"), SRC).unwrap();
    let c = ctx(json!({"known_files": [{"path": "a.rs", "current_version_confidence": 0}]}));
    let (text, _) = outlined(t.path(), "a.rs", Some(&c));
    assert!(
        text.contains("changed since you last saw it: since you last saw it\n"),
        "{text}"
    );
    assert!(text.contains("symbol changes: not known"), "{text}");
}

#[test]
fn debug_structure_says_why_a_file_is_not_parsed_and_what_the_context_made_of_it() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("notes.txt"), "one\n").unwrap();
    std::fs::write(t.path().join("a.rs"), SRC).unwrap();
    let extras = OutlineExtras {
        context: None,
        debug_structure: true,
    };
    let o = outline_file_with(t.path(), "notes.txt", 10, extras).unwrap();
    assert!(o.text.contains("\ndebug structure:\n"), "{}", o.text);
    assert!(o
        .text
        .contains("  language: none (no grammar for \".txt\" files)\n"));
    assert!(o
        .text
        .contains("  parsed: false (no grammar reads this file type)\n"));
    assert!(o.text.contains("  context: none given\n"));
    let c = ctx(json!({"known_files": [{"path": "a.rs", "size": 3}]}));
    let extras = OutlineExtras {
        context: Some(&c),
        debug_structure: true,
    };
    let o = outline_file_with(t.path(), "a.rs", 10, extras).unwrap();
    assert!(o.text.contains("  parsed: true\n"), "{}", o.text);
    assert!(o.text.contains("  context: changed\n"));
    assert!(o
        .text
        .contains("recorded facts that disagree: size differs"));
    let plain = outline_file_with(t.path(), "a.rs", 10, OutlineExtras::default()).unwrap();
    assert!(!plain.text.contains("debug structure"));
}

#[test]
fn line_bytes_takes_whole_lines_and_stops_at_the_end() {
    let b = b"a\nbb\nccc\n";
    assert_eq!(line_bytes(b, 1, 1), b"a\n");
    assert_eq!(line_bytes(b, 2, 3), b"bb\nccc\n");
    assert_eq!(line_bytes(b, 3, 9), b"ccc\n");
    assert_eq!(line_bytes(b, 5, 9), b"");
    assert_eq!(line_bytes(b"x\ny", 2, 2), b"y");
}

fn disk(bytes: &[u8]) -> Disk<'_> {
    Disk {
        bytes,
        symbols: None,
    }
}

#[test]
fn a_region_covered_by_an_unchanged_known_region_is_already_shown() {
    let b = SRC.as_bytes();
    let c = ctx(
        json!({"known_regions": [{"path": "a.rs", "start_line": 1, "end_line": 7,
        "body_confidence": 1, "current_version_confidence": 1, "prune_confidence": 1,
        "content_hash": region_hash(b, 1, 7)}]}),
    );
    let file = c.file_state("a.rs", &disk(b));
    assert_eq!(
        c.region_state("a.rs", (5, 7), &disk(b), &file),
        RegionState::AlreadyShown
    );
    // Partly outside what was shown: shown again.
    assert_eq!(
        c.region_state("a.rs", (5, 9), &disk(b), &file),
        RegionState::New
    );
    // A match line only never lets the body go.
    let weak = ctx(
        json!({"known_regions": [{"path": "a.rs", "start_line": 1, "end_line": 7,
        "body_confidence": 1, "current_version_confidence": 1, "prune_confidence": 1,
        "source_strength": "match_line_only"}]}),
    );
    let file = weak.file_state("a.rs", &disk(b));
    assert_eq!(
        weak.region_state("a.rs", (5, 7), &disk(b), &file),
        RegionState::New
    );
}

#[test]
fn a_region_whose_lines_changed_is_marked_changed() {
    let b = SRC.as_bytes();
    let c = ctx(
        json!({"known_regions": [{"path": "a.rs", "start_line": 1, "end_line": 3,
        "body_confidence": 1, "current_version_confidence": 1, "prune_confidence": 1,
        "content_hash": region_hash(b"fn alpha() {\n    0;\n}\n", 1, 3)}]}),
    );
    let file = c.file_state("a.rs", &disk(b));
    assert_eq!(
        c.region_state("a.rs", (1, 3), &disk(b), &file),
        RegionState::Changed(vec!["lines 1-3 differ from what you saw".into()])
    );
}

#[test]
fn symbols_are_known_only_when_the_context_has_them_with_high_confidence() {
    let b = SRC.as_bytes();
    let o = outline(Language::Rust, b);
    let c = ctx(json!({"known_symbols": [
        {"path": "a.rs", "symbol": "alpha", "kind": "function", "structure_confidence": 1, "current_version_confidence": 1},
        {"path": "a.rs", "symbol": "beta", "structure_confidence": 0.3, "current_version_confidence": 1}
    ]}));
    let d = Disk {
        bytes: b,
        symbols: Some(&o.symbols),
    };
    let file = c.file_state("a.rs", &d);
    assert_eq!(file, FileState::Known);
    let known: Vec<bool> = o
        .symbols
        .iter()
        .map(|s| c.symbol_known("a.rs", s, &file))
        .collect();
    assert_eq!(known, [true, false, false]);
}

#[test]
fn a_changed_file_knows_no_symbols() {
    let b = SRC.as_bytes();
    let o = outline(Language::Rust, b);
    let mut f = full_known("a.rs", b"older");
    f["content_hash"] = json!(content_hash(b"older"));
    let c = ctx(json!({"known_files": [f]}));
    let d = Disk {
        bytes: b,
        symbols: Some(&o.symbols),
    };
    let file = c.file_state("a.rs", &d);
    assert!(file.changed().is_some());
    assert!(o.symbols.iter().all(|s| !c.symbol_known("a.rs", s, &file)));
}

/// Random small edits to a Rust file.
fn edit(src: &str, op: u8, at: usize) -> String {
    let lines: Vec<&str> = src.lines().collect();
    let i = at % (lines.len() + 1);
    let mut out: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
    match op % 6 {
        0 => out.insert(i, format!("fn added{at}() {{}}")),
        1 if i < out.len() => {
            out.remove(i);
        }
        2 if i < out.len() => out[i].push(' '),
        3 => out.insert(i, String::new()),
        4 if i < out.len() => out[i] = out[i].replace("alpha", "alphb"),
        _ => out.push("// tail".into()),
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The context claims the file unchanged (every confidence 1) and
    /// records some facts of the version the model saw; the file is then
    /// edited. Whenever a recorded fact disagrees with the disk, the
    /// outline must not present it as unchanged, and trace regions of it
    /// must not be "already shown".
    #[test]
    fn a_changed_file_is_never_presented_as_unchanged(
        edits in proptest::collection::vec((any::<u8>(), any::<usize>()), 0..4),
        record_size in any::<bool>(),
        record_hash in any::<bool>(),
        record_symbols in any::<bool>(),
        record_region in any::<bool>(),
    ) {
        let t = tempfile::tempdir().unwrap();
        let seen = SRC.to_string();
        let mut now = seen.clone();
        for (op, at) in &edits {
            now = edit(&now, *op, *at);
        }
        std::fs::write(t.path().join("a.rs"), &now).unwrap();
        let mut file = json!({"path": "a.rs", "structure_confidence": 1, "body_confidence": 1,
            "current_version_confidence": 1, "prune_confidence": 1, "source_strength": "full_file"});
        if record_size { file["size"] = json!(seen.len()); }
        if record_hash { file["content_hash"] = json!(content_hash(seen.as_bytes())); }
        let mut v = json!({"known_files": [file]});
        if record_symbols { v["known_symbols"] = json!(symbols_of("a.rs", &seen)); }
        if record_region {
            v["known_regions"] = json!([{"path": "a.rs", "start_line": 1, "end_line": 3,
                "body_confidence": 1, "current_version_confidence": 1, "prune_confidence": 1,
                "content_hash": region_hash(seen.as_bytes(), 1, 3)}]);
        }
        let c = ctx(v);
        let o = outline(Language::Rust, now.as_bytes());
        let seen_o = outline(Language::Rust, seen.as_bytes());
        let disagree = (record_size && seen.len() != now.len())
            || (record_hash && seen != now)
            || (record_symbols
                && seen_o.symbols.iter().any(|k| {
                    !o.symbols.iter().any(|s| {
                        (&s.name, s.kind, s.start_line, s.end_line)
                            == (&k.name, k.kind, k.start_line, k.end_line)
                    })
                }));
        let (text, state) = outlined(t.path(), "a.rs", Some(&c));
        if disagree {
            prop_assert_eq!(state, "changed", "{}", text);
            prop_assert!(!text.contains("unchanged"), "{}", text);
            let d = Disk { bytes: now.as_bytes(), symbols: Some(&o.symbols) };
            let fs = c.file_state("a.rs", &d);
            // Lines 1-3 proven the same by their own hash may stay "shown".
            let region_same = record_region
                && line_bytes(seen.as_bytes(), 1, 3) == line_bytes(now.as_bytes(), 1, 3);
            for s in 1..=3u32 {
                if region_same && s < 3 {
                    continue;
                }
                let r = c.region_state("a.rs", (s, s + 1), &d, &fs);
                prop_assert_ne!(r, RegionState::AlreadyShown);
            }
        }
        if record_region && line_bytes(seen.as_bytes(), 1, 3) != line_bytes(now.as_bytes(), 1, 3) {
            let d = Disk { bytes: now.as_bytes(), symbols: Some(&o.symbols) };
            let fs = c.file_state("a.rs", &d);
            prop_assert!(matches!(c.region_state("a.rs", (1, 3), &d, &fs), RegionState::Changed(_)));
        }
        if seen == now {
            prop_assert_eq!(state, "unchanged");
        }
    }
}
