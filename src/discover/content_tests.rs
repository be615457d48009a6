//! The content pass's tests: what a text says of a query, the quick test
//! before naming, and the narrowing pattern; the measure of each
//! identifier held to a plain reference.

use super::*;
use crate::discover::forms;

fn query(q: &str) -> ContentQuery {
    ContentQuery::new(&tokens::split(q)).unwrap()
}

#[test]
fn a_definition_in_any_form_is_found_and_told_from_a_mention() {
    let q = query("raise_for_status");
    let def = q
        .score(b"class Response:\n    def raise_for_status(self):\n        pass\n")
        .unwrap();
    let n = def.named.clone().unwrap();
    assert!(n.defined && n.line == 2, "{n:?}");
    let mention = q.score(b"r = get()\nr.raise_for_status()\n").unwrap();
    assert!(!mention.named.clone().unwrap().defined);
    assert!(
        def.definition_points() + def.text_points(&q)
            > mention.definition_points() + mention.text_points(&q)
    );
    let reordered = query("smart_case")
        .score(b"func (o *Options) CaseSmart() bool {\n")
        .unwrap();
    assert_eq!(reordered.named.unwrap().how, NameMatch::Reordered);
    assert!(query("ip address").score(b"let ipaddr = 1;\n").is_some());
}

use proptest::prelude::*;

fn piece() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "ip",
        "Addr",
        "address",
        "IP",
        "algo",
        "Algorithm",
        "smart",
        "Case",
        "_",
        "$",
        "2",
        "parse",
        "cfg",
        "Config",
        "con",
        "HTTP",
        "Server",
        "x",
        "ab",
        "abc",
        "abcd",
        "usb",
        "hub",
        "Usb",
        "HUB",
        "4",
        "ext",
    ])
    .prop_map(str::to_string)
}

fn text() -> impl Strategy<Value = Vec<u8>> {
    let bit = prop::sample::select(vec![
        " ", "\n", "_", "(", "def ", "fn ", "usb", "hub", "Usb", "HUB", "usb_hub", "UsbHub",
        "hub_usb", "usbhub", "hubs", "usbcore", "hu", "\u{e9}", "\u{ff}", "con", "config",
        "USBHub", "Hub2", "2", "$", "CONFIG", "Conf", "fig", "usbHUBs", "Usb4Hub",
    ]);
    prop::collection::vec(bit, 0..1500).prop_map(|v| v.concat().into_bytes())
}
/// `measure` as it was before its identifiers were cached for every
/// word at once (kept to check the new one against).
fn measure_by_word(q: &ContentQuery, buf: &[u8]) -> (ContentScore, bool) {
    let mut counts = vec![0u32; q.words.len()];
    // Each word's first letters must be in the file, whatever else
    // matched: that is exactly what the index's narrowing asks, so a
    // file it rules out is never one this would take.
    let mut present = vec![false; q.words.len()];
    let mut named: Option<Named> = None;
    let mut seen_starts = Vec::new();
    let mut looked = 0;
    // A file says the same identifiers again and again: what each
    // says is worked out once (splitting and naming were most of the
    // pass's time on curl).
    let mut meets: std::collections::HashMap<(usize, &[u8]), (bool, bool)> =
        std::collections::HashMap::new();
    let mut whole = vec![false; q.words.len()];
    let mut shortened: Vec<Option<String>> = vec![None; q.words.len()];
    let mut names: std::collections::HashMap<&[u8], Option<NameMatch>> =
        std::collections::HashMap::new();
    let mut checks: std::collections::HashMap<&[u8], (u8, bool)> = std::collections::HashMap::new();
    let mut defined_words = 0u8;
    let mut places: Vec<(u32, u8)> = Vec::new();
    for (wi, w) in q.words.iter().enumerate() {
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
            let (word_met, whole_met) = *meets.entry((wi, key)).or_insert_with(|| {
                let met: Vec<String> = (tokens::split(ident).into_iter())
                    .filter(|t| tokens::word_meets(&w.text, t))
                    .collect();
                let long = (met.iter())
                    .any(|t| t.starts_with(&w.text) || forms::inflected_from(t, &w.text));
                (!met.is_empty(), long)
            });
            if word_met {
                let checked = checks.entry(key).or_insert((0, false));
                if !checked.1 && checked.0 < 3 {
                    checked.0 += 1;
                    if defines_at(buf, start, end) {
                        checked.1 = true;
                        for (i, other) in q.words.iter().enumerate() {
                            if tokens::split(ident)
                                .iter()
                                .any(|t| tokens::word_meets(&other.text, t))
                            {
                                defined_words |= 1 << i;
                            }
                        }
                    }
                }
                if places.len() < MAX_PLACES {
                    places.push((m.start() as u32, wi as u8));
                }
                counts[wi] += 1;
                if whole_met {
                    whole[wi] = true;
                } else if shortened[wi].is_none() {
                    shortened[wi] = (tokens::split(ident).into_iter()).find(|t| {
                        tokens::word_meets(&w.text, t)
                            && !t.starts_with(&w.text)
                            && !forms::inflected_from(t, &w.text)
                    });
                }
            }
            if seen_starts.contains(&start) || looked >= MAX_IDENTIFIERS {
                continue;
            }
            seen_starts.push(start);
            looked += 1;
            let how = *names.entry(key).or_insert_with(|| {
                tokens::may_name_query(ident, &q.tokens, &q.letters)
                    .then(|| tokens::names_query(ident, &q.tokens))
                    .flatten()
            });
            let Some(how) = how else {
                continue;
            };
            let line = 1 + memchr::memchr_iter(b'\n', &buf[..start]).count() as u32;
            let defined = defines_at(buf, start, end);
            match &mut named {
                Some(n) if n.name == ident => {
                    n.count += 1;
                    if defined && !n.defined {
                        (n.defined, n.line) = (true, line);
                    }
                }
                Some(n) if (n.how, !n.defined) <= (how, !defined) => {}
                _ => {
                    named = Some(Named {
                        how,
                        name: ident.to_string(),
                        line,
                        defined,
                        count: 1,
                    })
                }
            }
        }
    }
    let points = q.points();
    let enough = |held: Vec<bool>| {
        let n = held.iter().filter(|&&h| h).count();
        let worth: u32 = (held.iter().zip(points))
            .filter(|(&h, _)| h)
            .map(|(_, p)| p)
            .sum();
        n >= q.needed && worth >= q.min_points
    };
    let qualifies = enough(present.clone())
        && (enough(counts.iter().map(|&c| c > 0).collect()) || named.is_some());
    // A token among the words is held when the text says it.
    let holds = (q.held.iter().zip(&q.tokens))
        .map(|(r, t)| match q.words.iter().position(|w| w.text == *t) {
            Some(wi) => counts[wi] > 0,
            None => r.as_ref().is_some_and(|r| r.is_match(buf)),
        })
        .collect();
    let shortened = (shortened.into_iter().zip(whole))
        .map(|(form, whole)| if whole { None } else { form })
        .collect();
    let said = ContentScore {
        counts,
        bytes: buf.len() as u64,
        holds,
        named,
        shortened,
        defined_words,
        near_words: densest_by_every_window(q, &mut places),
        phrase: None, // its queries quote nothing
    };
    (said, qualifies)
}

/// [`ContentQuery::densest`] by looking back from every place over all
/// those before it.
fn densest_by_every_window(q: &ContentQuery, places: &mut [(u32, u8)]) -> u8 {
    places.sort_unstable();
    let (mut best, mut best_worth) = (0u8, 0u32);
    for (i, &(at, _)) in places.iter().enumerate() {
        let mask = (places[..=i].iter())
            .filter(|(p, _)| p + NEAR_BYTES as u32 >= at)
            .fold(0u8, |m, &(_, w)| m | 1 << w);
        let worth = (0..q.words.len())
            .filter(|w| mask & 1 << w != 0)
            .map(|w| q.points()[w])
            .sum();
        if worth > best_worth {
            (best, best_worth) = (mask, worth);
        }
    }
    best
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]


    /// The cheap test before naming never turns a name away that
    /// names the query.
    #[test]
    fn the_quick_test_never_turns_a_name_away(
        name in prop::collection::vec(piece(), 1..4),
        query in prop::collection::vec(piece(), 1..4),
    ) {
        let (name, query) = (name.concat(), tokens::split(&query.join(" ")));
        let letters = query.concat();
        if tokens::names_query_by_split(&name, &query).is_some() {
            prop_assert!(tokens::may_name_query(&name, &query, &letters), "{name} {query:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Caching what each identifier says for every word at once, and
    /// counting a kept mention's line only when it is kept, says the
    /// same as asking per word (speed only, issue 45).
    #[test]
    fn measuring_once_per_identifier_says_what_measuring_per_word_said(
        buf in text(),
        query in prop::sample::select(vec!["usb hub", "hub", "usb hub core", "con fig", "usb_hub", "config hub"]),
    ) {
        let q = self::query(query);
        prop_assert_eq!(q.measure(&buf), measure_by_word(&q, &buf));
    }
}

#[test]
fn the_quick_test_turns_names_of_other_things_away() {
    let q = tokens::split("sched fair");
    for name in [
        "schedule",
        "fair_share",
        "unfair",
        "fairness",
        "sched_entity",
    ] {
        assert!(!tokens::may_name_query(name, &q, "schedfair"), "{name}");
    }
    for name in ["sched_fair", "FairSched", "schedFairness", "SchedFair2"] {
        assert!(tokens::may_name_query(name, &q, "schedfair"), "{name}");
    }
}

#[test]
fn a_long_questions_text_need_hold_only_two_of_its_words() {
    let q = query("innermost cause chain wrapped throwable");
    assert_eq!(q.needed(), 2);
    let three = b"Throwable getRootCause(Throwable t) { /* the chain of causes */ }\n";
    let said = q.score(three).expect("holds three of five words");
    assert_eq!(said.holds, [false, true, true, false, true]);
    assert_eq!(said.lacks().collect::<Vec<_>>(), [0, 3]);
    assert!(
        q.score(b"the chain of throwable\n").is_some(),
        "two of five"
    );
    assert_eq!(q.score(b"the chain of events\n"), None, "one of five");
    // The index may ask for the words' points to reach more: then the
    // three held must be worth it.
    let p = q.points();
    let held = p[1] + p[2] + p[4];
    assert!(q.needing_points(held).score(three).is_some());
    assert_eq!(q.needing_points(held + 1).score(three), None);
    assert_eq!(
        query("ip address").needed(),
        2,
        "a short question needs all"
    );
    let each = q.narrow_each();
    assert_eq!(each[0], "(?s)inne");
    assert_eq!(each.len(), 5);
}

#[test]
fn a_file_lacking_a_word_is_no_candidate() {
    assert_eq!(query("raise_for_status").score(b"raise the bar\n"), None);
    assert_eq!(query("smart case").score(b"smartest thing\n"), None);
    // `ip_addr_lookup` names `ipaddr lookup`, but `ipad` is not in the
    // text, so the index would rule the file out: so does the walk.
    assert_eq!(query("ipaddr lookup").score(b"ip_addr_lookup()\n"), None);
}

#[test]
fn the_narrowing_pattern_plans_to_every_prefix_in_any_order() {
    assert_eq!(query("smart case").narrow(), "(?s)smar.*case");
    use crate::index::planner::{plan, Query};
    let trigrams = |q: Query| match q {
        Query::And(v) => {
            let mut k: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
            k.sort();
            k
        }
        other => panic!("not an AND of trigrams: {other:?}"),
    };
    let planned = trigrams(plan(query("smart case").narrow(), false, false));
    assert_eq!(planned, trigrams(plan("(?s)case.*smar", false, false)));
    assert_eq!(planned.len(), 4, "{planned:?}");
    assert!(ContentQuery::new(&tokens::split("x y")).is_none());
}

/// A word the text says only shortened is named with its form: "text has
/// setsid" for a file saying `sets` alone was false (nginx's upstream
/// module, issue 45); said whole anywhere, it is the word alone.
#[test]
fn a_word_said_only_shortened_is_named_with_its_form() {
    let q = query("fork setsid");
    let only_short = q.measure_any(b"/* fork, then it sets the lock */\n");
    assert_eq!(only_short.why(&q), ["text has fork, sets for setsid"]);
    let whole = q.measure_any(b"/* sets the lock */ fork(); setsid();\n");
    assert_eq!(whole.why(&q), ["text has fork, setsid"]);
}

/// An identifier takes in the letters of any script around a word, and
/// stops at what is not a letter or digit (`excluído`, not `exclu`;
/// `config` out of `“config”`).
#[test]
fn an_identifier_is_read_whole_in_any_script() {
    let around = |text: &str, word: &str| {
        let at = text.find(word).unwrap();
        let (s, e) = identifier_around(text.as_bytes(), at, at + word.len());
        text[s..e].to_string()
    };
    assert_eq!(around("o caminho é excluído aqui", "exclu"), "excluído");
    assert_eq!(around("the “config” file", "conf"), "config");
    assert_eq!(around("naïve_config = 1", "conf"), "naïve_config");
    assert_eq!(around("é", "é"), "é");
    let q = query("path excluded");
    let said = q.measure_any("o caminho path é excluído\n".as_bytes());
    assert_eq!(said.why(&q), ["text has path"]);
}

/// A question's verbs are often gerunds ("parsing escape sequences",
/// "automatic renaming") that the code says as the verb, and the other way
/// round: the text holds the word, and the reason says in what form.
#[test]
fn a_gerund_meets_the_verb_the_text_says_and_the_reason_names_its_form() {
    let q = query("parsing escape sequences");
    let said = q
        .score(b"static int input_parse(struct ctx *c) { /* escape sequence */ }\n")
        .unwrap();
    assert!(said.counts.iter().all(|&c| c > 0), "{said:?}");
    assert_eq!(said.why(&q), ["text has parsing, escape, sequences"]);
    let q = query("automatic rename");
    let said = q.score(b"/* automatic renaming of windows */\n").unwrap();
    assert_eq!(said.why(&q), ["text has automatic, renaming for rename"]);
    let q = query("retries backoff");
    assert!(q.score(b"retry_after(backoff);\n").is_some());
    // The first letters still decide: `log` is never read for `logs`.
    let q = query("logs rotation");
    assert!(q.score(b"log_rotation();\n").is_none());
}

/// The words a text says within a few lines of each other are told from
/// the same words spread over a long file, and the words an identifier it
/// defines meets from those it only mentions.
#[test]
fn words_said_together_and_words_of_definitions_are_told_apart() {
    let q = query("bell activity silence");
    let together = b"static void\nalerts_check_bell(struct window *w)\n{\n\tif (w->activity || w->silence) return;\n}\n";
    let said = q.score(together).unwrap();
    assert_eq!(said.near_words, 0b111, "{said:?}");
    assert_eq!(said.defined_words, 0b001, "{said:?}");
    let mut apart = String::from("ring(bell);\n");
    apart.push_str(&"int filler_value = 0;\n".repeat(200));
    apart.push_str("log(activity);\n");
    apart.push_str(&"int filler_value = 0;\n".repeat(200));
    apart.push_str("x = silence;\n");
    let said = q.score(apart.as_bytes()).unwrap();
    assert_eq!(said.near_words.count_ones(), 1, "{said:?}");
    assert_eq!(said.defined_words, 0, "{said:?}");
    // A statement at the start of a line is no definition.
    let q = query("check bell");
    let said = q.score(b"x = 1;\nalerts_check_bell(w)\n").unwrap();
    assert_eq!(said.defined_words, 0, "{said:?}");
    let said = q.score(b"int\nalerts_check_bell(w)\n").unwrap();
    assert_eq!(said.defined_words, 0b11, "{said:?}");
}
