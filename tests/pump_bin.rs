//! The `pi-utils-pump` binary on its own: a stream on its stdin far past the
//! bound ends as a log at or under the bound with every byte kept or
//! counted, and a wrong command line is refused. Being an integration
//! test, it also makes `cargo test` build the binary, which the shell's
//! tests (src/shell/tests/bound.rs) start jobs with.

use std::io::Write;
use std::process::{Command, Stdio};

const PUMP: &str = env!("CARGO_BIN_EXE_pi-utils-pump");

#[test]
fn a_stream_past_the_bound_leaves_a_log_within_it_with_every_byte_kept_or_counted() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("job.log");
    let cuts = dir.path().join("job.log.cuts");
    const BOUND: u64 = 2 << 20;
    let mut child = Command::new(PUMP)
        .arg(&log)
        .arg(&cuts)
        .arg(BOUND.to_string())
        .arg("0")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut written = 0u64;
    for i in 0..200_000u64 {
        let line = format!("line {i:08} of the stream\n");
        input.write_all(line.as_bytes()).unwrap();
        written += line.len() as u64;
    }
    drop(input);
    assert!(child.wait().unwrap().success());
    let size = std::fs::metadata(&log).unwrap().len();
    assert!(size <= BOUND, "{size} past {BOUND}");
    // The record: seq, at, shift, dropped, marker, check (little-endian u64s).
    let rec = std::fs::read(&cuts).unwrap();
    let word = |i: usize| u64::from_le_bytes(rec[i * 8..i * 8 + 8].try_into().unwrap());
    let (dropped, marker) = (word(3), word(4));
    assert!(dropped > 0);
    assert_eq!(size - marker + dropped, written);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("line 00000000 of the stream\n"));
    assert!(text.ends_with("line 00199999 of the stream\n"));
}

#[test]
fn a_wrong_command_line_is_refused() {
    let out = Command::new(PUMP).arg("only-a-log").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage"));
}
