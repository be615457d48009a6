//! Fault injection for the specs that prove a Rust panic never aborts the
//! Node host: `PI_UTILS_FAULT=<point>` makes that one point panic. The
//! variable is read once; an unset variable costs one atomic load per call.

use std::sync::OnceLock;

pub fn panic_if_injected(point: &str) {
    static FAULT: OnceLock<Option<String>> = OnceLock::new();
    let injected = FAULT.get_or_init(|| std::env::var("PI_UTILS_FAULT").ok());
    if injected.as_deref() == Some(point) {
        panic!("injected fault at {point} (PI_UTILS_FAULT)");
    }
}
