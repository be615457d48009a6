//! The shell's defaults and caps that JS also needs: the grace between
//! SIGTERM and SIGKILL, how much one log read returns by default and at
//! most, and the default bound of a job's log. Their one owner is `defaults.json` beside this file, compiled in
//! here as constants (a key missing there fails the build) and read as
//! data by `extensions/lib/shell/fallback.ts`: the fallback runs exactly
//! when the addon cannot load, so it cannot ask the core for them, and a
//! data file both sides read is the one place that needs no build step.

use std::time::Duration;

const JSON: &str = include_str!("defaults.json");

/// SIGTERM to SIGKILL, when a caller gives no grace and when a job's own
/// timeout fires.
pub const KILL_GRACE: Duration = Duration::from_millis(number(JSON, "killGraceMs"));
/// What one log read returns when the caller names no `maxBytes`.
pub const READ_BYTES: u64 = number(JSON, "readBytes");
/// Reads are returned as one string; this bounds what one call can allocate.
pub const MAX_READ_BYTES: u64 = number(JSON, "maxReadBytes");
/// Default bound of one job's log (the setting `shell.maxLogBytes`).
pub const MAX_LOG_BYTES: u64 = number(JSON, "maxLogBytes");

/// The unsigned integer after `"key":` in `json` (a flat object of numbers),
/// at compile time.
const fn number(json: &str, key: &str) -> u64 {
    let (s, k) = (json.as_bytes(), key.as_bytes());
    let mut i = 0;
    while i + k.len() + 2 <= s.len() {
        if s[i] == b'"' && s[i + k.len() + 1] == b'"' && same(s, i + 1, k) {
            let mut j = i + k.len() + 2;
            while j < s.len() && (s[j] == b' ' || s[j] == b':' || s[j] == b'\n') {
                j += 1;
            }
            let mut n: u64 = 0;
            let mut digits = 0;
            while j < s.len() && s[j].is_ascii_digit() {
                n = n * 10 + (s[j] - b'0') as u64;
                j += 1;
                digits += 1;
            }
            assert!(digits > 0, "defaults.json: the value is not a number");
            return n;
        }
        i += 1;
    }
    panic!("defaults.json: a key is missing")
}

const fn same(s: &[u8], at: usize, k: &[u8]) -> bool {
    let mut i = 0;
    while i < k.len() {
        if s[at + i] != k[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_compiled_defaults_are_what_the_data_file_says() {
        let doc: serde_json::Value = serde_json::from_str(super::JSON).unwrap();
        let n = |k: &str| doc[k].as_u64().unwrap();
        assert_eq!(super::KILL_GRACE.as_millis() as u64, n("killGraceMs"));
        assert_eq!(super::READ_BYTES, n("readBytes"));
        assert_eq!(super::MAX_READ_BYTES, n("maxReadBytes"));
        assert_eq!(super::MAX_LOG_BYTES, n("maxLogBytes"));
        assert_eq!(doc.as_object().unwrap().len(), 4, "a key nothing reads");
    }
}
