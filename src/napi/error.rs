//! Errors reach JS as `Error`s whose `code` is one of the core's
//! [`ErrorCode`] strings, so JS tells them apart without reading the message.
//! napi's own errors carry a `Status` as their code; a JS error built here
//! and wrapped as a napi `Error` is thrown (or rejected with) as it is.

use crate::search::{CodedError, ErrorCode};
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// The `code` of every error the native functions throw or reject with:
/// `INVALID_PATTERN` (regex parse error, empty pattern, bad glob),
/// `INVALID_OPTION` (an option value that is not one of its choices, an
/// unknown file type, an empty outline path, a file too large to outline),
/// `PATH_NOT_FOUND`, `NOT_A_FILE` (a directory, FIFO, socket or device where
/// a file is wanted, or a file where a directory is), `IO` (another I/O
/// failure), `CANCELLED` (the signal was already aborted), `INTERNAL` (a
/// caught panic or another bug of ours). Messages are unchanged text.
#[napi(string_enum)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub enum NativeErrorCode {
    INVALID_PATTERN,
    INVALID_OPTION,
    PATH_NOT_FOUND,
    NOT_A_FILE,
    IO,
    CANCELLED,
    INTERNAL,
}

/// Must run on the JS thread (it creates the JS error object).
pub fn coded_error(env: &Env, code: ErrorCode, message: impl ToString) -> Error {
    let value = JsError::from(Error::new(code, message.to_string())).into_unknown(*env);
    Error::from(value)
}

pub fn to_js(env: &Env, e: impl Into<CodedError>) -> Error {
    let e = e.into();
    coded_error(env, e.code, e.message)
}

/// For callers without an `Env` at hand (the shell glue): the message
/// reaches JS, the code is napi's `InvalidArg`.
impl From<CodedError> for Error {
    fn from(e: CodedError) -> Self {
        Error::new(Status::InvalidArg, e.message)
    }
}
