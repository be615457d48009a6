//! Brings the file table up to date where the tree changed. Each place the
//! watcher names (an entry created, deleted, moved or re-typed; a directory
//! whose ignore file or `.git` changed) loses what the table held at and
//! below it and gets what a walk of that one place finds now, classified
//! with the rules the walk from the root has there. One file created costs
//! a look at it, not a walk of the tree (250 ms on the Linux tree, 1 s on
//! four copies of it). What no place holds (the rules of a directory above
//! the root, a queue overflow) is left to the whole walk.
//!
//! The table's order makes each place's entries one run: project files are
//! in path order with `/` lowest, so everything at and below a path follows
//! it; an ignored root's files are a class of their own; and ignored roots
//! are in path order, so those below a place are consecutive classes.

use super::chunked::Chunked;
use super::table::{self, Entry, Stamped, Table, NO_DOC};
use crate::search::path_order::at_or_below;

use super::watch::{is_rule_file, Watcher};
use crate::search::stamp::Stamp;
use crate::search::{
    chain_in, path_order, CancelToken, Classifier, ErrorLog, IgnoredRoot, RuleChain, WalkStart,
};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

/// Past this many places in one batch the whole walk is cheaper (each place
/// is a listing and a few binary searches, and the table is rebuilt once).
const MAX_PLACES: usize = 512;

/// The change must be applied by walking the whole tree.
#[derive(Debug)]
pub(super) struct WalkWhole;

/// What applying a batch did, for tests and the bench.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Applied {
    /// Places brought up to date.
    pub places: usize,
    /// Directories listed to do it.
    pub listed: usize,
}

/// What the picture's counts beside the table need to follow a batch
/// without a pass over every entry (three such passes were most of a
/// one-file change's cost on four Linux trees: 15 of 25 ms).
#[derive(Debug, Default)]
pub(super) struct Edits {
    /// How the number of entries without a document changed; `None`: the
    /// documents by entry were made again whole, so count again.
    pub unindexed: Option<isize>,
    /// The places brought up to date: what the table held below them is
    /// gone, what they hold now is new.
    pub places: Vec<PathBuf>,
    /// The hard-linked ignore files among the new entries (see
    /// `table::linked_rules`).
    pub linked_rules: Vec<Stamped>,
    /// The new entries' paths: files without a document, for the delta to
    /// read (see `delta.rs`).
    pub fresh_files: Vec<PathBuf>,
}

/// The places to bring up to date: an ignore file or `.git` stands for its
/// directory (its rules cover everything below it), nested places are
/// covered by the outer one. Err: a place is the root itself or outside it.
fn minimal_places(root: &Path, mut places: Vec<PathBuf>) -> Result<Vec<PathBuf>, WalkWhole> {
    for p in places.iter_mut() {
        if p.file_name().is_some_and(is_rule_file) {
            *p = p.parent().ok_or(WalkWhole)?.to_path_buf();
        }
        if p.as_path() == root || !p.starts_with(root) {
            return Err(WalkWhole);
        }
    }
    places.sort();
    places.dedup();
    let mut out: Vec<PathBuf> = Vec::with_capacity(places.len());
    for p in places {
        // In path order an ancestor comes right before its descendants.
        if out.last().is_none_or(|last| !at_or_below(&p, last)) {
            out.push(p);
        }
    }
    if out.len() > MAX_PLACES {
        return Err(WalkWhole);
    }
    Ok(out)
}

/// The run of `entries[range]` (one class, in path order) at or below `place`.
fn run_below(entries: &Chunked<Entry>, range: Range<usize>, place: &Path) -> Range<usize> {
    let start = entries.partition_point_in(range.clone(), |e| path_order(&e.path, place).is_lt());
    let len = (entries.range(start..range.end))
        .take_while(|e| at_or_below(&e.path, place))
        .count();
    start..start + len
}

/// The entries of class `c` (`None`: the project's files).
fn class_range(entries: &Chunked<Entry>, c: Option<u32>) -> Range<usize> {
    let key = |x: Option<u32>| x.map_or(0, |i| i as u64 + 1);
    let start = entries.partition_point(|e| key(e.ignored_root) < key(c));
    let end = entries.partition_point(|e| key(e.ignored_root) <= key(c));
    start..end
}

enum Kind {
    Regular,
    Dir,
    /// Absent, a symlink or a special file: the walk lists none of them.
    Other,
}

fn kind_of(path: &Path) -> Kind {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => Kind::Regular,
        Ok(m) if m.file_type().is_dir() => Kind::Dir,
        _ => Kind::Other,
    }
}

/// Applies `places` (from the watcher) to `table` in place, and to
/// `doc_at` (each entry's document, `NO_DOC` for none) in step with it.
/// Err: the whole tree must be walked instead (the table is then left as
/// it was).
pub(super) fn apply(
    table: &mut Table,
    doc_at: &mut Chunked<u32>,
    root: &Path,
    watcher: &Watcher,
    places: Vec<PathBuf>,
) -> Result<(Applied, Edits), WalkWhole> {
    let places = minimal_places(root, places)?;
    if places.is_empty() {
        let same = Edits {
            unindexed: Some(0),
            ..Edits::default()
        };
        return Ok((Applied::default(), same));
    }
    let walker = table::table_walker(root).map_err(|_| WalkWhole)?;
    let root_chain = Classifier::new(root).root_chain();
    let old_roots = &table.ignored_roots;

    // What goes: each place's run of project files, the ignored roots at or
    // below it (whole classes), or its run inside the ignored root holding it.
    let mut gone: Vec<Range<usize>> = Vec::new();
    let mut gone_roots = vec![false; old_roots.len()];
    // Places inside an ignored root, with the root's path.
    let mut inside: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut project: Vec<PathBuf> = Vec::new();
    let project_range = class_range(&table.entries, None);
    for p in &places {
        match IgnoredRoot::index_of(old_roots, p) {
            Some(i) if old_roots[i].path != *p => {
                let range = class_range(&table.entries, Some(i as u32));
                gone.push(run_below(&table.entries, range, p));
                inside.push((p.clone(), old_roots[i].path.clone()));
            }
            _ => {
                gone.push(run_below(&table.entries, project_range.clone(), p));
                let first = old_roots.partition_point(|r| r.path < *p);
                for (i, r) in old_roots.iter().enumerate().skip(first) {
                    if !r.path.starts_with(p) {
                        break;
                    }
                    gone_roots[i] = true;
                    gone.push(class_range(&table.entries, Some(i as u32)));
                }
                project.push(p.clone());
            }
        }
    }

    // What comes: each place as it is now.
    let found = Mutex::new(Vec::new());
    let dirs: Mutex<Vec<Stamped>> = Mutex::new(Vec::new());
    let rules: Mutex<Vec<Stamped>> = Mutex::new(Vec::new());
    let errors = Mutex::new(ErrorLog::default());
    let seen = AtomicUsize::new(0);
    let cancel = CancelToken::new(None);
    let mut new_roots: Vec<IgnoredRoot> = Vec::new();
    let mut starts: Vec<WalkStart> = Vec::new();
    let watch_and_stamp = |dir: &Path| {
        watcher.adder().add(dir);
        lock(&dirs).push((dir.to_path_buf(), Stamp::of(dir)));
    };
    // Only a place that held a listed directory has watches to forget (one
    // pass over every watch of the tree, 1 ms on the Linux tree).
    let held_dirs = |p: &Path| {
        let at = table::dir_position(&table.dirs, p);
        table.dirs.get(at).is_some_and(|(d, _)| at_or_below(d, p))
    };
    for p in &project {
        if held_dirs(p) {
            watcher.forget_under(p);
        }
        let kind = kind_of(p);
        let is_dir = matches!(kind, Kind::Dir);
        if matches!(kind, Kind::Other) {
            continue;
        }
        let parent = p.parent().ok_or(WalkWhole)?;
        let chain: Arc<RuleChain> = chain_in(&root_chain, root, parent);
        if chain.is_ignored(p, is_dir) {
            new_roots.push(IgnoredRoot {
                path: p.clone(),
                is_dir,
            });
        } else if is_dir {
            watch_and_stamp(p);
            table::probe_rules(watcher, p, &mut lock(&rules), true);
            starts.push(WalkStart::Dir(
                p.clone(),
                Some(chain_in(&root_chain, root, p)),
            ));
        } else {
            lock(&found).push(Entry {
                path: p.clone(),
                ignored_root: None,
                stamp: Stamp::of(p),
                doc: None,
            });
        }
    }
    if !starts.is_empty() {
        let visit = || table::visitor(watcher, &[], &found, &dirs, Some(&rules), &seen, usize::MAX);
        new_roots.extend(walker.walk_parallel_from(
            std::mem::take(&mut starts),
            &cancel,
            &errors,
            visit,
        ));
    }

    // The ignored roots now: the old ones kept, and those the places made
    // (most changes make and drop none, and keep the list as it is).
    let remap = (!new_roots.is_empty() || gone_roots.contains(&true))
        .then(|| roots_after(old_roots, &gone_roots, &mut new_roots));
    let roots: &[IgnoredRoot] = match &remap {
        Some((roots, _)) => roots,
        None => old_roots,
    };
    for r in &new_roots {
        if r.is_dir {
            watch_and_stamp(&r.path);
        }
        starts.push(WalkStart::of(r));
    }
    for (p, _) in &inside {
        if held_dirs(p) {
            watcher.forget_under(p);
        }
        match kind_of(p) {
            Kind::Dir => {
                watch_and_stamp(p);
                starts.push(WalkStart::Dir(p.clone(), None));
            }
            Kind::Regular => starts.push(WalkStart::File(p.clone())),
            Kind::Other => {}
        }
    }
    if !starts.is_empty() {
        let visit = || table::visitor(watcher, roots, &found, &dirs, None, &seen, usize::MAX);
        walker.walk_parallel_from(starts, &cancel, &errors, visit);
    }
    if watcher.failure().is_some() {
        return Err(WalkWhole);
    }

    let mut fresh: Vec<Entry> = found.into_inner().unwrap_or_else(|p| p.into_inner());
    // Files met below an ignored root take its class in the new list.
    for e in fresh.iter_mut() {
        e.ignored_root = IgnoredRoot::index_of(roots, &e.path).map(|i| i as u32);
    }
    fresh.sort_by(|a, b| table::entry_order((a.ignored_root, &a.path), (b.ignored_root, &b.path)));
    let mut new_dirs = dirs.into_inner().unwrap_or_else(|p| p.into_inner());
    let listed = new_dirs.len();

    let linked_rules = table::linked_rules(&fresh);
    let fresh_files = fresh.iter().map(|e| e.path.clone()).collect();
    let (roots, remap) = match remap {
        Some((roots, remap)) => (Some(roots), Some(remap)),
        None => (None, None),
    };
    let unindexed = replace_runs(&mut table.entries, doc_at, gone, fresh, remap);
    if let Some(roots) = roots {
        table.ignored_roots = roots;
    }

    // The directories and rule files the next process stamps.
    let all_places: Vec<&Path> = project
        .iter()
        .chain(inside.iter().map(|(p, _)| p))
        .map(PathBuf::as_path)
        .collect();
    // Each place's directories are one run of them, found by a search (a
    // pass compared 23,041 paths on four Linux trees).
    let below_a_place = |p: &Path| all_places.iter().any(|q| at_or_below(p, q));
    for q in &all_places {
        let at = table::dir_position(&table.dirs, q);
        let n = (table.dirs.range(at..table.dirs.len()))
            .take_while(|(d, _)| at_or_below(d, q))
            .count();
        if n > 0 {
            table.dirs.splice(at..at + n, Vec::new());
        }
    }
    for parent in all_places.iter().filter_map(|q| q.parent()) {
        let at = table::dir_position(&table.dirs, parent);
        if let Some((d, s)) = table.dirs.get_mut(at).filter(|(d, _)| d == parent) {
            *s = Stamp::of(d);
        }
    }
    new_dirs.sort_by(|a, b| path_order(&a.0, &b.0));
    insert_sorted(&mut table.dirs, new_dirs);
    let fixed = table::rule_files_of(root).len().min(table.rule_files.len());
    let mut tail: Vec<Stamped> = table.rule_files.split_off(fixed);
    tail.retain(|(p, _)| !below_a_place(p));
    tail.extend(rules.into_inner().unwrap_or_else(|p| p.into_inner()));
    tail.sort_by(|a, b| path_order(&a.0, &b.0));
    tail.dedup_by(|a, b| a.0 == b.0);
    table.rule_files.extend(tail);
    table
        .errors
        .merge(errors.into_inner().unwrap_or_else(|p| p.into_inner()));
    let applied = Applied {
        places: places.len(),
        listed,
    };
    let edits = Edits {
        unindexed,
        places: all_places.into_iter().map(Path::to_path_buf).collect(),
        linked_rules,
        fresh_files,
    };
    Ok((applied, edits))
}

/// The ignored roots after a batch: the old ones but the `gone`, with
/// `new` (sorted here) each put in its place by a search; and each old
/// root's index in that list (`None`: gone). No list is sorted again: that
/// compared 1,548 paths a dozen times each on four Linux trees.
fn roots_after(
    old: &[IgnoredRoot],
    gone: &[bool],
    new: &mut [IgnoredRoot],
) -> (Vec<IgnoredRoot>, Vec<Option<u32>>) {
    new.sort_by(|a, b| a.path.cmp(&b.path));
    let at: Vec<usize> = (new.iter())
        .map(|r| old.partition_point(|o| o.path < r.path))
        .collect();
    let mut roots = Vec::with_capacity(old.len() + new.len());
    let mut remap = vec![None; old.len()];
    let mut next = 0;
    for (i, (r, gone)) in old.iter().zip(gone).enumerate() {
        while next < new.len() && at[next] <= i {
            roots.push(new[next].clone());
            next += 1;
        }
        if !gone {
            remap[i] = Some(roots.len() as u32);
            roots.push(r.clone());
        }
    }
    roots.extend(new[next..].iter().cloned());
    (roots, remap)
}

/// Puts `items` (in path order) into `dirs` (in path order), each run that
/// goes in at one place with one splice.
fn insert_sorted(dirs: &mut Chunked<Stamped>, items: Vec<Stamped>) {
    let at: Vec<usize> = (items.iter())
        .map(|d| table::dir_position(dirs, &d.0))
        .collect();
    let mut items = items;
    let mut end = items.len();
    while end > 0 {
        let start = at[..end].partition_point(|&a| a < at[end - 1]);
        let run: Vec<Stamped> = items.drain(start..end).collect();
        dirs.splice(at[start]..at[start], run);
        end = start;
    }
}

/// Past this many runs to remove or insert, the table is rebuilt in one
/// pass instead: each run in place moves the tail of the table once.
const RUNS_IN_PLACE: usize = 16;

/// Replaces the `gone` runs of `entries` with `fresh` (in table order, its
/// classes those of `roots`), renumbering the classes of the old roots kept.
/// A few runs are cut and spliced in place, each moving the entries of the
/// chunks it touches: a new table of the Linux tree's 86,630 entries is
/// 9 MB of fresh pages, about 10 ms, for one new file.
///
/// `doc_at` gets the same cuts and insertions; the change in the number of
/// entries without a document is returned, or `None` when `doc_at` must be
/// made again from the entries (the table was rebuilt in one pass).
fn replace_runs(
    entries: &mut Chunked<Entry>,
    doc_at: &mut Chunked<u32>,
    mut gone: Vec<Range<usize>>,
    fresh: Vec<Entry>,
    remap: Option<Vec<Option<u32>>>,
) -> Option<isize> {
    let mut in_step = doc_at.len() == entries.len();
    let mut unindexed: isize = 0;
    gone.retain(|r| !r.is_empty());
    gone.sort_by_key(|r| r.start);
    // Only the entries from the first class that moved on are renumbered.
    let remap = remap.unwrap_or_default();
    if let Some(first) = (0..remap.len()).find(|&i| remap[i] != Some(i as u32)) {
        let from = class_range(entries, Some(first as u32)).start;
        for e in entries.range_mut(from..usize::MAX) {
            e.ignored_root = e.ignored_root.and_then(|c| remap[c as usize]);
        }
    }
    if gone.len() <= RUNS_IN_PLACE {
        for r in gone.into_iter().rev() {
            if in_step {
                unindexed -= (doc_at.range(r.clone()))
                    .filter(|&&d| !table::in_postings(d))
                    .count() as isize;
                doc_at.splice(r.clone(), Vec::new());
            }
            entries.splice(r, Vec::new());
        }
    } else {
        in_step = false;
        let mut next_gone = gone.iter().peekable();
        let mut i = 0;
        *entries = (std::mem::take(entries).into_iter())
            .filter(|_| {
                while next_gone.next_if(|r| r.end <= i).is_some() {}
                let keep = !next_gone.peek().is_some_and(|r| r.contains(&i));
                i += 1;
                keep
            })
            .collect();
    }
    // The new entries in runs that go in at one place each (a new folder's
    // files are one run), placed from the last run back so each insertion
    // point, found in the entries as they were, still holds.
    let order = |a: &Entry, b: &Entry| {
        table::entry_order((a.ignored_root, &a.path), (b.ignored_root, &b.path))
    };
    let at: Vec<usize> = (fresh.iter())
        .map(|f| entries.partition_point(|k| order(k, f).is_lt()))
        .collect();
    let runs = at.windows(2).filter(|w| w[0] != w[1]).count() + usize::from(!at.is_empty());
    if runs > RUNS_IN_PLACE {
        let kept = std::mem::take(entries);
        *entries = merge_in(kept, fresh);
        return None;
    }
    let mut fresh = fresh;
    let mut end = fresh.len();
    while end > 0 {
        let start = at[..end].partition_point(|&a| a < at[end - 1]);
        let run: Vec<Entry> = fresh.drain(start..end).collect();
        if in_step {
            unindexed += run.iter().filter(|e| e.doc.is_none()).count() as isize;
            let docs = run.iter().map(|e| e.doc.unwrap_or(NO_DOC));
            doc_at.splice(at[start]..at[start], docs.collect::<Vec<_>>());
        }
        entries.splice(at[start]..at[start], run);
        end = start;
    }
    in_step.then_some(unindexed)
}

/// `kept` and `fresh`, both in table order, as one list in table order:
/// each fresh run is placed by a binary search, so a few new files cost a
/// few searches and one pass of moves, not a comparison per entry.
fn merge_in(kept: Chunked<Entry>, fresh: Vec<Entry>) -> Chunked<Entry> {
    if fresh.is_empty() {
        return kept;
    }
    let order = |a: &Entry, b: &Entry| {
        table::entry_order((a.ignored_root, &a.path), (b.ignored_root, &b.path))
    };
    let at: Vec<usize> = fresh
        .iter()
        .map(|f| kept.partition_point(|k| order(k, f).is_lt()))
        .collect();
    let mut out = Vec::with_capacity(kept.len() + fresh.len());
    let mut kept = kept.into_iter();
    let mut taken = 0;
    for (f, at) in fresh.into_iter().zip(at) {
        out.extend(kept.by_ref().take(at - taken));
        taken = at;
        out.push(f);
    }
    out.extend(kept);
    out.into()
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_below_another_and_rule_files_fold_into_the_outer_place() {
        let root = Path::new("/r");
        let got = minimal_places(
            root,
            [
                "/r/a/b/x.txt",
                "/r/a",
                "/r/a-b",
                "/r/c/.gitignore",
                "/r/c/d",
                "/r/a",
            ]
            .map(PathBuf::from)
            .to_vec(),
        )
        .unwrap();
        assert_eq!(got, ["/r/a", "/r/a-b", "/r/c"].map(PathBuf::from).to_vec());
        assert!(
            minimal_places(root, vec![PathBuf::from("/r/.gitignore")]).is_err(),
            "the root's rules: the whole walk"
        );
        assert!(minimal_places(root, vec![PathBuf::from("/elsewhere/x")]).is_err());
    }

    #[test]
    fn at_or_below_compares_whole_names() {
        assert!(at_or_below(Path::new("/r/a"), Path::new("/r/a")));
        assert!(at_or_below(Path::new("/r/a/b"), Path::new("/r/a")));
        assert!(!at_or_below(Path::new("/r/ab"), Path::new("/r/a")));
        assert!(!at_or_below(Path::new("/r/a-b"), Path::new("/r/a")));
    }
}
