//! The registry file: one JSON document with one job record per line.
//!
//! It is valid JSON for any reader, and the one-record-per-line layout lets
//! a damaged file (a crash mid-copy, a stray edit) be salvaged line by line.
//! Writes go to a temp file in the same directory and are renamed over the
//! old one, so a reader never sees half a file from us. Loading never fails:
//! what is readable is kept, the rest is reported, and a damaged original is
//! kept beside the sidecar (`<name>.corrupt`) before anything overwrites it.
//! Two processes may share one sidecar (two Pi processes on one session):
//! each rewrite happens under an advisory lock, after reading what the other
//! wrote, so neither loses the other's jobs.

use super::job::JobRecord;
use std::io::Write;
use std::path::{Path, PathBuf};

pub const VERSION: u64 = 1;
/// Far above any real registry; a bigger file is not ours.
const MAX_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, Default)]
pub struct Loaded {
    pub records: Vec<JobRecord>,
    /// Ids `bg-1` to `bg-<retired>` are never handed out again (see
    /// `Registry::retire_id`).
    pub retired: u64,
    /// One line per problem, for the user.
    pub problems: Vec<String>,
}

/// What the sidecar at `path` holds. `Err` (the registry then refuses to
/// open, so nothing writes over the file) when it exists but cannot be
/// read, is too large to be ours, or is damaged and no copy of it could be
/// kept.
pub fn load(path: &Path) -> Result<Loaded, String> {
    let mut out = Loaded::default();
    let refuse = |what: String| {
        format!(
            "{what}; it is left as it is until it can be read (no job was lost or written over)"
        )
    };
    let text = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(refuse(format!("cannot read it: {e}"))),
        Ok(m) if m.len() > MAX_BYTES => {
            return Err(refuse(format!(
                "it is {} bytes, too large to be a job registry",
                m.len()
            )))
        }
        Ok(_) => match std::fs::read(path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => return Err(refuse(format!("cannot read it: {e}"))),
        },
    };
    if text.trim().is_empty() {
        return Ok(out);
    }
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(doc) => load_document(doc, &mut out),
        Err(e) => {
            out.problems.push(format!(
                "{} is not valid JSON ({e}); recovering line by line",
                path.display()
            ));
            salvage(&text, &mut out);
        }
    }
    dedupe(&mut out);
    if !out.problems.is_empty() {
        let copy = keep_damaged_copy(path).map_err(|e| {
            refuse(format!(
                "it is damaged and no copy of it could be kept: {e}"
            ))
        })?;
        out.problems
            .push(format!("the original file was kept as {}", copy.display()));
    }
    Ok(out)
}

fn load_document(doc: serde_json::Value, out: &mut Loaded) {
    let version = doc.get("version").and_then(|v| v.as_u64());
    if version.is_some_and(|v| v > VERSION) {
        out.problems.push(format!(
            "registry version {} is newer than this build understands ({VERSION}); reading what it can",
            version.unwrap_or_default()
        ));
    }
    out.retired = doc.get("retired").and_then(|r| r.as_u64()).unwrap_or(0);
    let Some(jobs) = doc.get("jobs").and_then(|j| j.as_array()) else {
        out.problems.push("registry has no \"jobs\" list".into());
        return;
    };
    for (i, job) in jobs.iter().enumerate() {
        match serde_json::from_value::<JobRecord>(job.clone()) {
            Ok(rec) => out.records.push(rec),
            Err(e) => out.problems.push(format!("job #{} unreadable: {e}", i + 1)),
        }
    }
}

fn salvage(text: &str, out: &mut Loaded) {
    // The document's first line holds the retired ids, when any were.
    let retired = text
        .lines()
        .next()
        .and_then(|l| l.split("\"retired\":").nth(1));
    let digits = retired.map(|r| r.split(|c: char| !c.is_ascii_digit()).next().unwrap_or(""));
    out.retired = digits.and_then(|d| d.parse().ok()).unwrap_or(0);
    for (n, line) in text.lines().enumerate() {
        let line = line.trim().trim_end_matches(',');
        if !line.starts_with("{\"id\"") {
            continue;
        }
        match serde_json::from_str::<JobRecord>(line) {
            Ok(rec) => out.records.push(rec),
            Err(e) => out.problems.push(format!("line {} unreadable: {e}", n + 1)),
        }
    }
}

fn dedupe(out: &mut Loaded) {
    let mut seen = std::collections::HashSet::new();
    let mut dropped = Vec::new();
    out.records.retain(|r| {
        let fresh = seen.insert(r.id.clone());
        if !fresh {
            dropped.push(r.id.clone());
        }
        fresh
    });
    for id in dropped {
        out.problems
            .push(format!("duplicate record for {id}; kept the first"));
    }
}

/// Copies the damaged file to `<name>.corrupt`, or `.corrupt.1`, `.2`, ...
/// when earlier damage was kept already: no copy is ever written over.
fn keep_damaged_copy(path: &Path) -> std::io::Result<PathBuf> {
    let bytes = std::fs::read(path)?;
    for n in 0..1000u32 {
        let copy = match n {
            0 => with_suffix(path, ".corrupt"),
            n => with_suffix(path, &format!(".corrupt.{n}")),
        };
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&copy);
        match file {
            Ok(mut f) => {
                if let Err(e) = f.write_all(&bytes).and_then(|()| f.sync_all()) {
                    drop(f);
                    let _ = std::fs::remove_file(&copy);
                    return Err(e);
                }
                return Ok(copy);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(
        "1000 damaged copies are kept already",
    ))
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    s.into()
}

/// What a sidecar holds now, read without side effects (no damaged copy,
/// no report): what another process wrote since we loaded it.
pub fn current(path: &Path) -> Loaded {
    let mut out = Loaded::default();
    let Ok(text) = std::fs::read_to_string(path) else {
        return out;
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(doc) => load_document(doc, &mut out),
        Err(_) => salvage(&text, &mut out),
    }
    out
}

/// How long a process waits for another one's read-modify-write of the
/// same sidecar (a few milliseconds each) before it gives up and says so.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The advisory lock that serializes read-modify-write of the sidecar
/// between processes: an exclusive `flock` on `<sidecar>.lock`, released
/// when the returned file is dropped.
pub fn lock(path: &Path) -> Result<std::fs::File, String> {
    let lock_path = with_suffix(path, ".lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| format!("cannot open {}: {e}", lock_path.display()))?;
    let until = std::time::Instant::now() + LOCK_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < until => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(format!(
                    "{} is held by another process for more than {} s; the job registry was not updated",
                    lock_path.display(),
                    LOCK_WAIT.as_secs()
                ))
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(format!("cannot lock {}: {e}", lock_path.display()))
            }
        }
    }
}

/// One record as it appears on its line.
pub fn record_line(r: &JobRecord) -> String {
    // A record of strings and numbers always serializes.
    serde_json::to_string(r).unwrap_or_default()
}

pub fn render_lines<S: AsRef<str>>(lines: &[S]) -> String {
    render_document(lines, 0)
}

/// The document: its version, the retired ids (when any were) and one
/// record per line.
fn render_document<S: AsRef<str>>(lines: &[S], retired: u64) -> String {
    let mut s = match retired {
        0 => format!("{{\"version\":{VERSION},\"jobs\":[\n"),
        n => format!("{{\"version\":{VERSION},\"retired\":{n},\"jobs\":[\n"),
    };
    for (i, line) in lines.iter().enumerate() {
        s.push_str(line.as_ref());
        s.push_str(if i + 1 < lines.len() { ",\n" } else { "\n" });
    }
    s.push_str("]}\n");
    s
}

pub fn render(records: &[JobRecord]) -> String {
    render_lines(&records.iter().map(record_line).collect::<Vec<_>>())
}

pub fn save(path: &Path, records: &[JobRecord]) -> std::io::Result<()> {
    save_lines(path, &records.iter().map(record_line).collect::<Vec<_>>())
}

pub fn save_lines<S: AsRef<str>>(path: &Path, lines: &[S]) -> std::io::Result<()> {
    save_document(path, lines, 0)
}

/// Temp file + rename. The temp name carries our pid so two processes that
/// share a sidecar never write into each other's temp file.
pub fn save_document<S: AsRef<str>>(path: &Path, lines: &[S], retired: u64) -> std::io::Result<()> {
    let tmp = with_suffix(path, &format!(".{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(render_document(lines, retired).as_bytes())?;
        drop(f);
        super::failpoint("sidecar.written");
        std::fs::rename(&tmp, path)?;
        super::failpoint("sidecar.renamed");
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::job::JobState;

    fn rec(id: &str) -> JobRecord {
        serde_json::from_value(serde_json::json!({
            "id": id, "command": "sleep 1", "cwd": "/", "shell": "bash", "logPath": "/tmp/x.log",
            "exitPath": "/tmp/x.log.exit", "pid": 123, "pgid": 123, "startedAtMs": 1, "state": "running"
        }))
        .unwrap()
    }

    #[test]
    fn round_trips_and_a_missing_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("jobs.json");
        assert!(load(&p).unwrap().records.is_empty() && load(&p).unwrap().problems.is_empty());
        save(&p, &[rec("bg-1"), rec("bg-2")]).unwrap();
        let l = load(&p).unwrap();
        assert_eq!(l.records, vec![rec("bg-1"), rec("bg-2")]);
        assert!(l.problems.is_empty());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp file left"
        );
    }

    #[test]
    fn a_truncated_file_keeps_complete_records_and_reports_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("jobs.json");
        let full = render(&[rec("bg-1"), rec("bg-2"), rec("bg-3")]);
        let cut = &full[..full.len() - 40];
        std::fs::write(&p, cut).unwrap();
        let l = load(&p).unwrap();
        assert_eq!(
            l.records.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            ["bg-1", "bg-2"]
        );
        assert!(l.problems.iter().any(|m| m.contains("not valid JSON")));
        assert!(l.problems.iter().any(|m| m.contains("line 4 unreadable")));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("jobs.json.corrupt")).unwrap(),
            cut
        );
    }

    #[test]
    fn a_bad_record_in_valid_json_is_skipped_alone() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("jobs.json");
        let mut bad = serde_json::to_value(rec("bg-2")).unwrap();
        bad.as_object_mut().unwrap().remove("pid");
        let doc =
            serde_json::json!({"version": 1, "jobs": [rec("bg-1"), bad, rec("bg-3"), rec("bg-1")]});
        std::fs::write(&p, doc.to_string()).unwrap();
        let l = load(&p).unwrap();
        assert_eq!(
            l.records.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            ["bg-1", "bg-3"]
        );
        assert!(l
            .problems
            .iter()
            .any(|m| m.contains("job #2") && m.contains("pid")));
        assert!(l
            .problems
            .iter()
            .any(|m| m.contains("duplicate record for bg-1")));
        assert_eq!(l.records[0].state, JobState::Running);
    }

    #[test]
    fn each_damage_is_kept_in_a_numbered_copy_and_none_is_written_over() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("jobs.json");
        std::fs::write(&p, b"first damage").unwrap();
        load(&p).unwrap();
        std::fs::write(&p, b"second damage").unwrap();
        let l = load(&p).unwrap();
        assert!(l
            .problems
            .iter()
            .any(|m| m.ends_with("jobs.json.corrupt.1")));
        let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert_eq!(read("jobs.json.corrupt"), "first damage");
        assert_eq!(read("jobs.json.corrupt.1"), "second damage");
    }

    #[test]
    fn a_damaged_file_whose_copy_cannot_be_kept_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("jobs.json");
        std::fs::write(&p, b"damage").unwrap();
        for n in 0..1000 {
            let name = match n {
                0 => "jobs.json.corrupt".to_string(),
                n => format!("jobs.json.corrupt.{n}"),
            };
            std::fs::write(dir.path().join(name), b"older").unwrap();
        }
        let err = load(&p).unwrap_err();
        assert!(err.contains("no copy of it could be kept"), "{err}");
        assert_eq!(std::fs::read(&p).unwrap(), b"damage");
    }

    #[test]
    fn a_file_that_cannot_be_read_is_refused_not_loaded_empty() {
        let dir = tempfile::tempdir().unwrap();
        // A directory: it exists, and reading it fails, as an unreadable
        // file does for a user who is not root.
        let p = dir.path().join("jobs.json");
        std::fs::create_dir(&p).unwrap();
        let err = load(&p).unwrap_err();
        assert!(err.starts_with("cannot read it: "), "{err}");
    }

    #[test]
    fn garbage_loads_empty_with_a_problem() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("jobs.json");
        std::fs::write(&p, b"\x00\xFFnot json at all").unwrap();
        let l = load(&p).unwrap();
        assert!(l.records.is_empty());
        assert!(!l.problems.is_empty());
    }
}
