//! How `locate` scores a file: its path (query tokens met in the file
//! name, the directories, written differently or fuzzily, and what it
//! lacks), its text's score combined with it (`content`), and the
//! definition signal its outline gives. Every point comes with a reason
//! in words, shown as the file's `why`.

use super::content::{ContentQuery, ContentScore};
use super::query::{describing_share, FuzzyToken, Query};
use super::role::{is_entry_point, Role};
use super::tokens::{self, NameMatch, TokenMatch};
use crate::structure::{Outline, Symbol, SymbolKind};

/// What a lacking query token costs a path: more than a whole-token hit in
/// the file name earns (100).
pub(crate) const MISSING_TOKEN_COST: f64 = 150.0;

/// What one of `n` query tokens costs a file lacking it (in its path and
/// its text): [`MISSING_TOKEN_COST`] for a question of up to three, a
/// share of three such costs for a longer one. A long question's answer
/// lacks several of its words ("find the innermost cause of a chain of
/// wrapped throwables": `ExceptionUtils.java` never says innermost), and
/// at full cost each would bury it under files that merely say more of
/// them (issue 45, class 1).
pub(crate) fn missing_cost(n: usize) -> f64 {
    MISSING_TOKEN_COST * 3.0 / n.max(3) as f64
}

/// One path's score. `why` is filled only when `explain` is set, so the
/// walk builds no strings for the thousands of paths that never show.
pub(crate) fn score_path(
    q: &Query,
    rel: &str,
    matchers: &mut [FuzzyToken],
    explain: bool,
) -> Option<PathScore> {
    let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    let name_tokens = tokens::split(name);
    let dir_tokens = tokens::split(dir);
    let mut score = 0.0;
    let mut why = Vec::new();
    let (mut in_name, mut in_dir, mut fuzzy, mut missing) = (vec![], vec![], vec![], vec![]);
    let mut written: Vec<String> = Vec::new();
    let mut written_at: Vec<usize> = Vec::new();
    // The extension names the file's language, not a word written short:
    // `.rb` was "rb for rebuilt", `.py` "py for pygments" (issue 45). It
    // still meets a word it is (`json`).
    let extension_at = (name.rfind('.').is_some_and(|i| i > 0) && name_tokens.len() > 1)
        .then(|| name_tokens.len() - 1);
    // Each name token's words written together, worked out once if asked.
    let mut joins: Option<Vec<Vec<&str>>> = None;
    let mut positions = Vec::new();
    // `authstatus.ts` is named by `auth status` as a whole.
    let joined = q.tokens.len() >= 2 && name_tokens.contains(&q.written_together);
    for (i, t) in q.tokens.iter().enumerate() {
        let (name_match, at) = if joined {
            (TokenMatch::Exact, Some(0))
        } else {
            tokens::match_token(t, &name_tokens)
        };
        let pw = q.path_weights[i];
        if name_match != TokenMatch::None {
            score += pw
                * if name_match == TokenMatch::Exact {
                    100.0
                } else {
                    70.0
                };
            in_name.push(t.as_str());
            positions.push(dir_tokens.len() + at.unwrap_or(0));
            continue;
        }
        // `cfg` for config, `chunks` for chunked, `parsecfg` for parse config.
        let joins = joins.get_or_insert_with(|| {
            (name_tokens.iter())
                .map(|nt| tokens::joined_words(nt, &q.tokens))
                .collect::<Vec<_>>()
        });
        if let Some(at) = (name_tokens.iter().zip(joins.iter()).enumerate())
            .filter(|(k, _)| Some(*k) != extension_at)
            .find(|(_, (nt, j))| tokens::related_word(t, nt) || j.contains(&t.as_str()))
            .map(|(k, _)| k)
        {
            written.push(format!("{} for {t}", name_tokens[at]));
            written_at.push(dir_tokens.len() + at);
            continue;
        }
        let (dir_match, at) = tokens::match_token(t, &dir_tokens);
        if dir_match != TokenMatch::None {
            score += pw
                * if dir_match == TokenMatch::Exact {
                    40.0
                } else {
                    25.0
                };
            in_dir.push(t.as_str());
            positions.push(at.unwrap_or(0));
            continue;
        }
        if matchers[i].hits(name) {
            score += 20.0;
            fuzzy.push(t.as_str());
        } else if matchers[i].hits(rel) {
            score += 10.0;
            fuzzy.push(t.as_str());
        } else {
            missing.push(t.as_str());
        }
    }
    // An abbreviation counts beside a word met as written, an inflected
    // word (`chunks` for chunked) or one name token holding two words
    // (`dynbuf`): alone, a `ctrl` in `timed_ctrl_public.h` is weak
    // evidence for `TcpCongestionControl`.
    let strong = written.iter().any(|w| {
        let (form, word) = w.split_once(" for ").unwrap_or(("", ""));
        tokens::inflects(word, form)
            || written
                .iter()
                .filter(|x| x.split(' ').next() == Some(form))
                .count()
                >= 2
    });
    if !in_name.is_empty() || !in_dir.is_empty() || strong {
        score += 60.0 * written.len() as f64;
        positions.extend(written_at);
    } else {
        for w in std::mem::take(&mut written) {
            let word = w.rsplit(' ').next().unwrap_or("");
            if let Some(t) = q.tokens.iter().find(|t| t.as_str() == word) {
                missing.push(t.as_str());
            }
        }
    }
    let matched_tokens = in_name.len() + in_dir.len() + written.len();
    let path_hit = q
        .path_form
        .as_ref()
        .is_some_and(|p| rel.to_lowercase().contains(p.as_str()));
    // Every token met (fuzzily at worst), or at least one met as a whole
    // token: the definition signal may still lift such a file.
    if !missing.is_empty() && matched_tokens == 0 && !path_hit {
        return None;
    }
    // A path lacking a query token ranks after those that have them all: a
    // whole-token hit earns at most 100, so three hits and a miss (`ptp_kvm_x86.c`
    // for `kvm x86 mmu`) stay below one hit and three in the directory.
    score -= missing_cost(q.tokens.len()) * missing.len() as f64;
    if path_hit {
        score += 60.0;
    }
    // Coverage: how much of the file name the query explains.
    let stem_len = name_tokens
        .len()
        .saturating_sub(usize::from(name.contains('.')))
        .max(1);
    let covered = name_tokens
        .iter()
        .take(stem_len)
        .filter(|nt| {
            // `queryparams` is named by `query params`; the `test` of
            // `test_queryparams.py` is not.
            (joined && **nt == q.written_together)
                || q.tokens.iter().any(|t| nt.starts_with(t.as_str()))
                || written
                    .iter()
                    .any(|w| w.split(' ').next() == Some(nt.as_str()))
        })
        .count();
    let coverage = covered as f64 / stem_len as f64;
    score += 40.0 * coverage;
    if positions.len() >= 2 && positions.windows(2).all(|w| w[0] <= w[1]) {
        score += 10.0;
    }
    let entry_of_match = is_entry_point(name)
        && dir.rsplit('/').next().is_some_and(|last| {
            in_dir
                .iter()
                .any(|t| tokens::match_token(t, &tokens::split(last)).0 != TokenMatch::None)
        });
    if entry_of_match {
        score += 35.0;
    }
    let role = Role::of(rel);
    score -= role.penalty();
    let depth = rel.matches('/').count() as f64;
    score -= 1.5 * depth;
    if explain {
        why = reasons(&Matched {
            q,
            dir,
            in_name: &in_name,
            written: &written,
            in_dir: &in_dir,
            fuzzy: &fuzzy,
            missing: &missing,
            whole_name: coverage >= 0.999,
            path_hit,
            entry_of_match,
            role,
        });
    }
    let met = (q.tokens.iter())
        .map(|t| !missing.contains(&t.as_str()))
        .collect();
    Some(PathScore {
        score,
        why,
        missing: missing.len(),
        met,
    })
}

/// What [`score_path`] found in one path, for its reasons.
struct Matched<'a> {
    q: &'a Query,
    dir: &'a str,
    in_name: &'a [&'a str],
    /// `cfg for config`: a name token that abbreviates or inflects a word.
    written: &'a [String],
    in_dir: &'a [&'a str],
    fuzzy: &'a [&'a str],
    missing: &'a [&'a str],
    /// Every word of the file name stands in the query.
    whole_name: bool,
    path_hit: bool,
    entry_of_match: bool,
    role: Role,
}

/// The reasons a path scored, in words. Each says one thing the path has
/// or lacks, and none contradicts another: "the query names the whole
/// file" is said only when the path has every query word, since beside
/// "path lacks manager" it would be false; a file name made only of query
/// words is said so plainly then.
fn reasons(m: &Matched<'_>) -> Vec<String> {
    let mut why = Vec::new();
    if !m.in_name.is_empty() {
        why.push(format!("file name matches {}", m.in_name.join(", ")));
    }
    if !m.written.is_empty() {
        why.push(format!("file name has {}", m.written.join(", ")));
    }
    if m.whole_name && !m.in_name.is_empty() {
        if m.missing.is_empty() && m.fuzzy.is_empty() {
            why.push("the query names the whole file".to_string());
        } else {
            why.push("every word of the file name is in the query".to_string());
        }
    }
    if !m.in_dir.is_empty() {
        why.push(format!("directory matches {}", m.in_dir.join(", ")));
    }
    if m.path_hit {
        why.push(format!("path contains {}", m.q.raw));
    }
    if !m.fuzzy.is_empty() {
        why.push(format!("fuzzy match for {}", m.fuzzy.join(", ")));
    }
    if !m.missing.is_empty() {
        why.push(format!("path lacks {}", m.missing.join(", ")));
    }
    if m.entry_of_match {
        why.push(format!("entry point of {}/", m.dir));
    }
    if m.role.penalty() > 0.0 {
        why.push(format!("{} file: ranked down", m.role.as_str()));
    }
    why
}

/// A path's score, its reasons (when asked), and how many query tokens it
/// lacks (a definition named by the whole query supplies those).
#[derive(Debug, Default)]
pub(crate) struct PathScore {
    pub score: f64,
    pub why: Vec<String>,
    pub missing: usize,
    /// Per query token: the path meets it (whole, by prefix, written
    /// differently or fuzzily).
    pub met: Vec<bool>,
}

/// Path tokens the text holds earn back what lacking them cost: `kill
/// grace` names `src/shell/kill.rs`, whose text says grace. (Two thirds
/// were given back until issue 45: `http_chunks.c`, named by `chunked`
/// and holding the other three words, then ranked below every file that
/// only held them, its path named nothing.)
const REFUND_SHARE: f64 = 1.0;

/// What a word lacking from a file's path and its text costs, as a share
/// of [`missing_cost`] (when the text was read), taken off in a question
/// that describes ([`describing_share`]): half. Such a question says what
/// the code does in words of its own, and its answer seldom says every one
/// (tmux's `alerts.c` never says "flagging" or "background"); at the whole
/// cost a long file saying each word once outranked it.
const TEXT_LACK_DISCOUNT: f64 = 0.5;

/// A file's place in the heap from its path score and its text's, or
/// `None` when neither matched.
pub(crate) fn combine(
    cq: Option<&ContentQuery>,
    rel: &str,
    path: Option<&PathScore>,
    content: Option<ContentScore>,
) -> Option<Scored> {
    if path.is_none() && content.is_none() {
        return None;
    }
    let role = Role::of(rel);
    let mut base = match path {
        Some(p) => p.score,
        // Ranked as a path would be: tests and docs down, deep files a little.
        None => -role.penalty() - 1.5 * rel.matches('/').count() as f64,
    };
    let mut refund = 0.0;
    if let Some(c) = &content {
        // What a file that is not code says counts half: a changelog, a
        // translation, a test or a bundle says most words of any question
        // about the code (issue 45's held-out sets: `po/pl.po`,
        // `History.markdown` and `dist/axios.js` above the code asked for).
        let credit = if role == Role::Code { 1.0 } else { 0.5 };
        base += credit * cq.map_or(0.0, |cq| c.text_points(cq));
        let cost = missing_cost(c.holds.len());
        let lack_share = 1.0 - TEXT_LACK_DISCOUNT * describing_share(c.holds.len());
        match path {
            Some(p) => {
                let held = (p.met.iter().zip(&c.holds))
                    .filter(|(met, holds)| !**met && **holds)
                    .count();
                let neither = (p.met.iter().zip(&c.holds))
                    .filter(|(met, holds)| !**met && !**holds)
                    .count();
                refund = REFUND_SHARE * credit * cost * held as f64
                    + (1.0 - lack_share) * cost * neither as f64;
                base += refund;
            }
            // A file found by its text alone lacks, as a path would, the
            // words its text does not hold: else it outranks the file
            // named by the question that lacks one word fewer.
            None => {
                let held = c.holds.iter().filter(|&&h| h).count();
                base -=
                    cost * (lack_share * c.lacks().count() as f64 + (1.0 - credit) * held as f64);
            }
        }
    }
    let lexical = content
        .as_ref()
        .map_or(0.0, ContentScore::definition_points);
    Some(Scored {
        score: base + lexical,
        base,
        refund,
        content,
    })
}

pub(crate) struct Scored {
    pub(crate) score: f64,
    pub(crate) base: f64,
    pub(crate) refund: f64,
    pub(crate) content: Option<ContentScore>,
}

/// A symbol named like the query (in any identifier form) is the strongest
/// sign that this file is the one meant.
pub(crate) fn definition_signal(q: &Query, outline: &Outline) -> Option<(f64, String, bool)> {
    let describe = |s: &Symbol| {
        format!(
            "{} {} @ {}-{}",
            s.kind.as_str(),
            s.name,
            s.start_line,
            s.end_line
        )
    };
    // A Markdown heading is no definition: docs already rank by their names.
    // Nor is a module declared in one line (`mod rules_cache;`): its body
    // is the file of that name, which the path already finds (issue 45:
    // `src/search/mod.rs` ranked above `src/search/rules_cache.rs`).
    let code = |s: &&Symbol| {
        s.kind != SymbolKind::Section && !(s.kind == SymbolKind::Module && s.line_count() <= 1)
    };
    // Zoekt's order: an exact symbol beats any path evidence; a partial one
    // only breaks near-ties.
    let mut code_symbols = outline.symbols.iter().filter(code);
    // Of several definitions, a top-level one with a body is the thing
    // itself; a one-line method stub or a test's helper restates it.
    let substance = |s: &Symbol| {
        20.0 * f64::from(u8::from(s.depth == 0)) + 10.0 * f64::from(u8::from(s.line_count() > 1))
    };
    let named = code_symbols
        .clone()
        .filter_map(|s| {
            let how = tokens::names_query(&s.name, &q.tokens)
                .or_else(|| tokens::names_query(tokens::own_name(&s.name), &q.tokens))?;
            Some((how, s))
        })
        .min_by(|(a, x), (b, y)| a.cmp(b).then(substance(y).total_cmp(&substance(x))));
    match named {
        Some((NameMatch::Exact, s)) => {
            // A path earns up to 100 points a word, so a symbol spelling
            // every word earns more the more words it spells: else a file
            // named by two of three words and merely mentioning the symbol
            // outranks its definition (issue 45: `TypeAdapter.java` over
            // `GsonBuilder.java` for "register type adapter").
            let spelt = 50.0 * q.tokens.len().saturating_sub(1).min(3) as f64;
            return Some((
                250.0 + spelt + substance(s),
                format!("defines {}", describe(s)),
                true,
            ));
        }
        Some((how, s)) => {
            let how = if how == NameMatch::Reordered {
                "words reordered"
            } else {
                "abbreviated"
            };
            return Some((
                200.0 + substance(s),
                format!("defines {} ({how})", describe(s)),
                false,
            ));
        }
        None => {}
    }
    let s = code_symbols.find(|s| tokens::contains_run(&tokens::split(&s.name), &q.tokens))?;
    Some((
        15.0,
        format!("defines {} (name contains the query)", describe(s)),
        false,
    ))
}
