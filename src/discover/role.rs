//! What a file is for, read from its path alone: the role shown next to
//! each result, and the ranking signals that follow from it (tests, docs,
//! vendored and generated files are ranked down, never out; an entry-point
//! file stands for its directory).

use super::tokens;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Code,
    Test,
    /// Under `benchmarks/`, `bench/` and their kin: it drives the code, as a test does.
    Bench,
    /// Under `examples/` and its kin: it uses the code, as a test does.
    Example,
    Docs,
    Config,
    Vendored,
    Generated,
    Other,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Code => "code",
            Role::Test => "test",
            Role::Bench => "bench",
            Role::Example => "example",
            Role::Docs => "docs",
            Role::Config => "config",
            Role::Vendored => "vendored",
            Role::Generated => "generated",
            Role::Other => "other",
        }
    }

    /// The role of `path`, a `/`-separated path relative to the search root.
    pub fn of(path: &str) -> Role {
        let lower = path.to_ascii_lowercase();
        let parts: Vec<&str> = lower.split('/').collect();
        let (dirs, name) = parts.split_at(parts.len() - 1);
        let name = name[0];
        let in_dir = |names: &[&str]| dirs.iter().any(|d| names.contains(d));
        if in_dir(&[
            "node_modules",
            "vendor",
            "third_party",
            "third-party",
            "external",
        ]) {
            return Role::Vendored;
        }
        if in_dir(&["dist", "generated", "__generated__"])
            || name.contains(".min.")
            || name.ends_with(".map")
            || name.ends_with(".lock")
            || name == "package-lock.json"
            || name.contains(".generated.")
            || name.ends_with(".pb.go")
        {
            return Role::Generated;
        }
        let name_tokens = tokens::split(name);
        let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
        if in_dir(&[
            "test",
            "tests",
            "__tests__",
            "testing",
            "selftests",
            "spec",
            "__test__",
            "testdata",
            "__snapshots__",
            // Perl's and git's test directory (`t/t4203-mailmap.sh`).
            "t",
            // tmux's `regress/*.sh`, axios's `test/unit/regression`.
            "regress",
            "regression",
            "regressions",
            // Fuzz targets drive the code as a test does (tmux, rocksdb,
            // h2o `fuzz/`, libgit2 `fuzzers/`).
            "fuzz",
            "fuzzers",
            "fuzzing",
        ]) || name_tokens.first().is_some_and(|t| t == "test")
            || name.contains(".spec.")
            || name.contains(".test.")
            || name.contains("_test.")
            || name.contains("_spec.")
            // Cucumber's and behave's scenarios.
            || ext == "feature"
            || is_named_as_a_test_class(path, ext, dirs)
        {
            return Role::Test;
        }
        if in_dir(&["bench", "benches", "benchmark", "benchmarks"]) {
            return Role::Bench;
        }
        if in_dir(&["example", "examples", "_examples", "samples"]) {
            return Role::Example;
        }
        // Release history and translations say every word the code's
        // messages say, and more often: prose about the code, not the code.
        let history = [
            "changelog",
            "changes",
            "history",
            "news",
            "releasenotes",
            "release-notes",
        ];
        // Source in a docs directory is code: cobra's `doc/md_docs.go` is
        // the Go package that writes the docs, and ranked as prose its text
        // counted half (issue 45). Markdown and other prose stay docs.
        let language = crate::structure::Language::from_path(std::path::Path::new(name));
        let source = language.is_some_and(|l| l != crate::structure::Language::Markdown);
        if in_dir(&["docs", "doc", "documentation"]) && source {
            return Role::Code;
        }
        if in_dir(&[
            "docs",
            "doc",
            "documentation",
            "man",
            "relnotes",
            "po",
            "locale",
            "locales",
        ]) || matches!(
            ext,
            "md" | "markdown" | "rst" | "txt" | "adoc" | "po" | "pot"
        ) || name.starts_with("readme")
            || history.contains(&name.split('.').next().unwrap_or(name))
            || is_man_page(name, ext)
        {
            return Role::Docs;
        }
        if matches!(
            ext,
            "json" | "yaml" | "yml" | "toml" | "ini" | "cfg" | "conf"
        ) || name.starts_with("kconfig")
            || name == "makefile"
            || name == "kbuild"
        {
            return Role::Config;
        }
        if crate::structure::Language::from_path(std::path::Path::new(name)).is_some()
            || matches!(
                ext,
                "sh" | "s" | "mjs" | "cjs" | "kt" | "swift" | "cs" | "php" | "scala" | "lua"
            )
        {
            return Role::Code;
        }
        Role::Other
    }

    /// Subtracted from a score: enough to put a test below the code it
    /// tests when both match equally, not enough to hide it.
    pub fn penalty(self) -> f64 {
        match self {
            Role::Code | Role::Config | Role::Other => 0.0,
            Role::Test | Role::Bench | Role::Example => 40.0,
            Role::Docs => 30.0,
            Role::Vendored | Role::Generated => 50.0,
        }
    }
}

/// JUnit's, PHPUnit's, XCTest's and NUnit's convention: a class named for
/// what it tests, `Test` or `Tests` last (read from the name as written: the
/// role's lower-cased path has lost the words) (`SimpleMockTest.java`,
/// `RouterTests.swift`), wherever it lies (mockito's
/// `osgi-tests/src/testBundle/` was ranked as code, issue 45's study-g).
/// Not under Maven's `main`, where `ParameterizedTest.java` is an
/// annotation the tests use.
fn is_named_as_a_test_class(path: &str, ext: &str, dirs: &[&str]) -> bool {
    if !matches!(
        ext,
        "java" | "kt" | "scala" | "groovy" | "php" | "swift" | "cs"
    ) {
        return false;
    }
    let name_tokens = tokens::split(path.rsplit('/').next().unwrap_or(path));
    let Some((_, stem)) = name_tokens.split_last() else {
        return false;
    };
    stem.len() >= 2
        && stem.last().is_some_and(|t| t == "test" || t == "tests")
        && !dirs.contains(&"main")
}

/// A manual page: `git.1`, `bat.1.in` (a section number as the extension,
/// or before `.in`).
fn is_man_page(name: &str, ext: &str) -> bool {
    let section = |e: &str| e.len() == 1 && e.as_bytes()[0].is_ascii_digit() && e != "0";
    section(ext)
        || (ext == "in"
            && name
                .trim_end_matches(".in")
                .rsplit_once('.')
                .is_some_and(|(_, e)| section(e)))
}

/// `mod.rs`, `index.ts`, `__init__.py` and their kin: the file a reader
/// opens first for the directory that holds it.
pub fn is_entry_point(file_name: &str) -> bool {
    let stem = file_name.split('.').next().unwrap_or("");
    matches!(stem, "mod" | "index" | "__init__" | "lib" | "main")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_come_from_directories_and_names() {
        assert_eq!(Role::of("src/auth/mod.rs"), Role::Code);
        assert_eq!(Role::of("__test__/outline.spec.ts"), Role::Test);
        assert_eq!(Role::of("pkg/auth_test.go"), Role::Test);
        assert_eq!(
            Role::of("Documentation/scheduler/sched-design-CFS.rst"),
            Role::Docs
        );
        assert_eq!(Role::of("node_modules/dep/index.js"), Role::Vendored);
        assert_eq!(Role::of("package-lock.json"), Role::Generated);
        assert_eq!(Role::of("Cargo.toml"), Role::Config);
        assert_eq!(Role::of("kernel/sched/Kconfig"), Role::Config);
        assert_eq!(Role::of("COPYING"), Role::Other);
        assert_eq!(Role::of("benchmarks/handle-event/index.ts"), Role::Bench);
        assert_eq!(Role::of("_examples/rest/main.go"), Role::Example);
        assert_eq!(Role::Bench.penalty(), Role::Test.penalty());
        // Conventions of other ecosystems (issue 45's held-out trees).
        assert_eq!(Role::of("t/t4203-mailmap.sh"), Role::Test);
        assert_eq!(Role::of("regress/format-variables.sh"), Role::Test);
        assert_eq!(Role::of("fuzz/input-fuzzer.c"), Role::Test);
        assert_eq!(Role::of("fuzzers/packfile_fuzzer.c"), Role::Test);
        assert_eq!(Role::of("features/incremental_rebuild.feature"), Role::Test);
        // A folder named features holds code as often as scenarios (Alamofire's Source/Features/).
        assert_eq!(Role::of("Source/Features/RetryPolicy.swift"), Role::Code);
        assert_eq!(Role::of("spec/models/user_spec.rb"), Role::Test);
        assert_eq!(Role::of("lib/user_spec.rb"), Role::Test);
        assert_eq!(Role::of("src/latest.c"), Role::Code);
        assert_eq!(Role::of("po/de.po"), Role::Docs);
        assert_eq!(Role::of("History.markdown"), Role::Docs);
        assert_eq!(Role::of("CHANGES"), Role::Docs);
        assert_eq!(Role::of("NEWS"), Role::Docs);
        assert_eq!(Role::of("Documentation/RelNotes/2.5.0.adoc"), Role::Docs);
        assert_eq!(
            Role::of("doc/md_docs.go"),
            Role::Code,
            "a Go package named doc"
        );
        assert_eq!(Role::of("doc/md_docs.md"), Role::Docs);
        assert_eq!(Role::of("man/man1/fzf.1"), Role::Docs);
        assert_eq!(Role::of("assets/manual/bat.1.in"), Role::Docs);
        assert_eq!(Role::of("dist/axios.js.map"), Role::Generated);
        assert_eq!(Role::of("lib/axios.js.map"), Role::Generated);
        assert_eq!(Role::of("src/news_feed.py"), Role::Code);
        assert_eq!(
            Role::of("it/src/testBundle/java/org/x/SimpleMockTest.java"),
            Role::Test
        );
        assert_eq!(Role::of("Tests/RouterTests.swift"), Role::Test);
        assert_eq!(Role::of("app/RouterTests.swift"), Role::Test);
        assert_eq!(
            Role::of("params/src/main/java/org/x/ParameterizedTest.java"),
            Role::Code,
            "an annotation under Maven's main"
        );
        assert_eq!(Role::of("src/Latest.java"), Role::Code);
        assert_eq!(Role::of("src/Contest.java"), Role::Code);
    }

    #[test]
    fn entry_points_are_recognised_by_stem() {
        assert!(is_entry_point("mod.rs"));
        assert!(is_entry_point("index.ts"));
        assert!(is_entry_point("__init__.py"));
        assert!(!is_entry_point("modal.rs"));
    }
}
