//! Which files of a table a search sees: exactly those its own walk would
//! hand out, for a search of the indexed root or of a directory below it.
//!
//! The table was made by the widest walk of the root (hidden files on, no
//! globs or types, ignore rules classifying). A search's filters are applied
//! to it with `Walker::admits`, and a search of a subdirectory takes the
//! table's entries below it, in the same order. That is only the
//! subdirectory's own walk when both walks classify alike (see
//! `classifies_alike`) and the table reached the subdirectory as a plain
//! directory; otherwise there is no view and the search scans.

use super::table::{names_rules, Entry, Table};
use crate::search::{classifies_alike, Filters, IgnoredRoot, Walker};
use std::ops::Range;
use std::path::{Component, Path};
use std::sync::Arc;

pub struct TableView {
    walker: Arc<Walker>,
    /// The ignored roots the search's walk would set aside, in path order;
    /// `None`: all of the table's (the usual search, which then copies
    /// none: 387 paths on the Linux tree, malloc'd and freed per search).
    ignored_roots: Option<Vec<IgnoredRoot>>,
    /// The run of table entries that are the project files below the
    /// search's directory.
    project: Range<usize>,
    /// The run of the files under each of `ignored_roots`.
    root_ranges: Vec<Range<usize>>,
    filters: Filters,
    /// Where the part of an entry's path below the search's directory
    /// starts, in bytes.
    rel_start: usize,
}

/// A table entry's place in the table's order: project files first, then
/// each ignored root's.
fn group(e: &Entry) -> u64 {
    e.ignored_root.map_or(0, |i| i as u64 + 1)
}

/// Whether the table walk of `root` went through every directory from
/// `root` down to `dir` as a plain directory (a symlink, `.git`, `..` on
/// the way: the table has nothing below it that a walk of `dir` would see).
fn reached_plainly(root: &Path, dir: &Path) -> bool {
    let Ok(rel) = dir.strip_prefix(root) else {
        return false;
    };
    let mut at = root.to_path_buf();
    rel.components().all(|c| match c {
        Component::Normal(name) if name != ".git" => {
            at.push(name);
            std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir())
        }
        _ => false,
    })
}

/// Whether any ignore rule may apply to the table's files: an ignore file
/// among them or above the root, an exclude file, the global excludes
/// (asked of the classifier: git's config files, also among the rule
/// files, hold no rule themselves).
fn any_rules(table: &Table) -> bool {
    crate::search::global_excludes_apply()
        || (table.rule_files.iter())
            .any(|(p, s)| s.is_some() && (names_rules(p) || p.ends_with("info/exclude")))
        || table.entries.iter().any(|e| names_rules(&e.path))
}

impl TableView {
    /// The view of `walker`'s walk (of the root or a directory below it)
    /// over the table of `root`; `None` when the table cannot give exactly
    /// that walk's files (ignore rules dropping files rather than
    /// classifying them, or a subdirectory the table cannot vouch for).
    pub fn new(table: &Table, root: &Path, walker: &Arc<Walker>) -> Option<Self> {
        // With ignore rules on, the walk drops what they exclude (and globs
        // may re-include it): that walk is `ignore`'s, not the table's.
        if !walker.options().no_ignore {
            return None;
        }
        // Without hidden files, a `!` rule can bring a dot-file back, which
        // the table does not record: scan when any rule could.
        if !walker.options().hidden && any_rules(table) {
            return None;
        }
        let dir = walker.root();
        let entries = &table.entries;
        // Every root is below the indexed root itself, the usual search.
        // Testing each (387 on the Linux tree, a path compared component
        // by component), and finding each one's run by a search of the
        // whole table (below), took 0.06-0.1 ms of every search.
        let below: Vec<usize> = if dir == root {
            (0..table.ignored_roots.len()).collect()
        } else {
            (table.ignored_roots.iter().enumerate())
                .filter(|(_, r)| r.path.starts_with(dir))
                .map(|(i, _)| i)
                .collect()
        };
        if dir != root {
            let inside_ignored = (table.ignored_roots.iter()).any(|r| dir.starts_with(&r.path));
            if inside_ignored || !reached_plainly(root, dir) {
                return None;
            }
            let ignored: Vec<IgnoredRoot> = below
                .iter()
                .map(|&i| table.ignored_roots[i].clone())
                .collect();
            if !classifies_alike(root, dir, &ignored) {
                return None;
            }
        }
        // Below `dir` is one run of the project part (paths sort
        // component-wise, so a subtree is contiguous), and the whole part
        // of each ignored root below it.
        let project = if dir == root {
            0..entries.partition_point(|e| group(e) == 0)
        } else {
            entries.partition_point(|e| group(e) == 0 && e.path.as_path() < dir)
                ..entries.partition_point(|e| {
                    group(e) == 0 && (e.path.as_path() < dir || e.path.starts_with(dir))
                })
        };
        let mut admitted = Vec::new();
        let mut root_ranges = Vec::new();
        let mut filters = walker.filters();
        // Roots come in group order: each one's run is looked for after
        // the one before.
        let mut from = project.end;
        for &i in &below {
            let r = &table.ignored_roots[i];
            // Without filters every root below `dir` is admitted (and
            // `admits` costs a path split per root, for every search).
            if matches!(filters, Filters::None) || walker.admits(&r.path, r.is_dir) {
                admitted.push(i);
                let g = i as u64 + 1;
                let lo = entries.partition_point_in(from..entries.len(), |e| group(e) < g);
                from = entries.partition_point_in(lo..entries.len(), |e| group(e) <= g);
                root_ranges.push(lo..from);
            }
        }
        // Where the part below `dir` starts in an entry's path: entries are
        // the root's path with names pushed on, as `dir` is rebuilt here.
        let mut prefix = root.to_path_buf();
        prefix.extend(dir.strip_prefix(root).ok()?.components());
        let bytes = prefix.as_os_str().as_encoded_bytes();
        let rel_start = bytes.len() + usize::from(!bytes.ends_with(b"/"));
        let first = (std::iter::once(&project).chain(&root_ranges))
            .find_map(|r| entries.get(r.start).filter(|_| !r.is_empty()));
        if first.is_some_and(|e| !e.path.as_os_str().as_encoded_bytes().starts_with(bytes)) {
            // Not the shape assumed: the walker's own test on each path.
            filters = Filters::Paths;
        }
        // `below` is in order: all of them admitted is the table's list.
        let ignored_roots = (admitted.len() < table.ignored_roots.len())
            .then(|| (admitted.iter().map(|&i| table.ignored_roots[i].clone())).collect());
        Some(TableView {
            walker: walker.clone(),
            ignored_roots,
            project,
            root_ranges,
            filters,
            rel_start,
        })
    }

    /// The ignored roots the search's walk would set aside, in path order.
    pub fn ignored_roots<'t>(&'t self, table: &'t Table) -> &'t [IgnoredRoot] {
        self.ignored_roots
            .as_deref()
            .unwrap_or(&table.ignored_roots)
    }

    /// The table positions of the project files the search's walk would
    /// hand out (those [`TableView::admits`] of them), in the walk's order.
    pub fn project_range(&self) -> Range<usize> {
        self.project.clone()
    }

    /// The table positions of the files under ignored root `index` of
    /// [`TableView::ignored_roots`], in order (those it admits).
    pub fn ignored_range(&self, index: usize) -> Range<usize> {
        self.root_ranges.get(index).cloned().unwrap_or_default()
    }

    /// Whether the search's filters let its walk reach `e`.
    pub fn admits(&self, e: &Entry) -> bool {
        match self.filters {
            Filters::None => true,
            // A dot-name anywhere below the directory (the path is the
            // directory's, a `/`, then the relative part).
            Filters::Hidden => {
                let bytes = e.path.as_os_str().as_encoded_bytes();
                let rel = bytes.get(self.rel_start..).unwrap_or_default();
                !(rel.starts_with(b".") || rel.windows(2).any(|w| w == b"/."))
            }
            Filters::Paths => self.walker.admits(&e.path, false),
        }
    }
}
