//! A question's quoted words: `where is 'CNAME loop detected' raised`. An
//! agent quotes what it read somewhere, most often an error message, and
//! the file saying those words in that order is the one it asks about.
//! Split into words, the phrase met a dozen files each saying some of them
//! apart: issue 45's study-g ranked the one file raising `prevented for
//! security reasons` eleventh, below files about "polymorphic" and
//! "deserialization".

use regex::bytes::{Regex, RegexBuilder};

/// A phrase of fewer words is a name, which the identifier forms already
/// find (`'TARGET_RECORDS'`), or too common a word to say where it is.
const MIN_WORDS: usize = 2;
/// A longer quote is a pasted paragraph, not a message a file says whole.
const MAX_CHARS: usize = 200;
/// Phrases looked for at most: each costs a search of every file read.
const MAX_PHRASES: usize = 3;

/// The quoted phrases of a question, as written, and a matcher for each.
#[derive(Debug, Clone, Default)]
pub struct Phrases {
    texts: Vec<String>,
    matchers: Vec<Regex>,
}

/// The first phrase a text says: which one (its place) and the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhraseAt {
    pub phrase: usize,
    pub line: u32,
}

impl Phrases {
    /// The phrases `raw` quotes with `"`, `'`, `` ` `` or typographic quotes.
    /// A quote opens only at the start of a word and closes only at its
    /// end, so the apostrophes of `isn't` and `others' laps` open nothing.
    pub fn of(raw: &str) -> Phrases {
        let mut texts: Vec<String> = Vec::new();
        let chars: Vec<(usize, char)> = raw.char_indices().collect();
        let mut i = 0;
        while i < chars.len() && texts.len() < MAX_PHRASES {
            let (at, c) = chars[i];
            let Some(close) = closing(c) else {
                i += 1;
                continue;
            };
            let opens = i == 0 || !chars[i - 1].1.is_alphanumeric();
            let end = (i + 1..chars.len()).find(|&j| {
                chars[j].1 == close
                    && chars[j - 1].1 != ' '
                    && chars.get(j + 1).is_none_or(|n| !n.1.is_alphanumeric())
            });
            match (opens, end) {
                (true, Some(j)) => {
                    let inside = raw[at + c.len_utf8()..chars[j].0].trim();
                    if is_phrase(inside) && !texts.iter().any(|t| t == inside) {
                        texts.push(inside.to_string());
                    }
                    i = j + 1;
                }
                _ => i += 1,
            }
        }
        let matchers = texts.iter().filter_map(|t| matcher(t)).collect::<Vec<_>>();
        if matchers.len() != texts.len() {
            return Phrases::default();
        }
        Phrases { texts, matchers }
    }

    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// The phrase at `i`, as the question wrote it.
    pub fn text(&self, i: usize) -> &str {
        &self.texts[i]
    }

    pub fn texts(&self) -> &[String] {
        &self.texts
    }

    /// The first phrase (in the question's order) the text says, and the
    /// line of its first occurrence.
    pub fn first_in(&self, buf: &[u8]) -> Option<PhraseAt> {
        self.matchers.iter().enumerate().find_map(|(phrase, m)| {
            let at = m.find(buf)?.start();
            let line = 1 + memchr::memchr_iter(b'\n', &buf[..at]).count() as u32;
            Some(PhraseAt { phrase, line })
        })
    }
}

fn closing(open: char) -> Option<char> {
    match open {
        '"' | '\'' | '`' => Some(open),
        '\u{201c}' => Some('\u{201d}'),
        '\u{2018}' => Some('\u{2019}'),
        _ => None,
    }
}

/// Words enough, each with a letter or digit, and not a pasted paragraph.
fn is_phrase(inside: &str) -> bool {
    let words = inside
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count();
    words >= MIN_WORDS && inside.chars().count() <= MAX_CHARS
}

/// What may stand between two words of a phrase in source: white space,
/// an escaped line break or tab (`"stubbing\n detected"`), or a string
/// closed and opened again, joined or not (`"frame " +\n "length"`, Python's
/// and C's adjacent literals): a message is often written so.
const BETWEEN_WORDS: &str = r#"(?:\s|\\[nrt]|["'`]\s*[+.]?\s*["'`])+"#;

/// The phrase in any case, its spaces standing for [`BETWEEN_WORDS`], its
/// other characters exactly.
fn matcher(phrase: &str) -> Option<Regex> {
    let words: Vec<String> = phrase.split_whitespace().map(regex::escape).collect();
    RegexBuilder::new(&words.join(BETWEEN_WORDS))
        .case_insensitive(true)
        .build()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_open_at_a_word_start_and_close_at_its_end() {
        let p = Phrases::of(
            "where is 'CNAME loop detected' raised when the key's \"bad  value\" isn't",
        );
        assert_eq!(p.texts(), ["CNAME loop detected", "bad  value"]);
        let p = Phrases::of("others' laps and the user's 'x' or `a b` or \u{201c}no more\u{201d}");
        assert_eq!(p.texts(), ["a b", "no more"]);
        assert!(Phrases::of("an 'unclosed phrase here").is_empty());
        assert!(Phrases::of("'TARGET_RECORDS' one word").is_empty());
        assert!(Phrases::of(&format!("'{}'", "word ".repeat(60))).is_empty());
    }

    #[test]
    fn a_phrase_is_found_in_any_case_across_a_line_break_with_its_line() {
        let p = Phrases::of("why 'Adjusted frame length exceeds' and \"cannot unbox\"");
        let text =
            b"a\nthrow new X(\"adjusted frame\n   length exceeds \" + n);\n// cannot unbox\n";
        assert_eq!(p.first_in(text), Some(PhraseAt { phrase: 0, line: 2 }));
        assert_eq!(
            p.first_in(b"x\ny\ncannot unbox"),
            Some(PhraseAt { phrase: 1, line: 3 })
        );
        assert_eq!(p.first_in(b"adjusted frame size exceeds"), None);
        for written in [
            &b"\"Adjusted frame \" +\n  \"length exceeds\""[..],
            b"\"Adjusted frame\\nlength exceeds\"",
            b"'Adjusted frame ' 'length exceeds'",
        ] {
            assert!(
                p.first_in(written).is_some(),
                "{}",
                String::from_utf8_lossy(written)
            );
        }
        let literal = Phrases::of("'a.b (c)'");
        assert!(literal.first_in(b"a.b (c)").is_some());
        assert!(
            literal.first_in(b"axb (c)").is_none(),
            "punctuation is literal"
        );
    }
}
