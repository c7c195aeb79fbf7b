//! resolved-delegate (systemd >= 258): a DNS delegate file routes only the zone, needs no link, and
//! never falls back; resolved re-reads it on reload (SIGHUP).

use super::types::{AdapterName, Family, Params, Render, ResolvedScope, Step};
use crate::route::files::wrap;

/// Who answers for this route.
pub const FAMILY: Family = Family::Resolved(ResolvedScope::Delegate);

const NAME: AdapterName = AdapterName::ResolvedDelegate;

pub const PATH: &str = "/etc/systemd/dns-delegate.d/pigsty-dns.dns-delegate";
/// How resolved names the delegate (the file name without its suffix).
pub const DELEGATE_ID: &str = "pigsty-dns";

pub fn render(p: &Params) -> Render {
    let body = format!(
        "[Delegate]\nDNS={}\nDomains={}\nDefaultRoute=no\n",
        p.server,
        p.routing_domains().join(" ")
    );
    let reload = Step::new(
        &["systemctl", "reload", "systemd-resolved.service"],
        "resolved re-reads dns-delegate.d on reload (SIGHUP)",
    );
    Render::one_file(PATH, wrap(NAME.as_str(), None, &body), reload)
}
