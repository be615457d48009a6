//! Starting a walk with a [`Walker`]'s configuration: in path order
//! (`sorted_walk`, one thread) or in parallel (`parallel_walk`), of the
//! project or of the ignored roots it set aside. Apart from `walk.rs`, so
//! the configuration the walks read does not import the walks.

use super::cancel::CancelToken;
use super::classify::Classifier;
use super::parallel_walk::{self, Start, WalkEntry};
use super::sorted_walk;
use super::walk::{ErrorLog, IgnoredRoot, Walker};
use std::path::Path;
use std::sync::Mutex;

impl Walker {
    /// Walks the project in path order, calling `on_file` for each regular
    /// file until it returns false. Returns the ignored entries that were
    /// set aside (in path order; only those reached if stopped early);
    /// empty unless `no_ignore` (without it the rules drop them).
    pub fn walk_sorted(
        &self,
        cancel: &CancelToken,
        errors: &mut ErrorLog,
        on_file: impl FnMut(&Path) -> bool,
    ) -> Vec<IgnoredRoot> {
        let classifier = Classifier::new(&self.root);
        let mut ignored = Vec::new();
        let root = Some(&classifier);
        sorted_walk::walk(
            self,
            &self.root,
            root,
            &mut ignored,
            cancel,
            errors,
            on_file,
        );
        if !self.opts.no_ignore {
            ignored.clear();
        }
        ignored
    }

    /// Walks one ignored root in path order. Returns false when stopped early.
    pub fn walk_ignored_sorted(
        &self,
        root: &IgnoredRoot,
        cancel: &CancelToken,
        errors: &mut ErrorLog,
        mut on_file: impl FnMut(&Path) -> bool,
    ) -> bool {
        if !root.is_dir {
            return on_file(&root.path);
        }
        let none = &mut Vec::new();
        sorted_walk::walk(self, &root.path, None, none, cancel, errors, on_file)
    }

    /// A parallel walk of the table walker's kind (`no_ignore`: classifying)
    /// from `starts`, each a directory with the rules in force inside it
    /// (`None`: an ignored root, nothing below it classified) or a file: for
    /// the index applying a change where it happened, re-walking a few
    /// places of a tree it walked whole before. Returns the entries the
    /// rules set aside, sorted, as [`Walker::walk_parallel`] does.
    pub fn walk_parallel_from<F, V>(
        &self,
        starts: Vec<Start>,
        cancel: &CancelToken,
        errors: &Mutex<ErrorLog>,
        make_visitor: F,
    ) -> Vec<IgnoredRoot>
    where
        F: Fn() -> V + Sync,
        V: FnMut(&WalkEntry<'_>) -> bool + Send,
    {
        let ignored = Mutex::new(Vec::new());
        let threads = self.opts.threads;
        parallel_walk::walk(
            self,
            starts,
            threads,
            &ignored,
            cancel,
            errors,
            make_visitor,
        );
        let mut out = ignored.into_inner().unwrap_or_else(|p| p.into_inner());
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    /// Parallel walk for callers that do not need path order (glob sorts
    /// its own top-K). With no `starts` it walks the project from the root,
    /// setting ignored entries aside; otherwise it walks the given ignored
    /// entries in one parallel walk (one thread pool, however many roots).
    /// `make_visitor` is called once per thread; each visitor sees regular
    /// files and the directories below the roots, and returns false to stop
    /// the whole walk.
    pub fn walk_parallel<F, V>(
        &self,
        starts: &[IgnoredRoot],
        cancel: &CancelToken,
        errors: &Mutex<ErrorLog>,
        make_visitor: F,
    ) -> Vec<IgnoredRoot>
    where
        F: Fn() -> V + Sync,
        V: FnMut(&WalkEntry<'_>) -> bool + Send,
    {
        let starts = match starts {
            [] => vec![Start::Dir(
                self.root.clone(),
                Some(Classifier::new(&self.root).root_chain()),
            )],
            roots => roots.iter().map(Start::of).collect(),
        };
        let ignored = self.walk_parallel_from(starts, cancel, errors, make_visitor);
        if !self.opts.no_ignore {
            // The rules dropped what they exclude: nothing is set aside.
            return Vec::new();
        }
        ignored
    }
}
