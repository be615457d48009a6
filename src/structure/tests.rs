//! Grammars and queries load; both query strategies agree; the `max_items`
//! cut; enclosing lookups; rendering; detection. Per-language fixtures are
//! in `language_tests.rs`.

use super::language_tests::{RUST, TS};
use super::*;
use std::path::Path;

/// Outline of `src`, checking on the way that running the query from each
/// pattern's start node finds exactly what a whole-tree query run finds.
pub(super) fn checked_outline(lang: Language, src: &[u8]) -> Outline {
    let fast = outline(lang, src);
    let whole = outline::outline_with(lang, src, &|| false, true).unwrap();
    assert_eq!(
        fast.symbols, whole.symbols,
        "{lang:?}: both query strategies agree"
    );
    fast
}

/// The outline as indented `kind name @ start-end` lines (depth = indent).
pub(super) fn lines(lang: Language, src: &str) -> Vec<String> {
    let o = checked_outline(lang, src.as_bytes());
    o.symbols
        .iter()
        .map(|s| {
            format!(
                "{}{} {} @ {}-{}",
                "  ".repeat(s.depth as usize),
                s.kind.as_str(),
                s.name,
                s.start_line,
                s.end_line
            )
        })
        .collect()
}

pub(super) fn assert_outline(lang: Language, src: &str, expected: &[&str]) {
    assert_eq!(lines(lang, src), expected, "outline of {lang:?}");
}

#[test]
fn every_grammar_has_an_accepted_abi_and_its_query_compiles() {
    for lang in Language::ALL {
        let g = lang.grammar();
        assert!(
            languages::abi_supported(&g),
            "{lang:?} ABI {}",
            g.abi_version()
        );
        if let Err(e) = tree_sitter::Query::new(&g, &lang.query_source()) {
            panic!("{lang:?}: {e}");
        }
        assert!(matching::compiled(lang).is_some());
    }
}

#[test]
fn pattern_start_kinds_are_read_from_every_query() {
    for lang in Language::ALL {
        let compiled = matching::compiled(lang).unwrap();
        let roots = compiled
            .roots
            .as_ref()
            .unwrap_or_else(|| panic!("{lang:?}"));
        assert!(roots.iter().any(|r| *r));
    }
    let names = matching::root_names("[\n  (function_expression\n    name: (identifier) @name)\n  ; a comment (x\n  (generator_function name: \"(\" @n)\n] @definition.function");
    assert_eq!(
        names,
        Some(vec!["function_expression", "generator_function"])
    );
    assert_eq!(matching::root_names("((comment) . (function))"), None);
    assert_eq!(matching::root_names("(_) @any"), None);
}

#[test]
fn both_query_strategies_agree_on_this_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    let mut stack = vec![
        root.join("src"),
        root.join("__test__"),
        root.join("extensions"),
        root.join("bin"),
    ];
    stack.push(root.to_path_buf());
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if dir != root {
                    stack.push(path);
                }
                continue;
            }
            let Ok(src) = std::fs::read(&path) else {
                continue;
            };
            if let Some(lang) = Language::detect(&path, &src) {
                checked_outline(lang, &src);
                checked += 1;
            }
        }
    }
    assert!(checked > 10, "only {checked} files");
}

#[test]
fn parents_and_depths_link_nested_symbols() {
    let o = outline(Language::Rust, RUST.as_bytes());
    let at = |name: &str| o.symbols.iter().position(|s| s.name == name).unwrap();
    assert_eq!(o.symbols[at("helper")].parent, Some(at("id")));
    assert_eq!(o.symbols[at("id")].parent, Some(at("Client") + 1)); // the impl after the struct
    assert_eq!(o.symbols[at("Client") + 1].kind, SymbolKind::Impl);
    assert_eq!(o.symbols[at("LIMIT")].parent, None);
    for (i, s) in o.symbols.iter().enumerate() {
        if let Some(p) = s.parent {
            assert!(p < i, "parent precedes child");
            assert_eq!(s.depth, o.symbols[p].depth + 1);
        }
    }
}

#[test]
fn total_lines_counts_a_last_line_without_newline() {
    assert_eq!(count_lines(b""), 0);
    assert_eq!(count_lines(b"a"), 1);
    assert_eq!(count_lines(b"a\n"), 1);
    assert_eq!(count_lines(b"a\nb"), 2);
    assert_eq!(outline(Language::Rust, RUST.as_bytes()).total_lines, 49);
    assert_eq!(outline(Language::Rust, b"").total_lines, 0);
}

#[test]
fn detection_by_extension_and_h_files_by_content() {
    let d = |p: &str, src: &str| Language::detect(Path::new(p), src.as_bytes());
    assert_eq!(d("src/a.rs", ""), Some(Language::Rust));
    assert_eq!(d("a.mts", ""), Some(Language::TypeScript));
    assert_eq!(d("a.TSX", ""), Some(Language::Tsx));
    assert_eq!(d("a.jsx", ""), Some(Language::JavaScript));
    assert_eq!(d("a.pyi", ""), Some(Language::Python));
    assert_eq!(d("Gemfile", ""), Some(Language::Ruby));
    assert_eq!(d("src/HandlerStack.php", ""), Some(Language::Php));
    assert_eq!(d("Source/Core/Session.swift", ""), Some(Language::Swift));
    assert_eq!(d("README.md", ""), Some(Language::Markdown));
    assert_eq!(d("a.hpp", ""), Some(Language::Cpp));
    assert_eq!(d("a.h", "int f(void);\n"), Some(Language::C));
    assert_eq!(
        d("a.h", "namespace x { class Y {}; }\n"),
        Some(Language::Cpp)
    );
    assert_eq!(d("data.json", "{}"), None);
    assert_eq!(d("Makefile", ""), None);
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let p = Path::new(std::ffi::OsStr::from_bytes(b"b\xfe.rs"));
        assert_eq!(Language::from_path(p), Some(Language::Rust));
    }
    assert!(Language::detect(Path::new("x.txt"), b"fn a() {}").is_none());
}

#[test]
fn limit_drops_the_deepest_levels_first_and_counts_them() {
    let o = outline(Language::Rust, RUST.as_bytes());
    assert_eq!(o.symbols.len(), 16);
    let top = o.symbols.iter().filter(|s| s.depth == 0).count();
    assert_eq!(top, 9);

    let all = limit(&o.symbols, 100);
    assert_eq!((all.symbols.len(), all.omitted), (16, 0));

    // Depth 0 (9) and depth 1 (6) fit in 15; the one depth-2 symbol goes.
    let cut = limit(&o.symbols, 15);
    assert_eq!(cut.omitted, 1);
    assert!(cut.symbols.iter().all(|s| s.name != "helper"));

    // 11: all 9 top-level symbols, then the first 2 of depth 1 in source order.
    let cut = limit(&o.symbols, 11);
    assert_eq!(cut.omitted, 5);
    let names: Vec<&str> = cut.symbols.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "AuthStatus",
            "Client",
            "Client",
            "new",
            "id",
            "fmt::Display for Client",
            "Auth",
            "LIMIT",
            "m",
            "Alias",
            "tests"
        ]
    );
    // Parents are re-indexed into the cut list.
    assert_eq!(cut.symbols[3].parent, Some(2));
    assert_eq!(cut.symbols[4].parent, Some(2));

    // Fewer slots than top-level symbols: the first ones in source order.
    let cut = limit(&o.symbols, 2);
    assert_eq!(cut.omitted, 14);
    assert!(cut.symbols.iter().all(|s| s.depth == 0));
    assert_eq!(cut.symbols[1].name, "Client");
}

#[test]
fn enclosing_finds_the_innermost_symbol_or_file_scope() {
    let o = outline(Language::Rust, RUST.as_bytes());
    let name = |line| o.enclosing(line).map(|i| o.symbols[i].name.as_str());
    assert_eq!(name(1), None, "before any symbol");
    assert_eq!(name(11), None, "between symbols");
    assert_eq!(name(5), Some("AuthStatus"), "attribute line");
    assert_eq!(name(23), Some("helper"), "nested fn is innermost");
    assert_eq!(
        name(24),
        Some("id"),
        "back in the method after the nested fn"
    );
    assert_eq!(name(26), Some("Client"), "impl's closing brace");
    assert_eq!(name(20), Some("Client"), "blank line between methods");
    assert_eq!(name(48), Some("works"));
    assert_eq!(name(49), Some("tests"));
    assert_eq!(name(50), None, "past the last symbol");
    let impl_at = o.enclosing(26).unwrap();
    assert_eq!(o.symbols[impl_at].kind, SymbolKind::Impl);
    assert_eq!(o.top_level_of(o.enclosing(23).unwrap()), impl_at);
}

#[test]
fn enclosing_agrees_with_a_linear_scan_on_every_line() {
    for (lang, src) in [
        (Language::Rust, RUST),
        (Language::TypeScript, TS),
        (Language::Markdown, "# A\n\n## B\n\nx\n\n# C\n\ny\n"),
    ] {
        let o = outline(lang, src.as_bytes());
        for line in 0..=o.total_lines + 1 {
            let slow = o
                .symbols
                .iter()
                .enumerate()
                .filter(|(_, s)| s.start_line <= line && line <= s.end_line)
                .max_by_key(|(i, s)| (s.depth, *i))
                .map(|(i, _)| i);
            assert_eq!(o.enclosing(line), slow, "{lang:?} line {line}");
        }
    }
}

#[test]
fn other_top_level_lists_unhit_top_level_symbols() {
    let o = outline(Language::Rust, RUST.as_bytes());
    let used = [o.enclosing(23).unwrap(), o.enclosing(41).unwrap()]; // helper, LIMIT
    let (shown, more) = o.other_top_level(&used, 4);
    let names: Vec<&str> = shown.iter().map(|&i| o.symbols[i].name.as_str()).collect();
    assert_eq!(
        names,
        ["AuthStatus", "Client", "fmt::Display for Client", "Auth"]
    );
    assert_eq!(more, 3, "m, Alias, tests");
    assert!(names.iter().all(|n| *n != "LIMIT"));
}

#[test]
fn render_prints_kind_name_range_and_line_count_indented_by_depth() {
    let o = outline(Language::Rust, RUST.as_bytes());
    let mut text = String::new();
    render_symbols(&o.symbols[2..6], &mut text);
    assert_eq!(
        text,
        "- impl Client @ 16-26 (11 lines)\n  - method new @ 17-19 (3 lines)\n  - method id @ 21-25 (5 lines)\n    - function helper @ 23-23 (1 line)\n"
    );
    let full = render_outline("src/auth.rs", Some(&o), 15);
    assert!(full.starts_with("file: src/auth.rs\nlanguage: rust\nlines: 49\nsymbols: 16\nstructure:\n- enum AuthStatus @ 5-10 (6 lines)\n"));
    assert!(full.ends_with("... 1 more symbols omitted (deepest first; maxItems=15)\n"));
    assert_eq!(
        render_outline("notes.txt", None, 10),
        "file: notes.txt\nlanguage: unknown\nsymbols: none (no grammar for this file type)\n"
    );
}

#[test]
fn a_stopped_outline_gives_up() {
    let src = TS.repeat(50);
    assert!(outline_cancellable(Language::TypeScript, src.as_bytes(), &|| true).is_none());
    // And the thread's parser is usable again afterwards.
    assert_eq!(lines(Language::Rust, "fn a() {}\n"), ["function a @ 1-1"]);
}

#[test]
fn non_utf8_source_is_outlined_with_lossy_names() {
    let src = b"fn caf\xe9() {}\nfn ok() {}\n";
    let o = outline(Language::Rust, src);
    let names: Vec<&str> = o.symbols.iter().map(|s| s.name.as_str()).collect();
    assert!(names.contains(&"ok"), "{names:?}");
}

/// Thread CPU time: on a shared 2-core machine wall time mostly measures
/// the neighbours.
fn cpu_now() -> std::time::Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (std::time::Duration, std::time::Duration) {
    let (mut cpu, mut wall) = (std::time::Duration::MAX, std::time::Duration::MAX);
    for _ in 0..runs {
        let (c, w) = (cpu_now(), std::time::Instant::now());
        std::hint::black_box(f());
        cpu = cpu.min(cpu_now() - c);
        wall = wall.min(w.elapsed());
    }
    (cpu, wall)
}

/// Generated ~100 KB TypeScript file; run with
/// `cargo test --release --lib structure::tests::perf -- --ignored --nocapture`.
#[test]
#[ignore]
fn perf_outline_100kb_typescript() {
    let mut src = String::new();
    let mut i = 0;
    while src.len() < 100 * 1024 {
        src.push_str(&format!(
            "export interface Shape{i} {{\n  area(): number;\n  name: string;\n}}\n\n\
             export class Widget{i} implements Shape{i} {{\n  private count = {i};\n  \
             handle = (e: Event) => {{\n    this.count += 1;\n  }};\n\n  area(): number {{\n    \
             const inner = (n: number) => n * 2;\n    return inner(this.count) + Math.max(1, 2);\n  }}\n\n  \
             get name(): string {{\n    return `w${{this.count}}`;\n  }}\n}}\n\n\
             export const make{i} = async (id: number): Promise<Widget{i}> => {{\n  \
             const w = new Widget{i}();\n  if (id > 3) {{ return w; }}\n  return w;\n}};\n\n"
        ));
        i += 1;
    }
    report("generated", &src);
    // A real-world file of about the same size, when the dev dependencies are installed.
    let real = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/node_modules/zod/src/v4/classic/schemas.ts"
    );
    if let Ok(real_src) = std::fs::read_to_string(real) {
        report("zod schemas.ts", &real_src);
    }
}

fn report(label: &str, src: &str) {
    // Grammar load and query compile happen once per process.
    let symbols = outline(Language::TypeScript, src.as_bytes()).symbols.len();
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&Language::TypeScript.grammar())
        .unwrap();
    let parse = best_of(20, || parser.parse(src, None).unwrap());
    let whole = best_of(20, || outline(Language::TypeScript, src.as_bytes()));
    println!(
        "outline of {label} ({} bytes of TypeScript, {symbols} symbols): best {:?} CPU ({:?} wall); parse alone {:?} CPU",
        src.len(),
        whole.0,
        whole.1,
        parse.0
    );
}
