//! The literal host-access view of a Pigsty config: the names Pigsty's roles would publish for the
//! host (its `dnsmasq` records, the nodes' hosts lines and the portal domains), each with its source
//! and category, computed by Pigsty's rules at v4.5.0 (pgsty/pigsty c73d321d) over the variables
//! Barn's walk merged. Whatever the literal mode cannot know is refused, never guessed. Barn's address rule is
//! applied afterwards, by the record set.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use super::walk::{Found, Walk, lookup};
use super::{Category, Derived, InputError, parse_ipv4};
use crate::input::problems::Problems;
use crate::input::yaml::Yaml;
use crate::output::text::quote;

mod infra;
mod literal;
mod oracle;
mod service;
pub use oracle::{MergedHost, merged_vars};

/// The Pigsty version whose role defaults and rules this view follows.
pub const PIGSTY_VERSION: &str = "v4.5.0";

/// Variables only a Pigsty config sets (Barn's projection never does): one of them, or a group
/// named `infra`, makes a file a Pigsty config. `pg_cluster`/`pg_seq` alone do not: Barn reads them
/// for node names, and every Pigsty instance also has a `pg_role`.
const PIGSTY_KEYS: &[&str] = &[
    "pg_role",
    "pg_dns_target",
    "pg_dns_suffix",
    "pg_vip_enabled",
    "minio_cluster",
    "vip_enabled",
    "infra_portal",
    "dns_records",
    "node_etc_hosts",
    "node_default_etc_hosts",
];

/// Every variable the view reads (and the identity's), so the Ansible differential compares each one
/// (`var` asserts that a key it reads is listed).
pub const VIEW_KEYS: &[&str] = &[
    "admin_ip",
    "dns_enabled",
    "dns_records",
    "infra_portal",
    "minio_cluster",
    "minio_node",
    "minio_seq",
    "node_cluster",
    "node_default_etc_hosts",
    "node_etc_hosts",
    "node_id_from_pg",
    "node_write_etc_hosts",
    "nodename",
    "pg_cluster",
    "pg_dns_suffix",
    "pg_dns_target",
    "pg_role",
    "pg_seq",
    "pg_vip_address",
    "pg_vip_enabled",
    "vip_address",
    "vip_dns_suffix",
    "vip_enabled",
    "vm_alias",
    "vm_skip",
];

/// Whether the walked file is a Pigsty config rather than a projection. Each layer is looked at once,
/// however many hosts share it.
pub(super) fn is_pigsty_config(hosts: &[Found<'_>]) -> bool {
    let mut seen = std::collections::HashSet::new();
    hosts.iter().any(|h| {
        h.groups.contains("infra")
            || h.layers.iter().any(|l| {
                seen.insert(std::ptr::from_ref(l.vars))
                    && PIGSTY_KEYS.iter().any(|k| l.vars.get(k).is_some())
            })
    })
}

/// Ansible's groups are global: a group name at two places in the tree is one group, whose vars,
/// hosts and children apply at both (and a group under itself is refused). The literal view reads
/// each place as written, so it refuses a repeated group name rather than differ from Ansible.
pub(super) fn groups_once(walk: &Walk<'_>) -> Result<(), InputError> {
    match &walk.repeated {
        None => Ok(()),
        Some((name, first, second)) => Err(InputError::new(
            second,
            format!(
                "repeats the group {} of {first}; Ansible makes the two one group, whose vars and \
                 children then apply at both places",
                quote(name)
            ),
            "give each group one place (list more hosts under it there), or rename one",
        )),
    }
}

/// The derived records (before Barn's address rule) and the notes for the reader.
pub(super) struct Derivation {
    pub(super) derived: Vec<Derived>,
    pub(super) notes: Vec<String>,
}

/// Every host's identities and targets, `vm_skip` hosts included (an external primary or infra
/// still decides a target); `skipped[i]` says whether `hosts[i]` is skipped.
/// `entry` is the infra node the user picked (`--entry`: its name or address, as given).
/// Each rule's problems go to `problems` and the other rules still run: they read other variables,
/// and what a failed one would have derived is only missing, so what the rest find is still there
/// once it is fixed. `None` when past the derivation's limit (nothing after it is read).
pub(super) fn derive(
    hosts: &[Found<'_>],
    skipped: &[bool],
    entry: Option<&str>,
    problems: &mut Problems,
) -> Option<Derivation> {
    let mut out = Out {
        problems: std::mem::take(problems),
        ..Out::default()
    };
    for rule in [service::pg, service::node_vips, service::minio] {
        let r = rule(hosts, &mut out);
        out.problem(r);
    }
    // The guests' hosts lines depend on the entry picked.
    let r = infra::entry(hosts, entry, &mut out)
        .and_then(|picked| infra::guest_hosts(hosts, skipped, picked, &mut out));
    out.problem(r);
    let r = infra::naming_notes(hosts, &mut out);
    out.problem(r);
    if out.derived.len() > MAX_DERIVED {
        out.problems.push(InputError::new(
            "all",
            format!(
                "derives more than {MAX_DERIVED} names; at most {} are served",
                crate::defaults::MAX_SERVED_NAMES
            ),
            "serve fewer names, or read the file with --identity-only",
        ));
        *problems = out.problems;
        return None;
    }
    out.clashes();
    *problems = std::mem::take(&mut out.problems);
    Some(Derivation {
        derived: out.derived,
        notes: out.notes,
    })
}

/// Derived names at most, twice what a record set serves: past that the derivation stops, so a file
/// cannot make it grow with hosts times lines.
const MAX_DERIVED: usize = 2 * crate::defaults::MAX_SERVED_NAMES;

#[derive(Default)]
pub(super) struct Out {
    derived: Vec<Derived>,
    notes: Vec<String>,
    /// Hosts-line lists already read, by (list origin, `admin_ip`): every node that inherits the same
    /// list renders the same lines.
    seen_lists: std::collections::HashSet<(String, Ipv4Addr)>,
    /// The file's problems so far; a rule adds each it can read past (a bad hosts line).
    pub(super) problems: Problems,
}

impl Out {
    /// A record; one derived again (the same hosts line on every node) merges with it in the record
    /// set, which lists each source once.
    fn push(&mut self, category: Category, name: &str, address: Ipv4Addr, source: String) {
        if self.derived.len() > MAX_DERIVED {
            return;
        }
        self.derived.push(Derived {
            name: name.to_string(),
            address,
            source: category.tag(&source),
        });
    }

    fn note(&mut self, note: String) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// A rule's problem, if it had one.
    pub(super) fn problem(&mut self, r: Result<(), InputError>) {
        if let Err(e) = r {
            self.problems.push(e);
        }
    }

    /// Pigsty's records clash before Barn's rules apply: dnsmasq would answer a name on two
    /// addresses with both, so the view refuses it, naming both sources. Every clash is a problem,
    /// and the later record of each is left out, so the record rules do not report it again.
    fn clashes(&mut self) {
        let mut first: BTreeMap<String, usize> = BTreeMap::new();
        let mut keep = vec![true; self.derived.len()];
        for (i, d) in self.derived.iter().enumerate() {
            let key = d.name.to_ascii_lowercase();
            match first.get(&key) {
                Some(&f) if self.derived[f].address != d.address => {
                    self.problems.push(clash(&self.derived[f], d));
                    keep[i] = false;
                }
                Some(_) => {}
                None => {
                    first.insert(key, i);
                }
            }
        }
        let mut keep = keep.into_iter();
        self.derived.retain(|_| keep.next().unwrap_or(true));
    }
}

/// The refusal of `d`, a name `f` derived first on another address.
fn clash(f: &Derived, d: &Derived) -> InputError {
    let vip = |s: &str| s.contains("vip_address");
    let next = if vip(&f.source) || vip(&d.source) {
        "give the node VIP its own name: set vip_dns_suffix (e.g. vip_dns_suffix: '-vip') or a \
         node_cluster of its own on that group, or turn one of the two VIPs off"
    } else {
        "give each name one address: rename or remove one of the two"
    };
    InputError::new(
        &d.source,
        format!(
            "name {} maps to both {} ({}) and {} ({}); Pigsty's DNS would answer both",
            quote(&d.name),
            f.address,
            f.source,
            d.address,
            d.source
        ),
        next,
    )
}

/// A variable's value and where it came from: the inventory path, or the role default's name.
pub(super) struct Var<'a> {
    pub(super) value: Option<&'a Yaml>,
    pub(super) origin: String,
}

/// `key` on `h`, or `None` at `<key> (Pigsty v4.5.0 default)` when no layer sets it.
pub(super) fn var<'a>(h: &Found<'a>, key: &str) -> Result<Var<'a>, InputError> {
    debug_assert!(
        VIEW_KEYS.contains(&key),
        "{key} is read but not in VIEW_KEYS"
    );
    Ok(match lookup(h, key)? {
        Some((v, origin)) => {
            if let Some((text, why)) = literal::ambiguous(v) {
                return Err(literal::refuse(&origin, key, &text, why));
            }
            Var {
                value: Some(v),
                origin,
            }
        }
        None => Var {
            value: None,
            origin: default_origin(key),
        },
    })
}

pub(super) fn default_origin(key: &str) -> String {
    format!("{key} (Pigsty {PIGSTY_VERSION} default)")
}

/// A string variable; `default` when unset or null.
pub(super) fn string_var(
    h: &Found<'_>,
    key: &str,
    default: Option<&str>,
) -> Result<Option<(String, String)>, InputError> {
    let v = var(h, key)?;
    match v.value {
        None | Some(Yaml::Null) => Ok(default.map(|d| (d.to_string(), v.origin))),
        Some(Yaml::Str(s)) => Ok(Some((s.clone(), v.origin))),
        Some(other) => Err(InputError::new(
            v.origin,
            format!("is {other}; {key} is a string"),
            format!("quote the value of {key}"),
        )),
    }
}

/// A boolean variable (only YAML's true/false: Ansible's `|bool` of other strings is not literal).
pub(super) fn bool_var(
    h: &Found<'_>,
    key: &str,
    default: bool,
) -> Result<(bool, String), InputError> {
    let v = var(h, key)?;
    match v.value {
        None | Some(Yaml::Null) => Ok((default, v.origin)),
        Some(Yaml::Bool(b, _)) => Ok((*b, v.origin)),
        Some(other) => Err(InputError::new(
            v.origin,
            format!("is {other}; {key} is true or false"),
            format!("write {key}: true or {key}: false"),
        )),
    }
}

/// A list of strings (hosts lines), each with its source `origin[i]`; `default` when unset.
pub(super) fn lines_var(
    v: &Var<'_>,
    key: &str,
    default: &[&str],
) -> Result<Vec<(String, String)>, InputError> {
    match v.value {
        None => Ok(default
            .iter()
            .enumerate()
            .map(|(i, l)| {
                (
                    l.to_string(),
                    format!("{key}[{i}] (Pigsty {PIGSTY_VERSION} default)"),
                )
            })
            .collect()),
        Some(Yaml::Null) => Ok(Vec::new()),
        Some(Yaml::Seq(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Yaml::Str(s) => Ok((s.clone(), format!("{}[{i}]", v.origin))),
                other => Err(InputError::new(
                    format!("{}[{i}]", v.origin),
                    format!(
                        "is {other}; a {key} item is a hosts line such as '10.10.10.10 i.pigsty'"
                    ),
                    "quote the line",
                )),
            })
            .collect(),
        Some(other) => Err(InputError::new(
            v.origin.clone(),
            format!("is {}; {key} is a list of hosts lines", other.kind()),
            format!("write {key}: ['10.10.10.10 i.pigsty']"),
        )),
    }
}

/// One hosts line as Pigsty writes it (`${admin_ip}` already replaced): an address and names; a `#`
/// starts a comment. Returns nothing for a blank or comment line.
pub(super) fn hosts_line(
    line: &str,
    at: &str,
) -> Result<Option<(Ipv4Addr, Vec<String>)>, InputError> {
    let text = line.split('#').next().unwrap_or_default();
    let mut fields = text.split_whitespace();
    let Some(addr) = fields.next() else {
        return Ok(None);
    };
    let address = parse_ipv4(addr).map_err(|why| {
        InputError::new(
            at,
            format!(
                "the hosts line {} starts with {} that {why}",
                quote(line),
                quote(addr)
            ),
            "begin the line with one canonical IPv4 address (or ${admin_ip})",
        )
    })?;
    let names: Vec<String> = fields.map(str::to_string).collect();
    if names.is_empty() {
        return Err(InputError::new(
            at,
            format!("the hosts line {} has no name", quote(line)),
            "add a name after the address, or remove the line",
        ));
    }
    Ok(Some((address, names)))
}

/// An address value (`vip_address`, `admin_ip`) read strictly.
pub(super) fn address_of(raw: &str, at: &str, what: &str) -> Result<Ipv4Addr, InputError> {
    parse_ipv4(raw).map_err(|why| {
        InputError::new(
            at,
            format!("{what} {} {why}", quote(raw)),
            "give the canonical dotted-quad IPv4 address",
        )
    })
}

#[cfg(test)]
mod tests {
    use crate::dns::name::Zone;
    use crate::input::inventory::{View, parse};
    use crate::input::records::RecordSet;

    const META: &str = include_str!("../../../../tests/data/pigsty-conf/meta.yml");
    const TRIO: &str = include_str!("../../../../tests/data/pigsty-conf/ha/trio.yml");
    const FULL: &str = include_str!("../../../../tests/data/pigsty-conf/ha/full.yml");

    fn build(text: &str) -> Result<RecordSet, crate::input::inventory::InputError> {
        RecordSet::from_inventory(parse(text)?, &Zone::parse("pigsty.test").unwrap())
    }

    #[test]
    fn stock_trio_clash_is_refused_before_the_address_rule() {
        let e = parse(TRIO).unwrap_err();
        assert_eq!(
            e.at,
            "service-access: all.children.minio.vars.vip_address (node VIP)"
        );
        assert!(
            e.message
                .starts_with("name \"pg-meta\" maps to both 10.10.10.2 "),
            "{e}"
        );
        assert!(e.next.contains("vip_dns_suffix"), "{}", e.next);
    }

    #[test]
    fn stock_reserved_pg_vip_is_refused_by_barns_rule() {
        let inv = parse(FULL).unwrap();
        assert_eq!(inv.view, View::HostAccess);
        let e = build(FULL).unwrap_err();
        assert!(
            e.at.contains("all.children.pg-meta.vars.pg_vip_address"),
            "{e}"
        );
        assert!(
            e.message.contains("10.10.10.2 for \"pg-meta\" is in .2-.8"),
            "{e}"
        );
        assert!(e.next.contains("pg_dns_target: primary"), "{}", e.next);
    }

    #[test]
    fn stock_meta_serves_cluster_and_instance() {
        let set = build(META).unwrap();
        let served: Vec<_> = set.records.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(served, ["pg-meta-1.pigsty.test", "pg-meta.pigsty.test"]);
        assert!(set.not_served.iter().any(|n| n.name == "i.pigsty"));
    }
}
