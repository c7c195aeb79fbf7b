//! IXFR (RFC 1995) from the stored generation history. A generation is a complete, immutable zone
//! version, so the difference from the client's serial to the live one is computed from the two
//! stored files and sent condensed into one difference sequence (RFC 1995 §4 allows condensing):
//! SOA(live), SOA(client), what was deleted, SOA(live), what was added, SOA(live).
//!
//! When the client's serial is no longer stored (the history keeps 50) or its zone changed apex
//! (another /24), the answer is a full zone, AXFR-style (§4). When the client is current, or claims a
//! serial newer than ours (RFC 1982 arithmetic), the answer is the single current SOA (§2); so is an
//! IXFR over UDP, which tells the client to come back over TCP (§2).

use std::collections::HashSet;
use std::sync::Arc;

use hickory_proto::rr::Record;

use super::source::Source;
use super::zone_records::{self, Which};
use crate::dns::transport::Transport;
use crate::zone::generation::Generation;

#[derive(Debug)]
pub(super) enum Plan {
    Current,
    Axfr,
    /// The whole response, both SOAs at each end included.
    Diff(Vec<Record>),
}

impl Plan {
    pub fn label(&self) -> &'static str {
        match self {
            Plan::Current => "current SOA",
            Plan::Axfr => "full zone",
            Plan::Diff(_) => "incremental",
        }
    }
}

/// RFC 1982: `a` is the same as or after `b`.
fn same_or_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

pub(super) fn plan(
    source: &Source,
    live: &Arc<Generation>,
    which: &Which,
    client: u32,
    transport: Transport,
) -> Plan {
    if transport == Transport::Udp || same_or_after(client, live.serial) {
        return Plan::Current;
    }
    let Ok(old) = source.read(client) else {
        return Plan::Axfr;
    };
    diff(&old, live, which).map_or(Plan::Axfr, Plan::Diff)
}

/// The condensed difference sequence from `old` to `new`; `None` when the two cannot be compared as
/// versions of one zone (another apex), or when every record changed anyway (another TTL).
fn diff(old: &Generation, new: &Generation, which: &Which) -> Option<Vec<Record>> {
    let apex = zone_records::apex(new, which)?;
    if zone_records::apex(old, which)? != apex || old.ttl != new.ttl {
        return None;
    }
    let apex = zone_records::name(&apex)?;
    let (old_soa, new_soa) = (
        zone_records::soa(old, which, &apex)?,
        zone_records::soa(new, which, &apex)?,
    );
    let (before, after) = (
        zone_records::items(old, which),
        zone_records::items(new, which),
    );
    let before_set: HashSet<&zone_records::Item<'_>> = before.iter().collect();
    let after_set: HashSet<&zone_records::Item<'_>> = after.iter().collect();
    let mut out = vec![new_soa.clone(), old_soa];
    for item in before.iter().filter(|i| !after_set.contains(i)) {
        out.push(zone_records::record(old, &apex, item)?);
    }
    out.push(new_soa.clone());
    for item in after.iter().filter(|i| !before_set.contains(i)) {
        out.push(zone_records::record(new, &apex, item)?);
    }
    out.push(new_soa);
    Some(out)
}

/// The single SOA of the live generation.
pub(super) fn current(
    g: &Generation,
    which: &Which,
) -> Option<Box<dyn Iterator<Item = Option<Record>> + Send>> {
    let apex = zone_records::name(&zone_records::apex(g, which)?)?;
    let soa = zone_records::soa(g, which, &apex)?;
    Some(Box::new(std::iter::once(Some(soa))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_arithmetic() {
        assert!(same_or_after(5, 5));
        assert!(same_or_after(6, 5));
        assert!(!same_or_after(4, 5));
        assert!(same_or_after(1, u32::MAX));
        assert!(!same_or_after(u32::MAX, 1));
    }
}
