//! One file's symbols from its syntax tree (parsed by `parse.rs`): run the definition query,
//! correct the ranges, merge duplicate matches, nest.

use super::languages::Language;
use super::matching::{compiled, for_each_match, Role};
use super::parse::parse;
use super::ranges::{definition_span, Span, Surroundings};
pub use super::symbol_kind::SymbolKind;
use std::collections::HashMap;
use tree_sitter::Node;

/// One definition. Lines are 1-based and inclusive; `end_line` is the last
/// line holding part of the definition (trailing blank lines excluded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub kind: SymbolKind,
    pub name: String,
    pub start_line: u32,
    pub end_line: u32,
    /// 0 for top level.
    pub depth: u32,
    /// Index of the innermost enclosing symbol in the same list.
    pub parent: Option<usize>,
}

impl Symbol {
    pub fn line_count(&self) -> u32 {
        self.end_line + 1 - self.start_line
    }
}

/// A file's structure. `symbols` are in source order (by start, outer
/// before inner), so every parent precedes its children.
#[derive(Debug, Clone)]
pub struct Outline {
    pub language: Language,
    pub total_lines: u32,
    pub symbols: Vec<Symbol>,
    /// The tree holds syntax errors; symbols around them may be missing or
    /// their ranges cut short.
    pub has_errors: bool,
}

/// Longest symbol name kept; longer ones (a Rust impl over a long generic
/// type, a Markdown heading that is a paragraph) are cut with `…`.
const MAX_NAME_CHARS: usize = 120;

/// The structure of `source`, which holds a file in `language`. Never fails:
/// a grammar that cannot load yields no symbols.
pub fn outline(language: Language, source: &[u8]) -> Outline {
    outline_cancellable(language, source, &|| false).unwrap_or_else(|| empty(language, source))
}

/// As [`outline`], but gives up (returning `None`) soon after `should_stop`
/// turns true; it is polled while parsing, which is nearly all the time
/// spent.
pub fn outline_cancellable(
    language: Language,
    source: &[u8],
    should_stop: &dyn Fn() -> bool,
) -> Option<Outline> {
    outline_with(language, source, should_stop, false)
}

/// `whole_tree` runs the query the ordinary way, over the whole tree; tests
/// check that both ways find the same symbols.
pub(crate) fn outline_with(
    language: Language,
    source: &[u8],
    should_stop: &dyn Fn() -> bool,
    whole_tree: bool,
) -> Option<Outline> {
    let Some(compiled) = compiled(language) else {
        return Some(empty(language, source));
    };
    let Some(tree) = parse(language, source, should_stop) else {
        return if should_stop() {
            None
        } else {
            Some(empty(language, source))
        };
    };
    Some(outline_of_tree(
        language, compiled, &tree, source, whole_tree,
    ))
}

/// The outline and the name uses (call sites) of `source` from one parse:
/// `trace` wants both for each file it shows, and a parse is most of the
/// cost of either (5 to 20 ms for a large C file). `None` when
/// `should_stop` cut the parse short.
pub fn outline_and_uses(
    language: Language,
    source: &[u8],
    should_stop: &dyn Fn() -> bool,
) -> Option<(Outline, Vec<super::calls::NameUse>)> {
    let Some(compiled) = compiled(language) else {
        let uses = super::calls::name_uses(language, source, should_stop);
        return (!should_stop()).then(|| (empty(language, source), uses));
    };
    let Some(tree) = parse(language, source, should_stop) else {
        return (!should_stop()).then(|| (empty(language, source), Vec::new()));
    };
    let outline = outline_of_tree(language, compiled, &tree, source, false);
    Some((outline, super::calls::uses_in(language, &tree, source)))
}

fn outline_of_tree(
    language: Language,
    compiled: &super::matching::Compiled,
    tree: &tree_sitter::Tree,
    source: &[u8],
    whole_tree: bool,
) -> Outline {
    let lines = LineIndex::new(source);
    let root = tree.root_node();
    let symbols = collect(language, compiled, root, source, &lines, whole_tree);
    Outline {
        language,
        total_lines: lines.total_lines(),
        symbols,
        has_errors: root.has_error(),
    }
}

fn empty(language: Language, source: &[u8]) -> Outline {
    Outline {
        language,
        total_lines: count_lines(source),
        symbols: Vec::new(),
        has_errors: false,
    }
}

struct Found {
    span: Span,
    kind: SymbolKind,
    name: String,
    pattern: usize,
}

/// A definition as matched, before its range is corrected.
struct Raw<'t> {
    node: Node<'t>,
    kind: SymbolKind,
    name: String,
    pattern: usize,
}

fn collect(
    language: Language,
    compiled: &super::matching::Compiled,
    root: Node,
    source: &[u8],
    lines: &LineIndex,
    whole_tree: bool,
) -> Vec<Symbol> {
    let mut raw: Vec<Raw> = Vec::new();
    let mut around = Surroundings::default();
    for_each_match(compiled, root, source, whole_tree, &mut |m| {
        let mut definition = None;
        let mut names: Vec<Node> = Vec::new();
        let (mut trait_name, mut qualifier, mut wrapper, mut wrapped) = (None, None, None, None);
        for capture in m.captures() {
            match compiled.roles[capture.index as usize] {
                Role::Definition(kind) => definition = Some((capture.node, kind)),
                Role::Name => names.push(capture.node),
                Role::Trait => trait_name = Some(capture.node),
                Role::Qualifier => qualifier = Some(capture.node),
                Role::Wrapper => wrapper = Some(capture.node),
                Role::Wrapped => wrapped = Some(capture.node),
                Role::Attribute => around.add_attribute(capture.node),
                Role::Other => {}
            }
        }
        if let (Some(outer), Some(inner)) = (wrapper, wrapped) {
            around.add_wrapper(inner, outer);
        }
        let Some((node, kind)) = definition else {
            return;
        };
        if names.is_empty() {
            return;
        }
        let mut name = names
            .iter()
            .map(|n| node_text(*n, source))
            .collect::<Vec<_>>()
            .join(", ");
        if let Some(t) = trait_name {
            name = format!("{} for {name}", node_text(t, source));
        }
        if let Some(q) = qualifier {
            name = format!("{}.{name}", node_text(q, source));
        }
        raw.push(Raw {
            node,
            kind,
            name: clip(name),
            pattern: m.pattern_index,
        });
    });
    around.finish();

    let mut found: Vec<Found> = Vec::with_capacity(raw.len());
    let mut by_owner: HashMap<usize, usize> = HashMap::with_capacity(raw.len());
    for r in raw {
        let Some(span) = definition_span(language, r.node, &around, source) else {
            continue;
        };
        let candidate = Found {
            span,
            kind: r.kind,
            name: r.name,
            pattern: r.pattern,
        };
        match by_owner.get(&span.owner) {
            Some(&i) => {
                let old = &found[i];
                let better = (old.kind.is_generic() && !candidate.kind.is_generic())
                    || (old.kind.is_generic() == candidate.kind.is_generic()
                        && candidate.pattern < old.pattern);
                if better {
                    found[i] = candidate;
                }
            }
            None => {
                by_owner.insert(span.owner, found.len());
                found.push(candidate);
            }
        }
    }
    nest(found, lines)
}

/// Sorts outer before inner and links each symbol to the innermost one
/// containing it. Ranges come from syntax nodes, so they nest or are
/// disjoint; a stack suffices.
fn nest(mut found: Vec<Found>, lines: &LineIndex) -> Vec<Symbol> {
    found.sort_by(|a, b| {
        a.span
            .start_byte
            .cmp(&b.span.start_byte)
            .then(b.span.end_byte.cmp(&a.span.end_byte))
            .then(a.pattern.cmp(&b.pattern))
    });
    let mut symbols: Vec<Symbol> = Vec::with_capacity(found.len());
    let mut stack: Vec<(usize, usize)> = Vec::new(); // (end_byte, index)
    for f in found {
        while let Some(&(end, _)) = stack.last() {
            if f.span.end_byte <= end {
                break;
            }
            stack.pop();
        }
        let parent = stack.last().map(|&(_, i)| i);
        let mut kind = f.kind;
        if kind == SymbolKind::Function && parent.is_some_and(|p| symbols[p].kind.holds_methods()) {
            kind = SymbolKind::Method;
        }
        let start_line = lines.line_of(f.span.start_byte);
        let end_line = lines.last_line_of(f.span.start_byte, f.span.end_byte);
        stack.push((f.span.end_byte, symbols.len()));
        symbols.push(Symbol {
            kind,
            name: f.name,
            start_line,
            end_line,
            depth: parent.map_or(0, |p| symbols[p].depth + 1),
            parent,
        });
    }
    symbols
}

fn node_text(node: Node, source: &[u8]) -> String {
    let bytes = source.get(node.byte_range()).unwrap_or_default();
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

fn clip(name: String) -> String {
    match name.char_indices().nth(MAX_NAME_CHARS) {
        Some((cut, _)) => format!("{}…", &name[..cut]),
        None => name,
    }
}

/// Byte offset → 1-based line.
struct LineIndex<'a> {
    source: &'a [u8],
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(source: &'a [u8]) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', source).map(|i| i + 1));
        LineIndex { source, starts }
    }

    /// Same count as `count_lines`, from the newlines already indexed.
    fn total_lines(&self) -> u32 {
        let newlines = self.starts.len() - 1;
        (newlines + usize::from(self.source.last().is_some_and(|b| *b != b'\n'))) as u32
    }

    fn line_of(&self, byte: usize) -> u32 {
        self.starts.partition_point(|&s| s <= byte) as u32
    }

    /// Line of the last non-blank byte in `start..end`, so a Markdown section
    /// does not claim the blank lines before the next heading.
    fn last_line_of(&self, start: usize, end: usize) -> u32 {
        let end = end.min(self.source.len());
        let body = &self.source[start.min(end)..end];
        match body.iter().rposition(|b| !b.is_ascii_whitespace()) {
            Some(i) => self.line_of(start + i),
            None => self.line_of(start),
        }
    }
}

/// Lines in `source`; a final newline ends the last line, it does not start
/// another.
pub fn count_lines(source: &[u8]) -> u32 {
    let newlines = memchr::memchr_iter(b'\n', source).count();
    (newlines + usize::from(source.last().is_some_and(|b| *b != b'\n'))) as u32
}
