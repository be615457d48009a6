//! Who is behind a pid right now. A pid alone names nobody for long: once a
//! process is reaped its number is handed to the next process. A job is
//! therefore known by (pid, start time, boot id), and every query and every
//! signal first checks that triple.
//!
//! Linux reads `/proc`; macOS asks `proc_pidinfo`, whose start stamp is in
//! microseconds rather than clock ticks. Stamps are only ever compared with
//! stamps taken on the same machine, so the unit does not matter.

/// One process as the kernel sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    pub sid: i32,
    /// Linux: clock ticks since boot (field 22 of `/proc/<pid>/stat`).
    /// macOS: microseconds since the epoch.
    pub start: u64,
    /// Dead but not yet reaped by its parent: it runs nothing and holds
    /// nothing but its pid.
    pub zombie: bool,
    /// Stopped by a signal (`SIGSTOP`, `SIGTSTP`, ...), not traced.
    pub stopped: bool,
}

/// What a recorded identity means now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Same process, still running.
    Alive(ProcInfo),
    /// The process is gone (or a zombie).
    Ended,
    /// The pid now belongs to a different process.
    Reused,
    /// The machine rebooted since the record was made.
    Rebooted,
    /// No start stamp was recorded, so nothing can be confirmed.
    Unverifiable,
}

/// Checks a recorded identity against the live process table.
pub fn verify(pid: i32, start: Option<u64>, boot: Option<&str>) -> Verdict {
    if let (Some(recorded), Some(current)) = (boot, boot_id()) {
        if recorded != current {
            return Verdict::Rebooted;
        }
    }
    let Some(start) = start else {
        return Verdict::Unverifiable;
    };
    match proc_info(pid) {
        None => Verdict::Ended,
        Some(info) if info.start != start => Verdict::Reused,
        Some(info) if info.zombie => Verdict::Ended,
        Some(info) => Verdict::Alive(info),
    }
}

/// The boot id, read once: it cannot change while we run.
pub fn boot_id() -> Option<&'static str> {
    static BOOT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    BOOT.get_or_init(sys::read_boot_id).as_deref()
}

pub use sys::{all_pids, command_line, environ_contains, holds_log_mark, holds_pipe, proc_info};

#[cfg(target_os = "linux")]
mod sys {
    use super::ProcInfo;

    pub fn read_boot_id() -> Option<String> {
        let s = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
        let s = s.trim();
        (!s.is_empty()).then(|| s.to_string())
    }

    pub fn proc_info(pid: i32) -> Option<ProcInfo> {
        if pid <= 0 {
            return None;
        }
        let raw = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
        parse_stat(pid, &raw)
    }

    /// `comm` (field 2) may hold spaces and parentheses, so fields are
    /// counted from the last `)`.
    pub(super) fn parse_stat(pid: i32, raw: &[u8]) -> Option<ProcInfo> {
        let close = raw.iter().rposition(|&b| b == b')')?;
        let rest = std::str::from_utf8(&raw[close + 1..]).ok()?;
        let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
        // fields[0] is field 3 (state), so field n is fields[n - 3].
        let field = |n: usize| fields.get(n - 3).copied();
        Some(ProcInfo {
            pid,
            zombie: matches!(field(3)?, "Z" | "X" | "x"),
            stopped: field(3)? == "T",
            ppid: field(4)?.parse().ok()?,
            pgid: field(5)?.parse().ok()?,
            sid: field(6)?.parse().ok()?,
            start: field(22)?.parse().ok()?,
        })
    }

    pub fn all_pids() -> Vec<i32> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect()
    }

    /// The process's arguments joined by spaces, cut to 120 bytes: enough to
    /// tell a user which process is meant.
    pub fn command_line(pid: i32) -> Option<String> {
        let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let mut text = String::from_utf8_lossy(&raw)
            .trim_end_matches('\0')
            .replace('\0', " ");
        if text.len() > 120 {
            let mut cut = 120;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push('…');
        }
        (!text.is_empty()).then_some(text)
    }

    /// Whether the process was started with `needle` (`NAME=value`) in its
    /// environment. Only our own uid's processes are readable, which are the
    /// only ones we could have started.
    pub fn environ_contains(pid: i32, needle: &[u8]) -> bool {
        match std::fs::read(format!("/proc/{pid}/environ")) {
            Ok(env) => env.split(|&b| b == 0).any(|var| var == needle),
            Err(_) => false,
        }
    }

    /// Whether the process holds the pipe `pipe:[ino]`: a job's output pipe
    /// when it has a log pump. Whatever the job starts inherits it as its
    /// stdout, whatever it does to its session or environment; nobody else
    /// can open an anonymous pipe (but through `/proc` of a process holding
    /// it). Only our own uid's processes are readable.
    pub fn holds_pipe(pid: i32, ino: u64) -> bool {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            return false;
        };
        let name = format!("pipe:[{ino}]");
        fds.flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == name.as_str()))
    }

    /// Whether the process holds the log `(dev, ino)` through the open file
    /// description the registry made for the job: the one that carries the
    /// job's lock at `offset` (see `spawn::mark_log`). The job's stdout and
    /// stderr are that description, and whatever the job starts inherits it
    /// whatever it does to its session or environment (`env -i setsid cmd &`).
    /// A process that opened the log itself (`cmd >> job.log`, a `tail -f`)
    /// has a description of its own, without the lock, and is nobody's job:
    /// who writes a file says nothing about who started it. Only our own
    /// uid's processes are readable.
    pub fn holds_log_mark(pid: i32, dev: u64, ino: u64, offset: u64) -> bool {
        use std::os::unix::fs::MetadataExt;
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            return false;
        };
        fds.flatten().any(|fd| {
            // `metadata` follows the magic link to the open file itself.
            let same = std::fs::metadata(fd.path()).is_ok_and(|m| m.dev() == dev && m.ino() == ino);
            same && fd_has_mark(pid, &fd.file_name().to_string_lossy(), offset)
        })
    }

    /// `/proc/<pid>/fdinfo/<fd>` lists the locks owned by that open file
    /// description: `lock:\t1: OFDLCK ADVISORY  WRITE -1 fe:00:123 <start> <end>`.
    fn fd_has_mark(pid: i32, fd: &str, offset: u64) -> bool {
        let Ok(info) = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")) else {
            return false;
        };
        info.lines()
            .filter_map(|l| l.strip_prefix("lock:"))
            .any(|l| is_mark(l, offset))
    }

    pub(super) fn is_mark(lock_line: &str, offset: u64) -> bool {
        let words: Vec<&str> = lock_line.split_ascii_whitespace().collect();
        words.contains(&"OFDLCK")
            && words.len() >= 2
            && words[words.len() - 2].parse::<u64>() == Ok(offset)
    }
}

#[cfg(target_os = "macos")]
mod sys {
    use super::ProcInfo;

    /// Changes on every boot, like Linux's boot id.
    pub fn read_boot_id() -> Option<String> {
        let mut buf = [0u8; 64];
        let mut len = buf.len();
        let name = c"kern.bootsessionuuid";
        let rc = unsafe {
            libc::sysctlbyname(
                name.as_ptr(),
                buf.as_mut_ptr().cast(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        if rc != 0 || len == 0 {
            return None;
        }
        let s = String::from_utf8_lossy(&buf[..len]);
        let s = s.trim_end_matches('\0').trim();
        (!s.is_empty()).then(|| s.to_string())
    }

    pub fn proc_info(pid: i32) -> Option<ProcInfo> {
        if pid <= 0 {
            return None;
        }
        let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::proc_bsdinfo>() as libc::c_int;
        let n = unsafe {
            libc::proc_pidinfo(
                pid,
                libc::PROC_PIDTBSDINFO,
                0,
                (&mut info as *mut libc::proc_bsdinfo).cast(),
                size,
            )
        };
        if n != size {
            return None;
        }
        // SZOMB from <sys/proc.h>.
        const SZOMB: u32 = 5;
        let sid = unsafe { libc::getsid(pid) };
        // SSTOP from <sys/proc.h>.
        const SSTOP: u32 = 4;
        Some(ProcInfo {
            pid,
            stopped: info.pbi_status == SSTOP,
            ppid: info.pbi_ppid as i32,
            pgid: info.pbi_pgid as i32,
            sid: if sid < 0 { -1 } else { sid },
            start: info.pbi_start_tvsec * 1_000_000 + info.pbi_start_tvusec,
            zombie: info.pbi_status == SZOMB,
        })
    }

    pub fn all_pids() -> Vec<i32> {
        let n = unsafe { libc::proc_listallpids(std::ptr::null_mut(), 0) };
        if n <= 0 {
            return Vec::new();
        }
        let mut pids = vec![0 as libc::pid_t; n as usize + 64];
        let bytes = (pids.len() * std::mem::size_of::<libc::pid_t>()) as libc::c_int;
        let got = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast(), bytes) };
        pids.truncate(got.max(0) as usize);
        pids
    }

    /// Needs `KERN_PROCARGS2`, like the environment: not implemented.
    pub fn command_line(_pid: i32) -> Option<String> {
        None
    }

    /// Reading another process's environment needs `KERN_PROCARGS2`; not
    /// implemented, so escapees are found by group and parentage only.
    pub fn environ_contains(_pid: i32, _needle: &[u8]) -> bool {
        false
    }

    /// Another process's descriptors and their locks are not exposed.
    pub fn holds_log_mark(_pid: i32, _dev: u64, _ino: u64, _offset: u64) -> bool {
        false
    }

    pub fn holds_pipe(_pid: i32, _ino: u64) -> bool {
        false
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod sys {
    use super::ProcInfo;

    pub fn read_boot_id() -> Option<String> {
        None
    }
    pub fn proc_info(_pid: i32) -> Option<ProcInfo> {
        None
    }
    pub fn all_pids() -> Vec<i32> {
        Vec::new()
    }
    pub fn environ_contains(_pid: i32, _needle: &[u8]) -> bool {
        false
    }
    pub fn holds_log_mark(_pid: i32, _dev: u64, _ino: u64, _offset: u64) -> bool {
        false
    }
    pub fn holds_pipe(_pid: i32, _ino: u64) -> bool {
        false
    }
    pub fn command_line(_pid: i32) -> Option<String> {
        None
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_from_the_last_paren() {
        let raw = b"42 (a) b) (c) S 7 42 42 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 98765 0 0";
        let info = sys::parse_stat(42, raw).unwrap();
        assert_eq!(
            (info.ppid, info.pgid, info.sid, info.start),
            (7, 42, 42, 98765)
        );
        assert!(!info.zombie && !info.stopped);
    }

    #[test]
    fn only_an_ofd_lock_at_the_marks_offset_is_the_mark() {
        let line =
            "\t1: OFDLCK ADVISORY  WRITE -1 fe:00:10011595 2305843009213693952 2305843009213693952";
        assert!(sys::is_mark(line, 2305843009213693952));
        assert!(!sys::is_mark(line, 2305843009213693953));
        let posix = "\t1: POSIX  ADVISORY  WRITE 77 fe:00:10011595 2305843009213693952 EOF";
        assert!(!sys::is_mark(posix, 2305843009213693952));
    }

    #[test]
    fn our_own_process_verifies_and_a_wrong_start_is_reuse() {
        let me = std::process::id() as i32;
        let info = proc_info(me).unwrap();
        assert!(matches!(
            verify(me, Some(info.start), boot_id()),
            Verdict::Alive(_)
        ));
        assert_eq!(verify(me, Some(info.start + 1), boot_id()), Verdict::Reused);
        assert_eq!(
            verify(me, Some(info.start), Some("another-boot")),
            Verdict::Rebooted
        );
        assert_eq!(verify(me, None, boot_id()), Verdict::Unverifiable);
    }
}
