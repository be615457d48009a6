//! The regex matcher and the searcher a content search runs with, built
//! from its options as ripgrep builds them (`grep-regex`, `grep-searcher`),
//! and a pattern's parse errors worded against the user's own text.

use super::grep_options::{GrepMode, GrepOptions};
use super::SearchError;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, MmapChoice, Searcher, SearcherBuilder};

pub fn build_matcher(opts: &GrepOptions) -> Result<RegexMatcher, SearchError> {
    if opts.pattern.is_empty() {
        return Err(SearchError::EmptyPattern);
    }
    let mut b = RegexMatcherBuilder::new();
    b.case_insensitive(opts.ignore_case)
        .fixed_strings(opts.literal)
        .multi_line(true);
    if !opts.multiline {
        b.line_terminator(Some(b'\n'));
    }
    b.build(&opts.pattern)
        .map_err(|e| SearchError::InvalidPattern(pattern_error(opts, e.to_string())))
}

/// The parse error as the user should read it: grep-regex reports it against
/// the `(?:...)` it wraps the pattern in, so the caret would sit under text
/// the user never typed. Parsing the pattern itself gives the same error
/// against their own text (the wrapper's message stays for errors that only
/// the compiled whole has, such as size limits). A `\|` or `\(` is a basic
/// regex habit (grep, sed, vim) that means a literal character here.
fn pattern_error(opts: &GrepOptions, wrapped: String) -> String {
    let own = pattern_parser(opts.ignore_case)
        .parse(&opts.pattern)
        .err()
        .map_or(wrapped, |e| e.to_string());
    if has_basic_regex_escape(&opts.pattern) {
        format!("{own}\n{BASIC_REGEX_HINT}")
    } else {
        own
    }
}

/// A parser that reads a pattern as the matcher built by [`build_matcher`]
/// does (grep-regex's settings for these options), for whoever must see
/// the same regex: the user's parse errors, the index's planner.
pub fn pattern_parser(ignore_case: bool) -> regex_syntax::Parser {
    regex_syntax::ParserBuilder::new()
        .case_insensitive(ignore_case)
        .multi_line(true)
        .utf8(false)
        .build()
}

/// Said under a parse error of a pattern written with basic-regex escapes.
pub const BASIC_REGEX_HINT: &str =
    "hint: Rust regex uses | and ( unescaped; \\| and \\( match the characters themselves";

fn has_basic_regex_escape(pattern: &str) -> bool {
    ["\\|", "\\(", "\\)"].iter().any(|e| pattern.contains(e))
}

/// The searcher of one search thread. Binary detection is rg's: a file
/// found by the walk quits at its first NUL byte (matches already seen are
/// kept); a file the search was given by name (`named`) converts, so its
/// search goes on past the NUL, and [`super::file_search`] stops at the
/// first match there, as rg's printer does.
pub(super) fn build_searcher(opts: &GrepOptions, named: bool) -> Searcher {
    let content = opts.mode == GrepMode::Content;
    SearcherBuilder::new()
        .line_number(opts.mode != GrepMode::Files)
        .before_context(if content { opts.before } else { 0 })
        .after_context(if content { opts.after } else { 0 })
        .multi_line(opts.multiline)
        // rg's maxCount in multi-line mode: a match counts once however
        // many lines it spans, and matches that share a line are reported
        // together up to the limit. Line by line, the sink counts.
        .max_matches(opts.limit.filter(|_| opts.multiline))
        .memory_map(MmapChoice::never())
        .binary_detection(if named {
            BinaryDetection::convert(0)
        } else {
            BinaryDetection::quit(0)
        })
        .build()
}
