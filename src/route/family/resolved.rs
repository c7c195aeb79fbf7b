//! systemd-resolved: the scope a route makes (a link's settings, a delegate, the global settings), the
//! lookups through `resolvectl` and NSS, its caching (`Cache=`, `CacheFromLocalhost=`), its flush.

use std::net::Ipv4Addr;
use std::path::Path;
use std::time::Duration;

use super::super::adapter::delegate::DELEGATE_ID;
use super::super::adapter::{Params, ResolvedScope, Step};
use super::super::check::{Check, check, poll, polled};
use super::super::context::Ctx;
use super::super::live::Live;
use super::{Caching, Hints, Resolver, nss};
use crate::sys::{Runner, argv};
use crate::zone::generation::Generation;

/// resolved, with the kind of scope the route makes in it.
pub struct Resolved(ResolvedScope);

pub fn of(scope: ResolvedScope) -> &'static dyn Resolver {
    match scope {
        ResolvedScope::Link => &Resolved(ResolvedScope::Link),
        ResolvedScope::Delegate => &Resolved(ResolvedScope::Delegate),
        ResolvedScope::Global => &Resolved(ResolvedScope::Global),
    }
}

impl Resolver for Resolved {
    fn scope(&self, runner: &mut dyn Runner, p: &Params) -> Result<String, String> {
        match self.0 {
            ResolvedScope::Link => link_scope(runner, p),
            ResolvedScope::Delegate => delegate_scope(runner, p),
            ResolvedScope::Global => global_scope(runner, p),
        }
    }

    /// The global settings show a change as soon as resolved has restarted, which apply waits for.
    fn scope_settles(&self) -> bool {
        self.0 != ResolvedScope::Global
    }

    fn owner(&self, p: &Params) -> Option<String> {
        Some(match self.0 {
            ResolvedScope::Link => format!("link {}", p.link),
            ResolvedScope::Delegate => format!("delegate {DELEGATE_ID}"),
            ResolvedScope::Global => "the global settings".into(),
        })
    }

    fn reaches_daemon(
        &self,
        ctx: &mut Ctx<'_>,
        p: &Params,
        serial: u32,
        _: Option<&Live>,
    ) -> Vec<Check> {
        let wait = ctx.settle;
        // One serial for every zone of a generation: each forward zone's SOA must carry it.
        p.zones
            .iter()
            .map(|z| soa_through_resolved(ctx, z, serial, wait))
            .collect()
    }

    fn forward(&self, ctx: &mut Ctx<'_>, name: &str, want: Ipv4Addr, wait: Duration) -> Vec<Check> {
        vec![
            resolvectl_forward(ctx, name, want, wait),
            nss::forward(ctx, name, want, wait),
        ]
    }

    fn reverse(&self, ctx: &mut Ctx<'_>, addr: Ipv4Addr, want: &str, wait: Duration) -> Vec<Check> {
        let a = addr.to_string();
        vec![
            // "10.10.10.10: meta.pigsty.test                  -- link: pigsty-dns0"
            nss::reverse_by(
                ctx,
                "resolvectl query (reverse)",
                &["resolvectl", "--cache=no", "query", &a],
                first_word_after_colon,
                want,
                wait,
            ),
            nss::reverse(ctx, addr, want, wait),
        ]
    }

    fn unrelated(&self, runner: &mut dyn Runner, name: &str) {
        runner.run(&argv(&["resolvectl", "--cache=no", "query", name]));
    }

    fn native_a(&self, runner: &mut dyn Runner, name: &str) -> Option<Ipv4Addr> {
        nss::native_a(runner, name)
    }

    fn caching(&self, server: &str) -> Caching {
        let loopback = server
            .parse::<std::net::SocketAddr>()
            .is_ok_and(|a| a.ip().is_loopback());
        resolved_caching(&crate::sys::resolved_conf::texts(Path::new("/")), loopback)
    }

    fn cache_line(&self, g: &Generation, caching: Caching) -> String {
        let (pos, neg) = (g.ttl, g.soa.minimum);
        if !caching.positive {
            return "visible: at once for new lookups: systemd-resolved caches nothing from the daemon on a loopback address (CacheFromLocalhost=no, its default, or Cache=no); only a program's own cache (a browser, a JVM) may keep the old answer\n".to_string();
        }
        format!(
            "visible: programs that already asked may keep the old answer up to {pos} s (systemd-resolved caches by the records' TTL), a \"no such name\" up to {} s; no cache is flushed\n",
            if caching.negative { neg } else { 0 }
        )
    }

    fn flush(&self) -> Vec<Step> {
        vec![Step::new(
            &["resolvectl", "flush-caches"],
            "drop answers resolved cached before the route existed",
        )]
    }

    fn hints(&self, _zones: &[String]) -> Hints {
        Hints {
            scope: "pigsty-dns route uninstall && pigsty-dns route install (re-creates the link and its address)".into(),
            lookup: "check the scope item; resolvectl flush-caches".into(),
        }
    }
}

/// systemd-resolved's caching of the daemon's answers, from resolved.conf and its drop-ins (the last
/// `[Resolve]` assignment wins): `Cache=` (default yes; `no-negative`) and, for a server on a
/// loopback address, `CacheFromLocalhost=` (default no: then nothing from it is cached at all).
pub fn resolved_caching(texts: &[String], server_on_loopback: bool) -> Caching {
    use crate::sys::resolved_conf::{assignments, boolean, boolean_setting};
    // Cache= is a boolean or "no-negative"; what systemd cannot read it ignores.
    let cache = assignments(texts, "Cache")
        .into_iter()
        .fold("yes".to_string(), |now, v| {
            let v = v.to_ascii_lowercase();
            match v.as_str() {
                "" => "yes".into(),
                "no-negative" => v,
                _ => boolean(&v).map_or(now, |b| if b { "yes" } else { "no" }.into()),
            }
        });
    let from_localhost = boolean_setting(texts, "CacheFromLocalhost", false);
    let on = cache != "no" && (from_localhost || !server_on_loopback);
    Caching {
        positive: on,
        negative: on && cache != "no-negative",
    }
}

/// The first of the route's domains that `t` does not mention.
fn missing_domain(p: &Params, t: &str) -> Option<String> {
    p.routing_domains()
        .into_iter()
        .find(|d| !t.contains(d.as_str()))
}

fn link_scope(runner: &mut dyn Runner, p: &Params) -> Result<String, String> {
    let server = p.server.to_string();
    let domain = p.routing_domains().join(" ");
    let out = runner.run(&argv(&["resolvectl", "--no-pager", "status", &p.link]));
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

fn delegate_scope(runner: &mut dyn Runner, p: &Params) -> Result<String, String> {
    let server = p.server.to_string();
    let domain = p.routing_domains().join(" ");
    let out = runner.run(&argv(&["resolvectl", "--no-pager", "status"]));
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

fn global_scope(runner: &mut dyn Runner, p: &Params) -> Result<String, String> {
    let server = p.server.to_string();
    let domain = p.routing_domains().join(" ");
    let out = runner.run(&argv(&["resolvectl", "--no-pager", "status"]));
    match missing_domain(p, &out.stdout) {
        _ if !out.stdout.contains(&server) => {
            Err(format!("resolvectl status does not list {server}"))
        }
        Some(d) => Err(format!("resolvectl status does not list the domain {d}")),
        None => Ok(format!("resolvectl status lists {server}, {domain}")),
    }
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
