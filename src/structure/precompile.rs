//! Compiling every language's queries ahead of the first call that needs
//! them. A query compiles once per process, on first use, and some cost
//! more than the parse they serve: on the bench machine Swift's take about
//! 200 ms, C++'s 40 ms, TypeScript's 35 ms, Ruby's and PHP's about 20 ms.
//! Paid inside a call, that put the first `trace` or `locate` over such a
//! tree past its 100 ms budget even with the index ready. They start when
//! an index starts or is warmed, on a thread of their own, so that the
//! session's first call (after its first model reply, a second or more
//! later) finds them compiled; an index loaded from its store is ready in
//! 10-25 ms, sooner than the compiles, and a call that needs a query still
//! being compiled waits for that compile, never compiles it twice.

use super::languages::Language;
use std::sync::Once;
use std::thread::JoinHandle;

/// Starts compiling every language's definition and call queries on a
/// background thread, the first time it is called in a process; later
/// calls (and a thread that cannot start) return `None` and change nothing.
/// The thread never keeps the process alive: it holds no handle to Node.
pub fn compile_queries_in_background() -> Option<JoinHandle<()>> {
    static STARTED: Once = Once::new();
    let mut handle = None;
    STARTED.call_once(|| {
        handle = std::thread::Builder::new()
            .name("pi-utils-queries".into())
            .spawn(compile_all)
            .ok();
    });
    handle
}

/// Compiles what is not compiled yet, in [`Language::ALL`]'s order.
fn compile_all() {
    for language in Language::ALL {
        super::matching::compiled(language);
        super::calls::has_call_query(language);
    }
}

/// Whether both of `language`'s queries have been compiled (or found not
/// to compile) in this process.
pub fn queries_compiled(language: Language) -> bool {
    super::matching::is_compiled(language) && super::calls::is_compiled(language)
}
