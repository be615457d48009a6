//! grep with `group`: hits get their enclosing symbol from the buffer the
//! search read; files that cannot or should not be grouped stay flat.

use super::cancel::CancelToken;
use super::file_search::{FileOutcome, FileSearcher};
use super::grep::{build_matcher, run, GrepMode, GrepOptions};
use super::results::Hit;
use std::fs;
use std::path::Path;

const NESTED: &str = "use std::fmt;

pub fn outer() -> u32 {
    let needle = 1;
    fn inner() -> u32 {
        needle_in_inner()
    }
    needle + inner()
}

struct Unhit;
fn also_unhit() {}
";

fn grouped(pattern: &str) -> GrepOptions {
    GrepOptions {
        pattern: pattern.into(),
        group: true,
        ..Default::default()
    }
}

fn search(root: &Path, opts: &GrepOptions) -> Vec<Hit> {
    let mut hits = Vec::new();
    run(root, None, opts, &CancelToken::new(None), |b| {
        hits.extend(b);
        true
    })
    .unwrap();
    hits
}

/// `path:line symbol` per hit; `-` for file scope or no grouping.
fn shown(hits: &[Hit]) -> Vec<String> {
    hits.iter()
        .map(|h| {
            let s = h.symbol.as_ref().map_or("-".to_string(), |s| {
                format!(
                    "{} {} @ {}-{}",
                    s.kind.as_str(),
                    s.name,
                    s.start_line,
                    s.end_line
                )
            });
            format!("{}:{} {s}", h.path.text, h.line)
        })
        .collect()
}

#[test]
fn hits_in_nested_functions_go_to_the_innermost_and_the_first_hit_has_the_hint() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("a.rs"), NESTED).unwrap();
    fs::write(t.path().join("b.txt"), "needle in a text file\n").unwrap();
    let hits = search(t.path(), &grouped("needle"));
    assert_eq!(
        shown(&hits),
        [
            "a.rs:4 function outer @ 3-9",
            "a.rs:6 function inner @ 5-7",
            "a.rs:8 function outer @ 3-9",
            "b.txt:1 -",
        ]
    );
    let s = hits[0].structure.as_ref().expect("first hit of a.rs");
    assert_eq!(s.language.name(), "rust");
    assert_eq!((s.total_lines, s.total_symbols), (12, 4));
    let others: Vec<&str> = s.others.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(others, ["Unhit", "also_unhit"]);
    assert_eq!(s.others_omitted, 0);
    assert!(hits[1..].iter().all(|h| h.structure.is_none()));
}

#[test]
fn a_single_file_scope_hit_prints_flat() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("a.rs"), NESTED).unwrap();
    let hits = search(t.path(), &grouped("std::fmt"));
    assert_eq!(shown(&hits), ["a.rs:1 -"]);
    assert!(
        hits[0].structure.is_none(),
        "a heading adds nothing to one file-scope hit"
    );
}

#[test]
fn without_group_or_outside_content_mode_nothing_is_attached() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("a.rs"), NESTED).unwrap();
    let mut flat = grouped("needle");
    flat.group = false;
    for opts in [
        flat,
        GrepOptions {
            mode: GrepMode::Count,
            ..grouped("needle")
        },
        GrepOptions {
            mode: GrepMode::Files,
            limit: Some(5),
            ..grouped("needle")
        },
    ] {
        let hits = search(t.path(), &opts);
        assert!(!hits.is_empty());
        assert!(
            hits.iter()
                .all(|h| h.symbol.is_none() && h.structure.is_none()),
            "{:?}",
            opts.mode
        );
    }
}

#[test]
fn unknown_languages_and_files_without_symbols_stay_flat() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("a.txt"), "fn needle() {}\n").unwrap();
    fs::write(
        t.path().join("b.rs"),
        "// needle in a comment\nuse needle;\n",
    )
    .unwrap();
    let hits = search(t.path(), &grouped("needle"));
    assert_eq!(hits.len(), 3);
    assert!(hits
        .iter()
        .all(|h| h.symbol.is_none() && h.structure.is_none()));
}

#[test]
fn a_dense_file_stays_flat_and_a_sparse_one_next_to_it_is_grouped() {
    let t = tempfile::tempdir().unwrap();
    let dense = format!("fn f() {{\n{}}}\n", "    needle();\n".repeat(24));
    fs::write(t.path().join("a_dense.rs"), dense).unwrap();
    fs::write(t.path().join("b_sparse.rs"), NESTED).unwrap();
    let hits = search(t.path(), &grouped("needle"));
    assert_eq!(hits.len(), 27);
    assert!(hits[..24]
        .iter()
        .all(|h| h.symbol.is_none() && h.structure.is_none()));
    assert!(hits[24].structure.is_some());
    assert_eq!(hits[24].symbol.as_ref().unwrap().name, "outer");
}

#[test]
fn a_file_cut_by_the_limit_is_grouped_on_the_hits_shown() {
    let t = tempfile::tempdir().unwrap();
    // The second hit would put `g` in use; with one hit shown, `g` is an other.
    fs::write(
        t.path().join("a.rs"),
        "fn f() { needle }\nfn g() { needle }\n",
    )
    .unwrap();
    let mut opts = grouped("needle");
    opts.limit = Some(1);
    let hits = search(t.path(), &opts);
    assert_eq!(shown(&hits), ["a.rs:1 function f @ 1-1"]);
    let others: Vec<&str> = hits[0]
        .structure
        .as_ref()
        .unwrap()
        .others
        .iter()
        .map(|o| o.name.as_str())
        .collect();
    assert_eq!(others, ["g"]);
}

#[test]
fn a_streamed_file_stays_flat() {
    let t = tempfile::tempdir().unwrap();
    // Over the 8 MiB whole-read limit: searched as a stream, never outlined.
    let mut big = String::from("fn f() {\n    needle();\n}\n");
    big.push_str(&"// padding padding padding padding padding padding\n".repeat(170_000));
    assert!(big.len() > 8 << 20);
    fs::write(t.path().join("big.rs"), big).unwrap();
    let hits = search(t.path(), &grouped("needle"));
    assert_eq!(hits.len(), 1);
    assert!(hits[0].symbol.is_none() && hits[0].structure.is_none());
}

#[test]
fn files_past_the_grouped_top_of_the_output_print_flat() {
    use crate::structure::group::GROUPED_OUTPUT_LINES;
    let t = tempfile::tempdir().unwrap();
    let body = "fn f() {\n    needle();\n    needle();\n    needle();\n}\n";
    for i in 0..200 {
        fs::write(t.path().join(format!("f{i:03}.rs")), body).unwrap();
    }
    // File k starts after 3k lines: grouped while 3k < 512.
    let grouped_files = GROUPED_OUTPUT_LINES.div_ceil(3) as usize;
    for threads in [1, 2, 8] {
        let mut o = grouped("needle");
        o.walk.threads = threads;
        let hits = search(t.path(), &o);
        assert_eq!(hits.len(), 600);
        let flags: Vec<bool> = hits.chunks(3).map(|c| c[0].structure.is_some()).collect();
        assert!(
            flags[..grouped_files].iter().all(|g| *g),
            "{threads} threads"
        );
        assert!(
            flags[grouped_files..].iter().all(|g| !*g),
            "{threads} threads"
        );
        assert!(hits[grouped_files * 3..].iter().all(|h| h.symbol.is_none()));
    }
    // Context lines count too: with one line after each hit, half as many files.
    let mut o = grouped("needle");
    o.after = 1;
    let hits = search(t.path(), &o);
    let grouped_with_context = hits.iter().filter(|h| h.structure.is_some()).count();
    assert!(
        grouped_with_context < grouped_files,
        "{grouped_with_context}"
    );
}

#[test]
fn grouping_is_the_same_whatever_the_thread_count() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..40 {
        fs::write(t.path().join(format!("f{i:02}.rs")), NESTED).unwrap();
    }
    let mut outputs = Vec::new();
    for threads in [1, 2, 8] {
        let mut o = grouped("needle");
        o.walk.threads = threads;
        let hits = search(t.path(), &o);
        assert_eq!(hits.iter().filter(|h| h.structure.is_some()).count(), 40);
        outputs.push(shown(&hits));
    }
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(outputs[0], outputs[2]);
}

#[test]
fn a_search_stopped_after_its_matches_does_not_outline() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("a.rs");
    fs::write(&file, NESTED).unwrap();
    let opts = grouped("needle");
    let outline_of = |stop: &dyn Fn() -> bool| {
        let matcher = build_matcher(&opts).unwrap();
        let mut fs = FileSearcher::new(&opts, matcher, t.path().to_path_buf(), false, false);
        match fs.search(&file, None, true, stop) {
            FileOutcome::Searched { hits, outline, .. } => (hits.len(), outline.is_some()),
            _ => panic!("searched"),
        }
    };
    assert_eq!(outline_of(&|| false), (3, true));
    // The sink asks once per match; the stop comes right after the third.
    let calls = std::cell::Cell::new(0);
    let stop_after_matches = || {
        calls.set(calls.get() + 1);
        calls.get() > 3
    };
    assert_eq!(outline_of(&stop_after_matches), (3, false));
}

mod cache {
    use super::super::outline_cache::{self, Cache, Key, MAX_ENTRIES};
    use super::super::stamp::RACY as RACY_WINDOW;
    use super::*;
    use crate::structure::{outline, Language, Outline};
    use std::sync::Arc;
    use std::time::{Duration, SystemTime};

    fn key_of(path: &Path, now: SystemTime) -> Option<Key> {
        Key::of(&fs::metadata(path).unwrap(), Language::Rust, now)
    }

    #[test]
    fn a_file_changed_within_the_racy_window_gets_no_key_and_a_change_gets_a_new_one() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("a.rs");
        fs::write(&file, NESTED).unwrap();
        assert_eq!(key_of(&file, SystemTime::now()), None, "just written");
        let later = SystemTime::now() + RACY_WINDOW + Duration::from_secs(60);
        let before = key_of(&file, later).expect("old enough");
        // Same size, new content: the stamps differ.
        fs::write(&file, NESTED.replace("outer", "OUTER")).unwrap();
        let after = key_of(&file, later + Duration::from_secs(1)).unwrap();
        assert_ne!(before, after);
        assert_eq!(
            key_of(&file, later + Duration::from_secs(1)),
            Some(after),
            "stable while unchanged"
        );
        assert_ne!(
            Key::of(
                &fs::metadata(&file).unwrap(),
                Language::C,
                later + Duration::from_secs(1)
            ),
            key_of(&file, later + Duration::from_secs(1)),
            "the language is part of the key"
        );
    }

    #[test]
    fn grep_takes_the_outline_of_an_unchanged_file_from_the_cache() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("a.rs");
        fs::write(&file, NESTED).unwrap();
        // Old enough to be cached (ctime cannot be set back, so wait it out).
        std::thread::sleep(RACY_WINDOW + Duration::from_millis(100));
        let key = key_of(&file, SystemTime::now()).unwrap();
        assert!(outline_cache::get(&key).is_none());
        let first = search(t.path(), &grouped("needle"));
        assert_eq!(first[0].symbol.as_ref().unwrap().name, "outer");
        assert!(
            outline_cache::get(&key).is_some(),
            "cached by the first search"
        );
        // Swap in a different outline under the same key: the next search must show it.
        let mut planted: Outline = outline(Language::Rust, b"fn planted() {\n}\n");
        planted.symbols[0].start_line = 1;
        planted.symbols[0].end_line = 12;
        outline_cache::put(key, Arc::new(planted));
        let second = search(t.path(), &grouped("needle"));
        assert_eq!(second[0].symbol.as_ref().unwrap().name, "planted");
    }

    #[test]
    fn the_cache_is_bounded_and_drops_the_least_recently_used() {
        let t = tempfile::tempdir().unwrap();
        let one = Arc::new(outline(Language::Rust, b"fn a() {}\n"));
        // Far enough ahead for every file written below to count as old.
        let later = SystemTime::now() + Duration::from_secs(3600);
        let mut keys = Vec::new();
        for i in 0..=MAX_ENTRIES {
            let file = t.path().join(format!("f{i}.rs"));
            fs::write(&file, "").unwrap();
            keys.push(key_of(&file, later).unwrap());
        }
        let mut cache = Cache::default();
        for k in &keys[..MAX_ENTRIES] {
            cache.put(k.clone(), one.clone());
        }
        assert_eq!(cache.usage(), (MAX_ENTRIES, MAX_ENTRIES));
        assert!(cache.get(&keys[0]).is_some(), "the oldest, used again");
        cache.put(keys[MAX_ENTRIES].clone(), one.clone());
        let (entries, symbols) = cache.usage();
        assert_eq!(
            (entries, symbols),
            (MAX_ENTRIES * 3 / 4, MAX_ENTRIES * 3 / 4)
        );
        assert!(cache.get(&keys[0]).is_some(), "recently used: kept");
        assert!(cache.get(&keys[MAX_ENTRIES]).is_some(), "newest: kept");
        assert!(
            cache.get(&keys[1]).is_none(),
            "least recently used: dropped"
        );
    }
}
