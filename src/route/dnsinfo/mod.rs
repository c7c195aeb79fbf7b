//! What macOS's resolver stack makes of the route, read the way configd and mDNSResponder do (facts
//! from configd's `dnsinfo/dnsinfo_flatfile.c` and `dnsinfo_logging.h`, mDNSResponder's
//! `mDNSMacOSX.c`): the resolver blocks `scutil --dns` prints, configd's reading of `/etc/resolver`,
//! and every other resolver that claims the zone.
//!
//! `scutil --dns` prints a `DNS configuration` section, then `DNS configuration (for scoped queries)`
//! and `(for service-specific queries)`, each a list of `resolver #N` blocks (numbered from 1 in each
//! section) of `  key : value` lines: `domain   :`, `search domain[i] :`, `nameserver[i] :`,
//! `options  :`, `port     :` (only when not 0), `timeout  :`, `if_index : N (name)`, `flags    :`,
//! `reach    :`, `order    :`.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;

use serde::Serialize;

use super::adapter::macos::{self, SCUTIL};
use super::claim::Claim;
use super::files::under;
use crate::defaults::MDNS_PORT;
use crate::sys::{Runner, argv};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Section {
    /// `DNS configuration`: what unscoped queries use, `/etc/resolver` files included.
    #[default]
    Default,
    /// `DNS configuration (for scoped queries)`: per-interface resolvers (a VPN's among them).
    Scoped,
    /// `DNS configuration (for service-specific queries)`.
    ServiceSpecific,
}

/// One `resolver #N` block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Resolver {
    pub section: Section,
    pub number: u32,
    pub domain: Option<String>,
    pub search: Vec<String>,
    pub nameservers: Vec<String>,
    pub options: Option<String>,
    pub port: Option<u16>,
    /// `17 (utun4)`.
    pub if_index: Option<String>,
    /// `Scoped`, `Supplemental`, `Request A records`, ...
    pub flags: Vec<String>,
    pub order: Option<u32>,
}

/// A domain as configd stores it: no trailing dots; compared without regard to case.
pub fn norm(d: &str) -> String {
    d.trim_end_matches('.').to_ascii_lowercase()
}

fn same_ip(a: &str, b: IpAddr) -> bool {
    a.parse::<IpAddr>().is_ok_and(|a| a == b)
}

impl Resolver {
    pub fn serves(&self, zone: &str) -> bool {
        self.domain
            .as_deref()
            .is_some_and(|d| norm(d) == norm(zone))
    }

    /// mDNSResponder sends unicast DNS to this resolver: it has a nameserver and is not on port 5353.
    pub fn is_unicast(&self) -> bool {
        !self.nameservers.is_empty() && self.port != Some(MDNS_PORT)
    }

    /// The route's own block: an unscoped resolver for `zone` whose first nameserver and port are
    /// the daemon's.
    pub fn is_route(&self, zone: &str, server: SocketAddr) -> bool {
        self.section == Section::Default
            && self.serves(zone)
            && self
                .nameservers
                .first()
                .is_some_and(|n| same_ip(n, server.ip()))
            && self.port == Some(server.port())
    }

    /// configd's `Request A records` flag (`DNS_RESOLVER_FLAGS_REQUEST_A_RECORDS`, 0x0002): without it
    /// mDNSResponder answers the A question of a getaddrinfo with default hints as unusable, locally.
    pub fn requests_a(&self) -> bool {
        self.flags.iter().any(|f| f == FLAG_A)
    }

    /// `resolver #9 (for scoped queries): nameserver 10.8.0.1, if_index 17 (utun4), flags Scoped`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.nameservers.is_empty() {
            parts.push(format!("nameserver {}", self.nameservers.join(" ")));
        }
        if let Some(p) = self.port {
            parts.push(format!("port {p}"));
        }
        if let Some(o) = &self.options {
            parts.push(format!("options {o}"));
        }
        if let Some(i) = &self.if_index {
            parts.push(format!("if_index {i}"));
        }
        if !self.flags.is_empty() {
            parts.push(format!("flags {}", self.flags.join(", ")));
        }
        let section = match self.section {
            Section::Default => "",
            Section::Scoped => " (for scoped queries)",
            Section::ServiceSpecific => " (for service-specific queries)",
        };
        format!("resolver #{}{section}: {}", self.number, parts.join(", "))
    }
}

/// The flag names as `dnsinfo_logging.h` prints them.
pub const FLAG_A: &str = "Request A records";

/// Every resolver block of `scutil --dns` (also `scutil -d --dns`, whose flags carry a hex prefix).
pub fn parse(text: &str) -> Vec<Resolver> {
    let mut out: Vec<Resolver> = Vec::new();
    let mut section = Section::Default;
    let mut cur: Option<Resolver> = None;
    // Split on `\n` and trim blanks only: a value keeps a `\r` configd read from a CRLF file (a domain
    // `pigsty.test\r` is another name).
    for line in text.split('\n') {
        let t = line.trim_matches(' ');
        if let Some(rest) = t.strip_prefix("DNS configuration") {
            out.extend(cur.take());
            section = match rest.trim() {
                "(for scoped queries)" => Section::Scoped,
                "(for service-specific queries)" => Section::ServiceSpecific,
                _ => Section::Default,
            };
            continue;
        }
        if let Some(n) = t.strip_prefix("resolver #") {
            out.extend(cur.take());
            cur = Some(Resolver {
                section,
                number: n.trim().parse().unwrap_or(0),
                ..Resolver::default()
            });
            continue;
        }
        let Some(r) = cur.as_mut() else { continue };
        // `  flags    : ` has an empty value (trimmed to `flags    :`).
        let Some((key, value)) = t
            .split_once(" : ")
            .or_else(|| t.strip_suffix(" :").map(|k| (k, "")))
        else {
            continue;
        };
        let value = value.trim_matches(' ');
        match key.trim() {
            "domain" => r.domain = Some(value.to_string()),
            "options" => r.options = Some(value.to_string()),
            "port" => r.port = value.parse().ok(),
            "if_index" => r.if_index = Some(value.to_string()),
            "order" => r.order = value.parse().ok(),
            "flags" => r.flags = parse_flags(value),
            k if k.starts_with("nameserver[") => r.nameservers.push(value.to_string()),
            k if k.starts_with("search domain[") => r.search.push(value.to_string()),
            _ => {}
        }
    }
    out.extend(cur);
    out
}

/// configd's resolver flags (`dnsinfo/dnsinfo.h`), in the order `dnsinfo_logging.h` prints them.
const FLAG_BITS: [(u32, &str); 5] = [
    (0x1000, "Scoped"),
    (0x2000, "Service-specific"),
    (0x4000, "Supplemental"),
    (0x0002, FLAG_A),
    (0x0004, "Request AAAA records"),
];

/// `Scoped, Request A records`, or with `-d` `0x00001002 (Scoped, Request A records)`: then the hex
/// value is what counts (the names are made from it), unknown bits kept as `0x…`.
fn parse_flags(v: &str) -> Vec<String> {
    let hex = v
        .split_whitespace()
        .next()
        .and_then(|w| w.strip_prefix("0x"))
        .and_then(|h| u32::from_str_radix(h, 16).ok());
    if let Some(bits) = hex {
        let mut names: Vec<String> = FLAG_BITS
            .iter()
            .filter(|(b, _)| bits & b != 0)
            .map(|(_, n)| n.to_string())
            .collect();
        let rest = FLAG_BITS.iter().fold(bits, |r, (b, _)| r & !b);
        if rest != 0 {
            names.push(format!("0x{rest:08x}"));
        }
        return names;
    }
    v.split(',')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(str::to_string)
        .collect()
}

/// Does `scutil --dns` show the route? Ok(detail) or Err(why not).
pub fn route_block(
    resolvers: &[Resolver],
    zone: &str,
    server: SocketAddr,
) -> Result<String, String> {
    if let Some(r) = resolvers.iter().find(|r| r.is_route(zone, server)) {
        if !r.requests_a() {
            return Err(format!(
                "scutil --dns lists {} for domain {zone}, without `{FLAG_A}`: mDNSResponder answers \
                 the A lookups of ordinary programs (getaddrinfo's default hints) as unusable without \
                 asking the daemon; the file needs its `flags {}` line",
                r.describe(),
                macos::FLAGS
            ));
        }
        return Ok(format!(
            "scutil --dns lists {} for domain {zone}",
            r.describe()
        ));
    }
    let for_zone: Vec<String> = resolvers
        .iter()
        .filter(|r| r.serves(zone))
        .map(Resolver::describe)
        .collect();
    if for_zone.is_empty() {
        Err(format!(
            "scutil --dns lists no resolver for domain {zone}: configd has not read /etc/resolver/{zone}"
        ))
    } else {
        Err(format!(
            "scutil --dns lists no unscoped resolver for {zone} with nameserver {} and port {} (only: {})",
            server.ip(),
            server.port(),
            for_zone.join("; ")
        ))
    }
}

mod flatfile;

pub use flatfile::{ResolverFile, read_dir, read_file};

/// `domain` is `zone` or a name under it: mDNSResponder picks the resolver with the longest matching
/// domain, so one for `db.pigsty.test` takes that subtree away from the zone's.
pub fn within(domain: &str, zone: &str) -> bool {
    crate::dns::name::in_zone(&norm(domain), &norm(zone))
}

impl ResolverFile {
    /// The `scutil --dns` block configd makes of this file.
    fn explains(&self, r: &Resolver) -> bool {
        r.section == Section::Default
            && r.domain.as_deref().map(norm) == self.domain.as_deref().map(norm)
            && r.port == self.port.filter(|p| *p != 0)
            && r.nameservers.first().and_then(|n| n.parse::<IpAddr>().ok())
                == self.nameservers.first().copied()
    }

    /// What configd makes of it, for a claim on `zone`.
    fn claim(&self, zone: &str) -> Claim {
        let shown = Path::new(macos::DIR).join(&self.name);
        let domain = self.domain.as_deref().unwrap_or_default();
        if self.ours && macos::is_temp_name(&self.name) {
            return Claim::resolver(
                format!(
                    "{}: a temporary file an interrupted pigsty-dns write left behind; configd reads it as a resolver for {domain}",
                    shown.display()
                ),
                true,
            );
        }
        let inside = if norm(domain) == norm(zone) {
            String::new()
        } else {
            format!(", inside {zone}: lookups under it go there, the longest domain winning")
        };
        Claim::resolver(
            format!(
                "{}: configd reads it as a resolver for {domain}{inside} ({}nameserver {}{})",
                shown.display(),
                if self.domain_line {
                    format!("its `domain {domain}` line; ")
                } else {
                    String::new()
                },
                if self.nameservers.is_empty() {
                    "none".into()
                } else {
                    self.nameservers
                        .iter()
                        .map(IpAddr::to_string)
                        .collect::<Vec<_>>()
                        .join(" ")
                },
                self.port.map(|p| format!(", port {p}")).unwrap_or_default()
            ),
            false,
        )
    }
}

/// Every resolver for `zone` or a domain under it besides the route's own file: other entries of
/// `/etc/resolver` (by their `domain` line or their name, dotfiles included, read as configd reads
/// them) and blocks of `scutil --dns` no file there explains (a VPN's supplemental or scoped
/// resolver, a configuration profile).
pub fn claimants(root: &Path, runner: &mut dyn Runner, zone: &str) -> Vec<Claim> {
    let files = read_dir(&under(root, macos::DIR));
    let target = macos::path_for(zone);
    let target_name = Path::new(&target)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut claims: Vec<Claim> = files
        .iter()
        .filter(|f| f.domain.as_deref().is_some_and(|d| within(d, zone)))
        .filter(|f| f.name != target_name)
        .map(|f| f.claim(zone))
        .collect();
    let out = runner.run(&argv(&[SCUTIL, "--dns"]));
    if out.ok() {
        for r in parse(&out.stdout)
            .iter()
            .filter(|r| r.domain.as_deref().is_some_and(|d| within(d, zone)))
        {
            if files.iter().any(|f| f.explains(r)) {
                continue;
            }
            claims.push(Claim::resolver(
                format!(
                    "scutil --dns {}: {} for {} too",
                    r.describe(),
                    if r.flags.iter().any(|f| f == "Supplemental" || f == "Scoped")
                        || r.if_index.is_some()
                    {
                        "a VPN or network service resolves"
                    } else {
                        "another configuration resolves"
                    },
                    r.domain.as_deref().unwrap_or(zone)
                ),
                false,
            ));
        }
    }
    claims
}

/// [`claimants`] of every zone the route carries: `zones`, and the zones of the route's own files in
/// `/etc/resolver` (the reverse zone's), each claim once.
pub fn route_claimants(root: &Path, runner: &mut dyn Runner, zones: &[String]) -> Vec<Claim> {
    let mut zones = zones.to_vec();
    for f in read_dir(&under(root, macos::DIR)) {
        if let Some(d) = f.domain.filter(|_| f.ours && !macos::is_temp_name(&f.name))
            && !zones.iter().any(|z| norm(z) == norm(&d))
        {
            zones.push(d);
        }
    }
    let mut claims: Vec<Claim> = Vec::new();
    for z in &zones {
        for c in claimants(root, runner, z) {
            if !claims.contains(&c) {
                claims.push(c);
            }
        }
    }
    claims
}

#[cfg(test)]
mod tests;
