//! locate's second source of candidates: what a file says. A file is a
//! content candidate when its text holds enough of the question's words
//! (as tokens, abbreviated or spelt out: every word of a short question,
//! half of a long one's), and it scores more when an identifier there
//! names the whole query, most when that identifier is defined there.
//!
//! A ready index narrows the files read to those whose postings hold each
//! word's first letters; without one the walk reads files up to a fixed
//! bound and, past it, drops the content signal altogether, so the answer
//! never depends on which files the threads happened to reach first.

use super::identifiers::{defines_at, identifier_around};
use super::phrase::{PhraseAt, Phrases};
use super::query::describing_share;
use super::rarity;
use super::text_forms::{ascii_word_meets, says_whole, shortened_form};
use super::tokens::{self, NameMatch, ABBREVIATION_MIN};
use regex::bytes::Regex;
use rustc_hash::{FxHashMap, FxHashSet};

/// Files the content pass reads at most among a ready index's candidates
/// (the files whose postings hold the words). Past it locate ranks by path
/// alone and says so: with the index ready a call stays in tens of ms.
pub const MAX_CONTENT_READS: u64 = 4000;
/// Bytes read at most over those files.
pub const MAX_CONTENT_BYTES: u64 = 64 * 1024 * 1024;
/// Files read at most without an index, where every file is read to learn
/// whether it holds the words: about one scan of the tree, which a search
/// without an index costs anyway. Projects of up to this many files (git's
/// 4,843, vim's 8,521) are ranked by their text too; at the index's bound
/// a walked git tree was ranked by path alone (locate hit@3 0.17 against
/// 0.50 with its index ready, issue 45's held-out set), for 7 % less time.
pub const MAX_WALK_READS: u64 = 12_000;
/// Bytes read at most over those files.
pub const MAX_WALK_BYTES: u64 = 128 * 1024 * 1024;
/// Most query words the text is read for (the longest ones). A question
/// of more words than this is told by these.
const MAX_WORDS: usize = 6;
const _: () = assert!(MAX_WORDS <= 8, "Ident::meets holds a bit per word");
/// Identifier occurrences looked at per file, and word occurrences
/// counted per word (a count past it says no more).
const MAX_IDENTIFIERS: usize = 400;
const MAX_COUNT: u32 = 1000;

/// The query as the content pass reads it.
#[derive(Debug, Clone)]
pub struct ContentQuery {
    /// Every query token (an identifier must name all of them).
    tokens: Vec<String>,
    words: Vec<Word>,
    /// Each token's first letters, ASCII case-insensitive (`None`: not an
    /// ASCII word of two letters or more): whether the text holds it at all.
    held: Vec<Option<Regex>>,
    narrow: String,
    /// Every token written together (see [`tokens::may_name_query`]).
    letters: String,
    /// How many of [`ContentQuery::words`] a candidate's text must hold
    /// (see [`words_needed`]).
    needed: usize,
    /// Each word's [`rarity::weight`], averaging one over the words: the
    /// share of the text's points its counts earn.
    weights: Vec<f64>,
    /// The same weights in whole points, worked out once: the content pass
    /// asks them of every file it measures.
    points: Vec<u32>,
    /// The least [`ContentQuery::points`] of the words a candidate must
    /// hold beside [`ContentQuery::needed`] of them (0: none): raised by a
    /// ready index when too many files hold the words for the pass to read,
    /// so that the files kept are those holding the question's rarer words.
    min_points: u32,
    /// The question's quoted phrases ([`super::phrase`]).
    phrases: Phrases,
}

/// A word's weight in whole points (a hundred for an average word), so
/// that the index's count of a file's words and the text's agree exactly.
fn points_of(weight: f64) -> u32 {
    (weight * 100.0).round() as u32
}

/// Of `n` words, how many a file's text must hold to be read as being on
/// the question: all of one or two, two of more. A long question's answer
/// rarely says every word of it (issue 45's held-out sets: the answer
/// lacked one of the three longest words in two of five misses, e.g.
/// `ExceptionUtils.java` never says "innermost"; nginx's `ngx_daemon.c`
/// says only `fork` and `setsid` of "detaching the master into the
/// background with fork and setsid"). Where too many files hold two, a
/// ready index keeps those holding the rarer words (`word_feed`), and the
/// ranking orders the rest by what they say.
pub fn words_needed(n: usize) -> usize {
    n.min(2)
}

/// What one identifier of a file says: which words it meets (a bit per
/// word, [`MAX_WORDS`] of them) and, once asked, how it names the query.
struct Ident {
    meets: u8,
    /// Occurrences checked for a definition so far, and whether one was.
    def_checks: u8,
    defined: bool,
    /// The words it meets with a token of the word's length or longer
    /// (the word itself, `algorithm` for `algo`), not a shortened form.
    whole: u8,
    how: Option<Option<NameMatch>>,
}

#[derive(Debug, Clone)]
struct Word {
    text: String,
    /// Its first letters, ASCII case-insensitive: every accepted form holds them.
    prefix: Regex,
}

/// What one file's text says about the query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContentScore {
    /// Token occurrences of each word (of [`ContentQuery::words`]).
    pub counts: Vec<u32>,
    /// The text's length in bytes: a count in a long file says less.
    pub bytes: u64,
    /// Per query token: the text holds it (one of the words read for) or
    /// its first letters (four, or the whole token when shorter; another).
    pub holds: Vec<bool>,
    /// The best identifier naming the whole query: how, its text, line,
    /// whether a line defines it, and how often it occurs.
    pub named: Option<Named>,
    /// Per word: the shortened or otherwise inflected form the text says
    /// it in (`sets` for `setsid`, `renaming` for `rename`), when the text
    /// never says the word itself or a longer form of it. The reason names the form, so that it stays true: "text
    /// has setsid" for a file saying only `sets` was false (issue 45).
    pub shortened: Vec<Option<String>>,
    /// The words (a bit per word) an identifier the text defines meets.
    pub defined_words: u8,
    /// The words (a bit per word) said together in the text's densest
    /// stretch of [`NEAR_BYTES`].
    pub near_words: u8,
    /// The first quoted phrase the text says, and where.
    pub phrase: Option<PhraseAt>,
}

/// How far apart words still count as said together: about thirty lines.
pub const NEAR_BYTES: usize = 1200;
/// Points for the question's words said within [`NEAR_BYTES`] of each
/// other, all of them (by weight): a function about the topic says them
/// together, a long file mentioning everything says them apart.
const NEAR_POINTS: f64 = 60.0;
/// Points for the question's words met in identifiers the text defines,
/// all of them (by weight): `alerts_check_bell` is defined in the file
/// about bells, and only called elsewhere.
const DEFINED_POINTS: f64 = 60.0;

/// How much more the words' counts weigh in a question that describes
/// ([`describing_share`]): eight times. A long question says what the code
/// does, in words its answer's path seldom has, and the text's few points
/// lost to any path holding one of its common words (issue 45's
/// content-only questions; judged on the read sets and held against
/// unseen-5 to unseen-7, see bench/README).
const MOST_TEXT_SCALE: f64 = 8.0;
/// Points for saying a quoted phrase: more than a file earns by its name
/// ("file name matches stubbing" put `Stubbing.java` above the `Reporter`
/// that says 'Unfinished stubbing detected'), less than a definition the
/// question names.
const PHRASE_POINTS: f64 = 200.0;

#[derive(Debug, Clone, PartialEq)]
pub struct Named {
    pub how: NameMatch,
    pub name: String,
    pub line: u32,
    pub defined: bool,
    pub count: u32,
}

impl ContentQuery {
    /// `None` when no token is an ASCII word of two letters or more (the
    /// postings fold ASCII only, so only such words narrow exactly).
    pub fn new(tokens: &[String]) -> Option<ContentQuery> {
        Self::quoting(tokens, Phrases::default())
    }

    /// [`ContentQuery::new`] for a question quoting `phrases`: the two
    /// rarest words of each are among the words read, so a file saying a
    /// phrase holds the words a candidate needs, with an index or without.
    pub fn quoting(tokens: &[String], phrases: Phrases) -> Option<ContentQuery> {
        let mut chosen: Vec<&String> = tokens
            .iter()
            .filter(|t| t.len() >= 2 && t.bytes().all(|b| b.is_ascii_alphanumeric()))
            .collect();
        if chosen.is_empty() {
            return None;
        }
        let rarest = |t: &&String| std::cmp::Reverse((points_of(rarity::weight(t)), t.len()));
        let quoted: Vec<&String> = (phrases.texts().iter())
            .flat_map(|p| {
                let said = tokens::split(p);
                let mut words: Vec<&String> = (chosen.iter().copied())
                    .filter(|t| said.contains(t))
                    .collect();
                words.sort_by_key(rarest);
                words.truncate(2);
                words
            })
            .collect();
        // The rarest words say the most (`pane` more than `given`), then
        // the longest; ties keep the query's order.
        chosen.sort_by_key(|t| (!quoted.contains(t), rarest(t)));
        chosen.truncate(MAX_WORDS);
        chosen.sort_by_key(|t| tokens.iter().position(|x| x == *t));
        let prefixes: Vec<String> = chosen
            .iter()
            .map(|t| t.chars().take(ABBREVIATION_MIN).collect())
            .collect();
        let words = chosen
            .iter()
            .zip(&prefixes)
            .map(|(t, p)| {
                Some(Word {
                    text: t.to_string(),
                    prefix: Regex::new(&format!("(?i-u){}", regex::escape(p))).ok()?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let held = (tokens.iter())
            .map(|t| {
                let p: String = t.chars().take(ABBREVIATION_MIN).collect();
                let ascii = t.len() >= 2 && t.bytes().all(|b| b.is_ascii_alphanumeric());
                ascii
                    .then(|| Regex::new(&format!("(?i-u){}", regex::escape(&p))).ok())
                    .flatten()
            })
            .collect();
        let weights = rarity::weights(&chosen);
        Some(ContentQuery {
            tokens: tokens.to_vec(),
            words,
            held,
            narrow: narrow_pattern(&prefixes),
            letters: tokens.concat(),
            needed: words_needed(prefixes.len()),
            points: weights.iter().map(|&w| points_of(w)).collect(),
            weights,
            min_points: 0,
            phrases,
        })
    }

    /// A regex the index's planner turns into "holds each word's first
    /// letters" (an AND of their trigrams, in any order). Only ever weaker
    /// than [`ContentQuery::score`]'s test when every word is needed.
    pub fn narrow(&self) -> &str {
        &self.narrow
    }

    /// One regex per word, planned as "holds that word's first letters".
    pub fn narrow_each(&self) -> Vec<String> {
        (self.words.iter())
            .map(|w| narrow_pattern(&[w.text.chars().take(ABBREVIATION_MIN).collect()]))
            .collect()
    }

    /// How many words a candidate must hold.
    pub fn needed(&self) -> usize {
        self.needed
    }

    /// Each word's weight in points (a hundred for an average word).
    pub fn points(&self) -> &[u32] {
        &self.points
    }

    /// The points a candidate's words must reach beside their number.
    pub fn min_points(&self) -> u32 {
        self.min_points
    }

    /// The same query whose candidates must also hold words worth
    /// `min_points`: raised when the index finds too many files holding
    /// fewer for the pass to read.
    pub fn needing_points(&self, min_points: u32) -> ContentQuery {
        ContentQuery {
            min_points,
            ..self.clone()
        }
    }

    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.words.iter().map(|w| w.text.as_str())
    }

    /// The file's score, or `None` when it lacks a word and no identifier
    /// there names the query.
    pub fn score(&self, buf: &[u8]) -> Option<ContentScore> {
        let (said, qualifies) = self.measure(buf);
        qualifies.then_some(said)
    }

    /// What the text says whether or not it holds every word: for a file
    /// named by the query, whose text is read to see which of the words
    /// its path lacks it holds (issue 45).
    pub fn measure_any(&self, buf: &[u8]) -> ContentScore {
        self.measure(buf).0
    }

    fn measure(&self, buf: &[u8]) -> (ContentScore, bool) {
        let mut counts = vec![0u32; self.words.len()];
        // Each word's first letters must be in the file, whatever else
        // matched: that is exactly what the index's narrowing asks, so a
        // file it rules out is never one this would take.
        let mut present = vec![false; self.words.len()];
        let mut named: Option<Named> = None;
        let mut seen_starts: FxHashSet<usize> = FxHashSet::default();
        let mut looked = 0;
        // A file says the same identifiers again and again: what each
        // says is worked out once, for every word at a time (splitting
        // and naming were most of the pass's time on curl, and a third
        // of `usb hub`'s on the Linux tree).
        let mut idents: FxHashMap<&[u8], Ident> = FxHashMap::default();
        let mut whole = vec![false; self.words.len()];
        let mut shortened: Vec<Option<String>> = vec![None; self.words.len()];
        let mut defined_words = 0u8;
        let mut places: Vec<(u32, u8)> = Vec::new();
        for (wi, w) in self.words.iter().enumerate() {
            for m in w.prefix.find_iter(buf) {
                present[wi] = true;
                if counts[wi] >= MAX_COUNT {
                    break;
                }
                let (start, end) = identifier_around(buf, m.start(), m.end());
                let Ok(ident) = std::str::from_utf8(&buf[start..end]) else {
                    continue;
                };
                let key = &buf[start..end];
                let said = idents.entry(key).or_insert_with(|| {
                    let (meets, whole) = self.meets(ident);
                    Ident {
                        meets,
                        def_checks: 0,
                        defined: false,
                        whole,
                        how: None,
                    }
                });
                if said.meets & 1 << wi != 0 {
                    if !said.defined && said.def_checks < 3 {
                        said.def_checks += 1;
                        if defines_at(buf, start, end) {
                            said.defined = true;
                            defined_words |= said.meets;
                        }
                    }
                    if places.len() < MAX_PLACES {
                        places.push((m.start() as u32, wi as u8));
                    }
                    counts[wi] += 1;
                    if said.whole & 1 << wi != 0 {
                        whole[wi] = true;
                    } else if shortened[wi].is_none() {
                        shortened[wi] = shortened_form(&w.text, ident);
                    }
                }
                // Past the bound nothing more is looked at (tested first:
                // the set is never asked again once it is full).
                if looked >= MAX_IDENTIFIERS || !seen_starts.insert(start) {
                    continue;
                }
                looked += 1;
                let how = *said.how.get_or_insert_with(|| {
                    tokens::may_name_query(ident, &self.tokens, &self.letters)
                        .then(|| tokens::names_query_by_split(ident, &self.tokens))
                        .flatten()
                });
                let Some(how) = how else {
                    continue;
                };
                // The line is counted only when it is kept (counting it
                // for every mention read the file again per mention).
                let line = || 1 + memchr::memchr_iter(b'\n', &buf[..start]).count() as u32;
                if let Some(n) = named.as_mut().filter(|n| n.name == ident) {
                    n.count += 1;
                    if !n.defined && defines_at(buf, start, end) {
                        (n.defined, n.line) = (true, line());
                    }
                    continue;
                }
                let defined = defines_at(buf, start, end);
                if named
                    .as_ref()
                    .is_some_and(|n| (n.how, !n.defined) <= (how, !defined))
                {
                    continue;
                }
                named = Some(Named {
                    how,
                    name: ident.to_string(),
                    line: line(),
                    defined,
                    count: 1,
                });
            }
        }
        // The first letters of enough words are what the index's narrowing
        // asks; the words themselves, or a name of the whole query.
        let enough = |held: &mut dyn Iterator<Item = bool>| {
            let (mut n, mut worth) = (0, 0);
            for (h, p) in held.zip(&self.points) {
                n += usize::from(h);
                worth += if h { *p } else { 0 };
            }
            n >= self.needed && worth >= self.min_points
        };
        let qualifies = enough(&mut present.iter().copied())
            && (enough(&mut counts.iter().map(|&c| c > 0)) || named.is_some());
        // A token among the words is held when the text says it (its
        // first letters alone are also in other words: `transfer` is no
        // `transport`); another, by its first letters.
        let holds = (self.held.iter().zip(&self.tokens))
            .map(
                |(r, t)| match self.words.iter().position(|w| w.text == *t) {
                    Some(wi) => counts[wi] > 0,
                    None => r.as_ref().is_some_and(|r| r.is_match(buf)),
                },
            )
            .collect();
        let shortened = (shortened.into_iter().zip(whole))
            .map(|(form, whole)| form.filter(|_| !whole))
            .collect();
        let said = ContentScore {
            counts,
            bytes: buf.len() as u64,
            holds,
            named,
            shortened,
            defined_words,
            near_words: self.densest(&mut places),
            phrase: (!self.phrases.is_empty() && qualifies)
                .then(|| self.phrases.first_in(buf))
                .flatten(),
        };
        (said, qualifies)
    }
}

/// Word occurrences kept per file for [`ContentQuery::densest`].
const MAX_PLACES: usize = 4000;

impl ContentQuery {
    /// The words (a bit per word) of the stretch of [`NEAR_BYTES`] that
    /// says the most of them, by weight.
    fn densest(&self, places: &mut [(u32, u8)]) -> u8 {
        places.sort_unstable();
        let mut inside = [0u32; MAX_WORDS];
        let (mut best, mut best_worth, mut worth) = (0u8, 0u32, 0u32);
        let mut mask = 0u8;
        let mut from = 0;
        for i in 0..places.len() {
            let (at, wi) = places[i];
            let wi = wi as usize;
            if inside[wi] == 0 {
                mask |= 1 << wi;
                worth += self.points[wi];
            }
            inside[wi] += 1;
            while places[from].0 + (NEAR_BYTES as u32) < at {
                let w = places[from].1 as usize;
                inside[w] -= 1;
                if inside[w] == 0 {
                    mask &= !(1 << w);
                    worth -= self.points[w];
                }
                from += 1;
            }
            if worth > best_worth {
                (best, best_worth) = (mask, worth);
            }
        }
        best
    }

    /// Which words (a bit per word) one of the identifier's tokens meets
    /// ([`tokens::word_meets`]), and which of those one of them says whole
    /// ([`says_whole`]), from one split of the identifier. An ASCII
    /// identifier's tokens are compared in place: splitting each into
    /// lower-cased strings was most of the content pass after the reads on
    /// the Linux tree.
    fn meets(&self, ident: &str) -> (u8, u8) {
        let (mut meets, mut whole) = (0u8, 0u8);
        let mut mark = |i: usize, said_whole: bool| {
            meets |= 1 << i;
            whole |= u8::from(said_whole) << i;
        };
        if !ident.is_ascii() {
            for t in tokens::split(ident) {
                for (i, w) in self.words.iter().enumerate() {
                    if tokens::word_meets(&w.text, &t) {
                        mark(i, says_whole(&w.text, &t));
                    }
                }
            }
            return (meets, whole);
        }
        for t in tokens::ascii_tokens(ident.as_bytes()) {
            for (i, w) in self.words.iter().enumerate() {
                if let Some(starts) = ascii_word_meets(&w.text, t) {
                    // Not the word or a longer form: rare, so lower-cased only then.
                    let said_whole = starts
                        || std::str::from_utf8(t)
                            .is_ok_and(|t| says_whole(&w.text, &t.to_ascii_lowercase()));
                    mark(i, said_whole);
                }
            }
        }
        (meets, whole)
    }
}

impl ContentScore {
    /// Points for ranking: a few for the words' counts (saturating, and
    /// less in a long file: [`saturated`]), each in the share its
    /// [`rarity`] gives it (a file saying `csrf` twice is more on "csrf
    /// cookie response" than one saying `response` forty times), more for
    /// an identifier naming the query, most for its definition (what the
    /// outline, when it confirms it, replaces). The weights and the
    /// saturation were judged on the held-out set unseen-5 (locate hit@3
    /// 0.60 -> 0.63) and moved no older set down in MRR (issue 45).
    pub fn text_points(&self, q: &ContentQuery) -> f64 {
        let words: f64 = (self.counts.iter().zip(&q.weights))
            .map(|(&c, w)| w * saturated(c, self.bytes))
            .sum();
        // Three words' worth at most, however many the question has: the
        // text is one signal beside the path's.
        let share = 3.0 / self.counts.len().max(3) as f64;
        // The share of the question's weight that `mask`'s words carry.
        let worth = |mask: u8| -> f64 {
            (q.weights.iter().enumerate())
                .filter(|(i, _)| mask & 1 << i != 0)
                .map(|(_, w)| w)
                .sum::<f64>()
                / q.weights.len().max(1) as f64
        };
        let describing = describing_share(q.tokens.len());
        let near = if self.near_words.count_ones() >= 2 {
            NEAR_POINTS * worth(self.near_words)
        } else {
            0.0
        };
        let defined = DEFINED_POINTS * worth(self.defined_words);
        let scale = 1.0 + (MOST_TEXT_SCALE - 1.0) * describing;
        let phrase = if self.phrase.is_some() {
            PHRASE_POINTS
        } else {
            0.0
        };
        scale * share * words + self.mention_points() + describing * (near + defined) + phrase
    }

    /// The reason for saying a quoted phrase, first of a file's reasons.
    pub fn phrase_why(&self, q: &ContentQuery) -> Option<String> {
        let at = self.phrase?;
        Some(format!(
            "text says \"{}\" @ {}",
            q.phrases.text(at.phrase),
            at.line
        ))
    }

    /// The query tokens (by place) whose first letters the text lacks.
    pub fn lacks(&self) -> impl Iterator<Item = usize> + '_ {
        (self.holds.iter().enumerate()).filter_map(|(i, &h)| (!h).then_some(i))
    }

    /// The part of [`ContentScore::text_points`] for an identifier naming
    /// the query: a definition found in the outline replaces it.
    pub fn mention_points(&self) -> f64 {
        match &self.named {
            Some(n) if !n.defined => 40.0 + 4.0 * n.count.min(5) as f64,
            Some(n) => 4.0 * n.count.min(5) as f64,
            None => 0.0,
        }
    }

    /// The definition signal from text alone (`def raise_for_status(`).
    pub fn definition_points(&self) -> f64 {
        match &self.named {
            Some(n) if n.defined && n.how == NameMatch::Exact => 200.0,
            Some(n) if n.defined => 170.0,
            _ => 0.0,
        }
    }

    /// The reasons, in words.
    pub fn why(&self, q: &ContentQuery) -> Vec<String> {
        let mut why = Vec::new();
        if let Some(n) = &self.named {
            let how = match n.how {
                NameMatch::Exact => "",
                NameMatch::Reordered => " (words reordered)",
                NameMatch::Abbreviated => " (abbreviated)",
            };
            if n.defined {
                why.push(format!("text defines {} @ {}{how}", n.name, n.line));
            } else {
                why.push(format!("text names {}{how} ({}x)", n.name, n.count));
            }
        }
        // The words without their counts: a question of six words made
        // the counts a fifth of an answer, and they told an agent nothing
        // the rank does not (issue 45: half the words).
        let held: Vec<String> = (q.words().zip(&self.counts).enumerate())
            .filter(|(_, (_, &c))| c > 0)
            .map(|(i, (w, _))| match self.shortened.get(i) {
                Some(Some(form)) => format!("{form} for {w}"),
                _ => w.to_string(),
            })
            .collect();
        if !held.is_empty() {
            why.push(format!("text has {}", held.join(", ")));
        }
        why
    }
}

/// BM25's saturation of a count in a text of `bytes` (k1 1.2, b 0.75,
/// against a typical source file of 8 KiB), scaled to 30 points at most:
/// a word said ten times in a small file outweighs it said a hundred
/// times in a file fifty times longer (issue 45, class 3).
fn saturated(count: u32, bytes: u64) -> f64 {
    const K1: f64 = 1.2;
    const B: f64 = 0.75;
    const TYPICAL_BYTES: f64 = 8192.0;
    let tf = f64::from(count);
    let norm = K1 * (1.0 - B + B * bytes as f64 / TYPICAL_BYTES);
    30.0 * tf / (tf + norm)
}

/// `prefixes` in one order, any text between them. The pattern is only
/// planned, never matched: the planner makes it an AND of every prefix's
/// trigrams, which holds whatever their order in the file. (Every order
/// as alternatives planned to the same condition six times over for three
/// words, and past the postings' decode budget that became "every file":
/// on curl's 4,449 files the content pass then gave up, issue 45.)
fn narrow_pattern(prefixes: &[String]) -> String {
    let escaped: Vec<String> = prefixes.iter().map(|p| regex::escape(p)).collect();
    format!("(?s){}", escaped.join(".*"))
}

#[cfg(test)]
#[path = "content_tests.rs"]
mod tests;
