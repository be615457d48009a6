//! The errors of the search and structure rooms, each with its stable code
//! from the crate's one list (`crate::error_code`).

pub use crate::error_code::{CodedError, ErrorCode};

/// Errors a caller can act on. Their `Display` text is what reaches the user,
/// so each one names the offending input.
#[derive(Debug)]
pub enum SearchError {
    EmptyPattern,
    InvalidPattern(String),
    PathNotFound(String),
    /// A path named by the caller that is a symlink whose target does not
    /// resolve: the link exists, so "not found" would be wrong.
    BrokenSymlink {
        path: String,
        target: String,
    },
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
            SearchError::PathNotFound(_) | SearchError::BrokenSymlink { .. } => {
                ErrorCode::PathNotFound
            }
            SearchError::NotSearchable(_) => ErrorCode::NotAFile,
            SearchError::UnknownType(_) => ErrorCode::InvalidOption,
        }
    }
}

impl SearchError {
    /// One of each variant, for the glue's `errorSamples()` (`src/napi/error.rs`).
    pub fn samples() -> Vec<SearchError> {
        vec![
            SearchError::EmptyPattern,
            SearchError::InvalidPattern("regex parse error: unclosed group".into()),
            SearchError::PathNotFound("/x/nope".into()),
            SearchError::BrokenSymlink {
                path: "/x/link".into(),
                target: "nowhere".into(),
            },
            SearchError::NotSearchable("/x/fifo".into()),
            SearchError::InvalidGlob("error parsing glob '{'".into()),
            SearchError::UnknownType("nosuchlang".into()),
        ]
    }
}

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SearchError::EmptyPattern => write!(f, "Pattern must not be empty"),
            SearchError::InvalidPattern(msg) => write!(f, "Invalid pattern: {msg}"),
            SearchError::PathNotFound(p) => write!(f, "Path not found: {p}"),
            SearchError::BrokenSymlink { path, target } => {
                write!(f, "Broken symlink: {path} -> {target}")
            }
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

impl From<SearchError> for CodedError {
    fn from(e: SearchError) -> Self {
        CodedError::new(e.code(), e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
