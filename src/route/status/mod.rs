//! `route status`: one verdict per item — adapter, journal, drift, scope, daemon, end-to-end lookups —
//! each with what to do next, and whether anything of a route is installed (what `service uninstall`
//! asks before it stops the daemon).
//!
//! Each item is a small function, run in the order of a list: [`UNROUTED`] while there is no journal
//! (`unrouted.rs`), [`ROUTED`] for an installed route (`routed.rs`, over the shared [`Route`]). A new
//! item is one more function in the list it belongs to.

mod hosts;
mod lifecycle;
mod routed;
mod unrouted;

use serde::Serialize;

use super::claim::{self, Seen};
use super::context::Ctx;
use super::dnsinfo;
use super::installed::{Presence, presence};
use super::journal::{self, Journal};
use crate::defaults::ZONES;
use crate::dns::name::Zones;
use crate::error::AppError;
use crate::output::{FORMAT, Report};

pub use routed::Route;
pub use unrouted::Unrouted;

pub use super::check::{Item, item};

/// An item while no journal is there: none, one or more verdicts (an item that does not apply to this
/// host gives none).
pub type UnroutedItem = fn(&mut Ctx<'_>, &Unrouted) -> Vec<Item>;

/// An item of an installed route. It reads the journal through [`Route`] and may leave what it found
/// there for the items after it (the live generation, the daemon's serial).
pub type RoutedItem = fn(&mut Ctx<'_>, &mut Route) -> Vec<Item>;

/// The items while no route is installed, in the order `route status` shows them.
pub const UNROUTED: &[UnroutedItem] = &[
    unrouted::adapter,
    unrouted::other_resolvers,
    unrouted::journal,
    hosts::unrouted,
];

/// The items of an installed route, in the order `route status` shows them.
pub const ROUTED: &[RoutedItem] = &[
    routed::adapter,
    routed::journal,
    routed::drift,
    routed::reverse_zone,
    routed::zones,
    routed::network_manager,
    routed::port,
    lifecycle::link,
    routed::scope,
    routed::other_resolvers,
    lifecycle::other_scopes,
    routed::daemon,
    routed::lookups,
    hosts::routed,
];

/// Every item's verdict: the journal decides which list runs (an unreadable one is the only item).
pub fn status_items(ctx: &mut Ctx<'_>) -> Vec<Item> {
    let mut v = Vec::new();
    match journal::read(&ctx.journal_dir) {
        Err(e) => v.push(lifecycle::damaged_journal(ctx, e)),
        Ok(None) => {
            let u = Unrouted::new(ctx);
            for f in UNROUTED {
                v.extend(f(ctx, &u));
            }
        }
        Ok(Some(j)) => {
            let mut r = Route::new(j, ctx);
            for f in ROUTED {
                v.extend(f(ctx, &mut r));
            }
        }
    }
    v
}

/// The zones the daemon serves, from its live generation; the defaults when there is none to read (what
/// an install would route, and what messages without a route name).
pub fn served_zones(ctx: &Ctx<'_>) -> Zones {
    let default = || Zones::parse(ZONES).expect("the default zones are a zone set");
    match ctx.state_dir.as_deref().map(super::live::read) {
        Some(Ok(Some(l))) => Zones::parse(&l.zones).unwrap_or_else(|_| default()),
        _ => default(),
    }
}

/// macOS: other resolvers for the zones (another /etc/resolver file, a VPN's split DNS).
fn claimants_item(ctx: &mut Ctx<'_>, zones: &[String]) -> Item {
    let claims = dnsinfo::route_claimants(&ctx.root, ctx.runner, zones);
    let shown = zones.join(", ");
    if claims.is_empty() {
        return item(
            "other resolvers",
            true,
            format!("no other resolver claims {shown} (/etc/resolver, scutil --dns)"),
            "none",
        );
    }
    item(
        "other resolvers",
        false,
        claims
            .iter()
            .map(|c| c.what.as_str())
            .collect::<Vec<_>>()
            .join("; "),
        claim::advice(&claims, &shown, Seen::Status),
    )
}

/// The one command that re-routes what the journal records, with the reverse zone of the live
/// generation: install is idempotent, so it rewrites the files in place.
pub fn reinstall_command(j: &Journal, state_dir: Option<&std::path::Path>) -> String {
    let mut c = format!(
        "sudo pigsty-dns route install --adapter {} --server {}",
        j.adapter, j.server
    );
    // The journal's zones and any the live generation adds (a route from before a zone was added
    // gets it); never fewer than the route holds, or following the advice would drop a zone.
    let mut zones = j.zones();
    if let Some(Ok(Some(l))) = state_dir.map(super::live::read) {
        for z in l.zones {
            if !zones.contains(&z) {
                zones.push(z);
            }
        }
    }
    if zones != ZONES {
        for z in &zones {
            c.push_str(&format!(" --zone {z}"));
        }
    }
    if let Some(v) = j.variant {
        c.push_str(&format!(" --link-variant {}", v.as_str()));
    }
    if let Some(l) = &j.link {
        c.push_str(&format!(" --link {}", crate::output::text::shell_quote(l)));
    }
    if let Some(a) = &j.link_address {
        c.push_str(&format!(" --link-address {a}"));
    }
    if let Some(k) = j.link_kind {
        c.push_str(&format!(" --link-kind {}", k.as_str()));
    }
    if j.root != "/" {
        c.push_str(&format!(
            " --root {}",
            crate::output::text::shell_quote(&j.root)
        ));
    }
    if let Some(d) = state_dir {
        let d = d.display().to_string();
        c.push_str(&format!(
            " --state-dir {}",
            crate::output::text::shell_quote(&d)
        ));
    }
    c.push_str(" --yes");
    c
}

#[derive(Serialize)]
struct StatusReport {
    format: u32,
    ok: bool,
    /// Whether anything of a route is in place (a journal, or files with the ownership marker): what
    /// `service uninstall` asks before it stops the daemon.
    installed: bool,
    adapter: Option<super::adapter::AdapterName>,
    /// The server the route sends the zone to, from its journal (`service uninstall` leaves a route
    /// to another server alone).
    server: Option<String>,
    items: Vec<Item>,
    /// What answers before the zone (issue 23): see [`crate::route::hosts::Summary`].
    hosts: crate::route::hosts::Summary,
}

/// The items as text: a verdict line each, and a `next:` line under each that failed.
fn text(items: &[Item]) -> String {
    let mut text = String::new();
    for i in items {
        text.push_str(&format!(
            "{} {}: {}\n",
            if i.ok { "ok  " } else { "FAIL" },
            i.item,
            i.verdict
        ));
        if !i.ok {
            text.push_str(&format!("     next: {}\n", i.next));
        }
    }
    text
}

pub fn status(ctx: &mut Ctx<'_>) -> Result<Report, AppError> {
    let items = status_items(ctx);
    let ok = items.iter().all(|i| i.ok);
    let text = text(&items);
    let Presence {
        installed,
        adapter,
        server,
    } = presence(&ctx.root, &ctx.journal_dir);
    let json = StatusReport {
        format: FORMAT,
        ok,
        installed,
        adapter,
        server,
        items,
        hosts: hosts::summary(ctx),
    };
    Ok(Report::new(text, &json))
}

#[cfg(test)]
pub(super) mod testing {
    //! A `Ctx` over a scripted runner and a journal, for the items' own tests.

    use std::net::{Ipv4Addr, SocketAddr};
    use std::path::Path;
    use std::time::Duration;

    use crate::dns::name::Zone;
    use crate::route::adapter::AdapterName;
    use crate::route::context::Ctx;
    use crate::route::detect::{Driver, Facts};
    use crate::route::journal::{self, Journal, JournalFile, State};
    use crate::sys::Os;
    use crate::sys::runner::ScriptedRunner;

    pub fn facts(os: Os) -> Facts {
        Facts {
            os,
            is_root: true,
            systemd: None,
            resolved_running: true,
            networkd_running: false,
            systemd_booted: true,
            nm_dns_mode: None,
            resolv_conf: None,
            dummy: Driver::Present,
            ifb: Driver::Present,
            ip_path: "/usr/sbin/ip".into(),
            resolvectl_path: "/usr/bin/resolvectl".into(),
            notes: vec![],
        }
    }

    pub fn journal(adapter: AdapterName, server: &str, files: Vec<JournalFile>) -> Journal {
        Journal {
            format: journal::FORMAT,
            state: State::Installed,
            adapter,
            zone: "pigsty.test".into(),
            zones: vec![],
            reverse_zone: None,
            server: server.into(),
            variant: None,
            link: None,
            link_address: None,
            link_kind: None,
            root: "/".into(),
            files,
            created_dirs: vec![],
            pre_undo: vec![],
            undo: vec![],
            written_at: "2026-01-01T00:00:00Z".into(),
        }
    }

    pub fn up(_: SocketAddr, _: &Zone) -> Result<u32, String> {
        Ok(7)
    }
    pub fn down(a: SocketAddr, _: &Zone) -> Result<u32, String> {
        Err(format!("no answer from {a}"))
    }
    fn lookup(_: SocketAddr, _: &str) -> Result<Option<Ipv4Addr>, String> {
        Ok(None)
    }

    /// Runs `f` with a `Ctx` of `os` rooted at `root`, over `runner`.
    pub fn with_ctx<R>(
        root: &Path,
        os: Os,
        runner: &mut ScriptedRunner,
        preflight: fn(SocketAddr, &Zone) -> Result<u32, String>,
        f: impl FnOnce(&mut Ctx<'_>) -> R,
    ) -> R {
        let mut ctx = Ctx {
            root: root.to_path_buf(),
            journal_dir: root.join("journal"),
            runner,
            facts: facts(os),
            preflight: &preflight,
            lookup_a: &lookup,
            confirm: None,
            settle: Duration::ZERO,
            status_wait: Duration::ZERO,
            check_name: None,
            status_file: None,
            state_dir: None,
            out: vec![],
        };
        f(&mut ctx)
    }
}

#[cfg(test)]
mod quoting_tests {
    use std::path::Path;

    use crate::route::journal::Journal;

    /// A state dir or root with a space stays one word when the `next:` line is pasted into a shell.
    #[test]
    fn the_reinstall_command_quotes_root_and_state_dir() {
        let j: Journal = serde_json::from_str(
            r#"{"format": 1, "state": "installed", "adapter": "resolved-link", "zone": "pigsty.test",
                "server": "127.0.0.1:5354", "variant": "runtime", "link": "pigsty-dns0",
                "link_address": "198.18.53.53/32", "link_kind": "dummy", "root": "/tmp/a b",
                "files": [], "created_dirs": [], "pre_undo": [], "undo": [], "written_at": "t"}"#,
        )
        .unwrap();
        let c = super::reinstall_command(&j, Some(Path::new("/srv/my state")));
        assert!(
            c.contains(" --root '/tmp/a b'") && c.contains(" --state-dir '/srv/my state'"),
            "{c}"
        );
    }
}
