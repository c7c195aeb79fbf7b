//! sha256 as lowercase hex: the one digest every file, plan and generation uses.

use sha2::{Digest, Sha256};

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A digest's bytes as lowercase hex (also for a hash fed piece by piece).
pub fn hex(digest: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(2 * digest.len());
    for b in digest {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The digest of a file's bytes, or None when it cannot be read.
pub fn sha256_file(path: &std::path::Path) -> Option<String> {
    std::fs::read(path).ok().map(|b| sha256_hex(&b))
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_vector() {
        assert_eq!(
            super::sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
