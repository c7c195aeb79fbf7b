//! What reaches a terminal must be inert: a reusable check for the escape walk over commands' output
//! (issue 33 item 2).

/// Terminal escapes in every place a fixture can carry one: OSC title and clipboard (OSC 52), a screen
/// clear, a C1 CSI and a bidi override.
pub const ESCAPES: &str = "\u{1b}]0;OWNED\u{7}\u{1b}[2J\u{1b}]52;c;aGk=\u{7}\u{9b}31m\u{202e}";

/// Panics when `out` holds a character a terminal acts on: C0 controls but newline and tab, DEL, C1
/// controls, bidi overrides and isolates, line and paragraph separators.
pub fn assert_inert(what: &str, out: &str) {
    let bad: Vec<char> = out
        .chars()
        .filter(|c| {
            let u = u32::from(*c);
            (u < 0x20 && *c != '\n' && *c != '\t')
                || (0x7f..=0x9f).contains(&u)
                || (0x2028..=0x202e).contains(&u)
                || (0x2066..=0x2069).contains(&u)
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: raw control characters {bad:?} in:\n{}",
        out.escape_debug()
    );
}

/// `assert_inert` on a run's stdout and stderr.
pub fn assert_run_inert(what: &str, r: &super::Run) {
    assert_inert(&format!("{what} (stdout)"), &r.stdout);
    assert_inert(&format!("{what} (stderr)"), &r.stderr);
}
