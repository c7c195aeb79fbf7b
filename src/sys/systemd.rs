//! systemd's version, as `systemctl --version` and `resolvectl --version` print it.

use serde::Serialize;

/// `systemd 252 (252.39-1~deb12u2)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SystemdVersion {
    pub major: u32,
    /// The stable point release when the distribution's string tells it (252.39 → Some(39)).
    pub point: Option<u32>,
    pub raw: String,
}

impl SystemdVersion {
    pub fn parse(text: &str) -> Option<SystemdVersion> {
        let line = text.lines().next()?.trim();
        let mut words = line.split_whitespace();
        if words.next()? != "systemd" {
            return None;
        }
        let first = words.next()?;
        // "252", and also "257.1" as some builds print it.
        let digits: String = first.chars().take_while(|c| c.is_ascii_digit()).collect();
        let major: u32 = digits.parse().ok()?;
        // "(252.39-1~deb12u2)" → 39; "(252-16.el9_2)" → none (cannot tell the backport level).
        let point = words.next().and_then(|w| {
            let inner = w.trim_start_matches('(');
            let rest = inner.strip_prefix(&format!("{major}."))?;
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            digits.parse().ok()
        });
        Some(SystemdVersion {
            major,
            point,
            raw: line.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debian_and_fedora_strings() {
        let v = SystemdVersion::parse("systemd 252 (252.39-1~deb12u2)\n+PAM +AUDIT").unwrap();
        assert_eq!((v.major, v.point), (252, Some(39)));
        let v = SystemdVersion::parse("systemd 252 (252-16.el9_2)").unwrap();
        assert_eq!((v.major, v.point), (252, None));
        assert_eq!(SystemdVersion::parse("systemd 257").unwrap().major, 257);
        assert!(SystemdVersion::parse("launchd 1").is_none());
        assert!(SystemdVersion::parse("").is_none());
    }
}
