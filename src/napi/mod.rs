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
