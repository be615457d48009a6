//! The harness context's options (`context` object or `contextJson`
//! string) shared by `outline`, `trace` and `locate`, its TypeScript shape,
//! and `fingerprint()`, which gives a harness the facts to record.

use super::convert::cwd_of;
use super::error::{coded_error, run_blocking};
use crate::context::{parse_json_str, parse_value, HarnessContext as CoreContext};
use crate::search::ErrorCode;
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// Reads the context options: `None` when neither is given; both, or a bad
/// one, throw `INVALID_OPTION` naming the field.
pub(super) fn context_of(
    env: &Env,
    context: Option<serde_json::Value>,
    json: Option<&str>,
) -> Result<Option<CoreContext>> {
    let bad = |m: String| coded_error(env, ErrorCode::InvalidOption, m);
    let context = context.filter(|v| !v.is_null());
    match (context, json) {
        (Some(_), Some(_)) => Err(bad("give context or contextJson, not both".into())),
        (Some(v), None) => parse_value(&v).map(Some).map_err(bad),
        (None, Some(s)) => parse_json_str(s).map(Some).map_err(bad),
        (None, None) => Ok(None),
    }
}

/// What the model already has (agentgrep's harness context, version 1). Keys
/// are the paths exactly as our results print them. README: "Harness context".
// Declared for its TypeScript shape: the option arrives as JSON.
#[allow(dead_code)]
#[napi(object, object_from_js = false)]
pub struct HarnessContext {
    /// 1 (absent means 1); another version is ignored with a note.
    pub version: Option<u32>,
    #[napi(js_name = "known_files")]
    pub known_files: Option<Vec<KnownFileEntry>>,
    #[napi(js_name = "known_regions")]
    pub known_regions: Option<Vec<KnownRegionEntry>>,
    #[napi(js_name = "known_symbols")]
    pub known_symbols: Option<Vec<KnownSymbolEntry>>,
    #[napi(js_name = "focus_files")]
    pub focus_files: Option<Vec<String>>,
}

/// A file the model has seen. Confidences are 0 to 1 (absent = 0).
// Declared for its TypeScript shape: the option arrives as JSON.
#[allow(dead_code)]
#[napi(object, object_from_js = false)]
pub struct KnownFileEntry {
    pub path: String,
    #[napi(js_name = "structure_confidence")]
    pub structure_confidence: Option<f64>,
    #[napi(js_name = "body_confidence")]
    pub body_confidence: Option<f64>,
    /// Below 0.5: changed since the model saw it.
    #[napi(js_name = "current_version_confidence")]
    pub current_version_confidence: Option<f64>,
    #[napi(js_name = "prune_confidence")]
    pub prune_confidence: Option<f64>,
    /// `full_file`, `full_region`, `outline_only`, `match_line_only`, `snippet`, `summary_only`.
    #[napi(js_name = "source_strength")]
    pub source_strength: Option<String>,
    /// Those starting with `changed` are shown in "changed since" notes.
    pub reasons: Option<Vec<String>>,
    /// Bytes when the model saw it (checked against the disk).
    pub size: Option<f64>,
    /// `fingerprint().contentHash` when the model saw it (checked against the disk).
    #[napi(js_name = "content_hash")]
    pub content_hash: Option<String>,
}

/// Lines of a file the model has seen.
// Declared for its TypeScript shape: the option arrives as JSON.
#[allow(dead_code)]
#[napi(object, object_from_js = false)]
pub struct KnownRegionEntry {
    pub path: String,
    #[napi(js_name = "start_line")]
    pub start_line: u32,
    #[napi(js_name = "end_line")]
    pub end_line: u32,
    #[napi(js_name = "structure_confidence")]
    pub structure_confidence: Option<f64>,
    #[napi(js_name = "body_confidence")]
    pub body_confidence: Option<f64>,
    #[napi(js_name = "current_version_confidence")]
    pub current_version_confidence: Option<f64>,
    #[napi(js_name = "prune_confidence")]
    pub prune_confidence: Option<f64>,
    #[napi(js_name = "source_strength")]
    pub source_strength: Option<String>,
    pub reasons: Option<Vec<String>>,
    /// `fingerprint({ regions })` hash of these lines when the model saw them.
    #[napi(js_name = "content_hash")]
    pub content_hash: Option<String>,
}

/// A symbol the model has seen.
// Declared for its TypeScript shape: the option arrives as JSON.
#[allow(dead_code)]
#[napi(object, object_from_js = false)]
pub struct KnownSymbolEntry {
    pub path: String,
    pub symbol: String,
    /// As outline prints it: `function`, `method`, `struct`, ...
    pub kind: Option<String>,
    /// Where the model saw it (checked against the file's outline now).
    #[napi(js_name = "start_line")]
    pub start_line: Option<u32>,
    #[napi(js_name = "end_line")]
    pub end_line: Option<u32>,
    #[napi(js_name = "structure_confidence")]
    pub structure_confidence: Option<f64>,
    #[napi(js_name = "body_confidence")]
    pub body_confidence: Option<f64>,
    #[napi(js_name = "current_version_confidence")]
    pub current_version_confidence: Option<f64>,
    #[napi(js_name = "prune_confidence")]
    pub prune_confidence: Option<f64>,
    #[napi(js_name = "source_strength")]
    pub source_strength: Option<String>,
    pub reasons: Option<Vec<String>>,
}

#[napi(object)]
pub struct LineRange {
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
}

/// Options for `fingerprint`.
#[napi(object, object_to_js = false)]
pub struct FingerprintOptions {
    /// The file, as our results print it (display forms accepted).
    pub path: String,
    /// Base for a relative `path`. Default: `process.cwd()`.
    pub cwd: Option<String>,
    /// Line ranges to hash (as `known_regions[].content_hash`).
    pub regions: Option<Vec<LineRange>>,
}

#[napi(object)]
pub struct RegionFingerprint {
    pub start_line: u32,
    pub end_line: u32,
    pub content_hash: String,
}

#[napi(object)]
pub struct FingerprintResult {
    pub path: String,
    pub size: f64,
    /// `xxh3:` and 16 hex digits: record it as `known_files[].content_hash`.
    pub content_hash: String,
    pub total_lines: u32,
    pub regions: Vec<RegionFingerprint>,
}

/// The facts a harness records when the model is shown a file, in the form
/// a harness context's `size` and `content_hash` fields are checked in.
/// Rejects like `outline` for a missing, special or too large file.
#[napi(catch_unwind, ts_return_type = "Promise<FingerprintResult>")]
pub fn fingerprint<'env>(
    env: &'env Env,
    options: FingerprintOptions,
) -> Result<PromiseRaw<'env, FingerprintResult>> {
    let cwd = cwd_of(&options.cwd).map_err(|e| super::error::to_js(env, e))?;
    let ranges: Vec<(u32, u32)> = options
        .regions
        .unwrap_or_default()
        .iter()
        .map(|r| (r.start_line, r.end_line))
        .collect();
    let given = options.path;
    run_blocking(
        env,
        "fingerprint",
        move || crate::context::fingerprint(&cwd, &given, &ranges).map(|f| (given, f)),
        |(path, f)| FingerprintResult {
            path,
            size: f.size as f64,
            content_hash: f.content_hash,
            total_lines: f.total_lines,
            regions: f
                .regions
                .into_iter()
                .map(|(start_line, end_line, content_hash)| RegionFingerprint {
                    start_line,
                    end_line,
                    content_hash,
                })
                .collect(),
        },
    )
}
