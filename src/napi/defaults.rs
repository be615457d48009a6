//! `coreDefaults()`: the core's defaults as JS sees them, so the JS side
//! (settings, CLI, rg fallback) can check its own defaults against the one
//! source instead of repeating numbers.

use crate::search::{GlobOptions, GrepOptions, DEFAULT_OUTLINE_MAX_ITEMS, MAX_OUTLINE_FILE_BYTES};
use napi_derive::napi;

#[napi(object)]
pub struct GrepDefaults {
    /// Longer lines are cut to a window of this many characters.
    pub max_line_length: u32,
    /// Searcher threads: available cores + 1, at most 8.
    pub threads: u32,
}

#[napi(object)]
pub struct GlobDefaults {
    /// Most entries returned.
    pub limit: u32,
    /// Walker threads: available cores + 1, at most 8.
    pub threads: u32,
}

#[napi(object)]
pub struct OutlineDefaults {
    /// Most symbols returned.
    pub max_items: u32,
    /// Larger files are refused.
    pub max_file_bytes: u32,
}

#[napi(object)]
pub struct CoreDefaults {
    pub grep: GrepDefaults,
    pub glob: GlobDefaults,
    pub outline: OutlineDefaults,
}

/// The defaults the native functions apply to options left out.
#[napi]
pub fn core_defaults() -> CoreDefaults {
    let grep = GrepOptions::default();
    let glob = GlobOptions::default();
    CoreDefaults {
        grep: GrepDefaults {
            max_line_length: grep.max_line_length as u32,
            threads: grep.walk.threads as u32,
        },
        glob: GlobDefaults {
            limit: glob.limit as u32,
            threads: glob.walk.threads as u32,
        },
        outline: OutlineDefaults {
            max_items: DEFAULT_OUTLINE_MAX_ITEMS as u32,
            max_file_bytes: MAX_OUTLINE_FILE_BYTES as u32,
        },
    }
}
