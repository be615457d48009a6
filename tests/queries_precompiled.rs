//! Compiling the structure queries ahead of use, in a process of its own:
//! inside the library's test binary other tests compile the queries first,
//! and this check could then pass with the compile doing nothing.

use pi_utils::structure::{compile_queries_in_background, queries_compiled, Language};

#[test]
fn every_language_is_compiled_by_the_background_thread_started_once() {
    assert!(
        Language::ALL.iter().all(|l| !queries_compiled(*l)),
        "nothing compiles a query before it is needed or asked for"
    );
    let first = compile_queries_in_background().expect("the first call starts the thread");
    assert!(
        compile_queries_in_background().is_none(),
        "a second call starts nothing"
    );
    first.join().expect("the compile thread does not panic");
    for language in Language::ALL {
        assert!(queries_compiled(language), "{language:?} compiled");
    }
}
