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
        let body: Vec<String> = toks.iter().map(|t| regex::escape(t)).collect();
        let regex = Regex::new(&format!("(?i){}", body.join("[_-]?"))).ok()?;
        Some(Subject {
            tokens: toks,
            regex,
        })
    }

    /// The regex that finds the subject in every identifier form (before
    /// the word-boundary check), for the index to narrow by.
    pub fn pattern(&self) -> &str {
        self.regex.as_str()
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
            out.push(Occurrence {
                line,
                start: m.start() - line_start,
                end: m.end() - line_start,
            });
            if out.len() >= max {
                break;
            }
        }
        out
    }
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// A token boundary between `a` and `b` (adjacent bytes).
fn boundary(a: u8, b: u8, after_b: Option<u8>) -> bool {
    if !is_word(a) || !is_word(b) {
        return true;
    }
    if a.is_ascii_digit() != b.is_ascii_digit() {
        return true;
    }
    b.is_ascii_uppercase()
        && (a.is_ascii_lowercase() || after_b.is_some_and(|c| c.is_ascii_lowercase()))
}

fn on_boundaries(buf: &[u8], start: usize, end: usize) -> bool {
    let starts = start == 0 || boundary(buf[start - 1], buf[start], buf.get(start + 1).copied());
    let ends = end >= buf.len() || boundary(buf[end - 1], buf[end], buf.get(end + 1).copied());
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

pub fn shape(line: &str, occ: &Occurrence) -> Shape {
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
    if go_method || method {
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
    if rest.starts_with('(') || rest.starts_with("!(") || rest.starts_with("::<") {
        return Shape::Call;
    }
    let assigned = ["+=", "-=", "|=", "&=", ":=", "||=", "??="]
        .iter()
        .any(|op| rest.starts_with(op))
        || (rest.starts_with('=') && !rest.starts_with("==") && !rest.starts_with("=>"));
    if assigned {
        return Shape::Assignment;
    }
    Shape::Mention
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
