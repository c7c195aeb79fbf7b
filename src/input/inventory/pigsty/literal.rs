//! What YAML 1.1 (PyYAML, so Ansible, which runs Pigsty) and YAML 1.2 (this reader, as Barn's) read
//! alike. A plain `no` is `false` to Ansible and the string "no" here; `010` is 8 there; `1e3` a
//! string there. A value the view reads that could be read either way is refused, not guessed. The
//! parser does not keep whether a string was quoted, so a quoted `'no'` is refused too: conservative.

use crate::input::yaml::Yaml;
use crate::output::text::quote;

/// YAML 1.1's words for booleans (PyYAML's resolver; `y`/`n` are strings there too).
const BOOLS_11: &[&str] = &[
    "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF",
];

/// The first scalar in `v` that the two YAML versions may read differently, and what YAML 1.1 makes
/// of it.
pub(super) fn ambiguous(v: &Yaml) -> Option<(String, &'static str)> {
    match v {
        Yaml::Str(s) => string(s).map(|why| (s.clone(), why)),
        Yaml::Bool(_, w) => w
            .text()
            .filter(|t| !["True", "TRUE", "False", "FALSE"].contains(t))
            .map(|t| (t.to_string(), "a boolean spelled otherwise")),
        Yaml::Int(_, w) | Yaml::Float(_, w) => w
            .text()
            .map(|t| (t.to_string(), "a number YAML 1.1 may read otherwise")),
        Yaml::Null => None,
        Yaml::Seq(items) => items.iter().find_map(ambiguous),
        Yaml::Map(entries) => entries
            .iter()
            .find_map(|(k, v)| ambiguous(k).or_else(|| ambiguous(v))),
    }
}

/// Why YAML 1.1 would not read `s` as this string.
fn string(s: &str) -> Option<&'static str> {
    if BOOLS_11.contains(&s) {
        return Some("a boolean");
    }
    if matches!(s, "~" | "null" | "Null" | "NULL") {
        return Some("null");
    }
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    let number = digits(body)
        || body.strip_prefix("0x").is_some_and(|h| {
            !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit() || b == b'_')
        })
        || body.strip_prefix("0b").is_some_and(|b| {
            !b.is_empty() && b.bytes().all(|c| c == b'0' || c == b'1' || c == b'_')
        })
        || body.split_once('.').is_some_and(|(i, f)| {
            (i.is_empty() || digits(i))
                && (f.is_empty()
                    || f.bytes()
                        .next()
                        .is_some_and(|c| c.is_ascii_digit() || c == b'_'))
                && !(i.is_empty() && f.is_empty())
                && f.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'+' || c == b'-')
                && !f.contains('.')
        })
        || body.contains(':') && body.split(':').all(digits)
        || [".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"].contains(&body);
    number.then_some("a number")
}

/// The error for an ambiguous value of `key` at `origin`.
pub(super) fn refuse(
    origin: &str,
    key: &str,
    text: &str,
    why: &str,
) -> crate::input::inventory::InputError {
    crate::input::inventory::InputError::new(
        origin,
        format!(
            "{key} holds {}, which YAML 1.1 (Ansible, which runs Pigsty) reads as {why} where it \
             is written plain, and YAML 1.2 (Barn, this reader) may not; the reader keeps no \
             quotes, so even a quoted value is refused: the literal view cannot know which \
             Pigsty sees",
            quote(text)
        ),
        "write the value so both read it alike: true/false for a flag, a plain decimal number, a \
         string that is no YAML 1.1 word",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_yaml_11_reads_otherwise() {
        for s in [
            "no", "ON", "~", "010", "1_000", "0x1f", "0b101", "1:30", "1.5", ".5", "+.inf", "3.",
        ] {
            assert!(string(s).is_some(), "{s}");
        }
        for s in [
            "a",
            "pg-meta",
            "10.10.10.10",
            "10.10.10.10/24",
            "y",
            "n",
            "1e3",
            "i.pigsty",
            "-rw",
            "",
        ] {
            assert!(string(s).is_none(), "{s}");
        }
    }
}
