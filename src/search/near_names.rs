//! "Did you mean": names in the same directory that look like a path that
//! was not found (a typo, another extension, another case).

use super::display::{display_bytes, os_bytes};
use std::path::Path;

const MAX_SUGGESTIONS: usize = 5;

/// `File not found: <given>`, with up to 5 names from the same directory
/// that look like what was meant (typo, other extension, other case).
pub fn not_found(cwd: &Path, given: &str) -> String {
    let near = near_names(cwd, given);
    if near.is_empty() {
        format!("File not found: {given}")
    } else {
        format!(
            "File not found: {given}. Did you mean: {}?",
            near.join(", ")
        )
    }
}

fn near_names(cwd: &Path, given: &str) -> Vec<String> {
    let (dir_part, wanted) = match given.rfind('/') {
        Some(i) => (&given[..=i], &given[i + 1..]),
        None => ("", given),
    };
    let wanted = wanted.to_lowercase();
    if wanted.is_empty() {
        return Vec::new();
    }
    let dir = cwd.join(if dir_part.is_empty() { "." } else { dir_part });
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let stem = |s: &str| s.rsplit_once('.').map_or(s, |(a, _)| a).to_string();
    let wanted_stem = stem(&wanted);
    let tolerance = (wanted.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, String)> = entries
        .flatten()
        .take(10_000)
        .filter_map(|entry| {
            let name = entry.file_name();
            let shown = display_bytes(&os_bytes(&name)).text;
            let lower = shown.to_lowercase();
            let distance = distance(&wanted, &lower);
            let related = distance <= tolerance
                || stem(&lower) == wanted_stem
                || (wanted.len() >= 3 && lower.contains(&wanted))
                || (lower.len() >= 3 && wanted.contains(&lower));
            related.then(|| (distance, format!("{dir_part}{shown}")))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, s)| s)
        .collect()
}

/// Levenshtein distance over chars; names are short, a pathological one is
/// cut at 256 chars.
fn distance(a: &str, b: &str) -> usize {
    let cut = |s: &str| s.chars().take(256).collect::<String>();
    strsim::levenshtein(&cut(a), &cut(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_typos_other_extensions_and_other_case_nearest_first() {
        let t = tempfile::tempdir().unwrap();
        for name in ["ordered.rs", "unordered.rs", "Ordered.md", "walk.rs"] {
            std::fs::write(t.path().join(name), "x").unwrap();
        }
        assert_eq!(
            not_found(t.path(), "ordred.rs"),
            "File not found: ordred.rs. Did you mean: ordered.rs, Ordered.md, unordered.rs?"
        );
    }

    #[test]
    fn suggestions_keep_the_directory_as_given_and_none_means_none() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("src")).unwrap();
        std::fs::write(t.path().join("src/main.rs"), "x").unwrap();
        assert_eq!(
            not_found(t.path(), "src/mian.rs"),
            "File not found: src/mian.rs. Did you mean: src/main.rs?"
        );
        assert_eq!(
            not_found(t.path(), "src/zzzzzzzzzz.py"),
            "File not found: src/zzzzzzzzzz.py"
        );
        assert_eq!(
            not_found(t.path(), "nodir/x.rs"),
            "File not found: nodir/x.rs"
        );
    }
}
