//! Bounded line text. A 50 MB minified line must never become a 50 MB
//! string crossing into JS, so long lines are cut to a window around the
//! first match here, in Rust, and the window says how much was cut.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Windowed {
    pub text: String,
    /// Characters cut before the window.
    pub cut_before: usize,
    /// Characters cut after the window.
    pub cut_after: usize,
}

/// Strips the line terminator (`\n`, `\r\n`, or a lone trailing `\r`).
pub fn trim_terminator(mut line: &[u8]) -> &[u8] {
    if let Some(rest) = line.strip_suffix(b"\n") {
        line = rest;
    }
    if let Some(rest) = line.strip_suffix(b"\r") {
        line = rest;
    }
    line
}

fn is_char_start(b: u8) -> bool {
    b & 0xC0 != 0x80
}

fn char_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| is_char_start(**b)).count()
}

/// Byte offset of the `n`-th character (or the end).
fn byte_of_char(bytes: &[u8], n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let mut seen = 0;
    for (i, b) in bytes.iter().enumerate() {
        if is_char_start(*b) {
            if seen == n {
                return i;
            }
            seen += 1;
        }
    }
    bytes.len()
}

/// How many characters of context to keep before the match in a window.
fn lead(max_chars: usize) -> usize {
    (max_chars / 4).min(80)
}

/// Cuts `line` (terminator already removed) to at most `max_chars`
/// characters, keeping the match that starts at byte `focus` in view.
pub fn window(line: &[u8], focus: Option<usize>, max_chars: usize) -> Windowed {
    if line.len() <= max_chars || max_chars == 0 {
        return Windowed {
            text: String::from_utf8_lossy(line).into_owned(),
            cut_before: 0,
            cut_after: 0,
        };
    }
    let total = char_count(line);
    if total <= max_chars {
        return Windowed {
            text: String::from_utf8_lossy(line).into_owned(),
            cut_before: 0,
            cut_after: 0,
        };
    }
    let focus_char = focus.map_or(0, |f| char_count(&line[..f.min(line.len())]));
    let mut start = focus_char.saturating_sub(lead(max_chars));
    if start + max_chars > total {
        start = total - max_chars;
    }
    let from = byte_of_char(line, start);
    let to = from + byte_of_char(&line[from..], max_chars);
    Windowed {
        text: String::from_utf8_lossy(&line[from..to]).into_owned(),
        cut_before: start,
        cut_after: total - start - max_chars,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_are_untouched() {
        let w = window(b"hello", Some(0), 500);
        assert_eq!(w.text, "hello");
        assert_eq!((w.cut_before, w.cut_after), (0, 0));
    }

    #[test]
    fn long_line_keeps_the_match_in_view_and_counts_cuts() {
        let mut line = vec![b'a'; 10_000];
        line[5000..5006].copy_from_slice(b"needle");
        let w = window(&line, Some(5000), 500);
        assert_eq!(w.text.chars().count(), 500);
        assert!(w.text.contains("needle"));
        assert_eq!(w.cut_before, 5000 - 80);
        assert_eq!(w.cut_before + 500 + w.cut_after, 10_000);
    }

    #[test]
    fn window_never_splits_a_multibyte_character() {
        let line = "é".repeat(1000);
        let w = window(line.as_bytes(), Some(1001), 10);
        assert_eq!(w.text, "é".repeat(10));
        assert!(!w.text.contains('\u{FFFD}'));
    }

    #[test]
    fn match_near_the_end_fills_the_window_backwards() {
        let line = vec![b'x'; 1000];
        let w = window(&line, Some(999), 100);
        assert_eq!(w.cut_after, 0);
        assert_eq!(w.cut_before, 900);
    }

    #[test]
    fn terminators_are_trimmed() {
        assert_eq!(trim_terminator(b"a\r\n"), b"a");
        assert_eq!(trim_terminator(b"a\n"), b"a");
        assert_eq!(trim_terminator(b"a"), b"a");
    }
}
