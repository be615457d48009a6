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

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".rgignore"];

/// The rules in force in one directory: its own (if any) plus its parent's.
#[derive(Debug)]
pub struct RuleChain {
    rules: Option<Gitignore>,
    parent: Option<Arc<RuleChain>>,
}

impl RuleChain {
    fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
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

fn rules_of_dir(dir: &Path, include_git_exclude: bool) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(dir);
    let mut any = false;
    if include_git_exclude {
        let exclude = dir.join(".git").join("info").join("exclude");
        if exclude.is_file() {
            any |= builder.add(exclude).is_none();
        }
    }
    // Later files win within one builder, so the order gives .rgignore the
    // last word, as in ripgrep.
    for name in IGNORE_FILES {
        let file = dir.join(name);
        if file.is_file() {
            // A partly malformed file still contributes its valid lines.
            builder.add(file);
            any = true;
        }
    }
    if !any {
        return None;
    }
    builder.build().ok().filter(|g| !g.is_empty())
}

fn chain_with(parent: Option<Arc<RuleChain>>, dir: &Path) -> Arc<RuleChain> {
    let rules = rules_of_dir(dir, dir.join(".git").exists());
    match (rules, parent) {
        (None, Some(parent)) => parent,
        (rules, parent) => Arc::new(RuleChain { rules, parent }),
    }
}

/// Shared by walker threads; one map entry per non-ignored directory.
#[derive(Debug)]
pub struct Classifier {
    root: PathBuf,
    root_chain: Arc<RuleChain>,
    by_dir: Mutex<HashMap<PathBuf, Arc<RuleChain>>>,
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
        let root_chain = chain_with(chain, root);
        let mut map = HashMap::new();
        map.insert(root.to_path_buf(), root_chain.clone());
        Classifier {
            root: root.to_path_buf(),
            root_chain,
            by_dir: Mutex::new(map),
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
        let c = Classifier::new(t.path());
        assert!(c.is_ignored(&t.path().join("node_modules"), true));
        assert!(c.is_ignored(&t.path().join("debug.log"), false));
        assert!(!c.is_ignored(&t.path().join("keep.log"), false));
        assert!(!c.is_ignored(&t.path().join("src"), true));
    }

    #[test]
    fn dot_ignore_beats_gitignore_in_the_same_dir() {
        let t = tree();
        let c = Classifier::new(t.path());
        c.enter_dir(&t.path().join("src"));
        assert!(!c.is_ignored(&t.path().join("src/gen"), true));
    }

    #[test]
    fn nested_rules_do_not_leak_to_siblings() {
        let t = tree();
        fs::create_dir_all(t.path().join("other/gen")).unwrap();
        let c = Classifier::new(t.path());
        c.enter_dir(&t.path().join("other"));
        assert!(!c.is_ignored(&t.path().join("other/gen"), true));
    }
}
