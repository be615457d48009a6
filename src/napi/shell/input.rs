//! What JS hands the shell registry, checked and converted: numbers to
//! durations and byte counts (clamped where JS numbers exceed what a
//! deadline can hold), objects to the core's request, wrong types to
//! `INVALID_OPTION` naming the field.

use super::objects::{ShellReadOptions, ShellSpawnOptions};
use crate::error_code::{CodedError, ErrorCode};
use crate::napi::convert::parse_choice;
use crate::shell::defaults;
use crate::shell::log::Keep;
use crate::shell::{SpawnRequest, WaitFor};
use napi::bindgen_prelude::*;
use std::path::PathBuf;
use std::time::Duration;

/// The conversions' own result: the error keeps its code until a method
/// with an `Env` turns it into a JS error.
pub(super) type Converted<T> = std::result::Result<T, CodedError>;

pub(super) fn invalid(what: String) -> CodedError {
    CodedError::new(ErrorCode::InvalidOption, what)
}

/// Longer times are taken as this (Number.MAX_SAFE_INTEGER ms, 285,000
/// years): `1e300` or `2 ** 64` must not wrap into a deadline in the past.
const MAX_MS: f64 = 9_007_199_254_740_991.0;

pub(super) fn millis(field: &str, v: Option<f64>) -> Converted<Option<Duration>> {
    match v {
        None => Ok(None),
        Some(ms) if ms.is_finite() && ms >= 0.0 => {
            Ok(Some(Duration::from_millis(ms.min(MAX_MS) as u64)))
        }
        Some(ms) => Err(invalid(format!("Invalid {field}: {ms}"))),
    }
}

/// A count that must be a finite number, not negative.
pub(super) fn count(field: &str, v: Option<f64>) -> Converted<Option<u64>> {
    match v {
        None => Ok(None),
        Some(n) if n.is_finite() && n >= 0.0 => Ok(Some(n as u64)),
        Some(n) => Err(invalid(format!("Invalid {field}: {n}"))),
    }
}

/// A JS argument converted to `T`; a value of the wrong type (`command:
/// 123`, `cwd: null`, a missing argument) is `INVALID_OPTION` naming it,
/// instead of napi's own `StringExpected` or `InvalidArg`.
pub(super) fn arg<T: FromNapiValue>(what: &str, v: Unknown) -> Converted<T> {
    unsafe { v.cast::<T>() }.map_err(|e| invalid(format!("Invalid {what}: {}", e.reason)))
}

/// The spawn options object; `env`, when given, must be an object of
/// strings (`env: "x"` once read as an empty environment).
pub(super) fn spawn_options(v: Unknown) -> Converted<ShellSpawnOptions> {
    let kind = v.get_type().map_err(|e| invalid(e.reason))?;
    if kind != ValueType::Object {
        return Err(invalid(format!(
            "Invalid spawn options: expected an object, got {kind}"
        )));
    }
    let obj: Object = arg("spawn options", v)?;
    let env: Option<Unknown> = obj.get("env").map_err(|e| invalid(e.reason))?;
    if let Some(env) = env {
        let kind = env.get_type().map_err(|e| invalid(e.reason))?;
        let is_array = env.is_array().unwrap_or(false);
        if !matches!(
            kind,
            ValueType::Object | ValueType::Undefined | ValueType::Null
        ) || is_array
        {
            return Err(invalid(format!(
                "Invalid env: expected an object of strings, got {kind}"
            )));
        }
    }
    arg("spawn options", v)
}

pub(super) fn byte_limit(v: Option<f64>) -> Converted<u64> {
    match v {
        None => Ok(defaults::READ_BYTES),
        Some(b) if b.is_finite() && b >= 0.0 => Ok((b as u64).min(defaults::MAX_READ_BYTES)),
        Some(b) => Err(invalid(format!("Invalid maxBytes: {b}"))),
    }
}

pub(super) fn offset_of(v: f64) -> Converted<u64> {
    if v.is_finite() && v >= 0.0 {
        Ok(v as u64)
    } else {
        Err(invalid(format!("Invalid offset: {v}")))
    }
}

/// A log read by path: a missing file is the caller's, the rest is `IO`.
pub(super) fn read_error(path: &str, e: std::io::Error) -> CodedError {
    CodedError::new(ErrorCode::of_io(&e), format!("Cannot read {path}: {e}"))
}
/// Which end of an over-long read to keep (`default` when not given), and
/// how many bytes one read may return.
pub(super) fn read_limits(
    options: Option<ShellReadOptions>,
    default: Keep,
) -> Converted<(Keep, u64)> {
    let keep = match parse_choice(
        "keep",
        &options.as_ref().and_then(|o| o.keep.clone()),
        &["head", "tail"],
    )? {
        Some("head") => Keep::Head,
        Some(_) => Keep::Tail,
        None => default,
    };
    Ok((keep, byte_limit(options.and_then(|o| o.max_bytes))?))
}

/// The core's request for `options`: `maxLogBytes` must be a positive
/// number, `tracking` one of the two words.
pub(super) fn spawn_request(options: ShellSpawnOptions) -> Converted<SpawnRequest> {
    let max_log_bytes = match options.max_log_bytes {
        Some(b) if !(b.is_finite() && b > 0.0) => {
            return Err(invalid(format!("Invalid maxLogBytes: {b}")))
        }
        b => b.map(|b| b.min(MAX_MS) as u64),
    };
    Ok(SpawnRequest {
        command: options.command,
        cwd: PathBuf::from(options.cwd),
        shell: options.shell,
        env: options.env.map(|m| m.into_iter().collect()),
        log_path: PathBuf::from(options.log_path),
        timeout: millis("timeoutMs", options.timeout_ms)?,
        id: options.id,
        meta: options.meta,
        max_log_bytes,
        process_tree_only: match options.tracking.as_deref() {
            None | Some("auto") => false,
            Some("process-tree") => true,
            Some(other) => {
                return Err(invalid(format!(
                    "Unknown tracking: {other} (use \"auto\" or \"process-tree\")"
                )))
            }
        },
        pump: true,
    })
}

/// What a wait waits for: `until: 'leader'` or the whole job (default).
pub(super) fn wait_target(until: Option<String>) -> Converted<WaitFor> {
    Ok(match parse_choice("until", &until, &["job", "leader"])? {
        Some("leader") => WaitFor::Leader,
        _ => WaitFor::Job,
    })
}
