//! `RecordSet`: the names to serve, built from a parsed inventory under the address and conflict rules.

use std::collections::{BTreeMap, HashMap};
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::inventory::{Host, InputError, Inventory};
use crate::name::{self, Placement, Zone};

/// One served name. `sources` says where each mention of it came from (input paths), sorted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub name: String,
    pub address: Ipv4Addr,
    pub sources: Vec<String>,
}

/// A valid input name that is not served, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotServed {
    pub name: String,
    pub address: Ipv4Addr,
    pub reason: String,
    pub sources: Vec<String>,
}

/// The reverse-zone record of one address: `address` → `name`, the address's canonical name (the rule
/// that picks it lives in [`RecordSet::build`]). Always forward-confirmed: `name` has an A to `address`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ptr {
    pub address: Ipv4Addr,
    pub name: String,
}

/// A host that `vm_skip: true` takes out of the managed set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkippedHost {
    pub address: Ipv4Addr,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordSet {
    pub zone: Zone,
    pub records: Vec<Record>,
    /// One per address that has served names, sorted by address.
    pub ptr: Vec<Ptr>,
    pub not_served: Vec<NotServed>,
    pub skipped_hosts: Vec<SkippedHost>,
}

/// Served names in one record set at most (the bound; the server is sized for it).
pub const MAX_SERVED_NAMES: usize = 100_000;

impl RecordSet {
    /// Applies the address, name and conflict rules to a parsed inventory.
    pub fn build(inv: &Inventory, zone: &Zone) -> Result<RecordSet, InputError> {
        let managed: Vec<&Host> = inv.hosts.iter().filter(|h| !h.skip).collect();
        let Some(first) = managed.first() else {
            return Err(InputError::new(
                "all",
                "has no managed host: every host has vm_skip: true",
                "leave at least one host without vm_skip",
            ));
        };
        let net = Net::of(first)?;
        for h in &managed {
            net.check(h.address, &h.origin, "host")?;
        }
        for v in &inv.vm_hosts {
            net.check(v.address, &v.source, "vm_hosts address")?;
        }
        let mut seen_vm: HashMap<Ipv4Addr, &str> = HashMap::new();
        for v in &inv.vm_hosts {
            if let Some(prev) = seen_vm.insert(v.address, &v.source) {
                return Err(InputError::new(
                    &v.source,
                    format!("{} is listed again (first at {prev})", v.address),
                    "merge the names into one vm_hosts entry per address",
                ));
            }
        }

        let mut names = Names {
            zone,
            by_key: BTreeMap::new(),
        };
        let mut node_names: HashMap<String, &str> = HashMap::new();
        for h in &managed {
            let Some(node) = &h.node_name else { continue };
            name::check_node_name(&node.name).map_err(|e| {
                bad_name(
                    &node.source,
                    &e,
                    "a node name is one lowercase label; set nodename",
                )
            })?;
            if let Some(prev) = node_names.insert(node.name.clone(), &node.source) {
                return Err(InputError::new(
                    &node.source,
                    format!("{:?} is also the node name from {prev}", node.name),
                    "set a distinct nodename on one of the two hosts",
                ));
            }
            names.add(&node.name, h.address, &node.source)?;
            // An alias equal to the node's own name merges; one listed twice is a slip worth reporting.
            let mut own: HashMap<String, &str> = HashMap::new();
            for alias in &h.aliases {
                let folded = name::fold_host_name(&alias.name)
                    .map_err(|e| bad_name(&alias.source, &e, "fix the alias"))?;
                if let Some(prev) = own.insert(folded.clone(), &alias.source) {
                    return Err(InputError::new(
                        &alias.source,
                        format!("{:?} repeats {prev}", alias.name),
                        "list each alias once",
                    ));
                }
                names.add(&folded, h.address, &alias.source)?;
            }
        }
        for v in &inv.vm_hosts {
            let mut own: HashMap<String, &str> = HashMap::new();
            for n in &v.names {
                let folded = name::fold_host_name(&n.name)
                    .map_err(|e| bad_name(&n.source, &e, "fix the name"))?;
                if let Some(prev) = own.insert(folded.clone(), &n.source) {
                    return Err(InputError::new(
                        &n.source,
                        format!("{:?} repeats {prev}", n.name),
                        "list each name once per entry",
                    ));
                }
                names.add(&folded, v.address, &n.source)?;
            }
        }

        let mut records = Vec::new();
        let mut not_served = Vec::new();
        for (key, entry) in names.by_key {
            let mut sources = entry.sources;
            sources.sort();
            sources.dedup();
            match entry.placement {
                Placement::Served(fqdn) => records.push(Record {
                    name: fqdn,
                    address: entry.address,
                    sources,
                }),
                Placement::OutsideZone => not_served.push(NotServed {
                    name: key,
                    address: entry.address,
                    reason: format!("outside zone {zone}"),
                    sources,
                }),
            }
        }
        if records.len() > MAX_SERVED_NAMES {
            return Err(InputError::new(
                "",
                format!(
                    "has {} served names; at most {MAX_SERVED_NAMES} are served",
                    records.len()
                ),
                "serve fewer names, or split them across zones",
            ));
        }
        let skipped_hosts = inv
            .hosts
            .iter()
            .filter(|h| h.skip)
            .map(|h| SkippedHost {
                address: h.address,
                source: format!("{}.vm_skip", h.origin),
            })
            .collect();
        Ok(RecordSet {
            zone: zone.clone(),
            records,
            ptr: Vec::new(),
            not_served,
            skipped_hosts,
        })
    }
}

fn bad_name(at: &str, e: &name::NameError, next: &str) -> InputError {
    InputError::new(at, e.to_string(), next)
}

/// The reverse zone of a record set's /24 (`C.B.A.in-addr.arpa` for `A.B.C.0/24`), lowercase, without the
/// trailing dot; `None` for the empty zone. The input rules put every address in one /24, so the first
/// record decides.
pub fn reverse_zone(records: &[Record]) -> Option<String> {
    let [a, b, c, _] = records.first()?.address.octets();
    Some(format!("{c}.{b}.{a}.in-addr.arpa"))
}

/// The address rules a stored generation must still meet: one private /24, `.9`-`.254`. The server
/// re-checks them, so a hand-made file with a matching digest still cannot publish another address.
pub fn check_addresses(records: &[Record]) -> Result<(), String> {
    let Some(first) = records.first() else {
        return Ok(());
    };
    let o = first.address.octets();
    let private =
        o[0] == 10 || (o[0] == 172 && (16..=31).contains(&o[1])) || (o[0] == 192 && o[1] == 168);
    if !private {
        return Err(format!(
            "has the address {} outside the private (RFC 1918) ranges",
            first.address
        ));
    }
    for r in records {
        let a = r.address.octets();
        if a[..3] != o[..3] || !(9..=254).contains(&a[3]) {
            return Err(format!(
                "has {} at {}, outside {}.{}.{}.9-254",
                r.name, r.address, o[0], o[1], o[2]
            ));
        }
    }
    Ok(())
}

/// The managed /24 (Barn's subnet layout): `.1` is the host, `.2`-`.8` are reserved, names use `.9`-`.254`.
struct Net {
    prefix: [u8; 3],
    set_by: String,
}

impl Net {
    fn of(first: &Host) -> Result<Net, InputError> {
        let o = first.address.octets();
        let private = o[0] == 10
            || (o[0] == 172 && (16..=31).contains(&o[1]))
            || (o[0] == 192 && o[1] == 168);
        if !private {
            return Err(InputError::new(
                &first.origin,
                format!(
                    "{} is not in a private (RFC 1918) network; the sandbox /24 is 10/8, 172.16/12 or 192.168/16",
                    first.address
                ),
                "use the Barn network's addresses, e.g. 10.10.10.10",
            ));
        }
        Ok(Net {
            prefix: [o[0], o[1], o[2]],
            set_by: first.origin.clone(),
        })
    }

    fn check(&self, a: Ipv4Addr, at: &str, what: &str) -> Result<(), InputError> {
        let o = a.octets();
        let [p0, p1, p2] = self.prefix;
        if o[..3] != self.prefix {
            return Err(InputError::new(
                at,
                format!(
                    "{what} {a} is outside {p0}.{p1}.{p2}.0/24 (the /24 of {}); all managed hosts share one /24",
                    self.set_by
                ),
                format!(
                    "use an address in {p0}.{p1}.{p2}.9-{p0}.{p1}.{p2}.254, or mark the host vm_skip: true"
                ),
            ));
        }
        if !(9..=254).contains(&o[3]) {
            return Err(InputError::new(
                at,
                format!(
                    "{what} {a} must be in .9-.254; .1-.8 are reserved for the host and DHCP, .0 and .255 are not host addresses"
                ),
                format!("use an address in {p0}.{p1}.{p2}.9-{p0}.{p1}.{p2}.254"),
            ));
        }
        Ok(())
    }
}

struct Entry {
    placement: Placement,
    address: Ipv4Addr,
    sources: Vec<String>,
}

/// Names keyed by where they land: the served FQDN, or the name itself when outside the zone.
struct Names<'z> {
    zone: &'z Zone,
    by_key: BTreeMap<String, Entry>,
}

impl Names<'_> {
    /// Adds a folded name; the same name on the same address merges, on another address is a conflict.
    fn add(&mut self, folded: &str, address: Ipv4Addr, source: &str) -> Result<(), InputError> {
        let placement = name::place(folded, self.zone);
        let key = match &placement {
            Placement::Served(fqdn) => fqdn.clone(),
            Placement::OutsideZone => folded.to_string(),
        };
        if let Some(e) = self.by_key.get_mut(&key) {
            if e.address != address {
                let prev = e.sources.first().map(String::as_str).unwrap_or("?");
                return Err(InputError::new(
                    source,
                    format!(
                        "name {key:?} maps to both {} ({prev}) and {address} ({source})",
                        e.address
                    ),
                    "give each name one address: remove or rename one of the two",
                ));
            }
            e.sources.push(source.to_string());
            return Ok(());
        }
        if self.by_key.len() >= MAX_SERVED_NAMES * 2 {
            return Err(InputError::new(
                source,
                format!("is past {} names", MAX_SERVED_NAMES * 2),
                "serve fewer names",
            ));
        }
        self.by_key.insert(
            key,
            Entry {
                placement,
                address,
                sources: vec![source.to_string()],
            },
        );
        Ok(())
    }
}

/// What changes between two sorted record lists, as a client would see it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Diff {
    pub added: Vec<Change>,
    pub removed: Vec<Change>,
    pub changed: Vec<Change>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<Ipv4Addr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<Ipv4Addr>,
}

impl Diff {
    pub fn between(old: &[Record], new: &[Record]) -> Diff {
        let mut d = Diff::default();
        let (mut i, mut j) = (0, 0);
        while i < old.len() || j < new.len() {
            let order = match (old.get(i), new.get(j)) {
                (Some(o), Some(n)) => o.name.cmp(&n.name),
                (Some(_), None) => std::cmp::Ordering::Less,
                _ => std::cmp::Ordering::Greater,
            };
            match order {
                std::cmp::Ordering::Less => {
                    d.removed.push(Change {
                        name: old[i].name.clone(),
                        old: Some(old[i].address),
                        new: None,
                    });
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    d.added.push(Change {
                        name: new[j].name.clone(),
                        old: None,
                        new: Some(new[j].address),
                    });
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    if old[i].address != new[j].address {
                        d.changed.push(Change {
                            name: new[j].name.clone(),
                            old: Some(old[i].address),
                            new: Some(new[j].address),
                        });
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        d
    }

    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverse_zone_is_the_24_of_the_records_in_reverse_label_order() {
        let r = |a: [u8; 4]| Record {
            name: "meta.pigsty.test".into(),
            address: a.into(),
            sources: vec![],
        };
        assert_eq!(reverse_zone(&[]), None);
        assert_eq!(
            reverse_zone(&[r([10, 10, 10, 10])]).as_deref(),
            Some("10.10.10.in-addr.arpa")
        );
        assert_eq!(
            reverse_zone(&[r([192, 168, 7, 20])]).as_deref(),
            Some("7.168.192.in-addr.arpa")
        );
    }
}
