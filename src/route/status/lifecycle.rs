//! The `route status` items of a route's later life (issue 26), one function each, with their
//! verdicts from `route::lifecycle`: the resolved-link route's link (gone, down, its address lost: the
//! zone leaks), other resolved scopes that claim the zones (a VPN's link), and the words for a daemon
//! that is down, an install cut short, a hand-edited file and a damaged journal, which the `daemon`,
//! `journal` and `drift` items and the journal-less list use.

use std::path::Path;

use super::Route;
use super::{Item, item, reinstall_command};
use crate::route::adapter::AdapterName;
use crate::route::claim::{self, Seen};
use crate::route::context::Ctx;
use crate::route::family;
use crate::route::journal::{self, State};
use crate::route::lifecycle::{self, LinkState};
use crate::route::lifecycle_probe;

/// The one command that re-routes this route (with the live generation's state dir, if known).
fn repair(ctx: &Ctx<'_>, r: &Route) -> String {
    let dir = r
        .live
        .as_ref()
        .map(|l| l.state_dir.clone())
        .or_else(|| ctx.state_dir.clone());
    reinstall_command(&r.journal, dir.as_deref())
}

fn zones(r: &Route) -> String {
    r.params.zones().join(" and ")
}

/// resolved-link: the link exists, is up and has its address (without them resolved gives it no DNS
/// scope and the zone leaks to the default upstream).
pub fn link(ctx: &mut Ctx<'_>, r: &mut Route) -> Vec<Item> {
    if r.journal.adapter != AdapterName::ResolvedLink {
        return vec![];
    }
    let (l, cidr) = (r.params.link.clone(), r.params.cidr());
    let state = lifecycle_probe::link_state(ctx.runner, &l, &cidr);
    let fix = repair(ctx, r);
    vec![
        match lifecycle::link_finding(&state, &l, &cidr, &zones(r), &fix) {
            Some(f) => item("link", false, f.verdict, f.next),
            None => match state {
                LinkState::Unknown(why) => item(
                    "link",
                    true,
                    format!("{l}: not checked ({why}); the scope item judges the route"),
                    "none",
                ),
                _ => item("link", true, format!("{l} is up with {cidr}"), "none"),
            },
        },
    ]
}

/// resolved: no other scope (a VPN's link, the global settings, another delegate) routes the zones
/// or a subdomain of one; a `~.` default route is fine and shown.
pub fn other_scopes(ctx: &mut Ctx<'_>, r: &mut Route) -> Vec<Item> {
    let Some(ours) = family::of_adapter(r.journal.adapter).owner(&r.params) else {
        return vec![];
    };
    let zs = r.params.zones();
    let (claims, defaults) = match lifecycle_probe::resolved_claims(ctx.runner, &zs, &ours) {
        Ok(c) => c,
        Err(why) => {
            return vec![item(
                "other resolvers",
                true,
                format!("not checked ({why})"),
                "none",
            )];
        }
    };
    if claims.is_empty() {
        let shown = defaults
            .iter()
            .map(|o| {
                format!(
                    "; {o} routes ~. (a default route: the zones still come here, longest match)"
                )
            })
            .collect::<String>();
        return vec![item(
            "other resolvers",
            true,
            format!("no other link claims {}{shown}", zs.join(" or ")),
            "none",
        )];
    }
    vec![item(
        "other resolvers",
        false,
        format!(
            "{}: resolved sends those names to both scopes, so they leak to the other one",
            claims
                .iter()
                .map(|c| c.what.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ),
        claim::advice(&claims, &r.params.forward_shown(), Seen::Status),
    )]
}

/// The `daemon` item when the daemon does not answer: stopped, crashed, never started, or a user unit
/// without linger, and the one command that brings it back.
pub fn daemon_down(ctx: &mut Ctx<'_>, r: &Route, why: &str) -> Item {
    let server = r.params.server;
    let facts = lifecycle_probe::daemon_facts(ctx, server);
    let f = lifecycle::daemon_down(&facts, server, why);
    item("daemon", false, f.verdict, f.next)
}

/// The `journal` item: `installed`, or an install cut short with what it wrote so far.
pub fn journal_state(ctx: &Ctx<'_>, r: &Route) -> Item {
    let j = &r.journal;
    let path = journal::path(&ctx.journal_dir);
    if j.state == State::Installed {
        return item(
            "journal",
            true,
            format!("{} ({}, written {})", path.display(), j.state, j.written_at),
            "none",
        );
    }
    let (written, missing): (Vec<_>, Vec<_>) =
        j.files.iter().partition(|f| Path::new(&f.path).exists());
    let names =
        |v: Vec<&journal::JournalFile>| v.iter().map(|f| f.path.clone()).collect::<Vec<_>>();
    item(
        "journal",
        false,
        format!(
            "{}: {}",
            path.display(),
            lifecycle::partial_install(&names(written), &names(missing))
        ),
        "sudo pigsty-dns route uninstall --yes removes what it wrote; then install again",
    )
}

/// The `drift` item: each journaled file as written, changed by hand, or missing (the files an install
/// cut short never wrote are the journal item's, not drift).
pub fn drift(ctx: &Ctx<'_>, r: &Route) -> Item {
    let files = &r.journal.files;
    let finished = r.journal.state == State::Installed;
    let drift: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let now = std::fs::read(&f.path).ok();
            if now.is_none() && !finished {
                return None;
            }
            lifecycle::file_drift(&f.path, &f.sha256, now.as_deref())
        })
        .collect();
    if drift.is_empty() {
        return item(
            "drift",
            true,
            format!("all {} file(s) are as written", files.len()),
            "none",
        );
    }
    let next = lifecycle::drift_next(&drift, &repair(ctx, r));
    item("drift", false, drift.join("; "), next)
}

/// The only item when the journal cannot be trusted or read: exactly what is wrong, and what to do.
pub fn damaged_journal(ctx: &Ctx<'_>, e: String) -> Item {
    let p = journal::path(&ctx.journal_dir);
    let next = match journal::damage(&p) {
        Some(d) => lifecycle::journal_next(&p, &d),
        None => format!("inspect {}", p.display()),
    };
    item("journal", false, e, next)
}
