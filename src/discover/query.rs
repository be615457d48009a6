//! `locate`'s query: the question split once into identifier tokens (its
//! function words dropped), the byte prefilter that rules a path out
//! before it is scored, and a fuzzy matcher per token (made per thread).

use super::tokens;
use super::DiscoverError;

/// The query split once, with a fuzzy matcher per token made per thread.
#[derive(Debug, Clone)]
pub struct Query {
    pub raw: String,
    pub tokens: Vec<String>,
    /// Lower-cased query when it names a path (`src/auth`), else `None`.
    pub(crate) path_form: Option<String>,
    /// Every token is ASCII, so [`Query::may_match`] can rule paths out.
    ascii: bool,
    /// Substring finders for each token's first letters (see
    /// [`Query::may_match`]), built once for every path.
    heads: Vec<memchr::memmem::Finder<'static>>,
    /// For each token, finders for its [`tokens::short_forms`].
    forms: Vec<Vec<memchr::memmem::Finder<'static>>>,
}

impl Query {
    pub fn parse(raw: &str) -> Result<Query, DiscoverError> {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(DiscoverError::EmptyQuery);
        }
        // "the middleware that sets the csrf cookie": `the`, `that` are no
        // evidence, and lacking them cost every file the same (issue 45).
        // Only words standing alone are dropped: `for` in
        // `raise_for_status` is part of a name.
        let words = trimmed.split_whitespace();
        let said: Vec<&str> = words
            .clone()
            .filter(|w| !matches!(tokens::split(w).as_slice(), [t] if tokens::is_function_word(t)))
            .collect();
        let kept = if said.is_empty() {
            words.collect()
        } else {
            said
        };
        let mut toks: Vec<String> = kept.iter().flat_map(|w| tokens::split(w)).collect();
        let mut seen = std::collections::HashSet::new();
        toks.retain(|t| seen.insert(t.clone()));
        if toks.is_empty() {
            return Err(DiscoverError::NoWords(trimmed.to_string()));
        }
        let path_form = trimmed
            .contains('/')
            .then(|| trimmed.trim_start_matches("./").to_lowercase());
        Ok(Query {
            raw: trimmed.to_string(),
            ascii: toks.iter().all(|t| t.is_ascii()),
            heads: (toks.iter())
                .map(|t| finder(&t.chars().take(tokens::ABBREVIATION_MIN).collect::<String>()))
                .collect(),
            forms: (toks.iter())
                .map(|t| tokens::short_forms(t).iter().map(|f| finder(f)).collect())
                .collect(),
            tokens: toks,
            path_form,
        })
    }

    /// False only for a path that [`score_path`] cannot score. A path
    /// scores when every token meets it fuzzily, or when a token meets one
    /// of its tokens whole or as a prefix (or a run of its tokens written
    /// together), or inflected (`chunks` for chunked: they share the
    /// word's first four letters), or when one of its tokens stands for
    /// two of the words (`dynbuf`, `con` for congestion and control), or
    /// when it contains the query's path form. An abbreviation of one word
    /// alone scores nothing (`ctrl` in `timed_ctrl_public.h` for
    /// `TcpCongestionControl`), so a path whose only letters are a
    /// word's short forms needs them from two words: on the Linux tree
    /// `sc` and `fr` (for `sched fair`) sent most paths to scoring. The
    /// first needs every token's letters in order in the path, which is
    /// also what frizbee's fuzzy match with no typos aligns; the others
    /// look in the path's letters and digits with the rest taken out
    /// (`scratch` holds them). Checked on bytes without splitting the
    /// path into tokens, which is what scoring spends its time on; a path
    /// with non-ASCII bytes is never ruled out (`K`, the Kelvin sign,
    /// lower-cases to an ASCII `k`).
    pub(crate) fn may_match(&self, rel: &[u8], scratch: &mut Vec<u8>) -> bool {
        if !self.ascii || !rel.is_ascii() {
            return true;
        }
        if self.tokens.iter().all(|t| in_order(t.as_bytes(), rel)) {
            return true;
        }
        scratch.clear();
        let alnum = rel.iter().filter(|b| b.is_ascii_alphanumeric());
        scratch.extend(alnum.map(u8::to_ascii_lowercase));
        let letters = scratch.as_slice();
        let found = |f: &memchr::memmem::Finder<'_>| f.find(letters).is_some();
        if self.heads.iter().any(found) {
            return true;
        }
        let words = self.forms.iter().filter(|forms| forms.iter().any(found));
        words.take(2).count() == 2
    }

    pub(crate) fn matchers(&self) -> Vec<FuzzyToken> {
        // No typos: on the Linux path list one allowed typo multiplied the
        // matches tenfold, nearly all noise.
        let config = frizbee::Config::default().max_typos(Some(0));
        self.tokens
            .iter()
            .map(|t| {
                let mut matcher = frizbee::Matcher::new(t.as_str(), &config);
                let exact = matcher.match_one(t.as_str(), 0).map_or(0, |m| m.score);
                FuzzyToken {
                    matcher,
                    floor: (u32::from(exact) * FUZZY_FLOOR_PERCENT / 100) as u16,
                }
            })
            .collect()
    }
}

fn finder(needle: &str) -> memchr::memmem::Finder<'static> {
    memchr::memmem::Finder::new(needle.as_bytes()).into_owned()
}

/// Whether the bytes of `needle` (lower-case ASCII) occur in `hay` in
/// order, ignoring ASCII case.
fn in_order(needle: &[u8], hay: &[u8]) -> bool {
    let mut want = needle.iter().peekable();
    for b in hay {
        match want.peek() {
            Some(&&w) if w == b.to_ascii_lowercase() => {
                want.next();
            }
            Some(_) => {}
            None => break,
        }
    }
    want.peek().is_none()
}

/// A fuzzy hit must score this share of the token's match on itself.
/// Measured with frizbee 0.13: `mmu` on `mmu` 68, on `memory_mu.c` 50,
/// `cfg` on `config.rs` 49 of 68, `pgalloc` on `page_alloc.c` 117 of 132 —
/// but `mmu` on `kvm-x86-pmu-ops.h`, three letters picked from two words,
/// only 38: below two thirds, such scattered letters are noise.
const FUZZY_FLOOR_PERCENT: u32 = 66;

/// One query token's fuzzy matcher and the least score that counts.
pub(crate) struct FuzzyToken {
    matcher: frizbee::Matcher,
    floor: u16,
}

impl FuzzyToken {
    pub(crate) fn hits(&mut self, haystack: &str) -> bool {
        self.matcher
            .match_one(haystack, 0)
            .is_some_and(|m| m.score >= self.floor)
    }
}
