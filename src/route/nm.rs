//! nm-dnsmasq: NetworkManager's own dnsmasq (dns=dnsmasq) reads /etc/NetworkManager/dnsmasq.d; a
//! `server=/<zone>/` line sends only the zone to the daemon and never elsewhere.

use super::files::wrap;
use super::plan::{Params, Render, Step};

pub const NAME: &str = "nm-dnsmasq";
pub const PATH: &str = "/etc/NetworkManager/dnsmasq.d/pigsty-dns.conf";

pub fn render(p: &Params) -> Render {
    let body = format!("server=/{}/{}#{}\n", p.zone, p.server.ip(), p.server.port());
    let reload = Step::new(
        &["nmcli", "general", "reload", "dns-full"],
        "restart NetworkManager's dnsmasq so it reads dnsmasq.d",
    );
    Render {
        files: vec![(PATH.to_string(), wrap(NAME, None, &body))],
        apply: vec![reload.clone()],
        enable: vec![],
        pre_undo: vec![],
        undo: vec![reload],
        warnings: vec![],
    }
}
