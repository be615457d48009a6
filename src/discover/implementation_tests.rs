//! `relation:implementation` on code shaped like issue 45's study set
//! study-t (junit4, gin): a type that implements an interface comes before
//! the interface's own definition, including a Go type that says so only by
//! an assertion or only by having the methods.

use super::tests::tree;
use super::trace::TraceResult;
use super::trace_tests::{best, traced};

fn rank(r: &TraceResult, path: &str) -> Option<usize> {
    r.files.iter().position(|f| f.path.text == path)
}

/// junit4: `ParentRunner.java` says its own name ten times and is named
/// for it; `BlockJUnit4ClassRunner extends ParentRunner` is what
/// implements it.
#[test]
fn a_class_that_extends_the_subject_comes_before_the_subjects_definition() {
    let t = tree(&[
        (
            "src/main/java/org/junit/runners/ParentRunner.java",
            "package org.junit.runners;\n\n/** A ParentRunner runs children. */\npublic abstract class ParentRunner<T> {\n    /** Constructs a new ParentRunner. */\n    protected ParentRunner(Class<?> c) {\n    }\n\n    protected abstract void runChild(T child);\n}\n",
        ),
        (
            "src/main/java/org/junit/runners/BlockRunner.java",
            "package org.junit.runners;\n\npublic class BlockRunner extends ParentRunner<String> {\n    public BlockRunner(Class<?> c) {\n        super(c);\n    }\n\n    protected void runChild(String child) {\n    }\n}\n",
        ),
    ]);
    let r = traced(t.path(), "subject:ParentRunner relation:implementation");
    assert_eq!(
        best(&r),
        (
            "src/main/java/org/junit/runners/BlockRunner.java",
            "implementation",
            "class BlockRunner"
        ),
        "{}",
        r.text
    );
    assert_eq!(
        rank(&r, "src/main/java/org/junit/runners/ParentRunner.java"),
        Some(1),
        "{}",
        r.text
    );
}

/// An interface nothing implements in the tree: its definition is still
/// the best answer, as a function's definition is its implementation.
#[test]
fn without_an_implementer_the_definition_answers() {
    let t = tree(&[
        (
            "store.go",
            "package store\n\n// Store keeps things.\ntype Store interface {\n\tGet(key string) string\n}\n",
        ),
        (
            "use.go",
            "package store\n\nfunc use(s Store) string {\n\treturn s.Get(\"a\")\n}\n",
        ),
    ]);
    let r = traced(t.path(), "subject:Store relation:implementation");
    assert_eq!(
        best(&r),
        ("store.go", "definition", "interface Store"),
        "{}",
        r.text
    );
}

const VALIDATOR_INTERFACE: &str = "package binding\n\n// StructValidator is the minimal interface which needs to be implemented.\ntype StructValidator interface {\n\tValidateStruct(any) error\n\tEngine() any\n}\n\n// Validator is the default StructValidator.\nvar Validator StructValidator = &defaultValidator{}\n";

/// gin: `var _ StructValidator = (*defaultValidator)(nil)` is how
/// `default_validator.go` says `defaultValidator` implements it; the region
/// is the type's, and shows the assertion.
#[test]
fn a_go_assertion_makes_its_type_the_implementation() {
    let t = tree(&[
        ("binding/binding.go", VALIDATOR_INTERFACE),
        (
            "binding/default_validator.go",
            "package binding\n\ntype defaultValidator struct {\n\tready bool\n}\n\nvar _ StructValidator = (*defaultValidator)(nil)\n\nfunc (v *defaultValidator) ValidateStruct(obj any) error {\n\treturn nil\n}\n\nfunc (v *defaultValidator) Engine() any {\n\treturn nil\n}\n",
        ),
    ]);
    let r = traced(t.path(), "subject:StructValidator relation:implementation");
    assert_eq!(
        best(&r),
        (
            "binding/default_validator.go",
            "implementation",
            "struct defaultValidator"
        ),
        "{}",
        r.text
    );
    let body = &r.files[0].regions[0].body;
    assert!(
        body.iter()
            .any(|l| l == "7: var _ StructValidator = (*defaultValidator)(nil)"),
        "{body:?}"
    );
    assert_eq!(rank(&r, "binding/binding.go"), Some(1), "{}", r.text);
}

/// gin: `jsonApi` in `codec/json/json.go` implements `Core` by having its
/// methods, and that file never says `Core`. `gojsonApi` does too, but is
/// built only with `-tags go_json`; `half` has one of the two methods.
#[test]
fn a_go_type_with_every_method_implements_an_interface_it_never_names() {
    let method = |t: &str, m: &str| {
        format!(
            "func ({} {t}) {m}(v any) error {{\n\treturn nil\n}}\n\n",
            &t[..1]
        )
    };
    let json = format!(
        "//go:build !go_json\n\npackage json\n\ntype jsonApi struct{{}}\n\n{}{}",
        method("jsonApi", "Marshal"),
        method("jsonApi", "Unmarshal")
    );
    let go_json = format!(
        "//go:build go_json\n\npackage json\n\ntype gojsonApi struct{{}}\n\n{}{}",
        method("gojsonApi", "Marshal"),
        method("gojsonApi", "Unmarshal")
    );
    let half = format!(
        "package json\n\ntype half struct{{}}\n\n{}",
        method("half", "Unmarshal")
    );
    let t = tree(&[
        (
            "codec/json/api.go",
            "package json\n\n// API is the json codec in use.\nvar API Core\n\n// Core is the api for json codecs.\ntype Core interface {\n\tMarshal(v any) error\n\tUnmarshal(v any) error\n}\n",
        ),
        ("codec/json/json.go", &json),
        ("codec/json/go_json.go", &go_json),
        ("codec/json/half.go", &half),
    ]);
    let r = traced(t.path(), "subject:Core relation:implementation");
    assert_eq!(
        best(&r),
        ("codec/json/json.go", "implementation", "struct jsonApi"),
        "{}",
        r.text
    );
    assert_eq!(rank(&r, "codec/json/go_json.go"), Some(1), "{}", r.text);
    assert_eq!(rank(&r, "codec/json/api.go"), Some(2), "{}", r.text);
    assert_eq!(rank(&r, "codec/json/half.go"), None, "{}", r.text);
}
