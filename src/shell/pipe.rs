//! A job's output pipe when a log pump writes its log (`pump.rs`): the
//! pipe and the control socket the registry makes for the wrapper
//! (`spawn.rs`), and where the pump's binary is: beside the loaded addon.

use std::ffi::OsStr;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What the wrapper needs to start a job's log pump.
pub struct PumpSpec<'a> {
    pub binary: &'a Path,
    pub log: &'a Path,
    pub cuts: &'a Path,
    pub max: u64,
    pub origin: u64,
    pub fds: &'a PumpFds,
}

/// The job's output pipe and the control socket between the wrapper and
/// its pump: all close-on-exec here, so only the wrapper's dups cross an
/// exec, and numbered from 10 up (see `spawn::spawn`). Dropped once the wrapper
/// is started: the registry keeps no end of either.
pub struct PumpFds {
    pub(super) read: std::os::fd::OwnedFd,
    pub(super) write: std::os::fd::OwnedFd,
    pub(super) control: std::os::fd::OwnedFd,
    pub(super) pump_control: std::os::fd::OwnedFd,
}

#[cfg(target_os = "linux")]
impl PumpFds {
    pub fn new() -> Result<PumpFds, super::ShellError> {
        use std::os::fd::{FromRawFd, OwnedFd};
        let failed = || super::ShellError::Spawn(std::io::Error::last_os_error().to_string());
        let (mut p, mut s) = ([0 as RawFd; 2], [0 as RawFd; 2]);
        if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(failed());
        }
        let [read, write] = p.map(|fd| unsafe { OwnedFd::from_raw_fd(fd) });
        let kind = libc::SOCK_STREAM | libc::SOCK_CLOEXEC;
        if unsafe { libc::socketpair(libc::AF_UNIX, kind, 0, s.as_mut_ptr()) } != 0 {
            return Err(failed());
        }
        let [control, pump_control] = s.map(|fd| unsafe { OwnedFd::from_raw_fd(fd) });
        // A bigger buffer than the default 64 KiB: fewer waits for the pump.
        unsafe {
            libc::fcntl(
                write.as_raw_fd(),
                libc::F_SETPIPE_SZ,
                super::pump::PIPE_BYTES,
            )
        };
        let high = |fd: OwnedFd| -> Result<OwnedFd, super::ShellError> {
            let moved = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
            (moved >= 0)
                .then(|| unsafe { OwnedFd::from_raw_fd(moved) })
                .ok_or_else(failed)
        };
        Ok(PumpFds {
            read: high(read)?,
            write: high(write)?,
            control: high(control)?,
            pump_control: high(pump_control)?,
        })
    }
}

#[cfg(not(target_os = "linux"))]
impl PumpFds {
    pub fn new() -> Result<PumpFds, super::ShellError> {
        Err(super::ShellError::Spawn(
            "no log pump on this platform".into(),
        ))
    }
}

impl PumpFds {
    /// The pipe's inode (as `/proc/PID/fd` names it: `pipe:[ino]`).
    pub fn inode(&self) -> Option<u64> {
        use std::os::unix::fs::MetadataExt;
        let f = std::fs::File::from(self.write.try_clone().ok()?);
        f.metadata().ok().map(|m| m.ino())
    }
}

/// The log pump beside the loaded addon (or, for cargo's test binaries in
/// `deps/`, one folder up, and only there: the folder above an installed
/// addon may be a project's `node_modules`, whose files are no more ours
/// to run than the project's): `None` where there is none (a program that
/// copied only the `.node`), and everywhere but Linux; jobs then write
/// their log directly.
pub fn pump_binary() -> Option<&'static Path> {
    static FOUND: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            if !cfg!(target_os = "linux") {
                return None;
            }
            let ours = our_file()?;
            pump_places(ours.parent()?)
                .into_iter()
                .find(|p| is_executable(p))
        })
        .as_deref()
}

/// Where the pump may be, for code loaded from `dir`: beside it, and one
/// folder up only from cargo's `deps/`.
fn pump_places(dir: &Path) -> Vec<std::path::PathBuf> {
    let above = dir
        .parent()
        .filter(|_| dir.file_name() == Some(OsStr::new("deps")));
    [Some(dir), above]
        .into_iter()
        .flatten()
        .map(|d| d.join(super::pump::BINARY))
        .collect()
}

/// The file this code was loaded from: the addon, or a test binary.
fn our_file() -> Option<std::path::PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let here = pump_binary as *const () as *const libc::c_void;
    let found = unsafe { libc::dladdr(here, &mut info) } != 0 && !info.dli_fname.is_null();
    let name = found
        .then(|| unsafe { std::ffi::CStr::from_ptr(info.dli_fname) })
        .map(|c| std::path::PathBuf::from(OsStr::from_bytes(c.to_bytes())))
        .filter(|p| p.is_absolute());
    name.or_else(|| std::env::current_exe().ok())
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pump_is_looked_for_above_the_addon_only_from_cargos_deps_folder() {
        let installed = Path::new("/p/node_modules/@sting8k/pi-utils-linux-x64-gnu");
        assert_eq!(
            pump_places(installed),
            vec![installed.join(super::super::pump::BINARY)],
            "the folder above an installed addon may be a project's node_modules"
        );
        let tests = Path::new("/t/target/debug/deps");
        assert_eq!(
            pump_places(tests),
            vec![
                tests.join(super::super::pump::BINARY),
                Path::new("/t/target/debug").join(super::super::pump::BINARY),
            ]
        );
    }
}
