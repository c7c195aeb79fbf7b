//! Bounded text for messages: a value quoted in an error is cut to a readable length (its first bytes,
//! an ellipsis and its full length), and a whole message kept in the status file or printed again is
//! capped, so a forged 60 MB name never becomes a 60 MB log line or status file.

use std::borrow::Cow;

/// The bytes of a quoted value kept in a message.
pub const VALUE_BYTES: usize = 80;
/// The bytes of a whole message kept (`last_error`, a generation's reason in `history`).
pub const MESSAGE_BYTES: usize = 1024;

/// `value` as it may be quoted: unchanged up to [`VALUE_BYTES`], else its first bytes (at a character
/// boundary), `…` and its length in bytes.
pub fn cut(value: &str) -> Cow<'_, str> {
    cut_to(value, VALUE_BYTES)
}

/// `value` quoted as Rust's `{:?}` quotes it, cut as [`cut`] cuts it: `"abc…"(4194316 bytes)`.
pub fn quote(value: &str) -> String {
    if value.len() <= VALUE_BYTES {
        return format!("{value:?}");
    }
    let mut end = VALUE_BYTES;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}…({} bytes)", &value[..end], value.len())
}

/// A whole message, capped at [`MESSAGE_BYTES`] the same way.
pub fn bound(message: String) -> String {
    match cut_to(&message, MESSAGE_BYTES) {
        Cow::Borrowed(_) => message,
        Cow::Owned(s) => s,
    }
}

fn cut_to(value: &str, max: usize) -> Cow<'_, str> {
    if value.len() <= max {
        return Cow::Borrowed(value);
    }
    let mut end = max;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…({} bytes)", &value[..end], value.len()))
}

/// The one way text from a file, the network or another user reaches a terminal: `value` cut at
/// `max` bytes as [`cut`] cuts it, then every byte or character a terminal would act on shown escaped —
/// C0 controls and DEL (`\n`, `\t`, `\r`, else `\u{1b}`), C1 controls (`\u{9b}`), the bidi and line
/// separator controls (`\u{202e}`, `\u{2028}`) and bytes that are not UTF-8 (`\xff`). A backslash is
/// kept as is, so escaping twice changes nothing and presentation-format names read as they are.
pub fn shown_bytes(value: &[u8], max: usize) -> Cow<'_, str> {
    let (head, cut) = if value.len() > max {
        // Never inside a character (at most three continuation bytes back).
        let mut end = max;
        while end > max.saturating_sub(3) && end > 0 && value[end] & 0xc0 == 0x80 {
            end -= 1;
        }
        (&value[..end], Some(value.len()))
    } else {
        (value, None)
    };
    if cut.is_none()
        && let Ok(s) = std::str::from_utf8(head)
        && !s.chars().any(acted_on)
    {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(head.len() + 16);
    for chunk in head.utf8_chunks() {
        for c in chunk.valid().chars() {
            push_shown(&mut out, c);
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    if let Some(len) = cut {
        out.push_str(&format!("…({len} bytes)"));
    }
    Cow::Owned(out)
}

/// [`shown_bytes`] of a value quoted in a message ([`VALUE_BYTES`]).
pub fn shown(value: &str) -> Cow<'_, str> {
    shown_bytes(value.as_bytes(), VALUE_BYTES)
}

/// [`shown_bytes`] of a whole message ([`MESSAGE_BYTES`]), owned: a status file's field.
pub fn shown_message(value: &str) -> String {
    shown_bytes(value.as_bytes(), MESSAGE_BYTES).into_owned()
}

/// The bytes of a path kept in a message: its start and its end, [`PATH_BYTES`] / 2 each.
pub const PATH_BYTES: usize = 160;

/// A path as every message shows it: its bytes (a Unix path need not be UTF-8) escaped as
/// [`shown_bytes`] escapes them, so `\xff` or a newline in a file name is seen and never acted on,
/// and a path longer than [`PATH_BYTES`] kept as its start and its end, with how much was cut
/// between: the directory and the file name are what a reader needs.
pub fn path(p: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    middle(p.as_os_str().as_bytes(), PATH_BYTES).into_owned()
}

/// An inventory place (`all.children.pg-meta.hosts[10.10.10.10]`) as an error names it: its start and
/// its end, cut in the middle as [`path`] cuts a path, so 30 nested groups of 1,000 characters are
/// one readable line.
pub fn place(at: &str) -> Cow<'_, str> {
    middle(at.as_bytes(), PATH_BYTES)
}

/// `b` escaped as [`shown_bytes`] escapes it; longer than `max`, its first and last `max / 2` bytes
/// (at character boundaries) with how much was cut between.
fn middle(b: &[u8], max: usize) -> Cow<'_, str> {
    if b.len() <= max {
        return shown_bytes(b, usize::MAX);
    }
    let half = max / 2;
    // Never inside a character: the head ends before a continuation byte, the tail starts at a lead.
    let mut head = half;
    while head > 0 && b[head] & 0xc0 == 0x80 && half - head < 3 {
        head -= 1;
    }
    let mut tail = b.len() - half;
    while tail < b.len() && b[tail] & 0xc0 == 0x80 && tail - (b.len() - half) < 3 {
        tail += 1;
    }
    Cow::Owned(format!(
        "{}…({} of {} bytes cut)…{}",
        shown_bytes(&b[..head], usize::MAX),
        tail - head,
        b.len(),
        shown_bytes(&b[tail..], usize::MAX)
    ))
}

/// One segment of an inventory path (a group name, a host key) as every message shows it: bare when
/// it is a plain name, else quoted and cut as [`quote`] quotes it. The paths an error names are built
/// from these, so a group named `"x\nnext: …"` shows as `all.children."x\nnext: …"`, one line.
pub fn segment(label: &str) -> Cow<'_, str> {
    let plain = !label.is_empty()
        && label.len() <= VALUE_BYTES
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if plain {
        Cow::Borrowed(label)
    } else {
        Cow::Owned(quote(label))
    }
}

/// The gate of the `error:` and `next:` writer: the text as [`shown_bytes`] shows it, newlines
/// included, so a value that reached a message unquoted still cannot start a line of its own.
/// Past [`MESSAGE_BYTES`] the line is cut as [`shown_bytes`] cuts: the net under the cuts of each value.
pub fn one_line(text: &str) -> Cow<'_, str> {
    shown_bytes(text.as_bytes(), MESSAGE_BYTES)
}

/// The log writer's gate: one event is one `write` of its formatted text (tracing's fmt layer writes
/// each event whole), so every line break before the event's final newline came from a value and is
/// written as `\n` (`\r` as `\r`). The JSON format has none; the text format printed them raw.
pub struct LogLines<W>(pub W);

impl<W: std::io::Write> std::io::Write for LogLines<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let body = buf.strip_suffix(b"\n").unwrap_or(buf);
        if !body.iter().any(|b| matches!(b, b'\n' | b'\r')) {
            self.0.write_all(buf)?;
            return Ok(buf.len());
        }
        let mut out = Vec::with_capacity(buf.len() + 16);
        for &b in body {
            match b {
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b => out.push(b),
            }
        }
        out.extend_from_slice(&buf[body.len()..]);
        self.0.write_all(&out)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// [`shown_bytes`]'s rule for JSON printed to a terminal: serde_json escapes C0 controls but writes DEL,
/// C1 controls and the bidi and separator controls raw. Those can stand only inside strings, where
/// `\uXXXX` is the same character to a JSON reader and inert to a terminal.
pub fn json_inert(json: String) -> String {
    if !json.bytes().any(|b| matches!(b, 0x7f | 0xc2 | 0xe2)) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        // C0 inside strings is escaped by serde_json already; outside them it is the layout.
        if u32::from(c) >= 0x20 && acted_on(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// The gate every line the binary prints passes (stdout's report, `error:`/`next:`, progress on
/// stderr): whatever a terminal would act on is shown as [`shown_bytes`] shows it, except the line
/// breaks and tabs of the layout itself (export's hosts format is tab-separated). Values are escaped
/// where they are quoted already; this is the net for a path that forgot, so nothing a file, the
/// network or another user wrote can retitle, recolour or clear root's terminal.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    let acts = |c: char| c != '\n' && c != '\t' && acted_on(c);
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c => push_shown(&mut out, c),
        }
    }
    Cow::Owned(out)
}

/// One character as [`shown_bytes`] shows it: the common controls by name, the rest a terminal acts
/// on as `\u{..}`, anything else as it is.
fn push_shown(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if acted_on(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        c => out.push(c),
    }
}

/// Characters a terminal acts on instead of showing.
fn acted_on(c: char) -> bool {
    matches!(u32::from(c), 0..=0x1f | 0x7f..=0x9f | 0x200e | 0x200f | 0x2028..=0x202e | 0x2066..=0x2069)
}

/// `s` quoted for a POSIX shell when it holds anything beyond the characters of a plain path.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:,@%=".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_with_their_length_and_short_ones_kept() {
        assert_eq!(cut("meta"), "meta");
        let long = "x".repeat(60_000_000);
        let c = cut(&long);
        assert_eq!(c, format!("{}…(60000000 bytes)", "x".repeat(80)));
        // Never inside a character.
        let wide = "é".repeat(100);
        assert!(cut(&wide).starts_with(&"é".repeat(40)));
        assert!(bound("y".repeat(5000)).len() < MESSAGE_BYTES + 40);
        assert_eq!(quote("a\"b"), "\"a\\\"b\"");
        assert_eq!(
            quote(&long),
            format!("\"{}\"…(60000000 bytes)", "x".repeat(80))
        );
    }

    #[test]
    fn the_terminal_gate_keeps_the_layout_and_escapes_the_rest() {
        let plain = "a\tb\nc é \\u{1b}\n";
        assert!(matches!(for_terminal(plain), Cow::Borrowed(_)));
        assert_eq!(
            for_terminal("next: delete \u{1b}]52;c;eA==\u{7}\r\u{9b}2J \u{202e}x\n"),
            "next: delete \\u{1b}]52;c;eA==\\u{7}\\r\\u{9b}2J \\u{202e}x\n"
        );
        // What shown() escaped already passes unchanged.
        let once = shown("\u{1b}[31m").into_owned();
        assert_eq!(for_terminal(&once), once);
    }

    #[test]
    fn shown_escapes_what_a_terminal_acts_on_and_cuts() {
        assert_eq!(shown("pg-meta.pigsty.test"), "pg-meta.pigsty.test");
        assert!(matches!(shown("a\\.b é"), Cow::Borrowed("a\\.b é")));
        assert_eq!(
            shown("\u{1b}]0;OWNED\u{7}\u{1b}[2J"),
            "\\u{1b}]0;OWNED\\u{7}\\u{1b}[2J"
        );
        assert_eq!(shown("a\nb\tc\rd\u{7f}"), "a\\nb\\tc\\rd\\u{7f}");
        assert_eq!(shown("\u{9b}31m\u{85}"), "\\u{9b}31m\\u{85}");
        assert_eq!(shown("x\u{202e}y\u{2066}"), "x\\u{202e}y\\u{2066}");
        assert_eq!(shown_bytes(b"a\xff\xc3b", 80), "a\\xff\\xc3b");
        // Twice is once.
        let once = shown("\u{1b}[31m\u{9b}").into_owned();
        assert_eq!(shown(&once), once);
        // Cut as `cut` cuts, the escapes after the cut.
        let long = format!("{}\u{1b}", "x".repeat(100));
        assert_eq!(shown(&long), format!("{}…(101 bytes)", "x".repeat(80)));
        let wide = format!("x{}", "é".repeat(100));
        assert_eq!(shown(&wide), format!("x{}…(201 bytes)", "é".repeat(39)));
        assert_eq!(
            shown_message(&"y".repeat(2000)).len(),
            1024 + "…(2000 bytes)".len()
        );
    }

    #[test]
    fn paths_are_escaped_bytes_cut_in_the_middle() {
        use std::os::unix::ffi::OsStrExt;
        let p = std::path::Path::new(std::ffi::OsStr::from_bytes(b"/tmp/x\xff\n.yml"));
        assert_eq!(path(p), "/tmp/x\\xff\\n.yml");
        let long = format!("/{}/{}.yml", "d".repeat(5000), "é".repeat(100));
        let shown = path(std::path::Path::new(&long));
        assert!(shown.len() < PATH_BYTES + 40, "{shown}");
        assert!(
            shown.starts_with("/ddd") && shown.ends_with("éé.yml"),
            "{shown}"
        );
        assert!(
            shown.contains(&format!("of {} bytes cut)", long.len())),
            "{shown}"
        );
    }

    #[test]
    fn segments_one_line_and_log_lines_never_let_a_value_start_a_line() {
        assert_eq!(segment("pg-meta_1"), "pg-meta_1");
        assert_eq!(segment("x\nnext: y"), "\"x\\nnext: y\"");
        assert_eq!(segment(""), "\"\"");
        assert!(segment(&"g".repeat(1000)).len() < VALUE_BYTES + 20);
        assert_eq!(one_line("a\nnext: b\r"), "a\\nnext: b\\r");
        use std::io::Write;
        let mut w = LogLines(Vec::new());
        w.write_all(b"INFO x\nFORGED\n").unwrap();
        w.write_all(b"INFO plain\n").unwrap();
        assert_eq!(w.0, b"INFO x\\nFORGED\nINFO plain\n");
    }

    #[test]
    fn json_inert_escapes_inside_strings_and_reads_back_the_same() {
        let v = serde_json::json!({"s": "a\u{1b}b\u{9b}c\u{7f}d\u{202e}é"});
        let raw = serde_json::to_string_pretty(&v).unwrap();
        assert!(raw.contains('\u{9b}'));
        let inert = json_inert(raw);
        assert!(
            !inert.contains('\u{9b}') && !inert.contains('\u{7f}') && !inert.contains('\u{202e}')
        );
        assert!(
            inert.contains("\\u009b") && inert.contains('é') && inert.contains('\n'),
            "{inert}"
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&inert).unwrap(),
            v
        );
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("/tmp/a-b.json"), "/tmp/a-b.json");
        assert_eq!(shell_quote("/tmp/a b"), "'/tmp/a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
