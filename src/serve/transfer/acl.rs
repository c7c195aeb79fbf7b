//! Who may transfer: `serve --allow-transfer ADDR`, loopback addresses only (like `--listen`). Off by
//! default; a client not on the list is answered by the query rules (REFUSED), exactly as before.

use std::fmt;
use std::net::IpAddr;

/// Refusal of an `--allow-transfer` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotLoopback {
    pub flag: &'static str,
    pub value: String,
}

impl fmt::Display for NotLoopback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: not a loopback address; pigsty-dns stays on loopback (run the secondary on this \
             host and let it face the network)",
            self.flag, self.value
        )
    }
}

/// The addresses allowed to transfer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Acl {
    allowed: Vec<IpAddr>,
}

impl Acl {
    /// Refuses any address outside 127.0.0.0/8 and ::1 (an IPv4-mapped loopback counts as loopback).
    pub fn new(allowed: &[IpAddr]) -> Result<Acl, NotLoopback> {
        if let Some(a) = allowed.iter().find(|a| !is_loopback(a)) {
            return Err(NotLoopback {
                flag: "--allow-transfer",
                value: a.to_string(),
            });
        }
        Ok(Acl {
            allowed: allowed.iter().map(canonical).collect(),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.allowed.is_empty()
    }

    pub fn allows(&self, peer: IpAddr) -> bool {
        self.allowed.contains(&canonical(&peer))
    }
}

pub(crate) fn is_loopback(a: &IpAddr) -> bool {
    canonical(a).is_loopback()
}

/// `::ffff:127.0.0.1` (a dual-stack socket's view of an IPv4 peer) is `127.0.0.1`.
fn canonical(a: &IpAddr) -> IpAddr {
    match a {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(*v6), IpAddr::V4),
        v4 => *v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_only_and_exact_match() {
        let acl = Acl::new(&["127.0.0.2".parse().unwrap(), "::1".parse().unwrap()]).unwrap();
        assert!(acl.allows("127.0.0.2".parse().unwrap()));
        assert!(acl.allows("::ffff:127.0.0.2".parse().unwrap()));
        assert!(acl.allows("::1".parse().unwrap()));
        assert!(!acl.allows("127.0.0.1".parse().unwrap()));
        let e = Acl::new(&["10.0.0.1".parse().unwrap()]).unwrap_err();
        assert_eq!(e.value, "10.0.0.1");
        assert!(Acl::new(&[]).unwrap().is_empty());
    }
}
