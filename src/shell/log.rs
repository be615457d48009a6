//! Bounded reads of a job log: the tail, and the bytes after an offset.
//! Neither reads more than it returns (plus one 64 KiB block while looking
//! for line starts), so a 1 GB log costs what a small one does.
//!
//! Text is lossy UTF-8. A read that starts inside a multi-byte character
//! skips its continuation bytes; one that ends inside a character stops
//! before it (unless the writer is known to be done), so the next
//! incremental read begins with the whole character instead of two halves
//! that each decode to U+FFFD.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

const BLOCK: u64 = 64 * 1024;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogChunk {
    pub text: String,
    /// Offset of the first byte shown.
    pub start: u64,
    /// Offset just after the last byte shown: where the next incremental
    /// read starts.
    pub end: u64,
    /// Log size when read.
    pub size: u64,
    /// Bytes between the requested start (0 for a tail) and `start` that
    /// were left out.
    pub skipped: u64,
    /// Bytes after `end` that exist but were not returned.
    pub remaining: u64,
}

/// Which end of an oversized range to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    Head,
    Tail,
}

/// The last `max_lines` lines (all, if `None`) within the last `max_bytes`.
/// A trailing newline ends the last line rather than starting an empty one.
pub fn tail(
    path: &Path,
    max_lines: Option<u64>,
    max_bytes: u64,
    done: bool,
) -> io::Result<LogChunk> {
    tail_after(path, 0, max_lines, max_bytes, done)
}

/// [`tail`] that never reaches back before `origin` (where a job's output
/// begins in a log that already had content); `skipped` counts from there.
pub fn tail_after(
    path: &Path,
    origin: u64,
    max_lines: Option<u64>,
    max_bytes: u64,
    done: bool,
) -> io::Result<LogChunk> {
    let file = File::open(path)?;
    let size = file.metadata()?.len();
    let origin = if origin > size { 0 } else { origin };
    let floor = size.saturating_sub(max_bytes).max(origin);
    let mut start = floor;
    if let Some(lines) = max_lines {
        start = line_start_before(&file, size, floor, lines)?;
    }
    let mut chunk = read_span(&file, start, size, size, done)?;
    chunk.skipped = chunk.start - origin;
    Ok(chunk)
}

/// The bytes from `offset` on, at most `max_bytes` of them, keeping the head
/// or the tail of the range when it is longer. An offset past the end (the
/// log was truncated) reads from 0 again.
pub fn read_from(
    path: &Path,
    offset: u64,
    max_bytes: u64,
    keep: Keep,
    done: bool,
) -> io::Result<LogChunk> {
    let file = File::open(path)?;
    let size = file.metadata()?.len();
    let offset = if offset > size { 0 } else { offset };
    let (start, end) = if size - offset <= max_bytes {
        (offset, size)
    } else {
        match keep {
            Keep::Head => (offset, offset + max_bytes),
            Keep::Tail => (size - max_bytes, size),
        }
    };
    let mut chunk = read_span(&file, start, end, size, done)?;
    chunk.skipped = chunk.start - offset;
    Ok(chunk)
}

/// Start of the `lines`-th line counted from the end, not before `floor`.
fn line_start_before(file: &File, size: u64, floor: u64, lines: u64) -> io::Result<u64> {
    if lines == 0 {
        return Ok(size);
    }
    let mut pos = size;
    let mut seen = 0u64;
    let mut buf = Vec::new();
    // The newline ending the file terminates the last line; it doesn't count.
    let mut skip_last = true;
    while pos > floor {
        let from = pos.saturating_sub(BLOCK).max(floor);
        buf.resize((pos - from) as usize, 0);
        file.read_exact_at(&mut buf, from)?;
        for i in memchr::memrchr_iter(b'\n', &buf) {
            let at = from + i as u64;
            if skip_last && at + 1 == size {
                skip_last = false;
                continue;
            }
            skip_last = false;
            seen += 1;
            if seen == lines {
                return Ok(at + 1);
            }
        }
        skip_last = false;
        pos = from;
    }
    Ok(floor)
}

fn read_span(file: &File, start: u64, end: u64, size: u64, done: bool) -> io::Result<LogChunk> {
    let mut buf = vec![0u8; (end - start) as usize];
    file.read_exact_at(&mut buf, start)?;
    let from = if start == 0 {
        0
    } else {
        leading_continuations(&buf)
    };
    let mut to = buf.len();
    if end < size || !done {
        to -= trailing_partial(&buf[from..]);
    }
    Ok(LogChunk {
        text: String::from_utf8_lossy(&buf[from..to]).into_owned(),
        start: start + from as u64,
        end: start + to as u64,
        size,
        skipped: 0,
        remaining: size - (start + to as u64),
    })
}

/// Continuation bytes (`10xxxxxx`) at the start belong to a character that
/// began before the read; at most three can.
fn leading_continuations(buf: &[u8]) -> usize {
    buf.iter()
        .take(3)
        .take_while(|&&b| b & 0xC0 == 0x80)
        .count()
}

/// Length of an incomplete but so far valid character at the end, which
/// the writer may still be completing.
fn trailing_partial(buf: &[u8]) -> usize {
    for back in 1..=buf.len().min(3) {
        let b = buf[buf.len() - back];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let need = match b {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return 0,
        };
        return if back < need { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn log(bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("job.log");
        std::fs::write(&p, bytes).unwrap();
        (dir, p)
    }

    #[test]
    fn tail_lines_ignores_the_final_newline_and_reports_what_was_left_out() {
        let (_d, p) = log(b"one\ntwo\nthree\n");
        let c = tail(&p, Some(2), 1 << 20, true).unwrap();
        assert_eq!(c.text, "two\nthree\n");
        assert_eq!((c.start, c.skipped, c.end, c.size), (4, 4, 14, 14));
        let c = tail(&p, Some(10), 1 << 20, true).unwrap();
        assert_eq!((c.text.as_str(), c.skipped), ("one\ntwo\nthree\n", 0));
        let (_d, p) = log(b"one\ntwo");
        assert_eq!(tail(&p, Some(1), 100, true).unwrap().text, "two");
    }

    #[test]
    fn tail_bytes_cut_inside_a_character_starts_at_the_next_one() {
        // "€" is E2 82 AC; the last 7 bytes start with its final byte.
        let (_d, p) = log("x€€€".as_bytes());
        let c = tail(&p, None, 7, true).unwrap();
        assert_eq!(c.text, "€€");
        assert_eq!(c.start, 4);
        assert!(!c.text.contains('\u{FFFD}'));
    }

    #[test]
    fn a_half_written_character_is_held_back_until_complete() {
        let (_d, p) = log(b"ab\xE2\x82");
        let c = read_from(&p, 0, 100, Keep::Head, false).unwrap();
        assert_eq!((c.text.as_str(), c.end, c.remaining), ("ab", 2, 2));
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"\xACz")
            .unwrap();
        let c = read_from(&p, c.end, 100, Keep::Head, false).unwrap();
        assert_eq!(c.text, "€z");
        // Once the writer is done, garbage is shown rather than hidden.
        let (_d, p) = log(b"ab\xE2\x82");
        assert_eq!(
            read_from(&p, 0, 100, Keep::Head, true).unwrap().text,
            "ab\u{FFFD}"
        );
    }

    #[test]
    fn read_from_keeps_head_or_tail_and_counts_the_rest() {
        let (_d, p) = log(b"0123456789");
        let c = read_from(&p, 2, 3, Keep::Head, true).unwrap();
        assert_eq!(
            (c.text.as_str(), c.end, c.remaining, c.skipped),
            ("234", 5, 5, 0)
        );
        let c = read_from(&p, 2, 3, Keep::Tail, true).unwrap();
        assert_eq!(
            (c.text.as_str(), c.start, c.skipped, c.remaining),
            ("789", 7, 5, 0)
        );
        let c = read_from(&p, 99, 3, Keep::Head, true).unwrap();
        assert_eq!(
            c.text, "012",
            "a truncated log is read from the start again"
        );
    }

    #[test]
    fn tail_of_a_big_log_reads_only_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.log");
        let mut f = File::create(&p).unwrap();
        let line = "ünïcödé line of text €€€\n".repeat(1000);
        for _ in 0..100 {
            f.write_all(line.as_bytes()).unwrap();
        }
        drop(f);
        let size = std::fs::metadata(&p).unwrap().len();
        let t = std::time::Instant::now();
        let c = tail(&p, None, 64 * 1024, true).unwrap();
        assert!(t.elapsed() < std::time::Duration::from_millis(50));
        assert!(c.size == size && c.end == size);
        assert!(size - c.start <= 64 * 1024 && size - c.start > 64 * 1024 - 4);
        assert!(!c.text.contains('\u{FFFD}'));
        assert!(c.text.ends_with("€€€\n"));
        let c = tail(&p, Some(3), 64 * 1024, true).unwrap();
        assert_eq!(c.text, "ünïcödé line of text €€€\n".repeat(3));
    }
}
