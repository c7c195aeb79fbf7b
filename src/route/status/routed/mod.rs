//! The `route status` items of an installed route, one function each, over the shared [`Route`]: the
//! adapter and journal, drift of its files, the reverse zone against the live generation,
//! NetworkManager beside a link, the old mDNS port, the resolver's scope, other resolvers (macOS),
//! the daemon and the lookups through the system resolver.

use std::net::SocketAddr;
use std::time::Duration;

use super::{Item, claimants_item, item, reinstall_command};
use crate::defaults::{MACOS_MDNS_WHY, MDNS_PORT, with_suggested_port};
use crate::dns::name::Zone;
use crate::route::adapter::{self, AdapterName, Family, Params, link};
use crate::route::context::Ctx;
use crate::route::family::{self, Hints};
use crate::route::installed::params_from;
use crate::route::journal::Journal;
use crate::route::live::{self, Live, NoLive};
use crate::route::verify;

/// What the items of an installed route share: the journal and the parameters it records, and what
/// earlier items found for the later ones.
pub struct Route {
    pub journal: Journal,
    pub params: Params,
    pub hints: Hints,
    /// The live generation, once `reverse_zone` found one.
    pub live: Option<Live>,
    /// The daemon's answer to the zone's SOA, once `daemon` asked (`None`: not asked, the journal's
    /// zone is no zone).
    pub serial: Option<Result<u32, String>>,
}

impl Route {
    pub fn new(journal: Journal, ctx: &Ctx<'_>) -> Route {
        let params = params_from(&journal, &ctx.facts);
        let mut carried = journal.zones();
        carried.extend(journal.reverse_zone.iter().cloned());
        let hints = family::of_adapter(journal.adapter).hints(&carried);
        Route {
            journal,
            params,
            hints,
            live: None,
            serial: None,
        }
    }
}

/// Which adapter routes which zones where.
pub fn adapter(_: &mut Ctx<'_>, r: &mut Route) -> Vec<Item> {
    let j = &r.journal;
    vec![item(
        "adapter",
        true,
        format!(
            "{} routes {}{} to {}",
            j.adapter,
            j.zones().join(", "),
            j.reverse_zone
                .as_deref()
                .map(|r| format!(" and {r}"))
                .unwrap_or_default(),
            j.server
        ),
        "none",
    )]
}

/// The journal says `installed`; `applying` is an install that never finished (what it wrote so far).
pub fn journal(ctx: &mut Ctx<'_>, r: &mut Route) -> Vec<Item> {
    vec![super::lifecycle::journal_state(ctx, r)]
}

/// Every journaled file still has the sha256 it was written with (changed by hand, or missing).
pub fn drift(ctx: &mut Ctx<'_>, r: &mut Route) -> Vec<Item> {
    vec![super::lifecycle::drift(ctx, r)]
}

/// Does the routed reverse zone still match the live generation's /24? Leaves the live generation
/// for the lookups.
pub fn reverse_zone(ctx: &mut Ctx<'_>, r: &mut Route) -> Vec<Item> {
    let j = &r.journal;
    let routed = j.reverse_zone.as_deref();
    let zones = j.zones();
    let verdict = match live::for_zones(ctx.state_dir.as_deref(), &zones) {
        Ok(l) => {
            let it = match live::compare(routed, l.reverse.as_deref(), &zones.join(", ")) {
                Ok(()) => item(
                    "reverse zone",
                    true,
                    format!(
                        "routes {}, the /24 of the live generation (serial {})",
                        routed.unwrap_or("-"),
                        l.serial
                    ),
                    "none",
                ),
                Err(why) => item(
                    "reverse zone",
                    false,
                    format!("drift: {why}"),
                    reinstall_command(j, Some(&l.state_dir)),
                ),
            };
            r.live = Some(l);
            it
        }
        // The state dir is known and has no addresses: a routed reverse zone is drift.
        Err(NoLive::Empty(d)) if routed.is_some() => item(
            "reverse zone",
            false,
            format!(
                "drift: the route carries {}, but {} has no generation with addresses",
                routed.unwrap_or_default(),
                d.display()
            ),
            reinstall_command(j, Some(&d)),
        ),
        Err(no) => item(
            "reverse zone",
            true,
            match routed {
                Some(r) => format!(
                    "routes {r}; not compared with the live generation ({})",
                    no.note(&zones)
                ),
                None => format!("routes no reverse zone ({})", no.note(&zones)),
            },
            "none",
        ),
    };
    vec![verdict]
}

/// The resolved-link route's NM drop-in in effect: NetworkManager reports the link unmanaged (only
/// when the route wrote the drop-in).
pub fn network_manager(ctx: &mut Ctx<'_>, r: &mut Route) -> Vec<Item> {
    let dropped_in = r
        .journal
        .files
        .iter()
        .any(|f| f.path.ends_with(link::NM_CONF_PATH));
    if !dropped_in {
        return vec![];
    }
    let dev = r.params.link.as_str();
    let argv: Vec<String> = ["nmcli", "-t", "-f", "DEVICE,STATE", "device"]
        .map(String::from)
        .to_vec();
    let out = ctx.runner.run(&argv);
    if !out.ok() {
        return vec![item(
            "NetworkManager",
            true,
            format!(
                "nmcli device: {} (NetworkManager not running?); {} applies when it starts",
                out.summary(),
                link::NM_CONF_PATH
            ),
            "none",
        )];
    }
    let state = out.stdout.lines().find_map(|l| {
        l.strip_prefix(dev)
            .and_then(|r| r.strip_prefix(':'))
            .map(str::to_string)
    });
    vec![nm_state_item(dev, state.as_deref())]
}

fn nm_state_item(dev: &str, state: Option<&str>) -> Item {
    match state {
        Some("unmanaged") => item(
            "NetworkManager",
            true,
            format!("link {dev} is unmanaged ({})", link::NM_CONF_PATH),
            "none",
        ),
        Some(s) => item(
            "NetworkManager",
            false,
            format!(
                "link {dev} is {s} to NetworkManager, not unmanaged: NM may take its address (another conf.d file may set unmanaged-devices= after {})",
                link::NM_CONF_PATH
            ),
            format!(
                "sudo nmcli general reload conf; NetworkManager --print-config | grep unmanaged-devices must list interface-name:{dev}"
            ),
        ),
        None => item(
            "NetworkManager",
            true,
            format!("NetworkManager lists no device {dev} (the scope item checks the link)"),
            "none",
        ),
    }
}

/// A route installed by a release whose default was the mDNS port, and the commands that move it.
pub fn port(_: &mut Ctx<'_>, r: &mut Route) -> Vec<Item> {
    old_port_item(r.journal.adapter, r.params.server)
        .into_iter()
        .collect()
}

fn old_port_item(a: AdapterName, server: SocketAddr) -> Option<Item> {
    if server.port() != MDNS_PORT {
        return None;
    }
    let new = with_suggested_port(server);
    let moves = format!(
        "pigsty-dns service install --listen {new} (or serve --listen {new}), then sudo pigsty-dns route uninstall --yes && sudo pigsty-dns route install --server {new} --yes"
    );
    Some(if adapter::family(a) == Family::Mdns {
        item(
            "port",
            false,
            format!("the route points at {server}: {MACOS_MDNS_WHY}"),
            moves,
        )
    } else {
        item(
            "port",
            true,
            format!(
                "the route points at {server}, the mDNS port (the default before {}): it works while no mDNS stack wants the port; move it: {moves}",
                new.port()
            ),
            "none",
        )
    })
}

/// The resolver routes the zones to the daemon, and only them (no waiting: status looks once).
pub fn scope(ctx: &mut Ctx<'_>, r: &mut Route) -> Vec<Item> {
    vec![
        match verify::scope(ctx, r.journal.adapter, &r.params, Duration::ZERO) {
            Ok(d) => item("scope", true, d, "none"),
            Err(e) => item("scope", false, e, r.hints.scope.as_str()),
        },
    ]
}

/// macOS: no other resolver claims the routed zone.
pub fn other_resolvers(ctx: &mut Ctx<'_>, r: &mut Route) -> Vec<Item> {
    if adapter::family(r.journal.adapter) != Family::Mdns {
        return vec![];
    }
    vec![claimants_item(ctx, &r.params.zones.clone())]
}

/// The daemon answers every routed zone's SOA over UDP and TCP; leaves the serial (one per generation,
/// the first zone's) for the lookups.
pub fn daemon(ctx: &mut Ctx<'_>, r: &mut Route) -> Vec<Item> {
    let (zones, server) = (r.journal.zones(), r.params.server);
    let mut parsed = Vec::with_capacity(zones.len());
    for zone in &zones {
        let Ok(z) = Zone::parse(zone) else {
            return vec![item(
                "daemon",
                false,
                format!("journal zone {zone:?} is not a valid zone"),
                "pigsty-dns route uninstall",
            )];
        };
        parsed.push(z);
    }
    let serial = (ctx.preflight)(server, &parsed[0]);
    let it = match &serial {
        Ok(s) => match parsed[1..]
            .iter()
            .find_map(|z| (ctx.preflight)(server, z).err().map(|e| (z, e)))
        {
            None => item(
                "daemon",
                true,
                format!(
                    "answers {} SOA over UDP and TCP at {server} (serial {s})",
                    zones.join(", ")
                ),
                "none",
            ),
            Some((z, e)) => item(
                "daemon",
                false,
                format!(
                    "answers {} SOA at {server} (serial {s}), but not {z}: {e}; lookups of its names get no answer",
                    zones[0]
                ),
                format!(
                    "serve every routed zone (pigsty-dns serve{}), or route only what it serves (pigsty-dns route install --zone ZONE)",
                    zones
                        .iter()
                        .map(|z| format!(" --zone {z}"))
                        .collect::<String>()
                ),
            ),
        },
        // Stopped, crashed, never started, or a user unit without linger: each its own fix.
        Err(e) => super::lifecycle::daemon_down(ctx, r, e),
    };
    r.serial = Some(serial);
    vec![it]
}

/// Every zone the live generation serves is routed: one it serves and the route does not carry (a
/// route installed by a release that routed one zone) is answered by the daemon while its names go
/// to the upstream.
pub fn zones(ctx: &mut Ctx<'_>, r: &mut Route) -> Vec<Item> {
    let routed = r.journal.zones();
    let Some(Ok(Some(l))) = ctx.state_dir.as_deref().map(live::read) else {
        return vec![];
    };
    let missing = live::unrouted(&l, &routed);
    vec![if missing.is_empty() {
        item(
            "zones",
            true,
            format!(
                "routes every zone the daemon serves ({})",
                l.zones.join(", ")
            ),
            "none",
        )
    } else {
        item(
            "zones",
            false,
            format!(
                "served, not routed: {} (the daemon serves {}; the route carries {}): names under {} leave this host for the upstream",
                missing.join(", "),
                l.zones.join(", "),
                routed.join(", "),
                if missing.len() == 1 { "it" } else { "them" }
            ),
            "pigsty-dns route install",
        )
    }]
}

/// The lookups through the system resolver, as install verifies them (the SOA one is the daemon
/// item's); while the daemon is down, one verdict that says so.
pub fn lookups(ctx: &mut Ctx<'_>, r: &mut Route) -> Vec<Item> {
    match r.serial {
        Some(Ok(s)) => {
            let checks = verify::after_apply(ctx, r.journal.adapter, &r.params, s, r.live.as_ref());
            checks
                .into_iter()
                .skip(1)
                .map(|c| {
                    let next = if c.ok {
                        "none"
                    } else {
                        r.hints.lookup.as_str()
                    };
                    item(&format!("lookup: {}", c.check), c.ok, c.detail, next)
                })
                .collect()
        }
        Some(Err(_)) => vec![item(
            "lookup",
            false,
            "zone lookups fail while the daemon is down (nothing leaks: the route stays)",
            "start the daemon",
        )],
        None => vec![],
    }
}

#[cfg(test)]
mod tests;
