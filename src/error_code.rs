//! The one list of error codes every room's errors reach JS with (`err.code`),
//! so a caller tells errors apart without parsing text. It lives outside the
//! rooms because search, discover, index and shell all use it, and the shell
//! room may not import the search room. The JS side (`errors.mjs`) keeps a
//! copy for the rg fallback, which runs without the addon; a spec checks that
//! copy against [`ErrorCode::ALL`] as the addon exports it.

/// A fixed set: JS matches on these strings, so they never change once
/// published; new ones are only ever added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// Regex parse error, empty pattern, bad glob, empty or malformed query.
    InvalidPattern,
    /// An option value that is not one of its choices or not valid.
    InvalidOption,
    /// A path, working directory or shell that does not exist.
    PathNotFound,
    /// The path exists but is the wrong kind: a directory, FIFO, socket or
    /// device where a file is wanted (or a file where a directory is).
    NotAFile,
    /// Any other I/O failure.
    Io,
    /// Aborted by the caller.
    Cancelled,
    /// A background job id this registry does not know.
    UnknownJob,
    /// A background job id that is already taken.
    JobExists,
    /// The job must have ended for this (removing it).
    JobRunning,
    /// A caught panic or another failure that is a bug of ours.
    Internal,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 10] = [
        ErrorCode::InvalidPattern,
        ErrorCode::InvalidOption,
        ErrorCode::PathNotFound,
        ErrorCode::NotAFile,
        ErrorCode::Io,
        ErrorCode::Cancelled,
        ErrorCode::UnknownJob,
        ErrorCode::JobExists,
        ErrorCode::JobRunning,
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
            ErrorCode::UnknownJob => "UNKNOWN_JOB",
            ErrorCode::JobExists => "JOB_EXISTS",
            ErrorCode::JobRunning => "JOB_RUNNING",
            ErrorCode::Internal => "INTERNAL",
        }
    }

    /// The code of a failed file-system call: "not found" and "wrong kind"
    /// are the caller's to fix, anything else is `IO`.
    pub fn of_io(e: &std::io::Error) -> ErrorCode {
        match e.kind() {
            std::io::ErrorKind::NotFound => ErrorCode::PathNotFound,
            std::io::ErrorKind::IsADirectory | std::io::ErrorKind::NotADirectory => {
                ErrorCode::NotAFile
            }
            _ => ErrorCode::Io,
        }
    }
}

impl AsRef<str> for ErrorCode {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

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

    /// The rejection of an operation whose signal aborted, worded as Node's
    /// own `AbortError`.
    pub fn cancelled() -> Self {
        CodedError::new(
            ErrorCode::Cancelled,
            "AbortError: The operation was aborted",
        )
    }

    /// A caught panic: the operation named failed, the host goes on.
    pub fn panicked(what: &str) -> Self {
        CodedError::new(
            ErrorCode::Internal,
            format!("internal error: {what} panicked"),
        )
    }
}

impl std::fmt::Display for CodedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
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
    fn io_errors_are_coded_by_kind() {
        use std::io::{Error, ErrorKind};
        assert_eq!(
            ErrorCode::of_io(&Error::from(ErrorKind::NotFound)),
            ErrorCode::PathNotFound
        );
        assert_eq!(
            ErrorCode::of_io(&Error::from(ErrorKind::IsADirectory)),
            ErrorCode::NotAFile
        );
        assert_eq!(
            ErrorCode::of_io(&Error::from(ErrorKind::PermissionDenied)),
            ErrorCode::Io
        );
    }
}
