//! Paths compared and named as bytes. `Path`'s own `cmp` and `file_name`
//! parse components for every call: over the index's table of the Linux
//! tree (whose files share one mtime, so every one is ordered by path) they
//! were 60 % of a glob's time.

use std::cmp::Ordering;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Whether `path` is `place` or lies below it, comparing bytes (paths a
/// walk spells from the same root, so no component parsing is needed).
pub fn at_or_below(path: &Path, place: &Path) -> bool {
    let (p, q) = (path.as_os_str().as_bytes(), place.as_os_str().as_bytes());
    p.starts_with(q) && (p.len() == q.len() || p[q.len()] == b'/')
}

/// `Path`'s own order (component by component) for the paths a walk
/// makes: a root joined with plain names, so no `.`, `..` or doubled
/// separator after the root that two paths share. Compared as bytes with
/// `/` below every other byte, which is the same order without parsing
/// components: sorting the Linux tree's table by `Path::cmp` took longer
/// than the walk.
pub fn path_order(a: &Path, b: &Path) -> Ordering {
    let (a, b) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
    let n = a.len().min(b.len());
    let mut i = 0;
    // Eight bytes at a time as words: a slice comparison is a call to
    // `memcmp`, and paths under one root share their first dozens of bytes.
    let word = |s: &[u8], i: usize| u64::from_ne_bytes(s[i..i + 8].try_into().unwrap_or([0; 8]));
    while i + 8 <= n && word(a, i) == word(b, i) {
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    let rank = |c: u8| if c == b'/' { 0 } else { c as u16 + 1 };
    match (a.get(i), b.get(i)) {
        (Some(&x), Some(&y)) => rank(x).cmp(&rank(y)),
        _ => a.len().cmp(&b.len()),
    }
}

/// `Path::file_name` as bytes: what follows the last `/`, found from the
/// end; `Path`'s own parse only for a path that ends in `/`, `.` or `..`.
pub fn file_name_bytes(path: &Path) -> Option<&[u8]> {
    let bytes = path.as_os_str().as_bytes();
    let name = memchr::memrchr(b'/', bytes).map_or(bytes, |i| &bytes[i + 1..]);
    match name {
        b"" | b"." | b".." => path.file_name().map(|n| n.as_bytes()),
        _ => Some(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn path_order_is_paths_own_order(
            a in proptest::collection::vec("[a-c.\\x01_-]{1,3}", 1..5),
            b in proptest::collection::vec("[a-c.\\x01_-]{1,3}", 1..5),
            root in "(/r|r|\\./r|/r/\\./s|\\.\\./r/)",
        ) {
            // Walk-made paths: a root, then plain names.
            let plain = |v: &Vec<String>| v.iter().all(|n| !n.contains('/') && n != "." && n != "..");
            prop_assume!(plain(&a) && plain(&b));
            let (a, b) = (Path::new(&root).join(a.join("/")), Path::new(&root).join(b.join("/")));
            prop_assert_eq!(path_order(&a, &b), a.cmp(&b));
        }

        #[test]
        fn file_name_bytes_is_paths_own_file_name(path in "[/a.]{0,7}") {
            let path = Path::new(&path);
            prop_assert_eq!(file_name_bytes(path), path.file_name().map(|n| n.as_bytes()));
        }
    }

    #[test]
    fn path_order_puts_a_directory_before_its_longer_named_siblings() {
        let cases = [
            ("/r/a/b", "/r/a-b"),
            ("/r/a/b", "/r/a\u{1}"),
            ("/r/a", "/r/a/b"),
            ("/r/ab/c", "/r/abc"),
        ];
        for (x, y) in cases {
            let (x, y) = (Path::new(x), Path::new(y));
            assert_eq!(path_order(x, y), x.cmp(y), "{x:?} vs {y:?}");
            assert_eq!(path_order(y, x), y.cmp(x), "{y:?} vs {x:?}");
        }
    }
}
