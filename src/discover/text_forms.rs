//! How a token of a file's text says one of the question's words: the word
//! itself or a longer form (`algorithm` for `algo`), shortened (`sets` for
//! `setsid`) or inflected (`parse` for `parsing`). The content pass asks it
//! of every identifier it reads, so the ASCII case is compared in place.

use super::tokens::{self, ABBREVIATION_MIN};

/// Whether a token meeting `word` says the word itself: the word or a
/// longer form (`algorithm` for `algo`), or the word with an inflection's
/// ending (`cache` for `cached`); not a shortened form (`sets` for
/// `setsid`) nor the word inflected (`renaming` for `rename`): those are
/// named with their form.
pub(crate) fn says_whole(word: &str, token: &str) -> bool {
    token.starts_with(word) || super::forms::inflected_from(token, word)
}

/// The first token of `ident` that says `word` shortened (`sets` in
/// `sets_lock` for `setsid`), lower-cased.
pub(crate) fn shortened_form(word: &str, ident: &str) -> Option<String> {
    tokens::split(ident)
        .into_iter()
        .find(|t| tokens::word_meets(word, t) && !says_whole(word, t))
}

/// [`tokens::word_meets`] of a lower-case ASCII word and an ASCII token as
/// written (any case): `Some(true)` when the token is the word or a longer
/// form of it, `Some(false)` when it meets it otherwise.
pub(crate) fn ascii_word_meets(word: &str, token: &[u8]) -> Option<bool> {
    let wb = word.as_bytes();
    let (w, t) = (wb.len(), token.len());
    if w >= 3 && t >= w && token[..w].eq_ignore_ascii_case(wb)
        || t == w && token.eq_ignore_ascii_case(wb)
    {
        return Some(true);
    }
    if t >= ABBREVIATION_MIN && t <= w && wb[..t].eq_ignore_ascii_case(token) {
        return Some(false);
    }
    // Inflected another way (`parse` for `parsing`): rare, so lower-cased
    // only when the first letters agree.
    let head = ABBREVIATION_MIN;
    (t >= head
        && w >= head
        && t.abs_diff(w) <= 4
        && wb[..head].eq_ignore_ascii_case(&token[..head]))
    .then(|| std::str::from_utf8(token).ok())
    .flatten()
    .filter(|t| tokens::inflection_of(word, &t.to_ascii_lowercase()))
    .map(|_| false)
}
