//! The ranking rules of issue 30, each on a small tree made on the fly:
//! files found by what they say, a definer before a mention, a trace's
//! best answer that does not move with `max_files`, benchmarks ranked like
//! tests, and definitions never counted as call sites.

use super::locate::{self, LocateOptions};
use super::trace::{self, TraceOptions};
use crate::search::CancelToken;
use std::fs;
use std::path::Path;

fn tree(files: &[(&str, String)]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = t.path().join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    t
}

fn located(root: &Path, query: &str) -> (Vec<String>, String) {
    let opts = LocateOptions {
        query: query.into(),
        ..Default::default()
    };
    let r = locate::run(root, None, opts, &CancelToken::new(None)).unwrap();
    (r.files.into_iter().map(|f| f.path.text).collect(), r.text)
}

fn traced(root: &Path, query: &str, max_files: usize) -> trace::TraceResult {
    let opts = TraceOptions {
        query: query.into(),
        max_files,
        ..Default::default()
    };
    trace::run(root, None, opts, &CancelToken::new(None)).unwrap()
}

#[test]
fn a_file_named_by_nothing_but_its_contents_is_found() {
    let t = tree(&[
        ("options.go", "package x\n\ntype Options struct{ smart bool }\n\nfunc (o *Options) CaseSmart() bool {\n\treturn o.smart\n}\n".into()),
        ("main.go", "package x\n\nfunc main() {}\n".into()),
        ("README.md", "# x\n".into()),
    ]);
    let (files, text) = located(t.path(), "smart_case");
    assert_eq!(
        files.first().map(String::as_str),
        Some("options.go"),
        "{text}"
    );
    assert!(text.contains("defines method Options.CaseSmart"), "{text}");
    // A word the text lacks brings nothing in.
    let (files, _) = located(t.path(), "frobnicate");
    assert!(files.is_empty(), "{files:?}");
}

#[test]
fn the_file_defining_the_symbol_beats_files_that_only_name_it() {
    let calls = "r = client.get(url)\nr.raise_for_status()\n".repeat(6);
    let t = tree(&[
        ("pkg/_client.py", format!("def send(client, url):\n{calls}")),
        ("pkg/_models.py", "class Response:\n    def raise_for_status(self):\n        if self.bad:\n            raise Error()\n".into()),
        ("pkg/raise_helpers.py", "def status():\n    return 1\n".into()),
    ]);
    let (files, text) = located(t.path(), "raise_for_status");
    assert_eq!(
        files.first().map(String::as_str),
        Some("pkg/_models.py"),
        "{text}"
    );
    assert!(files.contains(&"pkg/_client.py".to_string()), "{files:?}");
}

#[test]
fn trace_names_the_same_best_file_whatever_max_files_is() {
    // Twelve files whose lines look like definitions to the text pass
    // (`class Router` in comments) but hold none: a shortlist sized by
    // max_files (10 for up to 5) never parsed src/router.ts.
    let mut files: Vec<(String, String)> = (0..12)
        .map(|i| {
            (
                format!("lib/use{i}.ts"),
                "// class Router in use\n".repeat(10),
            )
        })
        .collect();
    files.push((
        "src/router.ts".into(),
        "export interface Router {\n  add(path: string): void\n}\n".into(),
    ));
    let files: Vec<(&str, String)> = files.iter().map(|(p, s)| (p.as_str(), s.clone())).collect();
    let t = tree(&files);
    for max_files in [1, 3, 5, 12, 30] {
        let r = traced(
            t.path(),
            "subject:Router relation:implementation",
            max_files,
        );
        assert_eq!(
            r.files[0].path.text, "src/router.ts",
            "max_files {max_files}: {}",
            r.text
        );
    }
}

#[test]
fn benchmarks_and_examples_rank_like_tests() {
    let router = "export class Router {\n  add(path: string) {\n    return path\n  }\n}\n";
    let t = tree(&[
        ("benchmarks/router.ts", router.into()),
        ("examples/router.ts", router.into()),
        ("src/lib/router.ts", router.into()),
    ]);
    let (files, text) = located(t.path(), "router");
    assert_eq!(files[0], "src/lib/router.ts", "{text}");
    assert!(text.contains("bench file: ranked down"), "{text}");
    assert!(text.contains("example file: ranked down"), "{text}");
    let r = traced(t.path(), "subject:Router relation:implementation", 5);
    assert_eq!(r.files[0].path.text, "src/lib/router.ts", "{}", r.text);
    assert_eq!(r.files.len(), 3, "ranked down, not out");
}

#[test]
fn a_definition_is_never_a_call_site() {
    let t = tree(&[
        (
            "client.go",
            "package x\n\nfunc (c *Client) AuthStatus() bool {\n\treturn true\n}\n".into(),
        ),
        (
            "session.js",
            "class Session {\n  authStatus() {\n    return 1\n  }\n}\n".into(),
        ),
        (
            "ui.go",
            "package x\n\nfunc render(c *Client) {\n\tc.AuthStatus()\n}\n".into(),
        ),
    ]);
    let r = traced(t.path(), "subject:AuthStatus relation:called_from", 5);
    assert_eq!(r.files[0].path.text, "ui.go", "{}", r.text);
    for f in r.files.iter().filter(|f| f.path.text != "ui.go") {
        assert!(
            f.regions.iter().all(|g| g.kind.as_str() != "callsite"),
            "{}: {:?}",
            f.path.text,
            f.regions
        );
    }
}
