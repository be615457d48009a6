//! Issue 45's content-only questions: a question that names no path word
//! is answered by the file whose text is about it, not by a file whose
//! path happens to hold one of its common words and whose long text says
//! each of them somewhere.

use super::locate::{self, LocateOptions};
use crate::search::CancelToken;
use std::fs;

fn first_answer(files: &[(&str, String)], query: &str) -> (Option<String>, String) {
    let t = tempfile::tempdir().unwrap();
    for (path, text) in files {
        fs::write(t.path().join(path), text).unwrap();
    }
    let opts = LocateOptions {
        query: query.into(),
        ..Default::default()
    };
    let r = locate::run(t.path(), None, opts, &CancelToken::new(None)).unwrap();
    (r.files.into_iter().next().map(|f| f.path.text), r.text)
}

/// tmux's `alerts.c` for "flagging bell, activity and silence in background
/// windows": it defines a check for each and never says "flagging" or
/// "background"; `window.c` is named by `windows` and, fifty times longer,
/// says every word once somewhere.
#[test]
fn the_file_about_the_topic_outranks_a_long_one_named_by_a_common_word() {
    let alerts = "#include \"tmux.h\"\n\n\
        static int alerts_check_bell(struct window *);\n\
        static int alerts_check_activity(struct window *);\n\
        static int alerts_check_silence(struct window *);\n\n\
        static int\nalerts_check_bell(struct window *w)\n{\n\tif (~w->flags & WINDOW_BELL)\n\t\treturn (0);\n\talerts_set_bell(w);\n\treturn (WINDOW_BELL);\n}\n\n\
        static int\nalerts_check_activity(struct window *w)\n{\n\tif (~w->flags & WINDOW_ACTIVITY)\n\t\treturn (0);\n\treturn (WINDOW_ACTIVITY);\n}\n\n\
        static int\nalerts_check_silence(struct window *w)\n{\n\tif (~w->flags & WINDOW_SILENCE)\n\t\treturn (0);\n\treturn (WINDOW_SILENCE); /* silence in windows */\n}\n";
    let mut window = String::from("#include \"tmux.h\"\n\n");
    let words = [
        "flagging",
        "bell",
        "activity",
        "silence",
        "background",
        "windows",
    ];
    for i in 0..1500 {
        window.push_str(&format!(
            "int\nwindow_pane_step_{i}(struct window_pane *wp)\n{{\n\treturn (wp->id + {i});\n}}\n"
        ));
        if i % 250 == 0 {
            window.push_str(&format!("/* {} */\n", words[i / 250]));
        }
    }
    let files = [("alerts.c", alerts.to_string()), ("window.c", window)];
    let q = "flagging bell, activity and silence in background windows";
    let (first, text) = first_answer(&files, q);
    assert_eq!(first.as_deref(), Some("alerts.c"), "{text}");
}
