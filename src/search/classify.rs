//! Decides whether an entry is excluded by `.gitignore`, `.ignore`,
//! `.rgignore`, `.git/info/exclude` or the user's global git excludes: the
//! one definition of "ignored". The default mode (`noIgnore: true`) sets the
//! entries it names aside and searches them after the project's own files;
//! `noIgnore: false` drops the very same entries (one walk, one decision).
//!
//! The semantics are the `ignore` crate's (ripgrep's), kind by kind: for an
//! entry, the directories from its parent up to `/` are tried innermost
//! first, and the first match of each kind of file counts; `.rgignore`
//! beats `.ignore` beats `.gitignore` beats `.git/info/exclude` beats the
//! global excludes, whichever directory each match came from. `.ignore`
//! and `.rgignore` apply from every ancestor; `.gitignore` and the
//! repository's exclude file stop at the repository root (a directory with
//! a `.git`, or a `.jj` as for the `ignore` crate since 0.4.35, rg 15), so a
//! nested repository does not inherit its parent's. One
//! deliberate difference from rg: a `.gitignore` outside any repository
//! applies too (as `rg --no-require-git`), in both modes alike. Nothing
//! below an ignored directory can be re-included (the walk never enters
//! one), and the rules do not depend on where a search starts.

use super::display::{display_bytes, relative_bytes};
use super::rules_cache::rules_of_dir;
use super::stamp::{DevStamp, Stamp, RACY};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The ignore files a directory may hold, lowest precedence first.
pub const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".rgignore"];

/// One directory's rules, by kind, and whether it is a repository root.
#[derive(Debug, Default)]
struct DirRules {
    rgignore: Option<Arc<Gitignore>>,
    ignore: Option<Arc<Gitignore>>,
    gitignore: Option<Arc<Gitignore>>,
    exclude: Option<Arc<Gitignore>>,
    /// The user's global git excludes (only on the outermost link).
    global: Option<Arc<Gitignore>>,
    /// Has a `.git`: `.gitignore` and exclude files above it do not apply.
    repo: bool,
}

impl DirRules {
    fn is_empty(&self) -> bool {
        !self.repo
            && self.rgignore.is_none()
            && self.ignore.is_none()
            && self.gitignore.is_none()
            && self.exclude.is_none()
            && self.global.is_none()
    }

    /// Whether this directory or any above it holds a `.rgignore` or
    /// `.ignore` (whose matches outrank a `.gitignore`'s found deeper).
    fn outranking(&self) -> bool {
        self.rgignore.is_some() || self.ignore.is_some()
    }
}

/// The rules in force in one directory: its own (if any) plus its parents'.
#[derive(Debug)]
pub struct RuleChain {
    rules: DirRules,
    /// `rules` or a link above holds `.rgignore`/`.ignore` rules.
    outranking_above: bool,
    parent: Option<Arc<RuleChain>>,
}

/// Sets `m` to `rules`' match of `path` unless an earlier one was found.
fn first(m: &mut Match<()>, rules: &Option<Arc<Gitignore>>, path: &Path, is_dir: bool) {
    if let (Match::None, Some(g)) = (&m, rules) {
        *m = g.matched(path, is_dir).map(|_| ());
    }
}

impl RuleChain {
    pub fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        self.matched(path, is_dir).is_ignore()
    }

    /// Whether a `!` rule decides that `path` is not ignored.
    pub fn is_whitelisted(&self, path: &Path, is_dir: bool) -> bool {
        self.matched(path, is_dir).is_whitelist()
    }

    fn matched(&self, path: &Path, is_dir: bool) -> Match<()> {
        let (mut rg, mut ig, mut gi, mut ex, mut global) = (
            Match::None,
            Match::None,
            Match::None,
            Match::None,
            Match::None,
        );
        let mut in_repo_above = false;
        let mut current = Some(self);
        while let Some(chain) = current {
            let r = &chain.rules;
            first(&mut rg, &r.rgignore, path, is_dir);
            first(&mut ig, &r.ignore, path, is_dir);
            if !in_repo_above {
                first(&mut gi, &r.gitignore, path, is_dir);
                first(&mut ex, &r.exclude, path, is_dir);
            }
            first(&mut global, &r.global, path, is_dir);
            in_repo_above |= r.repo;
            // Stop once nothing further up can outrank what was found.
            let outranked_above = (chain.parent.as_ref()).is_some_and(|p| p.outranking_above);
            if !rg.is_none() || (!outranked_above && (!ig.is_none() || !gi.is_none())) {
                break;
            }
            current = chain.parent.as_deref();
        }
        rg.or(ig).or(gi).or(ex).or(global)
    }
}

/// How a directory's `.git` was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GitMark {
    None,
    Dir,
    /// A worktree's or submodule's `gitdir:` file.
    File,
}

fn git_mark(dir: &Path) -> GitMark {
    match std::fs::metadata(dir.join(".git")) {
        Ok(m) if m.is_file() => GitMark::File,
        Ok(_) => GitMark::Dir,
        Err(_) => GitMark::None,
    }
}

/// The exclude file of the repository whose root is `dir` (if any), as
/// the classifier reads it.
pub fn repository_exclude(dir: &Path) -> Option<PathBuf> {
    exclude_file(dir, git_mark(dir))
}

/// The exclude file of the repository whose root is `dir`: `.git/info/
/// exclude`, or for a worktree the common directory's (`gitdir:` then its
/// `commondir`), as the `ignore` crate finds it. `None`: no such file.
fn exclude_file(dir: &Path, git: GitMark) -> Option<PathBuf> {
    match git {
        GitMark::None => None,
        GitMark::Dir => Some(dir.join(".git/info/exclude")),
        GitMark::File => {
            let first_line = |p: &Path| {
                let text = std::fs::read_to_string(p).ok()?;
                Some(text.lines().next()?.to_string())
            };
            let gitdir = first_line(&dir.join(".git"))?;
            let gitdir = dir.join(gitdir.strip_prefix("gitdir: ")?);
            let common = gitdir.join(first_line(&gitdir.join("commondir"))?);
            Some(common.join("info/exclude"))
        }
    }
}

/// `dir`'s rules; `jj`: it holds a `.jj` (a Jujutsu repository, a
/// repository root to the `ignore` crate as a `.git` is).
fn dir_rules(dir: &Path, git: GitMark, jj: bool, has_file: impl Fn(&str) -> bool) -> DirRules {
    let one = |name: &str| {
        if has_file(name) {
            rules_of_dir(dir, None, &[name], |_| true)
        } else {
            None
        }
    };
    DirRules {
        gitignore: one(IGNORE_FILES[0]),
        ignore: one(IGNORE_FILES[1]),
        rgignore: one(IGNORE_FILES[2]),
        exclude: exclude_file(dir, git).and_then(|f| rules_of_dir(dir, Some(&f), &[], |_| false)),
        global: None,
        repo: git != GitMark::None || jj,
    }
}

fn chain_with(parent: Option<Arc<RuleChain>>, dir: &Path) -> Arc<RuleChain> {
    let jj = dir.join(".jj").exists();
    let rules = dir_rules(dir, git_mark(dir), jj, |name| dir.join(name).is_file());
    linked(rules, parent)
}

fn linked(rules: DirRules, parent: Option<Arc<RuleChain>>) -> Arc<RuleChain> {
    match parent {
        Some(parent) if rules.is_empty() => parent,
        parent => Arc::new(RuleChain {
            outranking_above: rules.outranking()
                || parent.as_ref().is_some_and(|p| p.outranking_above),
            rules,
            parent,
        }),
    }
}

/// The files the user's global git excludes depend on, as the `ignore`
/// crate finds them: git's global and system config files (where
/// `core.excludesFile` may be set) and the excludes file they name, else
/// `$XDG_CONFIG_HOME/git/ignore`. Their change is a change of the rules.
pub fn global_rule_files() -> Vec<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    #[allow(deprecated)]
    let home = std::env::home_dir();
    let mut out: Vec<PathBuf> = var("GIT_CONFIG_GLOBAL").into_iter().collect();
    out.extend(home.as_ref().map(|h| h.join(".gitconfig")));
    out.extend(
        (var("XDG_CONFIG_HOME").or_else(|| home.map(|h| h.join(".config"))))
            .map(|x| x.join("git/config")),
    );
    out.push(var("GIT_CONFIG_SYSTEM").unwrap_or_else(|| PathBuf::from("/etc/gitconfig")));
    out.extend(ignore::gitignore::gitconfig_excludes_path());
    out
}

/// What a global rule file was when read (`None`: absent).
type FileStamp = Option<DevStamp>;

fn file_stamp(p: &Path) -> FileStamp {
    std::fs::metadata(p).ok().map(|m| DevStamp::of_meta(&m))
}

/// The user's global git excludes (`core.excludesFile`, else
/// `$XDG_CONFIG_HOME/git/ignore`), read as the `ignore` crate reads them,
/// again whenever one of [`global_rule_files`] changed (rg reads them at
/// each run). A few `stat`s per call.
fn global_rules() -> Option<Arc<Gitignore>> {
    type Read = (Vec<(PathBuf, FileStamp)>, Option<Arc<Gitignore>>);
    static GLOBAL: Mutex<Option<Read>> = Mutex::new(None);
    let mut kept = GLOBAL.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((files, rules)) = kept.as_ref() {
        if files.iter().all(|(p, s)| file_stamp(p) == *s) {
            return rules.clone();
        }
    }
    // Stamped before the read: a change after it is seen by the next call.
    let files: Vec<(PathBuf, FileStamp)> = (global_rule_files().into_iter())
        .map(|p| {
            let s = file_stamp(&p);
            (p, s)
        })
        .collect();
    let (g, _) = GitignoreBuilder::new("/").build_global();
    let rules = (!g.is_empty()).then(|| Arc::new(g));
    // A file changed within the stamps' granularity could change again
    // unseen: such a read is not kept.
    let now = std::time::SystemTime::now();
    let settled = (files.iter()).all(|(p, _)| {
        let stamp = std::fs::metadata(p).map(|m| Stamp::of_meta(&m));
        stamp.map_or(true, |s| s.settled(now, RACY))
    });
    *kept = settled.then(|| (files, rules.clone()));
    rules
}

/// Whether the user's global git excludes hold any rule.
pub fn global_excludes_apply() -> bool {
    global_rules().is_some()
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
    git_file: bool,
    jj: Seen,
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
            self.git_file = kind.is_file();
        } else if name == ".jj" {
            self.jj = seen(true);
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
            Seen::Absent => GitMark::None,
            Seen::Yes if present.git_file => GitMark::File,
            Seen::Yes => GitMark::Dir,
            Seen::Symlink => git_mark(dir),
        };
        let jj = match present.jj {
            Seen::Absent => false,
            Seen::Yes => true,
            Seen::Symlink => dir.join(".jj").exists(),
        };
        let rules = dir_rules(dir, git, jj, |name| {
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

/// The rules in force in a search root: its own, every ancestor's up to
/// `/` and the global excludes. The walks carry each directory's chain
/// down from here themselves ([`RuleChain::enter`]).
#[derive(Debug)]
pub struct Classifier {
    root_chain: Arc<RuleChain>,
}

impl Classifier {
    pub fn new(root: &Path) -> Self {
        let global = DirRules {
            global: global_rules(),
            ..Default::default()
        };
        let mut chain = (!global.is_empty()).then(|| linked(global, None));
        let ancestors: Vec<&Path> = root.ancestors().skip(1).collect();
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

/// An entry that the ignore rules exclude (a directory such as
/// `node_modules/`, or one file), set aside by the project walk and searched
/// in a second phase; its index in the walk's list tells results apart.
#[derive(Debug, Clone)]
pub struct IgnoredRoot {
    pub path: PathBuf,
    pub is_dir: bool,
}

impl IgnoredRoot {
    /// How summaries name this ignored root: its display path relative to
    /// `root`, with `/` after a directory (`node_modules/`).
    pub fn label(&self, root: &Path) -> String {
        let mut s = display_bytes(&relative_bytes(root, &self.path)).text;
        if self.is_dir {
            s.push('/');
        }
        s
    }

    /// Index of the root that `path` lies under (`roots` sorted by path, as
    /// the walks return them).
    pub fn index_of(roots: &[IgnoredRoot], path: &Path) -> Option<usize> {
        let i = roots.partition_point(|d| d.path.as_path() <= path);
        let i = i.checked_sub(1)?;
        path.starts_with(&roots[i].path).then_some(i)
    }
}

/// Whether a walk started at `sub`, a directory below `root`, classifies
/// everything below `sub` as the walk from `root` did, given the entries
/// below `sub` that the walk from `root` set aside as ignored. Always, for
/// a directory below `root`: an entry's rules are those of its ancestors
/// up to `/`, wherever the walk started (ripgrep reads the parents' ignore
/// files too). What lets a search of `sub` use a table made by the walk of
/// `root`.
pub fn classifies_alike(root: &Path, sub: &Path, _ignored: &[IgnoredRoot]) -> bool {
    sub.starts_with(root)
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
