//! resolved-link: a dedicated dummy (or ifb) link with a non-link-local address that carries
//! `DNS=<server>`, `Domains=~<zone>`, no default route, LLMNR and mDNS off. Without the address the
//! link gets no DNS scope and the zone's names fall through to the default upstream.

use super::types::{AdapterName, Family, Params, Render, ResolvedScope, Step, Variant};
use crate::route::files::wrap;

/// Who answers for this route.
pub const FAMILY: Family = Family::Resolved(ResolvedScope::Link);

const NAME: AdapterName = AdapterName::ResolvedLink;

pub const DEFAULT_LINK: &str = "pigsty-dns0";
pub const DEFAULT_LINK_ADDRESS: &str = "198.18.53.53/32";
pub const UNIT_NAME: &str = "pigsty-dns-route.service";
pub const UNIT_PATH: &str = "/etc/systemd/system/pigsty-dns-route.service";
/// NetworkManager's drop-in that keeps it off the link for good (the runtime variant, when NM runs):
/// `nmcli device set LINK managed no` is runtime state NM forgets when it restarts, and NM takes an
/// unmarked link of a kind it manages (a veth, a dummy) "connected (externally)" — `nmcli networking
/// off`/`on` then removes its address and with it the route. `+=` appends to the list other files
/// set (NetworkManager.conf(5), 1.42 and later); a file sorting after it with a plain `=` would
/// replace the list, which `route status` reports.
pub const NM_CONF_PATH: &str = "/etc/NetworkManager/conf.d/pigsty-dns.conf";
/// Where the networkd variant's `.netdev` and `.network` go.
pub const NETWORK_DIR: &str = "/etc/systemd/network";

pub fn netdev_path(p: &Params) -> String {
    format!("{NETWORK_DIR}/50-{}.netdev", p.link)
}
pub fn network_path(p: &Params) -> String {
    format!("{NETWORK_DIR}/50-{}.network", p.link)
}

pub fn render(p: &Params) -> Render {
    match p.variant {
        Variant::Networkd => networkd(p),
        Variant::Runtime => runtime(p),
    }
}

fn networkd(p: &Params) -> Render {
    let l = p.link.as_str();
    let netdev = format!(
        "[NetDev]\nName={l}\nKind={}\nDescription=pigsty-dns route for {}\n",
        p.kind.as_str(),
        p.forward_shown()
    );
    let network = format!(
        "[Match]\nName={l}\n\n[Link]\nRequiredForOnline=no\n\n[Network]\nAddress={}\nDNS={}\nDomains={}\n\
         DNSDefaultRoute=no\nLinkLocalAddressing=no\nIPv6AcceptRA=no\nLLMNR=no\nMulticastDNS=no\nConfigureWithoutCarrier=yes\n",
        p.cidr(),
        p.server,
        p.routing_domains().join(" ")
    );
    let reload = Step::new(
        &["networkctl", "reload"],
        "networkd reads the new .netdev/.network and creates the link",
    );
    Render {
        files: vec![
            (netdev_path(p), wrap(NAME.as_str(), Some(l), &netdev)),
            (network_path(p), wrap(NAME.as_str(), Some(l), &network)),
        ],
        // A reload leaves a link whose files did not change as it is: reconfigure puts a removed
        // address back (issue 26, row 5); it fails harmlessly while networkd still creates the link.
        apply: vec![
            reload.clone(),
            Step::tolerant(
                &["networkctl", "reconfigure", l],
                "re-apply the .network to the link if it exists (an address removed by hand comes back)",
            ),
        ],
        // networkd reads /etc/systemd/network at boot by itself: nothing to enable.
        enable: vec![],
        pre_undo: vec![],
        undo: vec![
            reload,
            // networkd does not delete a netdev whose file went away.
            Step::tolerant(
                &["ip", "link", "del", l],
                "remove the link (its DNS settings go with it)",
            ),
        ],
        warnings: vec![],
        temp_dir: None,
    }
}

/// The commands that make the route live, as argv words. The unit runs the same with absolute paths.
fn live_commands(p: &Params, ip: &str, rctl: &str) -> Vec<(Vec<String>, bool, &'static str)> {
    let l = p.link.clone();
    let s = |v: &[&str]| v.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let server = p.server.to_string();
    let cidr = p.cidr();
    vec![
        (
            s(&[ip, "link", "add", &l, "type", p.kind.as_str()]),
            true,
            "create the link (may exist already)",
        ),
        (
            s(&[ip, "link", "set", &l, "addrgenmode", "none"]),
            true,
            "no automatic fe80:: address",
        ),
        (
            s(&[ip, "addr", "add", &cidr, "dev", &l]),
            true,
            "a non-link-local address: without it the link gets no DNS scope",
        ),
        (
            s(&[ip, "link", "set", &l, "up"]),
            false,
            "bring the link up",
        ),
        (
            s(&[rctl, "dns", &l, &server]),
            false,
            "the daemon is the link's only DNS server",
        ),
        (
            [s(&[rctl, "domain", &l]), p.routing_domains()].concat(),
            false,
            "route only the zone (and its reverse zone) to it",
        ),
        (
            s(&[rctl, "default-route", &l, "no"]),
            false,
            "never a default route for other names",
        ),
        (s(&[rctl, "llmnr", &l, "no"]), false, "no LLMNR on the link"),
        (s(&[rctl, "mdns", &l, "no"]), false, "no mDNS on the link"),
    ]
}

fn runtime(p: &Params) -> Render {
    let l = p.link.as_str();
    let mut files = vec![(
        UNIT_PATH.to_string(),
        wrap(NAME.as_str(), Some(l), &unit(p)),
    )];
    let mut apply: Vec<Step> = live_commands(p, "ip", "resolvectl")
        .into_iter()
        .map(|(argv, may_fail, why)| Step {
            argv,
            why: why.into(),
            may_fail,
        })
        .collect();
    let mut warnings = vec![];
    if p.nm_running {
        files.push((
            NM_CONF_PATH.to_string(),
            wrap(
                NAME.as_str(),
                Some(l),
                &format!("[keyfile]\nunmanaged-devices+=interface-name:{l}\n"),
            ),
        ));
        // NM re-reads conf.d on `reload conf`; the device call marks the link at once (it may not
        // exist before the link does, so it comes after the link is created).
        apply.insert(1, nm_reload());
        apply.insert(
            2,
            Step::tolerant(
                &["nmcli", "device", "set", l, "managed", "no"],
                "keep NetworkManager off the link now",
            ),
        );
        warnings.push(format!(
            "NetworkManager runs: {NM_CONF_PATH} keeps it off the link {l} (also across NM restarts)"
        ));
    }
    Render {
        files,
        apply,
        enable: vec![
            Step::new(
                &["systemctl", "daemon-reload"],
                "systemd reads the new unit",
            ),
            Step::new(
                &["systemctl", "enable", UNIT_NAME],
                "re-create the route at boot and after resolved starts",
            ),
        ],
        pre_undo: if p.systemd_booted {
            vec![Step::tolerant(
                &["systemctl", "disable", UNIT_NAME],
                "no longer at boot",
            )]
        } else {
            vec![]
        },
        undo: runtime_undo(p),
        warnings,
        temp_dir: None,
    }
}

/// The boot-time unit: the live commands again, by their absolute paths.
fn unit(p: &Params) -> String {
    let l = p.link.as_str();
    let mut unit = format!(
        "[Unit]\nDescription=pigsty-dns route: {} to {} through link {l}\nAfter=systemd-resolved.service\n\
         # Until this has run resolved has no scope for the zone and sends its names to the global servers:\n\
         # name lookups count as ready (nss-lookup.target, what boot-time programs order after) only then.\n\
         Before=nss-lookup.target\nWants=nss-lookup.target\n\
         # Restarted with resolved, so the link's DNS settings come back after a resolved restart.\n\
         PartOf=systemd-resolved.service\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\n",
        p.forward_shown(),
        p.server
    );
    // Only fixed, root-owned system programs; never the pigsty-dns binary or a user path.
    for (words, may_fail, _) in live_commands(p, &p.ip, &p.resolvectl) {
        unit.push_str(&format!(
            "ExecStart={}{}\n",
            if may_fail { "-" } else { "" },
            words.join(" ")
        ));
    }
    unit.push_str(&format!(
        "ExecStop=-{} link del {l}\n\n[Install]\nWantedBy=systemd-resolved.service\n",
        p.ip
    ));
    unit
}

fn nm_reload() -> Step {
    Step::tolerant(
        &["nmcli", "general", "reload", "conf"],
        "NetworkManager re-reads conf.d: the link is unmanaged by its configuration",
    )
}

fn runtime_undo(p: &Params) -> Vec<Step> {
    let mut v = vec![];
    if p.systemd_booted {
        v.push(Step::tolerant(
            &["systemctl", "daemon-reload"],
            "systemd forgets the unit",
        ));
    }
    v.push(Step::tolerant(
        &["ip", "link", "del", &p.link],
        "remove the link; resolved drops its DNS settings with it",
    ));
    if p.nm_running {
        // The drop-in is gone by now: NM forgets it (the link went first, so NM never takes it).
        v.push(nm_reload());
    }
    v
}
