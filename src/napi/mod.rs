//! The glue: each `#[napi]` function and class of `index.d.ts`, one file per
//! tool or registry, converting JS values to the core's options and the
//! core's results and errors back; nothing here decides anything a test
//! would need to check.

mod context;
mod convert;
mod defaults;
mod discover;
mod error;
mod glob;
mod grep;
mod index;
mod outline;
mod shell;
mod signal;

use napi_derive::napi;

/// Bumped whenever the JS-visible API changes, so the extensions can treat a
/// stale prebuilt binary as unavailable instead of crashing on a missing
/// function.
#[napi]
pub fn api_version() -> u32 {
    8
}
