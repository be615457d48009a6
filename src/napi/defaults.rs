//! `coreDefaults()`: the core's defaults as JS sees them, so the JS side
//! (settings, CLI, rg fallback) can check its own defaults against the one
//! source instead of repeating numbers. Every value is read from a core
//! `Default` impl or constant, never written here.

use crate::discover::locate::LocateOptions;
use crate::discover::trace::TraceOptions;
use crate::index::IndexConfig;
use crate::search::{GlobOptions, GrepOptions, DEFAULT_OUTLINE_MAX_ITEMS, MAX_OUTLINE_FILE_BYTES};
use napi_derive::napi;

#[napi(object)]
pub struct GrepDefaults {
    /// Longer lines are cut to a window of this many characters.
    pub max_line_length: u32,
    /// Searcher threads: available cores + 1, at most 8.
    pub threads: u32,
    /// Ignored files are searched too, after the project's own.
    pub no_ignore: bool,
    /// Dot-files and dot-directories are searched (`.git` never is).
    pub hidden: bool,
}

#[napi(object)]
pub struct GlobDefaults {
    /// Most entries returned.
    pub limit: u32,
    /// Walker threads: available cores + 1, at most 8.
    pub threads: u32,
    /// Ignored files are listed too, after the project's own.
    pub no_ignore: bool,
    /// Dot-files and dot-directories are listed (`.git` never is).
    pub hidden: bool,
}

#[napi(object)]
pub struct OutlineDefaults {
    /// Most symbols returned.
    pub max_items: u32,
    /// Larger files are refused.
    pub max_file_bytes: u32,
}

#[napi(object)]
pub struct LocateDefaults {
    /// Most files returned.
    pub limit: u32,
    /// Ignored files are ranked too, after the project's own.
    pub no_ignore: bool,
}

#[napi(object)]
pub struct TraceDefaults {
    /// Most files in the packet.
    pub max_files: u32,
    /// Most regions over all files.
    pub max_regions: u32,
}

#[napi(object)]
pub struct IndexDefaults {
    /// Smaller trees are not indexed.
    pub min_files: u32,
    /// Larger trees are not indexed.
    pub max_files: u32,
    /// Largest the store may grow, in MiB.
    pub max_disk_mb: u32,
}

#[napi(object)]
pub struct CoreDefaults {
    pub grep: GrepDefaults,
    pub glob: GlobDefaults,
    pub outline: OutlineDefaults,
    pub locate: LocateDefaults,
    pub trace: TraceDefaults,
    pub index: IndexDefaults,
}

/// The defaults the native functions apply to options left out.
#[napi]
pub fn core_defaults() -> CoreDefaults {
    let grep = GrepOptions::default();
    let glob = GlobOptions::default();
    let locate = LocateOptions::default();
    let trace = TraceOptions::default();
    let index = IndexConfig::default();
    CoreDefaults {
        grep: GrepDefaults {
            max_line_length: grep.max_line_length as u32,
            threads: grep.walk.threads as u32,
            no_ignore: grep.walk.no_ignore,
            hidden: grep.walk.hidden,
        },
        glob: GlobDefaults {
            limit: glob.limit as u32,
            threads: glob.walk.threads as u32,
            no_ignore: glob.walk.no_ignore,
            hidden: glob.walk.hidden,
        },
        outline: OutlineDefaults {
            max_items: DEFAULT_OUTLINE_MAX_ITEMS as u32,
            max_file_bytes: MAX_OUTLINE_FILE_BYTES as u32,
        },
        locate: LocateDefaults {
            limit: locate.limit as u32,
            no_ignore: locate.walk.no_ignore,
        },
        trace: TraceDefaults {
            max_files: trace.max_files as u32,
            max_regions: trace.max_regions as u32,
        },
        index: IndexDefaults {
            min_files: index.min_files as u32,
            max_files: index.max_files as u32,
            max_disk_mb: (index.max_bytes >> 20) as u32,
        },
    }
}
