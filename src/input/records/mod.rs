//! `RecordSet`: the names to serve, built from a parsed inventory under the address and conflict rules.
//! The address rules are in `records/addresses.rs`; the mentions' sort, the rules that need it and the
//! merge into records in `records/merge.rs`; the diff of two generations in `records/diff.rs`.

use std::collections::HashMap;
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::defaults::MAX_SERVED_NAMES;
use crate::dns::name::{self, Zones};
use crate::input::inventory::{Derived, Host, InputError, Inventory, Named, VmHost};
use crate::input::problems::Problems;

mod addresses;
mod diff;
mod merge;
use addresses::check_addresses_of;
pub use diff::{Change, Diff, PtrChange};
use merge::{Found, Kind, Mention, NO_GROUP, check, merge};

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
/// that picks it is [`canonical_names`]). Always forward-confirmed: `name` has an A to `address`.
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
    pub zones: Zones,
    pub records: Vec<Record>,
    /// One per address that has served names, sorted by address.
    pub ptr: Vec<Ptr>,
    pub not_served: Vec<NotServed>,
    pub skipped_hosts: Vec<SkippedHost>,
}

impl RecordSet {
    /// Applies the address, name and conflict rules to a parsed inventory.
    /// `zones`: a [`Zones`] set, or one [`crate::dns::name::Zone`].
    pub fn build(
        inv: &Inventory,
        zones: &(impl Clone + Into<Zones>),
    ) -> Result<RecordSet, InputError> {
        Self::from_inventory(inv.clone(), zones)
    }

    /// [`RecordSet::build`] that moves the sources out of the inventory instead of copying them.
    pub fn from_inventory(
        inv: Inventory,
        zones: &(impl Clone + Into<Zones>),
    ) -> Result<RecordSet, InputError> {
        let mut problems = Problems::default();
        match Self::from_inventory_into(inv, zones, &mut problems) {
            Some(set) if problems.is_empty() => Ok(set),
            _ => Err(problems.first().unwrap_or_else(|| {
                InputError::new("", "could not be read", "run check on it for the reason")
            })),
        }
    }

    /// [`RecordSet::from_inventory`] that adds its problems to those of the inventory's read: every
    /// address that breaks the address rule is listed; past them, every name that breaks the name rules.
    /// `None` when any problem is in `problems`: a record set is only ever made of a file without one.
    pub fn from_inventory_into(
        inv: Inventory,
        zones: &(impl Clone + Into<Zones>),
        problems: &mut Problems,
    ) -> Option<RecordSet> {
        let addresses = check_addresses_of(&inv, problems);
        let managed_count = problems.take(addresses)??;
        match Self::named(inv, zones.clone().into(), managed_count) {
            Ok(set) => problems.is_empty().then_some(set),
            Err((listed, more)) => {
                for e in listed {
                    problems.push(e);
                }
                problems.count_unlisted(more);
                None
            }
        }
    }

    /// The name rules over an inventory whose addresses pass, and the record set.
    fn named(
        mut inv: Inventory,
        zones: Zones,
        managed_count: usize,
    ) -> Result<RecordSet, (Vec<InputError>, usize)> {
        let zone = &zones;
        // Every mention in input order, and its source at the same index; checked per name here, then
        // sorted once by key for merging and conflicts (a BTreeMap insert per name cost more than the
        // rest of the rules together). Sized up front: at 100,000 names these are the largest arrays.
        let total = inv
            .hosts
            .iter()
            .filter(|h| !h.skip)
            .map(|h| usize::from(h.node_name.is_some()) + h.aliases.len())
            .sum::<usize>()
            + inv.vm_hosts.iter().map(|v| v.names.len()).sum::<usize>()
            + inv.derived.len();
        let mut mentions: Vec<Mention<'_>> = Vec::with_capacity(total);
        let mut sources: Vec<String> = Vec::with_capacity(total);
        // A name that fails its own checks is left out (nothing it would clash with is wrong for it)
        // and listed, at the position it would have had.
        let mut bad = Found::default();
        host_mentions(&mut inv.hosts, zone, &mut mentions, &mut sources, &mut bad);
        vm_mentions(
            &mut inv.vm_hosts,
            managed_count,
            zone,
            &mut mentions,
            &mut sources,
            &mut bad,
        );
        let first_group = managed_count + inv.vm_hosts.len();
        derived_mentions(
            &mut inv.derived,
            first_group,
            zone,
            &mut mentions,
            &mut sources,
            &mut bad,
        );
        let sorted = check(&mentions, &sources, zone, bad)?;
        let ptr = canonical_names(&mentions);
        let (records, not_served) = merge(&mut mentions, sources, &sorted);
        if records.len() > MAX_SERVED_NAMES {
            return Err((
                vec![InputError::new(
                    "",
                    format!(
                        "has {} served names; at most {MAX_SERVED_NAMES} are served",
                        records.len()
                    ),
                    "serve fewer names, or split them across zones",
                )],
                0,
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
            zones,
            records,
            ptr,
            not_served,
            skipped_hosts,
        })
    }
}

/// The names that fail their own checks, each at the input position its mention would have had.
type Bad = Found;

/// The managed hosts' node names and aliases as mentions, their sources moved out; a name that fails
/// its own checks goes to `bad`.
fn host_mentions<'a>(
    hosts: &'a mut [Host],
    zone: &Zones,
    mentions: &mut Vec<Mention<'a>>,
    sources: &mut Vec<String>,
    bad: &mut Bad,
) {
    // Node name -> the index of its mention.
    let mut node_names: HashMap<&str, usize> = HashMap::new();
    for (hi, h) in hosts.iter_mut().filter(|h| !h.skip).enumerate() {
        let Host {
            address,
            node_name,
            aliases,
            ..
        } = h;
        let Some(Named { name, source }) = node_name else {
            continue;
        };
        let name: &String = name;
        let at = mentions.len();
        if let Err(e) = name::check_node_name(name) {
            bad.report(at, || {
                bad_name(
                    source,
                    &e,
                    "a node name is one lowercase label; set nodename",
                )
            });
        } else if let Some(&prev) = node_names.get(name.as_str()) {
            bad.report(at, || {
                InputError::new(
                    &*source,
                    format!("{name:?} is also the node name from {}", sources[prev]),
                    "set a distinct nodename on one of the two hosts",
                )
            });
        } else {
            node_names.insert(name, at);
            mentions.push(Mention::borrowed(
                name,
                *address,
                NO_GROUP,
                Kind::Node,
                zone,
            ));
            sources.push(std::mem::take(source));
        }
        // An alias equal to the node's own name merges; one listed twice is a slip worth reporting.
        for Named { name, source } in aliases.iter_mut() {
            if let Err(e) = name::check_host_name(name) {
                bad.report(mentions.len(), || bad_name(source, &e, "fix the alias"));
                continue;
            }
            mentions.push(Mention::borrowed(name, *address, hi, Kind::Alias, zone));
            sources.push(std::mem::take(source));
        }
    }
}

/// The bulk of the names, the `vm_hosts` entries': each one's own string becomes its key, and each
/// entry's list is freed as soon as it is read. Each entry is its own group, after the managed hosts'.
fn vm_mentions(
    vm_hosts: &mut [VmHost],
    managed_count: usize,
    zone: &Zones,
    mentions: &mut Vec<Mention<'_>>,
    sources: &mut Vec<String>,
    bad: &mut Bad,
) {
    for (vi, v) in vm_hosts.iter_mut().enumerate() {
        for n in std::mem::take(&mut v.names) {
            if let Err(e) = name::check_host_name(&n.name) {
                bad.report(mentions.len(), || bad_name(&n.source, &e, "fix the name"));
                continue;
            }
            let group = managed_count + vi;
            mentions.push(Mention::owned(n.name, v.address, group, zone));
            sources.push(n.source);
        }
    }
}

/// The host-access view's derived names, each its own group (a name derived twice at one address
/// merges, every source listed).
fn derived_mentions(
    derived: &mut [Derived],
    first_group: usize,
    zone: &Zones,
    mentions: &mut Vec<Mention<'_>>,
    sources: &mut Vec<String>,
    bad: &mut Bad,
) {
    for (di, d) in derived.iter_mut().enumerate() {
        if let Err(e) = name::check_host_name(&d.name) {
            bad.report(mentions.len(), || {
                bad_name(
                    &d.source,
                    &e,
                    "fix the name in the Pigsty config, or read the file with --identity-only",
                )
            });
            continue;
        }
        let name = std::mem::take(&mut d.name);
        mentions.push(Mention::owned(name, d.address, first_group + di, zone));
        sources.push(std::mem::take(&mut d.source));
    }
}

/// The canonical-name rule, one PTR per address that has served names: the node name of the managed
/// host at the address when there is one, else the first served name of the first `vm_hosts` entry
/// for it in input order (the input allows one entry per address). Names outside the zone are skipped,
/// so a PTR target always has an A back to its address. In input order the node names come before
/// every `vm_hosts` name, so the first served mention at an address that is not an alias is its
/// canonical name. Every address is in one /24 (checked before the mentions are made): a table by
/// last octet, already in address order.
fn canonical_names(mentions: &[Mention<'_>]) -> Vec<Ptr> {
    let mut chosen: [Option<&Mention<'_>>; 256] = [None; 256];
    for m in mentions {
        if m.served && m.kind != Kind::Alias {
            chosen[usize::from(m.address.octets()[3])].get_or_insert(m);
        }
    }
    chosen
        .iter()
        .flatten()
        .map(|m| Ptr {
            address: m.address,
            name: m.key.clone(),
        })
        .collect()
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

/// The PTR rules a stored generation must meet: sorted by address, one per address that has names and
/// none for an address without, each target a served name with an A back to the same address. An
/// empty list is a generation from before reverse zones (it serves no reverse zone).
pub fn check_ptr(records: &[Record], ptr: &[Ptr]) -> Result<(), String> {
    if ptr.is_empty() {
        return Ok(());
    }
    let mut previous: Option<Ipv4Addr> = None;
    for p in ptr {
        if previous.is_some_and(|a| a >= p.address) {
            return Err(format!(
                "has the PTR of {} out of order or twice",
                p.address
            ));
        }
        previous = Some(p.address);
        // Records are sorted by name (checked before this).
        match records.binary_search_by(|r| r.name.as_str().cmp(&p.name)) {
            Ok(i) if records[i].address == p.address => {}
            Ok(i) => {
                return Err(format!(
                    "has the PTR {} -> {}, whose A is {}",
                    p.address, p.name, records[i].address
                ));
            }
            Err(_) => {
                return Err(format!(
                    "has the PTR {} -> {}, a name it does not serve",
                    p.address, p.name
                ));
            }
        }
    }
    // The lowest address with names but no PTR, without building a set of 100,000 addresses (this
    // runs on every swap in the server too): a table by last octet for the first PTR's /24, where
    // every PTR of a valid generation is, and a search of the sorted PTR list for any other address.
    let [a, b, c, _] = ptr[0].address.octets();
    let mut in_first = [false; 256];
    for p in ptr {
        if let [pa, pb, pc, d] = p.address.octets()
            && [pa, pb, pc] == [a, b, c]
        {
            in_first[usize::from(d)] = true;
        }
    }
    let has_ptr = |addr: &Ipv4Addr| match addr.octets() {
        [pa, pb, pc, d] if [pa, pb, pc] == [a, b, c] => in_first[usize::from(d)],
        _ => ptr.binary_search_by(|p| p.address.cmp(addr)).is_ok(),
    };
    if let Some(a) = records
        .iter()
        .map(|r| r.address)
        .filter(|a| !has_ptr(a))
        .min()
    {
        return Err(format!("has names at {a} but no PTR for it"));
    }
    Ok(())
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

#[cfg(test)]
mod tests;
