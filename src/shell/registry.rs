//! One Pi session's jobs: the map of them, its lock, and the sidecar that
//! persists it; the calls JS makes (spawn, query, wait, kill, read).
//!
//! Registries opened through [`open_shared`] live in a process-wide static,
//! so Pi's `/reload` (which re-runs the JS but keeps the native module
//! loaded) finds the same jobs, still reaped and still watched. All state
//! changes go through one mutex per registry; the sidecar is rewritten under
//! it after every change so the file never lags behind what JS was told.
//!
//! The work on one job happens elsewhere, called under the lock: starting
//! it in `start.rs`, bringing it up to date in `liveness.rs`, keeping its
//! log under the bound in `log_bound.rs`, killing it in `kill.rs` (which
//! reaches a job only through [`Registry::with_job`], by the `kill::Jobs`
//! trait), scheduling the looks in `monitor.rs`; the job ids a model has
//! seen are retired here, in the sidecar. Reaping and signalling take the same lock; the refresh
//! before and the save and announcements after stay here, in one file.

use super::job::{JobView, TRACKING_PROCESS_TREE};
use super::kill::{self, KillReport};
use super::liveness::{self, adopt, LiveJob};
use super::log::{self, Keep, LogChunk};
use super::monitor::{self, Watched};
use super::{sidecar, start, ShellError};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub use super::start::SpawnRequest;

/// Called (from any thread) whenever a job leaves `running`.
pub type Listener = Arc<dyn Fn(&JobView) + Send + Sync>;

const WAIT_SLICE: Duration = Duration::from_millis(50);

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

struct Inner {
    jobs: Vec<LiveJob>,
    /// Ids this registry removed: not taken back from another process's write.
    forgotten: std::collections::HashSet<String>,
    save_error: Option<String>,
    /// Ids `bg-1` to `bg-<retired>` are never handed out again.
    retired: u64,
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
                retired: loaded.retired,
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
        let watched: std::sync::Weak<dyn Watched> = Arc::downgrade(&reg) as _;
        monitor::register(watched);
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
        let prepared = start::prepare(req)?;
        let mut g = self.locked();
        // Another process sharing the sidecar may have started jobs: take
        // them in before choosing an id, and hold the file until written.
        let file_lock = sidecar::lock(&self.sidecar).map_err(|error| ShellError::Sidecar {
            path: self.sidecar.display().to_string(),
            error,
        })?;
        self.take_in(&mut g);
        let (rec, launched) = start::launch(prepared, &g.jobs, g.retired)?;
        g.jobs.push(LiveJob::started(rec, monitor::tick_now));
        self.write(&mut g);
        drop(file_lock);
        if let Some(error) = g.save_error.clone() {
            g.jobs.pop();
            launched.abandon();
            return Err(ShellError::Sidecar {
                path: self.sidecar.display().to_string(),
                error,
            });
        }
        super::failpoint("spawn.saved");
        let v = g.jobs.last().expect("just pushed").view();
        drop(g);
        let (weak, id) = (Arc::downgrade(self), v.record.id.clone());
        launched.go(move || {
            if let Some(reg) = weak.upgrade() {
                let _ = reg.with_job(&id, |job| {
                    job.rec.tracking = TRACKING_PROCESS_TREE.to_string();
                    job.rec.cgroup = None;
                });
            }
        });
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
        f: impl FnOnce(&mut LiveJob) -> R,
    ) -> Result<R, ShellError> {
        let mut g = self.locked();
        let job = find_mut(&mut g.jobs, id)?;
        let mut ended = liveness::refresh(job);
        let before = job.rec.clone();
        let out = f(job);
        ended |= before.is_running() && !job.rec.is_running();
        let changed = job.rec != before;
        if ended {
            let v = job.view();
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
        g.jobs.iter().find(|j| j.rec.id == id).map(LiveJob::view)
    }

    pub fn list(&self) -> Vec<JobView> {
        self.sync();
        self.locked().jobs.iter().map(LiveJob::view).collect()
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
                return Ok((job.view(), WaitEnd::Ended));
            }
            if cancelled() {
                return Ok((job.view(), WaitEnd::Cancelled));
            }
            let slice = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok((job.view(), WaitEnd::TimedOut));
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
        let chunk = job.log.read_new(&mut job.rec, max_bytes, keep);
        if chunk.end != job.rec.read_offset && chunk.size > 0 {
            job.rec.read_offset = chunk.end;
            self.save(&mut g);
        }
        Ok(chunk)
    }

    /// Where job `id`'s log was cut, kept current without the lock.
    pub fn log_cuts(&self, id: &str) -> Result<Arc<log::Cuts>, ShellError> {
        Ok(find(&self.locked().jobs, id)?.log.cuts.clone())
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
        let v = job.view();
        self.save(&mut g);
        Ok(v)
    }

    /// The id the next job started without one gets: `bg-<n>`, one past
    /// the highest of this registry's jobs and of the retired ids.
    pub fn next_id(&self) -> String {
        let g = self.locked();
        start::next_id(&g.jobs, g.retired)
    }

    /// Never hands out `id` (a `bg-<n>`) or a lower one again, even once
    /// the jobs holding them are removed: for an id a model or a user has
    /// seen, which may still name that job in their context. Persisted.
    pub fn retire_id(&self, id: &str) {
        let Some(n) = start::id_number(id) else {
            return;
        };
        let mut g = self.locked();
        if n > g.retired {
            g.retired = n;
            self.save(&mut g);
        }
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
            let _ = std::fs::remove_file(super::pump::cuts_path_for(Path::new(&job.rec.log_path)));
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
        let current = sidecar::current(&self.sidecar);
        g.retired = g.retired.max(current.retired);
        for rec in current.records {
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
        let result = sidecar::save_document(&self.sidecar, &lines, g.retired);
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
            if liveness::refresh(&mut g.jobs[i]) {
                let v = g.jobs[i].view();
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

    /// Keeps the logs of running jobs under their bound (see `log_bound.rs`).
    pub(super) fn trim_logs(&self) {
        let mut g = self.locked();
        let mut changed = false;
        for job in g
            .jobs
            .iter_mut()
            .filter(|j| j.log.open || j.rec.is_running())
        {
            if job.log.pumped() {
                changed |= job.log.absorb(&mut job.rec);
                job.log.due(&job.rec);
                continue;
            }
            let Some(due) = job.log.due(&job.rec) else {
                continue;
            };
            if due.hold && job.hold(libc::SIGSTOP) {
                job.log.held = true;
            }
            changed |= job.log.cut(&mut job.rec, due);
        }
        if changed {
            self.save(&mut g);
        }
        // Resumed only now: the sidecar write can stall behind the flood's
        // own writeback (ext4 orders data before a commit), and a job left
        // running meanwhile would write tens of MiB past the cut.
        for job in g.jobs.iter_mut().filter(|j| j.log.held) {
            job.log.held = false;
            job.hold(libc::SIGCONT);
        }
        g.jobs
            .iter()
            .filter_map(|j| j.brake.as_ref())
            .for_each(|b| b.release());
    }

    /// For the monitor: keep logs bounded, notice endings, fire timeouts.
    fn tick_once(self: &Arc<Self>) {
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
                    let _ = kill::kill(&*reg, &id, super::defaults::KILL_GRACE, true);
                });
        }
    }

    #[cfg(test)]
    pub(crate) fn tamper_start_ticks(&self, id: &str, ticks: u64) {
        let mut g = self.locked();
        find_mut(&mut g.jobs, id).unwrap().rec.start_ticks = Some(ticks);
    }
}

impl kill::Jobs for Registry {
    fn with_job<R>(&self, id: &str, f: impl FnOnce(&mut LiveJob) -> R) -> Result<R, ShellError> {
        Registry::with_job(self, id, f)
    }

    fn is_running(&self, id: &str) -> bool {
        Registry::is_running(self, id)
    }

    fn get(&self, id: &str) -> Option<JobView> {
        Registry::get(self, id)
    }
}

impl Watched for Registry {
    fn plan(&self, plan: &mut monitor::Plan) {
        let g = self.locked();
        g.jobs.iter().for_each(|job| monitor::plan_job(job, plan));
    }

    fn tick(self: Arc<Self>) {
        self.tick_once();
    }
}

fn find<'a>(jobs: &'a [LiveJob], id: &str) -> Result<&'a LiveJob, ShellError> {
    jobs.iter()
        .find(|j| j.rec.id == id)
        .ok_or_else(|| ShellError::UnknownJob(id.to_string()))
}

fn find_mut<'a>(jobs: &'a mut [LiveJob], id: &str) -> Result<&'a mut LiveJob, ShellError> {
    jobs.iter_mut()
        .find(|j| j.rec.id == id)
        .ok_or_else(|| ShellError::UnknownJob(id.to_string()))
}
