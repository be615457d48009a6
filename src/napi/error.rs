//! Errors reach JS as `Error`s whose `code` is one of the core's
//! [`ErrorCode`] strings, so JS tells them apart without reading the message.
//! napi's own errors carry a `Status` as their code; a JS error built here
//! and wrapped as a napi `Error` is thrown (or rejected with) as it is. That
//! needs an `Env`, which is why every function that can fail takes one:
//! there is deliberately no `From<CodedError> for napi::Error`, which would
//! lose the code.

use crate::error_code::{CodedError, ErrorCode};
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// Must run on the JS thread (it creates the JS error object).
pub fn coded_error(env: &Env, code: ErrorCode, message: impl ToString) -> Error {
    let value = JsError::from(Error::new(code, message.to_string())).into_unknown(*env);
    Error::from(value)
}

pub fn to_js(env: &Env, e: impl Into<CodedError>) -> Error {
    let e = e.into();
    coded_error(env, e.code, e.message)
}

/// Every `code` the native functions throw or reject with, in the core's
/// order: `INVALID_PATTERN` (regex parse error, empty pattern, bad glob,
/// empty or malformed query), `INVALID_OPTION` (an option value that is not
/// one of its choices, an unknown file type, an empty command), `PATH_NOT_FOUND`,
/// `NOT_A_FILE` (a directory, FIFO, socket or device where a file is wanted,
/// or a file where a directory is), `IO` (another I/O failure), `CANCELLED`
/// (the signal aborted), `UNKNOWN_JOB`, `JOB_EXISTS`, `JOB_RUNNING` (a job
/// that must have ended first), `INTERNAL` (a caught panic or another bug of
/// ours). New codes are only ever added.
#[napi]
pub fn error_codes() -> Vec<String> {
    ErrorCode::ALL
        .iter()
        .map(|c| c.as_str().to_string())
        .collect()
}

/// One error the core can give, with its code.
#[napi(object)]
pub struct ErrorSample {
    pub code: String,
    pub message: String,
}

/// One error of each kind the core can give, with its code: the JS side's
/// message fallback (`errorCode` for an error without a code) is checked
/// against these, so it cannot drift from what the core says. Gathered
/// here, in the glue, because only the glue may import every room; the
/// error codes themselves (`crate::error_code`) stay below the rooms.
fn samples() -> Vec<CodedError> {
    let mut out: Vec<CodedError> = crate::search::SearchError::samples()
        .into_iter()
        .map(CodedError::from)
        .collect();
    out.extend(
        crate::discover::DiscoverError::samples()
            .into_iter()
            .map(CodedError::from),
    );
    #[cfg(unix)]
    out.extend(
        crate::shell::ShellError::samples()
            .into_iter()
            .map(CodedError::from),
    );
    out.push(CodedError::cancelled());
    out.push(CodedError::panicked("grep"));
    out
}

/// One error of each kind the core gives, as it words them: what a caller
/// that only has an error's text (an older addon's) can match on.
#[napi]
pub fn error_samples() -> Vec<ErrorSample> {
    samples()
        .into_iter()
        .map(|e| ErrorSample {
            code: e.code.as_str().to_string(),
            message: e.message,
        })
        .collect()
}

/// Runs `work` on tokio's blocking pool (never the JS thread nor libuv's
/// pool) and settles the promise on the JS thread: with `out` of its value,
/// or with its coded error (`out` runs on the pool too, so its panic is
/// caught as well). `what` names the operation in that rejection and is
/// its fault-injection point (`PI_UTILS_FAULT`). A panic rejects with `INTERNAL`: it never
/// aborts Node.
pub fn run_blocking<'env, T, R>(
    env: &'env Env,
    what: &'static str,
    work: impl FnOnce() -> std::result::Result<T, CodedError> + Send + 'static,
    out: impl FnOnce(T) -> R + Send + 'static,
) -> Result<PromiseRaw<'env, R>>
where
    T: Send + 'static,
    R: ToNapiValue + Send + 'static,
{
    env.spawn_future_with_callback(
        async move {
            let joined = napi::tokio::task::spawn_blocking(move || {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    crate::fault::panic_if_injected(what);
                    work().map(out)
                }))
            })
            .await;
            Ok(match joined {
                Ok(Ok(result)) => result,
                _ => Err(CodedError::panicked(what)),
            })
        },
        |env, result| result.map_err(|e| to_js(env, e)),
    )
}
