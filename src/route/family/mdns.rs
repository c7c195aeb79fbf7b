//! macOS's mDNSResponder, reading `/etc/resolver` through configd: the scope configd hands it
//! (`scutil --dns`), lookups through it (`dscacheutil`) and through getaddrinfo with default hints
//! (what curl and Safari call), its caching (a negative floor of 60 s) and purge. That an answer was
//! used is proven by random probe names — a forward name and, with the reverse zone routed, the PTR of
//! a fresh unused address of its /24 — that the daemon itself must list among the names it answered
//! NXDOMAIN (its status file's `nxdomain_names`): a counter any client moves, that list only this
//! lookup puts its name in.

use std::net::Ipv4Addr;
use std::path::Path;
use std::time::Duration;

use super::super::adapter::{Params, Step, macos};
use super::super::check::{Check, check, poll, polled};
use super::super::context::Ctx;
use super::super::counters::{fresh_status, random_label};
use super::super::dnsinfo;
use super::super::live::Live;
use super::{Caching, Hints, Resolver, nss};
use crate::store::status_file::{CountersSnapshot, Status};
use crate::sys::{Output, Runner, argv};
use crate::zone::generation::Generation;

/// mDNSResponder's floor for a negative answer, whatever the SOA minimum says (mDNSCore/mDNS.c),
/// doubled on each refresh up to an hour.
pub const MACOS_NEGATIVE_FLOOR_SECS: u32 = 60;
pub const MACOS_NEGATIVE_CEILING_SECS: u32 = 3600;

/// The command that purges mDNSResponder's cache (printed, never run).
pub const MACOS_PURGE: &str = "sudo killall -HUP mDNSResponder";

pub struct Mdns;

impl Resolver for Mdns {
    /// One block must carry the domain, our nameserver and our port (configd's view; whether
    /// mDNSResponder uses it is what the probes of `reaches_daemon` prove).
    fn scope(&self, runner: &mut dyn Runner, p: &Params) -> Result<String, String> {
        let out = runner.run(&argv(&[macos::SCUTIL, "--dns"]));
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

    fn reaches_daemon(
        &self,
        ctx: &mut Ctx<'_>,
        p: &Params,
        _: u32,
        live: Option<&Live>,
    ) -> Vec<Check> {
        lookups_reach_daemon(ctx, p, live)
    }

    fn forward(&self, ctx: &mut Ctx<'_>, name: &str, want: Ipv4Addr, wait: Duration) -> Vec<Check> {
        vec![
            dscacheutil_forward(ctx, name, want, wait),
            getaddrinfo_forward(ctx, name, want, wait),
        ]
    }

    fn reverse(&self, ctx: &mut Ctx<'_>, addr: Ipv4Addr, want: &str, wait: Duration) -> Vec<Check> {
        let a = addr.to_string();
        vec![nss::reverse_by(
            ctx,
            "dscacheutil (reverse)",
            &[macos::DSCACHEUTIL, "-q", "host", "-a", "ip_address", &a],
            |out| {
                out.lines()
                    .find_map(|l| l.trim().strip_prefix("name: "))
                    .map(str::to_string)
            },
            want,
            wait,
        )]
    }

    fn unrelated(&self, runner: &mut dyn Runner, name: &str) {
        dscacheutil(runner, name);
    }

    fn native_a(&self, runner: &mut dyn Runner, name: &str) -> Option<Ipv4Addr> {
        dscacheutil(runner, name)
            .stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix("ip_address:")?.trim().parse().ok())
    }

    fn caching(&self, _: &str) -> Caching {
        Caching::ALL
    }

    fn cache_line(&self, g: &Generation, _: Caching) -> String {
        let (pos, neg) = (g.ttl, g.soa.minimum);
        format!(
            "visible: programs that already asked may keep the old answer up to {pos} s (the records' TTL); mDNSResponder keeps a \"no such name\" at least {MACOS_NEGATIVE_FLOOR_SECS} s whatever the SOA minimum ({neg} s) says, doubling on refresh up to {MACOS_NEGATIVE_CEILING_SECS} s; to see it now: {MACOS_PURGE} (not run)\n"
        )
    }

    fn negative_bound(&self, g: &Generation) -> (Duration, String) {
        (
            Duration::from_secs(u64::from(g.soa.minimum.max(MACOS_NEGATIVE_FLOOR_SECS))),
            format!(
                "mDNSResponder keeps a \"no such name\" at least {MACOS_NEGATIVE_FLOOR_SECS} s, doubling on refresh up to {MACOS_NEGATIVE_CEILING_SECS} s"
            ),
        )
    }

    fn purge_line(&self) -> Option<String> {
        Some(format!("to see it now: {MACOS_PURGE} (printed, not run)\n"))
    }

    /// The same flush as the adapter's undo (the adapter holds it: its undo runs it).
    fn flush(&self) -> Vec<Step> {
        macos::flush()
    }

    fn hints(&self, zones: &[String]) -> Hints {
        // Every file the reinstall writes, so a user who checks them by hand looks at all of them.
        let files: Vec<String> = zones.iter().map(|z| macos::path_for(z)).collect();
        let files = match files.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => files.concat(),
        };
        let zone = zones
            .first()
            .map_or(crate::defaults::ZONES[0], |z| z.as_str());
        Hints {
            scope: format!(
                "sudo pigsty-dns route uninstall --yes && sudo pigsty-dns route install --yes (rewrites {files}); {} --dns shows what configd hands mDNSResponder",
                macos::SCUTIL
            ),
            lookup: format!(
                "sudo {} -flushcache; sudo {} -HUP mDNSResponder; then {} -q host -a name meta.{zone}",
                macos::DSCACHEUTIL,
                macos::KILLALL,
                macos::DSCACHEUTIL
            ),
        }
    }
}

/// A host lookup through mDNSResponder (there is no getent on macOS; dig and nslookup bypass
/// /etc/resolver). Its host-by-name path asks with flags 0: it answers even when getaddrinfo does not.
fn dscacheutil(runner: &mut dyn Runner, name: &str) -> Output {
    runner.run(&argv(&[
        macos::DSCACHEUTIL,
        "-q",
        "host",
        "-a",
        "name",
        name,
    ]))
}

fn dscacheutil_forward(ctx: &mut Ctx<'_>, name: &str, want: Ipv4Addr, wait: Duration) -> Check {
    let line = format!("ip_address: {want}");
    polled("dscacheutil", wait, || {
        let out = dscacheutil(ctx.runner, name);
        if out.ok() && out.stdout.lines().any(|l| l.trim() == line) {
            Ok(format!("dscacheutil -q host -a name {name}: {want}"))
        } else {
            Err(format!(
                "dscacheutil -q host -a name {name}: {} (want {want})",
                if out.ok() && out.stdout.trim().is_empty() {
                    "no address".to_string()
                } else {
                    out.summary()
                }
            ))
        }
    })
}

/// The served name through getaddrinfo with default hints, in this process: unlike dscacheutil (flags
/// 0 on its host-by-name path) it asks with `AI_ADDRCONFIG`, so it fails, as curl and Safari do, when
/// the route's resolver lacks the A flag.
fn getaddrinfo_forward(ctx: &mut Ctx<'_>, name: &str, want: Ipv4Addr, wait: Duration) -> Check {
    let want_s = want.to_string();
    polled("getaddrinfo", wait, || {
        let out = ctx.runner.getaddrinfo(name);
        if out.ok() && out.stdout.lines().any(|l| l.trim() == want_s) {
            Ok(format!("getaddrinfo({name}), default hints: {want}"))
        } else {
            Err(format!(
                "getaddrinfo({name}), default hints: {} (want {want})",
                if out.ok() {
                    "no IPv4 address".to_string()
                } else {
                    out.summary()
                }
            ))
        }
    })
}

/// Queries of the zone the daemon answered (a name, or NXDOMAIN for a name it does not have).
fn zone_answers(c: &CountersSnapshot) -> u64 {
    c.noerror + c.nxdomain
}

const FORWARD: &str = "lookup reaches the daemon";
const REVERSE: &str = "reverse lookup reaches the daemon";

/// The probes: the zone's, through getaddrinfo; the reverse zone's when it is routed, through
/// dscacheutil (`-a ip_address`) for a fresh unused address each poll.
fn lookups_reach_daemon(ctx: &mut Ctx<'_>, p: &Params, live: Option<&Live>) -> Vec<Check> {
    let Some(sf) = ctx.status_file.clone() else {
        return vec![check(
            FORWARD,
            false,
            "no status file of the daemon to read what it answered from: give --state-dir",
        )];
    };
    // Every forward zone on its own: each has its own resolver file, so each can be sent elsewhere.
    let mut v: Vec<Check> = p
        .zones
        .iter()
        .map(|zone| {
            probe(ctx, FORWARD, zone, &sf, p, |ctx| {
                let name = format!("{}.{zone}", random_label());
                let out = ctx.runner.getaddrinfo(&name);
                (format!("getaddrinfo({name})"), name, out)
            })
        })
        .collect();
    let Some(rev) = p.reverse.clone() else {
        return v;
    };
    let Some(mut fresh) = FreshAddress::new(&rev, live) else {
        v.push(check(
            REVERSE,
            false,
            format!("{rev} is not a /24 reverse zone"),
        ));
        return v;
    };
    let rev_zone = rev.clone();
    v.push(probe(ctx, REVERSE, &rev_zone, &sf, p, move |ctx| {
        let Some(a) = fresh.next() else {
            return (
                format!("every address of {rev} has a PTR"),
                String::new(),
                Output::fail(1, "no unused address to ask for"),
            );
        };
        let s = a.to_string();
        let out = ctx.runner.run(&argv(&[
            macos::DSCACHEUTIL,
            "-q",
            "host",
            "-a",
            "ip_address",
            &s,
        ]));
        let [o1, o2, o3, o4] = a.octets();
        (
            format!("dscacheutil -q host -a ip_address {s}"),
            format!("{o4}.{o3}.{o2}.{o1}.in-addr.arpa"),
            out,
        )
    }));
    v
}

/// Polls `ask` (a lookup of a fresh name each time: mDNSResponder applies a change after ~25 ms and
/// caches negative answers per name, for at least 60 s) until the daemon lists the name asked for
/// among its NXDOMAIN names. A server from before that list: its answer counters must move (weaker:
/// any client moves them), and the detail says so.
fn probe(
    ctx: &mut Ctx<'_>,
    label: &str,
    zone: &str,
    status_file: &Path,
    p: &Params,
    mut ask: impl FnMut(&mut Ctx<'_>) -> (String, String, Output),
) -> Check {
    let wait = ctx.status_wait;
    let before = match fresh_status(status_file, wait) {
        Ok(s) => zone_answers(&s.counters),
        Err(e) => return check(label, false, e),
    };
    let mut tried = 0;
    let r = poll(ctx.settle, || {
        let (shown, qname, out) = ask(ctx);
        tried += 1;
        let outcome = if out.ok() { "ok".into() } else { out.summary() };
        match evidence(&fresh_status(status_file, wait)?, &qname, before) {
            Some(how) => Ok(format!("{shown} reached the daemon: {how}")),
            None => Err(format!(
                "{shown} ({outcome}) did not reach the daemon at {}: it answered no NXDOMAIN for {qname}",
                p.server
            )),
        }
    });
    match r {
        Ok(d) => check(label, true, d),
        Err(e) => check(
            label,
            false,
            format!(
                "{e} ({tried} fresh name(s) tried): mDNSResponder sends {zone} somewhere else; with the \
                 route's block listed, something may bypass /etc/resolver: encrypted DNS the network \
                 designates (DHCP DNR, DDR), a DNS proxy app (NEDNSProxy) or iCloud Private Relay"
            ),
        ),
    }
}

/// How the status shows that the daemon answered `qname`; `None` when it does not.
fn evidence(s: &Status, qname: &str, before: u64) -> Option<String> {
    match &s.nxdomain_names {
        Some(names) => names
            .iter()
            .any(|n| n.eq_ignore_ascii_case(qname))
            .then(|| {
                format!("it answered NXDOMAIN for {qname} itself (status.json nxdomain_names)")
            }),
        None => {
            let after = zone_answers(&s.counters);
            (after > before).then(|| {
                format!(
                    "its answer counters went {before} -> {after} (a server from before nxdomain_names, \
                     whose counters any client moves: restart it for the proof)"
                )
            })
        }
    }
}

/// Unused addresses of a reverse zone's /24, each once, from a start that differs from run to run
/// (a name asked in an earlier run may still be cached as negative).
struct FreshAddress {
    net: [u8; 3],
    used: Vec<Ipv4Addr>,
    at: u8,
    left: u16,
}

impl FreshAddress {
    fn new(rev: &str, live: Option<&Live>) -> Option<FreshAddress> {
        let labels: Vec<u8> = rev
            .strip_suffix(".in-addr.arpa")?
            .split('.')
            .map(|l| l.parse().ok())
            .collect::<Option<_>>()?;
        let [c, b, a] = labels[..] else { return None };
        let seed = random_label()
            .bytes()
            .fold(0u32, |h, x| h.wrapping_mul(31).wrapping_add(u32::from(x)));
        Some(FreshAddress {
            net: [a, b, c],
            used: live
                .map(|l| l.ptr.iter().map(|p| p.address).collect())
                .unwrap_or_default(),
            at: (seed % 254) as u8 + 1,
            left: 254,
        })
    }
}

impl Iterator for FreshAddress {
    type Item = Ipv4Addr;

    /// The next host number in 1..=254 without a PTR in the live generation.
    fn next(&mut self) -> Option<Ipv4Addr> {
        while self.left > 0 {
            self.left -= 1;
            let [a, b, c] = self.net;
            let addr = Ipv4Addr::new(a, b, c, self.at);
            self.at = if self.at >= 254 { 1 } else { self.at + 1 };
            if !self.used.contains(&addr) {
                return Some(addr);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_addresses_skip_the_ptrs_and_end() {
        let mut f = FreshAddress::new("10.10.10.in-addr.arpa", None).unwrap();
        f.used = vec![Ipv4Addr::new(10, 10, 10, 10)];
        let all: Vec<Ipv4Addr> = f.by_ref().collect();
        assert_eq!(all.len(), 253);
        assert!(all.iter().all(|a| a.octets()[..3] == [10, 10, 10]));
        assert!(!all.contains(&Ipv4Addr::new(10, 10, 10, 10)));
        assert!(
            !all.iter()
                .any(|a| a.octets()[3] == 0 || a.octets()[3] == 255)
        );
        let distinct: std::collections::BTreeSet<_> = all.iter().collect();
        assert_eq!(distinct.len(), 253);
        assert!(FreshAddress::new("10.10.in-addr.arpa", None).is_none());
        assert!(FreshAddress::new("pigsty.test", None).is_none());
    }
}
