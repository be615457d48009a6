//! Per-language corrections of what a tags query captures as "the
//! definition", so a symbol's range covers what a reader calls the
//! definition: decorators and attributes above it, the `export` in front of
//! it, the body after a C signature, the `template <...>` line before it.

use super::languages::Language;
use std::collections::HashMap;
use tree_sitter::Node;

/// Where a symbol starts and ends, in bytes, and which node owns it (the
/// key that merges several patterns matching one definition).
#[derive(Debug, Clone, Copy)]
pub struct Span {
    pub owner: usize,
    pub start_byte: usize,
    pub end_byte: usize,
}

/// What the query saw around definitions: `@wrapper` parents of `@wrapped`
/// nodes, and `@attribute` ranges. Built from the same query pass, because
/// `Node::parent` and sibling lookups scan from the root or the first
/// sibling: per symbol that is quadratic in a file with thousands of
/// top-level items.
#[derive(Default)]
pub struct Surroundings<'t> {
    wrappers: HashMap<usize, Node<'t>>,
    /// (start, end) byte ranges, sorted by end once collection is done.
    attributes: Vec<(usize, usize)>,
}

impl<'t> Surroundings<'t> {
    pub fn add_wrapper(&mut self, wrapped: Node<'t>, wrapper: Node<'t>) {
        self.wrappers.insert(wrapped.id(), wrapper);
    }

    pub fn add_attribute(&mut self, node: Node) {
        self.attributes.push((node.start_byte(), node.end_byte()));
    }

    pub fn finish(&mut self) {
        self.attributes.sort_unstable_by_key(|&(_, end)| end);
    }

    fn wrapper(&self, node: Node<'t>, kinds: &[&str]) -> Option<Node<'t>> {
        self.wrappers
            .get(&node.id())
            .copied()
            .filter(|w| kinds.contains(&w.kind()))
    }

    /// `start`, moved back over attributes that end right before it (only
    /// whitespace between).
    fn start_with_attributes(&self, mut start: usize, source: &[u8]) -> usize {
        loop {
            let i = self.attributes.partition_point(|&(_, end)| end <= start);
            let Some(&(a_start, a_end)) = i.checked_sub(1).map(|i| &self.attributes[i]) else {
                return start;
            };
            let gap = source.get(a_end..start).unwrap_or_default();
            if !gap.iter().all(u8::is_ascii_whitespace) {
                return start;
            }
            start = a_start;
        }
    }
}

/// The span of the definition captured at `node`, or `None` when the capture
/// is not a definition after all (a C function declarator inside a
/// parameter list, say).
pub fn definition_span(
    language: Language,
    node: Node,
    around: &Surroundings,
    source: &[u8],
) -> Option<Span> {
    let owner = match language {
        Language::C | Language::Cpp => widen_c(node, around)?,
        Language::Python => around
            .wrapper(node, &["decorated_definition"])
            .unwrap_or(node),
        Language::JavaScript | Language::TypeScript | Language::Tsx => widen_js(node, around),
        _ => node,
    };
    let end_byte = match language {
        Language::Markdown => markdown_section_end(owner),
        _ => owner.end_byte(),
    };
    Some(Span {
        owner: owner.id(),
        start_byte: around.start_with_attributes(owner.start_byte(), source),
        end_byte,
    })
}

/// tags.scm tags the `function_declarator`, which spans only the signature.
fn widen_c<'t>(node: Node<'t>, around: &Surroundings<'t>) -> Option<Node<'t>> {
    const DECLARATORS: [&str; 4] = [
        "pointer_declarator",
        "reference_declarator",
        "parenthesized_declarator",
        "attributed_declarator",
    ];
    // A definition, or a prototype (useful in headers).
    const OWNERS: [&str; 3] = ["function_definition", "declaration", "field_declaration"];
    match node.kind() {
        "function_declarator" => {
            let mut n = node;
            while let Some(p) = around.wrapper(n, &DECLARATORS) {
                n = p;
            }
            around
                .wrapper(n, &OWNERS)
                .map(|owner| under_templates(owner, around))
        }
        "class_specifier" | "struct_specifier" | "union_specifier" | "concept_definition"
        | "alias_declaration" => Some(under_templates(node, around)),
        _ => Some(node),
    }
}

fn under_templates<'t>(mut node: Node<'t>, around: &Surroundings<'t>) -> Node<'t> {
    while let Some(p) = around.wrapper(node, &["template_declaration"]) {
        node = p;
    }
    node
}

/// `export` statements hold the decorators of an exported class, so they
/// belong to the definition; a `const f = () => ...` is the whole
/// declaration when it declares only `f` (the query's anchors check that).
fn widen_js<'t>(node: Node<'t>, around: &Surroundings<'t>) -> Node<'t> {
    let mut n = node;
    if let Some(decl) = around.wrapper(n, &["lexical_declaration", "variable_declaration"]) {
        n = decl;
    }
    while let Some(p) = around.wrapper(n, &["export_statement", "ambient_declaration"]) {
        n = p;
    }
    n
}

/// 1 for `#` and `===`, 2 for `##` and `---`, ...; `None` for other blocks.
fn heading_level(node: Node) -> Option<u32> {
    let heading = match node.kind() {
        "section" => node.named_child(0)?,
        _ => node,
    };
    let mut cursor = heading.walk();
    let level = heading
        .named_children(&mut cursor)
        .find_map(|c| match c.kind() {
            "setext_h1_underline" => Some(1),
            "setext_h2_underline" => Some(2),
            k => k
                .strip_prefix("atx_h")
                .and_then(|r| r.strip_suffix("_marker"))
                .and_then(|d| d.parse().ok()),
        });
    match heading.kind() {
        "atx_heading" | "setext_heading" => level,
        _ => None,
    }
}

/// The block grammar nests sections only for `#` headings; an underlined
/// (setext) heading is a plain child block. So a setext heading's section
/// runs to the next heading of the same or a higher level (possibly past its
/// parent's end), and a `#` section ends early at such a setext heading.
fn markdown_section_end(node: Node) -> usize {
    match node.kind() {
        "section" => {
            let level = heading_level(node).unwrap_or(1);
            first_setext_within(node, level).unwrap_or(node.end_byte())
        }
        "setext_heading" => setext_section_end(node),
        _ => node.end_byte(),
    }
}

/// Start of the first setext heading of level ≤ `level` inside `section`.
fn first_setext_within(section: Node, level: u32) -> Option<usize> {
    let mut cursor = section.walk();
    let children: Vec<Node> = section.named_children(&mut cursor).skip(1).collect();
    children.into_iter().find_map(|c| match c.kind() {
        "setext_heading" if heading_level(c).is_some_and(|l| l <= level) => Some(c.start_byte()),
        "section" => first_setext_within(c, level),
        _ => None,
    })
}

fn setext_section_end(heading: Node) -> usize {
    let level = heading_level(heading).unwrap_or(1);
    let mut node = heading;
    loop {
        let mut next = node.next_named_sibling();
        while let Some(n) = next {
            if heading_level(n).is_some_and(|l| l <= level) {
                return n.start_byte();
            }
            if n.kind() == "section" {
                if let Some(end) = first_setext_within(n, level) {
                    return end;
                }
            }
            next = n.next_named_sibling();
        }
        match node.parent() {
            Some(p) if p.kind() == "section" => node = p,
            Some(p) => return p.end_byte(),
            None => return node.end_byte(),
        }
    }
}
