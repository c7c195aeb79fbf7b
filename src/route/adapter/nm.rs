//! nm-dnsmasq: NetworkManager's own dnsmasq (dns=dnsmasq) reads /etc/NetworkManager/dnsmasq.d; a
//! `server=/<zone>/` line sends only the zone to the daemon and never elsewhere.

use super::types::{AdapterName, Family, Params, Render, Step};
use crate::route::files::wrap;

/// Who answers for this route.
pub const FAMILY: Family = Family::NmDnsmasq;

const NAME: AdapterName = AdapterName::NmDnsmasq;

pub const PATH: &str = "/etc/NetworkManager/dnsmasq.d/pigsty-dns.conf";

pub fn render(p: &Params) -> Render {
    // One line per zone (the reverse zone's too): dnsmasq forwards each domain only where its line says.
    let body: String = p
        .zones()
        .iter()
        .map(|z| format!("server=/{z}/{}#{}\n", p.server.ip(), p.server.port()))
        .collect();
    let reload = Step::new(
        &["nmcli", "general", "reload", "dns-full"],
        "restart NetworkManager's dnsmasq so it reads dnsmasq.d",
    );
    Render::one_file(PATH, wrap(NAME.as_str(), None, &body), reload)
}
