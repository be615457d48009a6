//! A cgroup v2 child per job, where the host lets us make one: the only
//! tracking a process cannot leave. `setsid`, a double fork, `env -i` and a
//! re-parent to init all keep a process in the cgroup it was born in, so
//! `cgroup.procs` lists every process the job started and `cgroup.kill`
//! ends them in one write, without a race against a process forking.
//!
//! The child goes under the cgroup this process runs in (systemd delegates
//! a user's own scopes to them, and a container's root user owns its
//! hierarchy). Where that is not writable, the hierarchy is v1 only, or the
//! platform is not Linux, [`JobCgroup::create`] fails and the registry
//! tracks the job by the process-tree scan instead.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Names of our cgroups start with this, so a sweep never removes another
/// program's (and `rmdir` only ever removes an empty one).
pub const PREFIX: &str = "pi-utils-job.";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobCgroup {
    dir: PathBuf,
}

impl JobCgroup {
    /// Creates `<our cgroup>/pi-utils-job.<name>`; `name` must be unique
    /// on this machine for this boot (the job's marker is).
    pub fn create(name: &str) -> Result<JobCgroup, String> {
        let parent = own_cgroup_dir().ok_or("no writable cgroup v2 hierarchy")?;
        let dir = parent.join(format!("{PREFIX}{}", name.replace('/', "_")));
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let cg = JobCgroup { dir };
        if !cg.dir.join("cgroup.procs").is_file() {
            cg.remove();
            return Err("not a cgroup v2 directory".into());
        }
        Ok(cg)
    }

    /// The cgroup a record names, if it still exists.
    pub fn open(dir: &Path) -> Option<JobCgroup> {
        let named_ours = dir
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(PREFIX));
        (named_ours && dir.join("cgroup.procs").is_file()).then(|| JobCgroup {
            dir: dir.to_path_buf(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Moves `pid` (and, from then on, whatever it starts) into the cgroup.
    pub fn adopt(&self, pid: i32) -> Result<(), String> {
        let path = self.dir.join("cgroup.procs");
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| f.write_all(format!("{pid}\n").as_bytes()))
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Every process in the cgroup now (empty when it is gone).
    pub fn pids(&self) -> Vec<i32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// SIGKILL to every process in the cgroup at once (Linux 5.14+);
    /// false when the kernel has no `cgroup.kill`, and the caller signals
    /// the processes one by one.
    pub fn kill_all(&self) -> bool {
        std::fs::OpenOptions::new()
            .write(true)
            .open(self.dir.join("cgroup.kill"))
            .and_then(|mut f| f.write_all(b"1"))
            .is_ok()
    }

    /// Removes the cgroup once it is empty; a populated one stays (the
    /// kernel refuses), and is removed by a later call.
    pub fn remove(&self) -> bool {
        match std::fs::remove_dir(&self.dir) {
            Ok(()) => true,
            Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        }
    }
}

/// Removes the empty cgroups of jobs whose host process is gone (a host
/// that crashed, or whose jobs ended after it stopped looking). Only ours
/// by name, only empty ones (`rmdir` of a populated cgroup fails), and
/// never one of a live host. Once per process.
pub fn sweep_orphans() {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| {
        if let Some(parent) = own_cgroup_dir() {
            sweep_in(&parent);
        }
    });
}

fn sweep_in(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let host = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('.').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        match host {
            Some(pid)
                if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() =>
            {
                let _ = std::fs::remove_dir(e.path());
            }
            _ => {}
        }
    }
}

/// Whether jobs started now would get a cgroup (what the tests branch on).
pub fn usable() -> bool {
    let probe = format!("probe.{}", std::process::id());
    JobCgroup::create(&probe).is_ok_and(|cg| cg.remove())
}

/// The directory of the cgroup v2 this process belongs to, when there is a
/// v2 hierarchy mounted: `/proc/self/cgroup`'s `0::<path>` under the
/// `cgroup2` mount point from `/proc/self/mountinfo`.
fn own_cgroup_dir() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    if rel.ends_with(" (deleted)") || !rel.starts_with('/') {
        return None;
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mounts.lines().find_map(cgroup2_mount_point)?;
    let dir = mount.join(rel.trim_start_matches('/'));
    dir.is_dir().then_some(dir)
}

/// The mount point of a `mountinfo` line whose file system is `cgroup2`.
/// The fields after ` - ` are type, source, options; the mount point is the
/// fifth field, with spaces escaped as `\040`.
fn cgroup2_mount_point(line: &str) -> Option<PathBuf> {
    let (head, tail) = line.split_once(" - ")?;
    if tail.split(' ').next()? != "cgroup2" {
        return None;
    }
    let point = head.split(' ').nth(4)?;
    Some(PathBuf::from(unescape_mount(point)))
}

fn unescape_mount(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let octal = |j: usize| {
            b.get(j)
                .filter(|c| (b'0'..=b'7').contains(c))
                .map(|c| c - b'0')
        };
        if b[i] == b'\\' {
            if let (Some(x), Some(y), Some(z)) = (octal(i + 1), octal(i + 2), octal(i + 3)) {
                out.push(char::from(x * 64 + y * 8 + z));
                i += 4;
                continue;
            }
        }
        out.push(char::from(b[i]));
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_cgroup2_mount_in_a_mountinfo_line() {
        let v2 = "35 24 0:30 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate";
        assert_eq!(
            cgroup2_mount_point(v2),
            Some(PathBuf::from("/sys/fs/cgroup"))
        );
        let v1 = "36 24 0:31 / /sys/fs/cgroup/cpu rw shared:10 - cgroup cgroup rw,cpu";
        assert_eq!(cgroup2_mount_point(v1), None);
        let spaced = "1 2 0:3 / /mnt/my\\040cg rw - cgroup2 none rw";
        assert_eq!(
            cgroup2_mount_point(spaced),
            Some(PathBuf::from("/mnt/my cg"))
        );
    }

    #[test]
    fn the_sweep_removes_only_empty_cgroups_of_dead_hosts_named_by_us() {
        let t = tempfile::tempdir().unwrap();
        let me = std::process::id();
        // Above the kernel's pid limit: never a live process.
        let names = [
            format!("{PREFIX}999999999.1.0.bg-1"),
            format!("{PREFIX}{me}.1.0.bg-2"),
            format!("{PREFIX}999999998.1.0.bg-3"),
            "user.slice".to_string(),
        ];
        for n in &names {
            std::fs::create_dir(t.path().join(n)).unwrap();
        }
        std::fs::write(t.path().join(&names[2]).join("cgroup.procs"), "7\n").unwrap();
        sweep_in(t.path());
        let left: Vec<bool> = names.iter().map(|n| t.path().join(n).exists()).collect();
        assert_eq!(left, vec![false, true, true, true]);
    }

    #[test]
    fn a_directory_not_named_by_us_is_never_opened() {
        let t = tempfile::tempdir().unwrap();
        let foreign = t.path().join("user.slice");
        std::fs::create_dir(&foreign).unwrap();
        std::fs::write(foreign.join("cgroup.procs"), "").unwrap();
        assert_eq!(JobCgroup::open(&foreign), None);
        let ours = t.path().join(format!("{PREFIX}x"));
        std::fs::create_dir(&ours).unwrap();
        std::fs::write(ours.join("cgroup.procs"), "12\n13\n").unwrap();
        assert_eq!(JobCgroup::open(&ours).unwrap().pids(), vec![12, 13]);
    }
}
