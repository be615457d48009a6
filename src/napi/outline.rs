//! `outline()`: one file's symbols. Finding the file (including the display
//! form of a non-UTF-8 name) and reading it happen here; the structure comes
//! from `crate::structure`.
//!
//! Asynchronous on tokio's blocking pool, not synchronous: a 100 KB file
//! takes a few ms, but a multi-MB generated file takes hundreds, which would
//! freeze Pi's event loop; and not libuv's pool, which `fs` shares.

use super::convert::cwd_of;
use crate::search::{display_bytes, os_bytes, outline_of};
use crate::structure;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Files larger than this are refused rather than parsed (memory and time
/// stay bounded).
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
const DEFAULT_MAX_ITEMS: usize = 1000;
const MAX_SUGGESTIONS: usize = 5;

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
    /// `cpp`, `ruby`, `markdown`; `null` when no grammar reads this file
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
    if options.path.is_empty() {
        return Err(Error::new(Status::InvalidArg, "path must not be empty"));
    }
    let cwd = cwd_of(&options.cwd)?;
    let max_items = options.max_items.map_or(DEFAULT_MAX_ITEMS, |m| m as usize);
    let given = options.path;
    env.spawn_future(async move {
        let joined = napi::tokio::task::spawn_blocking(move || {
            std::panic::catch_unwind(|| outline_file(&cwd, &given, max_items))
        })
        .await;
        match joined {
            Ok(Ok(Ok(r))) => Ok(r),
            Ok(Ok(Err(message))) => Err(Error::new(Status::InvalidArg, message)),
            _ => Err(Error::from_reason("internal error: outline panicked")),
        }
    })
}

fn outline_file(
    cwd: &Path,
    given: &str,
    max_items: usize,
) -> std::result::Result<OutlineResult, String> {
    let path = resolve(cwd, given).ok_or_else(|| not_found(cwd, given))?;
    let meta = std::fs::metadata(&path).map_err(|e| format!("Cannot read {given}: {e}"))?;
    if meta.is_dir() {
        return Err(format!("Not a file: {given} is a directory"));
    }
    // Checked before opening: opening a FIFO would block.
    if !meta.is_file() {
        return Err(format!(
            "Not a regular file (FIFO, socket or device): {given}"
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "File too large to outline: {given} ({} bytes, limit {MAX_FILE_BYTES})",
            meta.len()
        ));
    }
    let mut source = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(&path)
        .and_then(|f| f.take(MAX_FILE_BYTES).read_to_end(&mut source))
        .map_err(|e| format!("Cannot read {given}: {e}"))?;
    let outline = structure::Language::detect(&path, &source)
        .and_then(|lang| outline_of(lang, &meta, &source, &|| false));
    let Some(outline) = outline else {
        return Ok(OutlineResult {
            path: given.to_string(),
            language: None,
            total_lines: structure::count_lines(&source),
            symbols: Vec::new(),
            omitted: 0,
            has_errors: false,
            text: structure::render_outline(given, None, max_items),
        });
    };
    let cut = structure::limit(&outline.symbols, max_items);
    let text = structure::render_outline(given, Some(&outline), max_items);
    Ok(OutlineResult {
        path: given.to_string(),
        language: Some(outline.language.name().to_string()),
        total_lines: outline.total_lines,
        symbols: cut
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
        omitted: cut.omitted as u32,
        has_errors: outline.has_errors,
        text,
    })
}

/// The file `given` names: literally, or as the display form of a path
/// whose bytes are not UTF-8.
fn resolve(cwd: &Path, given: &str) -> Option<PathBuf> {
    let literal = cwd.join(given);
    if literal.exists() {
        return Some(literal);
    }
    // A literal name that merely looks like a display form is shown with
    // `#b=-` appended.
    if let Some(name) = given.strip_suffix("#b=-") {
        let p = cwd.join(name);
        return p.exists().then_some(p);
    }
    if !given.contains("#b=") || !given.contains('\u{FFFD}') {
        return None;
    }
    let lossy = &given[..given.rfind("#b=")?];
    let parts: Vec<&str> = lossy.split('/').collect();
    let mut listings = 64; // directory reads allowed: bounds a pathological path
    find_display(cwd, given, &parts, 0, Vec::new(), &mut listings)
}

/// Depth-first over the components: a component with U+FFFD may stand for
/// any directory entry with that lossy name; the full byte path is accepted
/// when its display form is exactly `given`. `bytes` holds components
/// `..index` joined by `/` (an absolute path's first component is empty).
#[cfg(unix)]
fn find_display(
    cwd: &Path,
    given: &str,
    parts: &[&str],
    index: usize,
    bytes: Vec<u8>,
    listings: &mut usize,
) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let path_of = |b: &[u8]| cwd.join(std::ffi::OsStr::from_bytes(b));
    let Some(part) = parts.get(index) else {
        let p = path_of(&bytes);
        return (display_bytes(&bytes).text == given && p.exists()).then_some(p);
    };
    let join = |name: &[u8]| {
        let mut b = bytes.clone();
        if index > 0 {
            b.push(b'/');
        }
        b.extend_from_slice(name);
        b
    };
    if !part.contains('\u{FFFD}') {
        return find_display(
            cwd,
            given,
            parts,
            index + 1,
            join(part.as_bytes()),
            listings,
        );
    }
    if *listings == 0 {
        return None;
    }
    *listings -= 1;
    let dir = match (index, bytes.is_empty()) {
        (0, _) => cwd.to_path_buf(),
        (_, true) => PathBuf::from("/"),
        _ => path_of(&bytes),
    };
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name();
        let raw = os_bytes(&name);
        if String::from_utf8_lossy(&raw) == *part {
            if let Some(p) = find_display(cwd, given, parts, index + 1, join(&raw), listings) {
                return Some(p);
            }
        }
    }
    None
}

#[cfg(not(unix))]
fn find_display(
    _: &Path,
    _: &str,
    _: &[&str],
    _: usize,
    _: Vec<u8>,
    _: &mut usize,
) -> Option<PathBuf> {
    None // Raw name bytes exist only on Unix (see display.rs).
}

/// `File not found: <given>`, with up to 5 names from the same directory
/// that look like what was meant (typo, other extension, other case).
fn not_found(cwd: &Path, given: &str) -> String {
    let near = near_names(cwd, given);
    if near.is_empty() {
        format!("File not found: {given}")
    } else {
        format!(
            "File not found: {given}. Did you mean: {}?",
            near.join(", ")
        )
    }
}

fn near_names(cwd: &Path, given: &str) -> Vec<String> {
    let (dir_part, wanted) = match given.rfind('/') {
        Some(i) => (&given[..=i], &given[i + 1..]),
        None => ("", given),
    };
    let wanted = wanted.to_lowercase();
    if wanted.is_empty() {
        return Vec::new();
    }
    let dir = cwd.join(if dir_part.is_empty() { "." } else { dir_part });
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let stem = |s: &str| s.rsplit_once('.').map_or(s, |(a, _)| a).to_string();
    let wanted_stem = stem(&wanted);
    let tolerance = (wanted.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, String)> = entries
        .flatten()
        .take(10_000)
        .filter_map(|entry| {
            let name = entry.file_name();
            let shown = display_bytes(&os_bytes(&name)).text;
            let lower = shown.to_lowercase();
            let distance = edit_distance(&wanted, &lower);
            let related = distance <= tolerance
                || stem(&lower) == wanted_stem
                || (wanted.len() >= 3 && lower.contains(&wanted))
                || (lower.len() >= 3 && wanted.contains(&lower));
            related.then(|| (distance, format!("{dir_part}{shown}")))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, s)| s)
        .collect()
}

/// Levenshtein distance over chars (names are short; cut at 256 chars).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(256).collect();
    let b: Vec<char> = b.chars().take(256).collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}
