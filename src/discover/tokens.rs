//! The identifier token layer shared by `locate` and `trace`: one split for
//! every way a name is written, so `auth status`, `AuthStatus`,
//! `auth_status`, `auth-status`, `authStatus` and `src/auth` become the same
//! lower-case tokens, and "does `set` occur in `reset`?" is answered by
//! token boundaries instead of substrings.

pub use super::forms::{
    abbreviates_word, inflects, is_function_word, joined_words, related_word, short_forms, stem,
};

/// Splits on case changes (`authStatus`, `HTTPServer` → `http` `server`),
/// on letter/digit changes (`ext4` → `ext` `4`) and on every character that
/// is not a letter or digit (`_ - . /`, spaces). Lower-cased.
pub fn split(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut current, &mut out);
            continue;
        }
        if let Some(&prev) = i.checked_sub(1).and_then(|p| chars.get(p)) {
            let next = chars.get(i + 1).copied();
            let after = chars.get(i + 2).copied();
            if prev.is_alphanumeric() && starts_token(prev, c, next, after) {
                flush(&mut current, &mut out);
            }
        }
        current.extend(c.to_lowercase());
    }
    flush(&mut current, &mut out);
    out
}

fn flush(current: &mut String, out: &mut Vec<String>) {
    if !current.is_empty() {
        out.push(std::mem::take(current));
    }
}

/// Whether `c` (after `prev`, before `next` and `after`) begins a new token:
/// the one rule [`split`], [`ascii_tokens`] and trace's subject boundaries
/// (`relate.rs`) share, so that a text's tokens and a query's agree.
pub(crate) fn starts_token(prev: char, c: char, next: Option<char>, after: Option<char>) -> bool {
    if prev.is_ascii_digit() != c.is_ascii_digit() {
        return true;
    }
    if c.is_uppercase() {
        // `authStatus`: lower → upper. `HTTPServer`: the last capital of a run
        // that is followed by a lower-case letter starts the next word, but
        // not a plural `s` or a letter before a digit, which end the run's
        // own word: `URLs`, `IDs`, `IPv6` are `urls`, `ids`, `ipv` `6` (as
        // `ipv6` is), not `ur` `ls`, `i` `ds`, `i` `pv` `6`.
        let ends_run = match next {
            Some('s') => !after.is_some_and(char::is_lowercase),
            Some(n) if n.is_lowercase() => after.is_some_and(|a| a.is_ascii_digit()),
            _ => false,
        };
        return prev.is_lowercase()
            || (prev.is_uppercase() && next.is_some_and(char::is_lowercase) && !ends_run);
    }
    false
}

/// How one query token met a list of name tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TokenMatch {
    None,
    Prefix,
    /// Equal to a token, or to a run of adjacent tokens written together
    /// (`authstatus` against `auth` `status`).
    Exact,
}

/// The best way `query` meets `tokens`, and the index of the token it met.
pub fn match_token(query: &str, tokens: &[String]) -> (TokenMatch, Option<usize>) {
    let mut best = (TokenMatch::None, None);
    for (i, t) in tokens.iter().enumerate() {
        if t == query || joins_to(query, &tokens[i..]) {
            return (TokenMatch::Exact, Some(i));
        }
        // A one-letter or all-digit prefix says too little to count.
        let long_enough = query.chars().count() >= 2 && !query.bytes().all(|b| b.is_ascii_digit());
        if best.0 == TokenMatch::None && long_enough && t.starts_with(query) {
            best = (TokenMatch::Prefix, Some(i));
        }
    }
    best
}

/// `query` equals two or more of `tokens`' first entries written together.
/// Never a number: `31` is not said by the `3-1` of `jekyll-3-1-0`.
fn joins_to(query: &str, tokens: &[String]) -> bool {
    if query.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let mut rest = query;
    for (n, t) in tokens.iter().enumerate() {
        match rest.strip_prefix(t.as_str()) {
            Some("") => return n > 0,
            Some(r) => rest = r,
            None => return false,
        }
    }
    false
}

/// Whether `needle` occurs in `hay` as a run of whole tokens.
pub fn contains_run(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Whether `needle`, written without separators, equals `name`'s tokens
/// written without separators (`AuthStatus` names the subject `auth_status`).
pub fn same_name(name: &str, needle: &[String]) -> bool {
    let tokens = split(name);
    !tokens.is_empty() && tokens.concat() == needle.concat()
}

/// A symbol's own name without its owner: `Mux.Mount` (a Go method),
/// `Client::get`, `Router#add` are `Mount`, `get`, `add`.
pub fn own_name(symbol: &str) -> &str {
    let cut = symbol.rfind(['.', ':', '#']).map_or(0, |i| i + 1);
    &symbol[cut..]
}

/// Whether symbol `name` is `needle`, with or without its owner.
pub fn names_symbol(name: &str, needle: &[String]) -> bool {
    same_name(name, needle) || same_name(own_name(name), needle)
}

/// Whether symbol `name` is the subject as written, underscores around it
/// included: `_printk` is `_printk` and not `printk`; `__cookie_add` does
/// not define `cookie_add` (issue 45). Case and separators may differ.
pub fn names_symbol_as(name: &str, subject: &str) -> bool {
    let subject = subject.trim();
    let under = |s: &str| {
        (
            s.len() - s.trim_start_matches('_').len(),
            s.len() - s.trim_end_matches('_').len(),
        )
    };
    let words = split(subject);
    [name, own_name(name)]
        .iter()
        .any(|n| same_name(n, &words) && under(n) == under(subject))
}

/// How an identifier names a whole query, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NameMatch {
    /// The query's words as they stand (`auth_status` and `AuthStatus`).
    Exact,
    /// The same words in another order (`smart_case` and `CaseSmart`).
    Reordered,
    /// Abbreviated or spelt out on either side (`algo` and `algorithm`,
    /// `ipaddr` and `ip address`).
    Abbreviated,
}

/// An abbreviation must keep at least this many letters of its word
/// (`addr`, `algo`): shorter prefixes (`ad`, `al`) name half the code base.
/// locate's content search narrows by each word's first this-many letters,
/// which every form accepted here contains.
pub const ABBREVIATION_MIN: usize = 4;

/// Whether identifier `name` names the whole `query` (its tokens), and
/// how. Word order counts only for up to three words (six orders).
pub fn names_query(name: &str, query: &[String]) -> Option<NameMatch> {
    // The cheap test first: locate asks this of every symbol of the files
    // it outlines (8 % of a warm `nfs4 proc` on the Linux tree).
    if !may_name_query(name, query, &query.concat()) {
        return None;
    }
    names_query_by_split(name, query)
}

/// [`names_query`] without its cheap test (which must never turn away a
/// name this takes: content.rs's proptest checks one against the other).
pub(crate) fn names_query_by_split(name: &str, query: &[String]) -> Option<NameMatch> {
    let tokens = split(name);
    if tokens.is_empty() || query.is_empty() {
        return None;
    }
    if tokens.concat() == query.concat() {
        return Some(NameMatch::Exact);
    }
    let orders = orders_of(query);
    if orders.iter().skip(1).any(|o| tokens.concat() == o.concat()) {
        return Some(NameMatch::Reordered);
    }
    let spelt_out = abbreviates(query, &tokens);
    (spelt_out || orders.iter().any(|o| abbreviates(&tokens, o))).then_some(NameMatch::Abbreviated)
}

/// False only when [`names_query`] is false: a cheap test on an ASCII
/// `name`'s letters before its split (`letters` is `query` written
/// together). Written as the query's words in some order, abbreviated or
/// not, the name holds each word's first letters (up to
/// [`ABBREVIATION_MIN`]); the query written with the name's words
/// abbreviated begins as the name's first word does (up to three letters).
pub fn may_name_query(name: &str, query: &[String], letters: &str) -> bool {
    let bytes = name.as_bytes();
    if !name.is_ascii() {
        return true;
    }
    let lower: Vec<u8> = (bytes.iter())
        .filter(|b| b.is_ascii_alphanumeric())
        .map(u8::to_ascii_lowercase)
        .collect();
    let holds = |w: &String| {
        let head = &w.as_bytes()[..w.len().min(ABBREVIATION_MIN)];
        memchr::memmem::find(&lower, head).is_some()
    };
    if query.iter().all(holds) {
        return true;
    }
    let letters = letters.as_bytes();
    let head = |t: &[u8]| -> Vec<u8> { t[..t.len().min(3)].to_ascii_lowercase() };
    let mut words = ascii_tokens(bytes);
    let Some(first) = words.next() else {
        return false;
    };
    // Each of the name's words stands for a part of the query's letters,
    // the first for their beginning, and shares its first three letters.
    if !letters.starts_with(&head(first)) {
        return false;
    }
    let mut one_word = true;
    for t in words {
        one_word = false;
        if memchr::memmem::find(letters, &head(t)).is_none() {
            return false;
        }
    }
    // A name of one word is then the query's letters or begins them, or
    // the other way round (`schedule` is neither for `sched fair`).
    !one_word || letters.starts_with(&lower) || lower.starts_with(letters)
}

/// [`split`]'s tokens of an ASCII name, as written (not lower-cased).
pub(crate) fn ascii_tokens(name: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < name.len() && !name[at].is_ascii_alphanumeric() {
            at += 1;
        }
        let s = name.get(at..).filter(|s| !s.is_empty())?;
        let ends = |i: usize| {
            let at = |j: usize| s.get(j).map(|&b| b as char);
            !s[i].is_ascii_alphanumeric()
                || starts_token(s[i - 1] as char, s[i] as char, at(i + 1), at(i + 2))
        };
        let end = (1..s.len()).find(|&i| ends(i)).unwrap_or(s.len());
        at += end;
        Some(&s[..end])
    })
}

/// Whether one token of a text is the query word `word`, abbreviated
/// (`addr`, `stat`), extended (`algorithm`, `cases`) or inflected another
/// way (`parse` for `parsing`, `renaming` for `rename`, `retry` for
/// `retries`: a question's verbs are often gerunds the code never says), by
/// the rules of [`names_query`].
pub fn word_meets(word: &str, token: &str) -> bool {
    token == word
        || (token.len() >= ABBREVIATION_MIN && word.starts_with(token))
        || (word.len() >= 3 && token.starts_with(word))
        || inflection_of(word, token)
}

/// Whether `token` and `word` are one word inflected, either way round,
/// when both hold the word's first [`ABBREVIATION_MIN`] letters: those are
/// what locate's content search narrows by, so a form without them (`log`
/// for `logs`) is never looked at, walked or indexed alike.
pub fn inflection_of(word: &str, token: &str) -> bool {
    let head = word.get(..ABBREVIATION_MIN);
    head.is_some()
        && head == token.get(..ABBREVIATION_MIN)
        && (super::forms::inflected_from(token, word) || super::forms::inflected_from(word, token))
}

/// The query's word orders, its own first; only its own past three words.
fn orders_of(query: &[String]) -> Vec<Vec<String>> {
    let mut out = vec![query.to_vec()];
    if query.len() > 3 {
        return out;
    }
    let n = query.len();
    let mut idx: Vec<usize> = (0..n).collect();
    let mut all = Vec::new();
    permute(&mut idx, 0, &mut all);
    for p in all {
        let o: Vec<String> = p.iter().map(|&i| query[i].clone()).collect();
        if !out.contains(&o) {
            out.push(o);
        }
    }
    out
}

fn permute(idx: &mut Vec<usize>, k: usize, out: &mut Vec<Vec<usize>>) {
    if k == idx.len() {
        out.push(idx.clone());
        return;
    }
    for i in k..idx.len() {
        idx.swap(k, i);
        permute(idx, k + 1, out);
        idx.swap(k, i);
    }
}

/// Whether `name` (its tokens) is `query` written with words abbreviated
/// or spelt out: the name's letters split into one part per query word, a
/// part equal to its word, a prefix of it of [`ABBREVIATION_MIN`] letters
/// or more (`addr` for `address`, even inside `ipaddr`), or one whole name
/// token that the word begins (`algorithm` for `algo`).
fn abbreviates(name: &[String], query: &[String]) -> bool {
    let letters = name.concat();
    let mut ends = std::collections::BTreeSet::new();
    let mut at = 0;
    for t in name {
        at += t.len();
        ends.insert(at);
    }
    let bytes = letters.as_bytes();
    // reach[j]: the offsets the first j words can end at.
    let mut reach = vec![0usize];
    for q in query {
        let mut next = Vec::new();
        for &start in &reach {
            let token_end = ends.range(start + 1..).next().copied();
            // Parts end between characters: a name or question in any script.
            for end in (start + 1..=bytes.len()).filter(|&e| letters.is_char_boundary(e)) {
                let part = &letters[start..end];
                let ok = part == q.as_str()
                    || (part.len() >= ABBREVIATION_MIN && q.starts_with(part))
                    || (Some(end) == token_end && q.len() >= 3 && part.starts_with(q.as_str()));
                if ok && !next.contains(&end) {
                    next.push(end);
                }
            }
        }
        if next.is_empty() {
            return false;
        }
        reach = next;
    }
    reach.contains(&bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Vec<String> {
        split(text)
    }

    /// Words join (`queryparams`, `utf8`); numbers never (`3-1` is no `31`).
    #[test]
    fn a_number_is_never_tokens_written_together() {
        let name = s("2016-01-24-jekyll-3-1-0-released.markdown");
        assert_eq!(match_token("31", &name).0, TokenMatch::None);
        assert_eq!(match_token("01", &name).0, TokenMatch::Exact);
        assert_eq!(match_token("jekyll3", &name).0, TokenMatch::Exact);
        assert_eq!(
            match_token("queryparams", &s("query_params.py")).0,
            TokenMatch::Exact
        );
    }

    #[test]
    fn ascii_tokens_are_split_s_tokens() {
        for name in [
            "HTTPServer",
            "ext4_fill_super",
            "__x",
            "a$b",
            "getHTTP2Url",
            "ABC",
            "",
            "_",
        ] {
            let ours: Vec<String> = ascii_tokens(name.as_bytes())
                .map(|t| String::from_utf8_lossy(t).to_lowercase())
                .collect();
            assert_eq!(ours, split(name), "{name}");
        }
    }

    #[test]
    fn every_identifier_form_gives_the_same_tokens() {
        let want = vec!["auth".to_string(), "status".to_string()];
        for form in [
            "auth status",
            "AuthStatus",
            "auth_status",
            "auth-status",
            "authStatus",
            "AUTH_STATUS",
            "auth.status",
            "auth/status",
        ] {
            assert_eq!(s(form), want, "{form}");
        }
    }

    #[test]
    fn acronyms_and_digits_split_where_a_reader_would() {
        assert_eq!(s("HTTPServer"), ["http", "server"]);
        assert_eq!(s("parseURLs"), ["parse", "urls"]);
        assert_eq!(s("IDs"), ["ids"]);
        assert_eq!(s("IPv6 address"), ["ipv", "6", "address"]);
        assert_eq!(s("ipv6_addr"), ["ipv", "6", "addr"]);
        assert_eq!(s("toJSONTo"), ["to", "json", "to"]);
        assert_eq!(s("XMLHttpRequest"), ["xml", "http", "request"]);
        assert_eq!(s("parseURL"), ["parse", "url"]);
        assert_eq!(s("ext4_inode.c"), ["ext", "4", "inode", "c"]);
        assert_eq!(s("__init__.py"), ["init", "py"]);
        assert!(s("  --  ").is_empty());
    }

    #[test]
    fn a_token_matches_exactly_by_prefix_or_as_joined_tokens() {
        let path = s("kernel/sched/clock.c");
        assert_eq!(match_token("sched", &path).0, TokenMatch::Exact);
        assert_eq!(match_token("sch", &path).0, TokenMatch::Prefix);
        assert_eq!(match_token("schedclock", &path).0, TokenMatch::Exact);
        assert_eq!(
            match_token("lock", &path).0,
            TokenMatch::None,
            "no substring matches"
        );
        assert_eq!(
            match_token("c", &s("cpu/x.h")).0,
            TokenMatch::None,
            "one letter is no prefix"
        );
    }

    #[test]
    fn runs_and_names_compare_whole_tokens() {
        assert!(contains_run(&s("get_auth_status"), &s("auth_status")));
        assert!(!contains_run(&s("reset"), &s("set")));
        assert!(same_name("AuthStatus", &s("auth_status")));
        assert!(!same_name("AuthStatusBar", &s("auth_status")));
        assert!(names_symbol("Mux.Mount", &s("mount")));
        assert!(names_symbol("Client::get_status", &s("get status")));
    }

    #[test]
    fn names_match_in_any_order_and_abbreviated() {
        assert_eq!(
            names_query("AuthStatus", &s("auth status")),
            Some(NameMatch::Exact)
        );
        assert_eq!(
            names_query("CaseSmart", &s("smart_case")),
            Some(NameMatch::Reordered)
        );
        assert_eq!(
            names_query("algorithm", &s("algo")),
            Some(NameMatch::Abbreviated)
        );
        assert_eq!(
            names_query("ipaddr", &s("ip address")),
            Some(NameMatch::Abbreviated)
        );
        assert_eq!(
            names_query("IpAddress", &s("ipaddr")),
            Some(NameMatch::Abbreviated)
        );
        assert_eq!(
            names_query("parse_ip_addr", &s("ip address")),
            None,
            "a longer name only contains it"
        );
        assert_eq!(names_query("AlgorithmFactory", &s("algo")), None);
        assert_eq!(
            names_query("adder", &s("address")),
            None,
            "too short an abbreviation"
        );
    }
}
