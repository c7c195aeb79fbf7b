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
    fn shell_quoting() {
        assert_eq!(shell_quote("/tmp/a-b.json"), "/tmp/a-b.json");
        assert_eq!(shell_quote("/tmp/a b"), "'/tmp/a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
