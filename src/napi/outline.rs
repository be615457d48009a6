//! `outline()`: converts options and the core's [`FileOutline`]; finding,
//! checking and reading the file happen in `crate::search::outline_file`.
//!
//! Asynchronous on tokio's blocking pool, not synchronous: a 100 KB file
//! takes a few ms, but a multi-MB generated file takes hundreds, which would
//! freeze Pi's event loop; and not libuv's pool, which `fs` shares.

use super::context::context_of;
use super::convert::cwd_of;
use super::error::{coded_error, run_blocking, to_js};
use crate::search::{
    outline_file_with, ErrorCode, FileOutline, OutlineExtras, DEFAULT_OUTLINE_MAX_ITEMS,
};
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// Options for `outline`.
#[napi(object, object_to_js = false)]
pub struct OutlineOptions {
    /// The file; a relative path resolves against `cwd`. The display form
    /// of a non-UTF-8 name (`a\uFFFD.txt#b=ff`, as grep and glob print it)
    /// is accepted.
    pub path: String,
    /// Base for a relative `path`. Default: `process.cwd()`.
    pub cwd: Option<String>,
    /// Most symbols returned; the deepest levels are dropped first and
    /// counted in `omitted`. Default 1000.
    pub max_items: Option<u32>,
    /// What the model already has (README: "Harness context"): a file it
    /// has, unchanged, is printed compact; a changed one says what changed.
    #[napi(ts_type = "HarnessContext")]
    pub context: Option<serde_json::Value>,
    /// The same as a JSON string (not both).
    pub context_json: Option<String>,
    /// Append `debug structure:`: the file opened, its grammar, whether it
    /// parsed and why not, and what the context made of it.
    pub debug_structure: Option<bool>,
}

#[napi(object, use_nullable = true)]
pub struct OutlineSymbol {
    #[napi(
        ts_type = "'function' | 'method' | 'class' | 'struct' | 'enum' | 'interface' | 'trait' | 'impl' | 'module' | 'namespace' | 'type' | 'constant' | 'macro' | 'section'"
    )]
    pub kind: String,
    pub name: String,
    /// 1-based, inclusive. Includes decorators and attributes above the definition.
    pub start_line: u32,
    /// 1-based, inclusive.
    pub end_line: u32,
    /// 0 for top level.
    pub depth: u32,
    /// Index in `symbols` of the enclosing symbol; `null` at top level.
    pub parent: Option<u32>,
}

#[napi(object, use_nullable = true)]
pub struct OutlineResult {
    /// `path` as given.
    pub path: String,
    /// `rust`, `typescript`, `tsx`, `javascript`, `python`, `go`, `java`, `c`,
    /// `cpp`, `ruby`, `php`, `swift`, `markdown`; `null` when no grammar reads this file
    /// type (then `symbols` is empty: not an error).
    pub language: Option<String>,
    pub total_lines: u32,
    /// Source order; a parent comes before its children.
    pub symbols: Vec<OutlineSymbol>,
    /// Symbols left out by `maxItems`.
    pub omitted: u32,
    /// The file has syntax errors: symbols near them may be missing or cut short.
    pub has_errors: bool,
    /// The outline as text, as the `outline` tool and `pi-utils outline`
    /// print it: a short header, then one `- kind name @ start-end (n lines)`
    /// line per symbol, two spaces of indent per depth, and a note of what
    /// `maxItems` left out.
    pub text: String,
    /// What `context` made of the file: `none` (no context), `unknown` (no
    /// entry for the path), `known`, `unchanged` (compact text) or `changed`.
    #[napi(ts_type = "'none' | 'unknown' | 'known' | 'unchanged' | 'changed'")]
    pub context: String,
}

/// Lists a file's definitions (functions, classes, methods, Markdown
/// sections, ...) with their line ranges, nested. Rejects with `File not
/// found: <path>` (plus up to 5 similar names from the same directory), for
/// a directory or special file, or for a file over 16 MiB.
#[napi(catch_unwind, ts_return_type = "Promise<OutlineResult>")]
pub fn outline<'env>(
    env: &'env Env,
    options: OutlineOptions,
) -> Result<PromiseRaw<'env, OutlineResult>> {
    // Thrown at once, as every other bad option is.
    if options.path.is_empty() {
        return Err(coded_error(
            env,
            ErrorCode::InvalidOption,
            "path must not be empty",
        ));
    }
    let cwd = cwd_of(&options.cwd).map_err(|e| to_js(env, e))?;
    let max_items = options
        .max_items
        .map_or(DEFAULT_OUTLINE_MAX_ITEMS, |m| m as usize);
    let context = context_of(env, options.context, options.context_json.as_deref())?;
    let debug_structure = options.debug_structure.unwrap_or(false);
    let given = options.path;
    run_blocking(
        env,
        "outline",
        move || {
            let extras = OutlineExtras {
                context: context.as_ref(),
                debug_structure,
            };
            outline_file_with(&cwd, &given, max_items, extras).map(|o| (given, o))
        },
        |(given, o)| result_out(given, o),
    )
}

fn result_out(path: String, o: FileOutline) -> OutlineResult {
    OutlineResult {
        path,
        language: o.language.map(|l| l.name().to_string()),
        total_lines: o.total_lines,
        symbols: o
            .symbols
            .into_iter()
            .map(|s| OutlineSymbol {
                kind: s.kind.as_str().to_string(),
                name: s.name,
                start_line: s.start_line,
                end_line: s.end_line,
                depth: s.depth,
                parent: s.parent.map(|p| p as u32),
            })
            .collect(),
        omitted: o.omitted as u32,
        has_errors: o.has_errors,
        text: o.text,
        context: o.context.to_string(),
    }
}
