//! Why a zone view cannot be built from a generation: a name of its apex (SOA, NS) that cannot be
//! encoded, or too many NS records. Its own module because both the forward view ([`crate::zone::view`])
//! and the reverse view it holds ([`crate::zone::reverse`]) refuse a generation with it.

use std::fmt;

/// Why a view cannot be built. Each reads after "generation N (file) ", like the store's own refusals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ZoneViewError {
    /// The generation's zone is not a zone name.
    Zone(String),
    /// An SOA or NS name that cannot be written on the wire.
    Name { field: &'static str, name: String },
    /// More NS records than a message can count.
    TooManyNs(usize),
}

impl fmt::Display for ZoneViewError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZoneViewError::Zone(e) => write!(f, "has an invalid zone: {e}"),
            ZoneViewError::Name { field, name } => write!(
                f,
                "has the {field} {name:?}, which cannot be encoded as a DNS name (an empty label, a label \
                 over 63 octets or a name over 255)"
            ),
            ZoneViewError::TooManyNs(n) => {
                write!(f, "has {n} NS names; a response can count at most 65535")
            }
        }
    }
}

impl std::error::Error for ZoneViewError {}
