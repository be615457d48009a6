//! `indexStatus()`, `indexStart()`, `indexWarm()`, `indexDrop()`: the live
//! index of a directory, converted. The index itself is `crate::index`.

use super::convert::cwd_of;
use super::error::to_js;
use super::signal::{check_not_aborted, run_cancellable};
use crate::index::{IndexConfig, IndexStatus as CoreStatus, State};
use crate::search::{resolve_target, CancelToken, CodedError, ErrorCode, Target};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::path::PathBuf;

/// Options naming the directory of an index.
#[napi(object)]
pub struct IndexPathOptions {
    /// The directory; relative paths resolve against `cwd`. Default: `cwd`.
    pub path: Option<String>,
    /// Base for a relative `path`. Default: `process.cwd()`.
    pub cwd: Option<String>,
}

/// Options for `indexStart` and `indexWarm`.
#[napi(object, object_to_js = false)]
pub struct IndexWarmOptions<'a> {
    /// The directory; relative paths resolve against `cwd`. Default: `cwd`.
    pub path: Option<String>,
    /// Base for a relative `path`. Default: `process.cwd()`.
    pub cwd: Option<String>,
    /// Trees with fewer files are not indexed. Default 1000.
    pub min_files: Option<u32>,
    /// Trees with more files are not indexed (the walk stops there). Default 500000.
    pub max_files: Option<u32>,
    /// Largest the index of one directory may grow, in MB. Default 2048.
    pub max_disk_mb: Option<u32>,
    /// `indexWarm` only: stops waiting (the build goes on).
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<Object<'a>>,
    /// Use only an index an earlier process saved in the store, for a
    /// process that ends soon (the CLI): nothing is built or merged and no
    /// other process's build is waited for; files changed since are read by
    /// each search. Off (rejects) when none is saved, another process is
    /// writing it, or more than one file in 20 changed. Default false.
    pub saved_only: Option<bool>,
}

/// A pattern as `grep` takes it, for `indexCanNarrow`.
#[napi(object)]
pub struct IndexPatternOptions {
    pub pattern: String,
    pub literal: Option<bool>,
    pub ignore_case: Option<bool>,
}

/// Where a directory's index stands.
#[napi(object)]
pub struct IndexStatus {
    /// `none`: no index of this directory in this process.
    #[napi(ts_type = "'none' | 'building' | 'ready' | 'stale' | 'off'")]
    pub state: String,
    /// Why it is `off` or `stale`.
    pub reason: Option<String>,
    /// Files in the table (ready only).
    pub files: i64,
    /// Bytes the postings take.
    pub bytes: f64,
    /// The postings are a file mapped into memory, outside the JS heap and
    /// the process's anonymous memory (the file is unlinked once mapped);
    /// false: it could not be written and they are held in memory.
    pub mapped: bool,
    /// When the current picture was built, ms since the epoch.
    pub built_at_ms: Option<f64>,
    /// Why the index is not saved in the store for the next process (the
    /// folder cannot be written, the disk is full); absent when it is.
    pub unsaved: Option<String>,
    /// Taken over from the store: how many files were read again because
    /// they changed since it was saved; absent when built from scratch.
    pub reread: Option<f64>,
}

fn status_out(s: Option<CoreStatus>) -> IndexStatus {
    let Some(s) = s else {
        return IndexStatus {
            state: "none".into(),
            reason: None,
            files: 0,
            bytes: 0.0,
            mapped: false,
            built_at_ms: None,
            unsaved: None,
            reread: None,
        };
    };
    let (state, reason) = match s.state {
        State::Building => ("building", None),
        State::Ready => ("ready", None),
        State::Stale(r) => ("stale", Some(r)),
        State::Off(r) => ("off", Some(r)),
    };
    IndexStatus {
        state: state.into(),
        reason,
        files: s.files as i64,
        bytes: s.bytes as f64,
        mapped: s.mapped,
        built_at_ms: s.built_at.and_then(|t| {
            let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
            Some(d.as_secs_f64() * 1000.0)
        }),
        unsaved: s.unsaved,
        reread: s.reread.map(|n| n as f64),
    }
}

fn root_of(
    cwd: &Option<String>,
    path: &Option<String>,
) -> std::result::Result<PathBuf, CodedError> {
    let cwd = cwd_of(cwd)?;
    match resolve_target(&cwd, path.as_deref())? {
        Target::Dir(d) => Ok(d),
        Target::File(f) => Err(CodedError::new(
            ErrorCode::NotAFile,
            format!("Not a directory: {}", f.display()),
        )),
    }
}

fn config_of(o: &IndexWarmOptions) -> IndexConfig {
    let d = IndexConfig::default();
    IndexConfig {
        min_files: o.min_files.map_or(d.min_files, |n| n as usize),
        max_files: o.max_files.map_or(d.max_files, |n| n as usize),
        max_bytes: o.max_disk_mb.map_or(d.max_bytes, |mb| u64::from(mb) << 20),
        saved_only: o.saved_only.unwrap_or(false),
        ..d
    }
}

/// The status of the index of `path` in this process.
#[napi(catch_unwind)]
pub fn index_status(env: Env, options: IndexPathOptions) -> Result<IndexStatus> {
    let root = root_of(&options.cwd, &options.path).map_err(|e| to_js(&env, e))?;
    Ok(status_out(crate::index::status_of(&root)))
}

/// Starts building the index of `path` in the background (if there is none
/// yet) and returns at once; searches use it when it is ready. The build
/// runs on a thread of its own and never keeps the process alive.
#[napi(catch_unwind)]
pub fn index_start(env: Env, options: IndexWarmOptions) -> Result<IndexStatus> {
    let root = root_of(&options.cwd, &options.path).map_err(|e| to_js(&env, e))?;
    // The queries the first outline, locate or trace would compile.
    crate::structure::compile_queries_in_background();
    let status = crate::index::start(&root, config_of(&options));
    // The files that call would parse.
    crate::discover::warm::warm_in_background(root);
    Ok(status_out(Some(status)))
}

/// Starts the index of `path` if needed and resolves when it is ready;
/// rejects with the reason it will not be (too few or too many files, over
/// the size cap, the watcher cannot start) or `CANCELLED` when `signal`
/// aborts.
#[napi(catch_unwind, ts_return_type = "Promise<IndexStatus>")]
pub fn index_warm<'env>(
    env: &'env Env,
    options: IndexWarmOptions,
) -> Result<PromiseRaw<'env, IndexStatus>> {
    let root = root_of(&options.cwd, &options.path).map_err(|e| to_js(env, e))?;
    check_not_aborted(env, options.signal.as_ref())?;
    crate::structure::compile_queries_in_background();
    let config = config_of(&options);
    // A saved-only warm is a one-shot command's (the CLI's grep): parsing
    // the tree beside it would only slow it down.
    if !config.saved_only {
        crate::discover::warm::warm_in_background(root.clone());
    }
    let cancel = CancelToken::new(None);
    run_cancellable(
        env,
        "index",
        options.signal.as_ref(),
        &cancel,
        move |cancel| match crate::index::warm(&root, config, cancel) {
            Ok(s) => Ok(s),
            Err(_) if cancel.is_stopped() => Err(CodedError::cancelled()),
            Err(why) => Err(CodedError::new(ErrorCode::Io, why)),
        },
        |s| status_out(Some(s)),
    )
}

/// Forgets the index of `path` in this process (its build stops, its
/// watcher closes). Returns whether there was one. A directory that no
/// longer exists can still be dropped by the path it was indexed under.
#[napi(catch_unwind)]
pub fn index_drop(env: Env, options: IndexPathOptions) -> Result<bool> {
    let root = match root_of(&options.cwd, &options.path) {
        Ok(root) => root,
        Err(e) if e.code == ErrorCode::PathNotFound => {
            let cwd = cwd_of(&options.cwd).map_err(|e| to_js(&env, e))?;
            match options.path.as_deref() {
                Some(p) if !p.is_empty() => cwd.join(p),
                _ => cwd,
            }
        }
        Err(e) => return Err(to_js(&env, e)),
    };
    Ok(crate::index::drop_root(&root))
}

/// Whether an index could narrow a search for `pattern` to some files
/// (false: every file is a candidate, and a scan is as fast): lets a
/// one-shot caller skip opening a saved index it could not use.
#[napi(catch_unwind)]
pub fn index_can_narrow(options: IndexPatternOptions) -> bool {
    crate::index::can_narrow(
        &options.pattern,
        options.literal.unwrap_or(false),
        options.ignore_case.unwrap_or(false),
    )
}
