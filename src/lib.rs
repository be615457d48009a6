//! The crate root only declares modules: the logic lives in napi-free
//! modules (`search`, `structure`, `discover`, `shell`), and `napi` holds the glue that
//! converts types for JS.

pub mod context;
pub mod discover;
pub mod error_code;
pub mod fault;
pub mod index;
pub mod search;
pub mod shell;
pub mod structure;

#[cfg(not(test))]
mod napi;
