//! DNS name rules for the input, case folding, and the mapping of input names into the served zone.

use std::fmt;

use crate::error::{AppError, Class};
use crate::output::text::quote;

mod zones;
pub use zones::Zones;

/// The longest name in presentation form without the trailing dot (RFC 1035 §2.3.4: 255 octets on the wire).
pub const MAX_NAME_LEN: usize = 253;
/// The longest label (RFC 1035 §2.3.4).
pub const MAX_LABEL_LEN: usize = 63;

/// Why a name was refused; the caller adds where the name came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameError {
    pub name: String,
    pub reason: String,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", quote(&self.name), self.reason)
    }
}

fn refuse(name: &str, reason: impl Into<String>) -> NameError {
    NameError {
        name: name.to_string(),
        reason: reason.into(),
    }
}

/// Validates a host name (LDH labels, RFC 952/1123) and returns it lowercased.
/// Nothing is trimmed or repaired: a trailing dot, a wildcard or an underscore is refused, not dropped.
pub fn fold_host_name(raw: &str) -> Result<String, NameError> {
    check_host_name(raw)?;
    Ok(raw.to_ascii_lowercase())
}

/// [`fold_host_name`]'s checks without the lowercased copy.
pub fn check_host_name(raw: &str) -> Result<(), NameError> {
    // One pass over the bytes for the names that pass (all of them, at 100,000 a file); the rules
    // below, one by one, say what is wrong with any other.
    // A name with an `xn--` in it takes the long way, where its A-labels are decoded.
    let b = raw.as_bytes();
    if is_ldh_name(b) && !b.windows(4).any(|w| w.eq_ignore_ascii_case(b"xn--")) {
        return Ok(());
    }
    explain_host_name(raw)
}

/// LDH labels of 1-63 bytes, no label starting or ending with `-`, at most 253 bytes, no trailing dot.
fn is_ldh_name(b: &[u8]) -> bool {
    scan_ldh(b, false)
}

/// Byte classes for [`scan_ldh`]: one table lookup per byte instead of a chain of range tests.
const OTHER: u8 = 0;
const LOWER: u8 = 1;
const UPPER: u8 = 2;
const HYPHEN: u8 = 3;
const DOT: u8 = 4;
static CLASS: [u8; 256] = {
    let mut t = [OTHER; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = match i as u8 {
            b'a'..=b'z' | b'0'..=b'9' => LOWER,
            b'A'..=b'Z' => UPPER,
            b'-' => HYPHEN,
            b'.' => DOT,
            _ => OTHER,
        };
        i += 1;
    }
    t
};

/// [`is_ldh_name`] in one pass over the bytes; with `lower_only`, an upper-case letter fails it too.
fn scan_ldh(b: &[u8], lower_only: bool) -> bool {
    if b.is_empty() || b.len() > MAX_NAME_LEN {
        return false;
    }
    let mut start = 0;
    // The class before the current byte; a name starts as if after a dot.
    let mut prev = DOT;
    for (i, &c) in b.iter().enumerate() {
        let k = CLASS[usize::from(c)];
        match k {
            LOWER => {}
            UPPER if !lower_only => {}
            // Not at a label's start.
            HYPHEN if prev != DOT => {}
            // A label ends: not empty, not ending with `-`, at most 63 bytes.
            DOT if prev != DOT && prev != HYPHEN && i - start <= MAX_LABEL_LEN => start = i + 1,
            _ => return false,
        }
        prev = k;
    }
    prev != DOT && prev != HYPHEN && b.len() - start <= MAX_LABEL_LEN
}

/// The rules of [`check_host_name`] one by one, so that the first that fails names the problem.
fn explain_host_name(raw: &str) -> Result<(), NameError> {
    if raw.is_empty() {
        return Err(refuse(raw, "is empty"));
    }
    if let Some(c) = raw.chars().find(|c| !c.is_ascii()) {
        return Err(refuse(
            raw,
            format!(
                "has the non-ASCII character {c:?}; give the name in ASCII (punycode for IDNs)"
            ),
        ));
    }
    if raw.ends_with('.') {
        return Err(refuse(
            raw,
            "ends with a dot; give the name without the trailing dot",
        ));
    }
    if raw.len() > MAX_NAME_LEN {
        return Err(refuse(
            raw,
            format!(
                "is {} characters long; a name has at most {MAX_NAME_LEN}",
                raw.len()
            ),
        ));
    }
    for label in raw.split('.') {
        check_label(raw, label)?;
    }
    Ok(())
}

fn check_label(name: &str, label: &str) -> Result<(), NameError> {
    if label.is_empty() {
        return Err(refuse(name, "has an empty label (\"..\" or a leading dot)"));
    }
    if label == "*" || label.contains('*') {
        return Err(refuse(
            name,
            "contains a wildcard; wildcards are not served",
        ));
    }
    if label.contains('_') {
        return Err(refuse(
            name,
            "contains \"_\"; host names use letters, digits and \"-\" only",
        ));
    }
    if label.len() > MAX_LABEL_LEN {
        return Err(refuse(
            name,
            format!(
                "has the label {} of {} characters; a label has at most {MAX_LABEL_LEN}",
                quote(label),
                label.len()
            ),
        ));
    }
    if let Some(c) = label
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-'))
    {
        return Err(refuse(
            name,
            format!("contains {c:?}; host names use letters, digits and \"-\" only"),
        ));
    }
    if label.starts_with('-') || label.ends_with('-') {
        return Err(refuse(
            name,
            format!(
                "has the label {}, which starts or ends with \"-\"",
                quote(label)
            ),
        ));
    }
    // An A-label claims to encode an international name: one that does not (`xn--zz`) is refused,
    // as IDNA-aware resolvers and browsers refuse it.
    if label.len() > 4
        && label[..4].eq_ignore_ascii_case("xn--")
        && !crate::dns::punycode::is_a_label(&label[4..])
    {
        return Err(refuse(
            name,
            format!(
                "has the label {}, which starts with xn-- but is not valid punycode",
                quote(label)
            ),
        ));
    }
    Ok(())
}

/// Barn's node-name rule: one lowercase label, `^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`. Not folded: Barn
/// rejects upper case in node names, and the same inventory must give the same node names in both.
pub fn check_node_name(raw: &str) -> Result<(), NameError> {
    if raw.contains('.') {
        return Err(refuse(
            raw,
            "has a dot; a node name is a single label (put dotted names in vm_alias)",
        ));
    }
    if raw.chars().any(|c| c.is_ascii_uppercase()) {
        return Err(refuse(raw, "has upper case; a node name is lowercase"));
    }
    fold_host_name(raw).map(|_| ())
}

/// A validated zone name: lowercase, no trailing dot, at least one label.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Zone(String);

impl Zone {
    pub fn parse(raw: &str) -> Result<Zone, NameError> {
        // A trailing dot is harmless for a zone given on the command line.
        let trimmed = raw.strip_suffix('.').unwrap_or(raw);
        Ok(Zone(fold_host_name(trimmed)?))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Zone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a valid, lowercased input name lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// Served under this fully qualified name (lowercase, no trailing dot).
    Served(String),
    /// A dotted name outside the zone, such as Pigsty's `i.pigsty`: valid input, listed, not served.
    OutsideZone,
}

/// Whether a folded dotted name is the zone `z` (folded too) or a name under it: the one test of "a
/// name at or under the zone".
pub fn in_zone(name: &str, z: &str) -> bool {
    in_zone_bytes(name.as_bytes(), z.as_bytes())
}

/// [`in_zone`] on the bytes of a name as the query path holds it (wire text, lowercased).
pub fn in_zone_bytes(name: &[u8], z: &[u8]) -> bool {
    name == z
        || (name.len() > z.len() && name.ends_with(z) && name[name.len() - z.len() - 1] == b'.')
}

/// The `--zone` values (repeated, or listed in the environment variable), checked as a set (exit 2
/// when one is not a zone name, or the set is refused: see [`Zones::parse`]).
pub fn zones_arg<S: AsRef<str>>(raw: &[S]) -> Result<Zones, AppError> {
    Zones::parse(raw).map_err(|e| {
        AppError::new(
            Class::Usage,
            format!("--zone {e}"),
            format!(
                "give zones such as --zone {} --zone {} (or {}={})",
                crate::defaults::ZONES[0],
                crate::defaults::ZONES[1],
                crate::defaults::ENV_ZONE,
                crate::defaults::ZONES.join(",")
            ),
        )
    })
}

/// A `--zone` value, checked (exit 2 when it is not a zone name).
pub fn zone_arg(raw: &str) -> Result<Zone, AppError> {
    Zone::parse(raw).map_err(|e| {
        AppError::new(
            Class::Usage,
            format!("--zone {e}"),
            "give a zone such as pigsty.test",
        )
    })
}

#[cfg(test)]
mod tests;
