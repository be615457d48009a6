//! trace and locate with a harness context, and their debug sections, over
//! small trees made on the fly.

use super::context::Extras;
use super::finish::{finish_locate, finish_trace};
use super::locate::{LocateOptions, LocatePlan};
use super::trace::{TraceOptions, TracePlan, TraceResult};
use crate::context::{content_hash, parse_value, region_hash, HarnessContext};
use crate::search::CancelToken;
use serde_json::json;
use std::fs;

const UI: &str = "pub fn render_status() {\n    let s = auth_status();\n    draw(s);\n}\n\nfn draw<T>(_: T) {}\n\npub fn render_footer() {\n    auth_status();\n}\n";
const AUTH: &str =
    "pub enum AuthStatus { Ok }\n\npub fn auth_status() -> AuthStatus {\n    AuthStatus::Ok\n}\n";

fn tree() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    fs::create_dir_all(t.path().join("src")).unwrap();
    fs::write(t.path().join("src/ui.rs"), UI).unwrap();
    fs::write(t.path().join("src/auth.rs"), AUTH).unwrap();
    t
}

fn traced(
    root: &std::path::Path,
    ctx: Option<&HarnessContext>,
    plan_dbg: bool,
    score_dbg: bool,
) -> (TraceResult, Option<super::context::Marks>) {
    let opts = TraceOptions {
        query: "subject:auth_status relation:called_from".into(),
        max_regions: 10,
        ..Default::default()
    };
    let plan = TracePlan::new(root, None, opts).unwrap();
    let mut r = plan.run(&CancelToken::new(None));
    let marks = finish_trace(
        &plan,
        &mut r,
        Extras {
            context: ctx,
            debug_plan: plan_dbg,
            debug_score: score_dbg,
        },
    );
    (r, marks)
}

fn ctx(v: serde_json::Value) -> HarnessContext {
    parse_value(&v).unwrap()
}

fn whole_file(path: &str, text: &str) -> serde_json::Value {
    json!({"path": path, "structure_confidence": 1, "body_confidence": 1,
           "current_version_confidence": 1, "prune_confidence": 1,
           "source_strength": "full_file", "size": text.len(),
           "content_hash": content_hash(text.as_bytes())})
}

#[test]
fn without_a_context_the_text_is_unchanged() {
    let t = tree();
    let (plain, marks) = traced(t.path(), None, false, false);
    assert!(marks.is_none());
    let empty = ctx(json!({}));
    let (with_empty, _) = traced(t.path(), Some(&empty), false, false);
    assert_eq!(plain.text, with_empty.text);
}

#[test]
fn regions_already_shown_are_named_with_their_range_not_inlined() {
    let t = tree();
    let c = ctx(json!({"known_files": [whole_file("src/ui.rs", UI)]}));
    let (plain, _) = traced(t.path(), None, false, false);
    let (r, marks) = traced(t.path(), Some(&c), false, false);
    let marks = marks.unwrap();
    let ui = r
        .files
        .iter()
        .position(|f| f.path.text == "src/ui.rs")
        .unwrap();
    assert!(!r.files[ui].regions.is_empty());
    for (j, g) in r.files[ui].regions.iter().enumerate() {
        assert!(marks.files[ui].already_shown(j));
        let named = format!(
            "   - {} @ {}-{} (already shown: src/ui.rs:{}-{}, unchanged)\n",
            g.label, g.start_line, g.end_line, g.start_line, g.end_line
        );
        assert!(r.text.contains(&named), "{named} missing from\n{}", r.text);
        for line in &g.body {
            assert!(
                !r.text.contains(&format!(" {line}\n")) || !plain.text.contains("render_status"),
                "{line}"
            );
        }
    }
    assert!(
        r.text
            .contains("   structure: 3 symbols, unchanged since you last saw them\n"),
        "{}",
        r.text
    );
    assert!(r.text.len() < plain.text.len());
}

#[test]
fn every_region_left_out_is_still_named_with_its_range() {
    let t = tree();
    for v in [
        json!({"known_files": [whole_file("src/ui.rs", UI), whole_file("src/auth.rs", AUTH)]}),
        json!({"known_regions": [{"path": "src/ui.rs", "start_line": 1, "end_line": 4,
            "body_confidence": 1, "current_version_confidence": 1, "prune_confidence": 1,
            "content_hash": region_hash(UI.as_bytes(), 1, 4)}]}),
    ] {
        let c = ctx(v);
        let (plain, _) = traced(t.path(), None, false, false);
        let (r, marks) = traced(t.path(), Some(&c), false, false);
        let marks = marks.unwrap();
        assert_eq!(plain.files.len(), r.files.len());
        let mut omitted = 0;
        for (i, f) in r.files.iter().enumerate() {
            for (j, g) in f.regions.iter().enumerate() {
                let range = format!("{}:{}-{}", f.path.text, g.start_line, g.end_line);
                let header = format!("   - {} @ {}-{}", g.label, g.start_line, g.end_line);
                assert!(r.text.contains(&header), "{header} gone from\n{}", r.text);
                if marks.files[i].already_shown(j) {
                    omitted += 1;
                    assert!(r.text.contains(&range), "{range} gone from\n{}", r.text);
                }
            }
        }
        assert!(omitted > 0);
    }
}

#[test]
fn a_region_changed_on_disk_is_marked_and_shown() {
    let t = tree();
    let seen = "pub fn render_status() {\n    let s = auth_status();\n    paint(s);\n}\n";
    let c = ctx(
        json!({"known_regions": [{"path": "src/ui.rs", "start_line": 1, "end_line": 4,
        "body_confidence": 1, "current_version_confidence": 1, "prune_confidence": 1,
        "content_hash": region_hash(seen.as_bytes(), 1, 4)}]}),
    );
    let (r, _) = traced(t.path(), Some(&c), false, false);
    assert!(
        r.text
            .contains("     changed since you saw it: lines 1-4 differ from what you saw\n"),
        "{}",
        r.text
    );
    assert!(r.text.contains("draw(s);"), "{}", r.text);
    assert!(!r.text.contains("already shown"));
}

#[test]
fn a_file_changed_since_read_is_flagged_in_trace_and_locate() {
    let t = tree();
    let mut f = whole_file("src/ui.rs", "fn old() {}\n");
    f["reasons"] = json!(["changed since you read it at turn 3"]);
    f["current_version_confidence"] = json!(0.2);
    let c = ctx(json!({"known_files": [f]}));
    let (r, marks) = traced(t.path(), Some(&c), false, false);
    let note = "   changed since you last saw it: changed since you read it at turn 3; size differs from what you saw (12 -> ";
    assert!(r.text.contains(note), "{}", r.text);
    assert!(
        r.text
            .contains("     changed since you saw it: changed since you read it at turn 3"),
        "{}",
        r.text
    );
    assert!(marks.unwrap().files.iter().any(|m| m.changed().is_some()));

    let opts = LocateOptions {
        query: "ui".into(),
        ..Default::default()
    };
    let plan = LocatePlan::new(t.path(), None, opts).unwrap();
    let mut l = plan.run(&CancelToken::new(None));
    finish_locate(
        &plan,
        &mut l,
        Extras {
            context: Some(&c),
            ..Default::default()
        },
    );
    assert!(
        l.text.contains(
            "\n1. ui.rs\n   changed since you last saw it: changed since you read it at turn 3"
        ),
        "{}",
        l.text
    );
}

#[test]
fn structure_lists_skip_symbols_the_model_has() {
    let t = tree();
    // A symbol the structure list would show (it encloses a hit): the
    // list leaves it out and counts it; its region is still shown.
    let c = ctx(
        json!({"known_symbols": [{"path": "src/ui.rs", "symbol": "render_footer", "kind": "function",
        "structure_confidence": 1, "current_version_confidence": 1}]}),
    );
    let (r, marks) = traced(t.path(), Some(&c), false, false);
    let ui = r
        .files
        .iter()
        .position(|f| f.path.text == "src/ui.rs")
        .unwrap();
    assert_eq!(
        marks.unwrap().files[ui].known_symbols_omitted(),
        1,
        "{}",
        r.text
    );
    let at = r.text.find("1. src/ui.rs").expect("ui.rs listed");
    let structure = &r.text[at..];
    // Its structure list follows its regions and ends with its block.
    let structure = &structure[structure.find("   structure:").expect("structure")..];
    let structure = &structure[..structure.find("\n\n").unwrap_or(structure.len())];
    assert!(
        !structure.contains("- function render_footer @"),
        "{}",
        r.text
    );
    assert!(
        structure.contains("- function render_status @"),
        "{}",
        r.text
    );
    assert!(r
        .text
        .contains("   (1 symbol you already have not repeated)\n"));
    assert!(r
        .text
        .contains("   - function render_footer @ 8-10\n     kind: callsite"));
}

#[test]
fn debug_plan_and_score_list_the_probes_and_score_terms() {
    let t = tree();
    let (r, _) = traced(t.path(), None, true, true);
    let plan = &r.text[r.text.find("\ndebug plan:\n").expect("debug plan")..];
    assert!(plan.contains("probe 1 (subject): regex"), "{plan}");
    assert!(
        plan.contains("probe 2 (line shape): call-shaped lines +30"),
        "{plan}"
    );
    assert!(plan.contains("callsite region rank first"), "{plan}");
    let score = &r.text[r.text.find("\ndebug score:\n").expect("debug score")..];
    assert!(score.contains("  1. src/"), "{score}");
    assert!(score.contains("     region 1: "), "{score}");
    let (plain, _) = traced(t.path(), None, false, false);
    assert!(!plain.text.contains("debug"));
    assert!(r.text.starts_with(&plain.text));

    let opts = LocateOptions {
        query: "auth".into(),
        ..Default::default()
    };
    let plan = LocatePlan::new(t.path(), None, opts).unwrap();
    let mut l = plan.run(&CancelToken::new(None));
    finish_locate(
        &plan,
        &mut l,
        Extras {
            debug_score: true,
            ..Default::default()
        },
    );
    assert!(
        l.text.contains("\ndebug score:\n  1. src/auth.rs: "),
        "{}",
        l.text
    );
    assert!(
        l.text.contains("     + file name matches auth"),
        "{}",
        l.text
    );
}

/// Keys are display paths compared exactly: the `#b=` form of a non-UTF-8
/// name matches that file only, never its byte-collider nor the bare lossy
/// form, and the file's facts are read from its real bytes.
#[cfg(unix)]
#[test]
fn a_non_utf8_name_matches_only_its_exact_display_form() {
    use std::os::unix::ffi::OsStrExt;
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("src");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(std::ffi::OsStr::from_bytes(b"u\xff.rs")), UI).unwrap();
    fs::write(dir.join(std::ffi::OsStr::from_bytes(b"u\xfe.rs")), UI).unwrap();
    let exact = "src/u\u{FFFD}.rs#b=ff";
    for (key, shown) in [(exact, true), ("src/u\u{FFFD}.rs", false)] {
        let c = ctx(json!({"known_files": [whole_file(key, UI)]}));
        let (r, marks) = traced(t.path(), Some(&c), false, false);
        let marks = marks.unwrap();
        for (i, f) in r.files.iter().enumerate() {
            let is_key = f.path.text == exact;
            let all_shown = (0..f.regions.len()).all(|j| marks.files[i].already_shown(j));
            assert_eq!(all_shown, shown && is_key, "{key} vs {}", f.path.text);
            if shown && is_key {
                assert!(
                    r.text
                        .contains(&format!("(already shown: {exact}:1-4, unchanged)")),
                    "{}",
                    r.text
                );
            }
        }
        assert_eq!(r.files.len(), 2);
    }
}
