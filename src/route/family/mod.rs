//! Resolver families: who answers for a route — systemd-resolved, macOS's mDNSResponder or
//! NetworkManager's dnsmasq. An adapter says once which family it belongs to (`adapter::family`);
//! each family is one file holding what depends on the resolver rather than on the files written:
//! how it shows the route's scope, its forward, reverse and unrelated-name lookups, how a route install
//! proves its answers come from the daemon, its caching rule (the `load` visibility line), the cache
//! flush after a change, and the hints `route status` prints. `nss` holds the glibc lookups the Linux
//! families share.

mod dnsmasq;
mod mdns;
mod nss;
mod resolved;

use std::net::Ipv4Addr;
use std::time::Duration;

use super::adapter::{self, AdapterName, Family, Params, Step};
use super::check::Check;
use super::context::Ctx;
use super::live::Live;
use crate::sys::Runner;
use crate::zone::generation::Generation;

#[cfg(test)]
pub(crate) use resolved::resolved_caching;

/// What this host's resolver caches of the daemon's answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caching {
    pub positive: bool,
    pub negative: bool,
}

impl Caching {
    pub const ALL: Caching = Caching {
        positive: true,
        negative: true,
    };
}

/// What to do when the scope or a lookup fails, in the words of the family's platform.
pub struct Hints {
    pub scope: String,
    pub lookup: String,
}

/// Everything verification, `route status` and `load --wait-visible` ask of the resolver that
/// answers for a route.
pub trait Resolver {
    /// Does the resolver show the route's scope? Ok(detail) or Err(why not); one look.
    fn scope(&self, runner: &mut dyn Runner, p: &Params) -> Result<String, String>;
    /// Whether a change takes a moment to show in the scope (then verification polls it).
    fn scope_settles(&self) -> bool {
        true
    }
    /// Our own scope's label among the resolver's claims on a zone (resolved only).
    fn owner(&self, _p: &Params) -> Option<String> {
        None
    }
    /// After the scope: checks that the resolver takes its answers from the daemon (`serial` is what
    /// the daemon answered directly).
    fn reaches_daemon(
        &self,
        ctx: &mut Ctx<'_>,
        p: &Params,
        serial: u32,
        live: Option<&Live>,
    ) -> Vec<Check>;
    /// Lookups of `name` through the native path, each wanting `want`.
    fn forward(&self, ctx: &mut Ctx<'_>, name: &str, want: Ipv4Addr, wait: Duration) -> Vec<Check>;
    /// Reverse lookups of `addr` through the native path, each wanting the canonical name `want`.
    fn reverse(&self, ctx: &mut Ctx<'_>, addr: Ipv4Addr, want: &str, wait: Duration) -> Vec<Check>;
    /// One lookup of a name outside the zone (its answer does not matter: the daemon's counter does).
    fn unrelated(&self, runner: &mut dyn Runner, name: &str);
    /// The address the native path gives `name` now (`None`: no address).
    fn native_a(&self, runner: &mut dyn Runner, name: &str) -> Option<Ipv4Addr>;
    /// What this host's resolver caches of the daemon at `server`.
    fn caching(&self, server: &str) -> Caching;
    /// The `visible:` line after a load's "live": how long an answer a program already got may stay
    /// in this host's caches.
    fn cache_line(&self, g: &Generation, caching: Caching) -> String;
    /// How long a cached "no such name" may outlive the change, and why.
    fn negative_bound(&self, g: &Generation) -> (Duration, String) {
        (
            Duration::from_secs(u64::from(g.soa.minimum)),
            format!(
                "a cached \"no such name\" lives up to the SOA minimum, {} s",
                g.soa.minimum
            ),
        )
    }
    /// The line that tells how to see a change now, printed (never run); `None`: nothing to purge.
    fn purge_line(&self) -> Option<String> {
        None
    }
    /// After uninstall, when the resolver has no scope to look at: what shows the route is gone.
    fn gone_without_scope(&self) -> Option<&'static str> {
        None
    }
    /// The caches to flush after the route changes.
    fn flush(&self) -> Vec<Step>;
    /// What `route status` suggests when the scope or a lookup fails.
    /// `zones`: every zone the route carries, forward zones first, the reverse zone last.
    fn hints(&self, zones: &[String]) -> Hints;
}

/// The resolver of a family.
pub fn of(f: Family) -> &'static dyn Resolver {
    match f {
        Family::Resolved(scope) => resolved::of(scope),
        Family::Mdns => &mdns::Mdns,
        Family::NmDnsmasq => &dnsmasq::Dnsmasq,
    }
}

/// The resolver that answers for `adapter`'s route.
pub fn of_adapter(a: AdapterName) -> &'static dyn Resolver {
    of(adapter::family(a))
}
