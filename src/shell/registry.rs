//! One Pi session's jobs: spawn, query, wait, kill, read, persist.
//!
//! Registries opened through [`open_shared`] live in a process-wide static,
//! so Pi's `/reload` (which re-runs the JS but keeps the native module
//! loaded) finds the same jobs, still reaped and still watched. All state
//! changes go through one mutex per registry; the sidecar is rewritten under
//! it after every change so the file never lags behind what JS was told.
//!
//! Reaping is by pid only (`waitpid(pid, WNOHANG)`), never wait-for-any:
//! Node reaps its own children by pid too, and a global reaper would steal
//! their statuses. While our child is unreaped its pid cannot be reused, so
//! the group may be signalled without a race; reaping and signalling take
//! the same lock. Killing lives in `kill.rs`, which reaches a job only
//! through [`Registry::with_job`]: the lock, the refresh before and the
//! save and announcements after stay here, in one file.

use super::brake::Brake;
use super::cgroup::JobCgroup;
use super::identity::{self, ProcInfo, Verdict};
use super::job::{self, EndEvidence, JobRecord, JobState, JobView, Member};
use super::kill::{self, KillReport};
use super::log::{self, Keep, LogChunk};
use super::pidfd::PidFd;
use super::{monitor, reconcile, sidecar, spawn, ShellError};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Called (from any thread) whenever a job leaves `running`.
pub type Listener = Arc<dyn Fn(&JobView) + Send + Sync>;

/// Grace between SIGTERM and SIGKILL when a job's own timeout fires.
pub const TIMEOUT_GRACE: Duration = Duration::from_secs(3);
const WAIT_SLICE: Duration = Duration::from_millis(50);
/// A smaller bound would leave no room for a tail after the kept head.
pub const MIN_LOG_BYTES: u64 = 2 * log::HEAD_BYTES;
/// A log growing faster than this between two checks is a flood: it is
/// checked every [`monitor::FLOOD_CHECK`] instead of every [`monitor::LOG_CHECK`],
/// and held for its cuts.
const FLOOD_BYTES_PER_CHECK: u64 = 256 * 1024;
/// The newest output a cut keeps of a flooding job's log (besides its head):
/// the less a cut keeps, the less it writes back and the shorter the job is
/// held for it.
const FLOOD_KEEP: u64 = 1024 * 1024;
/// A log growing faster than this (bytes per second) for [`FLOOD_REPORT`]
/// is reported as a flood (`JobView::flooding`).
const FLOOD_RATE: u64 = 10 * 1000 * 1000;
const FLOOD_REPORT: Duration = Duration::from_secs(2);
/// The rate is judged over at least this long: a flooding log is checked
/// every 2 ms, and a writer that was not scheduled for one such check on a
/// busy machine (two cores, a test suite running) read as a stop, so the
/// 2 s of flooding never added up.
const RATE_WINDOW: Duration = Duration::from_millis(250);
/// See `refresh_members`.
const RECHECK_COMMANDS_MS: u64 = 2000;
pub struct SpawnRequest {
    pub command: String,
    pub cwd: PathBuf,
    /// Path or name of the shell run as `<shell> -c <command>`; `None` picks
    /// `/bin/bash`, else `sh`.
    pub shell: Option<String>,
    /// The complete environment; `None` inherits ours.
    pub env: Option<Vec<(String, String)>>,
    /// Absolute; created (with its directory) if missing, appended to otherwise.
    pub log_path: PathBuf,
    /// Killed (TERM, grace, KILL) once this has passed since the start.
    pub timeout: Option<Duration>,
    /// Default: `bg-<n>`.
    pub id: Option<String>,
    pub meta: Option<String>,
    /// The log's bound; default [`log::DEFAULT_MAX_LOG_BYTES`]. Past it the
    /// log keeps its first MiB, a marker line and its newest output.
    pub max_log_bytes: Option<u64>,
    /// Track by the process-tree scan even where a cgroup could be made.
    pub process_tree_only: bool,
}

/// What a wait waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitFor {
    /// The job leaves `running`: its main process and everything it started are gone.
    Job,
    /// The main process ended (the job may still run what it started).
    Leader,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitEnd {
    Ended,
    TimedOut,
    Cancelled,
}

pub(super) struct Job {
    pub(super) rec: JobRecord,
    /// Started by this process (as opposed to adopted from a sidecar).
    pub(super) ours: bool,
    /// Our child, not yet reaped: its pid cannot be reused.
    pub(super) child: bool,
    pub(super) pidfd: Option<Arc<PidFd>>,
    /// One per tracked process that outlived the main one, where pidfds exist.
    member_fds: Vec<Arc<PidFd>>,
    pub(super) sent_signal: Option<i32>,
    /// Log size at the last check, and whether it grew fast since the one before.
    log_seen: u64,
    flooding: bool,
    /// When the current window of [`RATE_WINDOW`] began, what the log grew
    /// in it so far, and since when it has grown faster than
    /// [`FLOOD_RATE`] in every window.
    log_checked: Instant,
    window_bytes: u64,
    flood_since: Option<Instant>,
    /// Stopped by [`hold`] for a cut of its log; resumed before the
    /// monitor lets go of the registry.
    held: bool,
    /// Still to be looked at once more: the job runs, or ended since the last look.
    log_open: bool,
    /// The record as last serialized, so a save re-serializes only what changed.
    line: Option<(JobRecord, String)>,
    /// Stops the job before its log reaches the bound; ours, while our child.
    brake: Option<Arc<Brake>>,
    /// The record's `log_trim_at` and `log_shift`, for lock-free readers.
    cuts: Arc<log::Cuts>,
}

impl Job {
    /// A job this process has just started: ours, our unreaped child.
    fn started(rec: JobRecord, log_start: u64) -> Job {
        Job {
            pidfd: PidFd::open(rec.pid).map(Arc::new),
            brake: Brake::arm(rec.pid, Path::new(&rec.log_path), rec.max_log_bytes),
            rec,
            ours: true,
            child: true,
            member_fds: Vec::new(),
            sent_signal: None,
            log_seen: log_start,
            // Watched closely until its first look shows it is not flooding.
            flooding: true,
            log_open: true,
            log_checked: Instant::now(),
            window_bytes: 0,
            flood_since: None,
            held: false,
            line: None,
            cuts: Arc::new(log::Cuts::new(None, 0)),
        }
    }
}

struct Inner {
    jobs: Vec<Job>,
    /// Ids this registry removed: not taken back from another process's write.
    forgotten: std::collections::HashSet<String>,
    save_error: Option<String>,
    /// Jobs that left `running` under the lock and are yet to be announced.
    ended: Vec<JobView>,
}

pub struct Registry {
    sidecar: PathBuf,
    inner: Mutex<Inner>,
    changed: Condvar,
    listener: Mutex<Option<Listener>>,
    problems: Vec<String>,
}

/// Opens the registry for `sidecar`, or returns the one this process already
/// has open for it (the `bool` says which): the state that survives `/reload`.
pub fn open_shared(sidecar: &Path) -> Result<(Arc<Registry>, bool), ShellError> {
    static SHARED: Mutex<Vec<Arc<Registry>>> = Mutex::new(Vec::new());
    let key = normalize(sidecar)?;
    let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(r) = shared.iter().find(|r| r.sidecar == key) {
        return Ok((r.clone(), true));
    }
    let r = Registry::open_normalized(key)?;
    shared.push(r.clone());
    Ok((r, false))
}

fn normalize(path: &Path) -> Result<PathBuf, ShellError> {
    let err = |e: String| ShellError::Sidecar {
        path: path.display().to_string(),
        error: e,
    };
    let abs = std::path::absolute(path).map_err(|e| err(e.to_string()))?;
    let (Some(dir), Some(name)) = (abs.parent(), abs.file_name()) else {
        return Err(err("not a file path".into()));
    };
    std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
    let dir = dir.canonicalize().map_err(|e| err(e.to_string()))?;
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(dir.as_os_str()))
        .map_err(|_| err("contains a NUL byte".into()))?;
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(err(format!("{} is not writable", dir.display())));
    }
    Ok(dir.join(name))
}

impl Registry {
    /// A registry of its own (not shared): loads and reconciles the sidecar.
    pub fn open(sidecar_path: &Path) -> Result<Arc<Registry>, ShellError> {
        Self::open_normalized(normalize(sidecar_path)?)
    }

    /// `open` for a path `normalize` already returned (`open_shared` needs it
    /// normalized as its key, and normalizing is a few syscalls).
    fn open_normalized(path: PathBuf) -> Result<Arc<Registry>, ShellError> {
        let loaded = sidecar::load(&path).map_err(|error| ShellError::Sidecar {
            path: path.display().to_string(),
            error,
        })?;
        let mut changed = !loaded.problems.is_empty();
        let jobs = loaded
            .records
            .into_iter()
            .map(|rec| {
                let before = rec.clone();
                let job = adopt(rec);
                changed |= job.rec != before;
                job
            })
            .collect();
        let reg = Arc::new(Registry {
            sidecar: path,
            inner: Mutex::new(Inner {
                jobs,
                forgotten: Default::default(),
                save_error: None,
                ended: Vec::new(),
            }),
            changed: Condvar::new(),
            listener: Mutex::new(None),
            problems: loaded.problems,
        });
        if changed {
            let mut g = reg.locked();
            reg.save(&mut g);
        }
        monitor::register(&reg);
        Ok(reg)
    }

    pub fn sidecar(&self) -> &Path {
        &self.sidecar
    }

    /// What could not be read from the sidecar when it was loaded.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The last failure to write the sidecar, if the latest write failed.
    pub fn save_error(&self) -> Option<String> {
        self.locked().save_error.clone()
    }

    pub fn set_listener(&self, listener: Option<Listener>) {
        *self.listener.lock().unwrap_or_else(|p| p.into_inner()) = listener;
    }

    pub fn spawn(self: &Arc<Self>, req: SpawnRequest) -> Result<JobView, ShellError> {
        let shell = checked_shell(&req)?;
        let log_file = spawn::open_log(&req.log_path)?;
        let exit_path = spawn::exit_path_for(&req.log_path);
        spawn::clear_exit_file(&exit_path)?;
        let log_start = log_file.metadata().map(|m| m.len()).unwrap_or(0);

        let mut g = self.locked();
        // Another process sharing the sidecar may have started jobs: take
        // them in before choosing an id, and hold the file until written.
        let file_lock = sidecar::lock(&self.sidecar).map_err(|error| ShellError::Sidecar {
            path: self.sidecar.display().to_string(),
            error,
        })?;
        self.take_in(&mut g);
        let running = g.jobs.iter().filter(|j| j.rec.is_running());
        spawn::log_not_shared(&log_file, running.map(|j| (&j.rec.id, &j.rec.log_path)))?;
        let id = free_id(&g.jobs, req.id.clone())?;
        let token = spawn::new_marker(&id);
        spawn::mark_log(&log_file, &token);
        let env = spawn::build_env(req.env.as_deref(), &token);
        let started_at_ms = super::now_ms();
        let cgroup = (!req.process_tree_only)
            .then(|| held_cgroup(&token))
            .flatten();
        let go = spawn::GoPipe::new()?;
        let spawned = spawn::spawn(&spawn::Spec {
            shell: &shell,
            command: &req.command,
            cwd: &req.cwd,
            exit_path: &exit_path,
            env: &env,
            log: spawn::log_fd(&log_file),
            go: go.read.as_raw_fd(),
            held: cgroup.is_some(),
        });
        drop(log_file);
        let pid = spawned.inspect_err(|_| {
            if let Some(cg) = &cgroup {
                cg.remove();
            }
        })?;
        super::failpoint("spawn.spawned");
        let rec = new_record(NewJob {
            id,
            req,
            shell,
            exit_path,
            pid,
            marker: token,
            started_at_ms,
            log_start,
            cgroup: cgroup.as_ref(),
        });
        g.jobs.push(Job::started(rec, log_start));
        self.write(&mut g);
        drop(file_lock);
        if let Some(error) = g.save_error.clone() {
            // Unrecorded, it must not run: the wrapper reads end of file.
            let job = g.jobs.pop().expect("just pushed");
            spawn::abandon(job.rec.pid, go, cgroup);
            return Err(ShellError::Sidecar {
                path: self.sidecar.display().to_string(),
                error,
            });
        }
        super::failpoint("spawn.saved");
        let v = view(g.jobs.last().expect("just pushed"));
        drop(g);
        spawn::go_ahead(self, &v.record.id, pid, cgroup, go);
        super::failpoint("spawn.go");
        monitor::wake();
        Ok(v)
    }

    /// SIGTERM to the group and to escaped descendants, up to `grace` for
    /// them to go, SIGKILL to whatever is left, then up to 2 s to confirm.
    /// Blocks for that long: call it off the JS thread.
    pub fn kill(&self, id: &str, grace: Duration) -> Result<KillReport, ShellError> {
        kill::kill(self, id, grace, false)
    }

    /// Runs `f` on job `id` under the lock, the job brought up to date
    /// first; afterwards the sidecar is rewritten if the record changed, and
    /// an ending (seen by the refresh or caused by `f`) is announced once.
    /// This is how `kill.rs` acts on a job between its signals.
    pub(super) fn with_job<R>(
        &self,
        id: &str,
        f: impl FnOnce(&mut Job) -> R,
    ) -> Result<R, ShellError> {
        let mut g = self.locked();
        let job = find_mut(&mut g.jobs, id)?;
        let mut ended = refresh(job);
        let before = job.rec.clone();
        let out = f(job);
        ended |= before.is_running() && !job.rec.is_running();
        let changed = job.rec != before;
        if ended {
            let v = view(job);
            g.ended.push(v);
        } else if changed {
            self.save(&mut g);
        }
        self.release(g);
        Ok(out)
    }

    /// Whether job `id` still counts as running, after a fresh check.
    pub(super) fn is_running(&self, id: &str) -> bool {
        self.get(id).is_some_and(|v| v.record.is_running())
    }

    pub fn get(&self, id: &str) -> Option<JobView> {
        self.sync();
        let g = self.locked();
        g.jobs.iter().find(|j| j.rec.id == id).map(view)
    }

    pub fn list(&self) -> Vec<JobView> {
        self.sync();
        self.locked().jobs.iter().map(view).collect()
    }

    /// Blocks until the job leaves `running`, `timeout` passes or
    /// `cancelled()` turns true (checked every 50 ms). Call it off the JS thread.
    pub fn wait(
        &self,
        id: &str,
        timeout: Option<Duration>,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<(JobView, WaitEnd), ShellError> {
        self.wait_for(id, WaitFor::Job, timeout, cancelled)
    }

    /// [`Registry::wait`] for the job's end or only for its main process's.
    pub fn wait_for(
        &self,
        id: &str,
        what: WaitFor,
        timeout: Option<Duration>,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<(JobView, WaitEnd), ShellError> {
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        loop {
            self.sync();
            let g = self.locked();
            let job = find(&g.jobs, id)?;
            if !job.rec.is_running() || (what == WaitFor::Leader && job.rec.leader_ended()) {
                return Ok((view(job), WaitEnd::Ended));
            }
            if cancelled() {
                return Ok((view(job), WaitEnd::Cancelled));
            }
            let slice = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok((view(job), WaitEnd::TimedOut));
                    }
                    left.min(WAIT_SLICE)
                }
                None => WAIT_SLICE,
            };
            let _ = self.changed.wait_timeout(g, slice);
        }
    }

    /// The last lines (or bytes) of the job's own output (not what the log
    /// held before it started); does not move the cursor.
    pub fn tail(
        &self,
        id: &str,
        lines: Option<u64>,
        max_bytes: u64,
    ) -> Result<LogChunk, ShellError> {
        self.sync();
        let g = self.locked();
        let job = find(&g.jobs, id)?;
        let (path, origin, done) = (
            PathBuf::from(&job.rec.log_path),
            job.rec.log_start,
            !job.rec.is_running(),
        );
        drop(g);
        Ok(log::tail_after(&path, origin, lines, max_bytes, done).unwrap_or_default())
    }

    /// Output since the job's read cursor (at most `max_bytes`, keeping the
    /// head or the tail of a longer stretch); moves the cursor past it.
    pub fn read_new(&self, id: &str, max_bytes: u64, keep: Keep) -> Result<LogChunk, ShellError> {
        self.sync();
        let mut g = self.locked();
        let job = find_mut(&mut g.jobs, id)?;
        let chunk = log::read_from(
            Path::new(&job.rec.log_path),
            job.rec.read_offset,
            max_bytes,
            keep,
            !job.rec.is_running(),
        )
        .unwrap_or_default();
        if chunk.end != job.rec.read_offset && chunk.size > 0 {
            job.rec.read_offset = chunk.end;
            self.save(&mut g);
        }
        Ok(chunk)
    }

    /// Where job `id`'s log was cut, kept current without the lock.
    pub fn log_cuts(&self, id: &str) -> Result<Arc<log::Cuts>, ShellError> {
        Ok(find(&self.locked().jobs, id)?.cuts.clone())
    }

    pub fn set_read_offset(&self, id: &str, offset: u64) -> Result<(), ShellError> {
        let mut g = self.locked();
        find_mut(&mut g.jobs, id)?.rec.read_offset = offset;
        self.save(&mut g);
        Ok(())
    }

    /// Test-and-set of the `delivered` flag: true for exactly one caller, so
    /// a completion is announced once even across `/reload` and restarts,
    /// and across processes sharing the sidecar: the test is made under the
    /// file's lock on what the file says now. Should another process hold
    /// that lock past [`sidecar::LOCK_WAIT`], the claim is this process's
    /// alone and the failure is reported like any unsaved change.
    pub fn claim_delivery(&self, id: &str) -> Result<bool, ShellError> {
        let mut g = self.locked();
        let file_lock = sidecar::lock(&self.sidecar);
        match &file_lock {
            Ok(_) => self.take_in(&mut g),
            Err(e) => g.save_error = Some(e.clone()),
        }
        let job = find_mut(&mut g.jobs, id)?;
        if job.rec.delivered {
            return Ok(false);
        }
        job.rec.delivered = true;
        if file_lock.is_ok() {
            self.write(&mut g);
        }
        Ok(true)
    }

    pub fn set_meta(&self, id: &str, meta: Option<String>) -> Result<JobView, ShellError> {
        let mut g = self.locked();
        let job = find_mut(&mut g.jobs, id)?;
        job.rec.meta = meta;
        let v = view(job);
        self.save(&mut g);
        Ok(v)
    }

    /// Forgets a finished job (and optionally deletes its log and exit file).
    pub fn remove(&self, id: &str, delete_files: bool) -> Result<(), ShellError> {
        self.sync();
        let mut g = self.locked();
        let at = g
            .jobs
            .iter()
            .position(|j| j.rec.id == id)
            .ok_or_else(|| ShellError::UnknownJob(id.to_string()))?;
        if g.jobs[at].rec.is_running() {
            return Err(ShellError::StillRunning(id.to_string()));
        }
        let job = g.jobs.remove(at);
        if job.child {
            // A lost child of ours still needs reaping; keep watching it.
            g.jobs.insert(at, job);
            return Err(ShellError::StillRunning(id.to_string()));
        }
        g.forgotten.insert(id.to_string());
        if delete_files {
            let _ = std::fs::remove_file(&job.rec.log_path);
            let _ = std::fs::remove_file(&job.rec.exit_path);
        }
        self.save(&mut g);
        Ok(())
    }

    fn locked(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Rewrites the sidecar under its lock, after taking in what another
    /// process wrote; a lock that cannot be had is reported, not waited out.
    fn save(&self, g: &mut Inner) {
        match sidecar::lock(&self.sidecar) {
            Ok(file_lock) => {
                self.take_in(g);
                self.write(g);
                drop(file_lock);
            }
            Err(e) => g.save_error = Some(e),
        }
    }

    /// Jobs another process added to the sidecar since we read it: adopted
    /// (reconciled and watched like jobs from a restart). A job both know is
    /// ours to write, except that its ending, once told by either, stays told.
    fn take_in(&self, g: &mut Inner) {
        let mut added = false;
        for rec in sidecar::current_records(&self.sidecar) {
            if let Some(j) = g.jobs.iter_mut().find(|j| j.rec.id == rec.id) {
                if j.rec.pid == rec.pid && j.rec.start_ticks == rec.start_ticks {
                    j.rec.delivered |= rec.delivered;
                }
                continue;
            }
            if g.forgotten.contains(&rec.id) {
                continue;
            }
            g.jobs.push(adopt(rec));
            added = true;
        }
        if added {
            monitor::wake();
        }
    }

    fn write(&self, g: &mut Inner) {
        for j in g.jobs.iter_mut() {
            if !matches!(&j.line, Some((rec, _)) if *rec == j.rec) {
                j.line = Some((j.rec.clone(), sidecar::record_line(&j.rec)));
            }
        }
        let lines: Vec<&str> = g
            .jobs
            .iter()
            .filter_map(|j| j.line.as_ref().map(|(_, l)| l.as_str()))
            .collect();
        let result = sidecar::save_lines(&self.sidecar, &lines);
        g.save_error = result
            .err()
            .map(|e| format!("cannot write {}: {e}", self.sidecar.display()));
    }

    fn emit(&self, changed: &[JobView]) {
        if changed.is_empty() {
            return;
        }
        let listener = self
            .listener
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(l) = listener {
            for v in changed {
                l(v);
            }
        }
    }

    /// Reaps and re-checks every running job; persists, wakes waiters and
    /// tells the listener about those that ended.
    pub(super) fn sync(&self) {
        let mut g = self.locked();
        let mut leaders_ended = false;
        for i in 0..g.jobs.len() {
            let leader_before = g.jobs[i].rec.leader_ended();
            if refresh(&mut g.jobs[i]) {
                let v = view(&g.jobs[i]);
                g.ended.push(v);
            } else if !leader_before && g.jobs[i].rec.leader_ended() {
                leaders_ended = true;
            }
        }
        if leaders_ended && g.ended.is_empty() {
            // Still running, but a wait for the main process is due.
            self.save(&mut g);
            self.changed.notify_all();
        }
        self.release(g);
    }

    /// Unlocks; if jobs ended meanwhile, first persists and wakes waiters,
    /// then tells the listener (outside the lock, so it may call back in).
    fn release(&self, mut g: MutexGuard<'_, Inner>) {
        if g.ended.is_empty() {
            return;
        }
        let ended = std::mem::take(&mut g.ended);
        self.save(&mut g);
        self.changed.notify_all();
        drop(g);
        self.emit(&ended);
    }

    /// For the monitor: what to sleep on, and when to wake up anyway.
    pub(super) fn plan(&self, plan: &mut monitor::Plan) {
        let g = self.locked();
        for job in &g.jobs {
            if job.child && !job.rec.is_running() {
                plan.poll_within(monitor::CHILD_POLL);
            }
            if job.log_open && !job.rec.is_running() {
                plan.poll_within(monitor::FLOOD_CHECK);
            }
            if !job.rec.is_running() {
                continue;
            }
            plan.poll_within(if job.flooding {
                monitor::FLOOD_CHECK
            } else {
                monitor::LOG_CHECK
            });
            if job.rec.leader_ended() {
                job.member_fds.iter().for_each(|fd| plan.watch(fd.clone()));
                // Without pidfds, or to find what a tracked process started
                // before it went, look again now and then.
                plan.poll_within(if job.member_fds.is_empty() {
                    monitor::ADOPTED_POLL
                } else {
                    monitor::MEMBER_RESCAN
                });
            }
            match (&job.pidfd, job.child) {
                (Some(fd), _) => plan.watch(fd.clone()),
                (None, true) => plan.poll_within(monitor::CHILD_POLL),
                (None, false) => plan.poll_within(monitor::ADOPTED_POLL),
            }
            if let (Some(at), false) = (job.rec.deadline_ms(), job.rec.kill_requested) {
                plan.wake_at_ms(at);
            }
        }
    }

    /// For the monitor: keeps the logs of running jobs under their bound.
    /// A trim starts at [`log::cut_from`] (a quarter of the bound) and cuts
    /// the log to about an eighth of it. A cut must first write back what it
    /// keeps (10-40 ms): a job that floods is held (SIGSTOP, see [`hold`])
    /// for the cut and keeps only its newest [`FLOOD_KEEP`] bytes, so the
    /// hold is short. One that outran the cuts was stopped by its brake;
    /// it goes on once its log is cut.
    pub(super) fn trim_logs(&self) {
        let mut g = self.locked();
        let mut changed = false;
        for job in g
            .jobs
            .iter_mut()
            .filter(|j| j.log_open || j.rec.is_running())
        {
            // An ended job's log gets this one last look, then no more.
            job.log_open = job.rec.is_running();
            let path = PathBuf::from(&job.rec.log_path);
            let path = path.as_path();
            let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            let grown = size.saturating_sub(job.log_seen);
            job.flooding = grown > FLOOD_BYTES_PER_CHECK;
            job.window_bytes += grown;
            let window = job.log_checked.elapsed();
            if window >= RATE_WINDOW {
                if job.window_bytes as f64 / window.as_secs_f64() > FLOOD_RATE as f64 {
                    job.flood_since.get_or_insert(job.log_checked);
                } else {
                    job.flood_since = None;
                }
                job.log_checked = Instant::now();
                job.window_bytes = 0;
            }
            job.log_seen = size;
            let max = job.rec.max_log_bytes;
            // Never before a quarter of the bound, however fast it grows:
            // what keeps a flood under the bound is the brake.
            let trigger = log::cut_from(max);
            if size <= trigger {
                continue;
            }
            let flooding = job.flooding;
            let slack = log::cut_slack(max, flooding.then_some(FLOOD_KEEP));
            if flooding && hold(job, libc::SIGSTOP) {
                job.held = true;
            }
            let r = &mut job.rec;
            let res = log::trim(
                path,
                r.log_start,
                trigger,
                slack,
                r.log_dropped,
                r.log_marker,
                max,
            );
            let Ok(Some(t)) = res else {
                continue;
            };
            r.log_dropped += t.dropped;
            r.log_trim_at = Some(t.at);
            r.log_shift += t.shift;
            r.log_marker = log::marker_line(0, max).len() as u64;
            r.read_offset = moved_offset(r.read_offset, t);
            job.cuts.set(r.log_trim_at, r.log_shift);
            job.log_seen = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            changed = true;
        }
        if changed {
            self.save(&mut g);
        }
        // Resumed only now: the sidecar write can stall behind the flood's
        // own writeback (ext4 orders data before a commit), and a job left
        // running meanwhile would write tens of MiB past the cut.
        for job in g.jobs.iter_mut().filter(|j| j.held) {
            job.held = false;
            hold(job, libc::SIGCONT);
        }
        g.jobs
            .iter()
            .filter_map(|j| j.brake.as_ref())
            .for_each(|b| b.release());
    }

    /// For the monitor: notice endings, fire timeouts.
    pub(super) fn tick(self: &Arc<Self>) {
        self.trim_logs();
        self.sync();
        let now = super::now_ms();
        let due: Vec<String> = {
            let mut g = self.locked();
            let mut due = Vec::new();
            for job in g.jobs.iter_mut().filter(|j| j.rec.is_running()) {
                if let (Some(at), false) = (job.rec.deadline_ms(), job.rec.kill_requested) {
                    if now >= at {
                        job.rec.kill_requested = true;
                        job.rec.timed_out = true;
                        due.push(job.rec.id.clone());
                    }
                }
            }
            if !due.is_empty() {
                self.save(&mut g);
            }
            due
        };
        for id in due {
            let reg = self.clone();
            let _ = std::thread::Builder::new()
                .name("pi-utils-timeout".into())
                .spawn(move || {
                    let _ = kill::kill(&reg, &id, TIMEOUT_GRACE, true);
                });
        }
    }

    #[cfg(test)]
    pub(crate) fn tamper_start_ticks(&self, id: &str, ticks: u64) {
        let mut g = self.locked();
        find_mut(&mut g.jobs, id).unwrap().rec.start_ticks = Some(ticks);
    }
}

/// A job from a record another process wrote (an earlier Pi, or one that
/// shares the sidecar): reconciled, then watched by identity. One whose main
/// process had already ended is settled by its tracked processes, not by
/// the leader's (reusable) pid.
fn adopt(mut rec: JobRecord) -> Job {
    let pidfd = if rec.leader_ended() {
        None
    } else {
        reconcile::reconcile(&mut rec).map(Arc::new)
    };
    kill::settle_adopted(&mut rec);
    let cuts = Arc::new(log::Cuts::new(rec.log_trim_at, rec.log_shift));
    let mut job = Job {
        rec,
        ours: false,
        child: false,
        pidfd,
        member_fds: Vec::new(),
        sent_signal: None,
        log_seen: 0,
        flooding: false,
        log_open: false,
        log_checked: Instant::now(),
        window_bytes: 0,
        flood_since: None,
        held: false,
        line: None,
        brake: None,
        cuts,
    };
    if job.rec.is_running() && job.rec.leader_ended() {
        refresh_members(&mut job, true);
    }
    release_cgroup(&mut job.rec);
    job
}

fn default_shell() -> String {
    if Path::new("/bin/bash").is_file() {
        "/bin/bash".into()
    } else {
        "sh".into()
    }
}

fn next_id(jobs: &[Job]) -> String {
    let max = jobs
        .iter()
        .filter_map(|j| j.rec.id.strip_prefix("bg-")?.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    format!("bg-{}", max + 1)
}

fn find<'a>(jobs: &'a [Job], id: &str) -> Result<&'a Job, ShellError> {
    jobs.iter()
        .find(|j| j.rec.id == id)
        .ok_or_else(|| ShellError::UnknownJob(id.to_string()))
}

fn find_mut<'a>(jobs: &'a mut [Job], id: &str) -> Result<&'a mut Job, ShellError> {
    jobs.iter_mut()
        .find(|j| j.rec.id == id)
        .ok_or_else(|| ShellError::UnknownJob(id.to_string()))
}

fn view(job: &Job) -> JobView {
    let end = job.rec.ended_at_ms.unwrap_or_else(super::now_ms);
    JobView {
        log_bytes: std::fs::metadata(&job.rec.log_path)
            .map(|m| m.len())
            .unwrap_or(0),
        adopted: !job.ours,
        runtime_ms: end.saturating_sub(job.rec.started_at_ms),
        flooding: job.rec.is_running()
            && job.flood_since.is_some_and(|t| t.elapsed() >= FLOOD_REPORT),
        record: job.rec.clone(),
    }
}

/// Where a byte offset into a log is after `t`: past the cut it moved back,
/// inside the cut it now points at the marker.
pub fn moved_offset(offset: u64, t: log::Trim) -> u64 {
    if offset <= t.at {
        offset
    } else if offset >= t.at + t.shift {
        offset - t.shift
    } else {
        t.at
    }
}

/// Brings one job's state up to date; true if it just left `running`.
fn refresh(job: &mut Job) -> bool {
    let ended = refresh_state(job);
    release_cgroup(&mut job.rec);
    ended
}

/// Removes an ended job's cgroup. The kernel refuses while anything is in
/// it (a `lost` job's processes), so every later look tries again.
fn release_cgroup(rec: &mut JobRecord) {
    let Some(dir) = rec.cgroup.as_deref().filter(|_| !rec.is_running()) else {
        return;
    };
    if JobCgroup::open(Path::new(dir)).is_none_or(|cg| cg.remove()) {
        rec.cgroup = None;
    }
}

fn refresh_state(job: &mut Job) -> bool {
    if job.rec.is_running() && job.rec.leader_ended() {
        return refresh_members(job, false);
    }
    let mut unreaped = false;
    if job.child {
        // While the exited leader is an unreaped zombie its pid, group and
        // session cannot be reused, so whatever is still in them is the
        // job's: look before reaping.
        // Reaped only once seen exited and looked at: a leader that exited
        // between the look and the reap was reaped with nothing pinned, and
        // a double fork's processes (still in its group) were missed.
        let leader = leader_wait_state(job.rec.pid);
        let pinned = (leader == LeaderWait::ExitedUnreaped)
            .then(|| kill::processes_of(&kill::target_of(&job.rec), true));
        let (r, status) = match (&job.brake, leader) {
            (_, LeaderWait::Running) => (0, 0),
            (Some(b), _) => b.reap(job.rec.pid),
            (None, _) => {
                let mut status = 0;
                let r = unsafe { libc::waitpid(job.rec.pid, &mut status, libc::WNOHANG) };
                (r, status)
            }
        };
        if r == job.rec.pid {
            job.child = false;
            job.brake = None;
            if job.rec.is_running() {
                return leader_end(job, Some(status), pinned);
            }
            return false;
        } else if r == 0 {
            unreaped = true;
        } else if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            return false;
        } else {
            // ECHILD: someone reaped it behind our back; fall back to identity.
            job.child = false;
            job.brake = None;
        }
    }
    if !job.rec.is_running() {
        return false;
    }
    match reconcile::verify(&job.rec) {
        Verdict::Alive(_) => false,
        // It exited a moment ago; the next waitpid collects its status.
        Verdict::Ended | Verdict::Unverifiable if unreaped => false,
        Verdict::Ended => leader_end(job, None, None),
        other => {
            reconcile::settle(&mut job.rec, other);
            job.pidfd = None;
            true
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LeaderWait {
    Running,
    ExitedUnreaped,
    /// Not our child any more (reaped elsewhere), or waitid failed.
    Unknown,
}

/// Where our child `pid` stands, without reaping it (`WNOWAIT`).
fn leader_wait_state(pid: i32) -> LeaderWait {
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
    let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) };
    match (r, siginfo_pid(&info)) {
        (0, 0) => LeaderWait::Running,
        (0, p) if p == pid => LeaderWait::ExitedUnreaped,
        _ => LeaderWait::Unknown,
    }
}

#[cfg(target_os = "linux")]
fn siginfo_pid(info: &libc::siginfo_t) -> i32 {
    unsafe { info.si_pid() }
}

#[cfg(not(target_os = "linux"))]
fn siginfo_pid(info: &libc::siginfo_t) -> i32 {
    info.si_pid
}

fn sent_signal(job: &Job) -> Option<i32> {
    job.sent_signal
        .or(job.rec.kill_requested.then_some(libc::SIGTERM))
}

/// The main process ended. `pinned`: what its group, session and marker
/// held while it was still an unreaped zombie; otherwise only the marker
/// can find the job's processes. True if nothing is left (the job ended).
fn leader_end(job: &mut Job, wait_status: Option<i32>, pinned: Option<Vec<ProcInfo>>) -> bool {
    let evidence = EndEvidence {
        wait_status,
        sent_signal: sent_signal(job),
    };
    let alone = job::leader_finish(&mut job.rec, evidence);
    job.pidfd = None;
    let found = match pinned {
        Some(found) => found,
        None => kill::processes_of(&kill::target_of(&job.rec), false),
    };
    let found: Vec<ProcInfo> = found.into_iter().filter(kill::alive).collect();
    if found.is_empty() {
        job.rec = alone;
        return true;
    }
    track(job, found);
    false
}

/// Remembers `found` as the job's processes (with a pidfd each, opened and
/// then re-checked, so it names the process that was checked).
fn track(job: &mut Job, found: Vec<ProcInfo>) {
    job.member_fds.clear();
    job.rec.members = found
        .iter()
        .map(|p| Member {
            pid: p.pid,
            start: p.start,
            command: identity::command_line(p.pid).unwrap_or_default(),
        })
        .collect();
    for p in &found {
        if let Some(fd) = PidFd::open(p.pid) {
            if kill::alive(p) {
                job.member_fds.push(Arc::new(fd));
            }
        }
    }
}

/// A job whose main process ended: drops tracked processes that are gone
/// (by identity: a reused pid is not ours); when none is left, one more
/// scan for the marker finds what they started, else the job ends. `loaded`:
/// the record comes from a sidecar, so its processes need a fresh pidfd.
fn refresh_members(job: &mut Job, loaded: bool) -> bool {
    let same_boot = match (&job.rec.boot_id, identity::boot_id()) {
        (Some(recorded), Some(now)) => recorded == now,
        _ => true,
    };
    job.rec
        .members
        .retain(|m| same_boot && member_info(m).is_some());
    job.member_fds.retain(|fd| !fd.exited());
    // A process found the moment it was forked still shows its parent's
    // command line until it execs: read them again for a little while.
    if super::now_ms().saturating_sub(job.rec.leader_ended_at_ms.unwrap_or(0)) < RECHECK_COMMANDS_MS
    {
        for m in job.rec.members.iter_mut() {
            if let Some(c) = identity::command_line(m.pid) {
                m.command = c;
            }
        }
    }
    if !job.rec.members.is_empty() {
        if loaded {
            let found = job.rec.members.iter().filter_map(member_info).collect();
            track(job, found);
        }
        return false;
    }
    if same_boot {
        let found = kill::processes_of(&kill::target_of(&job.rec), false);
        if !found.is_empty() {
            track(job, found);
            return false;
        }
    }
    let sent = sent_signal(job);
    job::finish_after_members(&mut job.rec, sent);
    job.member_fds.clear();
    true
}

/// Stops (`SIGSTOP`) or resumes (`SIGCONT`) what writes a flooding job's
/// log, for the length of one cut. Only what cannot be a stranger: the
/// group of our own unreaped child (its pid, and so its group id, cannot be
/// reused while it is unreaped), and tracked processes through their pidfd
/// after an identity check. True if anything was signalled.
fn hold(job: &Job, sig: i32) -> bool {
    let mut any = false;
    if job.child && !job.rec.leader_ended() {
        any |= kill::signal_group(job.rec.pgid, sig);
    }
    for p in job.rec.members.iter().filter_map(member_info) {
        any |= kill::signal_process(&p, sig);
    }
    any
}

/// The live process a tracked member names, if it is still that one.
pub(super) fn member_info(m: &Member) -> Option<ProcInfo> {
    identity::proc_info(m.pid).filter(|p| p.start == m.start && !p.zombie)
}

/// Rejects, before anything is created, a request that cannot start: an
/// empty command, a cwd that is not a directory, a missing shell, a
/// relative log path. Returns the shell to run.
fn checked_shell(req: &SpawnRequest) -> Result<String, ShellError> {
    if req.command.trim().is_empty() {
        return Err(ShellError::EmptyCommand);
    }
    match std::fs::metadata(&req.cwd) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(ShellError::CwdNotDirectory(req.cwd.display().to_string())),
        Err(_) => return Err(ShellError::CwdNotFound(req.cwd.display().to_string())),
    }
    let shell = req.shell.clone().unwrap_or_else(default_shell);
    let found = match shell.contains('/') {
        true => Path::new(&shell).is_file(),
        false => spawn::on_path(&shell, req.env.as_deref()),
    };
    if shell.is_empty() || !found {
        return Err(ShellError::ShellNotFound(shell));
    }
    if !req.log_path.is_absolute() {
        return Err(ShellError::LogFile {
            path: req.log_path.display().to_string(),
            error: "the log path must be absolute".into(),
        });
    }
    Ok(shell)
}

/// The id a new job gets: the one asked for if it is free, else the next `bg-N`.
fn free_id(jobs: &[Job], asked: Option<String>) -> Result<String, ShellError> {
    match asked {
        Some(id) if jobs.iter().any(|j| j.rec.id == id) => Err(ShellError::DuplicateId(id)),
        Some(id) if id.is_empty() => {
            Err(ShellError::InvalidOption("Invalid id: it is empty".into()))
        }
        Some(id) if id.contains('\0') => Err(ShellError::InvalidOption(
            "Invalid id: it contains a NUL byte".into(),
        )),
        Some(id) => Ok(id),
        None => Ok(next_id(jobs)),
    }
}

/// A cgroup for the job, named by its marker; `None` where the host allows
/// none (the job is then tracked by its process tree).
fn held_cgroup(marker: &str) -> Option<JobCgroup> {
    super::cgroup::sweep_orphans();
    JobCgroup::create(marker).ok()
}

/// What a just-started job's record is made of.
struct NewJob<'a> {
    id: String,
    req: SpawnRequest,
    shell: String,
    exit_path: PathBuf,
    pid: i32,
    marker: String,
    started_at_ms: u64,
    log_start: u64,
    cgroup: Option<&'a JobCgroup>,
}

/// The record of a job that has just started: running, nothing read yet.
fn new_record(n: NewJob) -> JobRecord {
    // Our unreaped child: this reads its start time, not a successor's.
    let start_ticks = identity::proc_info(n.pid).map(|i| i.start);
    JobRecord {
        id: n.id,
        command: n.req.command,
        cwd: n.req.cwd.display().to_string(),
        shell: n.shell,
        log_path: n.req.log_path.display().to_string(),
        exit_path: n.exit_path.display().to_string(),
        pid: n.pid,
        pgid: n.pid,
        start_ticks,
        boot_id: identity::boot_id().map(str::to_string),
        marker: n.marker,
        host_pid: std::process::id(),
        started_at_ms: n.started_at_ms,
        ended_at_ms: None,
        state: JobState::Running,
        exit_code: None,
        signal: None,
        note: None,
        delivered: false,
        read_offset: n.log_start,
        log_start: n.log_start,
        kill_requested: false,
        timed_out: false,
        timeout_ms: n.req.timeout.map(|t| t.as_millis() as u64),
        meta: n.req.meta,
        tracking: match n.cgroup {
            Some(_) => job::TRACKING_CGROUP,
            None => job::TRACKING_PROCESS_TREE,
        }
        .to_string(),
        cgroup: n.cgroup.map(|c| c.dir().display().to_string()),
        leader_ended_at_ms: None,
        leader_exit_code: None,
        leader_signal: None,
        members: Vec::new(),
        max_log_bytes: n
            .req
            .max_log_bytes
            .unwrap_or(log::DEFAULT_MAX_LOG_BYTES)
            .max(MIN_LOG_BYTES),
        log_dropped: 0,
        log_trim_at: None,
        log_shift: 0,
        log_marker: 0,
    }
}
