//! The errors of the search and structure rooms, and the stable code each
//! one reaches JS with, so callers tell errors apart without parsing text.

/// A fixed set: JS matches on these strings (`err.code`), so they never
/// change once published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// Regex parse error, empty pattern, bad glob.
    InvalidPattern,
    /// An option value that is not one of its choices or not valid.
    InvalidOption,
    PathNotFound,
    /// The path exists but is the wrong kind: a directory, FIFO, socket or
    /// device where a file is wanted (or a file where a directory is).
    NotAFile,
    /// Any other I/O failure.
    Io,
    /// Aborted by the caller.
    Cancelled,
    /// A caught panic or another failure that is a bug of ours.
    Internal,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 7] = [
        ErrorCode::InvalidPattern,
        ErrorCode::InvalidOption,
        ErrorCode::PathNotFound,
        ErrorCode::NotAFile,
        ErrorCode::Io,
        ErrorCode::Cancelled,
        ErrorCode::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidPattern => "INVALID_PATTERN",
            ErrorCode::InvalidOption => "INVALID_OPTION",
            ErrorCode::PathNotFound => "PATH_NOT_FOUND",
            ErrorCode::NotAFile => "NOT_A_FILE",
            ErrorCode::Io => "IO",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::Internal => "INTERNAL",
        }
    }
}

impl AsRef<str> for ErrorCode {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// Errors a caller can act on. Their `Display` text is what reaches the user,
/// so each one names the offending input.
#[derive(Debug)]
pub enum SearchError {
    EmptyPattern,
    InvalidPattern(String),
    PathNotFound(String),
    NotSearchable(String),
    InvalidGlob(String),
    UnknownType(String),
}

impl SearchError {
    pub fn code(&self) -> ErrorCode {
        match self {
            SearchError::EmptyPattern
            | SearchError::InvalidPattern(_)
            | SearchError::InvalidGlob(_) => ErrorCode::InvalidPattern,
            SearchError::PathNotFound(_) => ErrorCode::PathNotFound,
            SearchError::NotSearchable(_) => ErrorCode::NotAFile,
            SearchError::UnknownType(_) => ErrorCode::InvalidOption,
        }
    }
}

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SearchError::EmptyPattern => write!(f, "Pattern must not be empty"),
            SearchError::InvalidPattern(msg) => write!(f, "Invalid pattern: {msg}"),
            SearchError::PathNotFound(p) => write!(f, "Path not found: {p}"),
            SearchError::NotSearchable(p) => {
                write!(
                    f,
                    "Not a regular file or directory (FIFO, socket or device): {p}"
                )
            }
            SearchError::InvalidGlob(msg) => write!(f, "Invalid glob: {msg}"),
            SearchError::UnknownType(t) => write!(
                f,
                "Unknown file type: {t} (use ripgrep's type names, e.g. rust, ts, py, c)"
            ),
        }
    }
}

impl std::error::Error for SearchError {}

/// An error as it crosses into JS: its code and its message, unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodedError {
    pub code: ErrorCode,
    pub message: String,
}

impl CodedError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        CodedError {
            code,
            message: message.into(),
        }
    }
}

impl From<SearchError> for CodedError {
    fn from(e: SearchError) -> Self {
        CodedError::new(e.code(), e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_upper_snake_strings() {
        let names: std::collections::BTreeSet<&str> =
            ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), ErrorCode::ALL.len());
        assert!(names
            .iter()
            .all(|n| n.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')));
    }

    #[test]
    fn each_search_error_has_the_code_js_matches_on() {
        let code = |e: SearchError| e.code().as_str();
        assert_eq!(code(SearchError::EmptyPattern), "INVALID_PATTERN");
        assert_eq!(
            code(SearchError::InvalidGlob("a[".into())),
            "INVALID_PATTERN"
        );
        assert_eq!(
            code(SearchError::PathNotFound("x".into())),
            "PATH_NOT_FOUND"
        );
        assert_eq!(code(SearchError::NotSearchable("p".into())), "NOT_A_FILE");
        assert_eq!(code(SearchError::UnknownType("t".into())), "INVALID_OPTION");
    }
}
