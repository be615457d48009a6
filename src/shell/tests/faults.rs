//! Strangers, forged records and host deaths: what the registry must never
//! signal, and what it must never lose. Real processes throughout; a host
//! that dies is this test binary run again as a separate process
//! ([`host_process`]) and killed, by SIGKILL or at a failpoint.

use super::super::identity;
use super::super::job::{JobRecord, JobState, Member};
use super::super::kill::{KillOutcome, KillReport};
use super::super::registry::{Registry, SpawnRequest};
use super::super::spawn::MARKER_NAME;
use super::{alive, blocked, pending_signals, until, Fixture, BLOCKING_SLEEPER};
use std::io::BufRead;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn stopped(pid: i32) -> bool {
    identity::proc_info(pid).is_some_and(|p| p.stopped)
}

/// [`BLOCKING_SLEEPER`] started outside the registry, in a process group of
/// its own, with `redirect` applied (`>> job.log`); returns once its
/// signals are blocked.
fn outside(redirect: &str) -> (std::process::Child, i32) {
    blocked(
        std::process::Command::new("sh")
            .args(["-c", &format!("{BLOCKING_SLEEPER} {redirect}")])
            .process_group(0),
    )
}

fn has_open(pid: i32, file: &Path) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|d| {
        d.flatten()
            .any(|e| std::fs::read_link(e.path()).is_ok_and(|l| l == file))
    })
}

fn untouched(pid: i32, what: &str) {
    assert!(alive(pid), "{what}: alive");
    assert!(!stopped(pid), "{what}: not stopped");
    assert_eq!(pending_signals(pid), 0, "{what}: nothing was sent to it");
}

/// Job membership comes from what the registry started, never from who
/// writes the job's log: a user's `cmd >> job.log` started outside the
/// registry is not signalled with the job and does not keep it running.
#[test]
fn a_process_writing_to_a_jobs_log_that_the_registry_did_not_start_is_never_signalled() {
    let f = Fixture::new();
    for scan_only in [true, false] {
        let how = format!("process tree only: {scan_only}");
        // A job that ends by itself while the outside writer goes on.
        let gate = f.path(&format!("gate-{scan_only}"));
        let mut req = f.req(&format!(
            "while [ ! -e {} ]; do sleep 0.02; done; exit 0",
            gate.display()
        ));
        req.process_tree_only = scan_only;
        let job = f.reg.spawn(req).unwrap().record;
        let (writer, wpid) = outside(&format!(">> '{}'", job.log_path));
        until("the writer to open the log", || {
            has_open(wpid, Path::new(&job.log_path))
        });
        std::fs::write(&gate, "").unwrap();
        let v = f.wait(&job.id);
        assert_eq!(
            (v.record.state, v.record.exit_code),
            (JobState::Exited, Some(0)),
            "{how}: ended though the writer lives"
        );
        assert!(v.record.members.is_empty(), "{how}: {:?}", v.record.members);
        untouched(wpid, &how);

        // A job killed while the outside writer appends to its log.
        let mut req = f.req("sleep 300");
        req.process_tree_only = scan_only;
        let job = f.reg.spawn(req).unwrap().record;
        let (writer2, wpid2) = outside(&format!(">> '{}'", job.log_path));
        until("the second writer to open the log", || {
            has_open(wpid2, Path::new(&job.log_path))
        });
        let report = f.reg.kill(&job.id, Duration::from_secs(2)).unwrap();
        assert_eq!(report.outcome, KillOutcome::Killed, "{how}");
        assert!(!report.escapees.contains(&wpid2), "{how}: {report:?}");
        assert!(report.survivors.is_empty(), "{how}: {:?}", report.survivors);
        let v = f.reg.get(&job.id).unwrap();
        assert_eq!(v.record.state, JobState::Signalled, "{how}: {:?}", v.record);
        untouched(wpid2, &how);
        for mut w in [writer, writer2] {
            w.kill().unwrap();
            w.wait().unwrap();
        }
    }
}

/// A record written by someone else (here by hand) for a registry to load.
fn forged(f: &Fixture, name: &str, pid: i32, start: u64) -> (PathBuf, JobRecord) {
    let mut rec = f.reg.spawn(f.req("exit 0")).unwrap().record;
    let _ = f.wait(&rec.id);
    rec.id = format!("forged-{name}");
    rec.pid = pid;
    rec.pgid = pid;
    rec.start_ticks = Some(start);
    rec.boot_id = identity::boot_id().map(str::to_string);
    rec.marker = format!("999999.1.0.forged-{name}");
    rec.host_pid = 0;
    rec.state = JobState::Running;
    rec.ended_at_ms = None;
    rec.exit_code = None;
    rec.exit_path = f.path(&format!("none-{name}.exit")).display().to_string();
    rec.log_path = f.path(&format!("none-{name}.log")).display().to_string();
    let sidecar = f.path(&format!("forged-{name}/jobs.json"));
    std::fs::create_dir_all(sidecar.parent().unwrap()).unwrap();
    super::super::sidecar::save(&sidecar, std::slice::from_ref(&rec)).unwrap();
    (sidecar, rec)
}

/// A forged or damaged sidecar record naming a live process pi-utils did not
/// start, with its real start time (pid 1, a user's process, or a process
/// listed as what the job left), never leads to a signal: the registry
/// cannot prove the process is the job's (no marker in its environment), so
/// the job is `lost` and a kill is refused.
#[test]
fn a_forged_record_naming_a_live_outside_process_never_leads_to_a_signal() {
    let f = Fixture::new();
    let (mut stranger, spid) = outside("");
    // Stopped as well: a SIGCONT (sent by a kill, or by the registry that
    // continues a braked job) would show.
    unsafe { libc::kill(spid, libc::SIGSTOP) };
    until("the stranger to stop", || stopped(spid));
    let start = |pid: i32| identity::proc_info(pid).unwrap().start;

    for (name, pid) in [("init", 1), ("stranger", spid)] {
        let (sidecar, rec) = forged(&f, name, pid, start(pid));
        let reg = Registry::open(&sidecar).unwrap();
        let v = reg.get(&rec.id).unwrap();
        assert_eq!(v.record.state, JobState::Lost, "{name}: {:?}", v.record);
        let note = v.record.note.clone().unwrap_or_default();
        assert!(
            note.contains("not a process pi-utils started"),
            "{name}: {note}"
        );
        let report = reg.kill(&rec.id, Duration::from_millis(100)).unwrap();
        assert_eq!(report.outcome, KillOutcome::Refused, "{name}");
        assert!(!report.sent_term && !report.sent_kill, "{name}");
        assert!(stopped(spid), "{name}: the stranger was not continued");
        assert_eq!(pending_signals(spid), 0, "{name}: nothing was sent");
    }

    // A record whose main process ended, listing the stranger as what the
    // job left behind.
    let (sidecar, mut rec) = forged(&f, "member", 999_999_999, 1);
    rec.leader_ended_at_ms = Some(rec.started_at_ms);
    rec.leader_exit_code = Some(0);
    rec.members = vec![Member {
        pid: spid,
        start: start(spid),
        command: "sleep 300".into(),
    }];
    super::super::sidecar::save(&sidecar, std::slice::from_ref(&rec)).unwrap();
    let reg = Registry::open(&sidecar).unwrap();
    let v = reg.get(&rec.id).unwrap();
    assert!(!v.record.is_running(), "{:?}", v.record);
    assert!(v.record.members.is_empty());
    let report = reg.kill(&rec.id, Duration::from_millis(100)).unwrap();
    assert_eq!(report.outcome, KillOutcome::AlreadyEnded);
    assert!(stopped(spid) && alive(spid));
    assert_eq!(pending_signals(spid), 0, "nothing was sent to the member");

    stranger.kill().unwrap();
    stranger.wait().unwrap();
}

const HOST_SIDECAR: &str = "PI_UTILS_TEST_HOST";
const HOST_FAULT: &str = "PI_UTILS_TEST_FAULT";
/// `bg-1`'s command and log bound in [`host_process`], when set.
pub(super) const HOST_COMMAND: &str = "PI_UTILS_TEST_COMMAND";
pub(super) const HOST_MAX_LOG: &str = "PI_UTILS_TEST_MAX_LOG";

/// Not a test on its own: the host process the tests below start (this
/// binary run again with [`HOST_SIDECAR`] naming a sidecar) and kill. It
/// starts `bg-1`, arms the failpoint [`HOST_FAULT`] names (`step:n`),
/// starts `bg-2`, rewrites the sidecar once more (`bg-1`'s meta), says
/// `host: ready` and waits to be killed.
#[test]
#[ignore = "the host process of the fault tests"]
fn host_process() {
    let Ok(sidecar) = std::env::var(HOST_SIDECAR) else {
        return;
    };
    let dir = Path::new(&sidecar).parent().unwrap().to_path_buf();
    let reg = Registry::open(Path::new(&sidecar)).unwrap();
    let req = |n: u32| SpawnRequest {
        command: "echo started; exec sleep 300".into(),
        cwd: dir.clone(),
        shell: None,
        env: None,
        log_path: dir.join(format!("host-{n}.log")),
        timeout: None,
        id: None,
        meta: None,
        max_log_bytes: None,
        process_tree_only: false,
        pump: true,
    };
    let mut first = req(1);
    if let Ok(command) = std::env::var(HOST_COMMAND) {
        first.command = command;
    }
    first.max_log_bytes = std::env::var(HOST_MAX_LOG).ok().map(|m| m.parse().unwrap());
    // Killed right after this returns, the host still leaves bg-1 running.
    reg.spawn(first).unwrap();
    if let Ok(fault) = std::env::var(HOST_FAULT) {
        let (step, nth) = fault.split_once(':').unwrap();
        super::super::arm_failpoint(step, nth.parse().unwrap());
    }
    reg.spawn(req(2)).unwrap();
    reg.set_meta("bg-1", Some("rewritten".into())).unwrap();
    println!("host: ready");
    std::thread::sleep(Duration::from_secs(300));
}

/// Runs [`host_process`] on `sidecar` until it is ready or dies at its
/// failpoint; the host is gone (SIGKILL) when this returns. Returns its
/// pid and whether it got as far as ready.
fn run_host(sidecar: &Path, fault: Option<&str>) -> (i32, bool) {
    run_host_with(host_command(sidecar), fault)
}

/// [`run_host`] of a host command the caller made (and may have given an
/// environment: [`HOST_COMMAND`], [`HOST_MAX_LOG`]).
pub(super) fn run_host_with(mut cmd: std::process::Command, fault: Option<&str>) -> (i32, bool) {
    if let Some(fault) = fault {
        cmd.env(HOST_FAULT, fault);
    }
    let mut host = cmd.spawn().unwrap();
    let pid = host.id() as i32;
    let out = std::io::BufReader::new(host.stdout.take().unwrap());
    let ready = out
        .lines()
        .map_while(Result::ok)
        .any(|l| l.ends_with("host: ready"));
    let _ = host.kill();
    host.wait().unwrap();
    (pid, ready)
}

/// This test binary, to run [`host_process`] on `sidecar`.
pub(super) fn host_command(sidecar: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "shell::tests::faults::host_process",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(HOST_SIDECAR, sidecar)
    .env_remove(HOST_FAULT)
    .env_remove(HOST_COMMAND)
    .env_remove(HOST_MAX_LOG)
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::null());
    cmd
}

/// Live processes carrying a marker of a job host `host` started, with it.
pub(super) fn marked_by(host: i32) -> Vec<(i32, String)> {
    let prefix = format!("{MARKER_NAME}={host}.");
    identity::all_pids()
        .into_iter()
        .filter_map(identity::proc_info)
        .filter(|p| !p.zombie)
        .filter_map(|p| {
            let env = std::fs::read(format!("/proc/{}/environ", p.pid)).ok()?;
            let var = env
                .split(|&b| b == 0)
                .find(|v| v.starts_with(prefix.as_bytes()))?;
            let marker = String::from_utf8_lossy(&var[MARKER_NAME.len() + 1..]).into_owned();
            Some((p.pid, marker))
        })
        .collect()
}

/// A host killed at any step of a spawn or of a sidecar rewrite leaves no
/// job running that no record names: a wrapper runs its command only once
/// its record is saved, and exits on end of file otherwise. What was saved
/// before the fault is all there, and every job that runs is tracked and
/// killable by the registry that opens the sidecar next.
#[test]
fn a_host_killed_at_any_step_of_a_spawn_or_a_sidecar_rewrite_leaves_every_running_job_recorded_and_killable(
) {
    let f = Fixture::new();
    // (failpoint, bg-2 recorded, bg-1's meta rewritten)
    let steps: &[(Option<&str>, bool, bool)] = &[
        (Some("spawn.spawned:1"), false, false),
        (Some("sidecar.written:1"), false, false),
        (Some("sidecar.renamed:1"), true, false),
        (Some("spawn.saved:1"), true, false),
        (Some("spawn.go:1"), true, false),
        (Some("sidecar.written:2"), true, false),
        (Some("sidecar.renamed:2"), true, true),
        (None, true, true),
    ];
    for (i, &(fault, second, rewritten)) in steps.iter().enumerate() {
        let how = format!("host killed at {}", fault.unwrap_or("the end"));
        let sidecar = f.path(&format!("host-{i}/jobs.json"));
        std::fs::create_dir_all(sidecar.parent().unwrap()).unwrap();
        let (host, ready) = run_host(&sidecar, fault);
        assert_eq!(ready, fault.is_none(), "{how}: the failpoint was reached");
        let reg = Registry::open(&sidecar).unwrap();
        assert!(reg.problems().is_empty(), "{how}: {:?}", reg.problems());
        let jobs = reg.list();
        let ids: Vec<&str> = jobs.iter().map(|j| j.record.id.as_str()).collect();
        let expected: &[&str] = if second { &["bg-1", "bg-2"] } else { &["bg-1"] };
        assert_eq!(ids, expected, "{how}");
        let first = &jobs[0].record;
        assert!(first.is_running(), "{how}: {first:?}");
        assert_eq!(
            first.meta.as_deref(),
            rewritten.then_some("rewritten"),
            "{how}"
        );
        // What runs is recorded: an unrecorded wrapper got end of file and
        // left without running its command.
        let recorded = |m: &str| jobs.iter().any(|j| j.record.marker == m);
        until(&format!("{how}: unrecorded wrappers to leave"), || {
            marked_by(host).iter().all(|(_, m)| recorded(m))
        });
        // A job recorded but never let go (the host died between the save
        // and `go`) may end by itself between the listing and the kill: its
        // wrapper reads end of file and leaves without running its command.
        // That is the one way a listed job may be found already ended.
        let never_started = |r: &KillReport| {
            r.outcome == KillOutcome::AlreadyEnded
                && (r.job.record.note.as_deref()).is_some_and(|n| n.starts_with("never started"))
        };
        for j in reg.list().iter().filter(|j| j.record.is_running()) {
            let report = reg.kill(&j.record.id, Duration::from_secs(2)).unwrap();
            assert!(
                report.outcome == KillOutcome::Killed || never_started(&report),
                "{how}: {report:?}"
            );
            assert!(report.survivors.is_empty(), "{how}: {report:?}");
        }
        until(&format!("{how}: nothing of the host's jobs left"), || {
            marked_by(host).is_empty()
        });
    }
}

/// The brake stops (SIGSTOP) a job whose log outruns the cuts and the host
/// that braked it continues it after the cut. A host that died in between
/// left it stopped for good; the registry that adopts the job continues it.
#[test]
fn a_job_stopped_when_its_host_died_is_continued_by_the_registry_that_adopts_it() {
    let f = Fixture::new();
    let sidecar = f.path("braked/jobs.json");
    std::fs::create_dir_all(sidecar.parent().unwrap()).unwrap();
    // Stopped while the host lives, as its brake would.
    let (host, ready) = run_host_stopping(&sidecar);
    assert!(ready);
    let rec = super::super::sidecar::load(&sidecar).unwrap().records[0].clone();
    assert!(stopped(rec.pid), "still stopped after its host died");
    let reg = Registry::open(&sidecar).unwrap();
    let v = reg.get(&rec.id).unwrap();
    assert!(v.record.is_running(), "{:?}", v.record);
    until("the job to be continued", || {
        !stopped(rec.pid)
            && identity::all_pids()
                .into_iter()
                .filter_map(identity::proc_info)
                .filter(|p| p.pgid == rec.pgid)
                .all(|p| !p.stopped)
    });
    for j in reg.list().iter().filter(|j| j.record.is_running()) {
        let report = reg.kill(&j.record.id, Duration::from_secs(2)).unwrap();
        assert_eq!(report.outcome, KillOutcome::Killed);
    }
    until("the host's jobs to be gone", || marked_by(host).is_empty());
}

/// [`run_host`] without a fault, whose jobs are stopped (the whole group,
/// as the brake does) before the host is killed.
fn run_host_stopping(sidecar: &Path) -> (i32, bool) {
    let mut host = host_command(sidecar).spawn().unwrap();
    let pid = host.id() as i32;
    let mut out = std::io::BufReader::new(host.stdout.take().unwrap());
    let mut line = String::new();
    let mut ready = false;
    while out.read_line(&mut line).unwrap_or(0) > 0 {
        if line.trim_end().ends_with("host: ready") {
            ready = true;
            break;
        }
        line.clear();
    }
    for rec in super::super::sidecar::load(sidecar).unwrap().records {
        until("the job's command to run", || {
            identity::all_pids()
                .into_iter()
                .filter_map(identity::proc_info)
                .any(|p| p.pgid == rec.pgid && p.pid != rec.pid)
        });
        unsafe { libc::killpg(rec.pgid, libc::SIGSTOP) };
        until("the job to stop", || stopped(rec.pid));
    }
    let _ = host.kill();
    host.wait().unwrap();
    (pid, ready)
}

/// A host that died after saving a job's record but before letting its
/// wrapper go leaves a job that never ran: the registry that adopts the
/// record says so, instead of "no exit status was recorded".
#[test]
fn a_recorded_job_whose_host_died_before_letting_it_go_ends_as_never_started() {
    let f = Fixture::new();
    let sidecar = f.path("never/jobs.json");
    std::fs::create_dir_all(sidecar.parent().unwrap()).unwrap();
    let (host, _) = run_host(&sidecar, Some("spawn.saved:1"));
    let reg = Registry::open(&sidecar).unwrap();
    until("bg-2 to end", || {
        reg.get("bg-2").is_some_and(|v| !v.record.is_running())
    });
    let ended = reg.get("bg-2").unwrap();
    let r = &ended.record;
    assert_eq!(r.state, JobState::Exited, "{r:?}");
    assert_eq!(r.exit_code, None, "{r:?}");
    let note = r.note.clone().unwrap_or_default();
    assert!(note.starts_with("never started"), "{note}");
    let log = std::fs::read_to_string(&r.log_path).unwrap_or_default();
    assert!(!log.contains("started"), "its command never ran: {log:?}");
    // bg-1 was let go: it runs, and its ending is read as before.
    let first = reg.get("bg-1").unwrap();
    assert!(first.record.is_running(), "{first:?}");
    reg.kill("bg-1", Duration::from_secs(2)).unwrap();
    until("nothing of the host's jobs left", || {
        marked_by(host).is_empty()
    });
}
