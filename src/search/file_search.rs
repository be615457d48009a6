//! Searching one file: open without blocking, read small files whole (one
//! read, reusable for structure), stream large ones, judge binary data as
//! rg does, and turn matches into bounded hits.

use super::buffers;
use super::dir_open::DirOpener;
use super::display::{display_bytes, relative_bytes, DisplayPath};
use super::grep_options::{GrepMode, GrepOptions};
use super::line_window::{trim_terminator, window};
use super::matcher::build_searcher;
use super::outline_cache;
use super::results::{BinaryStop, ContextLine, FileStructure, Hit, HitSymbol};
use crate::structure::{self, Language, Outline};
use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkContext, SinkContextKind, SinkMatch};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::buffers::WHOLE_READ_LIMIT;

pub(super) enum FileOutcome {
    Searched {
        /// Capped at the limit.
        hits: Vec<Hit>,
        /// The file's full count of matching lines when it was asked for
        /// (ignored files in count-only mode).
        full_count: u64,
        /// The file's structure, when grouping wants it (see `search`).
        outline: Option<Arc<Outline>>,
        /// Content mode: the file matched and its search stopped at a NUL
        /// byte (`hits` are what came before it).
        binary: Option<BinaryStop>,
    },
    Binary,
    Failed(String),
    Skipped,
}

/// Reads on from `filled` to EOF, growing `buf` if the file grew. The
/// buffer keeps its length between files (only growing), so its bytes are
/// zeroed once per growth, not once per file.
fn read_to_eof(
    file: &mut std::fs::File,
    buf: &mut Vec<u8>,
    mut filled: usize,
) -> std::io::Result<usize> {
    loop {
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        match file.read(&mut buf[filled..]) {
            Ok(0) => return Ok(filled),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The buffer a searcher starts with: most source files fit, so they are
/// read without asking their size.
const FIRST_BUFFER: usize = 64 << 10;

/// What [`read_unsized`] found.
enum Unsized {
    /// The whole file is in the buffer, this many bytes.
    Whole(usize),
    /// Over [`WHOLE_READ_LIMIT`]: this many bytes are in the buffer, the
    /// rest is still to be read from the file.
    Large(usize),
    /// Not a regular file any more (swapped since the walk).
    NotRegular,
}

/// Fills `piece` from `file`: how many bytes came, and whether the file
/// ended (a read of 0 bytes, or, with `short_read_ends_file`, a short one).
pub fn fill(
    file: &mut std::fs::File,
    piece: &mut [u8],
    short_read_ends_file: bool,
) -> std::io::Result<(usize, bool)> {
    let mut n = 0;
    while n < piece.len() {
        match file.read(&mut piece[n..]) {
            Ok(0) => return Ok((n, true)),
            Ok(got) if short_read_ends_file && n + got < piece.len() => return Ok((n + got, true)),
            Ok(got) => n += got,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((n, false))
}

/// Reads a walked file without an fstat first: the walk already knows it
/// is a regular file, and an fstat per file is a fifth of a whole-tree
/// search's syscalls. Only a file of `FIRST_BUFFER` bytes or more is
/// fstat'ed, to size the rest of the read and to refuse a device swapped in
/// since the walk (its reads would never end); a failed read is checked the
/// same way.
///
/// With `short_read_ends_file` (see `local_fs`), a read that returns less
/// than asked is the end of the file, and the read that would only see 0
/// bytes is not made.
fn read_unsized(
    file: &mut std::fs::File,
    buf: &mut Vec<u8>,
    short_read_ends_file: bool,
) -> std::io::Result<Unsized> {
    if buf.len() < FIRST_BUFFER {
        buf.resize(FIRST_BUFFER, 0);
    }
    let filled = match fill(file, &mut buf[..FIRST_BUFFER], short_read_ends_file) {
        Ok((n, true)) => return Ok(Unsized::Whole(n)),
        Ok((n, false)) => n,
        Err(e) => {
            return match file.metadata() {
                Ok(m) if !m.is_file() => Ok(Unsized::NotRegular),
                _ => Err(e),
            }
        }
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(Unsized::NotRegular);
    }
    if meta.len() > WHOLE_READ_LIMIT {
        return Ok(Unsized::Large(filled));
    }
    if buf.len() < meta.len() as usize + 1 {
        buf.resize(meta.len() as usize + 1, 0);
    }
    read_to_eof(file, buf, filled).map(Unsized::Whole)
}

/// Per-thread search state: the buffer is reused across files.
pub(super) struct FileSearcher<'a> {
    opts: &'a GrepOptions,
    matcher: RegexMatcher,
    searcher: Searcher,
    opener: DirOpener,
    /// How much of the leased buffer holds the current file.
    filled: usize,
    display_root: PathBuf,
    short_read_ends_file: bool,
    /// The search was given this file by name: binary data converts
    /// rather than quits (see `build_searcher`).
    named: bool,
}

/// Stops a streamed read when the search is cancelled, since the searcher
/// only calls back on matches.
struct CancellableReader<'a, R> {
    inner: R,
    stop: &'a dyn Fn() -> bool,
}

impl<R: Read> Read for CancellableReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if (self.stop)() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "cancelled",
            ));
        }
        self.inner.read(buf)
    }
}

impl<'a> FileSearcher<'a> {
    pub(super) fn new(
        opts: &'a GrepOptions,
        matcher: RegexMatcher,
        display_root: PathBuf,
        short_read_ends_file: bool,
        named: bool,
    ) -> Self {
        FileSearcher {
            opts,
            matcher,
            searcher: build_searcher(opts, named),
            opener: DirOpener::default(),
            filled: 0,
            display_root,
            short_read_ends_file,
            named,
        }
    }

    /// Searches one file. `ignored_root` is the index of the ignored root it
    /// lies under. `shown` says the caller may show this file's hits grouped
    /// (they are not only counted, nor past the grouped top of the output):
    /// only then, with the `group` option, is a file read whole and not too
    /// dense outlined, from the buffer just searched (no second read).
    pub(super) fn search(
        &mut self,
        path: &Path,
        ignored_root: Option<usize>,
        shown: bool,
        stop: &dyn Fn() -> bool,
    ) -> FileOutcome {
        crate::fault::panic_if_injected("grep-file");
        let Some(mut buf) = buffers::lease(stop) else {
            return FileOutcome::Skipped;
        };
        let mut file = match self.opener.open(path) {
            Ok(f) => f,
            Err(e) => return FileOutcome::Failed(format!("{}: {e}", path.display())),
        };
        let fail = |e: std::io::Error| FileOutcome::Failed(format!("{}: {e}", path.display()));
        let mut sink = HitSink {
            opts: self.opts,
            matcher: &self.matcher,
            path,
            display_root: &self.display_root,
            display: None,
            ignored: ignored_root.is_some(),
            hits: Vec::new(),
            pending_before: Vec::new(),
            lines_matched: 0,
            cap: self.opts.limit.unwrap_or(u64::MAX),
            trailing_left: self.opts.after,
            count_past_cap: ignored_root.is_some() && self.opts.ignored_count_only,
            binary: None,
            matched_past_binary: false,
            stop,
        };
        let (whole, result) = match read_unsized(&mut file, &mut buf, self.short_read_ends_file) {
            Err(e) => return fail(e),
            Ok(Unsized::NotRegular) => return FileOutcome::Skipped,
            Ok(Unsized::Whole(n)) => {
                self.filled = n;
                // A walked file holding a NUL byte is searched as rg reads
                // it, a block of 64 KiB at a time: the searcher quits at
                // the block with the NUL, keeping the matches of the blocks
                // before (a slice would only be checked in its first 64
                // KiB and in its matches: rg's memory-map rule, which rg
                // keeps for files named alone, as here). A byte order mark
                // is sniffed either way, the text transcoded and its NULs
                // judged after that (UTF-16 holding ASCII is not binary).
                let r = if !self.named && memchr::memchr(0, &buf[..n]).is_some() {
                    self.searcher
                        .search_reader(&self.matcher, &buf[..n], &mut sink)
                } else {
                    self.searcher
                        .search_slice(&self.matcher, &buf[..n], &mut sink)
                };
                (true, r)
            }
            Ok(Unsized::Large(n)) => {
                self.filled = 0;
                let head = std::io::Cursor::new(buf[..n].to_vec());
                let reader = CancellableReader {
                    inner: head.chain(&file),
                    stop,
                };
                (
                    false,
                    self.searcher
                        .search_reader(&self.matcher, reader, &mut sink),
                )
            }
        };
        if let Err(e) = result {
            if e.kind() != std::io::ErrorKind::Interrupted {
                return FileOutcome::Failed(format!("{}: {e}", path.display()));
            }
        }
        // rg's answer for a file holding a NUL byte: a walked one shows the
        // matches before it, or nothing at all in count mode (rg -c drops
        // it rather than give a short count); a named one (searched on)
        // is only binary in content mode, where its hits stop at the NUL.
        let content = self.opts.mode == GrepMode::Content;
        let binary = match sink.binary {
            Some(_) if !self.named && (sink.lines_matched == 0 || !content) => {
                return FileOutcome::Binary;
            }
            Some(offset) if content && (!sink.hits.is_empty() || sink.matched_past_binary) => {
                Some(BinaryStop {
                    path: sink.display(),
                    offset,
                    ignored: sink.ignored,
                })
            }
            _ => None,
        };
        if self.opts.mode != GrepMode::Content && sink.lines_matched > 0 {
            let path = sink.display();
            sink.hits.push(Hit {
                path,
                ignored: sink.ignored,
                line: 0,
                column: 0,
                text: String::new(),
                cut_before: 0,
                cut_after: 0,
                before: Vec::new(),
                after: Vec::new(),
                count: sink.lines_matched,
                symbol: None,
                structure: None,
            });
        }
        let wants_structure = shown
            && whole
            && self.opts.group
            && self.opts.mode == GrepMode::Content
            && !sink.hits.is_empty()
            && sink.hits.len() < structure::group::SKIP_AT;
        let outline = if wants_structure && !stop() {
            Language::detect(path, &buf[..self.filled])
                .and_then(|lang| {
                    // Stamped after the read: a change since then is too
                    // recent for the outline cache to keep or trust.
                    let meta = file.metadata().ok()?;
                    outline_cache::outline_of(lang, &meta, &buf[..self.filled], stop)
                })
                .filter(|o| !o.symbols.is_empty())
        } else {
            None
        };
        FileOutcome::Searched {
            hits: sink.hits,
            full_count: sink.lines_matched,
            outline,
            binary,
        }
    }
}

struct HitSink<'a> {
    opts: &'a GrepOptions,
    matcher: &'a RegexMatcher,
    path: &'a Path,
    display_root: &'a Path,
    /// Made on the first hit: most searched files have none, and the
    /// display path is a per-file allocation on the hot path.
    display: Option<Arc<DisplayPath>>,
    ignored: bool,
    hits: Vec<Hit>,
    pending_before: Vec<ContextLine>,
    lines_matched: u64,
    cap: u64,
    /// Lines still shown after the cap: the after-context of the last
    /// counted match, matching lines in it shown as matches that are not
    /// counted (`count` 0), as `rg -m N -A M` prints them.
    trailing_left: usize,
    /// Keep counting (without building hits) after the cap.
    count_past_cap: bool,
    /// Where the searcher met the first NUL byte.
    binary: Option<u64>,
    /// A named file matched past its NUL byte (not shown: rg's "binary
    /// file matches").
    matched_past_binary: bool,
    stop: &'a dyn Fn() -> bool,
}

impl HitSink<'_> {
    fn display(&mut self) -> Arc<DisplayPath> {
        let (root, path) = (self.display_root, self.path);
        self.display
            .get_or_insert_with(|| Arc::new(display_bytes(&relative_bytes(root, path))))
            .clone()
    }

    fn context_line(&self, line: u64, bytes: &[u8]) -> ContextLine {
        let w = window(trim_terminator(bytes), None, self.opts.max_line_length);
        ContextLine {
            line,
            text: w.text,
            cut_before: w.cut_before,
            cut_after: w.cut_after,
        }
    }
}

impl Sink for HitSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _s: &Searcher, m: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if (self.stop)() {
            return Ok(false);
        }
        // Only a named file's search goes on past a NUL byte; its first
        // match there ends it, shown only as a binary match (rg's printer).
        if self.binary.is_some() && self.opts.mode == GrepMode::Content {
            self.matched_past_binary = true;
            return Ok(false);
        }
        match self.opts.mode {
            GrepMode::Files => {
                self.lines_matched = 1;
                return Ok(false);
            }
            // One per match the searcher reports, as rg -c counts: a line,
            // or in multi-line mode a run of lines.
            GrepMode::Count => {
                self.lines_matched += 1;
                return Ok(true);
            }
            GrepMode::Content => {}
        }
        let first_line = m.line_number().unwrap_or(0);
        for (i, raw) in m.lines().enumerate() {
            // A multi-line match is counted once, on its first line, its
            // other lines shown with it (`count` 0); the searcher stops at
            // the cap there (`build_searcher`), as rg's does.
            let continuation = self.opts.multiline && i > 0;
            let past_cap = !continuation && self.lines_matched >= self.cap;
            if past_cap {
                if self.count_past_cap {
                    self.lines_matched += 1;
                }
                if self.trailing_left == 0 {
                    if self.count_past_cap {
                        continue;
                    }
                    return Ok(false);
                }
                self.trailing_left -= 1;
            }
            let line = trim_terminator(raw);
            let focus = self
                .matcher
                .find(line)
                .ok()
                .flatten()
                .map(|mat| mat.start());
            let w = window(line, focus, self.opts.max_line_length);
            if !past_cap && !continuation {
                self.lines_matched += 1;
            }
            let path = self.display();
            self.hits.push(Hit {
                path,
                ignored: self.ignored,
                line: first_line + i as u64,
                column: focus.map_or(1, |f| f as u64 + 1),
                text: w.text,
                cut_before: w.cut_before,
                cut_after: w.cut_after,
                before: if i == 0 {
                    std::mem::take(&mut self.pending_before)
                } else {
                    Vec::new()
                },
                after: Vec::new(),
                count: u64::from(!past_cap && !continuation),
                symbol: None,
                structure: None,
            });
        }
        Ok(self.lines_matched < self.cap || self.trailing_left > 0 || self.count_past_cap)
    }

    fn context(&mut self, _s: &Searcher, c: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if self.binary.is_some() {
            return Ok(false);
        }
        let line = self.context_line(c.line_number().unwrap_or(0), c.bytes());
        match c.kind() {
            SinkContextKind::Before => self.pending_before.push(line),
            SinkContextKind::After if self.lines_matched >= self.cap => {
                // Past the cap only the last counted match's window is
                // shown; a file still counted goes on without showing more.
                if self.trailing_left == 0 {
                    return Ok(self.count_past_cap);
                }
                self.trailing_left -= 1;
                if let Some(last) = self.hits.last_mut() {
                    last.after.push(line);
                }
                return Ok(self.trailing_left > 0 || self.count_past_cap);
            }
            SinkContextKind::After => {
                if let Some(last) = self.hits.last_mut() {
                    last.after.push(line);
                }
            }
            SinkContextKind::Other => {}
        }
        Ok(true)
    }

    /// The searcher quits there (a walked file) or goes on (a named one).
    fn binary_data(&mut self, _s: &Searcher, offset: u64) -> Result<bool, Self::Error> {
        self.binary = Some(offset);
        Ok(true)
    }
}

/// Gives `hits` (one file's, in line order, as they will be shown) their
/// symbols and the first one the file's [`FileStructure`]; leaves them
/// flat when `structure::group` says the file is not to be grouped.
pub(super) fn attach_structure(outline: &Outline, hits: &mut [Hit]) {
    let lines: Vec<u32> = hits.iter().map(|h| h.line as u32).collect();
    let Some(g) = structure::group(outline, &lines) else {
        return;
    };
    for (hit, symbol) in hits.iter_mut().zip(&g.symbols) {
        hit.symbol = symbol.map(|i| HitSymbol::from(&outline.symbols[i]));
    }
    hits[0].structure = Some(Box::new(FileStructure {
        language: outline.language,
        total_lines: outline.total_lines,
        total_symbols: outline.symbols.len(),
        others: g
            .others
            .iter()
            .map(|&i| HitSymbol::from(&outline.symbols[i]))
            .collect(),
        others_omitted: g.others_omitted,
    }));
}

#[cfg(test)]
mod read_tests {
    use super::*;

    /// Every size around the first buffer's edge is read whole, to its last
    /// byte, whether a short read ends the file or a read must return 0.
    #[test]
    fn files_around_the_first_buffer_are_read_to_their_last_byte() {
        let t = tempfile::tempdir().unwrap();
        for size in [
            0,
            1,
            4095,
            4096,
            FIRST_BUFFER - 1,
            FIRST_BUFFER,
            FIRST_BUFFER + 1,
            3 * FIRST_BUFFER,
        ] {
            let path = t.path().join(format!("f{size}"));
            let body: Vec<u8> = (0..size).map(|i| b'a' + (i % 26) as u8).collect();
            std::fs::write(&path, &body).unwrap();
            for short_read_ends_file in [false, true] {
                let mut buf = Vec::new();
                let mut file = std::fs::File::open(&path).unwrap();
                match read_unsized(&mut file, &mut buf, short_read_ends_file).unwrap() {
                    Unsized::Whole(n) => {
                        assert_eq!(&buf[..n], &body[..], "{size} {short_read_ends_file}")
                    }
                    _ => panic!("{size}: read whole"),
                }
            }
        }
    }
}
