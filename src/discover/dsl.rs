//! The trace query language, agentgrep's: `subject:X relation:R
//! [support:S]... [kind:code|docs|tests] [path:P]`, `key=value` also
//! accepted. Every error says what is wrong and shows a valid query.

use super::DiscoverError;

const EXAMPLE: &str =
    "e.g. subject:auth_status relation:rendered support:config kind:code path:src";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    Defined,
    CalledFrom,
    TriggeredFrom,
    Rendered,
    Populated,
    ComesFrom,
    Handled,
    Implementation,
}

impl Relation {
    pub fn name(self) -> &'static str {
        match self {
            Relation::Defined => "defined",
            Relation::CalledFrom => "called_from",
            Relation::TriggeredFrom => "triggered_from",
            Relation::Rendered => "rendered",
            Relation::Populated => "populated",
            Relation::ComesFrom => "comes_from",
            Relation::Handled => "handled",
            Relation::Implementation => "implementation",
        }
    }

    /// agentgrep's names and aliases (any identifier form).
    fn parse(value: &str) -> Option<Relation> {
        let key = super::tokens::split(value).join("_");
        Some(match key.as_str() {
            "defined" | "definition" | "define" | "defines" | "def" => Relation::Defined,
            "called_from" | "callers" | "caller" | "calls" | "call_sites" | "called" => {
                Relation::CalledFrom
            }
            "triggered_from" | "triggered" | "trigger" | "triggers" => Relation::TriggeredFrom,
            "rendered" | "render" | "renders" | "drawn" | "draw" => Relation::Rendered,
            "populated" | "populate" | "set" | "assigned" | "assign" => Relation::Populated,
            "comes_from" | "source" | "origin" | "from" => Relation::ComesFrom,
            "handled" | "handler" | "handles" | "handle" => Relation::Handled,
            "implementation" | "implemented" | "implements" | "impl" => Relation::Implementation,
            _ => return None,
        })
    }

    /// Words that, as whole tokens of an enclosing function's or class's
    /// name, say the subject takes part in this relation there.
    pub fn words(self) -> &'static [&'static str] {
        match self {
            Relation::Defined => &[],
            Relation::CalledFrom => &[],
            Relation::TriggeredFrom => &[
                "trigger", "dispatch", "schedule", "emit", "fire", "notify", "queue", "timer",
                "signal",
            ],
            Relation::Rendered => &[
                "render", "draw", "paint", "view", "widget", "ui", "display", "show", "template",
                "print", "format",
            ],
            Relation::Populated => &[
                "set", "assign", "insert", "push", "build", "init", "fill", "populate", "update",
                "store",
            ],
            Relation::ComesFrom => &[
                "source", "load", "parse", "read", "fetch", "get", "config", "resolve", "decode",
                "from",
            ],
            Relation::Handled => &[
                "handle", "handler", "on", "event", "dispatch", "listener", "callback", "process",
            ],
            Relation::Implementation => &["impl", "register", "wire", "install", "setup"],
        }
    }
}

/// A relation agentgrep knows, or any other word, used as its own term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelationTerm {
    Known(Relation),
    Custom(String),
}

impl RelationTerm {
    pub fn name(&self) -> &str {
        match self {
            RelationTerm::Known(r) => r.name(),
            RelationTerm::Custom(s) => s,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KindFilter {
    Code,
    Docs,
    Tests,
}

impl KindFilter {
    pub fn name(self) -> &'static str {
        match self {
            KindFilter::Code => "code",
            KindFilter::Docs => "docs",
            KindFilter::Tests => "tests",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceQuery {
    pub subject: String,
    pub relation: RelationTerm,
    pub support: Vec<String>,
    pub kind: Option<KindFilter>,
    pub path: Option<String>,
}

fn error(msg: impl std::fmt::Display) -> DiscoverError {
    DiscoverError::Dsl(format!("{msg} ({EXAMPLE})"))
}

impl TraceQuery {
    pub fn parse(text: &str) -> Result<TraceQuery, DiscoverError> {
        if text.trim().is_empty() {
            return Err(error("Trace query must not be empty"));
        }
        let (mut subject, mut relation, mut kind, mut path) = (None, None, None, None);
        let mut support = Vec::new();
        for part in text.split_whitespace() {
            let Some(at) = part.find([':', '=']) else {
                return Err(error(format_args!("Expected key:value, got {part:?}")));
            };
            let (key, value) = (&part[..at], &part[at + 1..]);
            if value.is_empty() {
                return Err(error(format_args!("Empty value for {key}")));
            }
            let once = |slot: &mut Option<String>| {
                if slot.is_some() {
                    return Err(error(format_args!("Duplicate key: {key}")));
                }
                *slot = Some(value.to_string());
                Ok(())
            };
            match key {
                "subject" => once(&mut subject)?,
                "relation" => once(&mut relation)?,
                "kind" => once(&mut kind)?,
                "path" | "path_hint" => once(&mut path)?,
                "support" => support.push(value.to_string()),
                _ => {
                    return Err(error(format_args!(
                        "Unknown key: {key} (keys: subject, relation, support, kind, path)"
                    )))
                }
            }
        }
        let subject = subject.ok_or_else(|| error("Missing subject:"))?;
        if super::tokens::split(&subject).is_empty() {
            return Err(error(format_args!(
                "Subject has no letters or digits: {subject:?}"
            )));
        }
        let relation = relation.ok_or_else(|| error("Missing relation:"))?;
        let relation = match Relation::parse(&relation) {
            Some(r) => RelationTerm::Known(r),
            None => RelationTerm::Custom(relation),
        };
        let kind = match kind.as_deref() {
            None => None,
            Some("code") => Some(KindFilter::Code),
            Some("docs" | "doc") => Some(KindFilter::Docs),
            Some("tests" | "test") => Some(KindFilter::Tests),
            Some(other) => {
                return Err(error(format_args!(
                    "Unknown kind: {other} (code, docs or tests)"
                )))
            }
        };
        Ok(TraceQuery {
            subject,
            relation,
            support,
            kind,
            path,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(q: &str) -> String {
        TraceQuery::parse(q).unwrap_err().to_string()
    }

    #[test]
    fn a_full_query_parses_with_either_separator_and_aliases() {
        let q = TraceQuery::parse(
            "subject=auth_status relation:drawn support:config support:ui kind:code path_hint:src",
        )
        .unwrap();
        assert_eq!(q.subject, "auth_status");
        assert_eq!(q.relation, RelationTerm::Known(Relation::Rendered));
        assert_eq!(q.support, ["config", "ui"]);
        assert_eq!(q.kind, Some(KindFilter::Code));
        assert_eq!(q.path.as_deref(), Some("src"));
        let custom = TraceQuery::parse("subject:x relation:serialized").unwrap();
        assert_eq!(custom.relation, RelationTerm::Custom("serialized".into()));
    }

    #[test]
    fn each_error_names_the_problem_and_shows_a_valid_query() {
        for (q, want) in [
            ("relation:defined", "Missing subject:"),
            ("subject:x", "Missing relation:"),
            (
                "subject:x relation:defined colour:red",
                "Unknown key: colour",
            ),
            (
                "subject:x subject:y relation:defined",
                "Duplicate key: subject",
            ),
            ("subject: relation:defined", "Empty value for subject"),
            (
                "subject:x relation:defined kind:video",
                "Unknown kind: video",
            ),
            ("auth_status", "Expected key:value"),
            ("   ", "must not be empty"),
            ("subject:-- relation:defined", "no letters or digits"),
        ] {
            let e = err(q);
            assert!(e.contains(want), "{q}: {e}");
            assert!(
                e.contains("e.g. subject:auth_status relation:rendered"),
                "{e}"
            );
        }
    }
}
