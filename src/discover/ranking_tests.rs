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

/// Issue 45's fixture: a C file with a prototype, its definition, a
/// recursive call and a call of a longer name holding the subject; a
/// struct of functions; a caller elsewhere; a JS file and its test; docs.
fn issue_45_tree() -> tempfile::TempDir {
    tree(&[
        (
            "lib/cookie.c",
            "#include \"cookie.h\"\n\nstatic int cookie_add(struct jar *j, const char *line);\n\nstatic int __cookie_add(struct jar *j) {\n  return 0;\n}\n\nstatic int cookie_add(struct jar *j, const char *line) {\n  if (!line)\n    return cookie_add(j, \"\");\n  return __cookie_add(j);\n}\n\nint cookie_load(struct jar *j) {\n  return cookie_add(j, \"a=b\");\n}\n\nconst struct store_ops cookie_ops = {\n  .load = cookie_load,\n};\n".into(),
        ),
        (
            "lib/http.c",
            "#include \"cookie.h\"\n\nstatic int http_header(struct jar *j, const char *v) {\n  return cookie_add(j, v);\n}\n".into(),
        ),
        (
            "lib/store.h",
            "struct store_ops {\n  int (*load)(struct jar *j);\n};\n".into(),
        ),
        (
            "src/tool_parsecfg.c",
            "int parseconfig(const char *filename) {\n  return read_file(filename);\n}\n".into(),
        ),
        (
            // Says more of the question than its source: without the
            // header rule it ranks first.
            "src/tool_parsecfg.h",
            "/* Parse the config file: each line of the file is one option. */\nint parseconfig(const char *filename);\n".into(),
        ),
        (
            "lib/response.js",
            "var res = module.exports = {};\n\nres.cookie = function (name, value) {\n  return this.set('Set-Cookie', name + '=' + value);\n};\n".into(),
        ),
        (
            "test/res.cookie.js",
            "describe('res', function () {\n  it('should set a cookie on the response', function () {\n    res.cookie('a', 'b');\n  });\n});\n".into(),
        ),
        (
            "docs/cookies.md",
            "# Cookies\n\nSet a cookie on the response with `res.cookie()`.\n".into(),
        ),
    ])
}

/// Each `why` line of locate and trace checked against the file's path,
/// text and outline: a reason an agent trusts must be true (issue 45). A
/// new kind of reason fails here until it is checked too.
#[test]
fn every_why_line_is_true_of_its_file() {
    use super::tokens;
    let t = issue_45_tree();
    let read = |p: &str| fs::read_to_string(t.path().join(p)).unwrap().to_lowercase();
    let path_tokens = |p: &str| tokens::split(p);
    let name_tokens = |p: &str| tokens::split(p.rsplit('/').next().unwrap());
    let list = |s: &str| -> Vec<String> { s.split(", ").map(str::to_string).collect() };
    for query in [
        "set a cookie on the response",
        "parse config file",
        "cookie_add",
        "cookie jar",
        "how are cookies loaded",
        // Six words: files holding three come in.
        "load struct jar store value header",
    ] {
        let opts = LocateOptions {
            query: query.into(),
            ..Default::default()
        };
        let r = locate::run(t.path(), None, opts, &CancelToken::new(None)).unwrap();
        assert!(!r.files.is_empty(), "{query}");
        for f in &r.files {
            let p = f.path.text.as_str();
            let text = read(p);
            let outline = crate::structure::Language::from_path(Path::new(p))
                .map(|l| crate::structure::outline(l, text.as_bytes()));
            for w in &f.why {
                let ok = if let Some(x) = w.strip_prefix("file name matches ") {
                    list(x)
                        .iter()
                        .all(|q| name_tokens(p).iter().any(|n| n.starts_with(q.as_str())))
                } else if let Some(x) = w.strip_prefix("file name has ") {
                    list(x).iter().all(|pair| {
                        let (form, word) = pair.split_once(" for ").unwrap();
                        name_tokens(p).iter().any(|n| n == form)
                            && (tokens::related_word(word, form)
                                || !tokens::joined_words(form, &tokens::split(query)).is_empty())
                    })
                } else if let Some(x) = w.strip_prefix("directory matches ") {
                    let dir = p.rsplit_once('/').map_or("", |d| d.0);
                    list(x)
                        .iter()
                        .all(|q| path_tokens(dir).iter().any(|n| n.starts_with(q.as_str())))
                } else if let Some(x) = w.strip_prefix("path lacks ") {
                    list(x)
                        .iter()
                        .all(|q| !path_tokens(p).iter().any(|n| n.starts_with(q.as_str())))
                } else if let Some(x) = w.strip_prefix("text has ") {
                    // As written: `getRootCause` says cause.
                    let said = tokens::split(&fs::read_to_string(t.path().join(p)).unwrap());
                    list(x)
                        .iter()
                        .all(|word| said.iter().any(|n| tokens::word_meets(word, n)))
                } else if let Some(x) = w
                    .strip_prefix("text defines ")
                    .or(w.strip_prefix("text names "))
                {
                    text.contains(&x.split(' ').next().unwrap().to_lowercase())
                } else if let Some(x) = w.strip_prefix("defines ") {
                    // `defines function cookie_add @ 9-13 (...)`
                    let mut parts = x.split(' ');
                    let (_kind, name, _at, lines) = (
                        parts.next(),
                        parts.next().unwrap(),
                        parts.next(),
                        parts.next().unwrap(),
                    );
                    let (a, b) = lines.split_once('-').unwrap();
                    outline.as_ref().is_some_and(|o| {
                        o.symbols.iter().any(|s| {
                            s.name == name
                                && s.start_line.to_string() == a
                                && s.end_line.to_string() == b
                        })
                    })
                } else if w == "every word of the file name is in the query"
                    || w == "the query names the whole file"
                {
                    let q = tokens::split(query);
                    let stem = p.rsplit('/').next().unwrap().split('.').next().unwrap();
                    tokens::split(stem).iter().all(|n| {
                        q.iter()
                            .any(|t| n.starts_with(t.as_str()) || tokens::related_word(t, n))
                            || q.iter()
                                .any(|t| tokens::joined_words(n, &q).contains(&t.as_str()))
                    })
                } else if let Some(x) = w.strip_suffix(" file: ranked down") {
                    f.role.as_str() == x
                } else if let Some(rest) = w.strip_prefix("header: ranked after ") {
                    // `tool_parsecfg.h` after `tool_parsecfg.c`, listed above it.
                    let source = rest.strip_suffix(", the source of its name").unwrap();
                    fn stem(p: &str) -> &str {
                        p.rsplit('/').next().unwrap().rsplit_once('.').unwrap().0
                    }
                    p.ends_with(".h")
                        && source.ends_with(".c")
                        && stem(p) == stem(source)
                        && r.files
                            .iter()
                            .any(|o| o.path.text == source && o.score > f.score)
                } else if let Some((role, rest)) = w.split_once(" file: ranked after ") {
                    let (other, named) = match rest.strip_suffix(", the code it is named for") {
                        Some(other) => (other, true),
                        None => (
                            rest.strip_suffix(", code on the same words").unwrap(),
                            false,
                        ),
                    };
                    // `LinkedTreeMapSuiteTest.java` is named for `LinkedTreeMap.java`.
                    let stem = |p: &str| {
                        let name = p.rsplit('/').next().unwrap();
                        tokens::split(name.rsplit_once('.').map_or(name, |(s, _)| s))
                    };
                    f.role.as_str() == role
                        && (!named || tokens::contains_run(&stem(p), &stem(other)))
                        && r.files.iter().any(|o| {
                            o.path.text == other && o.role.as_str() == "code" && o.score > f.score
                        })
                } else {
                    w.starts_with("fuzzy match for ")
                };
                assert!(
                    ok,
                    "{query}: {p}: false or unchecked why line {w:?}\n{}",
                    r.text
                );
            }
        }
    }
    for query in [
        "subject:cookie_add relation:called_from",
        "subject:cookie_add relation:defined",
        "subject:cookie_ops relation:defined",
        "subject:store_ops relation:implementation",
    ] {
        let opts = TraceOptions {
            query: query.into(),
            max_regions: 100,
            ..Default::default()
        };
        let r = trace::run(t.path(), None, opts, &CancelToken::new(None)).unwrap();
        let subject = r.query.as_ref().unwrap().subject.clone();
        for f in &r.files {
            let text = read(&f.path.text);
            let count = |kind: &str| f.regions.iter().filter(|g| g.kind.as_str() == kind).count();
            for w in &f.why {
                let n: usize = w.split(' ').next().unwrap().parse().unwrap_or(usize::MAX);
                let ok = if w.ends_with("call site region") || w.ends_with("call site regions") {
                    count("callsite") == n
                } else if w.ends_with("definition region") || w.ends_with("definition regions") {
                    count("definition") == n
                } else if w.ends_with("assignment region") || w.ends_with("assignment regions") {
                    count("assignment") == n
                } else if w.ends_with(&format!(" of {subject}")) {
                    n > 0 && text.contains(&subject.to_lowercase())
                } else if w == "the path names the subject" {
                    tokens::contains_run(&tokens::split(&f.path.text), &tokens::split(&subject))
                } else if let Some(x) = w.strip_suffix(" file: ranked down") {
                    f.role.as_str() == x
                } else {
                    false
                };
                assert!(
                    ok,
                    "{query}: {}: false or unchecked why line {w:?}\n{}",
                    f.path.text, r.text
                );
            }
            for g in &f.regions {
                let body = g.body.join("\n").to_lowercase();
                for w in &g.why {
                    let ok = if w == "defines the subject" {
                        g.label.ends_with(&format!(" {subject}"))
                    } else if w.starts_with("calls the subject") {
                        body.contains(&format!("{}(", subject.to_lowercase()))
                    } else if *w == format!("named exactly {subject}") {
                        g.label.ends_with(&format!(" {subject}"))
                    } else if w.ends_with("implements the subject") || w.ends_with("of the subject")
                    {
                        body.contains(&subject.to_lowercase())
                    } else if w.starts_with("assigns the subject") {
                        body.contains(&format!("{} =", subject.to_lowercase()))
                            || body.contains(&format!("{}:", subject.to_lowercase()))
                    } else {
                        w == "a declaration without a body" || w == "a type alias"
                    };
                    assert!(
                        ok,
                        "{query}: {} {}: false why {w:?}\n{}",
                        f.path.text, g.label, r.text
                    );
                }
            }
        }
    }
}

/// Issue 45: in Linux, `handle_mm_fault`'s definition (which calls
/// `__handle_mm_fault`) was the best answer to "who calls it". A region
/// that defines the subject is never a call site, recursion and longer
/// names holding the subject included; the outside caller is the answer.
#[test]
fn no_definition_is_shown_as_a_call_site() {
    let t = issue_45_tree();
    let r = traced(t.path(), "subject:cookie_add relation:called_from", 5);
    for f in &r.files {
        for g in &f.regions {
            let defines = g.label.ends_with(" cookie_add") || g.label.ends_with(" __cookie_add");
            assert!(!(defines && g.kind.as_str() == "callsite"), "{}", r.text);
        }
    }
    let callers: Vec<&str> = (r.files.iter())
        .flat_map(|f| f.regions.iter().filter(|g| g.kind.as_str() == "callsite"))
        .map(|g| g.label.as_str())
        .collect();
    assert!(callers.contains(&"function http_header"), "{}", r.text);
    assert!(callers.contains(&"function cookie_load"), "{}", r.text);
    // The struct of functions is the implementation of its type; a C
    // variable defined at file scope is named in its region's label.
    let r = traced(t.path(), "subject:store_ops relation:implementation", 5);
    assert_eq!(r.files[0].path.text, "lib/cookie.c", "{}", r.text);
    assert_eq!(
        r.files[0].regions[0].kind.as_str(),
        "implementation",
        "{}",
        r.text
    );
    let r = traced(t.path(), "subject:cookie_ops relation:defined", 5);
    assert_eq!(
        r.files[0].regions[0].label, "variable cookie_ops",
        "{}",
        r.text
    );
    assert_eq!(
        r.files[0].regions[0].kind.as_str(),
        "definition",
        "{}",
        r.text
    );
}

/// Issue 45, classes 1, 2 and 4 on the fixture: function words cost
/// nothing, `cfg` is config, and a test naming the topic stays below the
/// code.
#[test]
fn a_natural_question_finds_the_code_before_its_test() {
    let t = issue_45_tree();
    let (files, text) = located(t.path(), "set a cookie on the response");
    assert_eq!(
        files.first().map(String::as_str),
        Some("lib/response.js"),
        "{text}"
    );
    let code = files.iter().position(|f| f == "lib/response.js").unwrap();
    let test = files
        .iter()
        .position(|f| f == "test/res.cookie.js")
        .unwrap();
    assert!(code < test, "{files:?}");
    let (files, text) = located(t.path(), "parse config file");
    assert_eq!(
        files.first().map(String::as_str),
        Some("src/tool_parsecfg.c"),
        "{text}"
    );
    assert!(text.contains("file name has parsecfg for config"), "{text}");
}

/// A C header that says more of the question than its source still comes
/// after it, and says why (issue 45: `dir.h`, `dynbuf.h`, `hub.h` and
/// `tool_parsecfg.h` above the file that defines what they declare).
#[test]
fn a_header_never_outranks_the_source_of_its_name() {
    let t = issue_45_tree();
    let (files, text) = located(t.path(), "parse config file");
    assert_eq!(
        files.iter().take(2).map(String::as_str).collect::<Vec<_>>(),
        ["src/tool_parsecfg.c", "src/tool_parsecfg.h"],
        "{text}"
    );
    assert!(
        text.contains("header: ranked after src/tool_parsecfg.c, the source of its name"),
        "{text}"
    );
}

#[test]
fn a_test_named_for_a_code_file_never_outranks_it() {
    // The test's name and text say more words of the question than the
    // code's, which lacks `keeps`, `insertion` and `order`: its name, not
    // its words, says what the test is about (issue 45: gson's `LinkedTreeMapSuiteTest.java` above
    // `LinkedTreeMap.java`).
    let t = tree(&[
        (
            "src/main/java/x/LinkedTreeMap.java",
            "/** A map of comparable keys. */\npublic final class LinkedTreeMap<K, V> {\n  Node<K, V> root;\n}\n".into(),
        ),
        (
            "src/test/java/x/LinkedTreeMapKeepsOrderTest.java",
            "/** The tree map keeps insertion order: every suite of the map tests. */\npublic class LinkedTreeMapSuiteTest {\n  // keeps insertion order; tree map; keeps order\n}\n".into(),
        ),
        ("src/main/java/x/Other.java", "class Other {}\n".into()),
    ]);
    let (files, text) = located(t.path(), "tree map that keeps insertion order");
    assert_eq!(
        files.first().map(String::as_str),
        Some("src/main/java/x/LinkedTreeMap.java"),
        "{text}"
    );
    assert!(
        text.contains(
            "test file: ranked after src/main/java/x/LinkedTreeMap.java, the code it is named for"
        ),
        "{text}"
    );
}

#[test]
fn a_trace_shows_each_files_regions_before_its_reasons_and_structure() {
    let t = issue_45_tree();
    let r = traced(t.path(), "subject:cookie_add relation:called_from", 5);
    let at = r.text.find("\n1. ").expect("a file");
    let block = &r.text[at..];
    let regions = block.find("   regions:").expect("regions");
    let why = block.find("   why:").expect("why");
    assert!(regions < why, "{}", r.text);
}
#[test]
fn a_symbol_spelling_every_word_outranks_a_file_named_by_some_of_them() {
    let adapter = "public abstract class TypeAdapter<T> {\n  // registerTypeAdapter registerTypeAdapter registerTypeAdapter\n  // registerTypeAdapter registerTypeAdapter: a type adapter\n  public abstract T read(Object in);\n}\n";
    let builder = "public final class GsonBuilder {\n  public GsonBuilder registerTypeAdapter(Object type, Object adapter) {\n    factories.add(adapter);\n    return this;\n  }\n}\n";
    let t = tree(&[
        ("src/TypeAdapter.java", adapter.into()),
        ("src/GsonBuilder.java", builder.into()),
    ]);
    let (files, text) = located(t.path(), "register type adapter");
    assert_eq!(
        files.first().map(String::as_str),
        Some("src/GsonBuilder.java"),
        "{text}"
    );
    assert!(text.contains("defines method"), "{text}");
}

#[test]
fn a_module_declared_in_one_line_does_not_outrank_its_file() {
    let t = tree(&[
        (
            "src/search/mod.rs",
            "//! search\nmod rules_cache;\nmod walk;\npub use rules_cache::Cached;\n// rules and cache\n".into(),
        ),
        (
            "src/search/rules_cache.rs",
            "//! the rules, cached\npub struct Cached {\n    rules: Vec<u8>,\n}\n".into(),
        ),
        ("src/search/walk.rs", "//! walk\npub fn walk() {}\n".into()),
    ]);
    let (files, text) = located(t.path(), "RulesCache");
    assert_eq!(
        files.first().map(String::as_str),
        Some("src/search/rules_cache.rs"),
        "{text}"
    );
    assert!(!text.contains("defines module rules_cache"), "{text}");
}

/// The file tree of a long question whose answer never says one of its
/// words (issue 45's held-out sets: `ExceptionUtils.java` for "the
/// innermost cause of a chain of wrapped throwables").
fn long_question_tree(changelog: bool) -> tempfile::TempDir {
    let mut files = vec![
        (
            "src/exceptions.java",
            "class ExceptionUtils {\n  static Throwable getRootCause(Throwable throwable) {\n    // follow the chain of wrapped causes\n    return throwable;\n  }\n}\n".to_string(),
        ),
        ("src/strings.java", "class StringUtils { String chain; }\n".into()),
        ("src/other.java", "class Other {}\n".into()),
    ];
    if changelog {
        files.push((
            "CHANGELOG.md",
            "- find the innermost cause of a chain of wrapped throwables\n".into(),
        ));
    }
    tree(&files)
}

#[test]
fn a_long_questions_answer_need_not_say_every_word() {
    let t = long_question_tree(false);
    let q = "find the innermost cause of a chain of wrapped throwables";
    let (files, text) = located(t.path(), q);
    assert_eq!(files, ["src/exceptions.java"], "{text}");
    assert!(
        text.contains("text has cause, chain, wrapped, throwables"),
        "{text}"
    );
}

#[test]
fn what_a_changelog_says_counts_half_beside_the_code() {
    let t = long_question_tree(true);
    let q = "find the innermost cause of a chain of wrapped throwables";
    let (files, text) = located(t.path(), q);
    assert_eq!(files, ["src/exceptions.java", "CHANGELOG.md"], "{text}");
}

/// Issue 45, class 3: a huge file saying every word hundreds of times
/// does not outrank the small file that is about the topic (counts
/// saturate, and less in a long file).
#[test]
fn a_small_file_on_the_topic_outranks_a_huge_one_saying_the_words_more() {
    let small = "/* jitter and backoff before the next delay */\n\
                 int next_delay(int n) { return backoff(n) + jitter(n); }\n\
                 int backoff(int n) { return n * 2; } /* backoff delay */\n\
                 int jitter(int n) { return n % 7; } /* jitter delay jitter backoff delay jitter backoff */\n";
    let mut big = String::new();
    for i in 0..20_000 {
        big.push_str(&format!("int step_{i}(int x) {{ return x + {i}; }}\n"));
        if i % 66 == 0 {
            big.push_str("/* jitter backoff delay */\n");
        }
    }
    let t = tree(&[("src/timing.c", small.into()), ("src/engine.c", big)]);
    let (files, text) = located(t.path(), "jitter backoff delay");
    assert_eq!(
        files.first().map(String::as_str),
        Some("src/timing.c"),
        "{text}"
    );
}

/// Issue 45, class 1: a word few files hold says more than one most files
/// hold, so the file saying `csrf` twice outranks the one saying
/// `response` forty times.
#[test]
fn a_rare_word_counts_more_than_a_common_one() {
    let guard =
        "// csrf: the cookie is checked\nexport const guard = (csrf, cookie) => csrf === cookie;\n";
    let reply = format!(
        "// the cookie of the response\nexport const reply = (cookie) => cookie;\n{}",
        "// response\n".repeat(40)
    );
    let t = tree(&[("src/guard.js", guard.into()), ("src/reply.js", reply)]);
    let (files, text) = located(t.path(), "csrf cookie response");
    assert_eq!(
        files.first().map(String::as_str),
        Some("src/guard.js"),
        "{text}"
    );
}

/// jekyll: every `.rb` file under a directory the query named had "file
/// name has rb for rebuilt": the extension read as a word written short.
#[test]
fn a_file_extension_is_no_word_written_short() {
    let t = tree(&[
        ("lib/pages/site.rb", "def process\n  render\nend\n".into()),
        (
            "lib/pages/cache.rb",
            "# pages are rebuilt when their source changes\ndef rebuilt?\nend\n".into(),
        ),
    ]);
    let (paths, text) = located(t.path(), "which pages are rebuilt");
    assert!(!text.contains("rb for rebuilt"), "{text}");
    assert_eq!(paths[0], "lib/pages/cache.rb", "{text}");
}

#[test]
fn a_file_saying_a_quoted_phrase_ranks_first_and_shows_where() {
    let reporter = format!(
        "public class Reporter {{\n{}    public void unfinishedStubbing() {{\n        throw new X(\"Unfinished stubbing\\n   detected here\");\n    }}\n}}\n",
        "    public void other() {}\n".repeat(30)
    );
    let t = tree(&[
        (
            "src/Stubbing.java",
            "public interface Stubbing { void detected(); }\n".into(),
        ),
        ("src/Reporter.java", reporter),
        (
            "src/Unfinished.java",
            "class Unfinished { String stubbing; String detected; }\n".into(),
        ),
        (
            "test/ReporterTest.java",
            "class ReporterTest { String m = \"unfinished stubbing detected\"; }\n".into(),
        ),
    ]);
    let (files, text) = located(
        t.path(),
        "where is the 'Unfinished stubbing detected' error",
    );
    assert_eq!(
        files.first().map(String::as_str),
        Some("src/Reporter.java"),
        "{text}"
    );
    assert!(
        text.contains("- text says \"Unfinished stubbing detected\" @ 33\n"),
        "{text}"
    );
    assert!(
        text.contains("method unfinishedStubbing @ 32-34"),
        "the hit's method is shown: {text}"
    );
    let test_at = files.iter().position(|f| f == "test/ReporterTest.java");
    assert!(
        test_at.is_some_and(|i| i > 0),
        "a test saying it comes later: {text}"
    );
    // Unquoted, the same words earn no phrase.
    let (_, text) = located(t.path(), "where is the Unfinished stubbing detected error");
    assert!(!text.contains("text says"), "{text}");
}
