//! The log pump: copies a job's output from the pipe it writes into to its
//! log, cutting the log before a write would take it past its bound, so the
//! file is at or under the bound at every moment. While a cut is made the
//! pipe fills and the job's next write simply waits (back-pressure), which
//! no watcher of a growing file can promise on a busy machine.
//!
//! This file is the pump's loop and the record of its cuts; it is compiled
//! into the addon (the registry reads the record, tests run the loop in a
//! thread) and into the `pi-utils-pump` binary (`src/bin/`), the process
//! the job's wrapper starts beside the command so the pump outlives the
//! host. The cut itself is [`log::trim`], the policy's one owner.
//!
//! The record (`<log>.cuts`, [`CutsRecord`]) is one fixed-size block
//! rewritten in place: a sequence number, odd while a cut is under way,
//! and a check word over the fields. A reader that reads the record, then
//! the log, then the record again and finds the same even sequence number
//! read a log that no cut changed in between (see `Registry::read_new`).

use super::log;
use std::fs::File;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// What one read from the pipe takes at most (and so the most one write
/// adds to the log after the cut that made room for it).
pub const CHUNK: usize = 64 * 1024;
/// The pipe's buffer: how much a job writes before it waits for the pump.
pub const PIPE_BYTES: i32 = 256 * 1024;
/// The binary's file name, beside the addon.
pub const BINARY: &str = "pi-utils-pump";
/// The control descriptor the wrapper hands the pump (see `spawn.rs`).
pub const CONTROL_FD: RawFd = 3;

/// What the pump has cut so far, as the registry's record names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CutsRecord {
    /// Odd while a cut is under way.
    pub seq: u64,
    /// `logTrimAt`: where the marker line starts.
    pub at: Option<u64>,
    /// `logShift`: bytes removed at `at` over all cuts.
    pub shift: u64,
    /// `logDropped`: output no longer in the log.
    pub dropped: u64,
    /// `logMarker`: length of the marker line in the log.
    pub marker: u64,
}

const WORDS: usize = 6;
const RECORD_BYTES: usize = WORDS * 8;

impl CutsRecord {
    fn words(&self) -> [u64; WORDS - 1] {
        [
            self.seq,
            self.at.unwrap_or(u64::MAX),
            self.shift,
            self.dropped,
            self.marker,
        ]
    }

    fn encode(&self) -> [u8; RECORD_BYTES] {
        let w = self.words();
        let mut out = [0u8; RECORD_BYTES];
        for (i, v) in w.iter().chain([check(&w)].iter()).enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        out
    }

    fn decode(b: &[u8]) -> Option<CutsRecord> {
        if b.len() != RECORD_BYTES {
            return None;
        }
        let word = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
        let w = [word(0), word(1), word(2), word(3), word(4)];
        (check(&w) == word(5)).then_some(CutsRecord {
            seq: w[0],
            at: (w[1] != u64::MAX).then_some(w[1]),
            shift: w[2],
            dropped: w[3],
            marker: w[4],
        })
    }

    /// Whether no cut is under way.
    pub fn settled(&self) -> bool {
        self.seq.is_multiple_of(2)
    }
}

/// FNV-1a over the words: a torn or foreign block fails it.
fn check(words: &[u64]) -> u64 {
    words
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325u64 ^ 0x7075_6d70, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
        })
}

/// `<log>.cuts`.
pub fn cuts_path_for(log: &Path) -> PathBuf {
    let mut s = log.as_os_str().to_owned();
    s.push(".cuts");
    s.into()
}

/// The record as it is now: `Ok(None)` when there is none yet (no cut was
/// ever made), `Err` while it reads torn (being rewritten; read again).
fn read_record(path: &Path) -> Result<Option<CutsRecord>, ()> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(_) => return Err(()),
    };
    let mut buf = [0u8; RECORD_BYTES];
    match file.read_at(&mut buf, 0) {
        Ok(0) => Ok(None),
        Ok(n) if n == RECORD_BYTES => CutsRecord::decode(&buf).map(Some).ok_or(()),
        _ => Err(()),
    }
}

/// The settled record (waiting out a cut under way, up to about 200 ms):
/// `None` when the pump has cut nothing.
pub fn settled_record(path: &Path) -> Option<CutsRecord> {
    let mut last = None;
    for i in 0..400 {
        match read_record(path) {
            Ok(Some(r)) if r.settled() => return Some(r),
            Ok(None) => return None,
            Ok(Some(r)) => last = Some(r),
            Err(()) => {}
        }
        if i > 20 {
            std::thread::sleep(std::time::Duration::from_micros(500));
        } else {
            std::hint::spin_loop();
        }
    }
    last.map(|r| CutsRecord {
        seq: r.seq - 1,
        ..r
    })
}

/// `(logTrimAt, logShift)` as the settled record at `path` says (see
/// `log::Cuts`).
pub fn offsets(path: &Path) -> (Option<u64>, u64) {
    settled_record(path).map_or((None, 0), |r| (r.at, r.shift))
}

/// Where and how the pump writes.
pub struct Config {
    pub log: PathBuf,
    pub cuts: PathBuf,
    /// The bound (`shell.maxLogBytes`) on the job's part of the log.
    pub max: u64,
    /// Where the job's output starts in the log (it may have been appended to).
    pub origin: u64,
}

struct Pump {
    cfg: Config,
    log: File,
    cuts: File,
    size: u64,
    rec: CutsRecord,
}

impl Pump {
    fn open(cfg: Config) -> io::Result<Pump> {
        use std::os::unix::fs::OpenOptionsExt;
        let log = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_CLOEXEC)
            .open(&cfg.log)?;
        let cuts = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_CLOEXEC)
            .open(&cfg.cuts)?;
        let size = log.metadata()?.len();
        let p = Pump {
            cfg,
            log,
            cuts,
            size,
            rec: CutsRecord::default(),
        };
        p.publish()?;
        Ok(p)
    }

    fn publish(&self) -> io::Result<()> {
        self.cuts.write_all_at(&self.rec.encode(), 0)
    }

    /// Appends `data`, cutting first if it would take the job's part of
    /// the log past the bound.
    fn write(&mut self, data: &[u8]) -> io::Result<()> {
        let n = data.len() as u64;
        let origin = self.cfg.origin;
        if self.size.saturating_sub(origin) + n > self.cfg.max {
            self.cut(n)?;
        }
        std::io::Write::write_all(&mut self.log, data)?;
        self.size += n;
        Ok(())
    }

    fn cut(&mut self, incoming: u64) -> io::Result<()> {
        let (max, origin) = (self.cfg.max, self.cfg.origin);
        let keep = log::pump_keep(max);
        let trigger = origin + max - incoming.min(max);
        let slack = trigger.saturating_sub(keep);
        self.rec.seq += 1;
        self.publish()?;
        let cut = log::trim(
            &self.cfg.log,
            origin,
            trigger,
            slack,
            self.rec.dropped,
            self.rec.marker,
            max,
        );
        if let Ok(Some(t)) = cut {
            self.rec.at = Some(t.at);
            self.rec.shift += t.shift;
            self.rec.dropped += t.dropped;
            self.rec.marker = log::marker_line(0, max).len() as u64;
        }
        self.rec.seq += 1;
        self.publish()?;
        self.size = self.log.metadata()?.len();
        cut.map(|_| ())
    }
}

/// Copies `input` (a pipe) to the log until end of file (every writer is
/// gone). `control`: the wrapper's end of a socket; a line on it means the
/// command ended, and is answered once everything the pipe holds at that
/// moment is in the log (so its exit file is written after its output).
pub fn run(input: RawFd, control: Option<RawFd>, cfg: Config) -> io::Result<()> {
    let mut pump = Pump::open(cfg)?;
    serve(input, control, |buf, ended| match ended {
        true => drain(&mut pump, input, buf),
        false => pump.write(buf),
    })
}

/// After the log failed: reads the pipe to its end, answering the
/// control socket, so the job is neither blocked nor killed by a pipe
/// without a reader.
pub fn discard(input: RawFd, control: Option<RawFd>) {
    let _ = serve(input, control, |_, _| Ok(()));
}

/// The loop [`run`] and [`discard`] share: waits on the pipe and the
/// control socket; hands each read to `take(data, false)`, and on a line
/// from the wrapper calls `take(buffer, true)` before answering it. Ends
/// at the pipe's end of file, or with the first error.
fn serve(
    input: RawFd,
    mut control: Option<RawFd>,
    mut take: impl FnMut(&mut [u8], bool) -> io::Result<()>,
) -> io::Result<()> {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let mut fds = [input, control.unwrap_or(-1)].map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        if unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) } < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if let Some(ctl) = control.filter(|_| fds[1].revents != 0) {
            let mut line = [0u8; 16];
            let n = unsafe { libc::read(ctl, line.as_mut_ptr().cast(), line.len()) };
            if n <= 0 {
                control = None;
            } else {
                take(&mut buf, true)?;
                let ack = b"a\n";
                unsafe { libc::send(ctl, ack.as_ptr().cast(), ack.len(), libc::MSG_NOSIGNAL) };
            }
            continue;
        }
        if fds[0].revents != 0 {
            match read(input, &mut buf)? {
                0 => return Ok(()),
                n => take(&mut buf[..n], false)?,
            }
        }
    }
}

/// Moves what the pipe holds now into the log.
fn drain(pump: &mut Pump, input: RawFd, buf: &mut [u8]) -> io::Result<()> {
    let mut left: libc::c_int = 0;
    if unsafe { libc::ioctl(input, libc::FIONREAD, &mut left) } != 0 {
        return Ok(());
    }
    let mut left = left.max(0) as usize;
    while left > 0 {
        let want = left.min(buf.len());
        let n = read(input, &mut buf[..want])?;
        if n == 0 {
            break;
        }
        pump.write(&buf[..n])?;
        left -= n;
    }
    Ok(())
}

fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    fn pipe() -> (OwnedFd, File) {
        let mut fds = [0; 2];
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        unsafe { (OwnedFd::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
    }

    #[test]
    fn a_record_reads_back_and_a_torn_one_is_refused() {
        let r = CutsRecord {
            seq: 4,
            at: Some(1 << 20),
            shift: 77,
            dropped: 99,
            marker: 130,
        };
        let mut b = r.encode();
        assert_eq!(CutsRecord::decode(&b), Some(r));
        b[20] ^= 1;
        assert_eq!(CutsRecord::decode(&b), None);
    }

    #[test]
    fn a_stream_far_past_the_bound_never_makes_the_log_bigger_than_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let log_path = dir.path().join("job.log");
        const MAX: u64 = 3 << 20;
        let (read, mut write) = pipe();
        let cfg = Config {
            log: log_path.clone(),
            cuts: cuts_path_for(&log_path),
            max: MAX,
            origin: 0,
        };
        let pump = std::thread::spawn(move || run(read.as_raw_fd(), None, cfg).map(|_| read));
        let line = |i: u64| format!("line {i:08}\n");
        let mut written = 0u64;
        for i in (0..2_000_000u64).step_by(1000) {
            let chunk: String = (i..i + 1000).map(line).collect();
            write.write_all(chunk.as_bytes()).unwrap();
            written += chunk.len() as u64;
            let size = std::fs::metadata(&log_path).map(|m| m.len()).unwrap_or(0);
            assert!(size <= MAX, "{size} past {MAX}");
        }
        drop(write);
        pump.join().unwrap().unwrap();
        let rec = settled_record(&cuts_path_for(&log_path)).unwrap();
        let text = std::fs::read_to_string(&log_path).unwrap();
        assert!(text.len() as u64 <= MAX);
        assert_eq!(text.len() as u64 - rec.marker + rec.dropped, written);
        assert!(text.starts_with("line 00000000\n"));
        assert!(text.ends_with("line 01999999\n"));
        assert_eq!(text.matches("bytes of output dropped here").count(), 1);
        assert_eq!(rec.at, Some(log::HEAD_BYTES));
    }
}
