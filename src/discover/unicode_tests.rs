//! Names, identifiers and questions in any script never make locate or
//! trace fail: the token layer slices words by bytes in places, and a cut
//! inside a character panicked (`é` in a Java identifier of apache's
//! commons-lang made every locate of that tree fail with INTERNAL).

use super::locate::{self, LocateOptions};
use super::tokens;
use super::trace::{self, TraceOptions};
use crate::search::CancelToken;
use proptest::prelude::*;
use std::fs;

/// Word pieces: ASCII, Latin letters of two bytes (`é`, `É`, `ß`), one
/// whose lower case is longer (`İ`), three-byte letters (CJK, `ſ`, the
/// Kelvin sign) and a four-byte emoji, plus the separators and case
/// changes the splitter cuts at.
fn piece() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "normalize",
        "Accented",
        "e",
        "é",
        "É",
        "ß",
        "İ",
        "中文",
        "ſ",
        "\u{212A}",
        "😀",
        "cfg",
        "conf",
        "buf",
        "X",
        "_",
        "-",
        "2",
    ])
    .prop_map(str::to_string)
}

fn word(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 1..max).prop_map(|v| v.concat())
}

fn words(max: usize) -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(word(4), 1..max)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// Every public test of the token layer takes any text without panicking.
    #[test]
    fn the_token_layer_takes_any_script(name in word(8), query in words(4)) {
        let query: Vec<String> = query.iter().flat_map(|w| tokens::split(w)).collect();
        let letters = query.concat();
        let _ = tokens::names_query(&name, &query);
        let _ = tokens::may_name_query(&name, &query, &letters);
        let _ = tokens::match_token(&letters, &tokens::split(&name));
        let _ = tokens::joined_words(&name.to_lowercase(), &query);
        for w in &query {
            let _ = tokens::short_forms(w);
            let _ = tokens::stem(w);
            let _ = tokens::related_word(w, &name.to_lowercase());
            let _ = tokens::abbreviates_word(&name.to_lowercase(), w);
            let _ = tokens::word_meets(w, &name.to_lowercase());
            let _ = tokens::names_symbol_as(&name, w);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, max_shrink_iters: 64, ..ProptestConfig::default() })]

    /// locate and trace answer (rather than fail) on a tree whose file
    /// names, identifiers and question are in any script.
    #[test]
    fn locate_and_trace_answer_in_any_script(
        names in prop::collection::vec(word(4), 1..4),
        idents in prop::collection::vec(word(6), 1..6),
        question in words(4),
    ) {
        let t = tempfile::tempdir().unwrap();
        for (i, name) in names.iter().enumerate() {
            let body: String = idents
                .iter()
                .map(|id| format!("public static String {id}(String s) {{ return {id}(s); }}\n"))
                .collect();
            fs::write(t.path().join(format!("{name}{i}.java")), format!("class C{i} {{\n{body}}}\n")).unwrap();
        }
        let query = question.join(" ");
        let opts = LocateOptions { query: query.clone(), ..Default::default() };
        // A question without a word is refused by design; any other must be answered.
        if let Err(e) = locate::run(t.path(), None, opts, &CancelToken::new(None)) {
            prop_assert!(!query.chars().any(char::is_alphanumeric), "locate {query:?}: {e:?}");
        }
        for id in &idents {
            let opts = TraceOptions { query: format!("subject:{id} relation:called_from"), ..Default::default() };
            // A subject the DSL refuses is an error by design; a panic is not.
            let _ = trace::run(t.path(), None, opts, &CancelToken::new(None));
        }
    }
}
