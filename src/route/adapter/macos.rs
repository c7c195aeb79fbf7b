//! macos-resolver: /etc/resolver/<zone>, picked up by configd through FSEvents. No `search` line: it
//! would make every bare hostname lookup hang while the daemon is down. The helpers run as root, so
//! each is called by its absolute path (under sudo PATH is the user's, Homebrew's directories first).

use super::types::{AdapterName, Family, Params, Render, Step};
use crate::route::files::wrap;

/// Who answers for this route.
pub const FAMILY: Family = Family::Mdns;

const NAME: AdapterName = AdapterName::MacosResolver;

/// configd reads every entry here (dotfiles included) as a resolver for the domain of its `domain` line,
/// else for its file name.
pub const DIR: &str = "/etc/resolver";
/// Where the atomic write keeps its temporary file: not in `DIR`, where it would be a live resolver
/// while it exists (and after a crash); `/etc` is a link to it, so it is on the same volume.
pub const TEMP_DIR: &str = "/private/etc";
/// The temporary directory under a root prefix that has no `/private/etc` (a test root, Linux):
/// `DIR`'s parent, created with it.
pub const TEMP_DIR_FALLBACK: &str = "/etc";

pub const SCUTIL: &str = "/usr/sbin/scutil";
pub const DSCACHEUTIL: &str = "/usr/bin/dscacheutil";
pub const KILLALL: &str = "/usr/bin/killall";

/// The `flags` line: configd otherwise gives the entry the A/AAAA flags of the routable network
/// services (`Plugins/IPMonitor/dns-configuration.c`), none when the Mac is offline or IPv6-only, and
/// mDNSResponder then answers getaddrinfo's A question (`SuppressUnusable`, set by `AI_ADDRCONFIG`,
/// part of the default hints) as unusable without asking (`mDNSCore/mDNS.c`). A `flags` line replaces
/// the inherited ones (`dnsinfo/dnsinfo_flatfile.c`, since configd 395.6 / OS X 10.8). Only `a`: the
/// zone serves A records (and PTRs, which the flags do not gate); with `aaaa` every AAAA question would
/// go to the daemon only to come back empty, where mDNSResponder now answers it at once.
pub const FLAGS: &str = "a";

/// A temporary file of an atomic write of a resolver file, for any zone: `.<zone>.pigsty-dns-tmp.<pid>`
/// (`sys::fs::temp_prefix`). Ours only when it also carries the ownership marker.
pub fn is_temp_name(name: &str) -> bool {
    let marker = crate::sys::fs::temp_prefix(std::path::Path::new("x"));
    let infix = &marker[".x".len()..];
    name.starts_with('.')
        && name.split_once(infix).is_some_and(|(zone, pid)| {
            zone.len() > 1 && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
        })
}

pub fn path_for(zone: &str) -> String {
    format!("{DIR}/{zone}")
}

/// The cache flush after a change: the directory-services cache, then mDNSResponder's.
pub fn flush() -> Vec<Step> {
    vec![
        Step::new(
            &[DSCACHEUTIL, "-flushcache"],
            "flush the directory-services cache",
        ),
        Step::tolerant(
            &[KILLALL, "-HUP", "mDNSResponder"],
            "make mDNSResponder drop cached answers",
        ),
    ]
}

pub fn render(p: &Params) -> Render {
    // One file per zone, the reverse zone's beside the zone's: configd reads each as the resolver for
    // its `domain` line.
    let files = p
        .zones()
        .iter()
        .map(|z| {
            let body = format!(
                "domain {z}\nnameserver {}\nport {}\nflags {FLAGS}\n",
                p.server.ip(),
                p.server.port()
            );
            (path_for(z), wrap(NAME.as_str(), None, &body))
        })
        .collect();
    Render {
        files,
        // configd notices the files by itself; flushing is the flush phase.
        apply: vec![],
        enable: vec![],
        pre_undo: vec![],
        undo: flush(),
        warnings: vec![],
        temp_dir: Some(TEMP_DIR),
    }
}
