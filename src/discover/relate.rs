//! How the subject occurs: its matcher (every identifier form, on token
//! boundaries) and the lexical shape of one occurrence (a definition, a call,
//! an assignment). Structure, where it exists, overrides the shapes: see
//! `trace.rs`.

use super::tokens;
use regex::bytes::Regex;

/// Finds the subject in every identifier form: `auth_status`, `AuthStatus`,
/// `authStatus`, `AUTH-STATUS`, but only where the match starts and ends on
/// token boundaries, so `set` is not found in `reset` nor `ui` in `build`.
pub struct Subject {
    pub tokens: Vec<String>,
    regex: Regex,
    /// What the index narrows the files by (see [`Subject::narrowing`]).
    narrowing: String,
    /// Underscores the subject is written with before and after its
    /// letters (`_build_redirect_request`: 1, 0): an occurrence takes them
    /// in, so that `__handle_mm_fault` is not the whole identifier
    /// `handle_mm_fault` but `_build_redirect_request` is.
    lead: usize,
    trail: usize,
    /// The longest match of `regex`, in bytes (`None`: unbounded).
    longest: Option<usize>,
}

/// One occurrence: 1-based line, and byte offsets within that line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    pub line: u32,
    pub start: usize,
    pub end: usize,
}

impl Subject {
    pub fn new(subject: &str) -> Option<Subject> {
        let toks = tokens::split(subject);
        if toks.is_empty() {
            return None;
        }
        // An ASCII subject folds ASCII case only: Unicode folding would
        // also take `ſ` for `s` and the Kelvin sign for `k`, which the
        // index's ASCII-folded postings cannot narrow by.
        let ascii = toks.iter().all(|t| t.is_ascii());
        let flags = if ascii { "(?i-u)" } else { "(?i)" };
        let joins = written_joins(subject, &toks);
        let mut pattern = String::from(flags);
        for (i, t) in toks.iter().enumerate() {
            if i > 0 {
                match &joins[i - 1] {
                    Some(sep) => pattern.push_str(&regex::escape(sep)),
                    None => pattern.push_str("[_-]?"),
                }
            }
            pattern.push_str(&regex::escape(t));
        }
        let regex = Regex::new(&pattern).ok()?;
        let core = subject.trim();
        let longest = (regex_syntax::ParserBuilder::new().utf8(false).build())
            .parse(regex.as_str())
            .ok()
            .and_then(|hir| hir.properties().maximum_len());
        Some(Subject {
            longest,
            narrowing: match ascii {
                true => narrowing(&toks, &joins),
                false => regex.as_str().to_string(),
            },
            tokens: toks,
            regex,
            lead: core.len() - core.trim_start_matches('_').len(),
            trail: core.len() - core.trim_end_matches('_').len(),
        })
    }

    /// The regex that finds the subject in every identifier form (before
    /// the word-boundary check), for the index to narrow by.
    pub fn pattern(&self) -> &str {
        self.regex.as_str()
    }

    /// A pattern the index's planner makes a cheap AND of: every token,
    /// and at each join one of the three ways it is written. Only planned,
    /// never matched. [`Subject::pattern`] itself plans to an OR over its
    /// separators whose every trigram counts against the postings' decode
    /// budget: past it (`copy_process`, `tcp_rcv_established` on the
    /// Linux tree) the index allowed every file, and a trace with the
    /// index ready read all 86,000 of them.
    pub fn narrowing(&self) -> &str {
        &self.narrowing
    }

    /// Whether `bytes` may hold an occurrence: the regex matches there,
    /// token boundaries aside (every occurrence [`Subject::find`] gives
    /// is such a match).
    pub fn may_occur(&self, bytes: &[u8]) -> bool {
        self.regex.is_match(bytes)
    }

    /// The most bytes a match of the subject's regex spans, when bounded:
    /// windows over a file that overlap by one less find every match.
    pub fn longest_match(&self) -> Option<usize> {
        self.longest
    }

    /// Occurrences in a whole file, in order; at most `max`.
    pub fn find(&self, buf: &[u8], max: usize) -> Vec<Occurrence> {
        let mut out = Vec::new();
        let (mut line, mut line_start, mut scanned) = (1u32, 0usize, 0usize);
        for m in self.regex.find_iter(buf) {
            if !on_boundaries(buf, m.start(), m.end()) {
                continue;
            }
            for nl in memchr::memchr_iter(b'\n', &buf[scanned..m.start()]) {
                line += 1;
                line_start = scanned + nl + 1;
            }
            scanned = m.start();
            let underscores = |r: &[u8]| r.iter().all(|&b| b == b'_');
            let start = match m.start().checked_sub(self.lead) {
                Some(s) if s >= line_start && underscores(&buf[s..m.start()]) => s,
                _ => m.start(),
            };
            let end = match buf.get(m.end()..m.end() + self.trail) {
                Some(r) if underscores(r) => m.end() + self.trail,
                _ => m.end(),
            };
            out.push(Occurrence {
                line,
                start: start - line_start,
                end: end - line_start,
            });
            if out.len() >= max {
                break;
            }
        }
        out
    }
}

/// `(?s)copy.*process.*(?:y_p|y-p|ypr)` for `copy` `process` (ASCII
/// tokens): a text holding the subject in any form the subject's regex
/// finds holds each token and, where two meet, the letters around the
/// separator, an underscore, a dash or none (ASCII case aside, which the
/// postings fold).
fn narrowing(tokens: &[String], written: &[Option<String>]) -> String {
    let mut parts: Vec<String> = tokens.iter().map(|t| regex::escape(t)).collect();
    for (pair, sep) in tokens.windows(2).zip(written) {
        let (a, b) = (pair[0].as_bytes(), pair[1].as_bytes());
        let (last, first) = (a[a.len() - 1] as char, b[0] as char);
        if let Some(sep) = sep {
            parts.push(regex::escape(&format!("{last}{sep}{first}")));
            continue;
        }
        let mut joins = vec![format!("{last}_{first}"), format!("{last}-{first}")];
        if b.len() >= 2 {
            joins.push(format!("{last}{first}{}", b[1] as char));
        } else if a.len() >= 2 {
            joins.push(format!("{}{last}{first}", a[a.len() - 2] as char));
        } else {
            continue; // `a` `b`: no three letters to ask for
        }
        let joins: Vec<String> = joins.iter().map(|j| regex::escape(j)).collect();
        parts.push(format!("(?:{})", joins.join("|")));
    }
    format!("(?s){}", parts.join(".*"))
}

/// For each join of the subject's tokens, the separator it is written
/// with when that is a run of two or more underscores or dashes
/// (`uv__io_poll`: `__`, then none): such a join is matched as written.
/// `[_-]?` alone never matched `uv__io_poll` in any file, and `trace` found
/// no file mentioning it (libuv's `uv__` names, libgit2's `git__`); and
/// `uv_io_poll` is another identifier, as `__handle_mm_fault` is another
/// than `handle_mm_fault`. `None` everywhere for a subject whose tokens
/// are not found in order in its text as ASCII.
fn written_joins(subject: &str, tokens: &[String]) -> Vec<Option<String>> {
    let none = vec![None; tokens.len().saturating_sub(1)];
    let core = subject.trim().trim_matches('_');
    if !core.is_ascii() {
        return none;
    }
    let lower = core.to_ascii_lowercase();
    let mut joins = Vec::new();
    let mut at = 0;
    for (i, t) in tokens.iter().enumerate() {
        let Some(found) = lower[at..].find(t.as_str()) else {
            return none;
        };
        if i > 0 {
            let sep = &core[at..at + found];
            let doubled = sep.len() >= 2 && sep.bytes().all(|b| b == b'_' || b == b'-');
            joins.push(doubled.then(|| sep.to_string()));
        }
        at += found + t.len();
    }
    joins
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// A token boundary between the bytes at `i - 1` and `i` of `buf`.
fn boundary(buf: &[u8], i: usize) -> bool {
    let (a, b) = (buf[i - 1], buf[i]);
    let at = |j: usize| buf.get(j).filter(|c| c.is_ascii()).map(|&c| c as char);
    !is_word(a) || !is_word(b) || tokens::starts_token(a as char, b as char, at(i + 1), at(i + 2))
}

fn on_boundaries(buf: &[u8], start: usize, end: usize) -> bool {
    let starts = start == 0 || boundary(buf, start);
    let ends = end >= buf.len() || boundary(buf, end);
    starts && ends
}

/// The lexical shape of an occurrence within its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shape {
    Mention,
    Assignment,
    Call,
    Definition,
}

const DEFINERS: [&str; 17] = [
    "fn",
    "def",
    "function",
    "class",
    "struct",
    "enum",
    "trait",
    "interface",
    "type",
    "func",
    "#define",
    "impl",
    "const",
    "let",
    "var",
    "module",
    "mod",
];

/// Words that may stand before a method's name in its definition.
const MODIFIERS: [&str; 10] = [
    "async",
    "static",
    "public",
    "private",
    "protected",
    "get",
    "set",
    "override",
    "export",
    "default",
];

/// Whether the occurrence is a whole identifier, not a part of a longer
/// one (`__handle_mm_fault`, `addFoo`, `get_auth_status` for the subjects
/// `handle_mm_fault`, `Foo`, `auth_status`).
pub fn whole_identifier(line: &str, occ: &Occurrence) -> bool {
    let ident = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
    let bytes = line.as_bytes();
    !ident(occ.start.checked_sub(1).and_then(|i| bytes.get(i))) && !ident(bytes.get(occ.end))
}

/// Whether the occurrence is spelt with the subject's own underscores
/// around it: `Style.parse(` is no use of `_parse`, a private function of
/// another name (issue 45: rich's `_parse` had its best answer in a file
/// that only calls `Style.parse`). [`Subject::find`] keeps such
/// occurrences; a call or an assignment of the subject must not.
pub fn spelt_as_subject(subject: &str, line: &str, occ: &Occurrence) -> bool {
    let under = |s: &str| {
        (
            s.len() - s.trim_start_matches('_').len(),
            s.len() - s.trim_end_matches('_').len(),
        )
    };
    line.get(occ.start..occ.end)
        .is_some_and(|at| under(at) == under(subject.trim()))
}

/// A C variable defined at file scope with a value: `static const struct
/// Curl_cftype Curl_cft_ssl = {`, `int debug = 0;` (the occurrence is the
/// variable's name: a type and qualifiers before it, `=` after).
pub fn c_variable_definition(line: &str, occ: &Occurrence) -> bool {
    let before = line.get(..occ.start).unwrap_or("");
    let rest = line.get(occ.end..).unwrap_or("").trim_start();
    // The cheap tests first, and the words before read lazily: a minified
    // line of 400 KB was split into words once per occurrence on it.
    let mut words = before.split_whitespace().peekable();
    !line.starts_with([' ', '\t'])
        && rest.starts_with('=')
        && !rest.starts_with("==")
        && !rest.starts_with("=>")
        && words
            .peek()
            .is_some_and(|w| !matches!(*w, "extern" | "return" | "typedef" | "#define"))
        && words.all(|w| {
            w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'*')
        })
}

/// The type of such a variable: `struct Curl_ssl` in `const struct
/// Curl_ssl Curl_ssl_openssl = {` (an implementation of that interface
/// written as a struct of functions).
pub fn c_initialised_type(line: &str, occ: &Occurrence) -> bool {
    let before = line.get(..occ.start).unwrap_or("").trim_end();
    let rest = line.get(occ.end..).unwrap_or("");
    let Some(name_len) = rest.strip_prefix(' ').map(|r| {
        r.bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count()
    }) else {
        return false;
    };
    let after_name = rest[1 + name_len..].trim_start();
    !line.starts_with([' ', '\t'])
        && name_len > 0
        && before.split_whitespace().next_back() == Some("struct")
        && after_name.starts_with("= {")
}

pub fn shape(line: &str, occ: &Occurrence) -> Shape {
    // Part of a longer identifier: neither defined nor called here.
    if !whole_identifier(line, occ) {
        return Shape::Mention;
    }
    if c_variable_definition(line, occ) {
        return Shape::Definition;
    }
    let before = line.get(..occ.start).unwrap_or("").trim_end();
    let after = line.get(occ.end..).unwrap_or("");
    let last_word = before
        .rsplit(|c: char| c.is_whitespace() || c == '(')
        .next()
        .unwrap_or("");
    if DEFINERS.contains(&last_word) {
        return Shape::Definition;
    }
    let rest = after.trim_start();
    // A Go method: `func (r *Router) Handle(`, its receiver between.
    let go_method = before.starts_with("func (") && before.ends_with(')') && rest.starts_with('(');
    // A JS/TS/Java class method: `  async get(url) {`, only modifiers before.
    let method = rest.starts_with('(')
        && line.trim_end().ends_with('{')
        && before.split_whitespace().all(|w| MODIFIERS.contains(&w));
    // A Java or C# method: `public GsonBuilder registerTypeAdapter(Type
    // type, Object adapter) {`, an access modifier first, then the return
    // type, then the name.
    let mut words = before.split_whitespace();
    let typed_method = rest.starts_with('(')
        && matches!(
            words.next(),
            Some("public" | "private" | "protected" | "internal")
        )
        && words.next().is_some()
        && !line.trim_end().ends_with(';');
    if go_method || method || typed_method {
        return Shape::Definition;
    }
    // A C/Go-style definition: `type name(` at the start of a line, not a
    // statement ending in `;`.
    let c_style = rest.starts_with('(')
        && !line.starts_with([' ', '\t'])
        && before.ends_with(|c: char| c.is_alphanumeric() || c == '*' || c == '_')
        && !line.trim_end().ends_with(';');
    if c_style {
        return Shape::Definition;
    }
    // `fn.call(this, x)` and `fn.apply(this, args)` call `fn` (JavaScript).
    let called_by_method = [".call(", ".apply("].iter().any(|m| rest.starts_with(m));
    if rest.starts_with('(')
        || rest.starts_with("!(")
        || rest.starts_with("::<")
        || called_by_method
    {
        return Shape::Call;
    }
    let assigned = ["+=", "-=", "|=", "&=", ":=", "||=", "??="]
        .iter()
        .any(|op| rest.starts_with(op))
        || (rest.starts_with('=') && !rest.starts_with("==") && !rest.starts_with("=>"));
    // A keyed field of a literal, one to a line (`Handler: h,` in Go, a
    // `.read = foo_read,` designated initialiser is the `=` case above).
    let keyed = before.is_empty()
        && rest.starts_with(':')
        && !rest.starts_with("::")
        && line.trim_end().ends_with(',');
    if assigned || keyed {
        return Shape::Assignment;
    }
    Shape::Mention
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the planned narrowing holds of `text`, as the postings
    /// (ASCII-folded trigrams) would say.
    fn narrowing_allows(subject: &Subject, text: &str) -> bool {
        use crate::index::planner::{plan, trigram, Query};
        fn holds(q: &Query, text: &[u8]) -> bool {
            match q {
                Query::All => true,
                Query::Tri(k) => text.windows(3).any(|w| trigram(w[0], w[1], w[2]) == *k),
                Query::And(xs) => xs.iter().all(|x| holds(x, text)),
                Query::Or(xs) => xs.iter().any(|x| holds(x, text)),
            }
        }
        let planned = plan(subject.narrowing(), false, false);
        assert!(!matches!(planned, Query::All), "{planned:?}");
        holds(&planned, text.as_bytes())
    }

    #[test]
    fn the_index_narrows_by_every_form_the_subject_is_found_in() {
        for (subject, forms) in [
            (
                "copy_process",
                &[
                    "copy_process(",
                    "CopyProcess",
                    "COPY-PROCESS",
                    "copyprocess",
                ][..],
            ),
            (
                "tcp_rcv_established",
                &["TcpRcvEstablished", "tcp_rcv_established"],
            ),
            ("ext4_fill_super", &["ext4_fill_super", "Ext4FillSuper"]),
            ("HTTPServer", &["HttpServer", "http_server"]),
        ] {
            let s = Subject::new(subject).unwrap();
            for form in forms {
                let text = format!("x = {form};\n");
                assert!(
                    !s.find(text.as_bytes(), 10).is_empty(),
                    "{subject} in {form}"
                );
                assert!(narrowing_allows(&s, &text), "{subject}: {form}");
            }
            // The words apart, or joined otherwise: ruled out.
            let apart = format!("{}\n", s.tokens.join(" zz "));
            assert!(!narrowing_allows(&s, &apart), "{subject}: {apart}");
        }
        // Unicode case folding is not asked for an ASCII subject: `ſ` is
        // no `s` to it, as to the index.
        let s = Subject::new("process").unwrap();
        assert!(s.find("proceſſ\n".as_bytes(), 10).is_empty());
    }

    /// libuv's `uv__io_poll` and libgit2's `git__free`: a doubled
    /// separator is found as written (`[_-]?` alone found no file), and a
    /// single one there is another identifier.
    #[test]
    fn a_subject_written_with_a_doubled_separator_is_found_as_written() {
        for (subject, found, other) in [
            (
                "uv__io_poll",
                "  uv__io_poll(loop, timeout);",
                "uv_io_poll(loop);",
            ),
            ("git__free", "\tgit__free(buf);", "git_free(buf);"),
            ("a--b", "x = a--b;", "x = ab;"),
        ] {
            let s = Subject::new(subject).unwrap();
            let text = format!("{found}\n");
            assert_eq!(s.find(text.as_bytes(), 10).len(), 1, "{subject} in {found}");
            assert!(
                narrowing_allows(&s, &text),
                "{subject}: narrowed by {}",
                s.narrowing()
            );
            let text = format!("{other}\n");
            assert!(
                s.find(text.as_bytes(), 10).is_empty(),
                "{subject} in {other}"
            );
        }
    }

    fn lines_of(subject: &str, text: &str) -> Vec<u32> {
        Subject::new(subject)
            .unwrap()
            .find(text.as_bytes(), 100)
            .iter()
            .map(|o| o.line)
            .collect()
    }

    #[test]
    fn every_identifier_form_is_found_on_token_boundaries_only() {
        let text = "auth_status\nAuthStatus\nauthStatus()\nAUTH_STATUS\nauth-status\noauthStatus\nauthStatuses\nget_auth_status\n";
        assert_eq!(lines_of("auth_status", text), [1, 2, 3, 4, 5, 8]);
        assert_eq!(lines_of("set", "reset\nset\nsetValue\nonset\n"), [2, 3]);
        assert_eq!(lines_of("ui", "build\nui\nrender_ui\n"), [2, 3]);
    }

    #[test]
    fn occurrences_carry_their_position_in_the_line() {
        let occ = Subject::new("x_y")
            .unwrap()
            .find(b"a\n  let q = xY(1);\n", 10);
        assert_eq!(
            occ,
            [Occurrence {
                line: 2,
                start: 10,
                end: 12
            }]
        );
    }

    #[test]
    fn shapes_tell_definitions_calls_and_assignments_apart() {
        let s = Subject::new("auth_status").unwrap();
        let shape_of = |line: &str| shape(line, &s.find(line.as_bytes(), 1)[0]);
        assert_eq!(
            shape_of("pub fn auth_status() -> bool {"),
            Shape::Definition
        );
        assert_eq!(shape_of("    let ok = auth_status();"), Shape::Call);
        assert_eq!(shape_of("    self.auth_status = true;"), Shape::Assignment);
        assert_eq!(shape_of("    if auth_status == 1 {"), Shape::Mention);
        assert_eq!(shape_of("int auth_status(void)"), Shape::Definition);
        assert_eq!(shape_of("x = auth_status(1);"), Shape::Call);
        assert_eq!(
            shape_of("func (c *Client) AuthStatus(ctx context.Context) bool {"),
            Shape::Definition,
            "a Go method is no call"
        );
        assert_eq!(shape_of("  async authStatus(ctx) {"), Shape::Definition);
        assert_eq!(shape_of("  if (x) authStatus(ctx) {"), Shape::Call);
        assert_eq!(
            shape_of("\tAuthStatus: status,"),
            Shape::Assignment,
            "a Go keyed field"
        );
        assert_eq!(
            shape_of("  public static Status authStatus(Session s) {"),
            Shape::Definition,
            "a Java method"
        );
        assert_eq!(
            shape_of("static struct ops auth_status = {"),
            Shape::Definition,
            "a C variable with its initialiser"
        );
        assert_eq!(shape_of("extern struct ops auth_status;"), Shape::Mention);
    }

    /// Issue 45: `__handle_mm_fault(` inside `handle_mm_fault` was shown as
    /// a call of the subject, and `addFoo(` as a definition of `Foo`.
    #[test]
    fn a_longer_identifier_holding_the_subject_is_only_a_mention() {
        for (subject, line) in [
            (
                "handle_mm_fault",
                "\tret = __handle_mm_fault(vma, address, flags);",
            ),
            ("Foo", "addFoo(bar) {"),
            ("auth_status", "x = get_auth_status();"),
        ] {
            let s = Subject::new(subject).unwrap();
            let occ = &s.find(line.as_bytes(), 1)[0];
            assert_eq!(shape(line, occ), Shape::Mention, "{line}");
        }
        let s = Subject::new("_build_redirect_request").unwrap();
        let line = "        request = self._build_redirect_request(request, response)";
        let occ = &s.find(line.as_bytes(), 1)[0];
        assert_eq!(
            shape(line, occ),
            Shape::Call,
            "the subject's own underscore"
        );
        let s = Subject::new("Curl_ssl").unwrap();
        let line = "const struct Curl_ssl Curl_ssl_openssl = {";
        assert!(c_initialised_type(line, &s.find(line.as_bytes(), 1)[0]));
    }
}
