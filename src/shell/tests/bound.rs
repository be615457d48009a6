//! The log bound with the log pump: the log at or under its bound at every
//! moment (a flood on busy cores, a host killed mid-flood), output complete
//! once the exit file says the command ended, read cursors across the
//! pump's cuts, no pump left by a kill; and jobs without a pump as before.
//!
//! The pump is `target/<profile>/pi-utils-pump`, which `cargo test` builds
//! (an integration test needs it); `cargo test --lib` alone does not, and
//! these tests then say so.

use super::super::identity;
use super::super::job::JobView;
use super::super::log::Keep;
use super::super::pump;
use super::faults::{host_command, marked_by, run_host_with, HOST_COMMAND, HOST_MAX_LOG};
use super::{until, Fixture};
use crate::shell::registry::{Registry, WaitFor};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn pumped(v: &JobView) {
    assert!(
        v.record.pump,
        "the job has no log pump: build it first (`cargo build --bin pi-utils-pump`; `cargo test` does)"
    );
}

/// Two processes spinning on the machine's cores while they live.
struct Load(Vec<std::process::Child>);

impl Load {
    fn new() -> Load {
        Load(
            (0..2)
                .map(|_| {
                    std::process::Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .unwrap()
                })
                .collect(),
        )
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Samples the size of `log` without pause on a thread of its own until
/// `done` returns true; the largest size seen and the number of samples.
fn largest_while(log: &Path, mut done: impl FnMut() -> bool) -> (u64, u64) {
    let stop = AtomicBool::new(false);
    let biggest = AtomicU64::new(0);
    let samples = AtomicU64::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                let size = std::fs::metadata(log).map(|m| m.len()).unwrap_or(0);
                biggest.fetch_max(size, Ordering::Relaxed);
                samples.fetch_add(1, Ordering::Relaxed);
                std::thread::yield_now();
            }
        });
        let t = Instant::now();
        while !done() {
            assert!(
                t.elapsed() < Duration::from_secs(180),
                "the flood did not end"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        stop.store(true, Ordering::Relaxed);
    });
    (biggest.into_inner(), samples.into_inner())
}

#[test]
fn a_flood_on_busy_cores_never_makes_the_log_bigger_than_the_bound() {
    let f = Fixture::new();
    let _load = Load::new();
    const BOUND: u64 = 4 << 20;
    const FLOOD: u64 = 200 << 20;
    let mut req = f.req(&format!(
        "yes 'flood line of output text' | head -c {FLOOD}"
    ));
    req.max_log_bytes = Some(BOUND);
    let v = f.reg.spawn(req).unwrap();
    pumped(&v);
    let log = PathBuf::from(&v.record.log_path);
    let id = v.record.id.clone();
    let (biggest, samples) = largest_while(&log, || !f.reg.get(&id).unwrap().record.is_running());
    let v = f.wait(&id);
    eprintln!("largest {biggest} of bound {BOUND} over {samples} samples");
    assert!(samples > 100, "{samples} samples");
    assert!(
        biggest <= BOUND,
        "the log reached {biggest} bytes, bound {BOUND}"
    );
    assert!(v.record.log_dropped > FLOOD / 2, "{:?}", v.record);
    assert_eq!(
        v.log_bytes - v.record.log_marker + v.record.log_dropped,
        FLOOD,
        "every byte is kept or counted"
    );
}

/// The exit file is written once the pump has the command's output in the
/// log: a job seen ended has all of it there, for outputs larger than the
/// pipe holds and the pump moves at once, and when the pump is slow (here
/// stopped for a while just as the command writes its output and ends).
#[test]
fn when_the_main_process_has_ended_its_whole_output_is_in_the_log() {
    let f = Fixture::new();
    for i in 0..30u64 {
        let n = 1 + i * 37_013;
        let v = f
            .reg
            .spawn(f.req(&format!("head -c {n} /dev/zero")))
            .unwrap();
        pumped(&v);
        let (v, _) = f
            .reg
            .wait_for(
                &v.record.id,
                WaitFor::Leader,
                Some(Duration::from_secs(10)),
                &|| false,
            )
            .unwrap();
        assert_eq!(v.log_bytes, n, "job {i}: {:?}", v.record);
    }
    let v = f
        .reg
        .spawn(f.req("sleep 0.5; head -c 200000 /dev/zero"))
        .unwrap();
    until("the pump to run", || pump_of(&v.record.marker).is_some());
    let pump = pump_of(&v.record.marker).unwrap();
    unsafe { libc::kill(pump, libc::SIGSTOP) };
    let resumed = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        unsafe { libc::kill(pump, libc::SIGCONT) };
    });
    let (v, _) = f
        .reg
        .wait_for(
            &v.record.id,
            WaitFor::Leader,
            Some(Duration::from_secs(10)),
            &|| false,
        )
        .unwrap();
    let size = v.log_bytes;
    resumed.join().unwrap();
    assert_eq!(size, 200_000, "ended with its output still in the pipe");
}

/// A pump is found by its binary among the live processes carrying `marker`.
fn pump_of(marker: &str) -> Option<i32> {
    let needle = format!("{}={marker}", super::super::spawn::MARKER_NAME);
    identity::all_pids().into_iter().find(|&pid| {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
        exe.file_name().is_some_and(|n| n == pump::BINARY)
            && identity::environ_contains(pid, needle.as_bytes())
            && identity::proc_info(pid).is_some_and(|p| !p.zombie)
    })
}

#[test]
fn a_kill_leaves_no_pump_behind_and_no_report_names_it() {
    let f = Fixture::new();
    for command in ["yes", "sleep 300", "sleep 300 & exit 0"] {
        let v = f.reg.spawn(f.req(command)).unwrap();
        pumped(&v);
        let marker = v.record.marker.clone();
        until("the pump to run", || pump_of(&marker).is_some());
        let pump = pump_of(&marker).unwrap();
        if command.ends_with("exit 0") {
            until("the job's sleep to be tracked", || {
                !f.reg.get(&v.record.id).unwrap().record.members.is_empty()
            });
            let members = f.reg.get(&v.record.id).unwrap().record.members;
            assert!(
                members.iter().all(|m| m.pid != pump),
                "{command}: {members:?}"
            );
        }
        let report = f.reg.kill(&v.record.id, Duration::from_secs(2)).unwrap();
        assert!(
            report.survivors.is_empty(),
            "{command}: {:?}",
            report.survivors
        );
        assert!(!report.escapees.contains(&pump), "{command}");
        until(&format!("{command}: the pump to be gone"), || {
            pump_of(&marker).is_none()
        });
        assert!(!f.reg.get(&v.record.id).unwrap().record.is_running());
    }
}

/// With no host left (no monitor, no brake), the pump alone keeps the log
/// under its bound.
#[test]
fn a_host_killed_mid_flood_leaves_the_pump_bounding_the_log() {
    let f = Fixture::new();
    const BOUND: u64 = 4 << 20;
    let sidecar = f.path("flood-host/jobs.json");
    std::fs::create_dir_all(sidecar.parent().unwrap()).unwrap();
    let mut host = host_command(&sidecar);
    host.env(HOST_COMMAND, "yes 'flood line of output text'")
        .env(HOST_MAX_LOG, BOUND.to_string());
    let (host, ready) = run_host_with(host, None);
    assert!(ready);
    let rec = super::super::sidecar::load(&sidecar).unwrap().records[0].clone();
    assert!(rec.pump, "the job has no log pump: {rec:?}");
    let log = PathBuf::from(&rec.log_path);
    let cuts = pump::cuts_path_for(&log);
    let t = Instant::now();
    let (biggest, _) = largest_while(&log, || t.elapsed() > Duration::from_secs(3));
    let dropped = pump::settled_record(&cuts).map_or(0, |c| c.dropped);
    assert!(
        biggest <= BOUND,
        "the log reached {biggest} bytes, bound {BOUND}"
    );
    assert!(
        dropped > 4 * BOUND,
        "the flood went on after the host died: {dropped} dropped"
    );
    let reg = Registry::open(&sidecar).unwrap();
    for j in reg.list().iter().filter(|j| j.record.is_running()) {
        reg.kill(&j.record.id, Duration::from_secs(2)).unwrap();
    }
    until("the host's jobs and pumps to be gone", || {
        marked_by(host).is_empty()
    });
}

/// Reads a flooding job's log with `read_new` while the pump cuts it: the
/// lines come in order and each once; where the reader fell behind a cut
/// it reads the marker line and goes on at the newest output.
#[test]
fn read_new_across_the_pumps_cuts_returns_each_kept_line_once_and_in_order() {
    let f = Fixture::new();
    const BOUND: u64 = 2 << 20;
    let mut req = f.req("seq 1 3000000");
    req.max_log_bytes = Some(BOUND);
    let v = f.reg.spawn(req).unwrap();
    pumped(&v);
    let id = v.record.id.clone();
    let mut text = String::new();
    loop {
        let running = f.reg.get(&id).unwrap().record.is_running();
        let chunk = f.reg.read_new(&id, 1 << 20, Keep::Head).unwrap();
        text.push_str(&chunk.text);
        if !running && chunk.remaining == 0 && chunk.text.is_empty() {
            break;
        }
        // Slower than the job writes: the reader falls behind the cuts.
        std::thread::sleep(Duration::from_millis(1));
    }
    let v = f.reg.get(&id).unwrap();
    assert!(v.record.log_dropped > 0, "the log was cut: {:?}", v.record);
    let segments: Vec<&str> = text.split("\n[pi-utils: ").collect();
    let mut last = 0u64;
    for (i, segment) in segments.iter().enumerate() {
        // After a marker: the rest of the marker line, then maybe the end
        // of a line the marker overwrote; before a marker, maybe a line it
        // cut short.
        let body = match i {
            0 => segment,
            _ => segment.split_once("]\n").map_or("", |(_, b)| b),
        };
        let lines: Vec<&str> = body.split('\n').collect();
        let whole =
            |k: usize| (i == 0 || k > 0) && (i + 1 == segments.len() || k + 1 < lines.len());
        let mut run: Option<u64> = None;
        for (k, line) in lines.iter().enumerate().filter(|&(k, _)| whole(k)) {
            if line.is_empty() && k + 1 == lines.len() {
                continue;
            }
            let n: u64 = line
                .parse()
                .unwrap_or_else(|_| panic!("not a line of seq: {line:?}"));
            if let Some(prev) = run {
                assert_eq!(n, prev + 1, "a run of lines goes on one by one");
            }
            assert!(n > last, "{n} after {last}: read twice or out of order");
            (run, last) = (Some(n), n);
        }
    }
    assert_eq!(last, 3_000_000, "the newest output is read");
    assert!(
        segments.len() > 1,
        "the reader fell behind a cut at least once"
    );
}

#[test]
fn without_the_pump_a_job_writes_its_log_itself_and_the_registry_bounds_it() {
    let f = Fixture::new();
    let mut req = f.req("seq 1 1000000");
    req.pump = false;
    let v = f.reg.spawn(req).unwrap();
    assert!(!v.record.pump && v.record.log_pipe.is_none());
    assert!(pump_of(&v.record.marker).is_none());
    let v = f.wait(&v.record.id);
    assert_eq!((v.log_bytes, v.record.log_dropped), (6_888_896, 0));
    const BOUND: u64 = 4 << 20;
    const FLOOD: u64 = 64 << 20;
    let mut req = f.req(&format!("head -c {FLOOD} /dev/zero"));
    req.pump = false;
    req.max_log_bytes = Some(BOUND);
    let v = f.wait(&f.reg.spawn(req).unwrap().record.id);
    std::thread::sleep(Duration::from_millis(100));
    let v2 = f.reg.get(&v.record.id).unwrap();
    assert!(v2.record.log_dropped > 0);
    assert_eq!(
        v2.log_bytes - v2.record.log_marker + v2.record.log_dropped,
        FLOOD
    );
}
