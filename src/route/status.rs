//! `route status`: one verdict per item — adapter, journal, drift, scope, daemon, end-to-end lookups —
//! each with what to do next, and whether anything of a route is installed (what `service uninstall`
//! asks before it stops the daemon).

use std::net::SocketAddr;
use std::time::Duration;

use serde::Serialize;

use super::adapter::{AdapterName, link, macos};
use super::context::Ctx;
use super::dnsinfo;
use super::installed::{orphans, params_from};
use super::journal::{self, Journal, State};
use super::live::{self, Live, NoLive};
use super::plan;
use super::verify;
use crate::defaults::{MACOS_MDNS_WHY, MDNS_PORT, ZONE, with_suggested_port};
use crate::digest::sha256_hex;
use crate::error::AppError;
use crate::name::Zone;
use crate::output::{FORMAT, Report};

#[derive(Serialize, Debug)]
pub struct Item {
    pub item: String,
    pub ok: bool,
    pub verdict: String,
    pub next: String,
}

fn item(i: &str, ok: bool, verdict: impl Into<String>, next: impl Into<String>) -> Item {
    Item {
        item: i.into(),
        ok,
        verdict: verdict.into(),
        next: next.into(),
    }
}

/// What to do when the scope or a lookup fails, in the words of the adapter's platform.
struct Hints {
    scope: String,
    lookup: String,
}

fn hints(a: AdapterName, zone: &str) -> Hints {
    match a {
        AdapterName::MacosResolver => Hints {
            scope: format!(
                "sudo pigsty-dns route uninstall --yes && sudo pigsty-dns route install --yes (rewrites {}); {} --dns shows what configd hands mDNSResponder",
                macos::path_for(zone),
                macos::SCUTIL
            ),
            lookup: format!(
                "sudo {} -flushcache; sudo {} -HUP mDNSResponder; then {} -q host -a name meta.{zone}",
                macos::DSCACHEUTIL,
                macos::KILLALL,
                macos::DSCACHEUTIL
            ),
        },
        AdapterName::NmDnsmasq => Hints {
            scope: "pigsty-dns route uninstall && pigsty-dns route install".into(),
            lookup: "nmcli general reload dns-full; getent ahostsv4 NAME".into(),
        },
        _ => Hints {
            scope: "pigsty-dns route uninstall && pigsty-dns route install (re-creates the link and its address)".into(),
            lookup: "check the scope item; resolvectl flush-caches".into(),
        },
    }
}

/// A route installed by a release whose default was the mDNS port, and the commands that move it.
fn old_port_item(a: AdapterName, server: SocketAddr) -> Option<Item> {
    if server.port() != MDNS_PORT {
        return None;
    }
    let new = with_suggested_port(server);
    let moves = format!(
        "pigsty-dns service install --listen {new} (or serve --listen {new}), then sudo pigsty-dns route uninstall --yes && sudo pigsty-dns route install --server {new} --yes"
    );
    Some(if a == AdapterName::MacosResolver {
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

/// macOS: other resolvers for the zone (another /etc/resolver file, a VPN's split DNS).
fn claimants_item(ctx: &mut Ctx<'_>, zone: &str) -> Item {
    let claims = dnsinfo::route_claimants(&ctx.root, ctx.runner, zone);
    if claims.is_empty() {
        item(
            "other resolvers",
            true,
            format!("no other resolver claims {zone} (/etc/resolver, scutil --dns)"),
            "none",
        )
    } else {
        item(
            "other resolvers",
            false,
            claims
                .iter()
                .map(|c| c.what.as_str())
                .collect::<Vec<_>>()
                .join("; "),
            if claims.iter().any(|c| c.stale_ours) {
                "sudo pigsty-dns route uninstall --yes removes pigsty-dns's stale temporary file; then install again".to_string()
            } else {
                format!(
                    "remove the other resolver (a stale /etc/resolver file: delete it; a VPN's split DNS: disconnect it or drop {zone} from its DNS settings)"
                )
            },
        )
    }
}

/// The one command that re-routes what the journal records, with the reverse zone of the live
/// generation: install is idempotent, so it rewrites the files in place.
pub fn reinstall_command(j: &Journal, state_dir: Option<&std::path::Path>) -> String {
    let mut c = format!(
        "sudo pigsty-dns route install --adapter {} --server {}",
        j.adapter, j.server
    );
    if j.zone != ZONE {
        c.push_str(&format!(" --zone {}", j.zone));
    }
    if let Some(v) = j.variant {
        c.push_str(&format!(" --link-variant {}", v.as_str()));
    }
    if let Some(l) = &j.link {
        c.push_str(&format!(" --link {l}"));
    }
    if let Some(a) = &j.link_address {
        c.push_str(&format!(" --link-address {a}"));
    }
    if let Some(k) = j.link_kind {
        c.push_str(&format!(" --link-kind {}", k.as_str()));
    }
    if j.root != "/" {
        c.push_str(&format!(" --root {}", j.root));
    }
    if let Some(d) = state_dir {
        c.push_str(&format!(" --state-dir {}", d.display()));
    }
    c.push_str(" --yes");
    c
}

/// Does the routed reverse zone still match the live generation's /24?
fn reverse_item(ctx: &Ctx<'_>, j: &Journal) -> (Item, Option<Live>) {
    let routed = j.reverse_zone.as_deref();
    match live::for_zone(ctx.state_dir.as_deref(), &j.zone) {
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
            (it, Some(l))
        }
        // The state dir is known and has no addresses: a routed reverse zone is drift.
        Err(NoLive::Empty(d)) if routed.is_some() => (
            item(
                "reverse zone",
                false,
                format!(
                    "drift: the route carries {}, but {} has no generation with addresses",
                    routed.unwrap_or_default(),
                    d.display()
                ),
                reinstall_command(j, Some(&d)),
            ),
            None,
        ),
        Err(no) => (
            item(
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
            None,
        ),
    }
}

/// The resolved-link route's NM drop-in in effect: NetworkManager reports the link unmanaged.
fn nm_unmanaged_item(ctx: &mut Ctx<'_>, dev: &str) -> Item {
    let argv: Vec<String> = ["nmcli", "-t", "-f", "DEVICE,STATE", "device"]
        .map(String::from)
        .to_vec();
    let out = ctx.runner.run(&argv);
    if !out.ok() {
        return item(
            "NetworkManager",
            true,
            format!(
                "nmcli device: {} (NetworkManager not running?); {} applies when it starts",
                out.summary(),
                link::NM_CONF_PATH
            ),
            "none",
        );
    }
    let state = out.stdout.lines().find_map(|l| {
        l.strip_prefix(dev)
            .and_then(|r| r.strip_prefix(':'))
            .map(str::to_string)
    });
    match state.as_deref() {
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

pub fn status_items(ctx: &mut Ctx<'_>) -> Vec<Item> {
    let mut v = Vec::new();
    let detected = plan::choose(&ctx.facts);
    let j = match journal::read(&ctx.journal_dir) {
        Ok(j) => j,
        Err(e) => {
            v.push(item("journal", false, e, "inspect the journal file"));
            return v;
        }
    };
    let Some(j) = j else {
        let mac = matches!(detected, Ok((AdapterName::MacosResolver, _)));
        v.push(match detected {
            Ok((a, why)) => item(
                "adapter",
                true,
                format!(
                    "no route installed; install would use {} ({why})",
                    a.as_str()
                ),
                "pigsty-dns route install --dry-run",
            ),
            Err(e) => item("adapter", false, e.message, e.next),
        });
        if mac {
            v.push(claimants_item(ctx, ZONE));
        }
        let orphans = orphans(&ctx.root);
        v.push(if orphans.is_empty() {
            item(
                "journal",
                true,
                format!(
                    "no journal at {}",
                    journal::path(&ctx.journal_dir).display()
                ),
                "nothing to do",
            )
        } else {
            item(
                "journal",
                false,
                format!(
                    "no journal, but pigsty-dns files exist: {}",
                    orphans
                        .iter()
                        .map(|(p, _)| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                "pigsty-dns route uninstall removes the unchanged ones",
            )
        });
        return v;
    };
    v.push(item(
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
    ));
    v.push(item(
        "journal",
        j.state == State::Installed,
        format!(
            "{} ({}, written {})",
            journal::path(&ctx.journal_dir).display(),
            j.state,
            j.written_at
        ),
        if j.state == State::Installed {
            "none".into()
        } else {
            "an install was interrupted: run pigsty-dns route uninstall, then install again"
                .to_string()
        },
    ));
    let mut drift = Vec::new();
    for f in &j.files {
        match std::fs::read(&f.path) {
            Ok(b) if sha256_hex(&b) == f.sha256 => {}
            Ok(_) => drift.push(format!("{} changed", f.path)),
            Err(_) => drift.push(format!("{} is missing", f.path)),
        }
    }
    v.push(if drift.is_empty() {
        item(
            "drift",
            true,
            format!("all {} file(s) are as written", j.files.len()),
            "none",
        )
    } else {
        item(
            "drift",
            false,
            drift.join("; "),
            "pigsty-dns route uninstall, then install again",
        )
    });
    let (rev, live) = reverse_item(ctx, &j);
    v.push(rev);
    let p = params_from(&j, &ctx.facts);
    if j.files.iter().any(|f| f.path.ends_with(link::NM_CONF_PATH)) {
        v.push(nm_unmanaged_item(ctx, &p.link));
    }
    let a = j.adapter;
    let hint = hints(a, &p.zone);
    v.extend(old_port_item(a, p.server));
    let settle = Duration::ZERO;
    v.push(match verify::scope(ctx, a, &p, settle) {
        Ok(d) => item("scope", true, d, "none"),
        Err(e) => item("scope", false, e, hint.scope.as_str()),
    });
    if a == AdapterName::MacosResolver {
        v.push(claimants_item(ctx, &p.zone));
    }
    let zone = Zone::parse(&j.zone).ok();
    let serial = zone.as_ref().map(|z| (ctx.preflight)(p.server, z));
    match serial {
        Some(Ok(s)) => {
            v.push(item(
                "daemon",
                true,
                format!(
                    "answers {} SOA over UDP and TCP at {} (serial {s})",
                    j.zone, p.server
                ),
                "none",
            ));
            let checks = verify::after_apply(ctx, a, &p, s, live.as_ref());
            for c in checks.into_iter().skip(1) {
                v.push(item(
                    &format!("lookup: {}", c.check),
                    c.ok,
                    c.detail,
                    if c.ok { "none" } else { hint.lookup.as_str() },
                ));
            }
        }
        Some(Err(e)) => {
            v.push(item(
                "daemon",
                false,
                format!("not answering at {}: {e}", p.server),
                format!("start it: pigsty-dns serve --listen {}", p.server),
            ));
            v.push(item(
                "lookup",
                false,
                "zone lookups fail while the daemon is down (nothing leaks: the route stays)",
                "start the daemon",
            ));
        }
        None => v.push(item(
            "daemon",
            false,
            format!("journal zone {:?} is not a valid zone", j.zone),
            "pigsty-dns route uninstall",
        )),
    }
    v
}

#[derive(Serialize)]
struct StatusReport {
    format: u32,
    ok: bool,
    /// Whether anything of a route is in place (a journal, or files with the ownership marker): what
    /// `service uninstall` asks before it stops the daemon.
    installed: bool,
    adapter: Option<AdapterName>,
    items: Vec<Item>,
}

pub fn status(ctx: &mut Ctx<'_>) -> Result<Report, AppError> {
    let items = status_items(ctx);
    let ok = items.iter().all(|i| i.ok);
    let mut text = String::new();
    for i in &items {
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
    // An unreadable journal counts as installed: never let a teardown assume the route is gone.
    let (installed, adapter) = match journal::read(&ctx.journal_dir) {
        Ok(Some(j)) => (true, Some(j.adapter)),
        Ok(None) => (!orphans(&ctx.root).is_empty(), None),
        Err(_) => (true, None),
    };
    let json = StatusReport {
        format: FORMAT,
        ok,
        installed,
        adapter,
        items,
    };
    Ok(Report::new(text, &json))
}
