//! Starting a job: `posix_spawn` of a small `/bin/sh` wrapper that becomes a
//! new session and process group leader, reads `/dev/null`, sends stdout
//! and stderr to the log (through the log pump it starts, where there is
//! one), runs `<shell> -c <command>` in the job's cwd and records the exit
//! status atomically in the exit file.
//!
//! Why `posix_spawn` and not `std::process::Command`: std cannot `setsid`
//! without a `pre_exec` hook, and a hook forces `fork()`, whose cost grows
//! with the host's memory (Pi's Node process is hundreds of MB).
//! `posix_spawn` is vfork-fast and `POSIX_SPAWN_SETSID` does the `setsid`.
//! The cwd change happens in the wrapper because the portable file action
//! for it (`addchdir_np`) needs a newer libc than the addon may meet.
//!
//! The wrapper traps HUP/INT/TERM. A trapped signal runs only after the
//! foreground command returns, so a group SIGTERM kills the user's command
//! while the wrapper survives long enough to write the exit file. Trapped
//! (as opposed to ignored) signals are reset in the command it execs, so the
//! job itself sees default dispositions.

use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub const WRAPPER: &str = "/bin/sh";

/// `$1` shell, `$2` command, `$3` exit file, `$4` cwd, `$5` non-empty when
/// the job has a cgroup to be moved into. Descriptor 4 is the read end of
/// the go-ahead pipe ([`GoPipe`]): the wrapper runs nothing until the
/// registry writes `go` there, which it does (before `spawn` returns) only
/// once the job's record is saved. End of file without it (the host died,
/// or could not record the job) and the wrapper exits without running the
/// command, writing `never-started` (`job::NEVER_STARTED`) as its exit
/// status: no job ever runs that no record names, and one that was
/// recorded reads as never started. With a cgroup it then
/// waits for the move: until the registry writes a second line or closes
/// the pipe (a host that dies after recording the job still lets it run,
/// outside the cgroup), so nothing the command starts is born outside it.
///
/// With a log pump (`$6` its binary; `$7` log, `$8` cuts record, `$9`
/// bound, `${10}` origin: see `pump.rs`), stdout and stderr are the write
/// end of a pipe whose read end is descriptor 5, and 7 and 8 are the two
/// ends of a control socket. Once let go, the wrapper starts the pump in
/// the background (so it is in the job's group, session, cgroup and
/// environment) on the read end, with 8 as its descriptor 3, and keeps
/// neither. When the command has ended it writes a line on 7 and waits
/// for the pump's answer (or end of file, if the pump died): the pump
/// answers once everything the command wrote is in the log, so the exit
/// file, as without a pump, is written after the output. `PIPE` is
/// trapped because that line may meet a pump that died.
///
/// The wrapper's own stderr goes to `/dev/null` once the cwd is set, so its
/// notices ("Terminated" when the command dies by a signal) stay out of the
/// user's log; the command gets the log back as stderr inside a subshell,
/// where the redirection applies to the child only (and where `sh` execs the
/// shell instead of forking again), so "not found" errors still reach the log.
const SCRIPT: &str = "trap : HUP INT TERM PIPE
IFS= read -r go <&4
[ \"$go\" = go ] || { printf 'never-started\\n' >\"$3.tmp\" && mv -f -- \"$3.tmp\" \"$3\"; exit 0; }
[ -z \"$5\" ] || read -r _ <&4
exec 4<&-
[ -z \"$6\" ] || { \"$6\" \"$7\" \"$8\" \"$9\" \"${10}\" <&5 3<&8 5<&- 7<&- 8<&- >/dev/null 2>&1 & exec 5<&- 8<&-; }
if cd -- \"$4\"; then
  exec 3>&2 2>/dev/null
  (\"$1\" -c \"$2\") 2>&3 3>&- 7<&-
  ec=$?
else
  ec=126
fi
[ -z \"$6\" ] || { printf 'd\\n' >&7; IFS= read -r _ <&7; } 2>/dev/null
printf '%s\\n' \"$ec\" >\"$3.tmp\" && mv -f -- \"$3.tmp\" \"$3\"
exit \"$ec\"";

#[cfg(target_os = "linux")]
const POSIX_SPAWN_SETSID: libc::c_int = 0x80;
#[cfg(target_os = "macos")]
const POSIX_SPAWN_SETSID: libc::c_int = 0x400;
/// Elsewhere the job shares our session (but still not our stdio).
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
const POSIX_SPAWN_SETSID: libc::c_int = 0;

pub struct Spec<'a> {
    pub shell: &'a str,
    pub command: &'a str,
    pub cwd: &'a Path,
    pub exit_path: &'a Path,
    /// The complete environment, `NAME=value` each.
    pub env: &'a [Vec<u8>],
    /// Opened for appending; becomes the job's stdout and stderr unless
    /// the job has a pump.
    pub log: RawFd,
    /// The log pump, when the job writes into a pipe (see `SCRIPT`).
    pub pump: Option<super::pipe::PumpSpec<'a>>,
    /// The read end of the go-ahead pipe (see `SCRIPT`): becomes descriptor 4.
    pub go: RawFd,
    /// Waits, after its go-ahead, for the move into the job's cgroup.
    pub held: bool,
}

fn cstring(bytes: &[u8], what: &'static str) -> Result<CString, super::ShellError> {
    CString::new(bytes).map_err(|_| super::ShellError::NulByte(what))
}

/// Starts the wrapper and returns its pid (which is also its pgid and sid).
pub fn spawn(spec: &Spec) -> Result<i32, super::ShellError> {
    let argv = [
        cstring(WRAPPER.as_bytes(), "shell")?,
        cstring(b"-c", "shell")?,
        cstring(SCRIPT.as_bytes(), "shell")?,
        cstring(b"pi-utils-job", "shell")?,
        cstring(spec.shell.as_bytes(), "Shell path")?,
        cstring(spec.command.as_bytes(), "Command")?,
        cstring(spec.exit_path.as_os_str().as_bytes(), "Log path")?,
        cstring(spec.cwd.as_os_str().as_bytes(), "Working directory")?,
        cstring(if spec.held { b"held" } else { b"" }, "held")?,
    ];
    let mut argv = argv.to_vec();
    if let Some(p) = &spec.pump {
        argv.extend([
            cstring(p.binary.as_os_str().as_bytes(), "Pump path")?,
            cstring(p.log.as_os_str().as_bytes(), "Log path")?,
            cstring(p.cuts.as_os_str().as_bytes(), "Log path")?,
            cstring(p.max.to_string().as_bytes(), "bound")?,
            cstring(p.origin.to_string().as_bytes(), "origin")?,
        ]);
    }
    let envp: Vec<CString> = spec
        .env
        .iter()
        .map(|v| cstring(v, "Environment"))
        .collect::<Result<_, _>>()?;
    let mut argv_ptrs: Vec<*mut libc::c_char> = argv.iter().map(|s| s.as_ptr() as *mut _).collect();
    argv_ptrs.push(std::ptr::null_mut());
    let mut envp_ptrs: Vec<*mut libc::c_char> = envp.iter().map(|s| s.as_ptr() as *mut _).collect();
    envp_ptrs.push(std::ptr::null_mut());
    let dev_null = c"/dev/null";

    unsafe {
        let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
        let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        check(libc::posix_spawnattr_init(&mut attr))?;
        if let Err(e) = check(libc::posix_spawn_file_actions_init(&mut actions)) {
            libc::posix_spawnattr_destroy(&mut attr);
            return Err(e);
        }
        let result = (|| {
            // Node ignores SIGPIPE and may block signals in the calling
            // thread; a job must start with default dispositions and an
            // empty mask, or `yes | head` would never end.
            let mut all: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::sigdelset(&mut all, libc::SIGKILL);
            libc::sigdelset(&mut all, libc::SIGSTOP);
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            check(libc::posix_spawnattr_setsigdefault(&mut attr, &all))?;
            check(libc::posix_spawnattr_setsigmask(&mut attr, &none))?;
            let flags = POSIX_SPAWN_SETSID
                | libc::POSIX_SPAWN_SETSIGDEF as libc::c_int
                | libc::POSIX_SPAWN_SETSIGMASK as libc::c_int;
            check(libc::posix_spawnattr_setflags(
                &mut attr,
                flags as libc::c_short,
            ))?;
            check(libc::posix_spawn_file_actions_addopen(
                &mut actions,
                0,
                dev_null.as_ptr(),
                libc::O_RDONLY,
                0,
            ))?;
            let out = spec
                .pump
                .as_ref()
                .map_or(spec.log, |p| p.fds.write.as_raw_fd());
            check(libc::posix_spawn_file_actions_adddup2(&mut actions, out, 1))?;
            check(libc::posix_spawn_file_actions_adddup2(&mut actions, out, 2))?;
            for fd in inheritable_fds() {
                check(libc::posix_spawn_file_actions_addclose(&mut actions, fd))?;
            }
            check(libc::posix_spawn_file_actions_adddup2(
                &mut actions,
                spec.go,
                GO_FD,
            ))?;
            if let Some(p) = &spec.pump {
                // All four are close-on-exec and numbered 10 and up, so
                // no dup2 here lands on one of them or on itself.
                for (fd, to) in [
                    (&p.fds.read, 5),
                    (&p.fds.control, 7),
                    (&p.fds.pump_control, 8),
                ] {
                    check(libc::posix_spawn_file_actions_adddup2(
                        &mut actions,
                        fd.as_raw_fd(),
                        to,
                    ))?;
                }
            }
            let mut pid: libc::pid_t = 0;
            check(libc::posix_spawn(
                &mut pid,
                argv[0].as_ptr(),
                &actions,
                &attr,
                argv_ptrs.as_ptr(),
                envp_ptrs.as_ptr(),
            ))?;
            Ok(pid)
        })();
        libc::posix_spawn_file_actions_destroy(&mut actions);
        libc::posix_spawnattr_destroy(&mut attr);
        result
    }
}

const GO_FD: RawFd = 4;

/// The pipe a new wrapper waits on before it runs anything (see `SCRIPT`).
/// Both ends are close-on-exec here: only the wrapper's dup of the read
/// end crosses an exec, so the write end is the registry's alone and its
/// death is the wrapper's end of file.
pub struct GoPipe {
    pub read: std::os::fd::OwnedFd,
    write: std::os::fd::OwnedFd,
}

impl GoPipe {
    pub fn new() -> Result<GoPipe, super::ShellError> {
        use std::os::fd::{FromRawFd, OwnedFd};
        let failed = || super::ShellError::Spawn(std::io::Error::last_os_error().to_string());
        let mut fds = [0 as RawFd; 2];
        #[cfg(target_os = "linux")]
        let made = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == 0;
        #[cfg(not(target_os = "linux"))]
        let made = unsafe { libc::pipe(fds.as_mut_ptr()) } == 0
            && fds
                .iter()
                .all(|&fd| unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } == 0);
        if !made {
            return Err(failed());
        }
        let [read, write] = fds.map(|fd| unsafe { OwnedFd::from_raw_fd(fd) });
        // Never descriptor 4 itself: a dup2 onto the same number would
        // leave close-on-exec set, and the wrapper without its end.
        let away_from_4 = |fd: OwnedFd| -> Result<OwnedFd, super::ShellError> {
            if fd.as_raw_fd() != GO_FD {
                return Ok(fd);
            }
            let moved = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
            (moved >= 0)
                .then(|| unsafe { OwnedFd::from_raw_fd(moved) })
                .ok_or_else(failed)
        };
        Ok(GoPipe {
            read: away_from_4(read)?,
            write: away_from_4(write)?,
        })
    }

    /// Lets the wrapper go on (one write: atomic on a pipe); its first
    /// line is `go`.
    fn send(&self, line: &[u8]) {
        let _ = unsafe { libc::write(self.write.as_raw_fd(), line.as_ptr().cast(), line.len()) };
    }
}

/// Lets a recorded job's wrapper run its command. With a cgroup, it still
/// waits for the move into it, made off the caller's thread: a move
/// between cgroups waits for an RCU grace period (~9 ms here), which would
/// triple the spawn time; the job's command starts that much later instead.
/// If the move fails, the cgroup is removed and `unplaced` runs (the job is
/// then tracked by the process tree).
pub(super) fn go_ahead(
    pid: i32,
    cgroup: Option<super::cgroup::JobCgroup>,
    go: GoPipe,
    unplaced: impl Fn() + Send + Sync + 'static,
) {
    go.send(b"go\n");
    let Some(cg) = cgroup else {
        return;
    };
    let kept = cg.clone();
    let unplaced = std::sync::Arc::new(unplaced);
    let in_thread = unplaced.clone();
    let spawned = std::thread::Builder::new()
        .name("pi-utils-cgroup".into())
        .spawn(move || {
            let placed = cg.adopt(pid).is_ok();
            drop(go);
            if !placed {
                cg.remove();
                in_thread();
            }
        });
    // No thread: the pipe went with the closure, so the wrapper already
    // went on, outside the cgroup.
    if spawned.is_err() {
        kept.remove();
        unplaced();
    }
}

/// A wrapper whose job could not be recorded: without its go-ahead it
/// exits at once, running nothing; reaped here, and its cgroup and the
/// exit file it wrote (`never-started`) removed.
pub(super) fn abandon(
    pid: i32,
    go: GoPipe,
    cgroup: Option<super::cgroup::JobCgroup>,
    exit_path: &Path,
) {
    drop(go);
    let mut status = 0;
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
    if let Some(cg) = cgroup {
        cg.remove();
    }
    let _ = clear_exit_file(exit_path);
}

/// Descriptors above stderr that would leak into the job: ones this process
/// inherited without close-on-exec (Node marks only its own). A leaked pipe
/// end held by a daemon keeps whoever reads that pipe waiting forever.
fn inheritable_fds() -> Vec<RawFd> {
    let dir = if cfg!(target_os = "linux") {
        "/proc/self/fd"
    } else {
        "/dev/fd"
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<RawFd>().ok())
        .filter(|&fd| fd > 2)
        .filter(|&fd| {
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
            flags >= 0 && flags & libc::FD_CLOEXEC == 0
        })
        .collect()
}

fn check(rc: libc::c_int) -> Result<(), super::ShellError> {
    if rc == 0 {
        Ok(())
    } else {
        Err(super::ShellError::Spawn(
            std::io::Error::from_raw_os_error(rc).to_string(),
        ))
    }
}

/// Opens (creating its directory) the log for appending, close-on-exec so
/// only the dup'ed stdout/stderr of the job keep it. A command's output can
/// carry private data, so a new log is the user's alone (0600, as Pi's own
/// bash writes its full-output files) and so is a directory made for it
/// (0700); an existing log keeps its mode.
pub fn open_log(path: &Path) -> Result<std::fs::File, super::ShellError> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true).mode(0o700);
        builder
            .create(dir)
            .map_err(|e| super::ShellError::LogDirectory {
                dir: dir.display().to_string(),
                error: e.to_string(),
            })?;
    }
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| super::ShellError::LogFile {
            path: path.display().to_string(),
            error: e.to_string(),
        })
}

/// Where the job's mark sits in its log: a one-byte range far past any
/// real log size, chosen by the job's marker, so two jobs' marks never
/// meet and no write ever touches it (the lock is advisory anyway).
pub fn log_mark_offset(marker: &str) -> u64 {
    // FNV-1a: stable across builds, unlike std's hasher.
    let h = marker.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    (1u64 << 61) + (h & ((1u64 << 40) - 1))
}

/// Marks the open file description `log` (which becomes the job's stdout
/// and stderr) as the job's: an open-file-description lock on one byte at
/// [`log_mark_offset`]. Every process that inherits the description holds
/// the mark; one that opens the log itself does not. This is how the
/// registry knows later what it handed to the job, not who writes the file
/// (see `identity::holds_log_mark`). False where there are no such locks.
#[cfg(target_os = "linux")]
pub fn mark_log(log: &std::fs::File, marker: &str) -> bool {
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = log_mark_offset(marker) as libc::off_t;
    fl.l_len = 1;
    unsafe { libc::fcntl(log.as_raw_fd(), libc::F_OFD_SETLK, &fl) == 0 }
}

#[cfg(not(target_os = "linux"))]
pub fn mark_log(_log: &std::fs::File, _marker: &str) -> bool {
    false
}

/// Refuses a log that a running job writes (`jobs`: id and log path of
/// each): two jobs on one log were tied, one kept `running` while the other
/// lived and killed with it. The same file is the same device and inode,
/// whatever the path says. Appending to a finished job's log is allowed.
pub fn log_not_shared<'a>(
    log: &std::fs::File,
    jobs: impl Iterator<Item = (&'a String, &'a String)>,
) -> Result<(), super::ShellError> {
    use std::os::unix::fs::MetadataExt;
    let Ok(m) = log.metadata() else {
        return Ok(());
    };
    for (id, path) in jobs {
        if std::fs::metadata(path).is_ok_and(|o| (o.dev(), o.ino()) == (m.dev(), m.ino())) {
            return Err(super::ShellError::InvalidOption(format!(
                "Invalid logPath: {path} is the log of job {id}, still running"
            )));
        }
    }
    Ok(())
}

/// The exit file lives next to the log: `<log>.exit`.
pub fn exit_path_for(log: &Path) -> std::path::PathBuf {
    let mut s = log.as_os_str().to_owned();
    s.push(".exit");
    s.into()
}

/// A stale exit file from an earlier job on the same log would be read as
/// this job's ending, so it goes before the job starts.
pub fn clear_exit_file(exit: &Path) -> Result<(), super::ShellError> {
    for p in [exit.to_path_buf(), {
        let mut t = exit.as_os_str().to_owned();
        t.push(".tmp");
        t.into()
    }] {
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(super::ShellError::LogFile {
                    path: p.display().to_string(),
                    error: e.to_string(),
                })
            }
        }
    }
    Ok(())
}

/// The caller's environment (or ours), minus any inherited marker, plus this
/// job's marker.
pub fn build_env(given: Option<&[(String, String)]>, marker: &str) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut push = |k: &OsStr, v: &OsStr| {
        if k.as_bytes() == MARKER_NAME.as_bytes() || k.is_empty() {
            return;
        }
        let mut kv = k.as_bytes().to_vec();
        kv.push(b'=');
        kv.extend_from_slice(v.as_bytes());
        out.push(kv);
    };
    match given {
        Some(vars) => vars
            .iter()
            .for_each(|(k, v)| push(OsStr::new(k), OsStr::new(v))),
        None => std::env::vars_os().for_each(|(k, v)| push(&k, &v)),
    }
    out.push(format!("{MARKER_NAME}={marker}").into_bytes());
    out
}

pub const MARKER_NAME: &str = "PI_UTILS_JOB";

/// Whether a bare shell name (`zsh`) names an executable file on the job's
/// `PATH` (the given environment's, else ours): where `exec` will look for
/// it. A missing shell then fails the spawn instead of exiting 127.
pub fn on_path(name: &str, env: Option<&[(String, String)]>) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let path = match env {
        Some(vars) => vars
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| std::ffi::OsString::from(v)),
        None => std::env::var_os("PATH"),
    };
    // `sh` searches a default path when PATH is unset.
    let path = path.unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path).any(|dir| {
        let dir = if dir.as_os_str().is_empty() {
            std::path::PathBuf::from(".")
        } else {
            dir
        };
        std::fs::metadata(dir.join(name))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// Unique on this machine for this boot: our pid, a clock reading and a counter.
pub fn new_marker(id: &str) -> String {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{}.{nanos:x}.{n}.{id}", std::process::id())
}

pub fn log_fd(f: &std::fs::File) -> RawFd {
    f.as_raw_fd()
}

#[cfg(test)]
mod script_tests {
    #[test]
    fn a_wrapper_never_let_go_says_so_in_the_words_the_ending_is_read_by() {
        let line = format!("printf '{}\\n'", super::super::job::NEVER_STARTED);
        assert!(super::SCRIPT.contains(&line), "{}", super::SCRIPT);
    }
}

#[cfg(test)]
mod log_mode_tests {
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_new_log_and_the_folder_made_for_it_are_the_users_alone() {
        let t = tempfile::tempdir().unwrap();
        let log = t.path().join("jobs/session/bg-1.log");
        super::open_log(&log).unwrap();
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&log), 0o600);
        assert_eq!(mode(log.parent().unwrap()), 0o700);
    }
}
