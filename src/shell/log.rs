//! Bounded reads of a job log: the tail, and the bytes after an offset;
//! and the trim that keeps a growing log under its bound.
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
use std::sync::atomic::{AtomicU64, Ordering};

const BLOCK: u64 = 64 * 1024;

/// Where a job's log was cut (`logTrimAt`) and how much was removed there in
/// all (`logShift`), readable without the registry's lock: the foreground
/// log pump polls them every 40 ms on Node's main thread, and a cut holds
/// the lock for 10-40 ms. One writer (the monitor, under the registry
/// lock); a reader retries while a write is under way (a sequence lock),
/// so the two always come from one cut. The cuts of a job with a log pump
/// are the pump's record (`pump.rs`), read from its file.
#[derive(Debug)]
pub struct Cuts {
    seq: AtomicU64,
    /// `u64::MAX`: never cut.
    at: AtomicU64,
    shift: AtomicU64,
    /// The pump's record, when the pump makes the cuts, and how it is
    /// read (`pump.rs`, which is this file's reader, not the other way round).
    file: Option<(std::path::PathBuf, PumpRecord)>,
}

/// Reads a log pump's record of its cuts: `(logTrimAt, logShift)`.
pub type PumpRecord = fn(&Path) -> (Option<u64>, u64);

impl Cuts {
    pub fn new(at: Option<u64>, shift: u64) -> Cuts {
        Cuts {
            seq: AtomicU64::new(0),
            at: AtomicU64::new(at.unwrap_or(u64::MAX)),
            shift: AtomicU64::new(shift),
            file: None,
        }
    }

    /// The cuts a log pump makes, as its record at `file` says.
    pub fn of_pump(file: std::path::PathBuf, read: PumpRecord) -> Cuts {
        Cuts {
            file: Some((file, read)),
            ..Cuts::new(None, 0)
        }
    }

    pub fn set(&self, at: Option<u64>, shift: u64) {
        self.seq.fetch_add(1, Ordering::AcqRel);
        self.at.store(at.unwrap_or(u64::MAX), Ordering::Release);
        self.shift.store(shift, Ordering::Release);
        self.seq.fetch_add(1, Ordering::AcqRel);
    }

    /// `(logTrimAt, logShift)`.
    pub fn get(&self) -> (Option<u64>, u64) {
        if let Some((file, read)) = &self.file {
            return read(file);
        }
        loop {
            let before = self.seq.load(Ordering::Acquire);
            let at = self.at.load(Ordering::Acquire);
            let shift = self.shift.load(Ordering::Acquire);
            if before.is_multiple_of(2) && self.seq.load(Ordering::Acquire) == before {
                return ((at != u64::MAX).then_some(at), shift);
            }
            std::hint::spin_loop();
        }
    }
}

/// What a log keeps of its start when it is trimmed.
pub const HEAD_BYTES: u64 = 1024 * 1024;
/// Default bound of one job's log (`shell.maxLogBytes`); its owner is
/// `defaults.json`, which the settings' defaults read too.
pub const DEFAULT_MAX_LOG_BYTES: u64 = super::defaults::MAX_LOG_BYTES;

/// Where the log of a job bounded by `max` starts being cut: never before a
/// quarter of the bound, whatever the rate (a build printing 5 MB in a
/// second keeps all of it), and late enough for a cut to keep a tail.
pub fn cut_from(max: u64) -> u64 {
    (max / 4).max(HEAD_BYTES + max / 8)
}

/// What the pump (`pump.rs`) cuts a log back to when the next write would
/// take it past the bound `max`: half the bound (at least the head and a
/// quarter), so a cut keeps a long tail and comes once per half a bound
/// of output, and nothing is cut while the log is under its bound.
pub fn pump_keep(max: u64) -> u64 {
    (max / 2).max(HEAD_BYTES + max / 4)
}

/// Where the brake stops a job whose log ran past [`cut_from`] faster than
/// it was cut: a quarter of the way from there to the bound, so what the
/// job writes before the stop takes effect (the brake thread waiting for a
/// core on a busy machine: 12 MiB were seen with the brake halfway) still
/// fits under it. A log growing at less than ~400 MB/s is cut by the
/// monitor before it gets here.
pub fn brake_at(max: u64) -> u64 {
    let from = cut_from(max);
    from + max.saturating_sub(from) / 4
}

/// The newest output a cut keeps (besides the head): half of what lies
/// between the head and [`cut_from`], or at most `flood_keep` while the job
/// floods (the less a cut keeps, the less it writes back while the job is
/// held). Returned as the `slack` [`trim`] takes with `max = cut_from(max)`.
pub fn cut_slack(max: u64, flood_keep: Option<u64>) -> u64 {
    let from = cut_from(max);
    let room = from.saturating_sub(HEAD_BYTES);
    let keep = match flood_keep {
        Some(k) => k.min(room / 2),
        None => room / 2,
    };
    room - keep
}

/// One trim of a log that outgrew its bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trim {
    /// Where the marker line starts (the end of the kept head).
    pub at: u64,
    /// Bytes removed from the file at `at`: what was after them moved back
    /// by this much.
    pub shift: u64,
    /// Output lost in this trim (the removed bytes, plus those the marker
    /// line overwrote, minus the previous marker's).
    pub dropped: u64,
}

/// The marker line; same length for any count up to 20 digits, so the
/// kept tail starts at a known offset.
pub fn marker_line(dropped_total: u64, max: u64) -> String {
    format!(
        "\n[pi-utils: {dropped_total:>20} bytes of output dropped here: the log keeps its first {} KiB and its newest output, up to shell.maxLogBytes = {max}]\n",
        HEAD_BYTES / 1024
    )
}

/// Keeps a log that an `O_APPEND` writer is still growing under `max`
/// bytes: once it passes `max`, the bytes after the first [`HEAD_BYTES`]
/// (from `origin`, where the job's output starts) are cut down so the file
/// is about `max - slack` long again, and a marker line says how much is
/// gone. `prev_marker`: the marker length a previous trim left at `at`.
///
/// Linux cuts with `FALLOC_FL_COLLAPSE_RANGE` (ext4, xfs): one metadata
/// operation the kernel serializes with the writer's appends, so nothing
/// is lost that is not counted. Elsewhere the tail is copied down and the
/// file truncated; output appended during that copy may be lost uncounted.
///
/// `max` is where trimming starts and `setting` the bound the marker names:
/// a registry trims well before the setting is reached, so a flood between
/// two checks stays under it.
pub fn trim(
    path: &Path,
    origin: u64,
    max: u64,
    slack: u64,
    dropped_before: u64,
    prev_marker: u64,
    setting: u64,
) -> io::Result<Option<Trim>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)?;
    let size = file.metadata()?.len();
    if size <= max {
        return Ok(None);
    }
    let blk = block_size(&file);
    let at = (origin + HEAD_BYTES).div_ceil(blk) * blk;
    let keep_tail = max
        .saturating_sub(slack)
        .saturating_sub(at - origin)
        .max(blk);
    if size <= at + keep_tail + blk {
        return Ok(None);
    }
    let shift = (size - keep_tail - at) / blk * blk;
    if shift == 0 {
        return Ok(None);
    }
    if !collapse(&file, at, shift) {
        copy_down(&file, at, at + shift)?;
    }
    let marker_len = marker_line(0, setting).len() as u64;
    let dropped = (shift + marker_len).saturating_sub(prev_marker);
    let line = marker_line(dropped_before + dropped, setting);
    file.write_all_at(line.as_bytes(), at)?;
    Ok(Some(Trim { at, shift, dropped }))
}

fn block_size(file: &File) -> u64 {
    use std::os::unix::fs::MetadataExt;
    file.metadata()
        .map(|m| m.blksize())
        .unwrap_or(4096)
        .clamp(512, 1 << 20)
}

#[cfg(target_os = "linux")]
fn collapse(file: &File, at: u64, len: u64) -> bool {
    use std::os::fd::AsRawFd;
    const FALLOC_FL_COLLAPSE_RANGE: libc::c_int = 0x08;
    unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            FALLOC_FL_COLLAPSE_RANGE,
            at as libc::off_t,
            len as libc::off_t,
        ) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn collapse(_file: &File, _at: u64, _len: u64) -> bool {
    false
}

/// Moves `[from, end)` to `at` in 1 MiB steps (forward: the destination is
/// always behind the source), following a writer that keeps appending,
/// then truncates behind it.
fn copy_down(file: &File, at: u64, from: u64) -> io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    let (mut src, mut dst) = (from, at);
    loop {
        let end = file.metadata()?.len();
        if src >= end {
            break;
        }
        let want = ((end - src) as usize).min(buf.len());
        let n = file.read_at(&mut buf[..want], src)?;
        if n == 0 {
            break;
        }
        file.write_all_at(&buf[..n], dst)?;
        src += n as u64;
        dst += n as u64;
    }
    file.set_len(dst)
}

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
    fn a_log_past_its_bound_keeps_its_head_a_marker_and_its_newest_bytes() {
        let dir = tempfile::tempdir().unwrap();
        flood_and_trim(dir.path());
        // tmpfs has no COLLAPSE_RANGE: the copying fallback.
        if let Ok(shm) = tempfile::tempdir_in("/dev/shm") {
            flood_and_trim(shm.path());
        }
    }

    fn flood_and_trim(dir: &Path) {
        let p = dir.join("flood.log");
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .unwrap();
        let max = 4 * HEAD_BYTES;
        let line = |i: u64| format!("line {i:08}\n");
        let (mut i, mut dropped, mut marker) = (0u64, 0u64, 0u64);
        let mut trims = 0;
        while i < 1_000_000 {
            let chunk: String = (i..i + 1000).map(line).collect();
            f.write_all(chunk.as_bytes()).unwrap();
            i += 1000;
            if let Some(t) = trim(&p, 0, max, HEAD_BYTES / 2, dropped, marker, max).unwrap() {
                assert_eq!(t.at, HEAD_BYTES);
                dropped += t.dropped;
                marker = marker_line(0, max).len() as u64;
                trims += 1;
            }
            assert!(std::fs::metadata(&p).unwrap().len() <= max + 20_000);
        }
        assert!(trims > 1, "trimmed {trims} times");
        let size = std::fs::metadata(&p).unwrap().len();
        let written = 1_000_000 * line(0).len() as u64;
        let marker_len = marker_line(0, max).len() as u64;
        assert_eq!(
            size - marker_len + dropped,
            written,
            "every byte is kept or counted"
        );
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("line 00000000\nline 00000001\n"));
        assert!(
            text.ends_with("line 00999999\n"),
            "the newest output is kept"
        );
        let marker = marker_line(dropped, max);
        assert_eq!(text.matches("bytes of output dropped here").count(), 1);
        assert_eq!(
            &text[HEAD_BYTES as usize..HEAD_BYTES as usize + marker.len()],
            marker
        );
        let c = tail(&p, Some(2), 1 << 20, true).unwrap();
        assert_eq!(c.text, "line 00999998\nline 00999999\n");
    }

    #[test]
    fn cuts_start_at_a_quarter_of_the_bound_and_the_brake_before_the_bound() {
        for max in [2 << 20, 8 << 20, 64 << 20, 1 << 30] {
            let (from, brake) = (cut_from(max), brake_at(max));
            assert!(from >= max / 4 && from > HEAD_BYTES, "{max}");
            assert!(from < brake && brake < max, "{max}");
            let kept = from - cut_slack(max, None);
            assert!(
                kept > HEAD_BYTES && kept < from,
                "{max}: a cut keeps a tail"
            );
            assert!(from - cut_slack(max, Some(1 << 20)) <= kept);
        }
        assert_eq!(cut_from(64 << 20), 16 << 20, "the quarter the README names");
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
