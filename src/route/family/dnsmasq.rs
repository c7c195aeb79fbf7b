//! NetworkManager's dnsmasq: no scope to show (judged by the lookup), NSS lookups, caching by the
//! records' TTL, and a cache that starts empty whenever NetworkManager reloads it.

use std::net::Ipv4Addr;
use std::time::Duration;

use super::super::adapter::{Params, Step};
use super::super::check::Check;
use super::super::context::Ctx;
use super::super::live::Live;
use super::{Caching, Hints, Resolver, nss};
use crate::sys::Runner;
use crate::zone::generation::Generation;

pub struct Dnsmasq;

impl Resolver for Dnsmasq {
    fn scope(&self, _: &mut dyn Runner, _: &Params) -> Result<String, String> {
        Ok("NetworkManager's dnsmasq has no scope to show; judged by the lookup".into())
    }

    fn scope_settles(&self) -> bool {
        false
    }

    fn reaches_daemon(&self, _: &mut Ctx<'_>, _: &Params, _: u32, _: Option<&Live>) -> Vec<Check> {
        vec![]
    }

    fn forward(&self, ctx: &mut Ctx<'_>, name: &str, want: Ipv4Addr, wait: Duration) -> Vec<Check> {
        vec![nss::forward(ctx, name, want, wait)]
    }

    fn reverse(&self, ctx: &mut Ctx<'_>, addr: Ipv4Addr, want: &str, wait: Duration) -> Vec<Check> {
        vec![nss::reverse(ctx, addr, want, wait)]
    }

    fn unrelated(&self, runner: &mut dyn Runner, name: &str) {
        nss::unrelated(runner, name);
    }

    fn native_a(&self, runner: &mut dyn Runner, name: &str) -> Option<Ipv4Addr> {
        nss::native_a(runner, name)
    }

    fn caching(&self, _: &str) -> Caching {
        Caching::ALL
    }

    fn cache_line(&self, g: &Generation, _: Caching) -> String {
        format!(
            "visible: programs that already asked may keep the old answer up to {} s (NetworkManager's dnsmasq caches by the records' TTL), a \"no such name\" up to {} s (the SOA minimum); no cache is flushed\n",
            g.ttl, g.soa.minimum
        )
    }

    fn gone_without_scope(&self) -> Option<&'static str> {
        Some("the dnsmasq.d file is gone and NetworkManager's dnsmasq reloaded")
    }

    /// dnsmasq starts with an empty cache when NetworkManager reloads it.
    fn flush(&self) -> Vec<Step> {
        vec![]
    }

    fn hints(&self, _zones: &[String]) -> Hints {
        Hints {
            scope: "pigsty-dns route uninstall && pigsty-dns route install".into(),
            lookup: "nmcli general reload dns-full; getent ahostsv4 NAME".into(),
        }
    }
}
