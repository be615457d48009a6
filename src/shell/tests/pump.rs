//! The log pump's lock-free read of a job's cut offsets.

use super::{until, Fixture};
use std::time::{Duration, Instant};

/// The foreground log pump polls where the log was cut every 40 ms on
/// Node's main thread; a cut holds the registry lock for tens of ms. The
/// offsets it reads follow every cut and are read while the lock is held.
#[test]
fn cut_offsets_follow_the_cuts_and_are_read_while_the_registry_is_locked() {
    let f = Fixture::new();
    let mut req = f.req("head -c 30000000 /dev/zero; sleep 300");
    req.max_log_bytes = Some(4 << 20);
    let id = f.reg.spawn(req).unwrap().record.id;
    let cuts = f.reg.log_cuts(&id).unwrap();
    until("the log to be cut", || {
        let r = f.reg.get(&id).unwrap().record;
        r.log_trim_at.is_some() && cuts.get() == (r.log_trim_at, r.log_shift)
    });
    assert!(cuts.get().1 > 0);

    // The registry held as long as a slow cut holds it.
    let (held, release) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            f.reg
                .with_job(&id, |_| {
                    held.send(()).unwrap();
                    std::thread::sleep(Duration::from_millis(300));
                })
                .unwrap();
        });
        release.recv().unwrap();
        let t = Instant::now();
        let read = cuts.get();
        assert!(t.elapsed() < Duration::from_millis(50), "{:?}", t.elapsed());
        assert!(read.0.is_some());
    });
    f.reg.kill(&id, Duration::from_millis(200)).unwrap();
}
