//! locate and trace over small trees made on the fly.

use super::locate::{self, LocateOptions};
use super::trace::{self, TraceOptions};
use crate::search::CancelToken;
use std::fs;
use std::path::Path;

pub(super) fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = t.path().join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    t
}

fn located(root: &Path, query: &str) -> Vec<String> {
    let opts = LocateOptions {
        query: query.into(),
        ..Default::default()
    };
    let r = locate::run(root, None, opts, &CancelToken::new(None)).unwrap();
    r.files.into_iter().map(|f| f.path.text).collect()
}

/// locate's reasons for the file at `rel` among its answers to `query`.
fn reasons_for(root: &Path, query: &str, rel: &str) -> Vec<String> {
    let opts = LocateOptions {
        query: query.into(),
        ..Default::default()
    };
    let r = locate::run(root, None, opts, &CancelToken::new(None)).unwrap();
    let file = r.files.into_iter().find(|f| f.path.text == rel);
    file.unwrap_or_else(|| panic!("{rel} not located for {query}"))
        .why
}

fn project() -> tempfile::TempDir {
    tree(&[
        (".gitignore", "node_modules/\n"),
        ("src/auth/mod.rs", "pub enum AuthStatus { Ok, Denied }\n\npub fn auth_status() -> AuthStatus {\n    AuthStatus::Ok\n}\n"),
        ("src/ui/status_bar.rs", "use crate::auth::auth_status;\n\npub fn render_status_bar() {\n    let s = auth_status();\n    draw(s);\n}\n\nfn draw<T>(_: T) {}\n"),
        ("src/session.rs", "pub struct Session { auth_status: u8 }\n\nimpl Session {\n    pub fn reset(&mut self) {\n        self.auth_status = 0;\n    }\n}\n"),
        ("tests/auth_status_test.rs", "#[test]\nfn auth_status_works() {\n    assert!(true);\n}\n"),
        ("docs/auth-status.md", "# Auth status\n\nHow auth_status is computed.\n"),
        ("node_modules/auth-status/index.js", "export function authStatus() {}\n"),
    ])
}

#[test]
fn every_identifier_form_finds_the_defining_file_first() {
    let t = project();
    for query in [
        "auth status",
        "AuthStatus",
        "auth_status",
        "auth-status",
        "authStatus",
    ] {
        let files = located(t.path(), query);
        assert_eq!(
            files.first().map(String::as_str),
            Some("src/auth/mod.rs"),
            "{query}: {files:?}"
        );
        // Tests and docs are ranked down, not out; ignored files come last.
        assert!(
            files.contains(&"tests/auth_status_test.rs".to_string()),
            "{query}: {files:?}"
        );
        if let Some(i) = files.iter().position(|f| f.starts_with("node_modules/")) {
            assert_eq!(i, files.len() - 1, "{files:?}");
        }
    }
}

#[test]
fn a_path_query_and_a_fuzzy_query_both_find_the_file() {
    let t = project();
    assert_eq!(located(t.path(), "src/ui")[0], "src/ui/status_bar.rs");
    assert_eq!(located(t.path(), "stsbar")[0], "src/ui/status_bar.rs");
    assert_eq!(located(t.path(), "auth mod")[0], "src/auth/mod.rs");
}

#[test]
fn locate_is_deterministic_and_explains_itself() {
    let t = project();
    let opts = || LocateOptions {
        query: "auth status".into(),
        ..Default::default()
    };
    let a = locate::run(t.path(), None, opts(), &CancelToken::new(None)).unwrap();
    let b = locate::run(t.path(), None, opts(), &CancelToken::new(None)).unwrap();
    assert_eq!(a.text, b.text);
    assert!(
        a.text.starts_with("query: auth status\ntop files: "),
        "{}",
        a.text
    );
    // The ranked list says the role and language; the block says them no more.
    assert!(
        a.text.contains("\n1. src/auth/mod.rs (code, rust)\n"),
        "{}",
        a.text
    );
    assert!(
        a.text
            .contains("\n1. mod.rs\n   why:\n   - defines function auth_status @ 3-5\n"),
        "{}",
        a.text
    );
    assert!(!a.text.contains("role:"), "{}", a.text);
    assert!(
        a.text
            .contains("   structure:\n   - enum AuthStatus @ 1-1 (1 line)\n"),
        "{}",
        a.text
    );
}

#[test]
fn bad_locate_input_is_an_error_not_a_crash() {
    let t = project();
    let run = |q: &str, path: Option<&str>| {
        let opts = LocateOptions {
            query: q.into(),
            ..Default::default()
        };
        locate::run(t.path(), path, opts, &CancelToken::new(None))
            .err()
            .map(|e| e.to_string())
    };
    assert_eq!(run("", None).as_deref(), Some("Query must not be empty"));
    assert!(run("-- /", None)
        .unwrap()
        .starts_with("Query has no letters or digits"));
    assert!(run("x", Some("nope"))
        .unwrap()
        .starts_with("Path not found"));
    assert!(run("x", Some("src/session.rs"))
        .unwrap()
        .starts_with("Not a directory"));
}

#[test]
fn a_cancelled_locate_returns_flagged_instead_of_hanging() {
    let t = project();
    let cancel = CancelToken::new(None);
    cancel.cancel();
    let r = locate::run(
        t.path(),
        None,
        LocateOptions {
            query: "auth".into(),
            ..Default::default()
        },
        &cancel,
    )
    .unwrap();
    assert!(r.cancelled);
}

fn traced(root: &Path, query: &str) -> trace::TraceResult {
    let opts = TraceOptions {
        query: query.into(),
        ..Default::default()
    };
    trace::run(root, None, opts, &CancelToken::new(None)).unwrap()
}

#[test]
fn defined_finds_the_definition_in_any_identifier_form() {
    let t = project();
    let r = traced(t.path(), "subject:AuthStatus relation:defined kind:code");
    let best = &r.files[0];
    assert_eq!(best.path.text, "src/auth/mod.rs");
    assert_eq!(best.regions[0].kind.as_str(), "definition");
    assert!(
        r.text.contains("best answer likely in src/auth/mod.rs\n"),
        "{}",
        r.text
    );
    assert!(
        r.files
            .iter()
            .all(|f| !f.path.text.starts_with("docs/") && !f.path.text.starts_with("tests/")),
        "kind:code filters"
    );
}

#[test]
fn called_from_groups_call_sites_under_the_calling_function() {
    let t = project();
    let r = traced(t.path(), "subject:auth_status relation:called_from");
    assert_eq!(r.files[0].path.text, "src/ui/status_bar.rs", "{}", r.text);
    let region = &r.files[0].regions[0];
    assert_eq!(
        (region.kind.as_str(), region.label.as_str()),
        ("callsite", "function render_status_bar")
    );
    assert_eq!((region.start_line, region.end_line), (3, 6));
    assert!(
        region.full_region && region.body[1] == "4:     let s = auth_status();",
        "{:?}",
        region.body
    );
}

#[test]
fn trace_counts_its_reasons_in_words_not_in_brackets() {
    let t = project();
    let r = traced(t.path(), "subject:auth_status relation:called_from");
    assert!(
        !r.text.contains("occurrence(s)") && !r.text.contains("region(s)"),
        "{}",
        r.text
    );
    let why: Vec<&String> = r.files.iter().flat_map(|f| &f.why).collect();
    assert!(
        why.iter()
            .all(|w| !w.starts_with("1 occurrences") && !w.starts_with("1 regions")),
        "{why:?}"
    );
    assert!(
        why.iter()
            .any(|w| w.ends_with("occurrences of auth_status"))
            || why.iter().any(|w| w.starts_with("1 occurrence of")),
        "{why:?}"
    );
}

#[test]
fn populated_and_rendered_come_from_structure_and_names() {
    let t = project();
    let r = traced(t.path(), "subject:auth_status relation:populated");
    assert_eq!(r.files[0].path.text, "src/session.rs", "{}", r.text);
    assert_eq!(r.files[0].regions[0].kind.as_str(), "assignment");
    let r = traced(t.path(), "subject:auth_status relation:rendered");
    assert_eq!(r.files[0].path.text, "src/ui/status_bar.rs", "{}", r.text);
    assert_eq!(r.files[0].regions[0].kind.as_str(), "render-site");
    // `reset` holds `set` only as a substring: it is not named for `populated`'s words by accident.
    let r = traced(t.path(), "subject:session relation:set");
    assert!(
        r.files
            .iter()
            .flat_map(|f| &f.regions)
            .all(|g| !g.why.iter().any(|w| w.contains("named for"))),
        "{}",
        r.text
    );
}

#[test]
fn a_tree_without_known_languages_falls_back_to_word_matches_and_says_so() {
    let t = tree(&[
        ("notes.txt", "the frobnicator runs\nfrobnicator again\n"),
        ("other.cfg", "x = frobnicator\n"),
    ]);
    let r = traced(t.path(), "subject:frobnicator relation:defined");
    assert!(!r.structure_found);
    assert_eq!(r.files.len(), 2);
    assert!(
        r.text.contains("note: no structure was found"),
        "{}",
        r.text
    );
    let none = traced(t.path(), "subject:nothing_here relation:defined");
    assert!(none.files.is_empty());
    assert!(
        none.text
            .contains("no file mentions the subject (2 files searched)"),
        "{}",
        none.text
    );
}

#[test]
fn regions_are_capped_over_all_files() {
    let t = project();
    let opts = TraceOptions {
        query: "subject:auth_status relation:called_from".into(),
        max_files: 5,
        max_regions: 2,
        ..Default::default()
    };
    let r = trace::run(t.path(), None, opts, &CancelToken::new(None)).unwrap();
    assert_eq!(r.files.iter().map(|f| f.regions.len()).sum::<usize>(), 2);
}

#[test]
fn a_path_lacking_a_query_token_ranks_after_paths_that_have_them_all() {
    // On the Linux tree `kvm x86 mmu` put `kvm-x86-pmu-ops.h` first: three
    // name hits, and `mmu` "fuzzily" from the m of kvm and the mu of pmu.
    let t = tree(&[
        ("arch/x86/include/asm/kvm-x86-pmu-ops.h", "#define X 1\n"),
        ("drivers/ptp/ptp_kvm_x86.c", "int x;\n"),
        ("arch/x86/kvm/mmu/mmu.c", "int y;\n"),
    ]);
    let files = located(t.path(), "kvm x86 mmu");
    assert_eq!(files[0], "arch/x86/kvm/mmu/mmu.c", "{files:?}");
    // Still listed (ranked down, not out), and honest about why.
    assert_eq!(files.len(), 3, "{files:?}");
    let pmu = reasons_for(
        t.path(),
        "kvm x86 mmu",
        "arch/x86/include/asm/kvm-x86-pmu-ops.h",
    );
    assert!(pmu.iter().any(|w| w == "path lacks mmu"), "{pmu:?}");
}

#[test]
fn trace_prefers_the_exact_spelling_production_code_and_implementations() {
    let t = tree(&[
        // `_printk` is `printk` to the token layer; the macro is a definition
        // of `printk`, the function the one asked for.
        ("include/printk.h", "#define printk(fmt, ...) wrap(_printk, fmt)\nint _printk(const char *fmt, ...);\n"),
        ("kernel/printk.c", "int _printk(const char *fmt, ...)\n{\n\treturn 0;\n}\n"),
        // Prose never defines: this line has a C definition's shape.
        ("Documentation/printk.rst", "Using _printk() in the boot instance\n"),
        // Many calls in a test, one in production code.
        ("src/run.ts", "import { runTool } from './tool.mjs';\nexport function run() {\n  return runTool();\n}\n"),
        ("__test__/tool.spec.ts", "runTool();\nrunTool();\nrunTool();\nrunTool();\n"),
        ("src/tool.mjs", "export function runTool() {\n  return 1;\n}\n"),
        ("src/tool.d.mts", "export declare function runTool(): number;\n"),
    ]);
    let r = traced(t.path(), "subject:_printk relation:defined");
    assert_eq!(r.files[0].path.text, "kernel/printk.c", "{}", r.text);
    let docs = r.files.iter().find(|f| f.path.text.ends_with(".rst"));
    assert!(
        docs.is_none_or(|f| f.regions.iter().all(|g| g.kind.as_str() != "definition")),
        "{}",
        r.text
    );
    let r = traced(t.path(), "subject:run_tool relation:called_from");
    assert_eq!(r.files[0].path.text, "src/run.ts", "{}", r.text);
    assert!(r
        .files
        .iter()
        .any(|f| f.path.text == "__test__/tool.spec.ts"));
    let r = traced(t.path(), "subject:runTool relation:defined");
    assert_eq!(r.files[0].path.text, "src/tool.mjs", "{}", r.text);
}

mod prefilter {
    use super::super::locate_score::score_path;
    use super::super::query::Query;
    use proptest::prelude::*;

    /// Path pieces with the shapes that matter to the token layer: case
    /// changes, digits, separators, repeated letters, and non-ASCII (the
    /// Kelvin sign lower-cases to `k`).
    fn piece() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "auth",
            "Status",
            "sched",
            "fair",
            "FAIR",
            "tcp",
            "Cong",
            "cubic",
            "x86",
            "mmu",
            "k",
            "K",
            "\u{212A}vm",
            "ſched",
            "_",
            "-",
            ".",
            "/",
            "rs",
            "c",
            "mod",
            "index",
            "2",
            "aa",
            "cfg",
            "config",
            "dyn",
            "buf",
            "dynbuf",
            "con",
            "ctrl",
            "Control",
            "chunks",
            "chunked",
            "sc",
            "fr",
        ])
        .prop_map(str::to_string)
    }

    fn text(max: usize) -> impl Strategy<Value = String> {
        prop::collection::vec(piece(), 1..max).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        /// The byte prefilter only ever rules out paths that scoring would
        /// drop too: it can never lose a result.
        #[test]
        fn a_path_the_prefilter_rules_out_never_scores(query in text(4), rel in text(8)) {
            let rel = rel.trim_start_matches('/').to_string();
            let Ok(q) = Query::parse(&query) else { return Ok(()) };
            let mut scratch = Vec::new();
            if !q.may_match(rel.as_bytes(), &mut scratch) {
                let scored = score_path(&q, &rel, &mut q.matchers(), false);
                prop_assert!(scored.is_none(), "{query:?} scores {rel:?} but the prefilter ruled it out");
            }
        }

        /// The one automaton over every head and short form keeps exactly
        /// the paths that a search per form keeps.
        #[test]
        fn the_automaton_keeps_what_a_search_per_form_keeps(query in text(5), rel in text(10)) {
            let Ok(q) = Query::parse(&query) else { return Ok(()) };
            let mut scratch = Vec::new();
            prop_assert_eq!(
                q.may_match(rel.as_bytes(), &mut scratch),
                q.may_match_by_searches(rel.as_bytes()),
                "{:?} on {:?}", query, rel
            );
        }
    }

    #[test]
    fn the_prefilter_rules_out_paths_without_the_letters() {
        let q = Query::parse("sched fair").unwrap();
        let mut scratch = Vec::new();
        assert!(!q.may_match(b"drivers/net/ethernet/intel/e1000.c", &mut scratch));
        assert!(q.may_match(b"kernel/sched/fair.c", &mut scratch));
        // Letters in order but not whole: fuzzy scoring decides.
        assert!(q.may_match(b"s/c/h/e/d/f/a/i/r.c", &mut scratch));
        // A short form of one word alone scores nothing (`sc`, `fr`); of
        // two it may be a name token holding both.
        assert!(!q.may_match(b"drivers/scsi/hosts.c", &mut scratch));
        assert!(!q.may_match(b"include/linux/frame.h", &mut scratch));
        assert!(q.may_match(b"lib/scfr.c", &mut scratch));
        let q = Query::parse("dynamic buffer").unwrap();
        assert!(q.may_match(b"lib/dynbuf.c", &mut scratch));
        assert!(q.may_match(b"lib/buffer_head.c", &mut scratch));
        assert!(!q.may_match(b"lib/dyn.c", &mut scratch));
    }

    /// A possessive or a contraction adds no word (`s`, `t`), while a
    /// leading quote (`'exact`) and a name (`O'Reilly`) keep theirs.
    #[test]
    fn what_follows_an_apostrophe_in_a_word_is_no_word() {
        let q = Query::parse("map an author\u{2019}s old name, the user's email").unwrap();
        assert_eq!(q.tokens, ["map", "author", "old", "name", "user", "email"]);
        let q = Query::parse("status code isn't 2xx").unwrap();
        assert!(!q.tokens.iter().any(|t| t == "t"), "{:?}", q.tokens);
        let q = Query::parse("'exact terms by O'Reilly").unwrap();
        assert!(q.tokens.iter().any(|t| t == "exact"), "{:?}", q.tokens);
        assert!(q.tokens.iter().any(|t| t == "reilly"), "{:?}", q.tokens);
    }
}

/// Issue 29: a collapsed view (20 lines) showed only file #1's reasons; the
/// text now leads with the ranked files, one line each, then the details.
#[test]
fn locate_and_trace_lead_with_the_ranked_list() {
    let t = project();
    let opts = LocateOptions {
        query: "auth status".into(),
        ..Default::default()
    };
    let a = locate::run(t.path(), None, opts, &CancelToken::new(None)).unwrap();
    let list: String = a
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let lang = f
                .language
                .map(|l| format!(", {}", l.name()))
                .unwrap_or_default();
            format!("{}. {} ({}{lang})\n", i + 1, f.path.text, f.role.as_str())
        })
        .collect();
    let head = format!(
        "query: auth status\ntop files: {}\n{list}\n1. ",
        a.files.len()
    );
    assert!(a.text.starts_with(&head), "{}", a.text);
    let r = traced(t.path(), "subject:AuthStatus relation:defined kind:code");
    assert!(
        r.text
            .contains("best answer likely in src/auth/mod.rs\n1. src/auth/mod.rs (code, rust)\n"),
        "{}",
        r.text
    );
}

#[test]
fn a_path_lacking_a_query_word_is_never_said_to_be_named_whole_by_the_query() {
    // Seen in Pi: `pool manager` listed `pool.rs` with "the query names the
    // whole file" beside "path lacks manager".
    let t = tree(&[
        ("src/pool.rs", "fn x() {}\n"),
        ("src/cache.rs", "fn y() {}\n"),
    ]);
    let why = reasons_for(t.path(), "pool manager", "src/pool.rs");
    assert!(why.iter().any(|w| w == "path lacks manager"), "{why:?}");
    assert!(
        !why.iter().any(|w| w == "the query names the whole file"),
        "{why:?}"
    );
    let plain = "every word of the file name is in the query";
    assert!(why.iter().any(|w| w == plain), "{why:?}");
    // With every word in the path, the whole-file reason stands.
    let why = reasons_for(t.path(), "pool", "src/pool.rs");
    assert!(
        why.iter().any(|w| w == "the query names the whole file"),
        "{why:?}"
    );
}

/// Without an index a project past the index's read bound (4,000 files)
/// is still ranked by its text: a walked git tree (4,843 files) had been
/// ranked by path alone (issue 45).
#[test]
fn a_walked_project_of_thousands_of_files_is_ranked_by_its_text() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..4_100 {
        let dir = t.path().join(format!("src/d{}", i / 100));
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join(format!("f{i}.c")),
            format!("int value_{i} = {i};\n"),
        )
        .unwrap();
    }
    fs::write(
        t.path().join("src/ident.c"),
        "/* map an author to the canonical name and email the mailmap gives */\nint canonical_author(void);\n",
    )
    .unwrap();
    let opts = LocateOptions {
        query: "canonical author mailmap".into(),
        ..Default::default()
    };
    let r = locate::run(t.path(), None, opts, &CancelToken::new(None)).unwrap();
    assert!(r.content_note.is_none(), "{}", r.text);
    assert_eq!(r.files[0].path.text, "src/ident.c", "{}", r.text);
}

/// "The query names the whole file" only when it does: `queryparams.py` is
/// named by `QueryParams` (its words written together), the `test` of
/// `test_queryparams.py` is not (the evaluation's why-line check found the
/// reason given to both).
#[test]
fn a_name_holding_the_query_written_together_is_not_named_whole_by_it() {
    let t = tree(&[
        ("httpx/queryparams.py", "class QueryParams:\n    pass\n"),
        (
            "tests/test_queryparams.py",
            "def test_queryparams():\n    QueryParams()\n",
        ),
    ]);
    let whole = "the query names the whole file";
    let why = reasons_for(t.path(), "QueryParams", "httpx/queryparams.py");
    assert!(why.iter().any(|w| w == whole), "{why:?}");
    let why = reasons_for(t.path(), "QueryParams", "tests/test_queryparams.py");
    assert!(!why.iter().any(|w| w == whole), "{why:?}");
}
