//! Reading the context's JSON: every field is checked by hand so a wrong
//! one is named with its place (`context.known_files[2].path: ...`), which
//! serde's messages (line and column of a string the caller never saw) do
//! not do. Unknown keys are ignored, so newer harnesses still work.

use super::{HarnessContext, KnownFile, KnownRegion, KnownSymbol, Signals, VERSION};
use serde_json::{Map, Value};

type Res<T> = Result<T, String>;

/// Parses a JSON string (`contextJson`, `--context-json FILE`).
pub fn parse_json_str(json: &str) -> Res<HarnessContext> {
    let value: Value =
        serde_json::from_str(json).map_err(|e| format!("context: not valid JSON ({e})"))?;
    parse_value(&value)
}

/// Parses the context object (`context` option).
pub fn parse_value(value: &Value) -> Res<HarnessContext> {
    let obj = value
        .as_object()
        .ok_or_else(|| format!("context: expected an object, got {}", shown(value)))?;
    match obj.get("version") {
        None | Some(Value::Null) => {}
        Some(v) => match v.as_u64() {
            Some(VERSION) => {}
            Some(other) => {
                return Ok(HarnessContext {
                    ignored_version: Some(other),
                    ..HarnessContext::default()
                })
            }
            None => {
                return Err(format!(
                    "context.version: expected a whole number, got {}",
                    shown(v)
                ))
            }
        },
    }
    Ok(HarnessContext {
        ignored_version: None,
        files: list(obj, "known_files", known_file)?,
        regions: list(obj, "known_regions", known_region)?,
        symbols: list(obj, "known_symbols", known_symbol)?,
        focus: list(obj, "focus_files", string)?,
    })
}

fn shown(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

fn list<T>(
    obj: &Map<String, Value>,
    key: &str,
    item: impl Fn(&Value, &str) -> Res<T>,
) -> Res<Vec<T>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| item(v, &format!("context.{key}[{i}]")))
            .collect(),
        Some(v) => Err(format!(
            "context.{key}: expected an array, got {}",
            shown(v)
        )),
    }
}

fn string(v: &Value, at: &str) -> Res<String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{at}: expected a string, got {}", shown(v)))
}

fn entry<'a>(v: &'a Value, at: &str) -> Res<&'a Map<String, Value>> {
    v.as_object()
        .ok_or_else(|| format!("{at}: expected an object, got {}", shown(v)))
}

fn path(o: &Map<String, Value>, at: &str) -> Res<String> {
    match o.get("path") {
        Some(v) => string(v, &format!("{at}.path")),
        None => Err(format!(
            "{at}.path: missing (the path as our output shows it)"
        )),
    }
}

fn opt<T>(
    o: &Map<String, Value>,
    at: &str,
    key: &str,
    read: impl Fn(&Value, &str) -> Res<T>,
) -> Res<Option<T>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => read(v, &format!("{at}.{key}")).map(Some),
    }
}

fn confidence(v: &Value, at: &str) -> Res<f64> {
    match v.as_f64() {
        Some(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!(
            "{at}: expected a number from 0 to 1, got {}",
            shown(v)
        )),
    }
}

fn line(v: &Value, at: &str) -> Res<u32> {
    match v.as_u64() {
        Some(n) if n >= 1 && n <= u32::MAX as u64 => Ok(n as u32),
        _ => Err(format!(
            "{at}: expected a line number (1 or more), got {}",
            shown(v)
        )),
    }
}

fn hash(v: &Value, at: &str) -> Res<String> {
    let s = string(v, at)?;
    let ok = s
        .strip_prefix("xxh3:")
        .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()));
    if ok {
        Ok(s.to_ascii_lowercase())
    } else {
        Err(format!(
            "{at}: expected \"xxh3:\" and 16 hex digits (as fingerprint() gives it), got {}",
            shown(v)
        ))
    }
}

fn signals(o: &Map<String, Value>, at: &str) -> Res<Signals> {
    let c = |key| opt(o, at, key, confidence).map(|x| x.unwrap_or(0.0));
    Ok(Signals {
        structure: c("structure_confidence")?,
        body: c("body_confidence")?,
        current: c("current_version_confidence")?,
        prune: c("prune_confidence")?,
        source_strength: opt(o, at, "source_strength", string)?,
        reasons: opt(o, at, "reasons", |v, at| match v {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, r)| string(r, &format!("{at}[{i}]")))
                .collect(),
            _ => Err(format!(
                "{at}: expected an array of strings, got {}",
                shown(v)
            )),
        })?
        .unwrap_or_default(),
    })
}

/// `start_line`/`end_line`, checked to be in order.
fn range(o: &Map<String, Value>, at: &str) -> Res<(Option<u32>, Option<u32>)> {
    let start = opt(o, at, "start_line", line)?;
    let end = opt(o, at, "end_line", line)?;
    if let (Some(s), Some(e)) = (start, end) {
        if s > e {
            return Err(format!("{at}: start_line {s} is after end_line {e}"));
        }
    }
    Ok((start, end))
}

fn known_file(v: &Value, at: &str) -> Res<KnownFile> {
    let o = entry(v, at)?;
    Ok(KnownFile {
        path: path(o, at)?,
        signals: signals(o, at)?,
        size: opt(o, at, "size", |v, at| {
            v.as_u64()
                .ok_or_else(|| format!("{at}: expected a byte count, got {}", shown(v)))
        })?,
        content_hash: opt(o, at, "content_hash", hash)?,
    })
}

fn known_region(v: &Value, at: &str) -> Res<KnownRegion> {
    let o = entry(v, at)?;
    let (start, end) = range(o, at)?;
    let (Some(start_line), Some(end_line)) = (start, end) else {
        return Err(format!("{at}: a region needs start_line and end_line"));
    };
    Ok(KnownRegion {
        path: path(o, at)?,
        start_line,
        end_line,
        signals: signals(o, at)?,
        content_hash: opt(o, at, "content_hash", hash)?,
    })
}

fn known_symbol(v: &Value, at: &str) -> Res<KnownSymbol> {
    let o = entry(v, at)?;
    let (start_line, end_line) = range(o, at)?;
    let symbol = match o.get("symbol") {
        Some(v) => string(v, &format!("{at}.symbol"))?,
        None => return Err(format!("{at}.symbol: missing (the symbol's name)")),
    };
    Ok(KnownSymbol {
        path: path(o, at)?,
        symbol,
        kind: opt(o, at, "kind", string)?,
        start_line,
        end_line,
        signals: signals(o, at)?,
    })
}
