//! The written forms of one question word, for the token layer
//! (`tokens`): the function words a question drops, stems (`chunks`,
//! `chunked`), abbreviations (`cfg` for `config`), words written together
//! (`dynbuf`) and the short letter runs every such form contains.

/// Words of a question that say nothing about where the answer is ("the
/// file that sets a cookie on the response"): a path or text lacking them
/// loses nothing, and no text is required to hold them.
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "the", "of", "in", "on", "for", "to", "from", "with", "by", "and", "or", "that",
    "which", "who", "whom", "whose", "is", "are", "was", "be", "been", "it", "its", "this",
    "these", "those", "how", "what", "where", "when", "why", "does", "do", "did", "into", "at",
    "as", "under", "than", "then", "there", "can", "should", "would", "will", "may", "via",
    "about", "before", "after", "if", "else", "each", "every", "any", "all", "some", "long", "not",
    "no", "without", "we", "you", "our", "your", "my", "i", "me", "us", "them", "they", "he",
    "she", "his", "her", "one", "new",
];

/// Whether `word` (a lower-case token) is a function word of a question.
pub fn is_function_word(word: &str) -> bool {
    FUNCTION_WORDS.contains(&word)
}

/// A word without its inflection (`chunked`, `chunks` → `chunk`;
/// `retrying` → `retry`; `reflection`, `reflective` → `reflect`;
/// `allocator`, `allocate` → `allocat`), kept at four letters or more.
/// The agent noun and the final `e` matter to a question's verb: "allocate
/// an instance" asks for `UnsafeAllocator.java` (issue 45).
pub fn stem(word: &str) -> &str {
    for suffix in [
        "ings", "ing", "ions", "ion", "ive", "ors", "or", "ers", "er", "ed", "es", "s", "ly",
    ] {
        if let Some(rest) = word.strip_suffix(suffix) {
            if rest.len() >= 4 {
                return rest;
            }
        }
    }
    match word.strip_suffix('e') {
        Some(rest) if rest.len() >= 4 => rest,
        _ => word,
    }
}

/// `word`'s first letter and the consonants after it (`config` → `cnfg`):
/// what a consonant abbreviation (`cfg`, `ctx`, `msg`) is drawn from.
fn skeleton(word: &str) -> String {
    let mut chars = word.chars();
    let mut out: String = chars.next().into_iter().collect();
    out.extend(chars.filter(|c| c.is_ascii_alphabetic() && !"aeiou".contains(*c)));
    out
}

fn is_subsequence(short: &str, long: &str) -> bool {
    let mut want = short.chars().peekable();
    for c in long.chars() {
        if want.peek() == Some(&c) {
            want.next();
        }
    }
    want.peek().is_none()
}

/// Whether `short` abbreviates `word`: a prefix of three letters or more
/// (`req`, `gen`, `buf`, `conn`, `impl`), or its first letter followed by
/// consonants drawn in order from the word (`cfg` for `config`, `ctx` for
/// `context`, `msg` for `message`, `fn` for `function`; two letters only
/// as the word's first two consonants).
pub fn abbreviates_word(short: &str, word: &str) -> bool {
    let (n, m) = (short.len(), word.len());
    // `all` is a word of its own, not `allocator` cut short.
    if n < 2 || n >= m || !short.is_ascii() || !word.is_ascii() || is_function_word(short) {
        return false;
    }
    if n >= 3 && word.starts_with(short) {
        return true;
    }
    let consonants = short.bytes().skip(1).all(|b| !b"aeiou".contains(&b));
    let sk = skeleton(word);
    consonants
        && short.as_bytes()[0] == word.as_bytes()[0]
        && if n == 2 {
            sk.starts_with(short)
        } else {
            // Its first three letters from the word's first four consonants.
            let head: String = sk.chars().take(5).collect();
            is_subsequence(&short[..3], &head) && is_subsequence(short, &sk)
        }
}

/// Whether a name token is a query word written differently: inflected
/// (`chunks` for `chunked`) or abbreviated (`cfg` for `config`). Only
/// the name's side is abbreviated: a path holding such a form holds one
/// of the word's [`short_forms`], which is what the byte prefilter asks.
pub fn related_word(word: &str, token: &str) -> bool {
    // Every form shares the word's first letter: most tokens stop here.
    word.as_bytes().first() == token.as_bytes().first()
        && (inflects(word, token) || abbreviates_word(token, word))
}

/// Whether `word` is `token` with an inflection's ending (`cached` from
/// `cache`, `throwables` from `throwable`, `caching` from `cache`): the
/// same word to a reader, where `sets` for `setsid` is another.
pub fn inflected_from(token: &str, word: &str) -> bool {
    const ENDINGS: [&str; 9] = ["s", "es", "d", "ed", "ing", "er", "ers", "ion", "ions"];
    let ends = |base: &str| {
        word.strip_prefix(base)
            .is_some_and(|e| ENDINGS.contains(&e))
    };
    // `stopped` from `stop`: the last consonant doubled before the ending.
    let doubled = token.chars().last().is_some_and(|last| {
        word.strip_prefix(token)
            .and_then(|rest| rest.strip_prefix(last))
            .is_some_and(|e| ["ed", "ing", "er", "ers"].contains(&e))
    });
    // `retries` from `retry`.
    let plural_y = token.strip_suffix('y').is_some_and(|base| {
        word.strip_prefix(base)
            .is_some_and(|e| e == "ies" || e == "ied")
    });
    ends(token) || doubled || plural_y || token.strip_suffix('e').is_some_and(ends)
}

/// Whether two words share a stem of four letters or more (`chunks`,
/// `chunked`): stronger evidence than an abbreviation.
pub fn inflects(word: &str, token: &str) -> bool {
    let (a, b) = (stem(word), stem(token));
    word == token || (a.len().min(b.len()) >= 4 && (a.starts_with(b) || b.starts_with(a)))
}

/// Whether `token` is two or more of `words` written together, each equal
/// to its word or related to it (`parsecfg` for `parse` `config`,
/// `dynbuf` for `dynamic` `buffer`). Returns the words it holds. A part
/// of two letters counts only as a whole word: as two abbreviations,
/// `char` was `ch` `ar` for "check" "argument" and `arch` the same words
/// the other way (issue 45, commons-lang's `CharUtils` and `ArchUtils`).
pub fn joined_words<'a>(token: &str, words: &'a [String]) -> Vec<&'a str> {
    fn walk<'a>(rest: &str, words: &'a [String], used: &mut Vec<&'a str>) -> bool {
        if rest.is_empty() {
            return used.len() >= 2;
        }
        for end in (2..=rest.len()).filter(|&e| rest.is_char_boundary(e)) {
            let part = &rest[..end];
            for w in words {
                let related = part.len() >= 3 && related_word(w, part);
                if used.contains(&w.as_str()) || !(part == w || related) {
                    continue;
                }
                used.push(w.as_str());
                if walk(&rest[end..], words, used) {
                    return true;
                }
                used.pop();
            }
        }
        false
    }
    let mut used = Vec::new();
    // Two words need four letters at least; the first must begin one.
    let starts = |t: &str| {
        words
            .iter()
            .any(|w| w.as_bytes().first() == t.as_bytes().first())
    };
    let plausible = token.len() >= 4 && token.len() <= 24 && starts(token);
    if token.is_ascii() && plausible && walk(token, words, &mut used) {
        used
    } else {
        Vec::new()
    }
}

/// The letter runs that any path holding `word` in some written form
/// ([`related_word`] with the path's form shorter or equal, or
/// [`joined_words`]) contains: its first three letters, its first two
/// consonants, and every first-letter-plus-two-consonants drawn from its
/// first four consonants.
/// A path with none of them cannot meet the word that way.
pub fn short_forms(word: &str) -> Vec<String> {
    let mut out = Vec::new();
    if !word.is_ascii() || word.len() < 2 {
        return vec![word.to_string()];
    }
    out.push(word.chars().take(3).collect::<String>());
    let sk: Vec<char> = skeleton(word).chars().collect();
    if sk.len() >= 2 {
        out.push(sk[..2].iter().collect());
    }
    // Abbreviations draw on a word's first consonants (`cfg`, `ctx`,
    // `msg`): four are enough, and keep the forms few for the prefilter.
    let sk = &sk[..sk.len().min(5)];
    for i in 1..sk.len() {
        for j in i + 1..sk.len() {
            out.push([sk[0], sk[i], sk[j]].iter().collect());
        }
    }
    // Inflected forms share the stem's first four letters, and so its first three.
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Vec<String> {
        super::super::tokens::split(text)
    }

    #[test]
    fn an_inflection_is_the_word_a_shortened_form_is_not() {
        for (token, word) in [
            ("cache", "cached"),
            ("cache", "caching"),
            ("throwable", "throwables"),
            ("stop", "stopped"),
            ("queue", "queued"),
            ("retry", "retries"),
            ("parse", "parsing"),
        ] {
            assert!(inflected_from(token, word), "{token} {word}");
        }
        for (token, word) in [
            ("sets", "setsid"),
            ("thread", "threadpool"),
            ("conf", "config"),
        ] {
            assert!(!inflected_from(token, word), "{token} {word}");
        }
    }

    #[test]
    fn abbreviations_and_inflections_are_the_same_word() {
        for (word, short) in [
            ("config", "cfg"),
            ("context", "ctx"),
            ("request", "req"),
            ("generator", "gen"),
            ("connection", "conn"),
            ("buffer", "buf"),
            ("error", "err"),
            ("message", "msg"),
            ("implementation", "impl"),
            ("function", "fn"),
            ("dynamic", "dyn"),
        ] {
            assert!(abbreviates_word(short, word), "{short} {word}");
            assert!(related_word(word, short), "{short} {word}");
            let forms = short_forms(word);
            assert!(
                forms.iter().any(|f| short.contains(f.as_str())),
                "{word}: {forms:?}"
            );
        }
        assert!(related_word("chunked", "chunks"));
        assert!(related_word("retrying", "retry"));
        assert!(related_word("reflection", "reflective"));
        assert!(related_word("allocate", "allocator"));
        assert!(related_word("iterate", "iterators"));
        assert!(
            !abbreviates_word("cat", "certificate"),
            "a vowel: only as a prefix"
        );
        assert!(
            !abbreviates_word("ws", "windows"),
            "two letters: the first two consonants only"
        );
        assert!(!related_word("set", "reset"));
        assert!(!related_word("allocator", "all"), "a word of its own");
        assert_eq!(
            joined_words("parsecfg", &s("parse config file")),
            ["parse", "config"]
        );
        assert_eq!(
            joined_words("dynbuf", &s("dynamic buffer")),
            ["dynamic", "buffer"]
        );
        assert!(joined_words("hostcheck", &s("certificate name")).is_empty());
        // Two letters are a part only as the whole word.
        for name in ["char", "arch"] {
            assert!(
                joined_words(name, &s("check argument")).is_empty(),
                "{name}"
            );
        }
        assert_eq!(joined_words("iobuf", &s("io buffer")), ["io", "buffer"]);
        assert!(is_function_word("the") && !is_function_word("cookie"));
    }
}
