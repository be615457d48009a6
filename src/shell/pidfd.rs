//! Linux pidfds: a file descriptor that names one process, not a pid number.
//! Opened and then identity-checked, it cannot be redirected to a newcomer
//! that reuses the pid, so a signal sent through it reaches the process we
//! checked. It also becomes readable when the process exits, which lets the
//! monitor sleep in `poll` instead of polling `waitpid`.
//!
//! Elsewhere (macOS, or a Linux older than 5.3) `open` returns `None` and
//! callers fall back to polling and to `kill(2)` after a fresh check.

use std::os::fd::RawFd;

#[derive(Debug)]
pub struct PidFd {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
}

#[cfg(target_os = "linux")]
impl PidFd {
    pub fn open(pid: i32) -> Option<PidFd> {
        use std::os::fd::FromRawFd;
        if pid <= 0 {
            return None;
        }
        // pidfd_open always sets close-on-exec, so jobs never inherit it.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd < 0 {
            return None;
        }
        Some(PidFd {
            fd: unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as RawFd) },
        })
    }

    pub fn raw(&self) -> RawFd {
        use std::os::fd::AsRawFd;
        self.fd.as_raw_fd()
    }

    /// True once the process has exited (zombie or reaped).
    pub fn exited(&self) -> bool {
        let mut p = libc::pollfd {
            fd: self.raw(),
            events: libc::POLLIN,
            revents: 0,
        };
        unsafe { libc::poll(&mut p, 1, 0) > 0 }
    }

    pub fn signal(&self, sig: i32) -> std::io::Result<()> {
        let rc = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.raw(),
                sig,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

#[cfg(not(target_os = "linux"))]
impl PidFd {
    pub fn open(_pid: i32) -> Option<PidFd> {
        None
    }
    pub fn raw(&self) -> RawFd {
        -1
    }
    pub fn exited(&self) -> bool {
        false
    }
    pub fn signal(&self, _sig: i32) -> std::io::Result<()> {
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }
}
