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
    /// Every token written together (`queryparams` for "query params"),
    /// worked out once: `score_path`
    /// compares it with the name tokens of every path it scores.
    pub(crate) written_together: String,
    /// Lower-cased query when it names a path (`src/auth`), else `None`.
    pub(crate) path_form: Option<String>,
    /// Every token is ASCII, so [`Query::may_match`] can rule paths out.
    ascii: bool,
    /// Per token: what meeting it in a path earns, as a share of what a
    /// rare word's meeting earns.
    pub(crate) path_weights: Vec<f64>,
    /// Each token's first letters and its [`tokens::short_forms`], looked
    /// for in a path's letters (see [`Query::may_match`]).
    forms: Forms,
}

/// `author's` says author, `isn't` says isn: what follows an apostrophe
/// inside a word (a possessive or a contraction, two letters at most) is
/// no word of the question. As a token of its own, `s` cost every path
/// lacking it and made "path lacks s" a reason (issue 45's why-line check
/// of the evaluation). `'exact` and `O'Reilly` keep theirs.
fn without_clitic(word: &str) -> &str {
    match word.rfind(['\'', '\u{2019}']) {
        Some(at) if at > 0 => {
            let tail = &word[at..];
            let letters = tail.chars().filter(|c| c.is_alphanumeric()).count();
            if letters <= 2 {
                &word[..at]
            } else {
                word
            }
        }
        _ => word,
    }
}

/// How much a word's rarity moves what meeting it in a path earns, in a
/// long question: half. A file named `window.c` says little about
/// "background windows" in a tree of forty window files, and a common word
/// met there earned as much as a rare one (issue 45's content-only
/// questions).
const PATH_RARITY_SHARE: f64 = 0.5;

/// How much a question of `n` tokens describes what the code does rather
/// than names it: none for up to three tokens (`line window`, `trie router
/// node` spell a file's name, and every word the path meets counts whole),
/// all from five. The weights for describing questions (text counts,
/// words said together, rare words in paths) grow with it, so a short
/// query ranks as it did before them.
pub(crate) fn describing_share(n: usize) -> f64 {
    ((n as f64 - 3.0) / 2.0).clamp(0.0, 1.0)
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
        let words = trimmed.split_whitespace().map(without_clitic);
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
            forms: Forms::new(&toks),
            written_together: toks.concat(),
            path_weights: toks
                .iter()
                .map(|t| {
                    let share = PATH_RARITY_SHARE * describing_share(toks.len());
                    1.0 - share * (1.0 - super::rarity::weight(t))
                })
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
        // Letters and digits, lower-cased, without a branch per byte (an
        // iterator's filter pushed them one at a time: a tenth of a
        // many-word locate on the Linux tree).
        scratch.clear();
        scratch.resize(rel.len(), 0);
        let mut n = 0;
        for &b in rel {
            scratch[n] = b.to_ascii_lowercase();
            n += usize::from(b.is_ascii_alphanumeric());
        }
        scratch.truncate(n);
        self.forms.met_in(scratch)
    }

    /// [`Query::may_match`] as one substring search per head and short
    /// form (how it was written before [`Forms`]): what the proptest
    /// holds the automaton to.
    #[cfg(test)]
    pub(crate) fn may_match_by_searches(&self, rel: &[u8]) -> bool {
        if !self.ascii || !rel.is_ascii() {
            return true;
        }
        if self.tokens.iter().all(|t| in_order(t.as_bytes(), rel)) {
            return true;
        }
        let letters: Vec<u8> = (rel.iter())
            .filter(|b| b.is_ascii_alphanumeric())
            .map(u8::to_ascii_lowercase)
            .collect();
        let found = |f: &str| memchr::memmem::find(&letters, f.as_bytes()).is_some();
        let head = |t: &String| t.chars().take(tokens::ABBREVIATION_MIN).collect::<String>();
        if self.tokens.iter().any(|t| found(&head(t))) {
            return true;
        }
        let words =
            (self.tokens.iter()).filter(|t| tokens::short_forms(t).iter().any(|f| found(f)));
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

/// Every token's head (its first [`tokens::ABBREVIATION_MIN`] letters)
/// and short forms in one automaton, so a path's letters are read once:
/// a substring search per form (about 25 for `TcpCongestionControl
/// cubic`) was most of the prefilter's time on the Linux tree's 86,000
/// paths. A form several words share (`con` for congestion and control)
/// is one pattern that stands for each of them.
#[derive(Debug, Clone)]
struct Forms {
    /// `None` only when no automaton could be built: every path passes.
    automaton: Option<aho_corasick::AhoCorasick>,
    /// Per pattern: whether it is some token's head, and the tokens it
    /// is a short form of.
    meaning: Vec<(bool, Vec<usize>)>,
}

impl Forms {
    fn new(toks: &[String]) -> Forms {
        let mut patterns: Vec<String> = Vec::new();
        let mut meaning: Vec<(bool, Vec<usize>)> = Vec::new();
        let mut add = |form: String, head: bool, word: Option<usize>| {
            let at = match patterns.iter().position(|p| *p == form) {
                Some(at) => at,
                None => {
                    patterns.push(form);
                    meaning.push((false, Vec::new()));
                    patterns.len() - 1
                }
            };
            meaning[at].0 |= head;
            if let Some(w) = word.filter(|w| !meaning[at].1.contains(w)) {
                meaning[at].1.push(w);
            }
        };
        for (i, t) in toks.iter().enumerate() {
            add(
                t.chars().take(tokens::ABBREVIATION_MIN).collect(),
                true,
                None,
            );
            for f in tokens::short_forms(t) {
                add(f, false, Some(i));
            }
        }
        let build = |kind| {
            aho_corasick::AhoCorasick::builder()
                .kind(kind)
                // A path's letters are a few dozen bytes: a prefilter
                // restarted after every overlapping match costs more than
                // the DFA's walk.
                .prefilter(false)
                .build(&patterns)
        };
        // A query of hundreds of words may pass the DFA's size limit:
        // then the automaton's own choice, and failing that every path.
        let automaton = (build(Some(aho_corasick::AhoCorasickKind::DFA)))
            .or_else(|_| build(None))
            .ok();
        Forms { automaton, meaning }
    }

    /// Whether `letters` hold a token's head, or short forms of two
    /// different tokens.
    fn met_in(&self, letters: &[u8]) -> bool {
        let Some(automaton) = &self.automaton else {
            return true;
        };
        let mut first: Option<usize> = None;
        for m in automaton.find_overlapping_iter(letters) {
            let (head, words) = &self.meaning[m.pattern().as_usize()];
            if *head {
                return true;
            }
            for &w in words {
                match first {
                    None => first = Some(w),
                    Some(f) if f != w => return true,
                    Some(_) => {}
                }
            }
        }
        false
    }
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
