//! What of a route is in place: the journal's record turned back into adapter parameters, and, when
//! the journal is gone, pigsty-dns's files found by their ownership marker at the places adapters write.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use super::adapter::link::DEFAULT_LINK_ADDRESS;
use super::adapter::{self, LinkKind, Params, Variant, link::DEFAULT_LINK};
use super::detect::Facts;
use super::files::{self, Owned};
use super::journal::Journal;
use crate::defaults::{LISTEN, ZONE};

fn cidr(s: &str) -> Option<(Ipv4Addr, u8)> {
    let (a, p) = s.split_once('/')?;
    Some((a.parse().ok()?, p.parse().ok()?))
}

/// Params good enough for undo and "is it gone" checks when nothing records them: the defaults, and
/// this host's programs.
pub fn default_params(f: &Facts) -> Params {
    let (address, prefix) = cidr(DEFAULT_LINK_ADDRESS).expect("the default link address is a CIDR");
    Params {
        zone: ZONE.into(),
        server: LISTEN,
        link: DEFAULT_LINK.into(),
        address,
        prefix,
        kind: LinkKind::Dummy,
        variant: Variant::Runtime,
        ip: f.ip_path.clone(),
        resolvectl: f.resolvectl_path.clone(),
        systemd_booted: f.systemd_booted,
        nm_running: f.nm_dns_mode.is_some(),
    }
}

/// Params good enough for undo and "is it gone" checks, from the journal.
pub fn params_from(j: &Journal, f: &Facts) -> Params {
    let base = default_params(f);
    let (address, prefix) = j
        .link_address
        .as_deref()
        .and_then(cidr)
        .unwrap_or((base.address, base.prefix));
    Params {
        zone: j.zone.clone(),
        server: j.server.parse::<SocketAddr>().unwrap_or(base.server),
        link: j.link.clone().unwrap_or(base.link.clone()),
        address,
        prefix,
        kind: j.link_kind.unwrap_or(base.kind),
        variant: j.variant.unwrap_or(base.variant),
        ..base
    }
}

/// Params for files found by marker (no journal): the marker's link, and the networkd variant when
/// a `.netdev` is among them.
pub fn params_from_markers(found: &[(PathBuf, Owned)], f: &Facts) -> Params {
    let base = default_params(f);
    let networkd = found
        .iter()
        .any(|(p, _)| p.extension().is_some_and(|e| e == "netdev"));
    Params {
        link: found
            .first()
            .and_then(|(_, o)| o.link.clone())
            .unwrap_or(base.link.clone()),
        variant: if networkd {
            Variant::Networkd
        } else {
            Variant::Runtime
        },
        ..base
    }
}

/// Without a journal: pigsty-dns's files at the places it writes, found by their marker.
pub fn orphans(root: &Path) -> Vec<(PathBuf, Owned)> {
    let (mut cands, dirs) = adapter::places(ZONE);
    for dir in dirs {
        if let Ok(rd) = std::fs::read_dir(files::under(root, dir)) {
            for e in rd.flatten() {
                cands.push(format!("{dir}/{}", e.file_name().to_string_lossy()));
            }
        }
    }
    cands.sort();
    cands.dedup();
    cands
        .into_iter()
        .filter_map(|c| {
            let p = files::under(root, &c);
            let text = std::fs::read_to_string(&p).ok()?;
            files::owned(&text).map(|o| (p, o))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_link_address_is_a_cidr() {
        assert_eq!(
            cidr(DEFAULT_LINK_ADDRESS),
            Some((Ipv4Addr::new(198, 18, 53, 53), 32))
        );
    }
}
