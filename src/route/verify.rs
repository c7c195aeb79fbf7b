//! Verification through the native path: the scope resolved (or configd) reports for each routed
//! zone, lookups through resolved and NSS (macOS: mDNSResponder, through `dscacheutil`) — forward of a
//! served name, reverse of its address to its canonical name — and the daemon's counters: a fresh
//! name under the zone must reach it (macOS, always), an unrelated name never.

use std::net::Ipv4Addr;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::adapter::delegate::DELEGATE_ID;
use super::adapter::{AdapterName, Params, macos};
use super::context::Ctx;
use super::dnsinfo;
use super::live::Live;
use crate::hosts::ZoneAnswers;
use crate::status_file::{self, CountersSnapshot, Status};
use crate::sys::argv;

mod mac;

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub check: String,
    pub ok: bool,
    pub detail: String,
}

fn check(name: &str, ok: bool, detail: impl Into<String>) -> Check {
    Check {
        check: name.into(),
        ok,
        detail: detail.into(),
    }
}

/// Polls `f` until it returns Ok or `wait` runs out (at least one try).
fn poll<T>(wait: Duration, mut f: impl FnMut() -> Result<T, String>) -> Result<T, String> {
    let end = Instant::now() + wait;
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) if Instant::now() >= end => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// Does resolved show the route's scope? Ok(detail) or Err(why not).
pub fn scope(
    ctx: &mut Ctx<'_>,
    adapter: AdapterName,
    p: &Params,
    wait: Duration,
) -> Result<String, String> {
    match adapter {
        AdapterName::ResolvedLink => poll(wait, || link_scope(ctx, p)),
        AdapterName::ResolvedDelegate => poll(wait, || delegate_scope(ctx, p)),
        AdapterName::MacosResolver => poll(wait, || macos_scope(ctx, p)),
        AdapterName::ResolvedGlobal => global_scope(ctx, p),
        AdapterName::NmDnsmasq => {
            Ok("NetworkManager's dnsmasq has no scope to show; judged by the lookup".into())
        }
    }
}

/// The first of the route's domains that `t` does not mention.
fn missing_domain(p: &Params, t: &str) -> Option<String> {
    p.routing_domains()
        .into_iter()
        .find(|d| !t.contains(d.as_str()))
}

fn link_scope(ctx: &mut Ctx<'_>, p: &Params) -> Result<String, String> {
    let server = p.server.to_string();
    let domain = p.routing_domains().join(" ");
    let out = ctx
        .runner
        .run(&argv(&["resolvectl", "--no-pager", "status", &p.link]));
    if !out.ok() {
        return Err(format!("resolvectl status {}: {}", p.link, out.summary()));
    }
    let t = &out.stdout;
    if t.contains("Current Scopes: none") || !t.contains("Current Scopes: DNS") {
        return Err(format!(
            "link {} has no DNS scope (Current Scopes: none): zone names would leak to the default upstream; \
             the link needs its non-link-local address and must be up",
            p.link
        ));
    }
    if !t.contains("-DefaultRoute") {
        return Err(format!(
            "link {} is a DNS default route: other names would reach the daemon",
            p.link
        ));
    }
    if !t.contains(&server) || missing_domain(p, t).is_some() {
        return Err(format!(
            "link {} does not carry DNS {server} and domain(s) {domain}",
            p.link
        ));
    }
    Ok(format!(
        "link {}: Current Scopes: DNS, -DefaultRoute, {server}, {domain}",
        p.link
    ))
}

fn delegate_scope(ctx: &mut Ctx<'_>, p: &Params) -> Result<String, String> {
    let server = p.server.to_string();
    let domain = p.routing_domains().join(" ");
    let out = ctx
        .runner
        .run(&argv(&["resolvectl", "--no-pager", "status"]));
    let header = format!("Delegate {DELEGATE_ID}");
    match status_section(&out.stdout, &header) {
        Some(rest) if rest.contains(&server) => match missing_domain(p, rest) {
            None => Ok(format!(
                "resolvectl status lists {header} with {server}, {domain}"
            )),
            Some(d) => Err(format!("{header} does not list the domain {d}")),
        },
        Some(_) => Err(format!("{header} does not list {server}")),
        None => Err(format!(
            "resolvectl status lists no {header}: resolved has not read the delegate file"
        )),
    }
}

/// One block must carry the domain, our nameserver and our port (configd's view; whether
/// mDNSResponder uses it is what the counters check proves).
fn macos_scope(ctx: &mut Ctx<'_>, p: &Params) -> Result<String, String> {
    let out = ctx.runner.run(&argv(&[macos::SCUTIL, "--dns"]));
    if !out.ok() {
        return Err(format!("scutil --dns: {}", out.summary()));
    }
    let resolvers = dnsinfo::parse(&out.stdout);
    let blocks = p
        .zones()
        .iter()
        .map(|z| dnsinfo::route_block(&resolvers, z, p.server))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(blocks.join("; "))
}

fn global_scope(ctx: &mut Ctx<'_>, p: &Params) -> Result<String, String> {
    let server = p.server.to_string();
    let domain = p.routing_domains().join(" ");
    let out = ctx
        .runner
        .run(&argv(&["resolvectl", "--no-pager", "status"]));
    match missing_domain(p, &out.stdout) {
        _ if !out.stdout.contains(&server) => {
            Err(format!("resolvectl status does not list {server}"))
        }
        Some(d) => Err(format!("resolvectl status does not list the domain {d}")),
        None => Ok(format!("resolvectl status lists {server}, {domain}")),
    }
}

fn uses_resolved(a: AdapterName) -> bool {
    matches!(
        a,
        AdapterName::ResolvedLink | AdapterName::ResolvedDelegate | AdapterName::ResolvedGlobal
    )
}

/// The zone's SOA through resolved must carry the serial the daemon answers directly.
fn soa_through_resolved(ctx: &mut Ctx<'_>, zone: &str, serial: u32, wait: Duration) -> Check {
    let r = poll(wait, || {
        let out = ctx.runner.run(&argv(&[
            "resolvectl",
            "--cache=no",
            "query",
            "-t",
            "SOA",
            zone,
        ]));
        let serial_s = serial.to_string();
        if out.ok()
            && out.stdout.contains("SOA")
            && out.stdout.split_whitespace().any(|w| w == serial_s)
        {
            Ok(format!("resolvectl query -t SOA {zone}: serial {serial}"))
        } else {
            Err(format!("resolvectl query -t SOA {zone}: {}", out.summary()))
        }
    });
    match r {
        Ok(d) => check("lookup through resolved", true, d),
        Err(e) => check("lookup through resolved", false, e),
    }
}

fn first_word_after_colon(out: &str) -> Option<String> {
    // "meta.pigsty.test: 10.10.10.10                   -- link: pigsty-dns0"
    let line = out.lines().next()?;
    let (_, rest) = line.split_once(": ")?;
    rest.split_whitespace().next().map(str::to_string)
}

/// Lookups of a served name through the native path, compared with the daemon's own answer; with a
/// reverse zone routed, the reverse lookups of its address, compared with the live generation's
/// canonical name for it.
fn name_checks(
    ctx: &mut Ctx<'_>,
    adapter: AdapterName,
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
    let mut v = Vec::new();
    if uses_resolved(adapter) {
        v.push(resolvectl_forward(ctx, name, want, wait));
    }
    if adapter == AdapterName::MacosResolver {
        v.push(mac::dscacheutil_forward(ctx, name, want, wait));
        v.push(mac::getaddrinfo_forward(ctx, name, want, wait));
    } else {
        v.push(getent_forward(ctx, name, want, wait));
    }
    if let Some(rev) = &p.reverse {
        let [a, b, c, _] = want.octets();
        if *rev == format!("{c}.{b}.{a}.in-addr.arpa") {
            v.extend(reverse_checks(ctx, adapter, want, live, wait));
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

/// A polled check: `label` passes with `f`'s detail, or fails with its last error.
fn polled(label: &str, wait: Duration, f: impl FnMut() -> Result<String, String>) -> Check {
    match poll(wait, f) {
        Ok(d) => check(label, true, d),
        Err(e) => check(label, false, e),
    }
}

fn resolvectl_forward(ctx: &mut Ctx<'_>, name: &str, want: Ipv4Addr, wait: Duration) -> Check {
    let want_s = want.to_string();
    polled("resolvectl query", wait, || {
        let out = ctx
            .runner
            .run(&argv(&["resolvectl", "--cache=no", "query", "-4", name]));
        match first_word_after_colon(&out.stdout) {
            Some(a) if out.ok() && a == want_s => Ok(format!("resolvectl query {name}: {a}")),
            _ => Err(format!(
                "resolvectl query {name}: {} (want {want})",
                out.summary()
            )),
        }
    })
}

fn getent_forward(ctx: &mut Ctx<'_>, name: &str, want: Ipv4Addr, wait: Duration) -> Check {
    let want_s = want.to_string();
    polled("getent ahostsv4", wait, || {
        let out = ctx.runner.run(&argv(&["getent", "ahostsv4", name]));
        match out.stdout.split_whitespace().next() {
            Some(a) if out.ok() && a == want_s => Ok(format!("getent ahostsv4 {name}: {a}")),
            _ => Err(format!(
                "getent ahostsv4 {name}: {} (want {want})",
                out.summary()
            )),
        }
    })
}

/// The name a reverse lookup printed, compared without case and trailing dot.
fn same_name(got: &str, want: &str) -> bool {
    got.trim_end_matches('.').eq_ignore_ascii_case(want)
}

/// The reverse lookups of `addr` through the native path: resolved and NSS (`getent hosts`) on
/// Linux, mDNSResponder (`dscacheutil -a ip_address`) on macOS; each must return its canonical name.
fn reverse_checks(
    ctx: &mut Ctx<'_>,
    adapter: AdapterName,
    addr: Ipv4Addr,
    live: Option<&Live>,
    wait: Duration,
) -> Vec<Check> {
    let a = addr.to_string();
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
            format!("the live generation has no PTR for {a}, so reverse lookups cannot be checked"),
        )];
    };
    let mut v = Vec::new();
    let mut run =
        |ctx: &mut Ctx<'_>, label: &str, words: &[&str], pick: fn(&str) -> Option<String>| {
            let shown = words.join(" ");
            let r = poll(wait, || {
                let out = ctx.runner.run(&argv(words));
                match pick(&out.stdout) {
                    Some(n) if out.ok() && same_name(&n, &want) => Ok(format!("{shown}: {n}")),
                    _ => Err(format!("{shown}: {} (want {want})", out.summary())),
                }
            });
            v.push(match r {
                Ok(d) => check(label, true, d),
                Err(e) => check(label, false, e),
            });
        };
    if uses_resolved(adapter) {
        // "10.10.10.10: meta.pigsty.test                  -- link: pigsty-dns0"
        run(
            ctx,
            "resolvectl query (reverse)",
            &["resolvectl", "--cache=no", "query", &a],
            first_word_after_colon,
        );
    }
    if adapter == AdapterName::MacosResolver {
        run(
            ctx,
            "dscacheutil (reverse)",
            &[macos::DSCACHEUTIL, "-q", "host", "-a", "ip_address", &a],
            |out| {
                out.lines()
                    .find_map(|l| l.trim().strip_prefix("name: "))
                    .map(str::to_string)
            },
        );
    } else {
        // "10.10.10.10     meta.pigsty.test": the canonical name first, aliases after.
        run(
            ctx,
            "getent hosts (reverse)",
            &["getent", "hosts", &a],
            |out| out.split_whitespace().nth(1).map(str::to_string),
        );
    }
    v
}

/// The body of the `resolvectl status` section whose header line is exactly `header` (e.g. `Delegate
/// pigsty-dns`), up to the next blank line or section header: another delegate or link never counts
/// for ours. (Labels are right-aligned, so the longest, `Current DNS Server:`, is not indented.)
fn status_section<'a>(stdout: &'a str, header: &str) -> Option<&'a str> {
    let mut offset = 0;
    let mut start = None;
    for line in stdout.split_inclusive('\n') {
        let t = line.trim_end();
        let ends =
            t.is_empty() || t == "Global" || t.starts_with("Link ") || t.starts_with("Delegate ");
        if let Some(s) = start {
            if ends {
                return Some(&stdout[s..offset]);
            }
        } else if line.trim_end() == header {
            start = Some(offset + line.len());
        }
        offset += line.len();
    }
    start.map(|s| &stdout[s..])
}

/// The server's status, from `file` (`<state dir>/status.json`, as `Ctx::status_file` holds it).
fn server_status(file: &Path) -> Result<Status, String> {
    file.parent().and_then(status_file::read).ok_or_else(|| {
        format!(
            "cannot read {}: not a pigsty-dns status file (format {})",
            file.display(),
            status_file::FORMAT
        )
    })
}

/// `counters.refused` from the server's status file.
pub fn refused_count(status_file: &Path) -> Result<u64, String> {
    server_status(status_file).map(|s| s.counters.refused)
}

fn random_label() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("pigsty-dns-route-check-{:x}{:x}", t, std::process::id())
}

/// The status file's `updated` stamp (the server rewrites it every couple of seconds).
fn status_stamp(status_file: &Path) -> Option<String> {
    server_status(status_file).ok().map(|s| s.updated)
}

/// The status as of a write that happened after this call: waits (up to `wait`) for the server to
/// rewrite the file, so it includes every query answered before the call.
fn fresh_status(status_file: &Path, wait: Duration) -> Result<Status, String> {
    let first = status_stamp(status_file);
    let deadline = std::time::Instant::now() + wait;
    while std::time::Instant::now() < deadline && status_stamp(status_file) == first {
        std::thread::sleep(Duration::from_millis(100));
    }
    server_status(status_file)
}

fn fresh_counters(status_file: &Path, wait: Duration) -> Result<CountersSnapshot, String> {
    fresh_status(status_file, wait).map(|s| s.counters)
}

fn fresh_refused_count(status_file: &Path, wait: Duration) -> Result<u64, String> {
    fresh_counters(status_file, wait).map(|c| c.refused)
}

/// A random name outside the zone, looked up through the native path, must leave REFUSED alone.
fn refused_unchanged(ctx: &mut Ctx<'_>, adapter: AdapterName, status_file: &Path) -> Check {
    let before = match fresh_refused_count(status_file, ctx.status_wait) {
        Ok(n) => n,
        Err(e) => return check("unrelated name stays away", false, e),
    };
    let name = format!("{}.example", random_label());
    if uses_resolved(adapter) {
        ctx.runner
            .run(&argv(&["resolvectl", "--cache=no", "query", &name]));
    } else if adapter == AdapterName::MacosResolver {
        mac::dscacheutil(ctx, &name);
    } else {
        ctx.runner.run(&argv(&["getent", "ahostsv4", &name]));
    }
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

/// Every check after apply. `serial` is what the preflight saw; `live` gives the canonical names the
/// reverse lookups must return.
pub fn after_apply(
    ctx: &mut Ctx<'_>,
    adapter: AdapterName,
    p: &Params,
    serial: u32,
    live: Option<&Live>,
) -> Vec<Check> {
    let wait = ctx.settle;
    let mut v = vec![match scope(ctx, adapter, p, wait) {
        Ok(d) => check("scope", true, d),
        Err(e) => check("scope", false, e),
    }];
    if !v[0].ok {
        return v;
    }
    if uses_resolved(adapter) {
        v.push(soa_through_resolved(ctx, &p.zone, serial, wait));
    }
    if adapter == AdapterName::MacosResolver {
        v.extend(mac::lookups_reach_daemon(ctx, p, live));
    }
    match served_name(ctx, adapter, live) {
        Ok(name) => v.extend(name_checks(ctx, adapter, p, &name, live, wait)),
        Err(why) => v.push(check("served name", true, why)),
    }
    if let Some(sf) = ctx.status_file.clone() {
        v.push(refused_unchanged(ctx, adapter, &sf));
    }
    v
}

/// The name whose lookups prove an answer came back: `--check-name`, else the live generation's
/// first served name in canonical order that the hosts file does not answer (issue 23); Err: why
/// none is checked ("not checked: the zone is empty").
fn served_name(ctx: &Ctx<'_>, adapter: AdapterName, live: Option<&Live>) -> Result<String, String> {
    match &ctx.check_name {
        Some(n) => Ok(n.clone()),
        None => crate::route::hosts_view::default_check_name(ctx, adapter, live),
    }
}

/// After uninstall: the scope must be gone.
pub fn gone(ctx: &mut Ctx<'_>, adapter: AdapterName, p: &Params) -> Check {
    if adapter == AdapterName::NmDnsmasq {
        return check(
            "route gone",
            true,
            "the dnsmasq.d file is gone and NetworkManager's dnsmasq reloaded",
        );
    }
    let wait = ctx.settle;
    // Each zone on its own: the reverse zone's route must be gone too.
    let each: Vec<Params> = p
        .zones()
        .iter()
        .map(|z| Params {
            zone: z.to_string(),
            reverse: None,
            ..p.clone()
        })
        .collect();
    let r = poll(wait, || {
        for q in &each {
            if let Ok(d) = scope(ctx, adapter, q, Duration::ZERO) {
                return Err(format!("still present: {d}"));
            }
        }
        Ok(())
    });
    match r {
        Ok(()) => check(
            "route gone",
            true,
            format!("{} no longer shows the route", adapter.as_str()),
        ),
        Err(e) => check("route gone", false, e),
    }
}

#[cfg(test)]
mod tests {
    use super::status_section;

    #[test]
    fn a_delegate_section_is_matched_exactly() {
        // As systemd 262's resolvectl prints it (right-aligned labels), plus a look-alike delegate.
        let out = "Global\n         Protocols: -LLMNR\nCurrent DNS Server: 127.0.0.2\n       DNS Servers: 127.0.0.2\n\nDelegate pigsty-dns-old\nCurrent DNS Server: 127.0.0.1:5354\n       DNS Servers: 127.0.0.1:5354\n\nDelegate pigsty-dns\nCurrent DNS Server: 127.0.0.1:5399\n       DNS Servers: 127.0.0.1:5399\n        DNS Domain: ~pigsty.test\n     Default Route: no\n\nLink 2 (pu0)\n       DNS Servers: 127.0.0.1:5354\n";
        let ours = status_section(out, "Delegate pigsty-dns").unwrap();
        assert!(
            ours.contains("Current DNS Server: 127.0.0.1:5399")
                && ours.contains("Default Route: no"),
            "{ours}"
        );
        assert!(!ours.contains("127.0.0.1:5354"), "{ours}");
        assert_eq!(
            status_section("Delegate pigsty-dns-old\n  x\n", "Delegate pigsty-dns"),
            None
        );
        assert_eq!(
            status_section(
                "Delegate pigsty-dns\nCurrent DNS Server: y\n",
                "Delegate pigsty-dns"
            ),
            Some("Current DNS Server: y\n")
        );
    }
}
