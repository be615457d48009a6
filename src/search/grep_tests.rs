//! Behaviour of the grep engine on real temporary trees.

use super::cancel::CancelToken;
use super::grep::{build_matcher, run, GrepMode, GrepOptions, BASIC_REGEX_HINT};
use super::results::{GrepSummary, Hit};
use super::walk::WalkOptions;
use super::SortOrder;
use std::fs;
use std::path::Path;
use std::time::Duration;

fn search(root: &Path, opts: GrepOptions) -> (Vec<Hit>, GrepSummary) {
    let mut hits = Vec::new();
    let summary = run(root, None, &opts, &CancelToken::new(opts.timeout), |b| {
        hits.extend(b);
        true
    })
    .unwrap();
    (hits, summary)
}

fn opts(pattern: &str) -> GrepOptions {
    GrepOptions {
        pattern: pattern.into(),
        ..Default::default()
    }
}

fn lines(hits: &[Hit]) -> Vec<String> {
    hits.iter()
        .map(|h| format!("{}:{}:{}", h.path.text, h.line, h.text))
        .collect()
}

#[test]
fn results_come_in_path_order_whatever_the_thread_count() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..60 {
        let dir = t.path().join(format!("d{}", i % 7));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(format!("f{i:02}.txt")), "x needle\nneedle y\n").unwrap();
    }
    let mut outputs = Vec::new();
    for threads in [1, 2, 8] {
        let mut o = opts("needle");
        o.walk.threads = threads;
        outputs.push(lines(&search(t.path(), o).0));
    }
    assert_eq!(outputs[0].len(), 120);
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(outputs[0], outputs[2]);
    let mut sorted = outputs[0].clone();
    sorted.sort_by_key(|l| {
        let mut parts = l.splitn(3, ':');
        let p = parts.next().unwrap().to_string();
        let n: u64 = parts.next().unwrap().parse().unwrap();
        (p, n)
    });
    assert_eq!(outputs[0], sorted);
}

#[test]
fn overlapping_context_windows_show_each_line_once() {
    let t = tempfile::tempdir().unwrap();
    let body = (1..=10)
        .map(|i| {
            if i == 4 || i == 6 {
                format!("hit {i}")
            } else {
                format!("line {i}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    fs::write(t.path().join("a.txt"), body).unwrap();
    let mut o = opts("hit");
    o.before = 2;
    o.after = 2;
    let (hits, _) = search(t.path(), o);
    assert_eq!(hits.len(), 2);
    let before0: Vec<u64> = hits[0].before.iter().map(|c| c.line).collect();
    let after0: Vec<u64> = hits[0].after.iter().map(|c| c.line).collect();
    let before1: Vec<u64> = hits[1].before.iter().map(|c| c.line).collect();
    let after1: Vec<u64> = hits[1].after.iter().map(|c| c.line).collect();
    assert_eq!(before0, vec![2, 3]);
    assert_eq!(after0, vec![5]);
    assert!(before1.is_empty());
    assert_eq!(after1, vec![7, 8]);
}

/// Hits as rg prints them with `-n`: `path:line:text` for a matching line,
/// `path-line-text` for context.
fn rg_lines(hits: &[Hit]) -> Vec<String> {
    let mut out = Vec::new();
    for h in hits {
        let p = &h.path.text;
        out.extend(
            h.before
                .iter()
                .map(|c| format!("{p}-{}-{}", c.line, c.text)),
        );
        out.push(format!("{p}:{}:{}", h.line, h.text));
        out.extend(h.after.iter().map(|c| format!("{p}-{}-{}", c.line, c.text)));
    }
    out
}

/// Regression (rg 15, `-A2 -m1` and `-A3 -m1` over a..e, d, e, d, e): the
/// after-context of the last counted match is printed in full, and a
/// matching line inside it is shown as a match that is not counted.
#[test]
fn max_count_keeps_the_after_context_of_the_last_match_matching_lines_included() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("m"), "a\nb\nc\nd\ne\nd\ne\nd\ne\n").unwrap();
    let run = |after: usize, max: u64| {
        let mut o = opts("d");
        o.after = after;
        o.limit = Some(max);
        search(t.path(), o)
    };
    let (hits, s) = run(2, 1);
    assert_eq!(rg_lines(&hits), vec!["m:4:d", "m-5-e", "m:6:d"]);
    assert_eq!((s.matches, s.limit_reached), (1, true));
    assert_eq!(hits.iter().map(|h| h.count).collect::<Vec<_>>(), vec![1, 0]);
    let (hits, _) = run(3, 1);
    assert_eq!(rg_lines(&hits), vec!["m:4:d", "m-5-e", "m:6:d", "m-7-e"]);
    // rg -m2 -A1: 4:d 5-e 6:d 7-e.
    let (hits, s) = run(1, 2);
    assert_eq!(rg_lines(&hits), vec!["m:4:d", "m-5-e", "m:6:d", "m-7-e"]);
    assert_eq!(s.matches, 2);
    // Every line matching: rg -m1 -A2 prints 1:d 2:d 3:d.
    fs::write(t.path().join("m"), "d\nd\nd\nd\nd\n").unwrap();
    let (hits, s) = run(2, 1);
    assert_eq!(rg_lines(&hits), vec!["m:1:d", "m:2:d", "m:3:d"]);
    assert_eq!(s.matches, 1);
}

/// The limit reached in a later file cuts it the same way: the last
/// counted match keeps its after-context window, matches in it shown but
/// not counted, and nothing past it.
#[test]
fn a_limit_reached_across_files_keeps_the_last_matchs_after_context() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("1"), "d\n").unwrap();
    fs::write(t.path().join("2"), "a\nb\nc\nd\ne\nd\ne\nd\ne\n").unwrap();
    let mut o = opts("d");
    o.after = 2;
    o.limit = Some(2);
    let (hits, s) = search(t.path(), o);
    assert_eq!(rg_lines(&hits), vec!["1:1:d", "2:4:d", "2-5-e", "2:6:d"]);
    assert_eq!((s.matches, s.limit_reached), (2, true));
}

#[test]
fn global_limit_stops_early_and_is_reported() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..50 {
        fs::write(t.path().join(format!("f{i:02}")), "a\na\na\n").unwrap();
    }
    let mut o = opts("a");
    o.limit = Some(7);
    let (hits, s) = search(t.path(), o);
    assert_eq!(hits.len(), 7);
    assert!(s.limit_reached);
    assert_eq!(s.matches, 7);
    assert_eq!(hits[6].path.text, "f02");
    assert!(s.files_searched < 50, "searched {}", s.files_searched);
}

#[test]
fn ignored_files_come_after_project_files_and_are_counted_per_root() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    fs::write(r.join(".gitignore"), "node_modules/\n").unwrap();
    fs::create_dir_all(r.join("node_modules/pkg")).unwrap();
    fs::write(r.join("node_modules/pkg/a.js"), "needle\nneedle\n").unwrap();
    fs::write(r.join("z.ts"), "needle\n").unwrap();
    let (hits, s) = search(r, opts("needle"));
    assert_eq!(
        lines(&hits),
        vec![
            "z.ts:1:needle",
            "node_modules/pkg/a.js:1:needle",
            "node_modules/pkg/a.js:2:needle"
        ]
    );
    assert!(!hits[0].ignored && hits[1].ignored);
    assert_eq!(s.ignored.len(), 1);
    assert_eq!(s.ignored[0].path, "node_modules/");
    assert_eq!(s.ignored[0].matches, 2);
    assert!(s.ignored_unsearched.is_empty());
}

#[test]
fn a_full_limit_from_the_project_leaves_ignored_trees_unsearched() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    fs::write(r.join(".gitignore"), "node_modules/\n").unwrap();
    fs::create_dir_all(r.join("node_modules")).unwrap();
    fs::write(r.join("node_modules/a.js"), "needle\n").unwrap();
    fs::write(r.join("a.ts"), "needle\nneedle\n").unwrap();
    let mut o = opts("needle");
    o.limit = Some(2);
    let (hits, s) = search(r, o);
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| !h.ignored));
    assert_eq!(s.ignored_unsearched, vec!["node_modules/"]);
}

#[test]
fn a_limit_names_the_same_unsearched_ignored_trees_every_time() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    fs::write(r.join(".gitignore"), "aa/\nzz/\ninner/\nx/\n").unwrap();
    for dir in ["aa", "zz", "m/inner", "q/x"] {
        fs::create_dir_all(r.join(dir)).unwrap();
        fs::write(r.join(dir).join("f.txt"), "needle\n").unwrap();
    }
    for i in 0..50 {
        fs::write(r.join(format!("m/{i:02}.txt")), "needle\n").unwrap();
        fs::create_dir_all(r.join(format!("q/d{i:02}"))).unwrap();
        fs::write(r.join(format!("q/d{i:02}/f.txt")), "needle\n").unwrap();
    }
    // The cut falls in m/00.txt: aa/ lies before it, m/inner/ and zz/ in
    // directories above it; q/x/ only a walker running ahead could meet.
    for _ in 0..20 {
        let mut o = opts("needle");
        o.limit = Some(1);
        let (hits, s) = search(r, o);
        assert_eq!(lines(&hits), vec!["m/00.txt:1:needle"]);
        assert_eq!(s.ignored_unsearched, vec!["aa/", "m/inner/", "zz/"]);
    }
}

#[test]
fn count_only_mode_for_ignored_keeps_them_out_of_the_listing() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    fs::write(r.join(".gitignore"), "dist/\n").unwrap();
    fs::create_dir_all(r.join("dist")).unwrap();
    fs::write(r.join("dist/a.js"), "needle\nneedle\nneedle\n").unwrap();
    fs::write(r.join("a.ts"), "needle\n").unwrap();
    let mut o = opts("needle");
    o.ignored_count_only = true;
    o.limit = Some(2);
    let (hits, s) = search(r, o);
    assert_eq!(lines(&hits), vec!["a.ts:1:needle"]);
    assert_eq!(s.ignored[0].matches, 3);
    assert!(!s.limit_reached, "{s:?}");
}

#[test]
fn ignored_hits_are_listed_when_the_project_has_none() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    fs::write(r.join(".gitignore"), "dist/\n").unwrap();
    fs::create_dir_all(r.join("dist")).unwrap();
    fs::write(r.join("dist/a.js"), "needle\n").unwrap();
    let mut o = opts("needle");
    o.ignored_count_only = true;
    let (hits, _) = search(r, o);
    assert_eq!(lines(&hits), vec!["dist/a.js:1:needle"]);
}

#[test]
fn binary_files_are_skipped_and_counted() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("bin"), b"needle\0\x01\x02").unwrap();
    fs::write(t.path().join("text"), "needle\n").unwrap();
    let (hits, s) = search(t.path(), opts("needle"));
    assert_eq!(lines(&hits), vec!["text:1:needle"]);
    assert_eq!(s.binary_skipped, 1);
}

/// rg's tests/binary.rs haystack, its landmarks kept: a match on line 1, a
/// match just before the NUL in the same 64 KiB block, the NUL past the
/// first block, a match after it. Returns the text and the NUL's offset.
fn haystack() -> (String, u64) {
    let mut text = String::from("needle first\n");
    while text.len() < 100_000 {
        text.push_str("filler line, long enough to need a second block\n");
    }
    text.push_str("needle before\nabcdef\0\nneedle after\n");
    let nul = text.find('\0').unwrap() as u64;
    (text, nul)
}

fn stops(s: &GrepSummary) -> Vec<(String, u64)> {
    s.binary_stopped
        .iter()
        .map(|b| (b.path.text.clone(), b.offset))
        .collect()
}

/// rg's after_match1_implicit / before_match2_implicit / _path / _count: a
/// file found by the walk is searched up to the 64 KiB block holding its
/// first NUL byte; the matches before that block are shown and the stop is
/// reported; a file dropped before any match is counted as binary, and so
/// is any such file in count mode (rg -c drops it).
#[test]
fn a_walked_file_shows_the_matches_before_the_block_holding_its_nul() {
    let t = tempfile::tempdir().unwrap();
    let (hay, nul) = haystack();
    fs::write(t.path().join("hay"), &hay).unwrap();
    let (hits, s) = search(t.path(), opts("needle"));
    assert_eq!(lines(&hits), vec!["hay:1:needle first"]);
    assert_eq!(stops(&s), vec![("hay".to_string(), nul)]);
    assert_eq!(
        (s.binary_skipped, s.matches, s.files_with_matches),
        (0, 1, 1)
    );
    // Only past the first block: nothing shown, the file is binary.
    let (hits, s) = search(t.path(), opts("needle (before|after)"));
    assert!(hits.is_empty());
    assert_eq!((s.binary_skipped, stops(&s).len()), (1, 0));
    let mut files = opts("needle");
    files.mode = GrepMode::Files;
    let (hits, s) = search(t.path(), files);
    assert_eq!(hits.len(), 1, "listed: its first match came before the NUL");
    assert_eq!(s.binary_skipped, 0);
    let mut count = opts("needle");
    count.mode = GrepMode::Count;
    let (hits, s) = search(t.path(), count);
    assert!(hits.is_empty(), "rg -c drops a file it found binary");
    assert_eq!(s.binary_skipped, 1);
    // Read whole or streamed (past the whole-read size), the same answer.
    let big = hay.replace("needle before", &"x".repeat(9 << 20));
    fs::write(t.path().join("hay"), &big).unwrap();
    let (hits, s) = search(t.path(), opts("needle"));
    assert_eq!(lines(&hits), vec!["hay:1:needle first"]);
    assert_eq!(
        stops(&s),
        vec![("hay".to_string(), big.find('\0').unwrap() as u64)]
    );
}

/// rg's binary_convert and mmap_* cases: a file named alone is searched
/// on past its NUL byte (rg reads it whole through a memory map and checks
/// its first 64 KiB and each match for a NUL); a match holding the NUL, or
/// any match once a NUL was seen, ends the search and is only reported as
/// a binary match.
#[test]
fn a_file_named_alone_is_searched_past_its_nul_byte() {
    let t = tempfile::tempdir().unwrap();
    let (hay, nul) = haystack();
    fs::write(t.path().join("hay"), &hay).unwrap();
    fs::write(t.path().join("file"), "foo\0bar\nfoo\0baz\n").unwrap();
    let named = |path: &str, o: GrepOptions| {
        let mut hits = Vec::new();
        let s = run(t.path(), Some(path), &o, &CancelToken::new(None), |b| {
            hits.extend(b);
            true
        })
        .unwrap();
        (hits, s)
    };
    let (hits, s) = named("hay", opts("needle"));
    let before = hay.lines().position(|l| l == "needle before").unwrap() + 1;
    assert_eq!(
        lines(&hits),
        vec![
            "hay:1:needle first".to_string(),
            format!("hay:{before}:needle before"),
            format!("hay:{}:needle after", before + 2),
        ]
    );
    assert!(stops(&s).is_empty() && s.binary_skipped == 0);
    let (hits, s) = named("hay", opts("abcdef"));
    assert!(hits.is_empty());
    assert_eq!(stops(&s), vec![("hay".to_string(), nul)]);
    let (hits, s) = named("file", opts("foo"));
    assert!(
        hits.is_empty(),
        "rg: binary file matches (found \"\\0\" byte around offset 3)"
    );
    assert_eq!(stops(&s), vec![("file".to_string(), 3)]);
    let mut count = opts("foo");
    count.mode = GrepMode::Count;
    let (hits, s) = named("file", count);
    assert_eq!(hits.iter().map(|h| h.count).collect::<Vec<_>>(), vec![2]);
    assert_eq!(s.binary_skipped, 0);
}

/// rg 15.2's maxCount with multi-line matching: a match spanning lines
/// counts once and is shown whole (`-U -m1 'foo\nbar'` prints 2:foo 3:bar);
/// matches sharing a line are shown together up to the limit (`-m2
/// 'o\nb|r\nf'` on foo/bar/foo/bar prints lines 1-3, `-m1` lines 1-2); the
/// after-context follows as context (`-m1 -A2`: 4-x 5-foo); `-c` counts
/// matches as the searcher reports them (3).
#[test]
fn max_count_counts_a_multi_line_match_once_as_rg_does() {
    let t = tempfile::tempdir().unwrap();
    fs::write(
        t.path().join("m"),
        "a\nfoo\nbar\nx\nfoo\nbar\ny\nfoo\nbar\n",
    )
    .unwrap();
    let run = |pattern: &str, max: Option<u64>, after: usize, mode: GrepMode| {
        let mut o = opts(pattern);
        (o.multiline, o.limit, o.after, o.mode) = (true, max, after, mode);
        search(t.path(), o)
    };
    let shown = |hits: &[Hit]| -> Vec<String> {
        hits.iter()
            .flat_map(|h| {
                std::iter::once(format!("{}:{}/{}", h.line, h.text, h.count))
                    .chain(h.after.iter().map(|c| format!("{}-{}", c.line, c.text)))
            })
            .collect()
    };
    let (hits, s) = run("foo\nbar", Some(1), 0, GrepMode::Content);
    assert_eq!(shown(&hits), vec!["2:foo/1", "3:bar/0"]);
    assert_eq!(s.matches, 1);
    let (hits, _) = run("foo\nbar", Some(1), 2, GrepMode::Content);
    assert_eq!(shown(&hits), vec!["2:foo/1", "3:bar/0", "4-x", "5-foo"]);
    let (hits, _) = run("foo\nbar", Some(2), 0, GrepMode::Content);
    assert_eq!(
        shown(&hits),
        vec!["2:foo/1", "3:bar/0", "5:foo/1", "6:bar/0"]
    );
    let (hits, _) = run("foo\nbar", None, 0, GrepMode::Count);
    assert_eq!(hits.iter().map(|h| h.count).collect::<Vec<_>>(), vec![3]);
    fs::write(t.path().join("m"), "foo\nbar\nfoo\nbar\n").unwrap();
    let (hits, _) = run("o\nb|r\nf", Some(2), 0, GrepMode::Content);
    assert_eq!(shown(&hits), vec!["1:foo/1", "2:bar/0", "3:foo/0"]);
    let (hits, _) = run("o\nb|r\nf", Some(1), 0, GrepMode::Content);
    assert_eq!(shown(&hits), vec!["1:foo/1", "2:bar/0"]);
}

/// The text with a byte order mark, in UTF-16 (`le`/`be`).
fn utf16_with_bom(text: &str, le: bool) -> Vec<u8> {
    let mut out = if le {
        vec![0xff, 0xfe]
    } else {
        vec![0xfe, 0xff]
    };
    for u in text.encode_utf16() {
        out.extend(if le { u.to_le_bytes() } else { u.to_be_bytes() });
    }
    out
}

/// Regression (rg's `feature.rs` f128/BOM cases): UTF-16 holding ASCII has
/// a NUL in every other byte; with a byte order mark it is transcoded and
/// searched, as rg does, not skipped as binary. A NUL in the text itself
/// still makes it binary after transcoding.
#[test]
fn text_with_a_byte_order_mark_is_transcoded_not_skipped_as_binary() {
    let t = tempfile::tempdir().unwrap();
    fs::write(
        t.path().join("le"),
        utf16_with_bom("hello Sherlock\n", true),
    )
    .unwrap();
    fs::write(
        t.path().join("be"),
        utf16_with_bom("hello Sherlock\n", false),
    )
    .unwrap();
    fs::write(t.path().join("u8"), b"\xef\xbb\xbfhello Sherlock\n").unwrap();
    fs::write(t.path().join("nul"), utf16_with_bom("Sherlock\0\n", true)).unwrap();
    // Streamed rather than read whole.
    let big = "filler line\n".repeat(80_000) + "hello Sherlock\n";
    fs::write(t.path().join("x_big"), utf16_with_bom(&big, true)).unwrap();
    let (hits, s) = search(t.path(), opts("Sherlock"));
    assert_eq!(
        lines(&hits),
        vec![
            "be:1:hello Sherlock",
            "le:1:hello Sherlock",
            "u8:1:hello Sherlock",
            "x_big:80001:hello Sherlock",
        ]
    );
    assert_eq!(s.binary_skipped, 1);
}

#[test]
fn crlf_is_stripped_and_columns_are_byte_based() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("a"), "ab needle\r\nx\r\n").unwrap();
    let (hits, _) = search(t.path(), opts("needle"));
    assert_eq!(hits[0].text, "ab needle");
    assert_eq!(hits[0].column, 4);
}

#[test]
fn files_and_count_modes_list_files() {
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("a"), "x\nx\ny\n").unwrap();
    fs::write(t.path().join("b"), "y\n").unwrap();
    let mut o = opts("x");
    o.mode = GrepMode::Count;
    let (hits, _) = search(t.path(), o);
    assert_eq!(hits.len(), 1);
    assert_eq!((hits[0].path.text.as_str(), hits[0].count), ("a", 2));
    let mut o = opts("y");
    o.mode = GrepMode::Files;
    let (hits, _) = search(t.path(), o);
    assert_eq!(
        hits.iter().map(|h| h.path.text.clone()).collect::<Vec<_>>(),
        vec!["a", "b"]
    );
}

#[test]
fn mtime_sort_puts_the_newest_file_first() {
    let t = tempfile::tempdir().unwrap();
    for (name, age) in [("old", 300), ("new", 10), ("mid", 100)] {
        let p = t.path().join(name);
        fs::write(&p, "x\n").unwrap();
        let when = std::time::SystemTime::now() - Duration::from_secs(age);
        fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
    let mut o = opts("x");
    o.sort = SortOrder::Mtime;
    o.mode = GrepMode::Files;
    let (hits, _) = search(t.path(), o);
    let names: Vec<_> = hits.iter().map(|h| h.path.text.clone()).collect();
    assert_eq!(names, vec!["new", "mid", "old"]);
}

#[test]
fn files_of_one_mtime_are_ordered_by_path_component_by_component() {
    // As bytes `a-b` comes before `a/b` (`-` < `/`); by path, `a/b` is in
    // `a`, which comes before `a-b`.
    let t = tempfile::tempdir().unwrap();
    fs::create_dir_all(t.path().join("a")).unwrap();
    let when = std::time::SystemTime::now() - Duration::from_secs(100);
    for name in ["a-b", "a/b", "a.b", "ab"] {
        let p = t.path().join(name);
        fs::write(&p, "x\n").unwrap();
        let f = fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(when).unwrap();
    }
    for sort in [SortOrder::Mtime, SortOrder::Path] {
        // Without a limit a file listing is sorted once at the end; with
        // one, the files go to the searchers in that order.
        for limit in [None, Some(10)] {
            let mut o = opts("x");
            (o.sort, o.mode, o.limit) = (sort, GrepMode::Files, limit);
            let (hits, _) = search(t.path(), o);
            let names: Vec<_> = hits.iter().map(|h| h.path.text.clone()).collect();
            assert_eq!(names, ["a/b", "a-b", "a.b", "ab"], "{sort:?}, {limit:?}");
        }
    }
}

#[test]
fn a_single_file_target_shows_its_name() {
    let t = tempfile::tempdir().unwrap();
    fs::create_dir_all(t.path().join("sub")).unwrap();
    fs::write(t.path().join("sub/one.rs"), "fn x() {}\n").unwrap();
    let mut hits = Vec::new();
    run(
        t.path(),
        Some("sub/one.rs"),
        &opts("fn"),
        &CancelToken::new(None),
        |b| {
            hits.extend(b);
            true
        },
    )
    .unwrap();
    assert_eq!(lines(&hits), vec!["one.rs:1:fn x() {}"]);
}

#[test]
fn bad_input_is_rejected_with_a_clear_message() {
    let t = tempfile::tempdir().unwrap();
    let err = |o: GrepOptions, p: Option<&str>| {
        run(t.path(), p, &o, &CancelToken::new(None), |_| true)
            .err()
            .unwrap()
            .to_string()
    };
    assert!(err(opts("a("), None).contains("unclosed group"));
    assert_eq!(err(opts(""), None), "Pattern must not be empty");
    assert!(err(opts("a"), Some("missing")).starts_with("Path not found: "));
}

#[test]
fn a_huge_single_line_is_windowed() {
    let t = tempfile::tempdir().unwrap();
    let mut line = "a".repeat(3_000_000);
    line.push_str("needle");
    line.push_str(&"b".repeat(3_000_000));
    fs::write(t.path().join("min.js"), &line).unwrap();
    let (hits, _) = search(t.path(), opts("needle"));
    assert_eq!(hits.len(), 1);
    assert!(hits[0].text.contains("needle"));
    assert_eq!(hits[0].text.chars().count(), 500);
    assert_eq!(hits[0].cut_before + 500 + hits[0].cut_after, line.len());
}

#[test]
fn an_expired_deadline_reports_timed_out() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..20 {
        fs::write(t.path().join(format!("f{i}")), "x\n").unwrap();
    }
    let mut o = opts("x");
    o.timeout = Some(Duration::from_millis(0));
    let (_, s) = search(t.path(), o);
    assert!(s.timed_out);
    assert!(!s.cancelled);
}

#[test]
fn a_consumer_that_goes_away_stops_the_search() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..2000 {
        fs::write(t.path().join(format!("f{i:04}")), "x\n".repeat(200)).unwrap();
    }
    let mut batches = 0;
    let s = run(t.path(), None, &opts("x"), &CancelToken::new(None), |_| {
        batches += 1;
        false
    })
    .unwrap();
    assert_eq!(batches, 1);
    assert!(s.cancelled);
    assert!(s.files_searched < 2000);
}

#[cfg(unix)]
#[test]
fn unreadable_files_are_counted_and_the_search_goes_on() {
    use std::os::unix::fs::PermissionsExt;
    if unsafe { libc::geteuid() } == 0 {
        // root reads everything; the node spec covers this via a dangling path instead.
        return;
    }
    let t = tempfile::tempdir().unwrap();
    fs::write(t.path().join("a"), "x\n").unwrap();
    fs::write(t.path().join("b"), "x\n").unwrap();
    fs::set_permissions(t.path().join("a"), fs::Permissions::from_mode(0o000)).unwrap();
    let (hits, s) = search(t.path(), opts("x"));
    assert_eq!(hits.len(), 1);
    assert_eq!(s.errors.count, 1);
}

#[test]
fn hidden_false_skips_dot_files_but_git_is_never_searched() {
    let t = tempfile::tempdir().unwrap();
    fs::create_dir_all(t.path().join(".git")).unwrap();
    fs::write(t.path().join(".git/config"), "x\n").unwrap();
    fs::write(t.path().join(".env"), "x\n").unwrap();
    fs::write(t.path().join("a"), "x\n").unwrap();
    assert_eq!(
        lines(&search(t.path(), opts("x")).0),
        vec![".env:1:x", "a:1:x"]
    );
    let mut o = opts("x");
    o.walk = WalkOptions {
        hidden: false,
        ..Default::default()
    };
    assert_eq!(lines(&search(t.path(), o).0), vec!["a:1:x"]);
}

#[test]
fn unlimited_count_listing_matches_the_ordered_pipeline() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    fs::write(r.join(".gitignore"), "gen/\n").unwrap();
    for i in 0..40 {
        let dir = r
            .join(if i % 5 == 0 { "gen" } else { "src" })
            .join(format!("m{}", i % 3));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(format!("f{i}.rs")), "x\n".repeat(i + 1)).unwrap();
    }
    for mode in [GrepMode::Count, GrepMode::Files] {
        let mut unordered = opts("x");
        unordered.mode = mode;
        let mut ordered = unordered.clone();
        ordered.limit = Some(1_000_000);
        let (a, sa) = search(r, unordered);
        let (b, sb) = search(r, ordered);
        let show = |h: &[Hit]| {
            h.iter()
                .map(|h| format!("{}:{}:{}", h.path.text, h.count, h.ignored))
                .collect::<Vec<_>>()
        };
        assert_eq!(show(&a), show(&b));
        assert_eq!(a.len(), 40);
        assert!(a[..32].iter().all(|h| !h.ignored) && a[32..].iter().all(|h| h.ignored));
        assert_eq!(
            (sa.matches, sa.files_searched),
            (sb.matches, sb.files_searched)
        );
        assert_eq!(sa.ignored, sb.ignored);
    }
}

fn pattern_error(pattern: &str) -> String {
    build_matcher(&opts(pattern)).unwrap_err().to_string()
}

// Regression: the caret pointed into a `(?:` wrapper the user never typed.
#[test]
fn a_regex_error_shows_the_users_pattern_with_the_caret_under_it() {
    assert_eq!(
        pattern_error("foo("),
        "Invalid pattern: regex parse error:\n    foo(\n       ^\nerror: unclosed group"
    );
}

#[test]
fn a_basic_regex_escape_in_a_bad_pattern_adds_one_hint_line() {
    assert_eq!(
        pattern_error(r"\(a|b)"),
        format!(
            "Invalid pattern: regex parse error:\n    \\(a|b)\n         ^\nerror: unopened group\n{BASIC_REGEX_HINT}"
        )
    );
    assert!(!pattern_error("a|b)").contains("hint:"));
    assert!(build_matcher(&opts(r"a\|b")).is_ok(), "valid: a literal |");
}
