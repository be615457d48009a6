//! Running a validated search: which pipeline serves it. `ordered` (the
//! default) keeps output order and the limit; `unordered` serves whole-tree
//! file and count listings with no limit. Apart from the plan, so the plan
//! (which the pipelines read) does not import the pipelines.

use super::cancel::CancelToken;
use super::grep::GrepPlan;
use super::grep_options::GrepMode;
use super::results::{GrepSummary, Hit};

impl GrepPlan {
    /// Runs the search, calling `emit` with ordered batches on the calling
    /// thread. `emit` returns false when the consumer has gone away; the
    /// search then stops as if cancelled.
    pub fn run(&self, cancel: &CancelToken, emit: impl FnMut(Vec<Hit>) -> bool) -> GrepSummary {
        if self.opts.limit.is_none() && self.opts.mode != GrepMode::Content {
            super::unordered::run(self, cancel, emit)
        } else {
            super::ordered::run(self, cancel, emit)
        }
    }
}
