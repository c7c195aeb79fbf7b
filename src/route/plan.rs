//! Choosing an adapter from the detected facts, and the plan: every file with its full content and
//! sha256, every command, and what exists already. Building a plan writes nothing.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;

use serde::Serialize;

use super::adapter::link::{DEFAULT_LINK, DEFAULT_LINK_ADDRESS};
use super::adapter::macos::TEMP_DIR_FALLBACK;
use super::adapter::{self, AdapterName, Family, LinkKind, Params, Render, Step, Variant, render};
use super::claim::Claim;
use super::detect::{Driver, Facts};
use super::dnsinfo;
use super::family;
use super::files::{self, Existing};
use super::lifecycle_probe;
use crate::defaults::{MACOS_MDNS_WHY, MDNS_PORT, SUGGESTED_PORT, with_suggested_port};
use crate::digest::sha256_hex;
use crate::dns::name::Zones;
use crate::error::{AppError, Class};
use crate::sys::{Os, Runner, argv};

#[derive(Debug, Clone, Serialize)]
pub struct PlannedFile {
    pub path: String,
    pub sha256: String,
    pub content: String,
    pub existing: Existing,
    pub existing_sha256: Option<String>,
    /// Where the atomic write keeps its temporary file; `None`: beside the file.
    pub temp_dir: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub adapter: AdapterName,
    pub reason: String,
    /// The first of `zones` (where a single label goes), as reports before several zones had it.
    pub zone: String,
    /// Every forward zone routed, in the daemon's order.
    pub zones: Vec<String>,
    /// The reverse zone routed beside `zones`: the live generation's /24 (`None`: only `zones`).
    pub reverse_zone: Option<String>,
    pub server: SocketAddr,
    pub variant: Option<Variant>,
    pub link: Option<String>,
    pub link_address: Option<String>,
    pub link_kind: Option<LinkKind>,
    pub root: String,
    pub journal: String,
    pub files: Vec<PlannedFile>,
    /// Files the previous install wrote that this one no longer needs (a reverse zone that moved);
    /// removed if still as written.
    pub remove: Vec<String>,
    pub apply: Vec<Step>,
    pub enable: Vec<Step>,
    pub flush: Vec<Step>,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
    /// Other resolvers that claim the zone: macOS's, or resolved's other scopes (install refuses while
    /// there are any).
    pub claimants: Vec<Claim>,
    #[serde(skip)]
    pub render: Render,
    #[serde(skip)]
    pub params: Params,
}

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct Request {
    pub zones: Zones,
    pub server: SocketAddr,
    pub adapter: Option<AdapterName>,
    pub variant: Option<Variant>,
    pub link: String,
    pub link_address: String,
    pub link_kind: Option<LinkKind>,
}

fn unsupported(why: &str, zones: &Zones) -> AppError {
    let each: Vec<String> = zones.iter().map(|z| format!("`{z}`")).collect();
    AppError::new(
        Class::Capability,
        format!("unsupported: {why}"),
        format!(
            "route the zones by hand: a dnsmasq or unbound forward zone {} -> the daemon's address, \
             or run dig @127.0.0.1 -p PORT directly; or pick one with --adapter (see pigsty-dns route install --help)",
            each.join(" and ")
        ),
    )
}

/// The adapter detection picks, and why.
pub fn choose(f: &Facts, zones: &Zones) -> Result<(AdapterName, String), AppError> {
    match f.os {
        Os::Macos => {
            return Ok((
                AdapterName::MacosResolver,
                "macOS: /etc/resolver/<zone> is read by configd and mDNSResponder".into(),
            ));
        }
        Os::Other => {
            return Err(unsupported(
                "this operating system has no known per-domain resolver route",
                zones,
            ));
        }
        Os::Linux => {}
    }
    if f.nm_dns_mode.as_deref() == Some("dnsmasq") {
        return Ok((
            AdapterName::NmDnsmasq,
            "NetworkManager runs its own dnsmasq (dns=dnsmasq), which reads /etc/NetworkManager/dnsmasq.d".into(),
        ));
    }
    if !f.resolved_running {
        return Err(unsupported(
            "systemd-resolved is not running here (resolvectl status failed) and NetworkManager is not in dns=dnsmasq mode; \
             a plain /etc/resolv.conf has no per-domain routing",
            zones,
        ));
    }
    let Some(v) = &f.systemd else {
        return Err(unsupported(
            "resolved runs but `resolvectl --version` gave no systemd version",
            zones,
        ));
    };
    if v.major >= 258 {
        return Ok((
            AdapterName::ResolvedDelegate,
            format!(
                "{}: DNS delegates (systemd >= 258) route the zone without a link",
                v.raw
            ),
        ));
    }
    if v.major >= 253 {
        return Ok((
            AdapterName::ResolvedLink,
            format!(
                "{}: per-link loopback DNS works from 253 on; delegates need 258",
                v.raw
            ),
        ));
    }
    if v.major == 252 {
        return match v.point {
            Some(p) if p >= 3 => Ok((
                AdapterName::ResolvedLink,
                format!(
                    "{}: 252.{p} carries the per-link loopback fix (252.3)",
                    v.raw
                ),
            )),
            Some(p) => Err(unsupported(
                &format!(
                    "{}: systemd 252.{p} sends per-link 127.0.0.1 out of the link (fixed in 252.3, systemd#25438)",
                    v.raw
                ),
                zones,
            )),
            None => Ok((
                AdapterName::ResolvedLink,
                format!(
                    "{}: the version string does not tell whether the 252.3 fix is in; deciding by applying and verifying",
                    v.raw
                ),
            )),
        };
    }
    Err(unsupported(
        &format!(
            "{}: systemd <= 252.2 sends per-link loopback DNS out of the link (systemd#25397), and a global DNS= takes over all DNS",
            v.raw
        ),
        zones,
    ))
}

fn parse_cidr(s: &str) -> Result<(Ipv4Addr, u8), AppError> {
    let bad = || {
        AppError::new(
            Class::Usage,
            format!(
                "--link-address {s:?} is not an IPv4 address with a prefix (like {DEFAULT_LINK_ADDRESS})"
            ),
            format!("give an unused, non-link-local IPv4 /32, e.g. {DEFAULT_LINK_ADDRESS}"),
        )
    };
    let (a, p) = s.split_once('/').unwrap_or((s, "32"));
    let addr: Ipv4Addr = a.parse().map_err(|_| bad())?;
    let prefix: u8 = p.parse().map_err(|_| bad())?;
    if prefix > 32 {
        return Err(bad());
    }
    if addr.is_link_local() || addr.is_loopback() || addr.is_unspecified() || addr.is_multicast() {
        return Err(AppError::new(
            Class::Usage,
            format!(
                "--link-address {s}: a link-local, loopback or multicast address gives the link no DNS scope, so names would leak"
            ),
            format!("give a non-link-local address, e.g. {DEFAULT_LINK_ADDRESS}"),
        ));
    }
    Ok((addr, prefix))
}

fn check_server(server: SocketAddr) -> Result<(), AppError> {
    // A scope id would reach the boot unit as `%N`, a systemd specifier it refuses (also refused
    // when --server is parsed; this holds for any caller of the plan).
    if let SocketAddr::V6(v6) = server
        && v6.scope_id() != 0
    {
        return Err(AppError::new(
            Class::Usage,
            format!("--server {server}: a scope id is not taken"),
            format!(
                "give the loopback address without it, e.g. --server [::1]:{}",
                v6.port()
            ),
        ));
    }
    let ip = server.ip();
    let stub = ["127.0.0.53", "127.0.0.54"]
        .iter()
        .any(|s| ip.to_string() == *s);
    if !ip.is_loopback() || stub || [0u16, 53, 5355].contains(&server.port()) {
        return Err(AppError::new(
            Class::Usage,
            format!(
                "--server {server}: the route's server must be a loopback address (not resolved's 127.0.0.53/54) on a high port other than 5355"
            ),
            "give the address `pigsty-dns serve --listen` uses, e.g. --server 127.0.0.1:5354",
        ));
    }
    Ok(())
}

fn valid_link_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 15
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Builds the plan (read-only: reads files under `root`, runs `ip -o addr show` for the address check).
/// `reverse` is the live generation's reverse zone, routed beside the zone.
pub fn build(
    f: &Facts,
    req: &Request,
    reverse: Option<String>,
    root: &Path,
    journal_path: &Path,
    runner: &mut dyn Runner,
) -> Result<Plan, AppError> {
    check_server(req.server)?;
    let (adapter, reason) = match req.adapter {
        Some(a) => (a, "chosen with --adapter".to_string()),
        None => choose(f, &req.zones)?,
    };
    let mut warnings = server_warnings(adapter, req.server)?;
    check_link_name(&req.link)?;
    let (address, prefix) = parse_cidr(&req.link_address)?;
    let variant = req.variant.unwrap_or(if f.networkd_running {
        Variant::Networkd
    } else {
        Variant::Runtime
    });
    let mut notes = f.notes.clone();
    let kind = link_kind(f, &req.zones, req.link_kind, adapter, &mut notes)?;
    let params = Params {
        zones: req.zones.iter().map(|z| z.as_str().to_string()).collect(),
        reverse,
        server: req.server,
        link: req.link.clone(),
        address,
        prefix,
        kind,
        variant,
        ip: f.ip_path.clone(),
        resolvectl: f.resolvectl_path.clone(),
        systemd_booted: f.systemd_booted,
        nm_running: f.nm_dns_mode.is_some(),
    };
    if adapter == AdapterName::ResolvedLink {
        check_address_free(runner, address, &req.link)?;
    }
    let render = render(adapter, &params);
    let files = planned_files(root, &render)?;
    let claimants = claimants(adapter, &params, root, runner);
    warnings.extend(render.warnings.iter().cloned());
    if !render.enable.is_empty() && !f.systemd_booted {
        notes.push(
            "systemd is not PID 1 here: the boot-time unit is written but not enabled (apply only)"
                .into(),
        );
    }
    let is_link = adapter == AdapterName::ResolvedLink;
    Ok(Plan {
        adapter,
        reason,
        zone: params.zones[0].clone(),
        zones: params.zones.clone(),
        reverse_zone: params.reverse.clone(),
        server: req.server,
        variant: is_link.then_some(variant),
        link: is_link.then(|| params.link.clone()),
        link_address: is_link.then(|| params.cidr()),
        link_kind: is_link.then_some(kind),
        root: root.display().to_string(),
        journal: journal_path.display().to_string(),
        files,
        remove: vec![],
        apply: render.apply.clone(),
        enable: if f.systemd_booted {
            render.enable.clone()
        } else {
            vec![]
        },
        flush: family::of_adapter(adapter).flush(),
        warnings,
        notes,
        claimants,
        render,
        params,
    })
}

/// The warnings the adapter and the server's port earn, or the refusal of the mDNS port on macOS.
fn server_warnings(adapter: AdapterName, server: SocketAddr) -> Result<Vec<String>, AppError> {
    let mut warnings = Vec::new();
    if adapter == AdapterName::ResolvedGlobal {
        warnings.push(
            "resolved-global: a global resolved.conf DNS= is always a default route: every other name is ALSO sent to the daemon, \
             it takes over all DNS when no link has servers, and fails offline. Prefer resolved-delegate or resolved-link."
                .into(),
        );
    }
    if server.port() == MDNS_PORT && adapter::family(adapter) == Family::Mdns {
        return Err(AppError::new(
            Class::Usage,
            format!("--server {server}: {MACOS_MDNS_WHY}"),
            format!(
                "run the daemon on {0} (pigsty-dns service install --listen {0}) and give --server {0}",
                with_suggested_port(server)
            ),
        ));
    }
    if server.port() == MDNS_PORT {
        warnings.push(format!(
            "port {MDNS_PORT} is the mDNS port (Avahi, resolved's mDNS, mDNSResponder); prefer {SUGGESTED_PORT}"
        ));
    }
    Ok(warnings)
}

fn check_link_name(link: &str) -> Result<(), AppError> {
    if valid_link_name(link) {
        return Ok(());
    }
    Err(AppError::new(
        Class::Usage,
        format!("--link {link:?}: a link name is 1-15 letters, digits, '-' or '_'"),
        format!("use the default, {DEFAULT_LINK}"),
    ))
}

/// The link's driver: as asked, else dummy, else ifb where the kernel has no dummy driver.
fn link_kind(
    f: &Facts,
    zones: &Zones,
    asked: Option<LinkKind>,
    adapter: AdapterName,
    notes: &mut Vec<String>,
) -> Result<LinkKind, AppError> {
    if let Some(k) = asked {
        return Ok(k);
    }
    Ok(match (f.dummy, f.ifb) {
        (Driver::Missing, Driver::Missing) if adapter == AdapterName::ResolvedLink => {
            return Err(unsupported(
                "the kernel has neither the dummy nor the ifb link driver, so there is no link to carry the route",
                zones,
            ));
        }
        (Driver::Missing, _) => {
            // Only the link adapter creates a link; the others' plans must not mention one.
            if adapter == AdapterName::ResolvedLink {
                notes.push("the kernel has no dummy driver: using an ifb link instead (behaves the same for resolved)".into());
            }
            LinkKind::Ifb
        }
        _ => LinkKind::Dummy,
    })
}

/// An address already on another link would be shared with something else; refuse.
fn check_address_free(
    runner: &mut dyn Runner,
    address: Ipv4Addr,
    link: &str,
) -> Result<(), AppError> {
    let out = runner.run(&argv(&["ip", "-o", "-4", "addr", "show"]));
    let needle = format!("inet {address}/");
    for line in out.stdout.lines().filter(|l| l.contains(&needle)) {
        let on = line.split_whitespace().nth(1).unwrap_or("");
        if on.trim_end_matches(':') != link {
            return Err(AppError::new(
                Class::Conflict,
                format!("--link-address {address} is already in use on link {on}"),
                "pick another unused address with --link-address (e.g. 198.18.53.54/32)",
            ));
        }
    }
    Ok(())
}

/// Every file the adapter renders, under the root, with what is there now.
fn planned_files(root: &Path, render: &Render) -> Result<Vec<PlannedFile>, AppError> {
    // A test root (or Linux) has no /private/etc: the resolver directory's parent then, which is
    // created with it.
    let temp_dir = render.temp_dir.map(|t| {
        let d = files::under(root, t);
        if d.is_dir() {
            d
        } else {
            files::under(root, TEMP_DIR_FALLBACK)
        }
    });
    let mut planned = Vec::new();
    for (path, content) in &render.files {
        let on_disk = files::under(root, path);
        let (existing, bytes) = files::existing(&on_disk, content)
            .map_err(|e| AppError::new(Class::Runtime, e, "check the path's permissions"))?;
        planned.push(PlannedFile {
            path: on_disk.display().to_string(),
            sha256: sha256_hex(content.as_bytes()),
            content: content.clone(),
            existing,
            existing_sha256: bytes.map(|b| sha256_hex(&b)),
            temp_dir: temp_dir.as_ref().map(|d| d.display().to_string()),
        });
    }
    Ok(planned)
}

/// The other resolvers for the zone and for the reverse zone, which is never shared either (a second
/// resolver for it would split its answers): macOS's, and on resolved every other scope that routes
/// either zone or a subdomain of one (a VPN's link; a `~.` default route is no claim).
fn claimants(
    adapter: AdapterName,
    params: &Params,
    root: &Path,
    runner: &mut dyn Runner,
) -> Vec<Claim> {
    if let Some(ours) = family::of_adapter(adapter).owner(params) {
        return lifecycle_probe::resolved_claimants(runner, &params.zones(), &ours);
    }
    if adapter::family(adapter) != Family::Mdns {
        return vec![];
    }
    params
        .zones()
        .iter()
        .flat_map(|z| dnsinfo::claimants(root, runner, z))
        .collect()
}

/// The zones, and the reverse zone when the route carries one: "pigsty.test, pigsty (or
/// 10.10.10.in-addr.arpa)".
pub fn zones_shown(p: &Plan) -> String {
    match &p.reverse_zone {
        Some(r) => format!("{} (or {r})", p.zones.join(", ")),
        None => p.zones.join(", "),
    }
}

/// "zone" or "zones", for `n` of them.
pub fn zone_word(n: usize) -> &'static str {
    if n == 1 { "zone" } else { "zones" }
}

/// The plan as text: every file in full with its sha256, every command.
pub fn text(p: &Plan) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "route plan: adapter {} ({})\n",
        p.adapter.as_str(),
        p.reason
    ));
    match &p.reverse_zone {
        Some(r) => s.push_str(&format!(
            "  {} {} and reverse zone {r} -> server {}\n",
            zone_word(p.zones.len()),
            p.zones.join(", "),
            p.server
        )),
        None => s.push_str(&format!(
            "  {} {} -> server {}\n",
            zone_word(p.zones.len()),
            p.zones.join(", "),
            p.server
        )),
    }
    if let (Some(l), Some(a), Some(k), Some(v)) = (&p.link, &p.link_address, p.link_kind, p.variant)
    {
        s.push_str(&format!(
            "  link {l} ({}) address {a}, variant {v:?}\n",
            k.as_str()
        ));
    }
    s.push_str(&format!("  root {}  journal {}\n", p.root, p.journal));
    for w in &p.warnings {
        s.push_str(&format!("WARNING: {w}\n"));
    }
    for n in &p.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    for c in &p.claimants {
        s.push_str(&format!(
            "CONFLICT: another resolver claims {}: {} (install refuses while it does)\n",
            zones_shown(p),
            c.what
        ));
    }
    for f in &p.files {
        s.push_str(&format!(
            "file {} (sha256 {}) — now: {:?}{}\n",
            f.path,
            f.sha256,
            f.existing,
            f.existing_sha256
                .as_deref()
                .map(|h| format!(", sha256 {h}"))
                .unwrap_or_default()
        ));
        if let Some(t) = &f.temp_dir {
            s.push_str(&format!("  (written through a temporary file in {t})\n"));
        }
        for line in f.content.lines() {
            s.push_str(&format!("  | {line}\n"));
        }
    }
    for r in &p.remove {
        s.push_str(&format!(
            "remove {r} (the previous install's; no longer routed) if it is still as written\n"
        ));
    }
    for (title, steps) in [
        ("apply now", &p.apply),
        ("enable at boot", &p.enable),
        ("flush caches", &p.flush),
    ] {
        for st in steps.iter() {
            s.push_str(&format!(
                "run ({title}): {}    # {}\n",
                st.argv.join(" "),
                st.why
            ));
        }
    }
    s
}
