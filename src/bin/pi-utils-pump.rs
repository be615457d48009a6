//! The log pump process (`pi-utils-pump <log> <cuts> <max> <origin>`): a
//! background job's wrapper starts it beside the command, in the job's own
//! group, session and cgroup, to copy the job's output from a pipe (its
//! stdin) to the log, cutting before the bound (`src/shell/pump.rs`, whose
//! code and whose policy in `src/shell/log.rs` it compiles in as they are).
//! Descriptor 3, when open, is the wrapper's control socket.
//!
//! It outlives the host (jobs survive Pi), ignores the hang-up, interrupt
//! and terminate signals a kill sends the job's group (it ends when the
//! last writer of the pipe is gone, with everything they wrote in the log),
//! and dies by SIGKILL like any process of the job.

#[allow(dead_code)]
#[path = "../shell/defaults.rs"]
mod defaults;
#[allow(dead_code)]
#[path = "../shell/log.rs"]
mod log;
#[allow(dead_code)]
#[path = "../shell/pump.rs"]
mod pump;

use std::path::PathBuf;

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let number = |i: usize| args.get(i)?.to_str()?.parse::<u64>().ok();
    let (Some(max), Some(origin)) = (number(2), number(3)) else {
        eprintln!("usage: pi-utils-pump <log> <cuts> <max> <origin>");
        std::process::exit(2);
    };
    // Its paths are absolute: it pins no working directory.
    let _ = std::env::set_current_dir("/");
    for sig in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM, libc::SIGPIPE] {
        unsafe { libc::signal(sig, libc::SIG_IGN) };
    }
    let control =
        (unsafe { libc::fcntl(pump::CONTROL_FD, libc::F_GETFD) } >= 0).then_some(pump::CONTROL_FD);
    let cfg = pump::Config {
        log: PathBuf::from(&args[0]),
        cuts: PathBuf::from(&args[1]),
        max,
        origin,
    };
    if pump::run(0, control, cfg).is_err() {
        // The log cannot be written (a full disk, a removed directory):
        // the job is not killed by a pipe without a reader; its output is lost.
        pump::discard(0, control);
        std::process::exit(1);
    }
}
