//! Starting a job, from a request to a record: the checks made before
//! anything is created, the job's log and exit file, its id, marker,
//! environment and cgroup, and the record of the process `spawn.rs`
//! started. The registry calls [`prepare`] before taking its lock and
//! [`launch`] under it; once the record is saved it lets the job go
//! ([`Launched::go`]) or, if the record could not be saved, abandons it.

use super::cgroup::JobCgroup;
use super::identity;
use super::job::{self, JobRecord, JobState};
use super::liveness::LiveJob;
use super::log;
use super::pipe;
use super::spawn;
use super::ShellError;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A smaller bound would leave no room for a tail after the kept head.
pub const MIN_LOG_BYTES: u64 = 2 * log::HEAD_BYTES;

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
    /// Write the log through the log pump where its binary is found (the
    /// log then never passes its bound); false: the job writes its log
    /// itself and the registry cuts it, as without the binary.
    pub pump: bool,
}

/// A request that passed its checks, with its log open and its exit file
/// cleared: what can be done before the registry's lock is taken.
pub(super) struct Prepared {
    req: SpawnRequest,
    shell: String,
    log_file: std::fs::File,
    exit_path: PathBuf,
    log_start: u64,
    /// The pump's binary, when the job gets one.
    pump: Option<&'static Path>,
}

pub(super) fn prepare(req: SpawnRequest) -> Result<Prepared, ShellError> {
    let shell = checked_shell(&req)?;
    let log_file = spawn::open_log(&req.log_path)?;
    let exit_path = spawn::exit_path_for(&req.log_path);
    spawn::clear_exit_file(&exit_path)?;
    let pump = req.pump.then(pipe::pump_binary).flatten();
    if pump.is_some() {
        // An earlier job's cuts on this log are not this one's.
        let cuts = super::pump::cuts_path_for(&req.log_path);
        match std::fs::remove_file(&cuts) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(ShellError::LogFile {
                    path: cuts.display().to_string(),
                    error: e.to_string(),
                })
            }
            _ => {}
        }
    }
    let log_start = log_file.metadata().map(|m| m.len()).unwrap_or(0);
    Ok(Prepared {
        req,
        shell,
        log_file,
        exit_path,
        log_start,
        pump,
    })
}

/// A started wrapper waiting for its go-ahead.
pub(super) struct Launched {
    pid: i32,
    exit_path: PathBuf,
    go: spawn::GoPipe,
    cgroup: Option<JobCgroup>,
}

/// Starts the job of `p` among `jobs` (the registry's, under its lock, with
/// the sidecar's lock held and other processes' jobs taken in): refuses a
/// log a running job writes and a taken id, marks the log, makes the
/// cgroup, and spawns the wrapper, which runs nothing until [`Launched::go`].
/// Returns the job's record, not yet saved.
/// `retired`: ids up to `bg-<retired>` are not handed out again.
pub(super) fn launch(
    p: Prepared,
    jobs: &[LiveJob],
    retired: u64,
) -> Result<(JobRecord, Launched), ShellError> {
    let running = jobs.iter().filter(|j| j.rec.is_running());
    spawn::log_not_shared(&p.log_file, running.map(|j| (&j.rec.id, &j.rec.log_path)))?;
    let id = free_id(jobs, p.req.id.clone(), retired)?;
    let token = spawn::new_marker(&id);
    if p.pump.is_none() {
        spawn::mark_log(&p.log_file, &token);
    }
    let env = spawn::build_env(p.req.env.as_deref(), &token);
    let started_at_ms = super::now_ms();
    let cgroup = (!p.req.process_tree_only)
        .then(|| held_cgroup(&token))
        .flatten();
    let go = spawn::GoPipe::new()?;
    let pump_fds = p.pump.map(|_| pipe::PumpFds::new()).transpose()?;
    let cuts = super::pump::cuts_path_for(&p.req.log_path);
    let max = effective_max(&p.req);
    let spawned = spawn::spawn(&spawn::Spec {
        shell: &p.shell,
        command: &p.req.command,
        cwd: &p.req.cwd,
        exit_path: &p.exit_path,
        env: &env,
        log: spawn::log_fd(&p.log_file),
        go: go.read.as_raw_fd(),
        held: cgroup.is_some(),
        pump: p
            .pump
            .zip(pump_fds.as_ref())
            .map(|(binary, fds)| pipe::PumpSpec {
                binary,
                log: &p.req.log_path,
                cuts: &cuts,
                max,
                origin: p.log_start,
                fds,
            }),
    });
    let pipe = pump_fds.as_ref().and_then(pipe::PumpFds::inode);
    drop(pump_fds);
    drop(p.log_file);
    let pid = spawned.inspect_err(|_| {
        if let Some(cg) = &cgroup {
            cg.remove();
        }
    })?;
    super::failpoint("spawn.spawned");
    let exit_path = p.exit_path.clone();
    let rec = new_record(NewJob {
        id,
        req: p.req,
        shell: p.shell,
        exit_path: p.exit_path,
        pid,
        marker: token,
        started_at_ms,
        log_start: p.log_start,
        cgroup: cgroup.as_ref(),
        pipe,
    });
    Ok((
        rec,
        Launched {
            pid,
            exit_path,
            go,
            cgroup,
        },
    ))
}

impl Launched {
    /// The record is saved: the wrapper runs the command (see
    /// [`spawn::go_ahead`]). `unplaced` runs if the job could not be moved
    /// into its cgroup, which is then gone: the job is tracked by its
    /// process tree.
    pub(super) fn go(self, unplaced: impl Fn() + Send + Sync + 'static) {
        spawn::go_ahead(self.pid, self.cgroup, self.go, unplaced);
    }

    /// The record could not be saved: unrecorded, the job must not run
    /// (the wrapper reads end of file).
    pub(super) fn abandon(self) {
        spawn::abandon(self.pid, self.go, self.cgroup, &self.exit_path);
    }
}

/// The bound a request gets: its own, at least [`MIN_LOG_BYTES`], or the default.
fn effective_max(req: &SpawnRequest) -> u64 {
    req.max_log_bytes
        .unwrap_or(log::DEFAULT_MAX_LOG_BYTES)
        .max(MIN_LOG_BYTES)
}

fn default_shell() -> String {
    if Path::new("/bin/bash").is_file() {
        "/bin/bash".into()
    } else {
        "sh".into()
    }
}

/// `bg-<n>`: one past the highest id number of `jobs` and `retired`. The
/// one rule for ids users see; the JS fallback registry (which runs
/// without the core) follows it too.
pub(super) fn next_id(jobs: &[LiveJob], retired: u64) -> String {
    let max = jobs
        .iter()
        .filter_map(|j| id_number(&j.rec.id))
        .max()
        .unwrap_or(0);
    format!("bg-{}", max.max(retired) + 1)
}

/// `bg-7` -> 7; any other id has no number.
pub(super) fn id_number(id: &str) -> Option<u64> {
    id.strip_prefix("bg-")?.parse().ok()
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
fn free_id(jobs: &[LiveJob], asked: Option<String>, retired: u64) -> Result<String, ShellError> {
    match asked {
        Some(id) if jobs.iter().any(|j| j.rec.id == id) => Err(ShellError::DuplicateId(id)),
        Some(id) if id.is_empty() => {
            Err(ShellError::InvalidOption("Invalid id: it is empty".into()))
        }
        Some(id) if id.contains('\0') => Err(ShellError::InvalidOption(
            "Invalid id: it contains a NUL byte".into(),
        )),
        Some(id) => Ok(id),
        None => Ok(next_id(jobs, retired)),
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
    /// The inode of the job's output pipe, when a pump writes its log.
    pipe: Option<u64>,
}

/// The record of a job that has just started: running, nothing read yet.
fn new_record(n: NewJob) -> JobRecord {
    let max_log_bytes = effective_max(&n.req);
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
        max_log_bytes,
        log_dropped: 0,
        log_trim_at: None,
        log_shift: 0,
        log_marker: 0,
        pump: n.pipe.is_some(),
        log_pipe: n.pipe,
    }
}
