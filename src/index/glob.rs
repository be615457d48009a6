//! glob from the file table: a glob of an indexed root (or of a directory
//! below it) lists the table's entries instead of walking, with the
//! walk's answer.

use super::registry::serving;
use super::{IndexMode, IndexUse};
use crate::search::{CancelToken, GlobPlan, GlobResult};

/// Runs `plan` from the table of a ready index that can give its walk's
/// files, else by walking; says which. A glob starts no index of its own.
pub fn glob(plan: &GlobPlan, mode: IndexMode, cancel: &CancelToken) -> (GlobResult, IndexUse) {
    if mode == IndexMode::Off {
        return (plan.run(cancel), IndexUse::Off);
    }
    let Some(idx) = serving(plan.root()) else {
        return (plan.run(cancel), IndexUse::Off);
    };
    match idx.glob(plan, cancel) {
        Ok(r) => (r, IndexUse::Used),
        Err(u) => (plan.run(cancel), u),
    }
}
