//! napi glue only: option structs, conversions and error mapping. The logic
//! lives in napi-free modules (`search`, and later `structure`, `shell`).

pub mod search;
pub mod shell;
pub mod structure;

#[cfg(not(test))]
mod napi;
