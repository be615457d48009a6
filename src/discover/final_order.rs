//! The last word on locate's order, after every file is scored: rules
//! that compare two listed files rather than score one. A file that
//! declares or talks about the code never outranks the code itself: a
//! test, docs or other file goes below the code on its words, and a C or
//! C++ header below the source file of its name.

use super::answer::LocatedFile;
use super::role::Role;
use super::tokens;

/// Header and source extensions of C, C++ and Objective-C.
const HEADERS: [&str; 5] = ["h", "hh", "hpp", "hxx", "h++"];
const SOURCES: [&str; 7] = ["c", "cc", "cpp", "cxx", "c++", "m", "mm"];

/// A file's name without directory, split at its last dot.
fn name_and_extension(path: &str) -> (&str, &str) {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').unwrap_or((name, ""))
}

/// A C or C++ header never outranks the source file of its name
/// (`dir.h` above `dir.c`, `dynbuf.h` above `dynbuf.c`, `hub.h` above
/// `hub.c` in issue 45's sets): the header declares what the source
/// defines, and a question about what code does is answered by the
/// definitions. Of none of 322 locate questions was a header the answer.
/// The header is put just below the best-ranked such source, wherever it
/// lives (`include/curl/multi.h` for `lib/multi.c`), and says so. A header
/// already below a source of its name stays where it is.
pub(crate) fn sources_before_their_headers(files: &mut [(LocatedFile, usize, Topic)]) {
    let source_of = |files: &[(LocatedFile, usize, Topic)], stem: &str, score: f64| {
        (files.iter())
            .filter(|(f, ..)| f.role == Role::Code && !f.ignored)
            .filter(|(f, ..)| {
                let (s, ext) = name_and_extension(&f.path.text);
                s == stem && SOURCES.contains(&ext.to_ascii_lowercase().as_str())
            })
            .map(|(f, rank, _)| (f.score, *rank, f.path.text.clone()))
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
            .filter(|(best, ..)| *best < score)
    };
    for i in 0..files.len() {
        let (f, ..) = &files[i];
        let (stem, ext) = name_and_extension(&f.path.text);
        if f.role != Role::Code
            || f.ignored
            || !HEADERS.contains(&ext.to_ascii_lowercase().as_str())
        {
            continue;
        }
        let Some((score, _, source)) = source_of(files, stem, f.score) else {
            continue;
        };
        let f = &mut files[i].0;
        f.score = score - 1.0;
        f.why.push(format!(
            "header: ranked after {source}, the source of its name"
        ));
    }
}

/// Which query words a file meets (its path or its text), or `None` when
/// it defines a symbol naming the whole query (it meets them all).
pub(crate) type Topic = Option<Vec<bool>>;

/// A test, bench, example, docs or other file that is not code never
/// outranks a code file that meets every query word it meets (issue 45:
/// `test/res.cookie.js` above `lib/response.js`), nor the code file it is
/// named for (`LinkedTreeMapSuiteTest.java` above `LinkedTreeMap.java`,
/// `DYNBUF.md` above `dynbuf.c`): it is put just below the lowest such
/// code file, and its reasons say so.
pub(crate) fn code_first_on_its_topic(files: &mut [(LocatedFile, usize, Topic)]) {
    let covers = |a: &Topic, b: &Topic| match (a, b) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(a), Some(b)) => a.iter().zip(b).all(|(x, y)| *x || !*y),
    };
    let code: Vec<(f64, String, Topic, Vec<String>, usize)> = (files.iter())
        .filter(|(f, ..)| f.role == Role::Code && !f.ignored)
        .map(|(f, rank, t)| {
            let name = stem(&f.path.text);
            (f.score, f.path.text.clone(), t.clone(), name, *rank)
        })
        .collect();
    for (f, _, topic) in files.iter_mut() {
        if f.role == Role::Code || f.ignored {
            continue;
        }
        let own = stem(&f.path.text);
        // Below every such code file, the lowest included.
        let above = (code.iter())
            .filter(|(score, _, t, name, _)| {
                *score <= f.score && (covers(t, topic) || tokens::contains_run(&own, name))
            })
            // Of equal scores, the one listed last (the files come in no
            // set order: the reason named either of two before).
            .min_by(|a, b| a.0.total_cmp(&b.0).then(b.4.cmp(&a.4)));
        if let Some((score, path, t, ..)) = above {
            f.score = score - 1.0;
            // Said once: this reason says more than "ranked down".
            let down = format!("{} file: ranked down", f.role.as_str());
            f.why.retain(|w| *w != down);
            let how = match covers(t, topic) {
                true => "code on the same words",
                false => "the code it is named for",
            };
            f.why.push(format!(
                "{} file: ranked after {path}, {how}",
                f.role.as_str()
            ));
        }
    }
}

/// The tokens of a path's file name without its extension.
fn stem(path: &str) -> Vec<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let mut words = tokens::split(name);
    if name.contains('.') {
        words.pop();
    }
    words
}
