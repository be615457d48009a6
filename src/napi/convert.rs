//! Conversions the glue files share: a choice option checked against its
//! choices, the walk options grep and glob both take, the base directory.
//! Each tool's JS option struct lives beside its glue (`grep.rs`, `glob.rs`,
//! `outline.rs`, ...), where its doc comments become the `index.d.ts`
//! contract.

use crate::search::{CodedError, ErrorCode, SortOrder, WalkOptions};
use napi::bindgen_prelude::*;
use std::time::Duration;

pub(super) fn parse_choice<'a>(
    field: &str,
    value: &Option<String>,
    choices: &[&'a str],
) -> std::result::Result<Option<&'a str>, CodedError> {
    match value {
        None => Ok(None),
        Some(v) => choices
            .iter()
            .find(|c| **c == v.as_str())
            .map(|c| Some(*c))
            .ok_or_else(|| {
                CodedError::new(
                    ErrorCode::InvalidOption,
                    format!("Invalid {field}: {v} (expected {})", choices.join(", ")),
                )
            }),
    }
}

/// Missing options take the core's defaults.
pub(super) fn walk_options(
    hidden: Option<bool>,
    no_ignore: Option<bool>,
    globs: Option<Vec<String>>,
    types: Option<Either<String, Vec<String>>>,
    threads: Option<u32>,
) -> WalkOptions {
    let d = WalkOptions::default();
    WalkOptions {
        hidden: hidden.unwrap_or(d.hidden),
        no_ignore: no_ignore.unwrap_or(d.no_ignore),
        globs: globs.unwrap_or(d.globs),
        types: match types {
            None => d.types,
            Some(Either::A(t)) => vec![t],
            Some(Either::B(ts)) => ts,
        },
        threads: threads.map_or(d.threads, |t| (t as usize).clamp(1, 64)),
    }
}

/// `sort`, shared by grep and glob: `path` or `mtime`; absent, the tool's default.
pub(super) fn sort_order(
    value: &Option<String>,
    default: SortOrder,
) -> std::result::Result<SortOrder, CodedError> {
    Ok(match parse_choice("sort", value, &["path", "mtime"])? {
        Some("path") => SortOrder::Path,
        Some("mtime") => SortOrder::Mtime,
        _ => default,
    })
}

/// `timeoutMs` as the core's deadline; absent, the tool's default.
pub(super) fn timeout_of(ms: Option<u32>, default: Option<Duration>) -> Option<Duration> {
    ms.map(|ms| Duration::from_millis(ms.into())).or(default)
}

pub fn cwd_of(cwd: &Option<String>) -> std::result::Result<std::path::PathBuf, CodedError> {
    match cwd {
        Some(c) => Ok(std::path::PathBuf::from(c)),
        None => std::env::current_dir().map_err(|e| CodedError::new(ErrorCode::Io, e.to_string())),
    }
}
