//! The brake: stops (`SIGSTOP`) a job whose log has run past its brake
//! point ([`log::brake_at`], halfway between where cuts start and the
//! bound) before the monitor could cut it, so the file never reaches the
//! bound however fast the job writes.
//!
//! The monitor alone could not promise that: it looks at a log every few
//! milliseconds and cuts under the registry lock, where a cut's writeback
//! or a sidecar rename behind a flood's journal commit takes 10-150 ms, and
//! a writer at 2 GB/s ran 50 MiB past an 8 MiB bound meanwhile. The brake
//! runs on a thread of its own that does nothing but `fstat` and signal:
//! it sleeps on an inotify watch of every braked log (one wake-up per burst
//! of writes, a 10 ms poll where inotify is missing), and never takes the
//! registry lock. The monitor then cuts the log and lets the job go on
//! ([`Brake::release`]).
//!
//! Only a job whose main process is our unreaped child is braked, through
//! its process group: while unreaped, its pid (and so its group id) cannot
//! be reused. Reaping goes through [`Brake::reap`], under the same small
//! lock the signal is sent under, so the group is never signalled after
//! it could have become someone else's. What outlives the main process is
//! held by the monitor's cuts only.

use super::log;
use std::fs::File;
use std::os::fd::RawFd;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

/// Where the inotify queue cannot be had, or as a backstop, how often
/// armed logs are looked at anyway.
const POLL: Duration = Duration::from_millis(10);
/// After a batch of events the thread naps this long, so a job writing
/// 8 KiB at a time wakes it a few thousand times a second at most.
const NAP: Duration = Duration::from_micros(250);

pub struct Brake {
    /// Opened read-only: only `fstat`ed.
    log: File,
    at: u64,
    wd: Option<i32>,
    state: Mutex<State>,
    /// Called (on the brake's thread) after it stopped the job: asks for
    /// the cut and the release (the monitor's `tick_now`).
    on_stop: fn(),
}

struct State {
    /// The job's group while its leader is our unreaped child.
    group: Option<i32>,
    stopped: bool,
}

impl Brake {
    /// A brake on the job led by our (unreaped) child `pid`, whose log at
    /// `path` is bounded by `max`; `on_stop` is called once it stopped the
    /// job. `None` if the log cannot be opened.
    pub fn arm(pid: i32, path: &Path, max: u64, on_stop: fn()) -> Option<Arc<Brake>> {
        use std::os::unix::fs::OpenOptionsExt;
        let log = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(path)
            .ok()?;
        let thread = thread()?;
        let wd = thread.watch(path);
        let brake = Arc::new(Brake {
            log,
            at: log::brake_at(max),
            wd,
            state: Mutex::new(State {
                group: Some(pid),
                stopped: false,
            }),
            on_stop,
        });
        lock(&thread.brakes).push(Arc::downgrade(&brake));
        thread.wake();
        Some(brake)
    }

    fn locked(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// `waitpid(pid, WNOHANG)` under the brake's lock; a reaped leader
    /// disarms it. Returns what `waitpid` returned and the status.
    pub fn reap(&self, pid: i32) -> (i32, i32) {
        let mut s = self.locked();
        let (r, status) = waitpid(pid);
        if r == pid {
            s.group = None;
        }
        (r, status)
    }

    /// Continues the job if the brake stopped it. The monitor calls it
    /// after a cut.
    pub fn release(&self) {
        let mut s = self.locked();
        if std::mem::take(&mut s.stopped) {
            if let Some(g) = s.group {
                super::members::signal_group(g, libc::SIGCONT);
            }
        }
    }

    /// Stops the job if its log is past the brake point; true if it did.
    fn check(&self) -> bool {
        let size = self.log.metadata().map(|m| m.len()).unwrap_or(0);
        if size <= self.at {
            return false;
        }
        let mut s = self.locked();
        match s.group {
            Some(g) if !s.stopped => {
                s.stopped = super::members::signal_group(g, libc::SIGSTOP);
                s.stopped
            }
            _ => false,
        }
    }

    fn armed(&self) -> bool {
        self.locked().group.is_some()
    }
}

impl Drop for Brake {
    fn drop(&mut self) {
        self.release();
        let Some(wd) = self.wd else { return };
        if let Some(t) = THREAD.get().and_then(Option::as_ref) {
            let mut brakes = lock(&t.brakes);
            brakes.retain(|b| b.strong_count() > 0);
            // Two jobs on one inode share a watch descriptor.
            if !brakes
                .iter()
                .filter_map(Weak::upgrade)
                .any(|b| b.wd == Some(wd))
            {
                unsafe { libc::inotify_rm_watch(t.inotify, wd) };
            }
        }
    }
}

fn waitpid(pid: i32) -> (i32, i32) {
    let mut status = 0;
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    (r, status)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

struct Thread {
    /// -1 without inotify.
    inotify: RawFd,
    wake_write: RawFd,
    wake_read: RawFd,
    brakes: Mutex<Vec<Weak<Brake>>>,
}

static THREAD: OnceLock<Option<Thread>> = OnceLock::new();

/// The brake thread, started on first use; `None` if it cannot run (then
/// no job is braked and the monitor's cuts are all there is).
fn thread() -> Option<&'static Thread> {
    THREAD
        .get_or_init(|| {
            let inotify = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
            let mut fds = [0 as RawFd; 2];
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
                return None;
            }
            let t = Thread {
                inotify,
                wake_read: fds[0],
                wake_write: fds[1],
                brakes: Mutex::new(Vec::new()),
            };
            std::thread::Builder::new()
                .name("pi-utils-brake".into())
                .spawn(run)
                .ok()?;
            Some(t)
        })
        .as_ref()
}

impl Thread {
    fn watch(&self, path: &Path) -> Option<i32> {
        if self.inotify < 0 {
            return None;
        }
        let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()))
            .ok()?;
        let wd = unsafe { libc::inotify_add_watch(self.inotify, c.as_ptr(), libc::IN_MODIFY) };
        (wd >= 0).then_some(wd)
    }

    fn wake(&self) {
        let b = 1u8;
        unsafe { libc::write(self.wake_write, (&b as *const u8).cast(), 1) };
    }

    fn live(&self) -> Vec<Arc<Brake>> {
        let mut brakes = lock(&self.brakes);
        brakes.retain(|b| b.strong_count() > 0);
        brakes.iter().filter_map(Weak::upgrade).collect()
    }

    /// Watch descriptors with events since the last call (drained).
    fn events(&self) -> Vec<i32> {
        let mut wds = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = unsafe { libc::read(self.inotify, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                return wds;
            }
            let mut at = 0usize;
            let head = std::mem::size_of::<libc::inotify_event>();
            while at + head <= n as usize {
                let ev: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
                if !wds.contains(&ev.wd) {
                    wds.push(ev.wd);
                }
                at += head + ev.len as usize;
            }
        }
    }
}

fn run() {
    // The `OnceLock` is set only once this thread was spawned: wait for it.
    let t = loop {
        if let Some(t) = THREAD.get().and_then(Option::as_ref) {
            break t;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    loop {
        let brakes = t.live();
        let armed = brakes.iter().any(|b| b.armed());
        drop(brakes);
        let mut pfds = [t.wake_read, t.inotify].map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        let timeout = if armed {
            POLL.as_millis() as libc::c_int
        } else {
            -1
        };
        let nfds = if t.inotify < 0 { 1 } else { 2 };
        let ready = unsafe { libc::poll(pfds.as_mut_ptr(), nfds, timeout) };
        let mut sink = [0u8; 64];
        while unsafe { libc::read(t.wake_read, sink.as_mut_ptr().cast(), sink.len()) } > 0 {}
        // Events name the logs written to; a timeout looks at all of them.
        let written = if ready > 0 { Some(t.events()) } else { None };
        let mut stopped: Vec<fn()> = Vec::new();
        for b in t.live() {
            let look = match (&written, b.wd) {
                (Some(wds), Some(wd)) => wds.contains(&wd),
                _ => true,
            };
            if look && b.check() {
                stopped.push(b.on_stop);
            }
        }
        // Outside the loop over the brakes; a tick asked twice is one tick.
        stopped.iter().for_each(|f| f());
        if ready > 0 {
            std::thread::sleep(NAP);
        }
    }
}
