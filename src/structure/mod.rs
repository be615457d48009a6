//! File structure from tree-sitter syntax trees: the symbols of a file
//! (outline) and the symbol enclosing a line (grep grouping).
//!
//! Napi-free and search-free: callers hand in bytes they already read, so
//! grep outlines a matched file from the buffer it searched, and only for
//! files it will show.
//!
//! ```ignore
//! let lang = Language::detect(path, &buf)?;          // None: no structure
//! let outline = structure::outline(lang, &buf);      // or outline_cancellable
//! let group = outline.enclosing(hit_line);           // None: <file scope>
//! let grouping = structure::group(&outline, &hit_lines); // None: print flat
//! ```

pub mod calls;
pub mod enclosing;
pub mod group;
pub mod languages;
pub mod limit;
mod matching;
pub mod outline;
mod parse;
pub mod precompile;
mod ranges;
pub mod render;
mod symbol_kind;

pub use group::{group, Grouping};
pub use languages::Language;
pub use limit::{limit, Limited};
pub use outline::{
    count_lines, outline, outline_and_uses, outline_cancellable, Outline, Symbol, SymbolKind,
};
pub use precompile::{compile_queries_in_background, queries_compiled};
pub use render::{render_outline, render_symbols, symbol_label};

#[cfg(test)]
mod group_tests;
#[cfg(test)]
mod language_tests;
#[cfg(test)]
mod tests;
