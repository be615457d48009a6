//! Whole-module tests with real processes, one per fault a job can meet.
//! They share one lock: they count file descriptors and children of this
//! process, which parallel tests would disturb.

use super::identity;
use super::job::JobState;
use super::kill::KillOutcome;
use super::registry::{Registry, SpawnRequest, WaitEnd, WaitFor};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

mod bound;
mod faults;
mod pump;

static SERIAL: Mutex<()> = Mutex::new(());

struct Fixture {
    _serial: MutexGuard<'static, ()>,
    dir: tempfile::TempDir,
    reg: Arc<Registry>,
}

impl Fixture {
    fn new() -> Fixture {
        let serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let reg = Registry::open(&dir.path().join("session/jobs.json")).unwrap();
        Fixture {
            _serial: serial,
            dir,
            reg,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn req(&self, command: &str) -> SpawnRequest {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        SpawnRequest {
            command: command.into(),
            cwd: self.dir.path().to_path_buf(),
            shell: None,
            env: None,
            log_path: self.path(&format!("logs/job-{n}.log")),
            timeout: None,
            id: None,
            meta: None,
            max_log_bytes: None,
            process_tree_only: false,
            pump: true,
        }
    }

    fn wait(&self, id: &str) -> super::JobView {
        let (v, end) = self
            .reg
            .wait(id, Some(Duration::from_secs(10)), &|| false)
            .unwrap();
        assert_eq!(end, WaitEnd::Ended, "{id} did not end");
        v
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        for j in self.reg.list() {
            if j.record.is_running() {
                let _ = self.reg.kill(&j.record.id, Duration::from_millis(200));
            }
        }
    }
}

fn alive(pid: i32) -> bool {
    matches!(identity::proc_info(pid), Some(p) if !p.zombie)
}

fn until(what: &str, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The pid a job's command writes to `file`, once the whole line is there.
fn pid_written_to(file: &Path) -> i32 {
    until("the pid file", || {
        std::fs::read_to_string(file).is_ok_and(|t| t.ends_with('\n'))
    });
    std::fs::read_to_string(file)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn output_exit_code_cwd_and_env_are_those_of_the_job() {
    let f = Fixture::new();
    let mut req = f.req("pwd; echo \"$GREETING\"; echo oops >&2; exit 3");
    req.env = Some(vec![
        ("GREETING".into(), "hello".into()),
        ("PATH".into(), "/usr/bin:/bin".into()),
    ]);
    let id = f.reg.spawn(req).unwrap().record.id;
    let v = f.wait(&id);
    assert_eq!(
        (v.record.state, v.record.exit_code),
        (JobState::Exited, Some(3))
    );
    let tail = f.reg.tail(&id, Some(10), 4096).unwrap();
    let cwd = f.dir.path().canonicalize().unwrap();
    assert_eq!(tail.text, format!("{}\nhello\noops\n", cwd.display()));
    assert_eq!(v.log_bytes, tail.size);
    assert!(v.record.ended_at_ms.unwrap() >= v.record.started_at_ms);
}

#[test]
fn a_signal_death_is_reported_as_the_signal() {
    let f = Fixture::new();
    let id = f.reg.spawn(f.req("kill -USR1 $$")).unwrap().record.id;
    let v = f.wait(&id);
    assert_eq!(v.record.state, JobState::Signalled);
    assert_eq!(v.record.signal, Some(libc::SIGUSR1));
    assert_eq!(v.record.exit_code, Some(128 + libc::SIGUSR1));
}

#[test]
fn nonexistent_cwd_is_a_clear_error_and_no_job() {
    let f = Fixture::new();
    let mut req = f.req("true");
    req.cwd = f.path("no/such/dir");
    let err = f.reg.spawn(req).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "Working directory not found: {}",
            f.path("no/such/dir").display()
        )
    );
    assert!(f.reg.list().is_empty());
}

#[test]
fn unwritable_log_dir_is_a_clear_error_and_no_job() {
    let f = Fixture::new();
    std::fs::write(f.path("plain-file"), "x").unwrap();
    let mut req = f.req("true");
    req.log_path = f.path("plain-file/logs/job.log");
    let err = f.reg.spawn(req).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "Cannot create log directory {}",
            f.path("plain-file/logs").display()
        )),
        "{err}"
    );
    assert!(f.reg.list().is_empty());
}

/// The ways a command leaves something running after its shell returns.
/// Each writes the pid of what it left into the file `$P`.
const ESCAPES: &[(&str, &str)] = &[
    ("cmd &", "sleep 300 & echo $! >\"$P\""),
    (
        "nohup cmd &",
        "nohup sleep 300 >/dev/null 2>&1 & echo $! >\"$P\"",
    ),
    (
        "setsid cmd &",
        "setsid sleep 300 >/dev/null 2>&1 & echo $! >\"$P\"",
    ),
    ("double fork", "( ( exec sleep 300 ) & echo $! >\"$P\" ) &"),
    (
        "setsid and double fork",
        "( setsid sleep 300 >/dev/null 2>&1 & echo $! >\"$P\" ) &",
    ),
    // No marker and no group, session or parent of ours once the main
    // process is gone: found by the log description it inherited from the
    // job (its mark), not by writing to the log.
    (
        "env -i setsid cmd &",
        "env -i setsid sleep 300 & echo $! >\"$P\"",
    ),
];

#[test]
fn a_job_stays_running_while_anything_it_started_lives_and_kill_reaches_it() {
    let f = Fixture::new();
    // Each escape with the process-tree scan alone as well: where the host
    // gives jobs a cgroup, that would otherwise find them all by itself.
    let cases = ESCAPES.iter().flat_map(|e| [(e, true), (e, false)]);
    for (i, ((how, cmd), scan_only)) in cases.enumerate() {
        let how = format!("{how} (process tree only: {scan_only})");
        let pid_file = f.path(&format!("escape-{i}.pid"));
        let mut req = f.req(&format!("P={}; {cmd}\nexit 0", pid_file.display()));
        req.id = Some(format!("esc-{i}"));
        req.process_tree_only = scan_only;
        let id = f.reg.spawn(req).unwrap().record.id;
        let (v, end) = f
            .reg
            .wait_for(&id, WaitFor::Leader, Some(Duration::from_secs(10)), &|| {
                false
            })
            .unwrap();
        assert_eq!(end, WaitEnd::Ended, "{how}: the main process ended");
        let left = pid_written_to(&pid_file);
        assert!(
            v.record.is_running(),
            "{how}: still running: {:?}",
            v.record
        );
        assert_eq!(v.record.leader_exit_code, Some(0), "{how}");
        // The main process may end before its child has forked what it
        // leaves (the double forks): the member is found by a later sync.
        until(&format!("{how}: {left} tracked"), || {
            let now = f.reg.get(&id).unwrap();
            now.record.members.iter().any(|m| m.pid == left)
        });
        assert!(alive(left), "{how}");
        let report = f.reg.kill(&id, Duration::from_secs(2)).unwrap();
        assert_eq!(report.outcome, KillOutcome::Killed, "{how}");
        assert!(report.survivors.is_empty(), "{how}: {:?}", report.survivors);
        until("what it left to die", || !alive(left));
        let v = f.reg.get(&id).unwrap();
        assert_eq!(
            (v.record.state, v.record.leader_exit_code),
            (JobState::Signalled, Some(0)),
            "{how}: the main process's code is kept"
        );
        assert!(v.record.members.is_empty(), "{how}");
    }
}

/// Clears its environment (no marker), leaves the session and is orphaned
/// before the main process ends: no scan of `/proc` can tell it is the
/// job's, its cgroup can.
#[test]
fn a_process_that_leaves_group_session_parent_and_environment_stays_in_the_jobs_cgroup() {
    if !super::cgroup::usable() {
        eprintln!("no writable cgroup v2 here: the job would be tracked by the process tree");
        return;
    }
    let f = Fixture::new();
    let pid_file = f.path("escapee.pid");
    let cmd = format!(
        "( env -i setsid sh -c 'echo $$ >{p}; exec sleep 300' >/dev/null 2>&1 & )\nexit 0",
        p = pid_file.display()
    );
    let v = f.reg.spawn(f.req(&cmd)).unwrap();
    assert_eq!(v.record.tracking, "cgroup");
    let dir = PathBuf::from(v.record.cgroup.clone().expect("a cgroup directory"));
    let id = v.record.id;
    let (v, _) = f
        .reg
        .wait_for(&id, WaitFor::Leader, Some(Duration::from_secs(10)), &|| {
            false
        })
        .unwrap();
    let left = pid_written_to(&pid_file);
    assert!(v.record.is_running(), "still running: {:?}", v.record);
    let v = f.reg.get(&id).unwrap();
    assert!(
        v.record.members.iter().any(|m| m.pid == left),
        "{left} tracked in {:?}",
        v.record.members
    );
    let report = f.reg.kill(&id, Duration::from_secs(2)).unwrap();
    assert_eq!(report.outcome, KillOutcome::Killed);
    assert!(report.survivors.is_empty(), "{:?}", report.survivors);
    until("the escapee to die", || !alive(left));
    until("the job to end", || {
        !f.reg.get(&id).unwrap().record.is_running()
    });
    until("its cgroup to be removed", || {
        f.reg.get(&id);
        !dir.exists()
    });
    assert_eq!(f.reg.get(&id).unwrap().record.cgroup, None);
}

#[test]
fn process_tree_tracking_can_be_asked_for_and_a_cgroup_goes_with_its_job() {
    let f = Fixture::new();
    let mut req = f.req("exit 0");
    req.process_tree_only = true;
    let v = f.reg.spawn(req).unwrap();
    assert_eq!(
        (v.record.tracking.as_str(), v.record.cgroup.as_deref()),
        ("process-tree", None)
    );
    f.wait(&v.record.id);
    let v = f.reg.spawn(f.req("echo in-a-cgroup")).unwrap();
    let expected = if super::cgroup::usable() {
        "cgroup"
    } else {
        "process-tree"
    };
    assert_eq!(v.record.tracking, expected);
    let dir = v.record.cgroup.clone().map(PathBuf::from);
    let v = f.wait(&v.record.id);
    assert_eq!(v.record.exit_code, Some(0));
    assert_eq!(
        f.reg.tail(&v.record.id, Some(5), 4096).unwrap().text,
        "in-a-cgroup\n"
    );
    if let Some(dir) = dir {
        assert!(
            !dir.exists(),
            "{} removed once the job ended",
            dir.display()
        );
        assert_eq!(v.record.cgroup, None);
    }
}

#[test]
fn a_job_whose_child_outlives_its_main_process_ends_once_with_the_leaders_code() {
    let f = Fixture::new();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = heard.clone();
    f.reg.set_listener(Some(Arc::new(move |v: &super::JobView| {
        sink.lock().unwrap().push(v.record.clone());
    })));
    let gate = f.path("gate");
    let cmd = format!(
        "setsid sh -c 'while [ ! -e {g} ]; do sleep 0.02; done' >/dev/null 2>&1 & exit 3",
        g = gate.display()
    );
    let id = f.reg.spawn(f.req(&cmd)).unwrap().record.id;
    let (v, _) = f
        .reg
        .wait_for(&id, WaitFor::Leader, Some(Duration::from_secs(10)), &|| {
            false
        })
        .unwrap();
    assert!(v.record.is_running());
    assert_eq!(v.record.leader_exit_code, Some(3));
    // The child found the moment it was forked shows bash's command line
    // until it execs (slow on a loaded machine: CI saw it so); a later
    // read has its own.
    until("the child's own command line", || {
        f.reg
            .get(&id)
            .is_some_and(|v| (v.record.members.iter()).any(|m| m.command.contains("sh -c while")))
    });
    assert!(heard.lock().unwrap().is_empty(), "no ending yet");
    std::fs::write(&gate, "").unwrap();
    let v = f.wait(&id);
    assert_eq!(
        (
            v.record.state,
            v.record.exit_code,
            v.record.leader_exit_code
        ),
        (JobState::Exited, Some(3), Some(3))
    );
    let next = f.reg.spawn(f.req("true")).unwrap().record.id;
    until("the second ending", || heard.lock().unwrap().len() >= 2);
    let ids: Vec<String> = heard.lock().unwrap().iter().map(|r| r.id.clone()).collect();
    assert_eq!(ids, vec![id, next], "heard once, after the child ended");
}

#[test]
fn a_stranger_reading_the_log_is_not_part_of_the_job() {
    let f = Fixture::new();
    let gate = f.path("gate");
    let cmd = format!(
        "while [ ! -e {} ]; do sleep 0.02; done; exit 0",
        gate.display()
    );
    let job = f.reg.spawn(f.req(&cmd)).unwrap().record;
    // Started after the job, with the job's log open (for reading), but by us.
    let mut tail = std::process::Command::new("tail")
        .args(["-f", &job.log_path])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let tail_pid = tail.id() as i32;
    until("tail to open the log", || {
        std::fs::read_dir(format!("/proc/{tail_pid}/fd")).is_ok_and(|d| {
            d.flatten()
                .any(|e| std::fs::read_link(e.path()).is_ok_and(|l| l == Path::new(&job.log_path)))
        })
    });
    std::fs::write(&gate, "").unwrap();
    let v = f.wait(&job.id);
    assert_eq!(
        (v.record.state, v.record.exit_code),
        (JobState::Exited, Some(0))
    );
    assert!(v.record.members.is_empty(), "{:?}", v.record.members);
    assert!(alive(tail_pid));
    assert_eq!(pending_signals(tail_pid), 0);
    tail.kill().unwrap();
    tail.wait().unwrap();
}

#[test]
fn a_tracked_pid_now_held_by_a_stranger_is_never_signalled() {
    let f = Fixture::new();
    let id = f.reg.spawn(f.req("exit 0")).unwrap().record.id;
    let mut rec = f.wait(&id).record;
    let (mut stranger, spid) = blocking_stranger();
    // A record from an earlier process: the main process ended, and the one
    // it left has since gone, its pid taken by the stranger.
    rec.state = JobState::Running;
    rec.leader_ended_at_ms = rec.ended_at_ms.take();
    rec.leader_exit_code = Some(0);
    rec.members = vec![super::job::Member {
        pid: spid,
        start: identity::proc_info(spid).unwrap().start + 1,
        command: "sleep 300".into(),
    }];
    let other = f.path("reused/jobs.json");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    super::sidecar::save(&other, &[rec]).unwrap();
    let later = Registry::open(&other).unwrap();
    let v = later.get(&id).unwrap();
    assert_eq!(
        (v.record.state, v.record.exit_code),
        (JobState::Exited, Some(0))
    );
    let report = later.kill(&id, Duration::from_millis(100)).unwrap();
    assert_eq!(report.outcome, KillOutcome::AlreadyEnded);
    assert_eq!(pending_signals(spid), 0, "nothing was sent to the stranger");
    assert!(alive(spid));
    stranger.kill().unwrap();
    stranger.wait().unwrap();
}

#[test]
fn a_job_ignoring_sigterm_is_gone_after_the_grace() {
    let f = Fixture::new();
    let id = f
        .reg
        .spawn(f.req("trap '' TERM; echo ready; sleep 300"))
        .unwrap()
        .record
        .id;
    until("the trap to be set", || {
        f.reg.tail(&id, None, 100).unwrap().text == "ready\n"
    });
    let t = Instant::now();
    let report = f.reg.kill(&id, Duration::from_millis(300)).unwrap();
    assert!(report.sent_term && report.sent_kill);
    assert!(t.elapsed() >= Duration::from_millis(300));
    assert!(t.elapsed() < Duration::from_secs(3));
    assert!(report.survivors.is_empty());
    let v = f.reg.get(&id).unwrap();
    assert_eq!(
        (v.record.state, v.record.signal),
        (JobState::Signalled, Some(libc::SIGKILL))
    );
    assert!(!alive(v.record.pid));
}

/// A command that blocks the signals a kill sends first (TERM, CONT, HUP,
/// INT), prints its pid and sleeps: whatever is sent to it stays pending,
/// so "nothing was sent" is read from the kernel at once instead of being
/// inferred from the process surviving a pause.
const BLOCKING_SLEEPER: &str = "exec perl -MPOSIX -e 'sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGTERM, SIGCONT, SIGHUP, SIGINT)); $| = 1; print \"$$\\n\"; sleep 300'";

/// A process that is none of our jobs' (started without the registry),
/// running [`BLOCKING_SLEEPER`] once its signals are blocked.
fn blocking_stranger() -> (std::process::Child, i32) {
    blocked(std::process::Command::new("sh").args(["-c", BLOCKING_SLEEPER]))
}

/// Starts `cmd` (which runs [`BLOCKING_SLEEPER`]) and returns once its
/// signals are blocked.
fn blocked(cmd: &mut std::process::Command) -> (std::process::Child, i32) {
    let child = cmd.stdout(std::process::Stdio::null()).spawn().unwrap();
    let pid = child.id() as i32;
    until("the stranger to block its signals", || {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .is_ok_and(|s| s.contains("SigBlk:\t0000000000024003"))
    });
    (child, pid)
}

/// Signals sent to `pid` and not yet delivered (`SigPnd | ShdPnd`).
fn pending_signals(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .filter_map(|l| {
            l.strip_prefix("SigPnd:")
                .or_else(|| l.strip_prefix("ShdPnd:"))
        })
        .filter_map(|v| u64::from_str_radix(v.trim(), 16).ok())
        .fold(0, |a, b| a | b)
}

#[test]
fn a_reused_pid_is_lost_and_the_real_process_is_never_signalled() {
    let f = Fixture::new();
    let job = f.reg.spawn(f.req(BLOCKING_SLEEPER)).unwrap().record;
    until("the sleeper to block its signals", || {
        !f.reg.tail(&job.id, None, 100).unwrap().text.is_empty()
    });
    let sleeper: i32 = f
        .reg
        .tail(&job.id, None, 100)
        .unwrap()
        .text
        .trim()
        .parse()
        .unwrap();
    let real_start = identity::proc_info(job.pid).unwrap().start;
    f.reg.tamper_start_ticks(&job.id, real_start + 12345);

    let report = f.reg.kill(&job.id, Duration::from_millis(100)).unwrap();
    assert_eq!(report.outcome, KillOutcome::Refused);
    assert!(!report.sent_term && !report.sent_kill);
    assert_eq!(f.reg.get(&job.id).unwrap().record.state, JobState::Lost);
    assert_eq!(pending_signals(sleeper), 0, "nothing was sent to the job");
    assert!(alive(job.pid) && alive(sleeper));
    assert_eq!(identity::proc_info(job.pid).unwrap().start, real_start);

    // The same through a sidecar another process wrote: a stranger's pid.
    let (mut stranger, spid) = blocking_stranger();
    let mut rec = job.clone();
    rec.id = "bg-9".into();
    rec.pid = spid;
    rec.pgid = spid;
    rec.start_ticks = Some(identity::proc_info(spid).unwrap().start + 1);
    rec.state = JobState::Running;
    rec.exit_path = f.path("none.exit").display().to_string();
    let other = f.path("other/jobs.json");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    super::sidecar::save(&other, &[rec]).unwrap();
    let reg2 = Registry::open(&other).unwrap();
    let v = reg2.get("bg-9").unwrap();
    assert_eq!(v.record.state, JobState::Lost);
    assert!(v.record.note.unwrap().contains("another process"));
    assert_eq!(
        reg2.kill("bg-9", Duration::from_millis(100))
            .unwrap()
            .outcome,
        KillOutcome::Refused
    );
    assert_eq!(pending_signals(spid), 0, "nothing was sent to the stranger");
    assert!(alive(spid));

    stranger.kill().unwrap();
    stranger.wait().unwrap();
    unsafe { libc::killpg(job.pgid, libc::SIGKILL) };
    until("the tampered job to be reaped", || {
        f.reg.list();
        identity::proc_info(job.pid).is_none()
    });
}

#[test]
fn killing_an_exited_job_is_a_no_op() {
    let f = Fixture::new();
    let id = f.reg.spawn(f.req("echo done")).unwrap().record.id;
    let before = f.wait(&id).record;
    let report = f.reg.kill(&id, Duration::from_secs(1)).unwrap();
    assert_eq!(report.outcome, KillOutcome::AlreadyEnded);
    assert!(!report.sent_term && !report.sent_kill);
    assert_eq!(report.job.record.state, before.state);
    assert!(!report.job.record.kill_requested);
}

fn our_fds(dir: &Path) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|t| t.starts_with(dir) || t.to_string_lossy().contains("pidfd"))
        .count()
}

fn zombie_children() -> Vec<i32> {
    let me = std::process::id() as i32;
    identity::all_pids()
        .into_iter()
        .filter_map(identity::proc_info)
        .filter(|p| p.ppid == me && p.zombie)
        .map(|p| p.pid)
        .collect()
}

#[test]
fn a_hundred_jobs_started_and_killed_leave_no_zombie_and_no_fd() {
    let f = Fixture::new();
    let fds_before = our_fds(f.dir.path());
    let mut pids = Vec::new();
    for _ in 0..100 {
        let job = f.reg.spawn(f.req("sleep 300")).unwrap().record;
        pids.push(job.pid);
        let report = f.reg.kill(&job.id, Duration::from_secs(2)).unwrap();
        assert_eq!(report.outcome, KillOutcome::Killed);
        assert!(report.survivors.is_empty());
    }
    assert!(f.reg.list().iter().all(|j| !j.record.is_running()));
    until("pidfds held by the monitor to close", || {
        our_fds(f.dir.path()) == fds_before
    });
    assert_eq!(zombie_children(), Vec::<i32>::new());
    assert!(pids.iter().all(|&p| !alive(p)));
}

#[test]
fn timeout_kills_the_job_and_says_so() {
    let f = Fixture::new();
    let mut req = f.req("sleep 300");
    req.timeout = Some(Duration::from_millis(200));
    let id = f.reg.spawn(req).unwrap().record.id;
    let v = f.wait(&id);
    assert!(v.record.timed_out && v.record.kill_requested);
    assert_eq!(
        (v.record.state, v.record.signal),
        (JobState::Signalled, Some(libc::SIGTERM))
    );
}

#[test]
fn wait_times_out_and_cancels_without_touching_the_job() {
    let f = Fixture::new();
    let id = f.reg.spawn(f.req("sleep 300")).unwrap().record.id;
    let t = Instant::now();
    let (v, end) = f
        .reg
        .wait(&id, Some(Duration::from_millis(100)), &|| false)
        .unwrap();
    assert_eq!(end, WaitEnd::TimedOut);
    assert!(t.elapsed() >= Duration::from_millis(100) && v.record.is_running());
    let (_, end) = f.reg.wait(&id, None, &|| true).unwrap();
    assert_eq!(end, WaitEnd::Cancelled);
}

#[test]
fn a_later_process_adopts_running_jobs_and_reads_finished_ones() {
    let f = Fixture::new();
    let quick = f.reg.spawn(f.req("sleep 0.3; exit 7")).unwrap().record.id;
    let long = f.reg.spawn(f.req("sleep 300")).unwrap().record;
    let done = f.reg.spawn(f.req("exit 5")).unwrap().record.id;
    f.wait(&done);
    let mut rebooted = f.reg.spawn(f.req("sleep 300")).unwrap().record;

    // A second registry on the same file sees them as a restarted Pi would.
    let later = Registry::open(&f.path("session/jobs.json")).unwrap();
    let v = later.get(&long.id).unwrap();
    assert!(v.adopted && v.record.is_running());
    assert_eq!(later.get(&done).unwrap().record.exit_code, Some(5));
    let (v, end) = later
        .wait(&quick, Some(Duration::from_secs(5)), &|| false)
        .unwrap();
    assert_eq!((end, v.record.exit_code), (WaitEnd::Ended, Some(7)));
    let report = later.kill(&long.id, Duration::from_secs(2)).unwrap();
    assert_eq!(report.outcome, KillOutcome::Killed);
    until("the adopted job to die", || !alive(long.pid));

    // A record from before a reboot is lost and never signalled.
    let real = rebooted.clone();
    rebooted.boot_id = Some("00000000-0000-0000-0000-000000000000".into());
    let other = f.path("rebooted/jobs.json");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    super::sidecar::save(&other, &[rebooted]).unwrap();
    let reg3 = Registry::open(&other).unwrap();
    assert_eq!(reg3.get(&real.id).unwrap().record.state, JobState::Lost);
    assert_eq!(
        reg3.kill(&real.id, Duration::from_millis(50))
            .unwrap()
            .outcome,
        KillOutcome::Refused
    );
    assert!(alive(real.pid));
}

#[test]
fn a_corrupt_sidecar_loads_partially_and_keeps_the_original() {
    let f = Fixture::new();
    let a = f.reg.spawn(f.req("exit 1")).unwrap().record.id;
    f.wait(&a);
    let b = f.reg.spawn(f.req("exit 2")).unwrap().record.id;
    f.wait(&b);
    let path = f.path("session/jobs.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &text[..text.len() - 30]).unwrap();
    let later = Registry::open(&path).unwrap();
    let ids: Vec<String> = later.list().into_iter().map(|j| j.record.id).collect();
    assert_eq!(ids, vec![a.clone()]);
    assert!(
        later.problems().iter().any(|p| p.contains("line 3")),
        "{:?}",
        later.problems()
    );
    assert!(f.path("session/jobs.json.corrupt").exists());
    assert_eq!(later.get(&a).unwrap().record.exit_code, Some(1));
}

#[test]
fn cursor_reads_and_delivery_claims() {
    let f = Fixture::new();
    let id = f.reg.spawn(f.req("printf 'a\\nb\\n'")).unwrap().record.id;
    f.wait(&id);
    let first = f
        .reg
        .read_new(&id, 1 << 20, super::log::Keep::Tail)
        .unwrap();
    assert_eq!(first.text, "a\nb\n");
    assert_eq!(
        f.reg
            .read_new(&id, 1 << 20, super::log::Keep::Tail)
            .unwrap()
            .text,
        ""
    );
    assert_eq!(f.reg.get(&id).unwrap().record.read_offset, 4);
    assert!(f.reg.claim_delivery(&id).unwrap());
    assert!(!f.reg.claim_delivery(&id).unwrap());
    let later = Registry::open(&f.path("session/jobs.json")).unwrap();
    assert!(
        !later.claim_delivery(&id).unwrap(),
        "the claim survives a restart"
    );
    assert_eq!(later.get(&id).unwrap().record.read_offset, 4);
}

#[test]
fn the_listener_hears_each_ending_once() {
    let f = Fixture::new();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = heard.clone();
    f.reg.set_listener(Some(Arc::new(move |v: &super::JobView| {
        sink.lock().unwrap().push(v.record.id.clone());
    })));
    let id = f.reg.spawn(f.req("sleep 0.1")).unwrap().record.id;
    until("the listener", || !heard.lock().unwrap().is_empty());
    f.reg.list();
    // A later ending is heard after any repeat of the first would have been:
    // both go through the same refresh of every job.
    let next = f.reg.spawn(f.req("true")).unwrap().record.id;
    until("the second ending", || heard.lock().unwrap().len() >= 2);
    f.reg.list();
    assert_eq!(*heard.lock().unwrap(), vec![id, next]);
}

#[test]
fn the_wrapper_stays_out_of_the_log_but_shell_errors_do_not() {
    let f = Fixture::new();
    let id = f
        .reg
        .spawn(f.req("echo before; sleep 300"))
        .unwrap()
        .record
        .id;
    until("output", || {
        f.reg.tail(&id, None, 100).unwrap().text == "before\n"
    });
    f.reg.kill(&id, Duration::from_secs(2)).unwrap();
    assert_eq!(
        f.reg.tail(&id, None, 1000).unwrap().text,
        "before\n",
        "no 'Terminated' notice"
    );

    // A shell that exists but cannot run: its error reaches the log.
    let not_a_shell = f.path("not-a-shell");
    std::fs::write(&not_a_shell, "").unwrap();
    let mut req = f.req("true");
    req.shell = Some(not_a_shell.display().to_string());
    let id = f.reg.spawn(req).unwrap().record.id;
    let v = f.wait(&id);
    assert_eq!(v.record.exit_code, Some(126));
    let text = f.reg.tail(&id, None, 1000).unwrap().text;
    assert!(text.contains("not-a-shell: Permission denied"), "{text:?}");
}

#[test]
fn a_bare_shell_name_missing_from_the_jobs_path_is_refused_before_anything_starts() {
    let f = Fixture::new();
    let mut req = f.req("true");
    req.shell = Some("no-such-shell-xyz".into());
    let err = f.reg.spawn(req).unwrap_err();
    assert_eq!(err.to_string(), "Shell not found: no-such-shell-xyz");
    assert_eq!(err.code(), crate::error_code::ErrorCode::PathNotFound);
    assert!(f.reg.list().is_empty());
}

#[test]
fn descriptors_we_inherited_without_cloexec_do_not_reach_the_job() {
    let f = Fixture::new();
    // A high number, so nothing the job's shell opens can be mistaken for it.
    const LEAKY: i32 = 987;
    let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY) };
    assert_eq!(unsafe { libc::dup2(fd, LEAKY) }, LEAKY);
    unsafe { libc::close(fd) };
    let cmd = format!("test -e /proc/$$/fd/{LEAKY} && echo leaked || echo clean; test -e /proc/$$/fd/1 && echo has-stdout");
    let id = f.reg.spawn(f.req(&cmd)).unwrap().record.id;
    f.wait(&id);
    unsafe { libc::close(LEAKY) };
    assert_eq!(
        f.reg.tail(&id, None, 4096).unwrap().text,
        "clean\nhas-stdout\n"
    );
}

#[test]
fn a_reused_log_shows_only_this_jobs_output() {
    let f = Fixture::new();
    let mut req = f.req("echo new");
    std::fs::create_dir_all(req.log_path.parent().unwrap()).unwrap();
    std::fs::write(&req.log_path, "old run\n").unwrap();
    std::fs::write(spawn_exit_path(&req.log_path), "9\n").unwrap();
    req.id = Some("again".into());
    let v = f.reg.spawn(req).unwrap();
    assert_eq!(v.record.log_start, 8);
    let v = f.wait("again");
    assert_eq!(
        v.record.exit_code,
        Some(0),
        "a stale exit file is not this job's"
    );
    let t = f.reg.tail("again", None, 1 << 20).unwrap();
    assert_eq!((t.text.as_str(), t.skipped), ("new\n", 0));
    assert_eq!(
        f.reg
            .read_new("again", 1 << 20, super::log::Keep::Head)
            .unwrap()
            .text,
        "new\n"
    );
}

fn spawn_exit_path(log: &Path) -> PathBuf {
    super::spawn::exit_path_for(log)
}

#[test]
fn a_two_gib_flood_keeps_the_log_bounded_with_its_head_a_marker_and_a_readable_tail() {
    let f = Fixture::new();
    const FLOOD: u64 = 2 << 30;
    let mut req = f.req(&format!(
        "echo FIRST; yes 'flood line of output text' | head -c {FLOOD}; echo; echo LAST"
    ));
    req.max_log_bytes = Some(64 << 20);
    let id = f.reg.spawn(req).unwrap().record.id;
    let log = PathBuf::from(f.reg.get(&id).unwrap().record.log_path);
    let (v, end) = f
        .reg
        .wait(&id, Some(Duration::from_secs(120)), &|| false)
        .unwrap();
    assert_eq!((end, v.record.exit_code), (WaitEnd::Ended, Some(0)));
    // How far it overshoots while the flood runs depends on the machine
    // (bench/shell.mjs measures it); once it is over, it is within the bound.
    until("the last trim", || {
        std::fs::metadata(&log).unwrap().len() <= 64 << 20
    });
    let v = f.reg.get(&id).unwrap();
    let r = &v.record;
    assert!(r.log_dropped > FLOOD - (64 << 20), "{}", r.log_dropped);
    assert_eq!(
        v.log_bytes - r.log_marker + r.log_dropped,
        FLOOD + "FIRST\n\nLAST\n".len() as u64,
        "every byte is kept or counted"
    );
    let head = super::log::read_from(&log, 0, 64, super::log::Keep::Head, true).unwrap();
    assert!(head.text.starts_with("FIRST\nflood line of output text\n"));
    let at = r.log_trim_at.unwrap();
    let marker = super::log::read_from(&log, at, r.log_marker, super::log::Keep::Head, true)
        .unwrap()
        .text;
    assert_eq!(marker, super::log::marker_line(r.log_dropped, 64 << 20));
    assert!(marker.contains(&format!("{} bytes of output dropped", r.log_dropped)));
    // `head -c` cut the last flood line short; `echo` ended it.
    let tail = f.reg.tail(&id, Some(2), 4096).unwrap().text;
    assert!(
        tail.starts_with("flood line of output") && tail.ends_with("\nLAST\n"),
        "{tail:?}"
    );
    let _ = std::fs::remove_file(&log);
}

#[test]
fn two_registries_on_one_sidecar_keep_each_others_jobs_and_say_when_the_lock_is_held() {
    let f = Fixture::new();
    let path = f.path("session/jobs.json");
    // A second process on the same session, as a second Pi would open it.
    let other = Registry::open(&path).unwrap();
    let a = f.reg.spawn(f.req("exit 1")).unwrap().record.id;
    let b = other.spawn(f.req("exit 2")).unwrap().record.id;
    assert_ne!(
        a, b,
        "the second takes the first's jobs in before choosing an id"
    );
    f.wait(&a);
    other
        .wait(&b, Some(Duration::from_secs(10)), &|| false)
        .unwrap();
    // Each one's later writes keep the other's job.
    f.reg.claim_delivery(&a).unwrap();
    other.claim_delivery(&b).unwrap();
    let later = Registry::open(&path).unwrap();
    let ids: Vec<String> = later.list().into_iter().map(|j| j.record.id).collect();
    assert_eq!(ids, vec![a.clone(), b.clone()]);
    assert!(later.list().iter().all(|j| j.record.delivered));

    // While someone else holds the lock, a spawn is refused with the reason
    // and nothing is written behind its back.
    let held = std::fs::File::open(f.path("session/jobs.json.lock")).unwrap();
    held.lock().unwrap();
    let err = other.spawn(f.req("true")).unwrap_err().to_string();
    assert!(
        err.contains("jobs.json.lock is held by another process"),
        "{err}"
    );
    drop(held);
    assert_eq!(other.list().len(), 2);
    let c = other.spawn(f.req("true")).unwrap().record.id;
    other
        .wait(&c, Some(Duration::from_secs(10)), &|| false)
        .unwrap();
}

#[test]
fn a_job_flooding_its_log_is_reported_as_such_until_it_stops() {
    let f = Fixture::new();
    let mut req = f.req("yes 'flood line'");
    req.max_log_bytes = Some(4 << 20);
    let id = f.reg.spawn(req).unwrap().record.id;
    assert!(!f.reg.get(&id).unwrap().flooding, "not at its start");
    until("the flood to be reported", || {
        f.reg.get(&id).unwrap().flooding
    });
    let v = f.reg.get(&id).unwrap();
    assert!(v.record.log_dropped > 0, "and its log is being cut");
    f.reg.kill(&id, Duration::from_secs(2)).unwrap();
    let v = f.reg.get(&id).unwrap();
    assert!(!v.flooding && !v.record.is_running());
    until("the last trim", || {
        std::fs::metadata(&v.record.log_path).unwrap().len() <= 4 << 20
    });
}

#[test]
fn output_written_fast_but_under_the_bound_is_never_cut() {
    let f = Fixture::new();
    for (command, bytes) in [
        ("head -c 5000000 /dev/zero", 5_000_000u64),
        ("seq 1 1000000", 6_888_896),
    ] {
        let id = f.reg.spawn(f.req(command)).unwrap().record.id;
        let v = f.wait(&id);
        // One more look by the monitor after the ending.
        std::thread::sleep(Duration::from_millis(100));
        let v2 = f.reg.get(&id).unwrap();
        assert_eq!(v.record.exit_code, Some(0));
        assert_eq!(
            (v2.log_bytes, v2.record.log_dropped, v2.record.log_trim_at),
            (bytes, 0, None),
            "{command} keeps every byte"
        );
    }
}

#[test]
fn two_processes_racing_to_claim_a_delivery_get_true_exactly_once_between_them() {
    let f = Fixture::new();
    let ids: Vec<String> = (0..40)
        .map(|_| f.reg.spawn(f.req("true")).unwrap().record.id)
        .collect();
    for id in &ids {
        f.wait(id);
    }
    // A second process on the same session, as a second Pi would open it.
    let other = Registry::open(&f.path("session/jobs.json")).unwrap();
    let claims = |reg: Arc<Registry>, ids: Vec<String>| {
        std::thread::spawn(move || {
            ids.iter()
                .map(|id| reg.claim_delivery(id).unwrap())
                .collect::<Vec<bool>>()
        })
    };
    let a = claims(f.reg.clone(), ids.clone());
    let b = claims(other, ids.clone());
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    for (i, id) in ids.iter().enumerate() {
        assert!(
            a[i] ^ b[i],
            "{id}: claimed by this {} and the other {}",
            a[i],
            b[i]
        );
    }
}

#[test]
fn a_sidecar_that_cannot_be_read_is_refused_and_left_as_it_is() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.json");
    std::fs::write(&path, b"{}").unwrap();
    let big = std::fs::File::options().write(true).open(&path).unwrap();
    // Sparse: "too large to be a job registry", and not ours to replace.
    big.set_len(65 << 20).unwrap();
    let err = match Registry::open(&path) {
        Err(e) => e,
        Ok(_) => panic!("opened"),
    };
    assert_eq!(err.code(), crate::error_code::ErrorCode::Io);
    assert!(
        err.to_string().contains("too large to be a job registry"),
        "{err}"
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        65 << 20,
        "not written over"
    );
}

#[test]
fn two_running_jobs_never_share_a_log() {
    let f = Fixture::new();
    let mut a = f.req("sleep 30");
    a.log_path = f.path("logs/shared.log");
    let a = f.reg.spawn(a).unwrap().record.id;
    // The same file by another path.
    std::os::unix::fs::symlink(f.path("logs/shared.log"), f.path("other.log")).unwrap();
    for path in ["logs/shared.log", "other.log"] {
        let mut b = f.req("echo b");
        b.log_path = f.path(path);
        let err = f.reg.spawn(b).unwrap_err();
        assert_eq!(err.code(), crate::error_code::ErrorCode::InvalidOption);
        assert!(
            err.to_string()
                .contains(&format!("is the log of job {a}, still running")),
            "{err}"
        );
    }
    assert_eq!(f.reg.list().len(), 1, "nothing else started");
    f.reg.kill(&a, Duration::from_millis(200)).unwrap();
    // Once it ended, its log may be appended to.
    let mut c = f.req("echo c");
    c.log_path = f.path("logs/shared.log");
    let c = f.reg.spawn(c).unwrap().record.id;
    f.wait(&c);
    assert_eq!(f.reg.tail(&c, None, 100).unwrap().text, "c\n");
}

#[test]
fn a_retired_job_id_is_never_handed_out_again_even_after_removal_and_a_restart() {
    let f = Fixture::new();
    let a = f.reg.spawn(f.req("true")).unwrap().record.id;
    let b = f.reg.spawn(f.req("true")).unwrap().record.id;
    assert_eq!((a.as_str(), b.as_str()), ("bg-1", "bg-2"));
    assert_eq!(f.reg.next_id(), "bg-3");
    f.wait(&a);
    f.wait(&b);
    // Not retired: a removed id is free again (a foreground command's).
    f.reg.remove(&b, true).unwrap();
    assert_eq!(f.reg.next_id(), "bg-2");
    // Retired: shown to someone, so never again, whatever is removed.
    f.reg.retire_id("bg-4");
    f.reg.retire_id("bg-3");
    f.reg.retire_id("job");
    f.reg.remove(&a, true).unwrap();
    assert_eq!(f.reg.next_id(), "bg-5");
    let c = f.reg.spawn(f.req("true")).unwrap().record.id;
    assert_eq!(c, "bg-5", "the default id follows the same rule");
    f.wait(&c);
    f.reg.remove(&c, true).unwrap();
    let again = Registry::open(&f.path("session/jobs.json")).unwrap();
    assert_eq!(
        again.next_id(),
        "bg-5",
        "the retired ids are in the sidecar"
    );
}
