//! Which symbol each grep hit of a file is shown under, and the hint of the
//! file's other top-level symbols, modelled on agentgrep (a grep for coding
//! agents that prints each file's hits grouped by enclosing symbol), on
//! nested ranges.
//!
//! A hit goes under the innermost symbol enclosing its line (none: file
//! scope). Hits are printed in line order, so a *group* is a run of
//! consecutive hits under one symbol; a function interrupted by a hit in a
//! nested closure counts as two groups.
//!
//! Dense files stay small, with agentgrep's caps as the starting point:
//!
//! | hits in the file | grouping |
//! |---|---|
//! | ≥ 24 | none: the file prints flat |
//! | 12–23 | ≤ 8 groups and 2 others; if the innermost symbols make more groups, top-level symbols are used instead, and if those still make more, the file prints flat |
//! | < 12 | any number of groups, 4 others |
//!
//! Only files near the top of the output are grouped: once the lines
//! already listed (hits and context, of earlier files) reach
//! [`GROUPED_OUTPUT_LINES`], later files print flat. Past that point the
//! grep tool's 50 KB cap cuts the text anyway, and each grouped file costs
//! a parse.
//!
//! agentgrep pushes the hits past its 8th group into `<file scope>`; that
//! would tell the reader a hit is outside every function when it is not, so
//! here a file whose groups do not fit prints flat instead.

use super::outline::Outline;

/// Files that start after this many output lines are not grouped (about
/// what fits in the grep tool's 50 KB at 100 bytes a line).
pub const GROUPED_OUTPUT_LINES: u64 = 512;
/// Files with at least this many hits are not grouped (and need not be
/// parsed at all).
pub const SKIP_AT: usize = 24;
/// Files with at least this many hits get the capped grouping.
pub const CAPPED_AT: usize = 12;
const CAPPED_GROUPS: usize = 8;
const CAPPED_OTHERS: usize = 2;
const OTHERS: usize = 4;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grouping {
    /// One per hit line, in the order given: the index in `outline.symbols`
    /// of the symbol the hit is shown under, `None` for file scope.
    pub symbols: Vec<Option<usize>>,
    /// Top-level symbols that hold no hit, in source order, capped.
    pub others: Vec<usize>,
    /// Top-level symbols without hits beyond `others`.
    pub others_omitted: usize,
}

/// Groups hits on `lines` (1-based, ascending) of a file with `outline`.
/// `None` means print the file flat: no hits, no symbols in the file, too
/// many hits or groups (see the module table), or one hit that a heading
/// would only repeat.
pub fn group(outline: &Outline, lines: &[u32]) -> Option<Grouping> {
    let n = lines.len();
    if n == 0 || n >= SKIP_AT || outline.symbols.is_empty() {
        return None;
    }
    let (max_groups, max_others) = if n >= CAPPED_AT {
        (CAPPED_GROUPS, CAPPED_OTHERS)
    } else {
        (usize::MAX, OTHERS)
    };
    let mut symbols: Vec<Option<usize>> = lines.iter().map(|&l| outline.enclosing(l)).collect();
    if runs(&symbols) > max_groups {
        for s in symbols.iter_mut() {
            *s = s.map(|i| outline.top_level_of(i));
        }
        if runs(&symbols) > max_groups {
            return None;
        }
    }
    let used: Vec<usize> = symbols.iter().flatten().copied().collect();
    let (others, others_omitted) = outline.other_top_level(&used, max_others);
    if n == 1 && heading_adds_nothing(outline, lines[0], symbols[0], others.is_empty()) {
        return None;
    }
    Some(Grouping {
        symbols,
        others,
        others_omitted,
    })
}

/// A file's only hit, where a heading and a symbol line would add nothing
/// the hit line does not say: the hit is at file scope, or its symbol is
/// that one line and the file has no other top-level symbol (a one-line
/// file of a dependency, each printed as three lines before).
fn heading_adds_nothing(
    outline: &Outline,
    line: u32,
    symbol: Option<usize>,
    no_others: bool,
) -> bool {
    match symbol {
        None => true,
        Some(i) => {
            let s = &outline.symbols[i];
            no_others && s.start_line == line && s.end_line == line
        }
    }
}

/// Runs of consecutive hits under the same symbol; file scope is not a
/// symbol group (agentgrep does not count it either).
fn runs(symbols: &[Option<usize>]) -> usize {
    let mut count = 0;
    let mut previous = None;
    for s in symbols {
        if s.is_some() && previous != *s {
            count += 1;
        }
        previous = *s;
    }
    count
}
