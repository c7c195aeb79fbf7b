//! resolved-global: only on explicit request. A global DNS= is always a default route, so every
//! other name is sent to the daemon too; the plan carries that warning.

use super::files::wrap;
use super::plan::{Params, Render, Step};

pub const NAME: &str = "resolved-global";
pub const PATH: &str = "/etc/systemd/resolved.conf.d/pigsty-dns.conf";

pub fn render(p: &Params) -> Render {
    let body = format!("[Resolve]\nDNS={}\nDomains=~{}\n", p.server, p.zone);
    let restart = Step::new(
        &["systemctl", "reload-or-restart", "systemd-resolved.service"],
        "resolved reads resolved.conf.d",
    );
    Render {
        files: vec![(PATH.to_string(), wrap(NAME, None, &body))],
        apply: vec![restart.clone()],
        enable: vec![],
        pre_undo: vec![],
        undo: vec![restart],
        warnings: vec![],
    }
}
