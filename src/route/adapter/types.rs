//! The adapters' vocabulary: the adapter names, the parameters every adapter renders from, and what a
//! render is made of (files, and the steps that make the route live, keep it at boot and undo it).

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};

use serde::{Deserialize, Serialize};

use crate::sys::argv;

/// An adapter, named as the CLI, the journal, the ownership marker and the JSON reports spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum AdapterName {
    MacosResolver,
    ResolvedDelegate,
    ResolvedLink,
    NmDnsmasq,
    ResolvedGlobal,
}

impl AdapterName {
    pub const ALL: [AdapterName; 5] = [
        AdapterName::MacosResolver,
        AdapterName::ResolvedDelegate,
        AdapterName::ResolvedLink,
        AdapterName::NmDnsmasq,
        AdapterName::ResolvedGlobal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AdapterName::MacosResolver => "macos-resolver",
            AdapterName::ResolvedDelegate => "resolved-delegate",
            AdapterName::ResolvedLink => "resolved-link",
            AdapterName::NmDnsmasq => "nm-dnsmasq",
            AdapterName::ResolvedGlobal => "resolved-global",
        }
    }

    pub fn parse(s: &str) -> Option<AdapterName> {
        AdapterName::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

impl fmt::Display for AdapterName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Compares with the spelled name (as a marker line or a test holds it).
impl PartialEq<&str> for AdapterName {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The resolver that answers for a route: what an adapter says once, and everything that depends on
/// the resolver rather than on the files the adapter writes follows from it (`route::family`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// systemd-resolved, with the kind of scope the route makes in it.
    Resolved(ResolvedScope),
    /// macOS's mDNSResponder, reading `/etc/resolver` through configd.
    Mdns,
    /// NetworkManager's dnsmasq.
    NmDnsmasq,
}

/// Where resolved shows a route: a link's settings, a delegate, or the global settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResolvedScope {
    Link,
    Delegate,
    Global,
}

/// How resolved-link makes its link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// `.netdev` + `.network` files read by systemd-networkd.
    Networkd,
    /// `ip` + `resolvectl` now, and a oneshot unit that does the same at boot.
    Runtime,
}

impl Variant {
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Networkd => "networkd",
            Variant::Runtime => "runtime",
        }
    }
}

/// The kernel driver of resolved-link's link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LinkKind {
    Dummy,
    Ifb,
}

impl LinkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkKind::Dummy => "dummy",
            LinkKind::Ifb => "ifb",
        }
    }
}

/// Everything an adapter renders from.
#[derive(Debug, Clone, Serialize)]
pub struct Params {
    /// The served forward zones, in the daemon's order (`pigsty.test`, `pigsty`): each is routed.
    pub zones: Vec<String>,
    /// The reverse zone of the live generation's /24 (`C.B.A.in-addr.arpa`), routed beside `zones`;
    /// `None` before the first generation (the empty zone has no reverse zone).
    pub reverse: Option<String>,
    pub server: SocketAddr,
    pub link: String,
    pub address: Ipv4Addr,
    pub prefix: u8,
    pub kind: LinkKind,
    pub variant: Variant,
    pub ip: String,
    pub resolvectl: String,
    pub systemd_booted: bool,
    pub nm_running: bool,
}

impl Params {
    pub fn cidr(&self) -> String {
        format!("{}/{}", self.address, self.prefix)
    }

    /// The zones the route carries: the forward zones, then the reverse zone when there is one.
    pub fn zones(&self) -> Vec<&str> {
        self.zones
            .iter()
            .map(String::as_str)
            .chain(self.reverse.as_deref())
            .collect()
    }

    /// The forward zones as messages name them: "pigsty.test, pigsty".
    pub fn forward_shown(&self) -> String {
        self.zones.join(", ")
    }

    /// The route-only domains as resolved's `Domains=` (and `resolvectl domain`) spell them.
    pub fn routing_domains(&self) -> Vec<String> {
        self.zones().iter().map(|z| format!("~{z}")).collect()
    }
}

/// One command of a render, with the reason the plan shows beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub argv: Vec<String>,
    pub why: String,
    /// Failure is expected sometimes (the link already exists) and does not stop the run.
    pub may_fail: bool,
}

impl Step {
    pub fn new(words: &[&str], why: &str) -> Step {
        Step {
            argv: argv(words),
            why: why.into(),
            may_fail: false,
        }
    }
    pub fn tolerant(words: &[&str], why: &str) -> Step {
        Step {
            may_fail: true,
            ..Step::new(words, why)
        }
    }
}

/// An adapter's output for one set of parameters.
#[derive(Debug, Clone, Default)]
pub struct Render {
    /// (absolute path, full content including the ownership marker)
    pub files: Vec<(String, String)>,
    /// Makes the route live now (after the files are written).
    pub apply: Vec<Step>,
    /// Makes it come back at boot (systemctl), separate from `apply` so a host without systemd
    /// as PID 1 can apply now.
    pub enable: Vec<Step>,
    /// Run by uninstall before the files go, and after.
    pub pre_undo: Vec<Step>,
    pub undo: Vec<Step>,
    pub warnings: Vec<String>,
    /// Where the atomic writes keep their temporary files (absolute, as the system sees it) when the
    /// files' own directory must not hold them; `None`: beside each file.
    pub temp_dir: Option<&'static str>,
}

impl Render {
    /// One file, and the step that makes its reader (resolved, dnsmasq) take it in: run after the
    /// file is written, and again after uninstall removed it.
    pub fn one_file(path: &str, content: String, reload: Step) -> Render {
        Render {
            files: vec![(path.to_string(), content)],
            apply: vec![reload.clone()],
            undo: vec![reload],
            ..Render::default()
        }
    }
}
