//! Outlines of files grep grouped recently, so that a repeated or refined
//! search over the same files (what an agent does all day) does not parse
//! them again: a parse costs 1 to 4 ms for a typical C file, as much as
//! searching dozens of files.
//!
//! An entry is keyed by the file's stamp with its device (`stamp.rs`) and
//! its language. A file changed within the racy window (`stamp::RACY`) is
//! not cached: a same-size rewrite within one tick of the filesystem's
//! clock would keep its stamp and leave a stale entry. A stale outline
//! could only mislabel groups; hits always come from the fresh read.
//!
//! Bounded: at most [`MAX_ENTRIES`] files and [`MAX_SYMBOLS`] symbols (or
//! name uses) per cache, some 30 to 50 MB each when full; the least recently
//! used go first. They are this large because `discover::warm` fills up to
//! half of them ahead of a tree's first `locate` or `trace`.
//!
//! `trace` keeps a second cache of the same shape for a file's name uses
//! (its call sites), which cost a second parse: a repeated trace over the
//! same candidates parsed each of them twice again.

use super::stamp::{DevStamp, RACY};
use crate::structure::calls::NameUse;
use crate::structure::{Language, Outline};
use std::collections::HashMap;
use std::fs::Metadata;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

pub const MAX_ENTRIES: usize = 8192;
pub const MAX_SYMBOLS: usize = 524_288;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    file: DevStamp,
    language: Language,
}

impl Key {
    /// The key of a file with this metadata, or `None` when it must not be
    /// cached (changed too recently: see `stamp::RACY`).
    pub fn of(meta: &Metadata, language: Language, now: SystemTime) -> Option<Key> {
        let file = DevStamp::of_meta(meta);
        (file.stamp.settled(now, RACY)).then_some(Key { file, language })
    }
}

/// What a cache entry weighs against [`MAX_SYMBOLS`].
pub(super) trait Weight {
    fn weight(&self) -> usize;
}

impl Weight for Outline {
    fn weight(&self) -> usize {
        self.symbols.len()
    }
}

impl Weight for Vec<NameUse> {
    fn weight(&self) -> usize {
        self.len()
    }
}

struct Entry<T> {
    outline: Arc<T>,
    used: u64,
}

pub(super) struct Cache<T = Outline> {
    entries: HashMap<Key, Entry<T>>,
    symbols: usize,
    clock: u64,
}

impl<T> Default for Cache<T> {
    fn default() -> Self {
        Cache {
            entries: HashMap::new(),
            symbols: 0,
            clock: 0,
        }
    }
}

impl<T: Weight> Cache<T> {
    pub(super) fn get(&mut self, key: &Key) -> Option<Arc<T>> {
        self.clock += 1;
        let now = self.clock;
        self.entries.get_mut(key).map(|e| {
            e.used = now;
            e.outline.clone()
        })
    }

    pub(super) fn put(&mut self, key: Key, outline: Arc<T>) {
        let size = outline.weight();
        if size > MAX_SYMBOLS / 4 {
            return; // one huge generated file would push out everything else
        }
        self.clock += 1;
        let used = self.clock;
        if let Some(old) = self.entries.insert(key, Entry { outline, used }) {
            self.symbols -= old.outline.weight();
        }
        self.symbols += size;
        if self.entries.len() > MAX_ENTRIES || self.symbols > MAX_SYMBOLS {
            self.evict();
        }
    }

    /// Drops the least recently used entries until both bounds are down to
    /// three quarters, so that evictions (a sort) stay rare.
    fn evict(&mut self) {
        let mut by_age: Vec<(u64, Key)> = self
            .entries
            .iter()
            .map(|(k, e)| (e.used, k.clone()))
            .collect();
        by_age.sort_unstable_by_key(|(used, _)| *used);
        for (_, key) in by_age {
            if self.entries.len() <= MAX_ENTRIES * 3 / 4 && self.symbols <= MAX_SYMBOLS * 3 / 4 {
                break;
            }
            if let Some(e) = self.entries.remove(&key) {
                self.symbols -= e.outline.weight();
            }
        }
    }

    fn holds(&self, key: &Key) -> bool {
        self.entries.contains_key(key)
    }

    #[cfg(test)]
    pub(super) fn usage(&self) -> (usize, usize) {
        (self.entries.len(), self.symbols)
    }
}

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);
static USES: Mutex<Option<Cache<Vec<NameUse>>>> = Mutex::new(None);

fn with<T>(f: impl FnOnce(&mut Cache) -> T) -> T {
    let mut guard = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    f(guard.get_or_insert_with(Cache::default))
}

fn with_uses<T>(f: impl FnOnce(&mut Cache<Vec<NameUse>>) -> T) -> T {
    let mut guard = USES.lock().unwrap_or_else(|p| p.into_inner());
    f(guard.get_or_insert_with(Cache::default))
}

/// The outline and the name uses (call sites, render sites) of `source`
/// (the contents `meta` describes), each from its cache or, when neither
/// is cached, from one parse (the first trace over a file used to parse it
/// twice); what was parsed is cached when its stamps allow. `None` only
/// when `stop` says so.
pub fn outline_and_uses_of(
    lang: Language,
    meta: &Metadata,
    source: &[u8],
    stop: &dyn Fn() -> bool,
) -> Option<(Arc<Outline>, Arc<Vec<NameUse>>)> {
    let key = Key::of(meta, lang, std::time::SystemTime::now());
    let outline = key.as_ref().and_then(get);
    let uses = key.as_ref().and_then(|k| with_uses(|c| c.get(k)));
    let (outline, uses) = match (outline, uses) {
        (Some(o), Some(u)) => return Some((o, u)),
        (None, Some(u)) => return Some((outline_of(lang, meta, source, stop)?, u)),
        (Some(o), None) => (o, crate::structure::calls::name_uses(lang, source, stop)),
        (None, None) => {
            let (o, u) = crate::structure::outline_and_uses(lang, source, stop)?;
            let o = Arc::new(o);
            if let Some(key) = &key {
                put(key.clone(), o.clone());
            }
            (o, u)
        }
    };
    let uses = Arc::new(uses);
    // Empty when `stop` cut the parse: then not cached.
    if let (Some(key), false) = (key, stop()) {
        with_uses(|c| c.put(key, uses.clone()));
    }
    Some((outline, uses))
}

/// Whether both the outline and the name uses of the file `meta`
/// describes, read as `lang`, are cached (a warm parses it no more).
pub fn holds_structure(lang: Language, meta: &Metadata) -> bool {
    let Some(key) = Key::of(meta, lang, std::time::SystemTime::now()) else {
        return false;
    };
    with(|c| c.holds(&key)) && with_uses(|c| c.holds(&key))
}

/// The process-wide cache grep uses.
pub fn get(key: &Key) -> Option<Arc<Outline>> {
    with(|c| c.get(key))
}

pub fn put(key: Key, outline: Arc<Outline>) {
    with(|c| c.put(key, outline));
}

/// The outline of `source` (the contents `meta` describes): cached, or
/// parsed and cached when its stamps allow. `None` only when `stop` says so.
/// grep's grouping and the `outline()` call both come here, so a file an
/// agent grepped and then outlines is parsed once.
pub fn outline_of(
    lang: Language,
    meta: &Metadata,
    source: &[u8],
    stop: &dyn Fn() -> bool,
) -> Option<Arc<Outline>> {
    let key = Key::of(meta, lang, std::time::SystemTime::now());
    if let Some(cached) = key.as_ref().and_then(get) {
        return Some(cached);
    }
    let fresh = Arc::new(crate::structure::outline_cancellable(lang, source, stop)?);
    if let Some(key) = key {
        put(key, fresh.clone());
    }
    Some(fresh)
}
