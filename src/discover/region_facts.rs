//! What a region's symbol and lines say of the subject, for `regions` to
//! weigh: whether it defines, calls or implements it, whether it sits in a
//! test, whether it is a prototype without a body, and its label.

use super::question::Question;
use super::relate::{
    c_initialised_type, c_variable_definition, shape, spelt_as_subject, whole_identifier,
    Occurrence, Shape,
};
use super::role::Role;
use super::tokens;
use crate::structure::calls::UseKind;
use crate::structure::{self, Language, Outline, Symbol, SymbolKind};
use regex::Regex;
use std::sync::OnceLock;

pub(super) fn is_type_like(kind: SymbolKind) -> bool {
    matches!(
        kind,
        SymbolKind::Impl
            | SymbolKind::Class
            | SymbolKind::Struct
            | SymbolKind::Trait
            | SymbolKind::Interface
            | SymbolKind::Enum
    )
}

pub(super) fn line_text<'a>(lines: &[&'a str], n: u32) -> &'a str {
    lines.get(n as usize - 1).copied().unwrap_or_default()
}

/// Whether occurrence `o` (on a line reading `text`) calls the subject.
/// The subject's own definition is no call of it, whatever a parser or
/// the line's shape say (`func (c *Client) Get(` looks like one).
pub(super) fn is_call(
    subject: &str,
    symbol: Option<&Symbol>,
    uses: &[structure::calls::NameUse],
    text: &str,
    o: &Occurrence,
) -> bool {
    let definition_line = symbol
        .filter(|s| tokens::names_symbol_as(&s.name, subject))
        .map(|s| s.start_line);
    let own = definition_line == Some(o.line) || shape(text, o) == Shape::Definition;
    // `__handle_mm_fault(` is another function's call (issue 45): the
    // occurrence must be the whole identifier called.
    !own && whole_identifier(text, o)
        && spelt_as_subject(subject, text, o)
        && (uses.iter().any(|u| {
            u.line == o.line && u.kind == UseKind::Call && same_identifier(&u.name, text, o)
        }) || (uses.is_empty() && shape(text, o) == Shape::Call))
}

/// Whether a called name is the identifier at the occurrence, not one that
/// holds it: `foo.bar` is called as `bar`; `__bar` is not `bar`.
fn same_identifier(called: &str, text: &str, o: &Occurrence) -> bool {
    text.get(o.start..o.end)
        .is_some_and(|at| tokens::own_name(called).trim_start_matches(['.', ':', '#']) == at)
}

/// Whether the region defines the subject: its symbol is named for it, or,
/// in a file without structure, a line has a definition's shape.
pub(super) fn defines_subject(
    subject: &str,
    role: Role,
    outline: Option<&Outline>,
    symbol: Option<&Symbol>,
    lines: &[&str],
    list: &[&Occurrence],
) -> bool {
    // Prose never defines code: a docs line such as `Using trace_printk() in
    // ...` has a definition's shape only by accident.
    let prose = role == Role::Docs;
    // A heading named for the subject is about it, not its definition (as
    // in locate).
    symbol
        .is_some_and(|s| s.kind != SymbolKind::Section && tokens::names_symbol_as(&s.name, subject))
        || (symbol.is_none()
            && !prose
            && outline.is_none_or(|o| o.symbols.is_empty())
            && list.iter().any(|o| {
                let text = line_text(lines, o.line);
                shape(text, o) == Shape::Definition && spelt_as_subject(subject, text, o)
            }))
        // A C variable's definition at file scope, which outlines do not list.
        || (symbol.is_none()
            && !prose
            && list.iter().any(|o| {
                let text = line_text(lines, o.line);
                c_variable_definition(text, o) && spelt_as_subject(subject, text, o)
            }))
}

/// How a region is known to implement the subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Implements {
    /// Its header names the subject (`class Bar implements Foo`, `impl Foo
    /// for Bar`), or it is a C struct of functions of the subject's type.
    Declared,
    /// Only its name holds the subject (`FooImpl`, `EventCountFoo`).
    Named,
}

impl Implements {
    pub(super) fn why(self, label: &str) -> String {
        match self {
            Implements::Declared => format!("{label} implements the subject"),
            Implements::Named => format!("{label} is named for the subject"),
        }
    }
}

/// Whether the region implements the subject: a class, impl or other type
/// whose header names it (`class Bar implements Foo`, `impl Foo for Bar`)
/// or whose name holds it without being it (`FooImpl`), or a C struct of
/// functions initialised as one (`const struct Curl_ssl Curl_ssl_openssl =
/// {`). The subject's own `interface Foo` is its definition, not an
/// implementation (issue 45).
pub(super) fn implements(
    question: &Question,
    symbol: Option<&Symbol>,
    lines: &[&str],
    list: &[&Occurrence],
) -> Option<Implements> {
    let subject = &question.subject.tokens;
    let c_struct = list
        .iter()
        .any(|o| c_initialised_type(line_text(lines, o.line), o));
    // A Go assertion homed at its type (`type HandlerFunc func(...)` is a
    // type too).
    let asserted = symbol.is_some_and(|s| {
        (list.iter()).any(|o| go_asserted_type(line_text(lines, o.line), o) == Some(&s.name))
    });
    if c_struct || asserted {
        return Some(Implements::Declared);
    }
    let s = symbol.filter(|s| {
        is_type_like(s.kind) && !tokens::names_symbol_as(&s.name, &question.query.subject)
    })?;
    // The header: from the symbol's first line to the one opening its body
    // (at most a few lines), where the subject stands as a whole identifier.
    let header_end = (s.start_line..=s.end_line.min(s.start_line + 4))
        .find(|&n| line_text(lines, n).contains('{'))
        .unwrap_or(s.start_line);
    let declared = list.iter().any(|o| {
        (s.start_line..=header_end).contains(&o.line)
            && whole_identifier(line_text(lines, o.line), o)
    });
    if declared {
        Some(Implements::Declared)
    } else if tokens::contains_run(&tokens::split(&s.name), subject) {
        Some(Implements::Named)
    } else {
        None
    }
}

/// The type a Go compile-time assertion says implements the subject
/// (occurrence `o`): `var _ Foo = (*bar)(nil)`, `var _ Foo = bar{}`,
/// `var _ Foo = &bar{}`, `var _ Foo = new(bar)`, also inside a `var ( )`
/// block and with the interface qualified (`var _ io.Reader = ...`). Go has
/// no `implements`: this line is how a package states one (issue 45:
/// gin's `defaultValidator` and `StructValidator`).
pub(super) fn go_asserted_type<'a>(line: &'a str, o: &Occurrence) -> Option<&'a str> {
    static BEFORE: OnceLock<Regex> = OnceLock::new();
    static AFTER: OnceLock<Regex> = OnceLock::new();
    let before = BEFORE.get_or_init(|| Regex::new(r"^\s*(?:var\s+)?_\s+(?:\w+\.)?$").unwrap());
    let after = AFTER.get_or_init(|| {
        Regex::new(r"^(?:\[[^\]=]*\])?\s*=\s*(?:\(\s*\*\s*(\w+)[^)]*\)\s*\(\s*nil\s*\)|&?(\w+)\s*(?:\[[^\]]*\])?\s*\{|new\(\s*(\w+))")
            .unwrap()
    });
    if !before.is_match(line.get(..o.start)?) {
        return None;
    }
    let caps = after.captures(line.get(o.end..)?)?;
    (1..=3).find_map(|i| caps.get(i)).map(|m| m.as_str())
}

/// The type symbol (by index) a Go assertion on occurrence `o`'s line
/// names, when `outline` holds that type.
pub(super) fn go_asserted_symbol(
    outline: &Outline,
    lines: &[&str],
    o: &Occurrence,
) -> Option<usize> {
    if outline.language != Language::Go {
        return None;
    }
    let name = go_asserted_type(line_text(lines, o.line), o)?;
    (outline.symbols.iter())
        .position(|s| (is_type_like(s.kind) || s.kind == SymbolKind::Type) && s.name == name)
}

/// Whether a symbol is a test or sits inside one: a Rust `#[test]`
/// function or `mod tests`, a Java `@Test` method, a Python or Ruby
/// `test_*` function (issue 45: bat's own tests of `get_git_diff` in
/// `src/diff.rs` outranked its production caller). Only Python and Ruby
/// name tests so: C's `test_bit` is production code.
pub(super) fn in_test(outline: Option<&Outline>, s: &Symbol, lines: &[&str]) -> bool {
    let test_names =
        outline.is_some_and(|o| matches!(o.language, Language::Python | Language::Ruby));
    let is_test = |s: &Symbol| {
        let first = line_text(lines, s.start_line);
        let named = match s.kind {
            SymbolKind::Module => matches!(s.name.as_str(), "tests" | "test"),
            SymbolKind::Function | SymbolKind::Method => {
                test_names && tokens::own_name(&s.name).starts_with("test_")
            }
            _ => false,
        };
        test_attribute(first.trim_start()) || named
    };
    let mut at = Some(s);
    while let Some(sym) = at {
        if is_test(sym) {
            return true;
        }
        at = sym.parent.and_then(|p| outline.map(|o| &o.symbols[p]));
    }
    false
}

/// `#[test]`, `#[cfg(test)]`, `#[tokio::test]`, `#[rstest]`, `@Test`,
/// `@ParameterizedTest`; not `#[cfg(not(test))]` nor `#[cfg_attr(test, ..)]`.
fn test_attribute(line: &str) -> bool {
    if let Some(rest) = line.strip_prefix("#[") {
        let inner = rest.split(']').next().unwrap_or("");
        let path = inner.split('(').next().unwrap_or("");
        return inner == "cfg(test)"
            || path == "test"
            || path.ends_with("::test")
            || path == "rstest"
            || path == "test_case";
    }
    ["@Test", "@ParameterizedTest", "@RepeatedTest"]
        .iter()
        .any(|a| {
            line.strip_prefix(a)
                .is_some_and(|r| !r.starts_with(char::is_alphanumeric))
        })
}

/// A symbol's label: `method create`, and for a function local to another
/// (a closure assigned in a method's body) the one holding it too,
/// `function function_ in method create`: the local name alone says
/// nothing of where the call happens (issue 45: ky's `streamResponse`).
pub(super) fn symbol_label(outline: Option<&Outline>, s: &Symbol) -> String {
    let own = format!("{} {}", s.kind.as_str(), s.name);
    let callable = |k: SymbolKind| matches!(k, SymbolKind::Function | SymbolKind::Method);
    let holder = s.parent.and_then(|p| outline.map(|o| &o.symbols[p]));
    match holder {
        // `app.render = function render(...)` is one function seen twice.
        Some(h) if callable(s.kind) && callable(h.kind) && h.name != s.name => {
            format!("{own} in {} {}", h.kind.as_str(), h.name)
        }
        _ => own,
    }
}

/// A function or method without a body: a prototype ending in `;` whose
/// lines open no block (`int f(int a,\n int b);`, `declare function f();`),
/// or one stated on one line inside an interface or trait. `export const f
/// = (x) => {\n ...\n};` ends in `;` too, but has a body.
pub(super) fn is_bodiless(s: &Symbol, outline: Option<&Outline>, lines: &[&str]) -> bool {
    let in_interface = s.start_line == s.end_line
        && s.parent
            .and_then(|p| outline.map(|o| o.symbols[p].kind))
            .is_some_and(|k| matches!(k, SymbolKind::Interface | SymbolKind::Trait));
    let opens_block = || {
        (s.start_line..=s.end_line.min(s.start_line + 40)).any(|n| {
            let text = line_text(lines, n);
            text.contains("=>") || text.trim_end().ends_with('{')
        })
    };
    matches!(s.kind, SymbolKind::Function | SymbolKind::Method)
        && ((line_text(lines, s.end_line).trim_end().ends_with(';') && !opens_block())
            || in_interface)
}
