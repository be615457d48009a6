//! Which symbols of a file a result lists under `structure:`: those
//! bearing on the question (named like its words or its subject, or
//! enclosing a hit), not the first few whatever they are.

use super::tokens;
use crate::structure::Symbol;

/// Structure items shown per file, as agentgrep shows them (trace).
pub const STRUCTURE_ITEMS: usize = 8;

/// Whether a symbol's name shares a word with `words` (whole, by prefix,
/// abbreviated or inflected).
pub(crate) fn shares_a_word(name: &str, words: &[String]) -> bool {
    tokens::split(name).iter().any(|t| {
        words
            .iter()
            .any(|w| tokens::word_meets(w, t) || tokens::related_word(w, t))
    })
}

/// The symbols of a file that bear on the question, in source order, at
/// most `max_items`: those enclosing one of the `hits` lines first (a
/// quoted message's method deep in a long class was cut for the class's
/// first methods named like a word), then those `bears` accepts (locate:
/// the name shares a word with the query; trace: it names the subject),
/// each with the symbols holding it. A one-line statement of a name
/// defined with a body in the same file (a C prototype, a forward
/// declaration) is left out. Returns them with how many symbols are not
/// shown (issue 45: the first eight symbols, whatever they were, were two
/// thirds of an answer).
pub(crate) fn bearing_symbols(
    symbols: &[Symbol],
    bears: impl Fn(&Symbol) -> bool,
    hits: &[u32],
    max_items: usize,
) -> (Vec<Symbol>, usize) {
    let defined_with_body: std::collections::HashSet<&str> = (symbols.iter())
        .filter(|s| s.line_count() > 1)
        .map(|s| s.name.as_str())
        .collect();
    let mut keep = vec![false; symbols.len()];
    let mut kept = 0;
    let encloses = |s: &Symbol| hits.iter().any(|&l| s.start_line <= l && l <= s.end_line);
    for hit_pass in [true, false] {
        for (i, s) in symbols.iter().enumerate() {
            let declaration = s.line_count() == 1 && defined_with_body.contains(s.name.as_str());
            let wanted = if hit_pass {
                encloses(s)
            } else {
                !encloses(s) && bears(s)
            };
            if declaration || !wanted {
                continue;
            }
            // Its owners too, so a method is shown inside its class; a
            // symbol bearing on the words only while there is room for
            // all of them.
            let chain: Vec<usize> =
                std::iter::successors(Some(i), |&j| symbols[j].parent).collect();
            let new = chain.iter().filter(|&&j| !keep[j]).count();
            if !hit_pass && kept + new > max_items {
                continue;
            }
            kept += new;
            for j in chain {
                keep[j] = true;
            }
        }
    }
    let mut shown = Vec::new();
    let mut new_index = vec![None; symbols.len()];
    for (i, s) in symbols.iter().enumerate() {
        if !keep[i] || shown.len() >= max_items {
            continue;
        }
        let mut s = s.clone();
        s.parent = s.parent.and_then(|p| new_index[p]);
        new_index[i] = Some(shown.len());
        shown.push(s);
    }
    let omitted = symbols.len() - shown.len();
    (shown, omitted)
}
