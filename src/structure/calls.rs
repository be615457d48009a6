//! Call sites (`reference.call` captures) and, for JSX, render sites: where
//! a name is used as a call rather than merely mentioned. `trace` reads them
//! for the few files it shows; queries live in `queries/calls/`.
//!
//! Languages with call queries: Rust, TypeScript, TSX, JavaScript, Python,
//! Go, C, C++, Java, Ruby, PHP, Swift. Markdown has none.

use super::languages::Language;
use std::sync::OnceLock;
use tree_sitter::{Query, QueryCursor, StreamingIterator};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UseKind {
    Call,
    /// A JSX element: the component is rendered here.
    Render,
}

/// One use of a name: the callee's (or component's) name and its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameUse {
    pub name: String,
    pub line: u32,
    pub kind: UseKind,
}

fn query_text(language: Language) -> Option<String> {
    const JS: &str = include_str!("queries/calls/javascript.scm");
    const JSX: &str = include_str!("queries/calls/jsx.scm");
    Some(match language {
        Language::Rust => include_str!("queries/calls/rust.scm").into(),
        Language::TypeScript => JS.into(),
        Language::Tsx | Language::JavaScript => format!("{JS}\n{JSX}"),
        Language::Python => include_str!("queries/calls/python.scm").into(),
        Language::Go => include_str!("queries/calls/go.scm").into(),
        Language::C | Language::Cpp => include_str!("queries/calls/c.scm").into(),
        Language::Java => include_str!("queries/calls/java.scm").into(),
        Language::Ruby => include_str!("queries/calls/ruby.scm").into(),
        Language::Php => include_str!("queries/calls/php.scm").into(),
        Language::Swift => include_str!("queries/calls/swift.scm").into(),
        Language::Markdown => return None,
    })
}

/// Each language's compiled call query, by its place in [`Language::ALL`]:
/// compiled on first use or by `precompile`.
static COMPILED: [OnceLock<Option<Query>>; Language::ALL.len()] =
    [const { OnceLock::new() }; Language::ALL.len()];

/// Whether `language`'s call query has been compiled (or found missing or
/// not to compile) in this process.
pub(crate) fn is_compiled(language: Language) -> bool {
    COMPILED[language.slot()].get().is_some()
}

pub(super) fn compiled(language: Language) -> Option<&'static Query> {
    COMPILED[language.slot()]
        .get_or_init(|| Query::new(&language.grammar(), &query_text(language)?).ok())
        .as_ref()
}

/// Whether `language` has a call query that compiles.
pub fn has_call_query(language: Language) -> bool {
    compiled(language).is_some()
}

/// Every call (and render) site in `source`, in source order. Empty for a
/// language without a call query or a parse that `should_stop` cut short.
pub fn name_uses(
    language: Language,
    source: &[u8],
    should_stop: &dyn Fn() -> bool,
) -> Vec<NameUse> {
    // No parse for a language without a call query.
    if compiled(language).is_none() {
        return Vec::new();
    }
    let Some(tree) = super::parse::parse(language, source, should_stop) else {
        return Vec::new();
    };
    uses_in(language, &tree, source)
}

/// The name uses in an already parsed `tree` of `source`.
pub(crate) fn uses_in(language: Language, tree: &tree_sitter::Tree, source: &[u8]) -> Vec<NameUse> {
    let Some(query) = compiled(language) else {
        return Vec::new();
    };
    let names = query.capture_names();
    let mut out = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), source);
    while let Some(m) = matches.next() {
        let mut name = None;
        let mut kind = UseKind::Call;
        for c in m.captures() {
            match names[c.index as usize] {
                "name" => name = Some(c.node),
                "reference.render" => kind = UseKind::Render,
                _ => {}
            }
        }
        if let Some(node) = name {
            if let Ok(text) = node.utf8_text(source) {
                out.push(NameUse {
                    name: text.to_string(),
                    line: node.start_position().row as u32 + 1,
                    kind,
                });
            }
        }
    }
    out.sort_by_key(|u| u.line);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_but_markdown_has_a_call_query_that_compiles() {
        for lang in Language::ALL {
            assert_eq!(has_call_query(lang), lang != Language::Markdown, "{lang:?}");
        }
    }

    #[test]
    fn calls_are_found_with_their_callee_and_line() {
        let cases: [(Language, &str, &str, u32); 8] = [
            (
                Language::Rust,
                "fn a() {\n    b.auth_status(1);\n}\n",
                "auth_status",
                2,
            ),
            (
                Language::Rust,
                "fn a() { println!(\"x\"); }\n",
                "println",
                1,
            ),
            (
                Language::TypeScript,
                "function a() {\n  obj.authStatus();\n}\n",
                "authStatus",
                2,
            ),
            (
                Language::Python,
                "def a():\n    auth_status()\n",
                "auth_status",
                2,
            ),
            (
                Language::Go,
                "package x\nfunc a() {\n\tpkg.AuthStatus()\n}\n",
                "AuthStatus",
                3,
            ),
            (
                Language::C,
                "void a(void) {\n  auth_status(1);\n}\n",
                "auth_status",
                2,
            ),
            (
                Language::Java,
                "class A { void a() { authStatus(); } }\n",
                "authStatus",
                1,
            ),
            (
                Language::Ruby,
                "def a\n  auth_status(1)\nend\n",
                "auth_status",
                2,
            ),
        ];
        for (lang, src, name, line) in cases {
            let uses = name_uses(lang, src.as_bytes(), &|| false);
            assert!(
                uses.iter()
                    .any(|u| u.name == name && u.line == line && u.kind == UseKind::Call),
                "{lang:?}: {uses:?}"
            );
            // One parse for both gives what the two calls give.
            let (outline, both) =
                crate::structure::outline_and_uses(lang, src.as_bytes(), &|| false).unwrap();
            let alone = crate::structure::outline(lang, src.as_bytes());
            assert_eq!(both, uses, "{lang:?}");
            assert_eq!(format!("{outline:?}"), format!("{alone:?}"), "{lang:?}");
        }
    }

    #[test]
    fn a_jsx_element_is_a_render_site() {
        let src = "function App() {\n  return <StatusBar value={1} />;\n}\n";
        let uses = name_uses(Language::Tsx, src.as_bytes(), &|| false);
        assert!(
            uses.iter()
                .any(|u| u.name == "StatusBar" && u.kind == UseKind::Render),
            "{uses:?}"
        );
    }
}
