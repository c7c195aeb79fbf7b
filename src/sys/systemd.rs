//! systemd's version, as `systemctl --version` and `resolvectl --version` print it, and a unit's state
//! as `systemctl show` prints it (one reader for the service commands and the route's lifecycle).

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

/// What `systemctl show -p SHOW_PROPS` says of a unit, in systemd's own words (passed through to
/// reports as they are: systemd has more states than this program needs to tell apart).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UnitState {
    pub load: String,
    pub active: String,
    pub sub: String,
    /// `UnitFileState`.
    pub enabled: String,
    pub pid: u32,
    pub restarts: u32,
    pub result: String,
    /// The main process was started at least once since boot (`ExecMainStartTimestampMonotonic`).
    #[serde(skip)]
    pub ever_started: bool,
}

impl UnitState {
    pub fn is_active(&self) -> bool {
        self.active == "active"
    }

    /// systemd knows a unit file for it.
    pub fn is_loaded(&self) -> bool {
        !self.load.is_empty() && self.load != "not-found"
    }
}

/// The properties [`parse_show`] reads, for `systemctl show -p`.
pub const SHOW_PROPS: &str = "LoadState,ActiveState,SubState,UnitFileState,MainPID,NRestarts,Result,ExecMainStartTimestampMonotonic";

/// `Key=Value` lines of `systemctl show`; what it does not print stays empty (zero).
pub fn parse_show(text: &str) -> UnitState {
    let mut s = UnitState::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let v = v.trim().to_string();
        match k.trim() {
            "LoadState" => s.load = v,
            "ActiveState" => s.active = v,
            "SubState" => s.sub = v,
            "UnitFileState" => s.enabled = v,
            "MainPID" => s.pid = v.parse().unwrap_or(0),
            "NRestarts" => s.restarts = v.parse().unwrap_or(0),
            "Result" => s.result = v,
            "ExecMainStartTimestampMonotonic" => s.ever_started = v != "0" && !v.is_empty(),
            _ => {}
        }
    }
    s
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
