//! Where an identifier starts and ends in a text, and whether its line
//! defines it: what locate's content pass asks of each occurrence of a
//! question's word (`content`).

use super::relate::{shape, Occurrence, Shape};

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// The character starting at byte `i`, and its length, when `buf` holds a
/// whole UTF-8 one there.
fn char_at(buf: &[u8], i: usize) -> Option<(char, usize)> {
    let len = match *buf.get(i)? {
        b if b < 0x80 => 1,
        b if b >= 0xF0 => 4,
        b if b >= 0xE0 => 3,
        b if b >= 0xC0 => 2,
        _ => return None,
    };
    let c = std::str::from_utf8(buf.get(i..i + len)?)
        .ok()?
        .chars()
        .next()?;
    Some((c, len))
}

/// The character ending at byte `i` (exclusive), and its length.
fn char_before(buf: &[u8], i: usize) -> Option<(char, usize)> {
    let lead = (1..=4.min(i))
        .map(|n| i - n)
        .find(|&j| buf[j] & 0xC0 != 0x80)?;
    char_at(buf, lead).filter(|(_, len)| lead + len == i)
}

/// A character of an identifier: a letter or digit of any script, `_`, `$`.
fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The identifier (letters and digits of any script, `_`, `$`) holding
/// bytes `start..end`. A letter outside ASCII is part of it, so that a word
/// is read whole: `exclu` alone out of Portuguese `excluído` was taken for
/// `excluded` shortened.
pub(crate) fn identifier_around(buf: &[u8], mut start: usize, mut end: usize) -> (usize, usize) {
    loop {
        match buf.get(start.wrapping_sub(1)) {
            Some(&b) if is_ident(b) => start -= 1,
            Some(&b) if !b.is_ascii() => match char_before(buf, start) {
                Some((c, len)) if ident_char(c) => start -= len,
                _ => break,
            },
            _ => break,
        }
    }
    loop {
        match buf.get(end) {
            Some(&b) if is_ident(b) => end += 1,
            Some(&b) if !b.is_ascii() => match char_at(buf, end) {
                Some((c, len)) if ident_char(c) => end += len,
                _ => break,
            },
            _ => break,
        }
    }
    (start, end)
}

/// Whether the line holding `start..end` defines that identifier, by its
/// shape (`def`, `fn`, `class`, `const`, a Go method, ...).
pub(crate) fn defines_at(buf: &[u8], start: usize, end: usize) -> bool {
    let line_start = memchr::memrchr(b'\n', &buf[..start]).map_or(0, |i| i + 1);
    let line_end = memchr::memchr(b'\n', &buf[end..]).map_or(buf.len(), |i| end + i);
    let Ok(line) = std::str::from_utf8(&buf[line_start..line_end]) else {
        return false;
    };
    let occ = Occurrence {
        line: 0,
        start: start - line_start,
        end: end - line_start,
    };
    // `mod display_lookup;` declares a module whose body is the file of
    // that name, as the outline's definition signal holds too: counted as
    // a definition, `src/search/mod.rs` outranked `display_lookup.rs`.
    let declared_module =
        line[..occ.start].trim_end().ends_with("mod") && line.trim_end().ends_with(';');
    !declared_module
        && (shape(line, &occ) == Shape::Definition
            || bsd_style_definition(buf, line_start, line, &occ))
}

/// A C function defined with its type on the line before, as BSD code and
/// nginx write them (`static int\nalerts_check_bell(struct window *w)\n{`):
/// the name opens its line, a parameter list follows that is no statement
/// (no `;` ends the line), and the line before is a type: words alone, no
/// statement's or expression's end.
fn bsd_style_definition(buf: &[u8], line_start: usize, line: &str, occ: &Occurrence) -> bool {
    let opens =
        occ.start == 0 && line[occ.end..].starts_with('(') && !line.trim_end().ends_with(';');
    if !opens || line_start == 0 {
        return false;
    }
    let before = &buf[..line_start - 1];
    let prev_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    let prev = String::from_utf8_lossy(&before[prev_start..]);
    let prev = prev.trim();
    !prev.is_empty()
        && !prev.starts_with('#')
        && prev
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b" _*".contains(&b))
}
