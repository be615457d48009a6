//! `fingerprint()`: the facts a harness records when the model is shown a
//! file (size, content hash, hashes of line ranges), in the exact form the
//! context's `size`/`content_hash` fields are checked against.

use super::{content_hash, region_hash};
use crate::search::{read_named, CodedError, ErrorCode};
use std::path::Path;

#[derive(Debug, Clone, PartialEq)]
pub struct Fingerprint {
    pub size: u64,
    pub content_hash: String,
    pub total_lines: u32,
    /// `(start, end, hash)` per range asked for.
    pub regions: Vec<(u32, u32, String)>,
}

/// The file `given` names under `cwd` (display forms accepted), as it is now.
pub fn fingerprint(
    cwd: &Path,
    given: &str,
    ranges: &[(u32, u32)],
) -> Result<Fingerprint, CodedError> {
    let fail = |code, message: String| CodedError::new(code, message);
    if let Some((s, e)) = ranges.iter().find(|(s, e)| *s == 0 || s > e) {
        return Err(fail(
            ErrorCode::InvalidOption,
            format!("regions: {s}-{e} is not a range of 1-based lines (startLine <= endLine)"),
        ));
    }
    let (_, _, bytes) = read_named(cwd, given, "fingerprint")?;
    Ok(Fingerprint {
        size: bytes.len() as u64,
        content_hash: content_hash(&bytes),
        total_lines: crate::structure::count_lines(&bytes),
        regions: ranges
            .iter()
            .map(|&(s, e)| (s, e, region_hash(&bytes, s, e)))
            .collect(),
    })
}
