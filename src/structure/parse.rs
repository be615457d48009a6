//! Parsing one file's text into a syntax tree, with a parser per thread and
//! a stop the caller can pull between the parser's steps.

use super::languages::Language;
use std::cell::RefCell;
use std::ops::ControlFlow;
use tree_sitter::{ParseOptions, Parser};

thread_local! {
    // A parser per thread: grep workers outline many files each, and a
    // Parser is neither Sync nor free to create.
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// Parses `source` with this thread's parser; `None` when the grammar does
/// not load or `should_stop` cut the parse short.
pub(crate) fn parse(
    language: Language,
    source: &[u8],
    should_stop: &dyn Fn() -> bool,
) -> Option<tree_sitter::Tree> {
    PARSER.with(|cell| {
        let mut parser = cell.borrow_mut();
        parser.set_language(&language.grammar()).ok()?;
        let mut progress = |_: &tree_sitter::ParseState| {
            if should_stop() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let mut read = |offset: usize, _| source.get(offset..).unwrap_or_default();
        let tree = parser.parse_with_options(
            &mut read,
            None,
            Some(ParseOptions::new().progress_callback(&mut progress)),
        );
        if tree.is_none() {
            // A stopped parse leaves state that would resume on the next call.
            parser.reset();
        }
        tree
    })
}
