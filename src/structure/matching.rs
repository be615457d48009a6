//! Running a definition query over a tree, and what its captures mean.
//!
//! A query cursor pays for every node it walks, about two thirds of the cost
//! of the parse itself. A plain tree cursor walks faster, so it finds the
//! nodes that patterns start at, and the query runs from each of those
//! without descending further than the pattern needs. The start kinds are
//! read from the query text; when that fails the query runs the ordinary
//! way, over the whole tree.

use super::languages::Language;
use super::symbol_kind::SymbolKind;
use std::sync::OnceLock;
use tree_sitter::{Node, Query, QueryCursor, QueryMatch, StreamingIterator};

/// What each capture of a query means, computed once per language.
pub(crate) enum Role {
    Definition(SymbolKind),
    Name,
    Trait,
    Qualifier,
    Wrapper,
    Wrapped,
    Attribute,
    Other,
}

pub(crate) struct Compiled {
    pub(crate) query: Query,
    pub(crate) roles: Vec<Role>,
    /// By node kind id: whether some pattern starts at such a node. `None`
    /// when a pattern's first node could not be read from the query text
    /// (then the query runs over the whole tree, as usual).
    pub(crate) roots: Option<Vec<bool>>,
}

/// Each language's compiled definition query, by its place in
/// [`Language::ALL`]: compiled on first use or by `precompile`.
static COMPILED: [OnceLock<Option<Compiled>>; Language::ALL.len()] =
    [const { OnceLock::new() }; Language::ALL.len()];

/// Whether `language`'s definition query has been compiled (or found not to
/// compile) in this process.
pub(crate) fn is_compiled(language: Language) -> bool {
    COMPILED[language.slot()].get().is_some()
}

pub(crate) fn compiled(language: Language) -> Option<&'static Compiled> {
    COMPILED[language.slot()]
        .get_or_init(|| {
            // A grammar whose ABI this tree-sitter does not accept, or a query
            // that does not compile against it, leaves the language without
            // structure, which callers already handle.
            let grammar = language.grammar();
            if !super::languages::abi_supported(&grammar) {
                return None;
            }
            let text = language.query_source();
            let query = Query::new(&grammar, &text).ok()?;
            let roles = query
                .capture_names()
                .iter()
                .map(|n| match *n {
                    "name" => Role::Name,
                    "trait" => Role::Trait,
                    "qualifier" => Role::Qualifier,
                    "wrapper" => Role::Wrapper,
                    "wrapped" => Role::Wrapped,
                    "attribute" => Role::Attribute,
                    other => SymbolKind::from_capture(other)
                        .map(Role::Definition)
                        .unwrap_or(Role::Other),
                })
                .collect();
            let roots = pattern_roots(&query, &text, &grammar);
            Some(Compiled {
                query,
                roles,
                roots,
            })
        })
        .as_ref()
}

/// Marks the node kinds that patterns start at, read from each pattern's
/// first node in the query text (`(kind` or `[(kind ...) (kind ...)]`).
fn pattern_roots(query: &Query, text: &str, grammar: &tree_sitter::Language) -> Option<Vec<bool>> {
    let mut names: Vec<&str> = Vec::new();
    for i in 0..query.pattern_count() {
        names.extend(root_names(text.get(query.start_byte_for_pattern(i)..)?)?);
    }
    let mut roots = vec![false; grammar.node_kind_count()];
    let mut seen = vec![false; names.len()];
    for id in 0..grammar.node_kind_count() as u16 {
        if !grammar.node_kind_is_named(id) {
            continue;
        }
        let Some(kind) = grammar.node_kind_for_id(id) else {
            continue;
        };
        // Aliases give one name several ids: mark them all.
        for (n, name) in names.iter().enumerate() {
            if *name == kind {
                roots[id as usize] = true;
                seen[n] = true;
            }
        }
    }
    seen.iter().all(|s| *s).then_some(roots)
}

/// The node kind a pattern starts with (`(kind ...`), if it names one.
fn head(s: &str) -> Option<&str> {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    let name = &s[..end];
    (!name.is_empty() && name != "_").then_some(name)
}

pub(crate) fn root_names(pattern: &str) -> Option<Vec<&str>> {
    let pattern = pattern.trim_start();
    if let Some(rest) = pattern.strip_prefix('(') {
        return Some(vec![head(rest)?]);
    }
    let mut rest = pattern.strip_prefix('[')?;
    let mut names = Vec::new();
    loop {
        rest = rest.trim_start();
        if let Some(comment) = rest.strip_prefix(';') {
            rest = comment.split_once('\n').map_or("", |(_, r)| r);
        } else if rest.starts_with(']') {
            return Some(names);
        } else if let Some(alt) = rest.strip_prefix('(') {
            names.push(head(alt)?);
            rest = skip_balanced(alt)?;
        } else {
            return None; // an anonymous node or something unexpected
        }
    }
}

/// The text after the `)` that closes an already opened `(`.
fn skip_balanced(mut s: &str) -> Option<&str> {
    let mut depth = 1;
    while depth > 0 {
        let i = s.find(['(', ')', '"'])?;
        match s.as_bytes()[i] {
            b'(' => depth += 1,
            b')' => depth -= 1,
            _ => {
                // Skip a string literal, honouring backslash escapes.
                let mut chars = s[i + 1..].char_indices();
                let mut close = None;
                while let Some((j, c)) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => {
                            close = Some(i + 1 + j);
                            break;
                        }
                        _ => {}
                    }
                }
                s = &s[close? + 1..];
                continue;
            }
        }
        s = &s[i + 1..];
    }
    Some(s)
}

/// Runs `on_match` for every match of the query under `root`; `whole_tree`
/// forces the ordinary whole-tree run.
pub(crate) fn for_each_match<'t>(
    compiled: &Compiled,
    root: Node<'t>,
    source: &[u8],
    whole_tree: bool,
    on_match: &mut dyn FnMut(&QueryMatch<'_, 't>),
) {
    let mut cursor = QueryCursor::new();
    let roots = match &compiled.roots {
        Some(roots) if !whole_tree => roots,
        _ => {
            let mut matches = cursor.matches(&compiled.query, root, source);
            while let Some(m) = matches.next() {
                on_match(m);
            }
            return;
        }
    };
    cursor.set_max_start_depth(Some(0));
    let mut walk = root.walk();
    loop {
        let node = walk.node();
        if roots.get(node.kind_id() as usize) == Some(&true) {
            let mut matches = cursor.matches(&compiled.query, node, source);
            while let Some(m) = matches.next() {
                on_match(m);
            }
        }
        if walk.goto_first_child() {
            continue;
        }
        while !walk.goto_next_sibling() {
            if !walk.goto_parent() {
                return;
            }
        }
    }
}
