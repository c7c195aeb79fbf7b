//! Verification through the native path, as the list of checks: the scope the resolver shows for each
//! routed zone, that the resolver takes its answers from the daemon, lookups of a served name —
//! forward, and reverse of its address to its canonical name — and the daemon's counters: an unrelated
//! name must never reach it. What each check runs is the resolver family's (`family`): the adapter's
//! family is asked for once, here.

use std::net::Ipv4Addr;
use std::path::Path;
use std::time::Duration;

use super::adapter::{AdapterName, Params};
use super::check::{check, poll};
use super::context::Ctx;
use super::counters::{fresh_refused_count, random_label};
use super::family::{self, Resolver};
use super::live::Live;
use crate::route::hosts::ZoneAnswers;

pub use super::check::Check;

/// Does the resolver show the route's scope? Ok(detail) or Err(why not).
pub fn scope(
    ctx: &mut Ctx<'_>,
    adapter: AdapterName,
    p: &Params,
    wait: Duration,
) -> Result<String, String> {
    scope_of(family::of_adapter(adapter), ctx, p, wait)
}

fn scope_of(
    r: &dyn Resolver,
    ctx: &mut Ctx<'_>,
    p: &Params,
    wait: Duration,
) -> Result<String, String> {
    if r.scope_settles() {
        poll(wait, || r.scope(ctx.runner, p))
    } else {
        r.scope(ctx.runner, p)
    }
}

/// Every check after apply. `serial` is what the preflight saw; `live` gives the canonical names the
/// reverse lookups must return.
pub fn after_apply(
    ctx: &mut Ctx<'_>,
    adapter: AdapterName,
    p: &Params,
    serial: u32,
    live: Option<&Live>,
) -> Vec<Check> {
    let r = family::of_adapter(adapter);
    let wait = ctx.settle;
    let mut v = vec![match scope_of(r, ctx, p, wait) {
        Ok(d) => check("scope", true, d),
        Err(e) => check("scope", false, e),
    }];
    if !v[0].ok {
        return v;
    }
    v.extend(r.reaches_daemon(ctx, p, serial, live));
    for name in served_names(ctx, adapter, p, live) {
        match name {
            Ok(name) => v.extend(name_checks(ctx, r, p, &name, live, wait)),
            Err(why) => v.push(check("served name", true, why)),
        }
    }
    if let Some(sf) = ctx.status_file.clone() {
        v.push(refused_unchanged(ctx, r, &sf));
    }
    v
}

/// Lookups of a served name through the native path, compared with the daemon's own answer; with a
/// reverse zone routed, the reverse lookups of its address, compared with the live generation's
/// canonical name for it.
fn name_checks(
    ctx: &mut Ctx<'_>,
    r: &dyn Resolver,
    p: &Params,
    name: &str,
    live: Option<&Live>,
    wait: Duration,
) -> Vec<Check> {
    let want: Ipv4Addr = match (ctx.lookup_a)(p.server, name) {
        Ok(Some(a)) => a,
        Ok(None) => {
            return vec![check(
                "served name",
                false,
                format!("the daemon has no A record for {name}"),
            )];
        }
        Err(e) => return vec![check("served name", false, e)],
    };
    let mut v = r.forward(ctx, name, want, wait);
    if let Some(rev) = &p.reverse {
        let [a, b, c, _] = want.octets();
        if *rev == format!("{c}.{b}.{a}.in-addr.arpa") {
            v.extend(reverse_checks(ctx, r, want, live, wait));
        } else {
            // The live records moved away from the routed /24: that is the reverse zone's drift.
            v.push(check(
                "canonical name",
                false,
                format!("not checked: {want} is outside the routed reverse zone {rev}"),
            ));
        }
    }
    v
}

/// The reverse lookups of `addr` through the native path; each must return its canonical name.
fn reverse_checks(
    ctx: &mut Ctx<'_>,
    r: &dyn Resolver,
    addr: Ipv4Addr,
    live: Option<&Live>,
    wait: Duration,
) -> Vec<Check> {
    // A generation sealed before reverse zones carries no PTRs: nothing to compare with (the
    // reverse zone is still routed, so its lookups stay on this host).
    if let Some(l) = live.filter(|l| l.ptr.is_empty()) {
        return vec![check(
            "canonical name",
            true,
            format!(
                "not checked: the live generation (serial {}) has no PTRs (sealed before reverse zones); load the records again to get them",
                l.serial
            ),
        )];
    }
    let Some(want) = live.and_then(|l| l.ptr_of(addr)).map(str::to_string) else {
        return vec![check(
            "canonical name",
            false,
            format!(
                "the live generation has no PTR for {addr}, so reverse lookups cannot be checked"
            ),
        )];
    };
    r.reverse(ctx, addr, &want, wait)
}

/// A random name outside the zone, looked up through the native path, must leave REFUSED alone.
fn refused_unchanged(ctx: &mut Ctx<'_>, r: &dyn Resolver, status_file: &Path) -> Check {
    let before = match fresh_refused_count(status_file, ctx.status_wait) {
        Ok(n) => n,
        Err(e) => return check("unrelated name stays away", false, e),
    };
    let name = format!("{}.example", random_label());
    r.unrelated(ctx.runner, &name);
    // The server writes its status file on its own schedule: wait for a write after the lookup.
    match fresh_refused_count(status_file, ctx.status_wait) {
        Ok(after) if after == before => check(
            "unrelated name stays away",
            true,
            format!("{name}: the daemon's REFUSED counter stayed at {before}"),
        ),
        Ok(after) => check(
            "unrelated name stays away",
            false,
            format!("{name} reached the daemon: REFUSED went {before} -> {after}"),
        ),
        Err(e) => check("unrelated name stays away", false, e),
    }
}

/// The names checked through the native path: `--check-name`, else one served name of each forward
/// zone (each zone has its own route: each is proven). Err: why a zone's name is not checked
/// ("not checked: the zone is empty").
fn served_names(
    ctx: &Ctx<'_>,
    adapter: AdapterName,
    p: &Params,
    live: Option<&Live>,
) -> Vec<Result<String, String>> {
    match &ctx.check_name {
        Some(n) => vec![Ok(n.clone())],
        None => {
            let each: Vec<Result<String, String>> = p
                .zones
                .iter()
                .map(|z| crate::route::hosts_view::default_check_name(ctx, adapter, live, z))
                .collect();
            // One zone-wide reason (no state dir, an empty generation) is said once.
            if each.iter().all(|n| n.is_err()) {
                each.into_iter().take(1).collect()
            } else {
                each
            }
        }
    }
}

/// After uninstall: the scope must be gone.
pub fn gone(ctx: &mut Ctx<'_>, adapter: AdapterName, p: &Params) -> Check {
    let r = family::of_adapter(adapter);
    if let Some(how) = r.gone_without_scope() {
        return check("route gone", true, how);
    }
    let wait = ctx.settle;
    // Each zone on its own: the reverse zone's route must be gone too.
    let each: Vec<Params> = p
        .zones()
        .iter()
        .map(|z| Params {
            zones: vec![z.to_string()],
            reverse: None,
            ..p.clone()
        })
        .collect();
    let res = poll(wait, || {
        for q in &each {
            if let Ok(d) = scope_of(r, ctx, q, Duration::ZERO) {
                return Err(format!("still present: {d}"));
            }
        }
        Ok(())
    });
    match res {
        Ok(()) => check(
            "route gone",
            true,
            format!("{} no longer shows the route", adapter.as_str()),
        ),
        Err(e) => check("route gone", false, e),
    }
}
