//! The records of one zone of one generation in the order a transfer sends them: the apex SOA, the
//! apex NS RRset, then every A (forward zone) or PTR (reverse zone). They are the records the zone view
//! of the same generation answers with (same TTL, same SOA fields and serial, the reverse zone limited
//! to the /24 of the first record, as `ReverseView` does).

use std::sync::Arc;

use hickory_proto::rr::rdata::{A, NS, PTR, SOA};
use hickory_proto::rr::{Name, RData, Record};

use crate::input::records;
use crate::zone::generation::Generation;
use crate::zone::reverse::ptr_owner;

/// Which zone a transfer is of: a served forward zone (each is transferred on its own: its own apex,
/// its own names), or the reverse zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Which {
    Forward(Arc<str>),
    Reverse,
}

impl Which {
    /// Whether a record of `g` belongs to this forward zone.
    fn holds(zone: &str, name: &str) -> bool {
        crate::dns::name::in_zone(name, zone)
    }
}

/// A name of a checked generation; `None` only for a name the zone view would also have refused.
pub(super) fn name(s: &str) -> Option<Name> {
    let fq = if s.ends_with('.') {
        s.to_string()
    } else {
        format!("{s}.")
    };
    Name::from_ascii(fq).ok()
}

/// The apex of `which` in `g`, without the trailing dot; `None` for a reverse zone the generation
/// does not serve (no PTRs). A served forward zone the generation does not know (a generation of
/// fewer zones) has its apex and no names.
pub fn apex(g: &Generation, which: &Which) -> Option<String> {
    match which {
        Which::Forward(z) => Some(z.to_string()),
        Which::Reverse if g.ptr.is_empty() => None,
        Which::Reverse => records::reverse_zone(&g.records),
    }
}

pub(super) fn soa(g: &Generation, which: &Which, apex: &Name) -> Option<Record> {
    // Each forward zone's contact is its own, as the view answers it.
    let rname = match which {
        Which::Forward(z) => format!("hostmaster.{z}."),
        Which::Reverse => g.soa.rname.clone(),
    };
    // RFC 1982 serial arithmetic never needs these over i32::MAX; the view writes the same u32 bits.
    let rdata = SOA::new(
        name(&g.soa.mname)?,
        name(&rname)?,
        g.serial,
        g.soa.refresh as i32,
        g.soa.retry as i32,
        g.soa.expire as i32,
        g.soa.minimum,
    );
    Some(Record::from_rdata(apex.clone(), g.ttl, RData::SOA(rdata)))
}

/// The PTRs the reverse view serves: those in the /24 of the first record.
fn served_ptr(g: &Generation) -> impl Iterator<Item = &records::Ptr> {
    let prefix = g.records.first().map(|r| r.address.octets());
    g.ptr
        .iter()
        .filter(move |p| prefix.is_some_and(|x| p.address.octets()[..3] == x[..3]))
}

/// The records between the two SOAs of an AXFR: NS, then A or PTR. `None` items are names that cannot
/// be written (the transfer is then aborted rather than sent incomplete).
pub(super) fn body(
    g: Arc<Generation>,
    which: Which,
    apex: Name,
) -> impl Iterator<Item = Option<Record>> + Send {
    let ns: Vec<Option<Record>> =
        g.ns.iter()
            .map(|n| {
                Some(Record::from_rdata(
                    apex.clone(),
                    g.ttl,
                    RData::NS(NS(name(n)?)),
                ))
            })
            .collect();
    let count = match &which {
        Which::Forward(z) => g
            .records
            .iter()
            .filter(|r| Which::holds(z, &r.name))
            .count(),
        Which::Reverse => served_ptr(&g).count(),
    };
    let mut index = 0usize;
    let mut ptr_pos = 0usize;
    let mut record_pos = 0usize;
    let data = std::iter::from_fn(move || {
        if index >= count {
            return None;
        }
        index += 1;
        let item = match &which {
            Which::Forward(z) => {
                // Advance to the next record of this zone (count says one is left).
                let r = loop {
                    let r = g.records.get(record_pos)?;
                    record_pos += 1;
                    if Which::holds(z, &r.name) {
                        break r;
                    }
                };
                name(&r.name).map(|n| Record::from_rdata(n, g.ttl, RData::A(A(r.address))))
            }
            Which::Reverse => {
                let prefix = g.records.first().map(|r| r.address.octets());
                // Advance to the next PTR in the served /24 (count says one is left).
                let p = loop {
                    let p = g.ptr.get(ptr_pos)?;
                    ptr_pos += 1;
                    if prefix.is_some_and(|x| p.address.octets()[..3] == x[..3]) {
                        break p;
                    }
                };
                match (name(&ptr_owner(p.address)), name(&p.name)) {
                    (Some(owner), Some(target)) => {
                        Some(Record::from_rdata(owner, g.ttl, RData::PTR(PTR(target))))
                    }
                    _ => None,
                }
            }
        };
        Some(item)
    });
    ns.into_iter().chain(data)
}

/// A record of the zone other than the SOA, by the data it comes from (cheap to compare: the IXFR
/// difference of two 100,000-name generations is taken on these, and only what differs is built).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Item<'a> {
    Ns(&'a str),
    A(&'a str, std::net::Ipv4Addr),
    Ptr(std::net::Ipv4Addr, &'a str),
}

/// Every record of the zone except the SOA, as [`Item`]s.
pub(super) fn items<'g>(g: &'g Generation, which: &Which) -> Vec<Item<'g>> {
    let mut out: Vec<Item<'_>> = g.ns.iter().map(|n| Item::Ns(n.as_str())).collect();
    match which {
        Which::Forward(z) => out.extend(
            g.records
                .iter()
                .filter(|r| Which::holds(z, &r.name))
                .map(|r| Item::A(&r.name, r.address)),
        ),
        Which::Reverse => out.extend(served_ptr(g).map(|p| Item::Ptr(p.address, &p.name))),
    }
    out
}

/// The record of an [`Item`], with the TTL of `g`.
pub(super) fn record(g: &Generation, apex: &Name, item: &Item<'_>) -> Option<Record> {
    Some(match item {
        Item::Ns(n) => Record::from_rdata(apex.clone(), g.ttl, RData::NS(NS(name(n)?))),
        Item::A(n, a) => Record::from_rdata(name(n)?, g.ttl, RData::A(A(*a))),
        Item::Ptr(a, n) => {
            Record::from_rdata(name(&ptr_owner(*a))?, g.ttl, RData::PTR(PTR(name(n)?)))
        }
    })
}
