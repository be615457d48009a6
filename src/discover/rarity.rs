//! How much a question's word says about which file is meant: a word most
//! files of a project hold (`get`, `value`, `request` in a web library)
//! says little, one few hold (`csrf`) says much (issue 45, class 1: the
//! file naming the topic lost to files merely saying more of the common
//! words). The shares come from a fixed table (`word_rarity.tsv`, made by
//! `scripts/word-rarity.mjs` over two dozen projects in ten languages), not
//! from the tree at hand: a walked tree and an indexed one then weigh the
//! words alike, and a call costs no count of its own.

use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// The share (in thousandths of a project's files) assumed for a word the
/// table lacks: it was held by fewer than 1 % of files, so it is rare.
const RARE_PERMILLE: f64 = 5.0;
/// The share assumed for a token of one or two letters or digits (`io`,
/// `fs`, `4`), which the table does not keep: common.
const SHORT_PERMILLE: f64 = 200.0;
/// The least weight a word gets before the weights are made to average
/// one: `the` still counts a little.
const MIN_WEIGHT: f64 = 0.1;

fn table() -> &'static FxHashMap<&'static str, f64> {
    static TABLE: OnceLock<FxHashMap<&'static str, f64>> = OnceLock::new();
    TABLE.get_or_init(|| {
        include_str!("word_rarity.tsv")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let (word, permille) = l.split_once('\t')?;
                Some((word, permille.trim().parse().ok()?))
            })
            .collect()
    })
}

/// What a word says, from [`MIN_WEIGHT`] (held by most files) to 1 (rare):
/// its inverse document frequency, as a share of a rare word's.
pub fn weight(word: &str) -> f64 {
    let permille = if word.len() <= 2 {
        SHORT_PERMILLE
    } else {
        table().get(word).copied().unwrap_or(RARE_PERMILLE)
    };
    let idf = |p: f64| (1000.0 / p.max(1.0)).ln();
    (idf(permille) / idf(RARE_PERMILLE)).clamp(MIN_WEIGHT, 1.0)
}

/// The words' weights scaled to average one, so a question's words cost
/// and earn, all together, what they did unweighted: only the share each
/// word has of it moves.
pub fn weights(words: &[impl AsRef<str>]) -> Vec<f64> {
    let raw: Vec<f64> = words.iter().map(|w| weight(w.as_ref())).collect();
    let mean = raw.iter().sum::<f64>() / raw.len().max(1) as f64;
    raw.iter().map(|w| w / mean).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rare_word_weighs_more_than_a_common_one() {
        assert_eq!(weight("csrf"), 1.0, "not in the table: rare");
        assert!(weight("cookie") > weight("response"));
        assert!(weight("response") > weight("the"));
        assert_eq!(weight("the"), MIN_WEIGHT.max(weight("the")));
        assert!(weight("io") < weight("cookie"), "short tokens are common");
    }

    #[test]
    fn the_weights_average_one() {
        let w = weights(&["middleware", "sets", "csrf", "cookie", "response"]);
        assert!((w.iter().sum::<f64>() - 5.0).abs() < 1e-9);
        assert!(w[2] > w[0] && w[2] > w[4], "{w:?}");
        assert_eq!(weights(&["a"]), vec![1.0]);
        assert!(weights(&[] as &[&str]).is_empty());
    }
}
