//! Barn's address rules over a parsed inventory, before any name is looked at: one private /24 set by
//! the first managed host, `.9`-`.254` for every host, `vm_hosts` entry and derived name, one `vm_hosts`
//! entry per address. Each address that breaks them is its own problem of the file.

use std::collections::HashMap;
use std::net::Ipv4Addr;

use crate::input::inventory::{Derived, Host, InputError, Inventory};
use crate::input::problems::Problems;

/// The address rules, before any name is looked at: a managed host, every address in the first managed
/// host's /24, one `vm_hosts` entry per address. Each address that breaks them is its own problem; the
/// /24 itself comes from the first managed host, so one outside the private ranges ends the read.
/// Returns how many hosts are managed (`None` when any address broke a rule).
pub(super) fn check_addresses_of(
    inv: &Inventory,
    problems: &mut Problems,
) -> Result<Option<usize>, InputError> {
    let managed: Vec<&Host> = inv.hosts.iter().filter(|h| !h.skip).collect();
    let Some(first) = managed.first() else {
        return Err(InputError::new(
            "all",
            "has no managed host: every host has vm_skip: true",
            "leave at least one host without vm_skip",
        ));
    };
    let net = Net::of(first)?;
    let mut broken = false;
    let mut rule = |r: Result<(), InputError>| broken |= problems.take(r).is_none();
    for h in &managed {
        rule(net.check(h.address, &h.origin, "host"));
    }
    for v in &inv.vm_hosts {
        rule(net.check(v.address, &v.source, "vm_hosts address"));
    }
    for d in &inv.derived {
        rule(check_derived_address(&net, d));
    }
    let mut seen_vm: HashMap<Ipv4Addr, &str> = HashMap::new();
    for v in &inv.vm_hosts {
        if let Some(prev) = seen_vm.insert(v.address, &v.source) {
            rule(Err(InputError::new(
                &v.source,
                format!("{} is listed again (first at {prev})", v.address),
                "merge the names into one vm_hosts entry per address",
            )));
        }
    }
    Ok((!broken).then_some(managed.len()))
}

/// Barn's address rule over a derived name: where Pigsty's rule and Barn's disagree, Barn's wins,
/// and the error says which VIP or target to move.
fn check_derived_address(net: &Net, d: &Derived) -> Result<(), InputError> {
    let o = d.address.octets();
    if o[..3] == net.prefix && (1..=8).contains(&o[3]) {
        let [p0, p1, p2] = net.prefix;
        let next = if d.source.contains("pg_vip_address") {
            format!(
                "move the PG VIP into {p0}.{p1}.{p2}.9-254 (e.g. pg_vip_address: {p0}.{p1}.{p2}.20/24), \
                 or set pg_dns_target: primary"
            )
        } else {
            format!("move it into {p0}.{p1}.{p2}.9-254")
        };
        return Err(InputError::new(
            &d.source,
            format!(
                "{} for {:?} is in .2-.8, which Barn reserves for the host and DHCP; Barn's address \
                 rule wins over Pigsty's",
                d.address, d.name
            ),
            next,
        ));
    }
    net.check(d.address, &d.source, "address")
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
