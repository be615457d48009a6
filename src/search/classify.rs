//! Decides, during one walk with every ignore rule switched off, whether an
//! entry *would* have been excluded by `.gitignore`, `.ignore`, `.rgignore`
//! or `.git/info/exclude`.
//!
//! The owner's default is to search ignored files, but a fresh `node_modules`
//! must not crowd out the project's own hits. So the walker asks this module
//! about each entry, defers the ignored ones, and searches them only after the
//! project's files — one walk, each entry visited once.
//!
//! Semantics follow git: the deepest directory whose rules match decides
//! (a `!negation` re-includes), and nothing below an ignored directory can be
//! re-included (we never descend into one during the first phase). Within one
//! directory `.rgignore` beats `.ignore` beats `.gitignore`. Rules of the
//! search root's ancestors apply up to the enclosing repository root. The
//! user's global git excludes file is not read (documented difference from rg).

use super::rules_cache::rules_of_dir;
use super::walk::IgnoredRoot;
use ignore::gitignore::Gitignore;
use ignore::Match;
use std::path::Path;
use std::sync::Arc;

/// In precedence order: later files win within one directory, so
/// `.rgignore` has the last word, as in ripgrep.
pub const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".rgignore"];

/// The rules in force in one directory: its own (if any) plus its parent's.
#[derive(Debug)]
pub struct RuleChain {
    rules: Option<Arc<Gitignore>>,
    parent: Option<Arc<RuleChain>>,
}

impl RuleChain {
    pub fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        let mut current = Some(self);
        while let Some(chain) = current {
            if let Some(rules) = &chain.rules {
                match rules.matched(path, is_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => return false,
                    Match::None => {}
                }
            }
            current = chain.parent.as_deref();
        }
        false
    }
}

fn chain_with(parent: Option<Arc<RuleChain>>, dir: &Path) -> Arc<RuleChain> {
    let rules = rules_of_dir(dir, dir.join(".git").exists(), &IGNORE_FILES, |name| {
        dir.join(name).is_file()
    });
    linked(rules, parent)
}

fn linked(rules: Option<Arc<Gitignore>>, parent: Option<Arc<RuleChain>>) -> Arc<RuleChain> {
    match (rules, parent) {
        (None, Some(parent)) => parent,
        (rules, parent) => Arc::new(RuleChain { rules, parent }),
    }
}

/// Whether a name was seen in a directory listing: absent, there with the
/// type the rules need, or a symlink (whose target decides, so it is
/// checked on disk).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Seen {
    #[default]
    Absent,
    Yes,
    Symlink,
}

/// Which of the names the rules depend on a directory listing showed, so
/// that a walk which lists the directory anyway need not `stat` for them
/// (four failed `stat`s per directory otherwise).
#[derive(Debug, Clone, Copy, Default)]
pub struct IgnoreFilesPresent {
    git: Seen,
    files: [Seen; 3],
}

impl IgnoreFilesPresent {
    /// Records one entry of the listing.
    pub fn note(&mut self, name: &std::ffi::OsStr, kind: std::fs::FileType) {
        let seen = |wanted: bool| match (kind.is_symlink(), wanted) {
            (true, _) => Seen::Symlink,
            (false, true) => Seen::Yes,
            (false, false) => Seen::Absent,
        };
        if name == ".git" {
            // Any kind: a worktree or submodule has a `.git` file.
            self.git = seen(true);
        } else if let Some(i) = IGNORE_FILES.iter().position(|f| name == *f) {
            self.files[i] = seen(kind.is_file());
        }
    }
}

impl RuleChain {
    /// The chain of `dir`, a subdirectory of the directory this chain is
    /// in force in, given what `dir`'s listing showed.
    pub fn enter(self: &Arc<Self>, dir: &Path, present: &IgnoreFilesPresent) -> Arc<RuleChain> {
        let git = match present.git {
            Seen::Absent => false,
            Seen::Yes => true,
            Seen::Symlink => dir.join(".git").exists(),
        };
        let rules = rules_of_dir(dir, git, &IGNORE_FILES, |name| {
            let i = IGNORE_FILES.iter().position(|f| *f == name);
            match i.map(|i| present.files[i]) {
                Some(Seen::Yes) => true,
                Some(Seen::Symlink) => dir.join(name).is_file(),
                _ => false,
            }
        });
        linked(rules, Some(self.clone()))
    }
}

/// The rules in force in a search root: its own and its ancestors' up to
/// the enclosing repository root. The walks carry each directory's chain
/// down from here themselves ([`RuleChain::enter`]).
#[derive(Debug)]
pub struct Classifier {
    root_chain: Arc<RuleChain>,
}

impl Classifier {
    pub fn new(root: &Path) -> Self {
        // Ancestors up to the repository root, outermost first.
        let mut ancestors: Vec<&Path> = Vec::new();
        let mut found_repo = false;
        for dir in root.ancestors().skip(1) {
            ancestors.push(dir);
            if dir.join(".git").exists() {
                found_repo = true;
                break;
            }
        }
        if !found_repo {
            ancestors.clear();
        }
        let mut chain: Option<Arc<RuleChain>> = None;
        for dir in ancestors.iter().rev() {
            chain = Some(chain_with(chain, dir));
        }
        Classifier {
            root_chain: chain_with(chain, root),
        }
    }

    /// The rules in force in the root.
    pub fn root_chain(&self) -> Arc<RuleChain> {
        self.root_chain.clone()
    }
}

/// The directories whose rules a chain holds, innermost first.
fn rule_dirs(chain: &RuleChain) -> Vec<&Path> {
    let mut dirs = Vec::new();
    let mut current = Some(chain);
    while let Some(c) = current {
        if let Some(rules) = &c.rules {
            dirs.push(rules.path());
        }
        current = c.parent.as_deref();
    }
    dirs
}

/// The chain `chain` (in force in `from`) becomes in `to`, a directory
/// below `from`, entering each directory on the way.
fn chain_down(mut chain: Arc<RuleChain>, from: &Path, to: &Path) -> Arc<RuleChain> {
    let Ok(rel) = to.strip_prefix(from) else {
        return chain;
    };
    let mut dir = from.to_path_buf();
    for part in rel.components() {
        dir.push(part);
        chain = chain_with(Some(chain), &dir);
    }
    chain
}

/// The rules in force inside `dir`, a directory at or below `root`, as the
/// walk from `root` has them there (its own ignore files included): what a
/// walk re-started at `dir` needs to classify as the walk from `root` did.
pub fn chain_in(root_chain: &Arc<RuleChain>, root: &Path, dir: &Path) -> Arc<RuleChain> {
    chain_down(root_chain.clone(), root, dir)
}

/// Whether a walk started at `sub`, a directory below `root`, classifies
/// everything below `sub` as the walk from `root` did, given the entries
/// below `sub` that the walk from `root` set aside as ignored (`ignored`).
///
/// A walk takes its ancestors' rules only up to the enclosing repository
/// root, so the walk from `sub` may lack the outermost rules the walk from
/// `root` had (no repository above `root`, or a nested one between them);
/// it never has rules the other lacks. Rules are tried innermost first and
/// the first that matches decides, so dropping the outermost ones changes
/// only what they ignored: the answer is yes when every ignored entry is
/// also ignored by the rules the walk from `sub` has. What lets a search of
/// `sub` use a table made by the walk of `root`.
pub fn classifies_alike(root: &Path, sub: &Path, ignored: &[IgnoredRoot]) -> bool {
    if !sub.starts_with(root) {
        return false;
    }
    let from_sub = Classifier::new(sub).root_chain();
    let from_root = chain_down(Classifier::new(root).root_chain(), root, sub);
    let (s, r) = (rule_dirs(&from_sub), rule_dirs(&from_root));
    if s == r {
        return true;
    }
    if !r.starts_with(&s) {
        return false;
    }
    ignored.iter().all(|x| {
        let parent = x.path.parent().unwrap_or(sub);
        chain_down(from_sub.clone(), sub, parent).is_ignored(&x.path, x.is_dir)
    })
}

/// The classifier as `ignore`'s walk used it, looking each entry's parent
/// up in a map of entered directories: the reference the hand-written
/// walks are tested against.
#[cfg(test)]
#[derive(Debug)]
pub struct MapClassifier {
    root: std::path::PathBuf,
    root_chain: Arc<RuleChain>,
    by_dir: std::sync::Mutex<std::collections::HashMap<std::path::PathBuf, Arc<RuleChain>>>,
}

#[cfg(test)]
impl MapClassifier {
    pub fn new(root: &Path) -> Self {
        let root_chain = Classifier::new(root).root_chain();
        let map = [(root.to_path_buf(), root_chain.clone())]
            .into_iter()
            .collect();
        MapClassifier {
            root: root.to_path_buf(),
            root_chain,
            by_dir: std::sync::Mutex::new(map),
        }
    }

    fn chain_of(&self, dir: &Path) -> Arc<RuleChain> {
        let map = self.by_dir.lock().unwrap_or_else(|e| e.into_inner());
        map.get(dir)
            .cloned()
            .unwrap_or_else(|| self.root_chain.clone())
    }

    /// Whether the rules would exclude `path`. Its parent must have been
    /// entered (the walker visits a directory before its children).
    pub fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        if path == self.root {
            return false;
        }
        let parent = path.parent().unwrap_or(&self.root);
        self.chain_of(parent).is_ignored(path, is_dir)
    }

    /// Records the rules of a directory the walk is about to descend into.
    pub fn enter_dir(&self, dir: &Path) {
        if dir == self.root {
            return;
        }
        let parent = dir.parent().unwrap_or(&self.root);
        let chain = chain_with(Some(self.chain_of(parent)), dir);
        self.by_dir
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(dir.to_path_buf(), chain);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        fs::create_dir_all(r.join("node_modules/pkg")).unwrap();
        fs::create_dir_all(r.join("src/gen")).unwrap();
        fs::write(r.join(".gitignore"), "node_modules/\n*.log\n!keep.log\n").unwrap();
        fs::write(r.join("src/.gitignore"), "gen/\n").unwrap();
        fs::write(r.join("src/.ignore"), "!gen/\n").unwrap();
        t
    }

    #[test]
    fn root_rules_apply_to_children() {
        let t = tree();
        let c = MapClassifier::new(t.path());
        assert!(c.is_ignored(&t.path().join("node_modules"), true));
        assert!(c.is_ignored(&t.path().join("debug.log"), false));
        assert!(!c.is_ignored(&t.path().join("keep.log"), false));
        assert!(!c.is_ignored(&t.path().join("src"), true));
    }

    #[test]
    fn dot_ignore_beats_gitignore_in_the_same_dir() {
        let t = tree();
        let c = MapClassifier::new(t.path());
        c.enter_dir(&t.path().join("src"));
        assert!(!c.is_ignored(&t.path().join("src/gen"), true));
    }

    #[test]
    fn nested_rules_do_not_leak_to_siblings() {
        let t = tree();
        fs::create_dir_all(t.path().join("other/gen")).unwrap();
        let c = MapClassifier::new(t.path());
        c.enter_dir(&t.path().join("other"));
        assert!(!c.is_ignored(&t.path().join("other/gen"), true));
    }
}
