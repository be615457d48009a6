//! Which grammar reads which file, and its definition query text.
//!
//! Detection is by file name only, except `.h`: C and C++ share it, and a C++
//! header read with the C grammar loses every class and namespace, while C
//! read with the C++ grammar parses fine. So a `.h` buffer that shows any C++
//! marker is read as C++.

use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    Rust,
    TypeScript,
    Tsx,
    JavaScript,
    Python,
    Go,
    Java,
    C,
    Cpp,
    Ruby,
    Php,
    Swift,
    Markdown,
}

impl Language {
    pub const ALL: [Language; 13] = [
        Language::Rust,
        Language::TypeScript,
        Language::Tsx,
        Language::JavaScript,
        Language::Python,
        Language::Go,
        Language::Java,
        Language::C,
        Language::Cpp,
        Language::Ruby,
        Language::Php,
        Language::Swift,
        Language::Markdown,
    ];

    /// Its place in [`Language::ALL`]: the slot of its compiled queries.
    pub(crate) fn slot(self) -> usize {
        Language::ALL.iter().position(|l| *l == self).unwrap_or(0)
    }

    /// Stable lower-case name shown to users and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::JavaScript => "javascript",
            Language::Python => "python",
            Language::Go => "go",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Ruby => "ruby",
            Language::Php => "php",
            Language::Swift => "swift",
            Language::Markdown => "markdown",
        }
    }

    /// By file name alone (`.h` counts as C). Names need not be UTF-8.
    pub fn from_path(path: &Path) -> Option<Language> {
        let file_name = path.file_name()?.as_encoded_bytes();
        match file_name {
            b"Gemfile" | b"Rakefile" | b"Guardfile" | b"Podfile" | b"Vagrantfile" => {
                return Some(Language::Ruby)
            }
            _ => {}
        }
        let ext = path.extension()?.as_encoded_bytes().to_ascii_lowercase();
        Some(match ext.as_slice() {
            b"rs" => Language::Rust,
            b"ts" | b"mts" | b"cts" => Language::TypeScript,
            b"tsx" => Language::Tsx,
            b"js" | b"jsx" | b"mjs" | b"cjs" => Language::JavaScript,
            b"py" | b"pyi" | b"pyw" => Language::Python,
            b"go" => Language::Go,
            b"java" => Language::Java,
            b"c" | b"h" => Language::C,
            b"cc" | b"cpp" | b"cxx" | b"c++" | b"hh" | b"hpp" | b"hxx" | b"h++" | b"ipp"
            | b"tpp" | b"inl" | b"cu" | b"cuh" => Language::Cpp,
            b"rb" | b"rake" | b"gemspec" | b"ru" => Language::Ruby,
            b"php" | b"phtml" | b"php3" | b"php4" | b"php5" | b"php7" | b"php8" | b"phps" => {
                Language::Php
            }
            b"swift" => Language::Swift,
            b"md" | b"markdown" | b"mdown" | b"mkd" => Language::Markdown,
            _ => return None,
        })
    }

    /// By file name, and for `.h` by a glance at the contents.
    pub fn detect(path: &Path, source: &[u8]) -> Option<Language> {
        let lang = Language::from_path(path)?;
        let is_h = path
            .extension()
            .is_some_and(|e| e.as_encoded_bytes().eq_ignore_ascii_case(b"h"));
        if lang == Language::C && is_h && looks_like_cpp(source) {
            return Some(Language::Cpp);
        }
        Some(lang)
    }

    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::C => tree_sitter_c::LANGUAGE.into(),
            Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Language::Ruby => tree_sitter_ruby::LANGUAGE.into(),
            // The grammar for a file as PHP serves it: HTML until `<?php`.
            Language::Php => tree_sitter_php::LANGUAGE_PHP.into(),
            Language::Swift => tree_sitter_swift::LANGUAGE.into(),
            // Only the block grammar: sections and headings live there.
            Language::Markdown => tree_sitter_md::LANGUAGE.into(),
        }
    }

    /// Query source. TypeScript's own tags query only adds TS-specific
    /// patterns to JavaScript's, so TS and TSX run both.
    pub fn query_source(self) -> String {
        const JS: &str = include_str!("queries/javascript.scm");
        const TS: &str = include_str!("queries/typescript.scm");
        match self {
            Language::Rust => include_str!("queries/rust.scm").into(),
            Language::TypeScript | Language::Tsx => format!("{JS}\n{TS}"),
            Language::JavaScript => {
                format!("{JS}\n{}", include_str!("queries/javascript-only.scm"))
            }
            Language::Python => include_str!("queries/python.scm").into(),
            Language::Go => include_str!("queries/go.scm").into(),
            Language::Java => include_str!("queries/java.scm").into(),
            Language::C => include_str!("queries/c.scm").into(),
            Language::Cpp => format!(
                "{}\n{}",
                include_str!("queries/c.scm"),
                include_str!("queries/cpp.scm")
            ),
            Language::Ruby => include_str!("queries/ruby.scm").into(),
            Language::Php => include_str!("queries/php.scm").into(),
            Language::Swift => include_str!("queries/swift.scm").into(),
            Language::Markdown => include_str!("queries/markdown.scm").into(),
        }
    }
}

pub fn abi_supported(grammar: &tree_sitter::Language) -> bool {
    (tree_sitter::MIN_COMPATIBLE_LANGUAGE_VERSION..=tree_sitter::LANGUAGE_VERSION)
        .contains(&grammar.abi_version())
}

/// Markers that C never (or almost never outside comments) contains. A false
/// positive costs nothing: the C++ grammar reads C well.
fn looks_like_cpp(source: &[u8]) -> bool {
    const MARKERS: [&[u8]; 7] = [
        b"::",
        b"class ",
        b"namespace ",
        b"template<",
        b"template <",
        b"public:",
        b"private:",
    ];
    let head = &source[..source.len().min(256 * 1024)];
    MARKERS
        .iter()
        .any(|m| head.windows(m.len()).any(|w| w == *m))
}
