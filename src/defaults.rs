//! Every default a user can see, in one place: the listen address, the zone, the TTLs, the TCP limits
//! and the environment variables that override them.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Where `serve` listens and every client command asks when nothing else says: a port nothing else
/// on a developer machine holds (5353 is mDNS: mDNSResponder on every Mac, Avahi on Linux desktops).
pub const LISTEN: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 5354);
/// `LISTEN` spelled for clap's `default_value` (a test keeps the two equal).
pub const LISTEN_STR: &str = "127.0.0.1:5354";
/// The mDNS port: never a good choice for unicast DNS (see the README's "Ports"), and the default of
/// releases before 5354.
pub const MDNS_PORT: u16 = 5353;
/// The port suggested when the chosen one cannot work.
pub const SUGGESTED_PORT: u16 = 5354;

/// `addr` on the suggested port.
pub fn with_suggested_port(addr: SocketAddr) -> SocketAddr {
    SocketAddr::new(addr.ip(), SUGGESTED_PORT)
}

/// Why macOS can never use the mDNS port for the zone, from mDNSResponder's source: a resolver entry
/// on port 5353 goes to `ConfigNonUnicastResolver` (registered only with `options mdns`), so
/// `/etc/resolver/<zone>` on 5353 is ignored; and mDNSResponder holds UDP *:5353 itself.
pub const MACOS_MDNS_WHY: &str = "on macOS port 5353 belongs to mDNSResponder: it holds UDP *:5353, and it never \
     sends unicast DNS to a resolver on port 5353 (such an /etc/resolver entry is treated as multicast DNS and \
     ignored), so the zone's names would leak to the default resolver";

/// Ports a listen address may never use, and why.
pub fn reserved_port(port: u16) -> Option<&'static str> {
    match port {
        53 => Some(
            "53 is the DNS port of the system's own resolver (and mDNSResponder's on macOS); pigsty-dns runs beside it",
        ),
        5355 => Some("5355 is the LLMNR port (systemd-resolved, Windows name resolution)"),
        _ => None,
    }
}

/// The zones served by default: Pigsty's own `.pigsty` names as they are (the portal `i.pigsty`, whose
/// certificate names it) and `pigsty.test`, where a single label goes (DESIGN.md, BARN-PIGSTY.md).
pub const ZONES: &[&str] = &["pigsty.test", "pigsty"];
/// TTL of served records, seconds.
pub const TTL: u32 = 30;
/// Negative-caching TTL (the SOA MINIMUM), seconds.
pub const NEGATIVE_TTL: u32 = 5;
/// Served names in one record set at most (the bound; the server is sized for it). Here, not in
/// `input::records`, because the inventory's derivation is bounded by it too, and records is built from
/// the inventory's types.
pub const MAX_SERVED_NAMES: usize = 100_000;

/// A TCP connection idle this long between messages is closed, seconds; halved while more than half
/// the connection slots are taken (RFC 7766 §6.2.3).
pub const TCP_IDLE_TIMEOUT_SECS: u64 = 10;
/// Concurrent TCP connections; at the cap a new connection evicts the one idle the longest. Sized by
/// memory: an idle connection holds about 10 KiB (its 4 KiB read chunk and frame buffer, its answer
/// scratch, its task), one pipelining at most 16 KiB more of answers, so 2,048 cost 20–53 MiB at the
/// very worst — and 1,000 concurrent clients (dnsperf -c 1000) never meet an eviction.
pub const TCP_MAX_CONNECTIONS: usize = 2048;

pub const ENV_LISTEN: &str = "PIGSTY_DNS_LISTEN";
pub const ENV_ZONE: &str = "PIGSTY_DNS_ZONE";
pub const ENV_STATE_DIR: &str = "PIGSTY_DNS_STATE_DIR";
pub const ENV_LOG: &str = "PIGSTY_DNS_LOG";

/// `$PIGSTY_DNS_LISTEN`'s first address, else `LISTEN`.
pub fn listen_from_env() -> SocketAddr {
    std::env::var(ENV_LISTEN)
        .ok()
        .and_then(|v| v.split(',').next().and_then(|a| a.trim().parse().ok()))
        .unwrap_or(LISTEN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listen_string_is_the_listen_address() {
        assert_eq!(LISTEN_STR.parse::<SocketAddr>().unwrap(), LISTEN);
    }

    #[test]
    fn the_default_is_not_the_mdns_port_and_needs_no_suggestion() {
        assert_eq!(LISTEN.port(), 5354);
        assert_ne!(LISTEN.port(), MDNS_PORT);
        assert_eq!(with_suggested_port(LISTEN), LISTEN);
        assert_eq!(reserved_port(LISTEN.port()), None);
    }
}
