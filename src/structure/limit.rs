//! Cutting an outline to what a caller can show.

use super::outline::Symbol;

/// The symbols a caller shows when it can show at most `max_items`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limited {
    /// In source order; `parent` indexes this list.
    pub symbols: Vec<Symbol>,
    /// How many symbols were left out.
    pub omitted: usize,
}

/// Cuts to `max_items`, dropping the deepest levels first: every symbol at
/// depth ≤ d is kept for the largest d that fits, and the next level fills
/// what room is left in source order. A kept symbol's parent is always kept.
pub fn limit(symbols: &[Symbol], max_items: usize) -> Limited {
    if symbols.len() <= max_items {
        return Limited {
            symbols: symbols.to_vec(),
            omitted: 0,
        };
    }
    let max_depth = symbols.iter().map(|s| s.depth).max().unwrap_or(0) as usize;
    let mut per_depth = vec![0usize; max_depth + 1];
    for s in symbols {
        per_depth[s.depth as usize] += 1;
    }
    // Whole levels 0..full fit; level `full` gets the remaining room.
    let mut full = 0;
    let mut used = 0;
    while full <= max_depth && used + per_depth[full] <= max_items {
        used += per_depth[full];
        full += 1;
    }
    let mut room = max_items - used;
    let mut new_index = vec![None; symbols.len()];
    let mut kept = Vec::with_capacity(max_items);
    for (i, s) in symbols.iter().enumerate() {
        let depth = s.depth as usize;
        let keep = depth < full || (depth == full && room > 0);
        if !keep {
            continue;
        }
        if depth == full {
            room -= 1;
        }
        new_index[i] = Some(kept.len());
        let mut s = s.clone();
        s.parent = s.parent.and_then(|p| new_index[p]);
        kept.push(s);
    }
    Limited {
        omitted: symbols.len() - kept.len(),
        symbols: kept,
    }
}
