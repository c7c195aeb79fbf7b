//! When a change `load` made is visible to programs on this host (issue 23 §3): the one honest line
//! after "live", from the route journal's adapter and the generation's TTLs. No route: nothing (no
//! cache of this host holds the zone). pigsty-dns never flushes a cache on a sync; on macOS it
//! prints the purge command for whoever wants it now, and never runs it.

use std::path::Path;

use crate::generation::Generation;
use crate::route::adapter::AdapterName;
use crate::route::journal;
use crate::sys::Os;

/// mDNSResponder's floor for a negative answer, whatever the SOA minimum says (mDNSCore/mDNS.c),
/// doubled on each refresh up to an hour.
pub const MACOS_NEGATIVE_FLOOR_SECS: u32 = 60;
pub const MACOS_NEGATIVE_CEILING_SECS: u32 = 3600;

/// The command that purges mDNSResponder's cache (printed, never run).
pub const MACOS_PURGE: &str = "sudo killall -HUP mDNSResponder";

/// The line for a route of `adapter` serving `g`: how long an answer a program already got may
/// stay in this host's caches.
pub fn cache_line(adapter: AdapterName, g: &Generation) -> String {
    let (pos, neg) = (g.ttl, g.soa.minimum);
    match adapter {
        AdapterName::MacosResolver => format!(
            "visible: programs that already asked may keep the old answer up to {pos} s (the records' TTL); mDNSResponder keeps a \"no such name\" at least {MACOS_NEGATIVE_FLOOR_SECS} s whatever the SOA minimum ({neg} s) says, doubling on refresh up to {MACOS_NEGATIVE_CEILING_SECS} s; to see it now: {MACOS_PURGE} (not run)\n"
        ),
        AdapterName::NmDnsmasq => format!(
            "visible: programs that already asked may keep the old answer up to {pos} s (NetworkManager's dnsmasq caches by the records' TTL), a \"no such name\" up to {neg} s (the SOA minimum); no cache is flushed\n"
        ),
        _ => format!(
            "visible: programs that already asked may keep the old answer up to {pos} s (systemd-resolved caches by the records' TTL), a \"no such name\" up to {neg} s (the SOA minimum); no cache is flushed\n"
        ),
    }
}

/// The line for this host: from the route journal at its default place; `None` when no route is
/// installed (or its journal cannot be read: then nothing is claimed).
pub fn for_this_host(g: &Generation) -> Option<String> {
    let dir = Path::new(journal::default_dir(Os::this()));
    match journal::read(dir) {
        Ok(Some(j)) if j.zone.trim_end_matches('.') == g.zone.trim_end_matches('.') => {
            Some(cache_line(j.adapter, g))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generation() -> Generation {
        let d = tempfile::tempdir().unwrap();
        let yaml = d.path().join("in.yml");
        std::fs::write(
            &yaml,
            "all:\n  hosts:\n    10.10.10.10: { nodename: meta }\n",
        )
        .unwrap();
        let zone = crate::name::Zone::parse("pigsty.test").unwrap();
        let (set, input) = crate::input::read(&yaml, &zone).unwrap();
        let dir = crate::store::StateDir::open(&d.path().join("state"), true).unwrap();
        match dir.commit(set, 30, 5, input, false).unwrap() {
            crate::store::Outcome::Stored { generation, .. } => generation,
            _ => panic!("not stored"),
        }
    }

    #[test]
    fn the_line_names_the_bounds_of_the_adapter_and_macos_prints_the_purge_it_never_runs() {
        let g = generation();
        let l = cache_line(AdapterName::ResolvedLink, &g);
        assert!(l.contains("up to 30 s") && l.contains("up to 5 s"), "{l}");
        assert!(l.contains("no cache is flushed"), "{l}");
        let m = cache_line(AdapterName::MacosResolver, &g);
        assert!(
            m.contains("at least 60 s") && m.contains("up to 3600 s"),
            "{m}"
        );
        assert!(
            m.contains("sudo killall -HUP mDNSResponder (not run)"),
            "{m}"
        );
    }
}
