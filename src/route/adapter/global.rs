//! resolved-global: only on explicit request. A global DNS= is always a default route, so every
//! other name is sent to the daemon too; the plan carries that warning.

use super::types::{AdapterName, Family, Params, Render, ResolvedScope, Step};
use crate::route::files::wrap;

/// Who answers for this route.
pub const FAMILY: Family = Family::Resolved(ResolvedScope::Global);

const NAME: AdapterName = AdapterName::ResolvedGlobal;

pub const PATH: &str = "/etc/systemd/resolved.conf.d/pigsty-dns.conf";

pub fn render(p: &Params) -> Render {
    let body = format!(
        "[Resolve]\nDNS={}\nDomains={}\n",
        p.server,
        p.routing_domains().join(" ")
    );
    let restart = Step::new(
        &["systemctl", "reload-or-restart", "systemd-resolved.service"],
        "resolved reads resolved.conf.d",
    );
    Render::one_file(PATH, wrap(NAME.as_str(), None, &body), restart)
}
