//! What of a route is in place: the journal's record turned back into adapter parameters, and, when
//! the journal is gone, pigsty-dns's files found by their ownership marker at the places adapters write.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use super::adapter::link::DEFAULT_LINK_ADDRESS;
use super::adapter::{self, AdapterName, LinkKind, Params, Variant, link::DEFAULT_LINK, macos};
use super::detect::Facts;
use super::files::{self, Owned};
use super::journal::{self, Journal};
use crate::defaults::{LISTEN, ZONES};

fn cidr(s: &str) -> Option<(Ipv4Addr, u8)> {
    let (a, p) = s.split_once('/')?;
    Some((a.parse().ok()?, p.parse().ok()?))
}

/// Params good enough for undo and "is it gone" checks when nothing records them: the defaults, and
/// this host's programs.
pub fn default_params(f: &Facts) -> Params {
    let (address, prefix) = cidr(DEFAULT_LINK_ADDRESS).expect("the default link address is a CIDR");
    Params {
        zones: ZONES.iter().map(|z| z.to_string()).collect(),
        reverse: None,
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
        zones: j.zones(),
        reverse: j.reverse_zone.clone(),
        server: j.server.parse::<SocketAddr>().unwrap_or(base.server),
        link: j.link.clone().unwrap_or(base.link.clone()),
        address,
        prefix,
        kind: j.link_kind.unwrap_or(base.kind),
        variant: j.variant.unwrap_or(base.variant),
        ..base
    }
}

/// The daemon's address as a file of any adapter spells it: `nameserver` and `port` lines (macOS),
/// `DNS=ADDR` (resolved), `server=/ZONE/IP#PORT` (dnsmasq), `resolvectl dns LINK ADDR` (the runtime
/// unit).
pub fn server_in(text: &str) -> Option<SocketAddr> {
    let mut ns: Option<IpAddr> = None;
    let mut port: Option<u16> = None;
    for line in text.lines() {
        let l = line.trim();
        let words: Vec<&str> = l.split_whitespace().collect();
        match words.as_slice() {
            ["nameserver", ip] => ns = ns.or(ip.parse().ok()),
            ["port", p] => port = port.or(p.parse().ok()),
            _ => {}
        }
        if let Some(a) = l.strip_prefix("DNS=").and_then(|v| v.parse().ok()) {
            return Some(a);
        }
        if let Some(rest) = l.strip_prefix("server=/") {
            let (_, target) = rest.split_once('/')?;
            let (ip, p) = target.split_once('#').unwrap_or((target, "53"));
            return Some(SocketAddr::new(ip.parse().ok()?, p.parse().ok()?));
        }
        let after_dns = words
            .windows(2)
            .position(|w| w[1] == "dns" && w[0].ends_with("resolvectl"))
            .and_then(|i| words.get(i + 3));
        if let Some(a) = after_dns.and_then(|a| a.parse().ok()) {
            return Some(a);
        }
    }
    ns.map(|ip| SocketAddr::new(ip, port.unwrap_or(53)))
}

/// The reverse zone a file of any adapter routes: the `*.in-addr.arpa` word of its `domain` line,
/// `Domains=` (as `~ZONE`), `server=/ZONE/` or `resolvectl domain` line.
pub fn reverse_in(text: &str) -> Option<String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(|l| l.split(|c: char| c.is_whitespace() || matches!(c, '/' | '=' | '~')))
        .find(|w| w.ends_with(".in-addr.arpa"))
        .map(str::to_string)
}

/// Params for files found by marker (no journal): the marker's link, the server the files name (not
/// the default: a route installed by an older release may use another port), and the networkd
/// variant when a `.netdev` is among them.
pub fn params_from_markers(found: &[(PathBuf, Owned)], f: &Facts) -> Params {
    let base = default_params(f);
    let networkd = found
        .iter()
        .any(|(p, _)| p.extension().is_some_and(|e| e == "netdev"));
    let server = found
        .iter()
        .filter_map(|(p, _)| std::fs::read_to_string(p).ok())
        .find_map(|t| server_in(&t))
        .unwrap_or(base.server);
    let reverse = found
        .iter()
        .filter_map(|(p, _)| std::fs::read_to_string(p).ok())
        .find_map(|t| reverse_in(&t));
    Params {
        server,
        reverse,
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

/// Whether anything of a route is in place: what `service uninstall` asks before it stops the
/// daemon, and `route status --json` tells `deploy/debian/prerm`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Presence {
    /// A journal, or files with the ownership marker without one.
    pub installed: bool,
    pub adapter: Option<AdapterName>,
    /// The server the route sends the zone to, from its journal.
    pub server: Option<String>,
}

/// What of a route is in place under `root`, by its journal in `journal_dir`, else by the ownership
/// marker. An unreadable journal counts as installed: never let a teardown assume the route is gone.
pub fn presence(root: &Path, journal_dir: &Path) -> Presence {
    let (installed, adapter, server) = match journal::read(journal_dir) {
        Ok(Some(j)) => (true, Some(j.adapter), Some(j.server)),
        Ok(None) => (!orphans(root).is_empty(), None, None),
        Err(_) => (true, None, None),
    };
    Presence {
        installed,
        adapter,
        server,
    }
}

/// Without a journal: pigsty-dns's files at the places it writes, found by their marker.
pub fn orphans(root: &Path) -> Vec<(PathBuf, Owned)> {
    let (mut cands, dirs) = adapter::places(ZONES);
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

/// Temporary files an interrupted write left behind for a macOS resolver file, of any zone (the
/// zone's, the reverse zone's of whichever /24, another `--zone`'s), found by their name and the
/// ownership marker, in `/etc/resolver` (where older releases put them, and where each is a live
/// resolver) and in `/private/etc` (where they go now).
pub fn stale_temps(root: &Path) -> Vec<PathBuf> {
    let is_temp = macos::is_temp_name;
    let mut found = Vec::new();
    for dir in [macos::DIR, macos::TEMP_DIR] {
        let Ok(rd) = std::fs::read_dir(files::under(root, dir)) else {
            continue;
        };
        for e in rd.flatten() {
            let ours = is_temp(&e.file_name().to_string_lossy())
                && std::fs::read_to_string(e.path()).is_ok_and(|t| t.starts_with(files::MARKER));
            if ours {
                found.push(e.path());
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_adapter_names_its_server() {
        let want: SocketAddr = "127.0.0.1:5399".parse().unwrap();
        for body in [
            "domain pigsty.test\nnameserver 127.0.0.1\nport 5399\n",
            "[Delegate]\nDNS=127.0.0.1:5399\nDomains=~pigsty.test\n",
            "server=/pigsty.test/127.0.0.1#5399\n",
            "ExecStart=-/usr/sbin/ip link add pigsty-dns0 type dummy\nExecStart=/usr/bin/resolvectl dns pigsty-dns0 127.0.0.1:5399\n",
        ] {
            assert_eq!(
                server_in(&files::wrap("x", None, body)),
                Some(want),
                "{body}"
            );
        }
        assert_eq!(server_in("[NetDev]\nName=pigsty-dns0\n"), None);
    }

    #[test]
    fn every_adapter_names_its_reverse_zone() {
        for body in [
            "domain 10.10.10.in-addr.arpa\nnameserver 127.0.0.1\nport 5399\n",
            "[Delegate]\nDNS=127.0.0.1:5399\nDomains=~pigsty.test ~10.10.10.in-addr.arpa\n",
            "server=/pigsty.test/127.0.0.1#5399\nserver=/10.10.10.in-addr.arpa/127.0.0.1#5399\n",
            "ExecStart=/usr/bin/resolvectl domain pigsty-dns0 ~pigsty.test ~10.10.10.in-addr.arpa\n",
        ] {
            assert_eq!(
                reverse_in(&files::wrap("x", None, body)).as_deref(),
                Some("10.10.10.in-addr.arpa"),
                "{body}"
            );
        }
        assert_eq!(reverse_in("[Delegate]\nDomains=~pigsty.test\n"), None);
    }

    #[test]
    fn the_default_link_address_is_a_cidr() {
        assert_eq!(
            cidr(DEFAULT_LINK_ADDRESS),
            Some((Ipv4Addr::new(198, 18, 53, 53), 32))
        );
    }
}
