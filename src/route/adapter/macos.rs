//! macos-resolver: /etc/resolver/<zone>, picked up by configd through FSEvents. No `search` line: it
//! would make every bare hostname lookup hang while the daemon is down.

use super::types::{AdapterName, Params, Render, Step};
use crate::route::files::wrap;

const NAME: AdapterName = AdapterName::MacosResolver;

/// configd reads every file here as a resolver for the domain the file is named after.
pub const DIR: &str = "/etc/resolver";

pub fn path_for(zone: &str) -> String {
    format!("{DIR}/{zone}")
}

pub fn path(p: &Params) -> String {
    path_for(&p.zone)
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
        files: vec![(path(p), wrap(NAME.as_str(), None, &body))],
        // configd notices the file by itself; flushing is the flush phase.
        apply: vec![],
        enable: vec![],
        pre_undo: vec![],
        undo: flush,
        warnings: vec![],
    }
}
