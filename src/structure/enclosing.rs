//! Which symbol a line belongs to, for grouping grep hits.
//!
//! Symbols are sorted by start and nest (see `outline.rs`), so the innermost
//! symbol holding line L is the last one starting at or before L, or the
//! nearest of its ancestors that still reaches L: a binary search plus a
//! short walk up the parent chain.

use super::outline::Outline;

impl Outline {
    /// Index of the innermost symbol whose range holds `line` (1-based), or
    /// `None` for file scope.
    pub fn enclosing(&self, line: u32) -> Option<usize> {
        let after = self.symbols.partition_point(|s| s.start_line <= line);
        let mut at = after.checked_sub(1)?;
        loop {
            let s = &self.symbols[at];
            if s.end_line >= line {
                return Some(at);
            }
            at = s.parent?;
        }
    }

    /// Index of the top-level symbol holding symbol `index`.
    pub fn top_level_of(&self, mut index: usize) -> usize {
        while let Some(p) = self.symbols[index].parent {
            index = p;
        }
        index
    }

    /// Top-level symbols that neither are nor hold any of `used` (indices of
    /// symbols that hits were grouped under), in source order: at most `max`,
    /// and how many more there are. This is the "other:" hint.
    pub fn other_top_level(&self, used: &[usize], max: usize) -> (Vec<usize>, usize) {
        let mut taken: Vec<usize> = used.iter().map(|&i| self.top_level_of(i)).collect();
        taken.sort_unstable();
        taken.dedup();
        let mut shown = Vec::new();
        let mut more = 0;
        for (i, s) in self.symbols.iter().enumerate() {
            if s.depth != 0 || taken.binary_search(&i).is_ok() {
                continue;
            }
            if shown.len() < max {
                shown.push(i);
            } else {
                more += 1;
            }
        }
        (shown, more)
    }
}
