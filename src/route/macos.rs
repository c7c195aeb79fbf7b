//! macos-resolver: /etc/resolver/<zone>, picked up by configd through FSEvents. No `search` line: it
//! would make every bare hostname lookup hang while the daemon is down.

use super::files::wrap;
use super::plan::{Params, Render, Step};

pub const NAME: &str = "macos-resolver";

pub fn path(p: &Params) -> String {
    format!("/etc/resolver/{}", p.zone)
}

pub fn render(p: &Params) -> Render {
    let body = format!(
        "domain {}\nnameserver {}\nport {}\n",
        p.zone,
        p.server.ip(),
        p.server.port()
    );
    let flush = vec![
        Step::new(&["dscacheutil", "-flushcache"], "flush cached answers"),
        Step::tolerant(
            &["killall", "-HUP", "mDNSResponder"],
            "mDNSResponder drops its cache",
        ),
    ];
    Render {
        files: vec![(path(p), wrap(NAME, None, &body))],
        // configd notices the file by itself; flushing is the flush phase.
        apply: vec![],
        enable: vec![],
        pre_undo: vec![],
        undo: flush,
        warnings: vec![],
    }
}
