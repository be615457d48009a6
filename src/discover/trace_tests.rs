//! trace's regions on code shaped like the held-out repositories of issue 45
//! (rich, bat, axios, ky, commons-lang): which region answers, and that every
//! label and reason said of it is true of the file.

use super::tests::tree;
use super::trace::{self, TraceResult};
use crate::search::CancelToken;
use std::path::Path;

pub(super) fn traced(root: &Path, query: &str) -> TraceResult {
    let opts = trace::TraceOptions {
        query: query.into(),
        ..Default::default()
    };
    trace::run(root, None, opts, &CancelToken::new(None)).unwrap()
}

pub(super) fn best(r: &TraceResult) -> (&str, &str, &str) {
    let f = &r.files[0];
    let g = &f.regions[0];
    (f.path.text.as_str(), g.kind.as_str(), g.label.as_str())
}

/// rich: `Style.parse(...)` is a call of `parse`, not of the private
/// `_parse` that `render` calls.
#[test]
fn a_call_without_the_subjects_underscore_is_no_call_of_it() {
    let many = "    Style.parse(\"bold\")\n".repeat(6);
    let t = tree(&[
        (
            "rich/markup.py",
            "def _parse(markup):\n    yield markup\n\n\ndef render(markup):\n    for tag in _parse(markup):\n        print(tag)\n",
        ),
        (
            "rich/style.py",
            &format!("class Style:\n    @classmethod\n    def parse(cls, text):\n        return cls()\n\n\ndef demo():\n{many}"),
        ),
    ]);
    let r = traced(t.path(), "subject:_parse relation:called_from");
    assert_eq!(
        best(&r),
        ("rich/markup.py", "callsite", "function render"),
        "{}",
        r.text
    );
    let style = r.files.iter().find(|f| f.path.text == "rich/style.py");
    assert!(
        style.is_none_or(|f| f.regions.iter().all(|g| g.kind.as_str() != "callsite")),
        "{}",
        r.text
    );
}

/// bat: `src/diff.rs` calls `get_git_diff` three times, all in its own
/// `#[test]`s; the caller is `src/controller.rs`.
#[test]
fn a_test_inside_a_code_file_does_not_outrank_the_production_caller() {
    let t = tree(&[
        (
            "src/diff.rs",
            "pub fn get_git_diff(p: &str) -> Option<u8> {\n    p.parse().ok()\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn diff_is_calculated_correctly() {\n        let a = get_git_diff(\"1\");\n        let b = get_git_diff(\"2\");\n        let c = get_git_diff(\"3\");\n        assert!(a < b && b < c);\n    }\n}\n",
        ),
        (
            "src/controller.rs",
            "use crate::diff::get_git_diff;\n\nfn print_input(path: &str) {\n    let diff = get_git_diff(path);\n    drop(diff);\n}\n",
        ),
    ]);
    let r = traced(t.path(), "subject:get_git_diff relation:called_from");
    assert_eq!(
        best(&r),
        ("src/controller.rs", "callsite", "function print_input"),
        "{}",
        r.text
    );
    let diff = r
        .files
        .iter()
        .find(|f| f.path.text == "src/diff.rs")
        .unwrap();
    let test = (diff.regions.iter())
        .find(|g| g.label == "function diff_is_calculated_correctly")
        .expect("the test's calls are still shown");
    assert!(
        test.why.iter().any(|w| w == "inside a test: ranked down"),
        "{:?}",
        test.why
    );
}

/// axios: `dispatchRequest.call(this, config)` calls it; the file that only
/// defines it is never the best answer to who calls it.
#[test]
fn a_function_called_through_call_or_apply_is_called_there() {
    let t = tree(&[
        (
            "lib/core/dispatchRequest.js",
            "export default function dispatchRequest(config) {\n  return config;\n}\n",
        ),
        (
            "lib/core/Axios.js",
            "import dispatchRequest from './dispatchRequest.js';\n\nclass Axios {\n  _request(config) {\n    let promise;\n    promise = dispatchRequest.call(this, config);\n    return promise;\n  }\n}\n\nexport default Axios;\n",
        ),
    ]);
    let r = traced(t.path(), "subject:dispatchRequest relation:called_from");
    assert_eq!(
        best(&r),
        ("lib/core/Axios.js", "callsite", "method _request"),
        "{}",
        r.text
    );
}

#[test]
fn the_subjects_definition_is_never_the_best_answer_to_who_calls_it() {
    // Only passed around, never called: the mention answers better than
    // the definition, which keeps its own kind.
    let t = tree(&[
        (
            "lib/core/dispatchRequest.js",
            "export default function dispatchRequest(config) {\n  return config;\n}\n",
        ),
        (
            "lib/core/chain.js",
            "import dispatchRequest from './dispatchRequest.js';\n\nexport function chain() {\n  return [dispatchRequest, undefined];\n}\n",
        ),
    ]);
    let r = traced(t.path(), "subject:dispatchRequest relation:called_from");
    assert_eq!(r.files[0].path.text, "lib/core/chain.js", "{}", r.text);
    assert!(
        r.text.contains("best answer likely in lib/core/chain.js\n"),
        "{}",
        r.text
    );
    let def = (r.files.iter())
        .find(|f| f.path.text == "lib/core/dispatchRequest.js")
        .unwrap();
    assert_eq!(def.regions[0].kind.as_str(), "definition");
}

/// ky: the call sits in a closure local to `create`; the label names both.
/// And `export const f = (...) => {...};` has a body, whatever its `;`.
#[test]
fn a_call_in_a_local_closure_is_labelled_with_its_method_and_arrows_have_bodies() {
    let t = tree(&[
        (
            "source/core/Ky.ts",
            "import {streamResponse} from '../utils/body.js';\n\nexport class Ky {\n\tstatic create(input: string) {\n\t\tconst function_ = async (): Promise<Response> => {\n\t\t\tconst response = await fetch(input);\n\t\t\treturn streamResponse(response);\n\t\t};\n\t\treturn function_();\n\t}\n}\n",
        ),
        (
            "source/utils/body.ts",
            "export const streamResponse = (response: Response) => {\n\tif (!response.body) {\n\t\treturn response;\n\t}\n\treturn new Response(response.body);\n};\n",
        ),
    ]);
    let r = traced(t.path(), "subject:streamResponse relation:called_from");
    assert_eq!(
        best(&r),
        (
            "source/core/Ky.ts",
            "callsite",
            "function function_ in method create"
        ),
        "{}",
        r.text
    );
    let r = traced(t.path(), "subject:streamResponse relation:defined");
    assert_eq!(best(&r).0, "source/utils/body.ts", "{}", r.text);
    let why = &r.files[0].regions[0].why;
    assert!(!why.iter().any(|w| w.contains("without a body")), "{why:?}");
    // A prototype is still one.
    let t = tree(&[
        ("x.h", "int auth_check(int a,\n               int b);\n"),
        (
            "x.c",
            "int auth_check(int a, int b)\n{\n\treturn a + b;\n}\n",
        ),
    ]);
    let r = traced(t.path(), "subject:auth_check relation:defined");
    let h = r.files.iter().find(|f| f.path.text == "x.h").unwrap();
    assert!(
        h.regions[0]
            .why
            .iter()
            .any(|w| w.contains("without a body")),
        "{:?}",
        h.regions[0].why
    );
    assert_eq!(best(&r).0, "x.c", "{}", r.text);
}

/// commons-lang: `AbstractCircuitBreaker implements CircuitBreaker`; the
/// breakers that extend it are only named like the subject.
#[test]
fn a_type_whose_header_names_the_subject_implements_it_before_one_named_like_it() {
    let comments = "    /** A {@link EventCountCircuitBreaker} is a CircuitBreaker. */\n".repeat(8);
    let t = tree(&[
        (
            "src/CircuitBreaker.java",
            "public interface CircuitBreaker<T> {\n    boolean isOpen();\n}\n",
        ),
        (
            "src/AbstractCircuitBreaker.java",
            "public abstract class AbstractCircuitBreaker<T> implements CircuitBreaker<T> {\n    public boolean isOpen() {\n        return false;\n    }\n}\n",
        ),
        (
            "src/EventCountCircuitBreaker.java",
            &format!("public class EventCountCircuitBreaker extends AbstractCircuitBreaker<Integer> {{\n{comments}    public boolean check() {{\n        return true;\n    }}\n}}\n"),
        ),
    ]);
    let r = traced(t.path(), "subject:CircuitBreaker relation:implementation");
    assert_eq!(
        best(&r),
        (
            "src/AbstractCircuitBreaker.java",
            "implementation",
            "class AbstractCircuitBreaker"
        ),
        "{}",
        r.text
    );
    let event = (r.files.iter())
        .find(|f| f.path.text == "src/EventCountCircuitBreaker.java")
        .unwrap();
    assert!(
        event.regions[0]
            .why
            .iter()
            .all(|w| !w.contains("implements the subject")),
        "{:?}",
        event.regions[0].why
    );
}

/// guzzle and Alamofire: PHP and Swift have grammars, so a call is told
/// from a definition and named by its method (every region was `<file
/// scope>` before).
#[test]
fn php_and_swift_calls_and_definitions_have_their_methods() {
    let t = tree(&[
        (
            "src/Utils.php",
            "<?php\n\nnamespace GuzzleHttp;\n\nfinal class Utils\n{\n    public static function chooseHandler(): callable\n    {\n        return new CurlHandler();\n    }\n}\n",
        ),
        (
            "src/HandlerStack.php",
            "<?php\n\nnamespace GuzzleHttp;\n\nclass HandlerStack\n{\n    public static function create(?callable $handler = null): self\n    {\n        $stack = new self($handler ?: Utils::chooseHandler());\n\n        return $stack;\n    }\n}\n",
        ),
        (
            "Source/AuthenticationInterceptor.swift",
            "final class AuthenticationInterceptor {\n    private func refresh(_ credential: Credential) {\n        guard !isRefreshExcessive(insideLock: &state) else {\n            return\n        }\n    }\n\n    private func isRefreshExcessive(insideLock state: inout State) -> Bool {\n        false\n    }\n}\n",
        ),
        (
            "Tests/AuthenticationInterceptorTests.swift",
            "final class AuthenticationInterceptorTests: XCTestCase {\n    func testExcessive() {\n        // isRefreshExcessive fires here\n        XCTAssert(true)\n    }\n}\n",
        ),
    ]);
    let r = traced(t.path(), "subject:chooseHandler relation:called_from");
    assert_eq!(
        best(&r),
        ("src/HandlerStack.php", "callsite", "method create"),
        "{}",
        r.text
    );
    let r = traced(t.path(), "subject:chooseHandler relation:defined");
    assert_eq!(
        best(&r),
        ("src/Utils.php", "definition", "method chooseHandler"),
        "{}",
        r.text
    );
    let r = traced(t.path(), "subject:isRefreshExcessive relation:called_from");
    assert_eq!(
        best(&r),
        (
            "Source/AuthenticationInterceptor.swift",
            "callsite",
            "method refresh"
        ),
        "{}",
        r.text
    );
}

/// A code file that defines the subject and mentions it elsewhere still
/// comes before a test that only mentions it in comments.
#[test]
fn a_code_file_with_a_use_beside_its_definition_outranks_a_test_that_mentions_it() {
    let t = tree(&[
        (
            "src/limits.py",
            "def too_many(n):\n    return n > 3\n\n\nCHECKS = [too_many]\n",
        ),
        (
            "tests/test_limits.py",
            "def test_limits():\n    # too_many is checked here\n    assert True\n",
        ),
    ]);
    let r = traced(t.path(), "subject:too_many relation:called_from");
    assert_eq!(r.files[0].path.text, "src/limits.py", "{}", r.text);
}

/// A `#define printk printf` defines `printk`, not `_printk`; `test_bit`
/// in C is no test; `#[cfg(not(test))]` code is production code.
#[test]
fn a_label_or_reason_holds_only_of_the_subject_as_spelt_and_of_real_tests() {
    let t = tree(&[
        ("tools/printk.h", "#define printk printf\n"),
        (
            "kernel/printk.c",
            "int _printk(const char *fmt, ...)\n{\n\treturn 0;\n}\n",
        ),
    ]);
    let r = traced(t.path(), "subject:_printk relation:defined");
    assert_eq!(best(&r).0, "kernel/printk.c", "{}", r.text);
    let header = r.files.iter().find(|f| f.path.text == "tools/printk.h");
    assert!(
        header.is_none_or(|f| f.regions.iter().all(|g| g.kind.as_str() != "definition")),
        "{}",
        r.text
    );
    let t = tree(&[
        (
            "lib/bitops.c",
            "int test_bit(int n, const long *addr)\n{\n\treturn check_word(addr[n]);\n}\n",
        ),
        (
            "src/lib.rs",
            "#[cfg(not(test))]\nfn run(w: u64) -> bool {\n    check_word(w)\n}\n",
        ),
        (
            "lib/word.c",
            "int check_word(long w)\n{\n\treturn w != 0;\n}\n",
        ),
    ]);
    let r = traced(t.path(), "subject:check_word relation:called_from");
    let why: Vec<&String> = (r.files.iter())
        .flat_map(|f| &f.regions)
        .flat_map(|g| &g.why)
        .collect();
    assert!(
        !why.iter().any(|w| w.contains("inside a test")),
        "{}",
        r.text
    );
}

/// An ignored file mentioning the subject is not parsed once the project's
/// files fill the answer: they rank first, so it could never be shown (a
/// 2.6 MB bundle under `node_modules` cost a first trace 800 ms).
#[test]
fn ignored_files_are_not_parsed_when_the_projects_fill_the_answer() {
    let callers: Vec<(String, String)> = (0..6)
        .map(|i| {
            (
                format!("src/c{i}.js"),
                format!("function c{i}() {{\n  return effectiveLimit({i});\n}}\n"),
            )
        })
        .collect();
    let mut files: Vec<(&str, &str)> = callers
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let bundle = "function b() { return effectiveLimit(1); }\n".repeat(50);
    files.extend([
        (".ignore", "bundle/\n"),
        (
            "src/limit.js",
            "function effectiveLimit(x) {\n  return x;\n}\n",
        ),
        ("bundle/big.js", bundle.as_str()),
    ]);
    let t = tree(&files);
    // Settled stamps, so the outline cache keeps what is parsed (a file
    // changed within `RACY` is never cached).
    std::thread::sleep(crate::search::stamp::RACY + std::time::Duration::from_millis(200));
    let cached = |p: &str| {
        let meta = std::fs::metadata(t.path().join(p)).unwrap();
        crate::search::holds_structure(crate::structure::Language::JavaScript, &meta)
    };
    let r = traced(t.path(), "subject:effectiveLimit relation:called_from");
    assert_eq!(r.files.len(), 5, "{}", r.text);
    assert!(r.files.iter().all(|f| !f.ignored), "{}", r.text);
    assert!(
        r.files_matched >= 8,
        "the bundle is still counted: {}",
        r.text
    );
    assert!(
        cached("src/c0.js"),
        "a project file traced is parsed and kept"
    );
    assert!(
        !cached("bundle/big.js"),
        "the ignored bundle is never parsed"
    );
    // With room for it, the bundle is traced and shown after the project's.
    let opts = trace::TraceOptions {
        query: "subject:effectiveLimit relation:called_from".into(),
        max_files: 10,
        ..Default::default()
    };
    let r = trace::run(t.path(), None, opts, &CancelToken::new(None)).unwrap();
    assert!(
        r.files
            .last()
            .is_some_and(|f| f.ignored && f.path.text == "bundle/big.js"),
        "{}",
        r.text
    );
}
