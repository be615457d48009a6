//! Outlining one named file, as the `outline` tool and CLI ask for it:
//! finding it (also from the display form of a non-UTF-8 name), refusing
//! what would block or not fit (special files, directories, huge files),
//! reading it and getting its symbols through the cache grep shares.

use super::display_lookup::find_by_display;
use super::error::{CodedError, ErrorCode};
use super::near_names::not_found;
use super::outline_cache::outline_of;
use crate::structure::{self, Language, Symbol};
use std::io::Read;
use std::path::Path;

/// Files larger than this are refused rather than parsed (memory and time
/// stay bounded).
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Symbols listed when the caller sets no limit.
pub const DEFAULT_MAX_ITEMS: usize = 1000;

/// One file's outline, cut to `max_items`.
#[derive(Debug, Clone)]
pub struct FileOutline {
    /// `None` when no grammar reads this file type (not an error).
    pub language: Option<Language>,
    pub total_lines: u32,
    /// Source order; `parent` indexes this list.
    pub symbols: Vec<Symbol>,
    /// Symbols left out by `max_items`.
    pub omitted: usize,
    pub has_errors: bool,
    /// As the `outline` tool prints it.
    pub text: String,
    /// What a harness context made of the file (`none` without one).
    pub context: &'static str,
}

/// What `outline` is asked besides the file: a harness context, and
/// whether to append what the outline saw (`debug structure:`).
#[derive(Default, Clone, Copy)]
pub struct OutlineExtras<'a> {
    pub context: Option<&'a crate::context::HarnessContext>,
    pub debug_structure: bool,
}

/// Outlines the file `given` names (relative to `cwd`). Error messages name
/// `given` as the caller wrote it.
pub fn outline_file(cwd: &Path, given: &str, max_items: usize) -> Result<FileOutline, CodedError> {
    outline_file_with(cwd, given, max_items, OutlineExtras::default())
}

/// [`outline_file`] shaped by a harness context, with debug output.
pub fn outline_file_with(
    cwd: &Path,
    given: &str,
    max_items: usize,
    extras: OutlineExtras<'_>,
) -> Result<FileOutline, CodedError> {
    let (path, meta, source) = read_named(cwd, given, "outline")?;
    let lang = Language::detect(&path, &source);
    let outline = lang.and_then(|lang| outline_of(lang, &meta, &source, &|| false));
    let view = crate::context::outline_text(
        given,
        outline.as_deref(),
        &source,
        max_items,
        extras.context,
    );
    let mut text = view.text;
    if extras.debug_structure {
        text.push('\n');
        text.push_str(&crate::context::structure_debug(
            &crate::context::StructureSeen {
                given,
                path: &path,
                source: &source,
                language: lang,
                outline: outline.as_deref(),
                max_items,
            },
            extras.context,
        ));
    }
    let Some(outline) = outline else {
        return Ok(FileOutline {
            language: None,
            total_lines: structure::count_lines(&source),
            symbols: Vec::new(),
            omitted: 0,
            has_errors: false,
            text,
            context: view.state,
        });
    };
    let cut = structure::limit(&outline.symbols, max_items);
    Ok(FileOutline {
        language: Some(outline.language),
        total_lines: outline.total_lines,
        symbols: cut.symbols,
        omitted: cut.omitted,
        has_errors: outline.has_errors,
        text,
        context: view.state,
    })
}

/// The file `given` names under `cwd` (display forms accepted): its path,
/// metadata and bytes, or the error `outline` gives for a missing, special
/// or too large file (`what` names the operation in the last).
pub fn read_named(
    cwd: &Path,
    given: &str,
    what: &str,
) -> Result<(std::path::PathBuf, std::fs::Metadata, Vec<u8>), CodedError> {
    let fail = |code, message: String| CodedError::new(code, message);
    if given.is_empty() {
        return Err(fail(
            ErrorCode::InvalidOption,
            "path must not be empty".into(),
        ));
    }
    let path = find_by_display(cwd, given)
        .ok_or_else(|| fail(ErrorCode::PathNotFound, not_found(cwd, given)))?;
    let cannot_read = |e: std::io::Error| fail(ErrorCode::Io, format!("Cannot read {given}: {e}"));
    let meta = std::fs::metadata(&path).map_err(cannot_read)?;
    if meta.is_dir() {
        return Err(fail(
            ErrorCode::NotAFile,
            format!("Not a file: {given} is a directory"),
        ));
    }
    // Checked before opening: opening a FIFO would block.
    if !meta.is_file() {
        return Err(fail(
            ErrorCode::NotAFile,
            format!("Not a regular file (FIFO, socket or device): {given}"),
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(fail(
            ErrorCode::InvalidOption,
            format!(
                "File too large to {what}: {given} ({} bytes, limit {MAX_FILE_BYTES})",
                meta.len()
            ),
        ));
    }
    let mut source = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(&path)
        .and_then(|f| f.take(MAX_FILE_BYTES).read_to_end(&mut source))
        .map_err(cannot_read)?;
    Ok((path, meta, source))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_of(cwd: &Path, given: &str) -> ErrorCode {
        outline_file(cwd, given, DEFAULT_MAX_ITEMS)
            .unwrap_err()
            .code
    }

    #[test]
    fn outlines_a_file_and_cuts_to_max_items() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("a.rs"), "fn a() {}\nfn b() {}\nfn c() {}\n").unwrap();
        let all = outline_file(t.path(), "a.rs", DEFAULT_MAX_ITEMS).unwrap();
        assert_eq!(all.language, Some(Language::Rust));
        assert_eq!((all.symbols.len(), all.omitted, all.total_lines), (3, 0, 3));
        let cut = outline_file(t.path(), "a.rs", 2).unwrap();
        assert_eq!((cut.symbols.len(), cut.omitted), (2, 1));
        assert!(cut.text.contains("a.rs"));
    }

    #[test]
    fn a_file_without_grammar_has_no_symbols_and_is_no_error() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("notes.txt"), "one\ntwo\n").unwrap();
        let o = outline_file(t.path(), "notes.txt", DEFAULT_MAX_ITEMS).unwrap();
        assert_eq!((o.language, o.symbols.len(), o.total_lines), (None, 0, 2));
    }

    #[test]
    fn each_refusal_has_its_code_and_names_the_path_as_given() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("dir")).unwrap();
        assert_eq!(code_of(t.path(), ""), ErrorCode::InvalidOption);
        assert_eq!(code_of(t.path(), "missing.rs"), ErrorCode::PathNotFound);
        let e = outline_file(t.path(), "dir", 10).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (ErrorCode::NotAFile, "Not a file: dir is a directory")
        );
        let big = std::fs::File::create(t.path().join("big.rs")).unwrap();
        big.set_len(MAX_FILE_BYTES + 1).unwrap();
        let e = outline_file(t.path(), "big.rs", 10).unwrap_err();
        assert!(e.message.starts_with("File too large to outline: big.rs ("));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_being_opened() {
        let t = tempfile::tempdir().unwrap();
        let fifo = std::ffi::CString::new(t.path().join("pipe").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        assert_eq!(code_of(t.path(), "pipe"), ErrorCode::NotAFile);
    }
}
