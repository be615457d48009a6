//! The inverse of `display.rs`: from a path as grep and glob print it (the
//! display form of a non-UTF-8 name, `a\u{FFFD}.txt#b=ff`) back to the file,
//! so a model can pass a printed path to `outline`.

use super::display::{display_bytes, os_bytes};
use std::path::{Path, PathBuf};

/// The file `given` names: literally, or as the display form of a path
/// whose bytes are not UTF-8.
pub fn find_by_display(cwd: &Path, given: &str) -> Option<PathBuf> {
    let literal = cwd.join(given);
    if literal.exists() {
        return Some(literal);
    }
    // A literal name that merely looks like a display form is shown with
    // `#b=-` appended.
    if let Some(name) = given.strip_suffix("#b=-") {
        let p = cwd.join(name);
        return p.exists().then_some(p);
    }
    if !given.contains("#b=") || !given.contains('\u{FFFD}') {
        return None;
    }
    let lossy = &given[..given.rfind("#b=")?];
    let parts: Vec<&str> = lossy.split('/').collect();
    let mut listings = 64; // directory reads allowed: bounds a pathological path
    find_display(cwd, given, &parts, 0, Vec::new(), &mut listings)
}

/// Depth-first over the components: a component with U+FFFD may stand for
/// any directory entry with that lossy name; the full byte path is accepted
/// when its display form is exactly `given`. `bytes` holds components
/// `..index` joined by `/` (an absolute path's first component is empty).
#[cfg(unix)]
fn find_display(
    cwd: &Path,
    given: &str,
    parts: &[&str],
    index: usize,
    bytes: Vec<u8>,
    listings: &mut usize,
) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let path_of = |b: &[u8]| cwd.join(std::ffi::OsStr::from_bytes(b));
    let Some(part) = parts.get(index) else {
        let p = path_of(&bytes);
        return (display_bytes(&bytes).text == given && p.exists()).then_some(p);
    };
    let join = |name: &[u8]| {
        let mut b = bytes.clone();
        if index > 0 {
            b.push(b'/');
        }
        b.extend_from_slice(name);
        b
    };
    if !part.contains('\u{FFFD}') {
        return find_display(
            cwd,
            given,
            parts,
            index + 1,
            join(part.as_bytes()),
            listings,
        );
    }
    if *listings == 0 {
        return None;
    }
    *listings -= 1;
    let dir = match (index, bytes.is_empty()) {
        (0, _) => cwd.to_path_buf(),
        (_, true) => PathBuf::from("/"),
        _ => path_of(&bytes),
    };
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name();
        let raw = os_bytes(&name);
        if String::from_utf8_lossy(&raw) == *part {
            if let Some(p) = find_display(cwd, given, parts, index + 1, join(&raw), listings) {
                return Some(p);
            }
        }
    }
    None
}

#[cfg(not(unix))]
fn find_display(
    _: &Path,
    _: &str,
    _: &[&str],
    _: usize,
    _: Vec<u8>,
    _: &mut usize,
) -> Option<PathBuf> {
    None // Raw name bytes exist only on Unix (see display.rs).
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn a_printed_non_utf8_name_finds_its_file() {
        let t = tempfile::tempdir().unwrap();
        let name = std::ffi::OsStr::from_bytes(b"a\xff.txt");
        std::fs::create_dir(t.path().join("d")).unwrap();
        std::fs::write(t.path().join("d").join(name), "x").unwrap();
        let shown = format!("d/{}", display_bytes(b"a\xff.txt").text);
        assert_eq!(
            find_by_display(t.path(), &shown),
            Some(t.path().join("d").join(name))
        );
        // Another invalid byte shows differently and names no file.
        let other = format!("d/{}", display_bytes(b"a\xfe.txt").text);
        assert_eq!(find_by_display(t.path(), &other), None);
    }

    #[test]
    fn a_literal_name_that_looks_like_a_display_form_is_found_by_its_escape() {
        let t = tempfile::tempdir().unwrap();
        let literal = "a\u{FFFD}.txt#b=ff";
        std::fs::write(t.path().join(literal), "x").unwrap();
        let shown = display_bytes(literal.as_bytes()).text;
        assert_eq!(
            find_by_display(t.path(), &shown),
            Some(t.path().join(literal))
        );
        assert_eq!(find_by_display(t.path(), "missing.txt"), None);
    }
}
