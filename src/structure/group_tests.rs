//! Grouping hit lines by symbol: innermost wins, file scope, the `other:`
//! hint, and the dense-file caps.

use super::group::{group, Grouping, CAPPED_AT, SKIP_AT};
use super::{outline, Language, Outline};

const SRC: &str = "use std::fmt;

pub fn outer() -> u32 {
    let a = 1;
    fn inner() -> u32 {
        2
    }
    a + inner()
}

pub struct S;

impl S {
    fn m(&self) {}
}

fn lonely() {}
fn other_a() {}
fn other_b() {}
fn other_c() {}
";

fn rust(src: &str) -> Outline {
    outline(Language::Rust, src.as_bytes())
}

/// The grouping as names: `None` for file scope.
fn names<'a>(o: &'a Outline, g: &Grouping) -> Vec<Option<&'a str>> {
    g.symbols
        .iter()
        .map(|s| s.map(|i| o.symbols[i].name.as_str()))
        .collect()
}

fn other_names<'a>(o: &'a Outline, g: &Grouping) -> Vec<&'a str> {
    g.others
        .iter()
        .map(|&i| o.symbols[i].name.as_str())
        .collect()
}

#[test]
fn hits_go_to_the_innermost_symbol_and_file_scope_to_none() {
    let o = rust(SRC);
    let g = group(&o, &[1, 4, 6, 8, 14]).unwrap();
    assert_eq!(
        names(&o, &g),
        [None, Some("outer"), Some("inner"), Some("outer"), Some("m")]
    );
    // `impl S` holds a hit through `m`; `S`, the struct, does not.
    assert_eq!(other_names(&o, &g), ["S", "lonely", "other_a", "other_b"]);
    assert_eq!(g.others_omitted, 1);
}

#[test]
fn a_file_without_hits_in_symbols_still_gets_the_hint() {
    let o = rust(SRC);
    let g = group(&o, &[1, 2]).unwrap();
    assert_eq!(names(&o, &g), [None, None]);
    assert_eq!(other_names(&o, &g), ["outer", "S", "S", "lonely"]);
    assert_eq!(g.others_omitted, 3);
}

#[test]
fn one_hit_that_a_heading_would_only_repeat_prints_flat() {
    // One hit at file scope.
    assert_eq!(group(&rust(SRC), &[1]), None);
    // A one-line file: its symbol is the hit line.
    let one = rust("pub const LIMIT: u32 = 10;\n");
    assert_eq!(one.symbols.len(), 1);
    assert_eq!(group(&one, &[1]), None);
    // A one-line symbol in a file with others: the heading still tells what else is there.
    let o = rust(SRC);
    let g = group(&o, &[17]).expect("lonely has neighbours");
    assert_eq!(names(&o, &g), [Some("lonely")]);
    // One hit inside a longer symbol: grouped.
    assert!(group(&o, &[4]).is_some());
}

#[test]
fn no_hits_or_no_symbols_means_flat() {
    assert_eq!(group(&rust(SRC), &[]), None);
    let empty = rust("// only a comment\nuse x;\n");
    assert!(empty.symbols.is_empty());
    assert_eq!(group(&empty, &[1]), None);
}

/// `count` top-level functions, each `body` lines long; line numbers of
/// the first body line of each are returned too.
fn functions(count: usize, body: usize) -> (String, Vec<u32>) {
    let mut src = String::new();
    let mut firsts = Vec::new();
    let mut line = 1;
    for i in 0..count {
        src.push_str(&format!("fn f{i}() {{\n"));
        firsts.push(line + 1);
        for _ in 0..body {
            src.push_str("    hit();\n");
        }
        src.push_str("}\n");
        line += body as u32 + 2;
    }
    (src, firsts)
}

#[test]
fn dense_files_are_not_grouped() {
    let (src, firsts) = functions(2, 30);
    let o = rust(&src);
    let body: Vec<u32> = (firsts[0]..firsts[0] + 30).collect();
    assert!(group(&o, &body[..SKIP_AT - 1]).is_some());
    assert_eq!(group(&o, &body[..SKIP_AT]), None, "{SKIP_AT} hits: flat");
}

#[test]
fn the_capped_band_keeps_at_most_8_groups_and_2_others() {
    let (src, firsts) = functions(20, 2);
    let o = rust(&src);
    // 12 hits in 6 functions (two each): 6 groups fit; 14 functions unhit.
    let lines: Vec<u32> = firsts[..6].iter().flat_map(|&l| [l, l + 1]).collect();
    assert_eq!(lines.len(), CAPPED_AT);
    let g = group(&o, &lines).unwrap();
    assert_eq!(g.others.len(), 2);
    assert_eq!(g.others_omitted, 12);
    assert_eq!(other_names(&o, &g), ["f6", "f7"]);
    // 12 hits in 12 functions: 12 groups do not fit, nor do their 12
    // top-level symbols: flat.
    assert_eq!(group(&o, &firsts[..12]), None);
    // Below the band: every group, 4 others.
    let g = group(&o, &firsts[..11]).unwrap();
    assert_eq!(g.symbols.iter().flatten().count(), 11);
    assert_eq!(g.others.len(), 4);
    assert_eq!(g.others_omitted, 5);
}

#[test]
fn too_many_nested_groups_fall_back_to_top_level_symbols() {
    // One function holding 12 nested ones, one hit each: 12 innermost
    // groups, but a single top-level one.
    let mut src = String::from("fn host() {\n");
    let mut lines = Vec::new();
    for i in 0..12 {
        src.push_str(&format!("    fn n{i}() {{\n        hit();\n    }}\n"));
        lines.push(3 + 3 * i as u32);
    }
    src.push_str("}\nfn unhit() {}\n");
    let o = rust(&src);
    let g = group(&o, &lines).unwrap();
    assert!(names(&o, &g).iter().all(|n| *n == Some("host")));
    assert_eq!(other_names(&o, &g), ["unhit"]);
    // Fewer hits: each keeps its innermost symbol.
    let g = group(&o, &lines[..11]).unwrap();
    assert_eq!(names(&o, &g)[10], Some("n10"));
}

#[test]
fn an_interrupted_symbol_counts_as_two_groups() {
    // host(hit, nested(hit), hit) ×4 → 12 runs over 8 in the capped band.
    let mut src = String::new();
    let mut lines = Vec::new();
    let mut line = 1;
    for i in 0..4 {
        src.push_str(&format!(
            "fn h{i}() {{\n    hit();\n    fn n() {{\n        hit();\n    }}\n    hit();\n}}\n"
        ));
        lines.extend([line + 1, line + 3, line + 5]);
        line += 7;
    }
    let o = rust(&src);
    let g = group(&o, &lines).unwrap();
    assert_eq!(
        names(&o, &g)[..3],
        [Some("h0"), Some("h0"), Some("h0")],
        "12 runs do not fit: top-level symbols"
    );
    let g = group(&o, &lines[..9]).unwrap();
    assert_eq!(names(&o, &g)[..3], [Some("h0"), Some("n"), Some("h0")]);
}
