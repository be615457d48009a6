//! The one thread that notices job endings and timeouts while nobody asks,
//! and its schedule: what it sleeps on and how soon it looks ([`plan_job`]).
//!
//! It sleeps in `poll` on a wake-up pipe plus one pidfd per running job
//! (readable the moment that process exits), so an ending is seen at once
//! without any periodic work. Jobs without a pidfd (macOS, old kernels) are
//! polled: our own children every 20 ms, adopted jobs every 250 ms. Each
//! running job's log size is looked at every 25 ms (every 2 ms while it
//! floods), so a log is trimmed before it outgrows its bound. It is
//! not a Node handle, so it never keeps the host alive, and it only ever
//! reaps our own children by pid.

use super::liveness::LiveJob;
use super::pidfd::PidFd;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

pub const CHILD_POLL: Duration = Duration::from_millis(20);
pub const ADOPTED_POLL: Duration = Duration::from_millis(250);
/// A job whose main process ended is watched through its processes'
/// pidfds; this rescan finds what they started before they went.
pub const MEMBER_RESCAN: Duration = Duration::from_secs(1);
/// How often a running job's log size is looked at (a `stat`): at 500 MB/s
/// a log grows 12.5 MB between two looks, within the quarter of its bound
/// that a trim leaves free.
pub const LOG_CHECK: Duration = Duration::from_millis(25);
/// The same while it floods.
pub const FLOOD_CHECK: Duration = Duration::from_millis(2);
/// Even with pidfds, look again now and then: cheap insurance.
const IDLE_CHECK: Duration = Duration::from_secs(2);

#[derive(Default)]
pub struct Plan {
    fds: Vec<Arc<PidFd>>,
    within: Option<Duration>,
    running: bool,
}

impl Plan {
    pub fn watch(&mut self, fd: Arc<PidFd>) {
        self.running = true;
        self.fds.push(fd);
    }

    pub fn poll_within(&mut self, d: Duration) {
        self.running = true;
        self.within = Some(self.within.map_or(d, |w| w.min(d)));
    }

    pub fn wake_at_ms(&mut self, at_ms: u64) {
        let left = Duration::from_millis(at_ms.saturating_sub(super::now_ms()));
        self.poll_within(left);
    }

    fn timeout_ms(&self) -> libc::c_int {
        match (self.within, self.running) {
            (Some(w), _) => w.min(IDLE_CHECK).as_millis() as libc::c_int,
            (None, true) => IDLE_CHECK.as_millis() as libc::c_int,
            (None, false) => -1,
        }
    }
}

/// What the monitor watches: one registry of jobs.
pub(super) trait Watched: Send + Sync {
    /// What to sleep on, and when to wake up anyway (see [`plan_job`]).
    fn plan(&self, plan: &mut Plan);
    /// Notice endings, fire timeouts, keep logs under their bound.
    fn tick(self: Arc<Self>);
}

/// The schedule of one job: the pidfds to sleep on, how soon to look at
/// its log and at processes without a pidfd, and its deadline.
pub(super) fn plan_job(job: &LiveJob, plan: &mut Plan) {
    if job.child && !job.rec.is_running() {
        plan.poll_within(CHILD_POLL);
    }
    if job.log.open && !job.rec.is_running() {
        plan.poll_within(FLOOD_CHECK);
    }
    if !job.rec.is_running() {
        return;
    }
    plan.poll_within(if job.log.flooding {
        FLOOD_CHECK
    } else {
        LOG_CHECK
    });
    if job.rec.leader_ended() {
        job.member_fds.iter().for_each(|fd| plan.watch(fd.clone()));
        // Without pidfds, or to find what a tracked process started
        // before it went, look again now and then.
        plan.poll_within(if job.member_fds.is_empty() {
            ADOPTED_POLL
        } else {
            MEMBER_RESCAN
        });
    }
    match (&job.pidfd, job.child) {
        (Some(fd), _) => plan.watch(fd.clone()),
        (None, true) => plan.poll_within(CHILD_POLL),
        (None, false) => plan.poll_within(ADOPTED_POLL),
    }
    if let (Some(at), false) = (job.rec.deadline_ms(), job.rec.kill_requested) {
        plan.wake_at_ms(at);
    }
}

struct Monitor {
    registries: Mutex<Vec<Weak<dyn Watched>>>,
    wake_write: RawFd,
}

static MONITOR: OnceLock<Option<Monitor>> = OnceLock::new();

pub(super) fn register(reg: Weak<dyn Watched>) {
    if let Some(m) = MONITOR.get_or_init(start) {
        let mut regs = m.registries.lock().unwrap_or_else(|p| p.into_inner());
        regs.retain(|r| r.strong_count() > 0);
        regs.push(reg);
    }
    wake();
}

/// Set by [`tick_now`]: the next wake-up is a full tick, not a re-plan.
static TICK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Wakes the monitor for a full tick at once (the brake stopped a job,
/// whose log is to be cut and the job let go).
pub fn tick_now() {
    TICK.store(true, std::sync::atomic::Ordering::SeqCst);
    wake();
}

pub fn wake() {
    if let Some(Some(m)) = MONITOR.get() {
        let b = 1u8;
        // A full pipe already means "wake up"; nothing to do on EAGAIN.
        unsafe { libc::write(m.wake_write, (&b as *const u8).cast(), 1) };
    }
}

/// Without the thread, status still updates whenever it is asked for; only
/// timeouts and unprompted notifications would be missing.
fn start() -> Option<Monitor> {
    let mut fds = [0 as RawFd; 2];
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return None;
    }
    for fd in fds {
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK);
        }
    }
    let [read, write] = fds;
    let spawned = std::thread::Builder::new()
        .name("pi-utils-jobs".into())
        .spawn(move || run(read));
    if spawned.is_err() {
        unsafe {
            libc::close(read);
            libc::close(write);
        }
        return None;
    }
    Some(Monitor {
        registries: Mutex::new(Vec::new()),
        wake_write: write,
    })
}

fn live_registries() -> Vec<Arc<dyn Watched>> {
    let Some(Some(m)) = MONITOR.get() else {
        return Vec::new();
    };
    let regs = m.registries.lock().unwrap_or_else(|p| p.into_inner());
    regs.iter().filter_map(Weak::upgrade).collect()
}

fn run(wake_read: RawFd) {
    loop {
        let mut plan = Plan::default();
        for r in live_registries() {
            r.plan(&mut plan);
        }
        let mut pfds: Vec<libc::pollfd> = std::iter::once(wake_read)
            .chain(plan.fds.iter().map(|f| f.raw()))
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let ready = unsafe {
            libc::poll(
                pfds.as_mut_ptr(),
                pfds.len() as libc::nfds_t,
                plan.timeout_ms(),
            )
        };
        let pidfd_fired = pfds[1..].iter().any(|p| p.revents != 0);
        let mut sink = [0u8; 64];
        while unsafe { libc::read(wake_read, sink.as_mut_ptr().cast(), sink.len()) } > 0 {}
        drop(plan);
        let asked = TICK.swap(false, std::sync::atomic::Ordering::SeqCst);
        if ready > 0 && !pidfd_fired && !asked {
            // Only woken to watch a new job: nothing ended and nothing is due
            // (due times end the poll by timeout), so just re-plan. A burst
            // of spawns then does not contend with a full re-check each time.
            continue;
        }
        for r in live_registries() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| r.tick()));
        }
        if pidfd_fired {
            // Should a pidfd stay readable while its job still looks alive
            // (never seen, but cheap to bound), this keeps it from spinning.
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}
