//! The path-ordered walk of the ordered grep pipeline, in both modes:
//! entries the ignore rules exclude are set aside (our default, searched
//! after the project's own) or dropped (`noIgnore: false`), one decision.
//!
//! The ordered pipeline has one walker thread feeding the searchers, and on
//! two cores the scheduler gives it a third of a core at best, so every
//! microsecond it spends per entry shows in the wall time. `ignore::Walk`
//! costs ~200 ms on the Linux tree with our classifier behind its
//! `filter_entry`: a hash-map lookup of each entry's parent chain (hashing a
//! `Path` parses its components), four `stat`s per directory for ignore
//! files, and per-entry allocations. Here the depth-first stack carries each
//! directory's rule chain, the directory listing says which ignore files
//! exist, and entries are filtered before they are sorted. The filters and
//! their order are `ignore`'s (overrides, then types, then hidden), so the
//! files and their order are the same as `Walker::walk_sorted` gave before.

use super::cancel::CancelToken;
use super::classify::{Classifier, IgnoreFilesPresent, RuleChain};
use super::walk::{ErrorLog, Filtered, IgnoredRoot, Walker};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(super) struct Entry {
    pub(super) name: OsString,
    pub(super) path: PathBuf,
    pub(super) is_dir: bool,
}

/// One directory's entries that pass the walker's filters, sorted by name
/// when asked for, and which ignore files it holds (whatever the hidden
/// filter says).
pub(super) struct Listing {
    pub(super) entries: Vec<Entry>,
    pub(super) present: IgnoreFilesPresent,
    /// Dot-entries the hidden filter skipped: a `!` rule may bring them
    /// back once the directory's rules are known ([`Listing::rescue`]).
    hidden: Vec<Entry>,
    sorted: bool,
}

impl Listing {
    /// Adds the hidden entries that the rules in force here (`chain`)
    /// name with a `!` rule, as `ignore`'s walk keeps them.
    pub(super) fn rescue(&mut self, walker: &Walker, chain: Option<&RuleChain>) {
        let Some(chain) = chain else { return };
        let before = self.entries.len();
        let back = self
            .hidden
            .extract_if(.., |e| walker.rescues(chain, &e.path, e.is_dir));
        self.entries.extend(back);
        if self.sorted && self.entries.len() > before {
            self.entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        }
    }
}

pub(super) fn list(
    walker: &Walker,
    dir: &Path,
    sorted: bool,
    errors: &mut ErrorLog,
) -> Option<Listing> {
    let read = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) => {
            errors.push(format!("{}: {e}", dir.display()));
            return None;
        }
    };
    let (mut entries, mut hidden) = (Vec::new(), Vec::new());
    let mut present = IgnoreFilesPresent::default();
    for item in read {
        let e = match item {
            Ok(e) => e,
            Err(err) => {
                errors.push(format!("{}: {err}", dir.display()));
                continue;
            }
        };
        let name = e.file_name();
        // d_type from the directory read; std falls back to lstat when the
        // file system does not fill it in.
        let Ok(kind) = e.file_type() else { continue };
        present.note(&name, kind);
        if name == ".git" {
            continue;
        }
        let is_dir = kind.is_dir();
        if !is_dir && !kind.is_file() {
            continue;
        }
        let path = dir.join(&name);
        match walker.filter(&path, &name, is_dir) {
            Filtered::Keep => entries.push(Entry { name, path, is_dir }),
            Filtered::Hidden => hidden.push(Entry { name, path, is_dir }),
            Filtered::Skip => {}
        }
    }
    if sorted {
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    }
    Some(Listing {
        entries,
        present,
        hidden,
        sorted,
    })
}

/// Walks `start` (a directory) in path order, calling `on_file` for each
/// regular file until it returns false. With a classifier, entries its rules
/// exclude are appended to `ignored` instead of being entered, and `ignored`
/// is left sorted by path. Returns false when stopped early.
///
/// A directory's ignored entries are set aside when it is listed, not when
/// the walk reaches them: a search that stops at a limit can then always
/// name the ignored entries of every directory above the file it stopped at
/// (the project's `node_modules/` after a cut in `lib/`), whatever the
/// walker had read ahead.
pub(super) fn walk(
    walker: &Walker,
    start: &Path,
    classifier: Option<&Classifier>,
    ignored: &mut Vec<IgnoredRoot>,
    cancel: &CancelToken,
    errors: &mut ErrorLog,
    mut on_file: impl FnMut(&Path) -> bool,
) -> bool {
    struct Level {
        entries: std::vec::IntoIter<Entry>,
        chain: Option<Arc<RuleChain>>,
    }
    let before = ignored.len();
    let mut set_aside = |mut entries: Vec<Entry>, chain: Option<&RuleChain>| -> Vec<Entry> {
        if let Some(chain) = chain {
            let out = entries.extract_if(.., |e| walker.excludes(chain, &e.path, e.is_dir));
            ignored.extend(out.map(|e| IgnoredRoot {
                path: e.path,
                is_dir: e.is_dir,
            }));
        }
        entries
    };
    let finished = 'walk: {
        let Some(mut first) = list(walker, start, true, errors) else {
            break 'walk true;
        };
        let chain = classifier.map(|c| c.root_chain());
        first.rescue(walker, chain.as_deref());
        let mut stack = vec![Level {
            entries: set_aside(first.entries, chain.as_deref()).into_iter(),
            chain,
        }];
        while let Some(level) = stack.last_mut() {
            let Some(entry) = level.entries.next() else {
                stack.pop();
                continue;
            };
            if cancel.is_stopped() {
                break 'walk false;
            }
            if !entry.is_dir {
                if !on_file(&entry.path) {
                    break 'walk false;
                }
                continue;
            }
            let parent_chain = level.chain.clone();
            if let Some(mut listing) = list(walker, &entry.path, true, errors) {
                let chain = parent_chain.map(|p| p.enter(&entry.path, &listing.present));
                listing.rescue(walker, chain.as_deref());
                stack.push(Level {
                    entries: set_aside(listing.entries, chain.as_deref()).into_iter(),
                    chain,
                });
            }
        }
        true
    };
    ignored[before..].sort_unstable_by(|a, b| a.path.cmp(&b.path));
    finished
}
