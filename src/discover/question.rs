//! A trace query made ready for the probes: the subject's matcher, the
//! relation's words and the support terms split into tokens once, and the
//! kind and path filters. The pass, the per-file tracing and the region
//! classification all read it.

use super::dsl::{KindFilter, Relation, RelationTerm, TraceQuery};
use super::relate::Subject;
use super::role::Role;
use super::tokens;
use super::DiscoverError;

pub(crate) struct Question {
    pub query: TraceQuery,
    pub subject: Subject,
    /// The relation's words (a known relation's, or a custom one's tokens).
    pub relation_tokens: Vec<String>,
    pub support: Vec<Vec<String>>,
}

impl Question {
    pub fn new(query: TraceQuery) -> Result<Question, DiscoverError> {
        let subject = Subject::new(&query.subject)
            .ok_or_else(|| DiscoverError::NoWords(query.subject.clone()))?;
        let relation_tokens = match &query.relation {
            RelationTerm::Known(r) => r.words().iter().map(|w| w.to_string()).collect(),
            RelationTerm::Custom(c) => tokens::split(c),
        };
        let support = query
            .support
            .iter()
            .map(|s| tokens::split(s))
            .filter(|t| !t.is_empty())
            .collect();
        Ok(Question {
            query,
            subject,
            relation_tokens,
            support,
        })
    }

    /// The relation, when it is one of agentgrep's.
    pub fn known(&self) -> Option<Relation> {
        match self.query.relation {
            RelationTerm::Known(r) => Some(r),
            RelationTerm::Custom(_) => None,
        }
    }

    /// Whether a file (its shown path) passes the `kind:` and `path:` filters.
    pub fn in_scope(&self, rel: &str) -> bool {
        let role = Role::of(rel);
        let kind_ok = match self.query.kind {
            None => true,
            Some(KindFilter::Code) => !matches!(role, Role::Docs | Role::Test),
            Some(KindFilter::Docs) => role == Role::Docs,
            Some(KindFilter::Tests) => role == Role::Test,
        };
        let path_ok = self.query.path.as_ref().is_none_or(|p| {
            let p = p.trim_start_matches("./").trim_end_matches('/');
            rel == p || rel.starts_with(&format!("{p}/")) || rel.contains(p)
        });
        kind_ok && path_ok
    }
}
