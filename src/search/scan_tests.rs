//! The scan's shared parts under load and at their edges: searches running
//! at once share the process's file buffers, a cancelled one leaves the
//! others whole, files are read without an fstat up to the first buffer and
//! past it, and compiled ignore rules are reused only while their files are
//! unchanged.

use super::cancel::CancelToken;
use super::grep::{run, GrepMode, GrepOptions};
use super::results::Hit;
use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

fn tree(files: usize) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for i in 0..files {
        let d = t.path().join(format!("d{}", i % 9));
        fs::create_dir_all(&d).unwrap();
        fs::write(
            d.join(format!("f{i:03}.txt")),
            format!("alpha {i}\nbeta\nalpha\n"),
        )
        .unwrap();
    }
    t
}

fn lines(root: &Path, opts: &GrepOptions, cancel: &CancelToken) -> (Vec<String>, bool) {
    let mut hits: Vec<Hit> = Vec::new();
    let s = run(root, None, opts, cancel, |b| {
        hits.extend(b);
        true
    })
    .unwrap();
    let text = hits
        .iter()
        .map(|h| format!("{}:{}:{}:{}", h.path.text, h.line, h.count, h.text))
        .collect();
    (text, s.cancelled)
}

fn opts(pattern: &str, mode: GrepMode, limit: Option<u64>) -> GrepOptions {
    GrepOptions {
        pattern: pattern.into(),
        mode,
        limit,
        ..Default::default()
    }
}

#[test]
fn twelve_searches_at_once_give_what_each_gives_alone() {
    let t = tree(300);
    let cases: Vec<GrepOptions> = (0..12)
        .map(|i| match i % 3 {
            0 => opts("alpha", GrepMode::Content, Some(500)),
            1 => opts(&format!("alpha {i}"), GrepMode::Files, None),
            _ => opts("beta", GrepMode::Count, None),
        })
        .collect();
    let alone: Vec<_> = cases
        .iter()
        .map(|o| lines(t.path(), o, &CancelToken::new(None)).0)
        .collect();
    let together: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .iter()
            .map(|o| s.spawn(|| lines(t.path(), o, &CancelToken::new(None)).0))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(together, alone);
    assert_eq!(alone[0].len(), 500);
}

#[test]
fn cancelling_one_search_leaves_the_others_whole() {
    let t = tree(400);
    let o = opts("alpha", GrepMode::Content, None);
    let (want, _) = lines(t.path(), &o, &CancelToken::new(None));
    let cancelled = CancelToken::new(None);
    cancelled.cancel();
    std::thread::scope(|s| {
        let others: Vec<_> = (0..3)
            .map(|_| s.spawn(|| lines(t.path(), &o, &CancelToken::new(None))))
            .collect();
        let stopped = s.spawn(|| lines(t.path(), &o, &cancelled));
        let (_, was_cancelled) = stopped.join().unwrap();
        assert!(was_cancelled);
        for h in others {
            let (got, c) = h.join().unwrap();
            assert!(!c);
            assert_eq!(got, want);
        }
    });
}

#[test]
fn files_past_the_first_read_and_past_the_whole_read_limit_are_searched_to_the_end() {
    let t = tempfile::tempdir().unwrap();
    // 200 KB: more than the first read, read whole after an fstat.
    let mut mid = "filler line\n".repeat(200_000 / 12);
    mid.push_str("needle mid\n");
    fs::write(t.path().join("mid.txt"), &mid).unwrap();
    // 9 MB: over the whole-read limit, streamed on from the first read.
    let mut big = String::from("needle head\n");
    big.push_str(&"filler line\n".repeat(9_000_000 / 12));
    big.push_str("needle tail\n");
    fs::write(t.path().join("big.txt"), &big).unwrap();
    let (got, _) = lines(
        t.path(),
        &opts("needle", GrepMode::Content, None),
        &CancelToken::new(None),
    );
    let big_lines = big.lines().count();
    let mid_lines = mid.lines().count();
    assert_eq!(
        got,
        vec![
            "big.txt:1:1:needle head".to_string(),
            format!("big.txt:{big_lines}:1:needle tail"),
            format!("mid.txt:{mid_lines}:1:needle mid"),
        ]
    );
}

#[test]
fn an_edited_ignore_file_is_seen_by_the_next_search() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    fs::write(r.join("a.log"), "needle\n").unwrap();
    fs::write(r.join("b.txt"), "needle\n").unwrap();
    let gi = r.join(".gitignore");
    let set = |body: &str| {
        fs::write(&gi, body).unwrap();
        // Old enough to be cached.
        let old = SystemTime::now() - Duration::from_secs(3600);
        fs::File::options()
            .write(true)
            .open(&gi)
            .unwrap()
            .set_modified(old)
            .unwrap();
    };
    let ignored_paths = || {
        let mut hits: Vec<Hit> = Vec::new();
        run(
            r,
            None,
            &opts("needle", GrepMode::Files, Some(10)),
            &CancelToken::new(None),
            |b| {
                hits.extend(b);
                true
            },
        )
        .unwrap();
        hits.iter()
            .filter(|h| h.ignored)
            .map(|h| h.path.text.clone())
            .collect::<Vec<_>>()
    };
    set("*.log\n");
    // Past the racy window, so the compiled rules are kept and reused.
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(ignored_paths(), vec!["a.log"]);
    assert_eq!(ignored_paths(), vec!["a.log"]);
    // Same size, same (old) mtime: only the change time and content differ.
    set("*.txt\n");
    assert_eq!(ignored_paths(), vec!["b.txt"]);
}
