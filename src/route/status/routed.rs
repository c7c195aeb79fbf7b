//! The `route status` items of an installed route, one function each, over the shared [`Route`]: the
//! adapter and journal, drift of its files, the reverse zone against the live generation,
//! NetworkManager beside a link, the old mDNS port, the resolver's scope, other resolvers (macOS),
//! the daemon and the lookups through the system resolver.

use std::net::SocketAddr;
use std::time::Duration;

use super::{Item, claimants_item, item, reinstall_command};
use crate::defaults::{MACOS_MDNS_WHY, MDNS_PORT, with_suggested_port};
use crate::name::Zone;
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
        let hints = family::of_adapter(journal.adapter).hints(&params.zone);
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
            j.zone,
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
    let verdict = match live::for_zone(ctx.state_dir.as_deref(), &j.zone) {
        Ok(l) => {
            let it = match live::compare(routed, l.reverse.as_deref(), &j.zone) {
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
                    no.note(&j.zone)
                ),
                None => format!("routes no reverse zone ({})", no.note(&j.zone)),
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
    vec![claimants_item(ctx, &r.params.zone)]
}

/// The daemon answers the zone's SOA over UDP and TCP; leaves the serial for the lookups.
pub fn daemon(ctx: &mut Ctx<'_>, r: &mut Route) -> Vec<Item> {
    let (zone, server) = (&r.journal.zone, r.params.server);
    let Ok(z) = Zone::parse(zone) else {
        return vec![item(
            "daemon",
            false,
            format!("journal zone {zone:?} is not a valid zone"),
            "pigsty-dns route uninstall",
        )];
    };
    let serial = (ctx.preflight)(server, &z);
    let it = match &serial {
        Ok(s) => item(
            "daemon",
            true,
            format!("answers {zone} SOA over UDP and TCP at {server} (serial {s})"),
            "none",
        ),
        // Stopped, crashed, never started, or a user unit without linger: each its own fix.
        Err(e) => super::lifecycle::daemon_down(ctx, r, e),
    };
    r.serial = Some(serial);
    vec![it]
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
mod tests {
    use super::super::testing::{down, journal, up, with_ctx};
    use super::*;
    use crate::digest::sha256_hex;
    use crate::route::journal::{JournalFile, State};
    use crate::sys::Os;
    use crate::sys::runner::ScriptedRunner;

    /// Runs one item on a route of `j`, with `preflight` as the daemon, on `os`.
    fn run(
        os: Os,
        j: Journal,
        runner: &mut ScriptedRunner,
        preflight: fn(SocketAddr, &Zone) -> Result<u32, String>,
        items: &[crate::route::status::RoutedItem],
    ) -> Vec<Item> {
        let root = tempfile::tempdir().unwrap();
        with_ctx(root.path(), os, runner, preflight, |ctx| {
            let mut r = Route::new(j, ctx);
            items.iter().flat_map(|f| f(ctx, &mut r)).collect()
        })
    }

    fn one(os: Os, j: Journal, items: &[crate::route::status::RoutedItem]) -> Vec<Item> {
        run(os, j, &mut ScriptedRunner::new(), up, items)
    }

    #[test]
    fn an_interrupted_install_fails_the_journal_item() {
        let mut j = journal(AdapterName::ResolvedDelegate, "127.0.0.1:5354", vec![]);
        let ok = one(Os::Linux, j.clone(), &[super::journal]);
        assert!(ok[0].ok && ok[0].next == "none", "{ok:?}");
        j.state = State::Applying;
        let v = one(Os::Linux, j, &[super::journal]);
        assert!(!v[0].ok);
        assert!(
            v[0].verdict
                .contains("an install was interrupted (journal state applying)"),
            "{v:?}"
        );
        assert_eq!(
            v[0].next,
            "sudo pigsty-dns route uninstall --yes removes what it wrote; then install again"
        );
    }

    #[test]
    fn drift_names_each_changed_and_missing_file() {
        let d = tempfile::tempdir().unwrap();
        let (same, changed) = (d.path().join("same"), d.path().join("changed"));
        std::fs::write(&same, "a").unwrap();
        std::fs::write(&changed, "b").unwrap();
        let f = |p: &std::path::Path, body: &str| JournalFile {
            path: p.display().to_string(),
            existed_before: false,
            sha256: sha256_hex(body.as_bytes()),
        };
        let files = vec![f(&same, "a"), f(&changed, "a")];
        let v = one(
            Os::Linux,
            journal(
                AdapterName::ResolvedDelegate,
                "127.0.0.1:5354",
                files.clone(),
            ),
            &[drift],
        );
        assert_eq!(
            v[0].verdict,
            format!(
                "{} changed by hand, its ownership marker gone (no longer pigsty-dns's; uninstall leaves it)",
                changed.display()
            )
        );
        assert!(v[0].next.starts_with("undo the hand edit"), "{v:?}");
        std::fs::remove_file(&changed).unwrap();
        let v = one(
            Os::Linux,
            journal(AdapterName::ResolvedDelegate, "127.0.0.1:5354", files),
            &[drift],
        );
        assert_eq!(v[0].verdict, format!("{} is missing", changed.display()));
        let v = one(
            Os::Linux,
            journal(
                AdapterName::ResolvedDelegate,
                "127.0.0.1:5354",
                vec![f(&same, "a")],
            ),
            &[drift],
        );
        assert!(
            v[0].ok && v[0].verdict == "all 1 file(s) are as written",
            "{v:?}"
        );
    }

    #[test]
    fn the_mdns_port_is_a_note_on_linux_and_a_failure_on_macos() {
        let linux = one(
            Os::Linux,
            journal(AdapterName::ResolvedDelegate, "127.0.0.1:5353", vec![]),
            &[port],
        );
        assert!(linux[0].ok, "{linux:?}");
        assert!(
            linux[0]
                .verdict
                .contains("move it: pigsty-dns service install --listen 127.0.0.1:5354")
        );
        let mac = one(
            Os::Macos,
            journal(AdapterName::MacosResolver, "127.0.0.1:5353", vec![]),
            &[port],
        );
        assert!(!mac[0].ok, "{mac:?}");
        assert!(
            mac[0]
                .next
                .starts_with("pigsty-dns service install --listen 127.0.0.1:5354")
        );
        let none = one(
            Os::Linux,
            journal(AdapterName::ResolvedDelegate, "127.0.0.1:5354", vec![]),
            &[port],
        );
        assert!(none.is_empty(), "{none:?}");
    }

    #[test]
    fn networkmanager_is_asked_only_when_the_route_wrote_its_drop_in() {
        let mut j = journal(AdapterName::ResolvedLink, "127.0.0.1:5354", vec![]);
        j.link = Some("pigsty-dns0".into());
        let mut r = ScriptedRunner::new();
        assert!(run(Os::Linux, j.clone(), &mut r, up, &[network_manager]).is_empty());
        assert!(r.calls.is_empty(), "{:?}", r.calls);
        j.files.push(JournalFile {
            path: format!("/root{}", link::NM_CONF_PATH),
            existed_before: false,
            sha256: "-".into(),
        });
        let mut r = ScriptedRunner::new().on(
            "nmcli -t -f DEVICE,STATE device",
            0,
            "pigsty-dns0:connected\n",
        );
        let v = run(Os::Linux, j, &mut r, up, &[network_manager]);
        assert!(!v[0].ok, "{v:?}");
        assert!(
            v[0].verdict
                .starts_with("link pigsty-dns0 is connected to NetworkManager")
        );
        assert!(
            v[0].next.starts_with("sudo nmcli general reload conf"),
            "{v:?}"
        );
        assert!(nm_state_item("pigsty-dns0", Some("unmanaged")).ok);
        assert!(nm_state_item("pigsty-dns0", None).ok);
    }

    #[test]
    fn a_daemon_that_is_down_fails_the_daemon_and_the_lookups() {
        let j = journal(AdapterName::ResolvedDelegate, "127.0.0.1:5354", vec![]);
        let mut r = ScriptedRunner::new();
        let v = run(Os::Linux, j.clone(), &mut r, down, &[daemon, lookups]);
        assert_eq!(v.len(), 2, "{v:?}");
        // Why it is down (stopped, crashed, never started) is route::lifecycle's, tested there.
        assert!(
            v[0].verdict.contains(
                "at 127.0.0.1:5354 (no answer from 127.0.0.1:5354); zone lookups fail (SERVFAIL) and nothing leaks"
            ),
            "{v:?}"
        );
        assert!(
            v[0].next
                .starts_with("start it: pigsty-dns serve --listen 127.0.0.1:5354"),
            "{v:?}"
        );
        assert_eq!(
            (v[1].item.as_str(), v[1].next.as_str()),
            ("lookup", "start the daemon")
        );
        // A journal zone that is no zone: the daemon is not asked, and there are no lookups.
        let mut bad = j;
        bad.zone = "not a zone".into();
        let v = run(Os::Linux, bad, &mut r, up, &[daemon, lookups]);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(
            v[0].verdict,
            "journal zone \"not a zone\" is not a valid zone"
        );
        assert_eq!(v[0].next, "pigsty-dns route uninstall");
    }
}
