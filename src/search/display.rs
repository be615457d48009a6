//! How a path is shown to the model and to JSON consumers.
//!
//! A name that is not UTF-8 is shown lossily with a `#b=<hex>` suffix made of
//! its invalid bytes, so two names whose lossy forms collide still print
//! differently and a consumer that dedups by display path never drops one.
//! The raw bytes travel separately as hex (`pathBytes`). A valid name that
//! happens to end like such a suffix gets `#b=-` appended, so the display form
//! stays unambiguous. Files are always opened by their native bytes, never by
//! the display string.

/// Display form and, for non-UTF-8 paths, the hex of the raw bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisplayPath {
    pub text: String,
    pub raw_hex: Option<String>,
}

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

fn looks_like_suffix(text: &str) -> bool {
    match text.rfind("#b=") {
        Some(i) => {
            let tail = &text[i + 3..];
            tail == "-"
                || (!tail.is_empty()
                    && tail
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
        }
        None => false,
    }
}

/// `bytes` is a relative path with `/` separators (as produced by the walker).
pub fn display_bytes(bytes: &[u8]) -> DisplayPath {
    match std::str::from_utf8(bytes) {
        Ok(text) => {
            let mut text = text.to_string();
            if looks_like_suffix(&text) {
                text.push_str("#b=-");
            }
            DisplayPath {
                text,
                raw_hex: None,
            }
        }
        Err(_) => {
            let mut text = String::with_capacity(bytes.len() + 8);
            let mut invalid = Vec::new();
            for chunk in bytes.utf8_chunks() {
                text.push_str(chunk.valid());
                if !chunk.invalid().is_empty() {
                    text.push('\u{FFFD}');
                    invalid.extend_from_slice(chunk.invalid());
                }
            }
            text.push_str("#b=");
            text.push_str(&hex(&invalid));
            DisplayPath {
                text,
                raw_hex: Some(hex(bytes)),
            }
        }
    }
}

/// Relative path of `path` under `root`, `/`-separated, as raw bytes.
pub fn relative_bytes(root: &std::path::Path, path: &std::path::Path) -> Vec<u8> {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let mut out = Vec::new();
    for (i, comp) in rel.components().enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(os_bytes(comp.as_os_str()).as_ref());
    }
    out
}

#[cfg(unix)]
pub fn os_bytes(s: &std::ffi::OsStr) -> std::borrow::Cow<'_, [u8]> {
    use std::os::unix::ffi::OsStrExt;
    std::borrow::Cow::Borrowed(s.as_bytes())
}

#[cfg(not(unix))]
pub fn os_bytes(s: &std::ffi::OsStr) -> std::borrow::Cow<'_, [u8]> {
    // Non-Unix names that are not Unicode degrade to their lossy form
    // (documented limitation: no #b= suffix there).
    std::borrow::Cow::Owned(s.to_string_lossy().into_owned().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_path_is_shown_as_is() {
        let d = display_bytes(b"src/main.rs");
        assert_eq!(d.text, "src/main.rs");
        assert_eq!(d.raw_hex, None);
    }

    #[test]
    fn invalid_bytes_get_suffix_and_raw_hex() {
        let d = display_bytes(b"a\xff.txt");
        assert_eq!(d.text, "a\u{FFFD}.txt#b=ff");
        assert_eq!(d.raw_hex.as_deref(), Some("61ff2e747874"));
    }

    #[test]
    fn lossy_collisions_render_differently() {
        let a = display_bytes(b"a\xff.txt");
        let b = display_bytes(b"a\xfe.txt");
        assert_ne!(a.text, b.text);
    }

    #[test]
    fn literal_name_that_looks_like_a_display_form_is_escaped() {
        let d = display_bytes("a\u{FFFD}.txt#b=ff".as_bytes());
        assert_eq!(d.text, "a\u{FFFD}.txt#b=ff#b=-");
        assert_ne!(d.text, display_bytes(b"a\xff.txt").text);
    }

    #[test]
    fn relative_bytes_uses_forward_slashes() {
        let root = std::path::Path::new("/x/y");
        let p = std::path::Path::new("/x/y/a/b.rs");
        assert_eq!(relative_bytes(root, p), b"a/b.rs".to_vec());
    }
}
