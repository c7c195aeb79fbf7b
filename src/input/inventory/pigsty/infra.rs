//! `infra-dns` (roles/infra/tasks/dns.yml: `dns_records`), `portal-access` (roles/infra/tasks/nginx.yml:
//! `infra_portal` domains) from the infra entry, and `guest-hosts` (roles/node/tasks/dns.yml: the
//! nodes' hosts lines).

use std::net::Ipv4Addr;

use super::{
    Out, PIGSTY_VERSION, Var, address_of, bool_var, hosts_line, lines_var, string_var, var,
};
use crate::input::inventory::node_name;
use crate::input::inventory::walk::Found;
use crate::input::inventory::{Category, InputError};
use crate::input::yaml::Yaml;
use crate::output::text::quote;

const DNS_RECORDS: &[&str] = &[
    "${admin_ip} i.pigsty",
    "${admin_ip} m.pigsty supa.pigsty api.pigsty adm.pigsty cli.pigsty ddl.pigsty",
];
const NODE_DEFAULT_ETC_HOSTS: &[&str] = &["${admin_ip} i.pigsty"];
const ADMIN_IP: &str = "10.10.10.10";

/// `admin_ip` of a host, and where it came from.
fn admin_ip(h: &Found<'_>) -> Result<(Ipv4Addr, String), InputError> {
    let (raw, origin) = string_var(h, "admin_ip", Some(ADMIN_IP))?.unwrap_or_default();
    Ok((address_of(&raw, &origin, "admin_ip")?, origin))
}

/// The lines of `key` on `h` with `${admin_ip}` replaced, as the role renders them, each into records.
fn push_lines(
    h: &Found<'_>,
    key: &str,
    default: &[&str],
    category: Category,
    out: &mut Out,
) -> Result<(), InputError> {
    let (admin, _) = admin_ip(h)?;
    let v = var(h, key)?;
    if !out.seen_lists.insert((v.origin.clone(), admin)) {
        return Ok(());
    }
    for (a, names, at) in render_lines(&v, key, default, admin, out)? {
        for n in names {
            out.push(category, &n, a, at.clone());
        }
    }
    Ok(())
}

/// The lines of `v` (the list `key`, else `default`) as the role renders them with `admin` for
/// `${admin_ip}`: (address, names, where). Each bad line is its own problem, kept in `out`: the lines
/// are independent records.
fn render_lines(
    v: &Var<'_>,
    key: &str,
    default: &[&str],
    admin: Ipv4Addr,
    out: &mut Out,
) -> Result<Vec<(Ipv4Addr, Vec<String>, String)>, InputError> {
    let mut lines = Vec::new();
    for (line, at) in lines_var(v, key, default)? {
        let rendered = line.replace("${admin_ip}", &admin.to_string());
        match hosts_line(&rendered, &at) {
            Ok(Some((a, names))) => lines.push((a, names, at)),
            Ok(None) => {}
            Err(e) => out.problems.push(e),
        }
    }
    Ok(lines)
}

/// The infra entry's `dns_records` and portal domains. Every infra node runs its own dnsmasq and
/// nginx, so the entries must agree on what they would publish; otherwise the view cannot know which
/// one the host asks.
/// Returns the address of the entry `--entry` picked, if it picked one.
pub(super) fn entry(
    hosts: &[Found<'_>],
    picked: Option<&str>,
    out: &mut Out,
) -> Result<Option<Ipv4Addr>, InputError> {
    let mut infra: Vec<&Found<'_>> = hosts
        .iter()
        .filter(|h| h.groups.contains("infra"))
        .collect();
    if let Some(value) = picked {
        infra = vec![pick(&infra, value)?];
    }
    let Some(first) = infra.first() else {
        // Pigsty's PG DNS tasks write to `groups['infra'] | default([])`: with none, no DNS at all.
        if !hosts.is_empty() {
            out.note(
                "no infra group: Pigsty runs no DNS (its DNS tasks write to groups['infra'], and there \
                 is none); the names here are host conveniences, not what the guests resolve"
                    .to_string(),
            );
        }
        return Ok(None);
    };
    for key in ["admin_ip", "dns_records", "infra_portal", "dns_enabled"] {
        let want = var(first, key)?.value;
        // Every entry's value is read as strictly as the first's (a template or a conflict in it
        // is refused too).
        for h in &infra[1..] {
            if var(h, key)?.value == want {
                continue;
            }
            return Err(InputError::new(
                &h.origin,
                format!(
                    "infra entries {} and {} have different {key}; the view cannot know which \
                     entry's DNS the host asks",
                    first.address, h.address
                ),
                format!(
                    "pick the entry the host uses with --entry {} (or {}), or set {key} once for \
                     every infra entry",
                    first.address, h.address
                ),
            ));
        }
    }
    let (dns_enabled, origin) = bool_var(first, "dns_enabled", true)?;
    if !dns_enabled {
        out.note(format!(
            "dns_enabled is false ({origin}): Pigsty runs no DNS on its infra entry; the names here \
             are host conveniences, not what the guests resolve"
        ));
    }
    push_lines(first, "dns_records", DNS_RECORDS, Category::InfraDns, out)?;
    portal(first, out)?;
    Ok(picked.map(|_| first.address))
}

/// Infra nodes named in a refusal of `--entry`, at most; the rest are counted.
const LISTED: usize = 8;

/// The infra node `--entry VALUE` picks: the one at that address, or the one whose VM name (Barn's:
/// `nodename`, else `<pg_cluster>-<pg_seq>`, else `node-<last octet>`) it is. A value that is
/// neither is refused naming it and the infra group's names and addresses; a name two infra nodes
/// share, naming both addresses.
fn pick<'h, 'a>(infra: &[&'h Found<'a>], value: &str) -> Result<&'h Found<'a>, InputError> {
    // A skipped infra node (an external one) has no VM name in the view, but is named by the
    // same rule here; one whose name cannot be derived is picked by its address only.
    let name = |h: &Found<'_>| node_name(h).ok().map(|n| n.name);
    let matching: Vec<&Found<'_>> = match value.parse::<Ipv4Addr>() {
        Ok(a) => infra.iter().copied().filter(|h| h.address == a).collect(),
        Err(_) => infra
            .iter()
            .copied()
            .filter(|h| name(h).as_deref() == Some(value))
            .collect(),
    };
    match matching[..] {
        [one] => Ok(one),
        [] => {
            let mut listed: Vec<String> = infra
                .iter()
                .take(LISTED)
                .map(|h| match name(h) {
                    Some(n) => format!("{} at {}", quote(&n), h.address),
                    None => h.address.to_string(),
                })
                .collect();
            if infra.len() > LISTED {
                listed.push(format!("and {} more", infra.len() - LISTED));
            }
            let (has, next) = match infra.first() {
                None => (
                    "none".to_string(),
                    "leave out --entry: no host is in the infra group".to_string(),
                ),
                Some(h) => (
                    listed.join(", "),
                    format!(
                        "give the name or address of one of the infra group's hosts, e.g. \
                         --entry {}",
                        h.address
                    ),
                ),
            };
            Err(InputError::new(
                "",
                format!(
                    "--entry {} is not an infra node's name or address (the infra group has {has})",
                    quote(value)
                ),
                next,
            ))
        }
        [first, ..] => Err(InputError::new(
            "",
            format!(
                "--entry {} names {} infra nodes ({})",
                quote(value),
                matching.len(),
                matching
                    .iter()
                    .map(|h| h.address.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            format!("give its address, e.g. --entry {}", first.address),
        )),
    }
}

/// Each standard portal entry's domain (the home entry, a `path` or an `endpoint` one) → the infra
/// entry's `admin_ip`: nginx there serves it, whatever the endpoint's backend address.
fn portal(h: &Found<'_>, out: &mut Out) -> Result<(), InputError> {
    let (admin, _) = admin_ip(h)?;
    let v = var(h, "infra_portal")?;
    let entries = match v.value {
        Some(Yaml::Map(entries)) => entries,
        Some(Yaml::Null) => return Ok(()),
        None => {
            out.push(
                Category::PortalAccess,
                "i.pigsty",
                admin,
                format!("infra_portal.home.domain (Pigsty {PIGSTY_VERSION} default)"),
            );
            return Ok(());
        }
        Some(other) => {
            return Err(InputError::new(
                v.origin,
                format!(
                    "is {}; infra_portal is a mapping of portal entries",
                    other.kind()
                ),
                "write infra_portal: {home: {domain: i.pigsty}}",
            ));
        }
    };
    for (key, entry) in entries {
        let name = match key {
            Yaml::Str(s) => s.clone(),
            other => other.to_string(),
        };
        let at = format!("{}.{}", v.origin, crate::output::text::segment(&name));
        let Yaml::Map(_) = entry else {
            return Err(InputError::new(
                at,
                format!("is {}; a portal entry is a mapping", entry.kind()),
                "write the entry as {domain: x.pigsty, endpoint: ...}",
            ));
        };
        if entry.get("conf").is_some() {
            return Err(InputError::new(
                format!("{at}.conf"),
                "is a custom portal template; the literal view cannot know what it serves",
                "use a standard home, path or endpoint entry, or list its name in vm_hosts",
            ));
        }
        let standard =
            name == "home" || entry.get("path").is_some() || entry.get("endpoint").is_some();
        match entry.get("domain") {
            Some(Yaml::Str(d)) if standard && !d.is_empty() => {
                out.push(Category::PortalAccess, d, admin, format!("{at}.domain"));
            }
            None | Some(Yaml::Str(_)) | Some(Yaml::Null) => {}
            Some(other) => {
                return Err(InputError::new(
                    format!("{at}.domain"),
                    format!("is {other}; a portal domain is a string"),
                    "quote the domain",
                ));
            }
        }
    }
    Ok(())
}

/// Every managed node's hosts lines when `node_write_etc_hosts`: `node_default_etc_hosts` then
/// `node_etc_hosts`, `${admin_ip}` replaced by the node's own.
pub(super) fn guest_hosts(
    hosts: &[Found<'_>],
    skipped: &[bool],
    entry: Option<Ipv4Addr>,
    out: &mut Out,
) -> Result<(), InputError> {
    if let Some(entry) = entry {
        return guest_hosts_seen_from(entry, hosts, skipped, out);
    }
    // Each node's lines are its own: a bad one on one node is listed, and the others still read.
    for (h, _) in hosts.iter().zip(skipped).filter(|(_, s)| !**s) {
        let r = node_lines(h, out);
        out.problem(r);
    }
    Ok(())
}

/// One node's hosts lines, when it writes them.
fn node_lines(h: &Found<'_>, out: &mut Out) -> Result<(), InputError> {
    if !bool_var(h, "node_write_etc_hosts", true)?.0 {
        return Ok(());
    }
    push_lines(
        h,
        "node_default_etc_hosts",
        NODE_DEFAULT_ETC_HOSTS,
        Category::GuestHosts,
        out,
    )?;
    push_lines(h, "node_etc_hosts", &[], Category::GuestHosts, out)
}

/// The nodes' hosts lines once `--entry` picked the infra node the host asks. A node's `/etc/hosts` is
/// read by that node only (Pigsty's dnsmasq runs with `no-hosts`), so a name that every node points
/// at the node itself (`${admin_ip} i.pigsty` with a per-node `admin_ip`, as in conf/build/dev.yml)
/// is, for the host, the entry's line; the other nodes' lines of it are left out, with a note. Any
/// other name keeps every line, so two real addresses are still refused.
fn guest_hosts_seen_from(
    entry: Ipv4Addr,
    hosts: &[Found<'_>],
    skipped: &[bool],
    out: &mut Out,
) -> Result<(), InputError> {
    // Every node that inherits the same list with the same admin_ip renders the same lines: each
    // list once, in the order first met, found again by (list origin, admin_ip).
    let mut lines: Vec<Vec<(Ipv4Addr, Vec<String>, String)>> = Vec::new();
    let mut rendered: std::collections::HashMap<(String, Ipv4Addr), usize> =
        std::collections::HashMap::new();
    // Per name: whether every node that writes it points it at itself.
    let mut self_only: std::collections::BTreeMap<String, bool> = std::collections::BTreeMap::new();
    for (h, _) in hosts.iter().zip(skipped).filter(|(_, s)| !**s) {
        if !bool_var(h, "node_write_etc_hosts", true)?.0 {
            continue;
        }
        let (admin, _) = admin_ip(h)?;
        for (key, default) in [
            ("node_default_etc_hosts", NODE_DEFAULT_ETC_HOSTS),
            ("node_etc_hosts", &[][..]),
        ] {
            let v = var(h, key)?;
            let i = match rendered.get(&(v.origin.clone(), admin)) {
                Some(&i) => i,
                None => {
                    lines.push(render_lines(&v, key, default, admin, out)?);
                    rendered.insert((v.origin.clone(), admin), lines.len() - 1);
                    lines.len() - 1
                }
            };
            for (a, names, _) in &lines[i] {
                for n in names {
                    *self_only.entry(n.to_ascii_lowercase()).or_insert(true) &= *a == h.address;
                }
            }
        }
    }
    let mut left_out: Vec<&str> = Vec::new();
    for (a, names, at) in lines.iter().flatten() {
        for n in names {
            let key = n.to_ascii_lowercase();
            if self_only[&key] && *a != entry {
                if !left_out.contains(&n.as_str()) {
                    left_out.push(n);
                }
                continue;
            }
            out.push(Category::GuestHosts, n, *a, at.clone());
        }
    }
    if !left_out.is_empty() {
        let listed: Vec<String> = left_out.iter().take(LISTED).map(|n| quote(n)).collect();
        let more = match left_out.len().saturating_sub(LISTED) {
            0 => String::new(),
            m => format!(" and {m} more"),
        };
        out.note(format!(
            "with --entry {entry}, {}{more}: every node's own /etc/hosts points it at the node itself, \
             which only that node reads (Pigsty's dnsmasq runs with no-hosts); the host's view is the \
             entry's line, the other nodes' are left out",
            listed.join(", ")
        ));
    }
    Ok(())
}

/// Barn names a node by `nodename`; Pigsty's node_id overrides it with `<pg_cluster>-<pg_seq>` while
/// `node_id_from_pg` is on. Not an error: the two tools simply call the guest differently.
pub(super) fn naming_notes(hosts: &[Found<'_>], out: &mut Out) -> Result<(), InputError> {
    for h in hosts {
        let Some((nodename, origin)) = string_var(h, "nodename", None)? else {
            continue;
        };
        let cluster = string_var(h, "pg_cluster", None)?.filter(|(c, _)| !c.is_empty());
        let seq = var(h, "pg_seq")?;
        if let (Some((c, _)), Some(Yaml::Int(s, _))) = (cluster, seq.value)
            && !nodename.is_empty()
            && bool_var(h, "node_id_from_pg", true)?.0
            && nodename != format!("{c}-{s}")
        {
            out.note(format!(
                "host {}: Pigsty names this node {} (node_id_from_pg), Barn and this view {} ({origin}); \
                 set nodename: {c}-{s}, or node_id_from_pg: false",
                h.address,
                quote(&format!("{c}-{s}")),
                quote(&nodename)
            ));
        }
    }
    Ok(())
}
