//! The reverse zone's read-only view: `C.B.A.in-addr.arpa` for a generation whose addresses lie in
//! `A.B.C.0/24` (RFC 6303: a private reverse zone is answered locally, never leaked upstream). It is
//! built from the same generation as the forward view and held by it, so one swap replaces both and a
//! query never sees the forward zone of one generation and the reverse of another.
//!
//! Every name of the zone is one label below the apex (the last octet), so the index is 256 slots, and
//! there are no empty non-terminals. Like the forward view, the apex SOA and NS (same serial, TTL and
//! MINIMUM as the forward zone) and every PTR record are encoded once, here; the query path copies bytes.

use std::net::Ipv4Addr;

use crate::dns::wire::{self, PTR_QNAME, TYPE_NS, TYPE_PTR, TYPE_SOA};
use crate::input::records;
use crate::zone::generation::{Generation, Soa};
use crate::zone::view_error::ZoneViewError;

/// Encoded records, built once per view.
type Bytes = Box<[u8]>;

/// What a name is in the reverse zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReverseNode {
    Apex,
    /// The address with this last octet has a PTR.
    Ptr(u8),
}

#[derive(Debug, Clone)]
pub struct ReverseView {
    /// `C.B.A.in-addr.arpa`, lowercase, without the trailing dot.
    zone: Box<str>,
    /// By last octet: the PTR record after its owner (type, class, TTL, RDLENGTH, target name).
    ptr: Box<[Option<Box<[u8]>>]>,
    count: usize,
    soa_answer: Box<[u8]>,
    ns_answer: Box<[u8]>,
    ns_count: u16,
    negative_soa: Box<[u8]>,
}

impl ReverseView {
    /// The reverse zone of a checked generation; `None` when it has no PTRs (the empty zone, or a
    /// generation sealed before reverse zones existed).
    pub fn from_generation(g: &Generation) -> Result<Option<ReverseView>, ZoneViewError> {
        let (Some(zone), Some(first)) = (records::reverse_zone(&g.records), g.ptr.first()) else {
            return Ok(None);
        };
        let prefix = first.address.octets();
        let mut ptr: Vec<Option<Box<[u8]>>> = vec![None; 256];
        let mut rdata = Vec::with_capacity(64);
        for p in &g.ptr {
            let o = p.address.octets();
            // `check_ptr` and `check_addresses` already hold this; a view never serves another /24.
            if o[..3] != prefix[..3] {
                continue;
            }
            rdata.clear();
            name_rdata(&mut rdata, "PTR name", &p.name)?;
            let mut rr = Vec::with_capacity(10 + rdata.len());
            wire::push_rr_after_owner(&mut rr, TYPE_PTR, g.ttl, &rdata);
            ptr[usize::from(o[3])] = Some(rr.into_boxed_slice());
        }
        let count = ptr.iter().filter(|p| p.is_some()).count();
        let (soa_answer, negative_soa) = soa(g.serial, g.ttl, &g.soa)?;
        let ns_count =
            u16::try_from(g.ns.len()).map_err(|_| ZoneViewError::TooManyNs(g.ns.len()))?;
        let mut ns_answer = Vec::new();
        for name in &g.ns {
            rdata.clear();
            name_rdata(&mut rdata, "NS name", name)?;
            ns_answer.extend_from_slice(&PTR_QNAME);
            wire::push_rr_after_owner(&mut ns_answer, TYPE_NS, g.ttl, &rdata);
        }
        Ok(Some(ReverseView {
            zone: zone.into_boxed_str(),
            ptr: ptr.into_boxed_slice(),
            count,
            soa_answer,
            ns_answer: ns_answer.into_boxed_slice(),
            ns_count,
            negative_soa,
        }))
    }

    pub fn zone(&self) -> &str {
        &self.zone
    }

    /// Addresses with a PTR.
    pub fn ptr_count(&self) -> usize {
        self.count
    }

    /// Looks up a lowercase name inside this zone, without the trailing dot. `None` is NXDOMAIN: an
    /// address without names, a label that is not an octet as written in the zone (`010`, `256`, `x`),
    /// or any name below an address label.
    pub fn lookup(&self, name: &[u8]) -> Option<ReverseNode> {
        let zone = self.zone.as_bytes();
        if name == zone {
            return Some(ReverseNode::Apex);
        }
        let label = name.strip_suffix(zone)?.strip_suffix(b".")?;
        let octet = octet_label(label)?;
        self.ptr[usize::from(octet)]
            .is_some()
            .then_some(ReverseNode::Ptr(octet))
    }

    /// The PTR record of `octet` after its owner (the caller writes the pointer to the question).
    pub(crate) fn ptr_after_owner(&self, octet: u8) -> &[u8] {
        self.ptr[usize::from(octet)].as_deref().unwrap_or(&[])
    }

    pub(crate) fn soa_answer(&self) -> &[u8] {
        &self.soa_answer
    }

    pub(crate) fn ns_answer(&self) -> (&[u8], u16) {
        (&self.ns_answer, self.ns_count)
    }

    pub(crate) fn negative_soa_after_owner(&self) -> &[u8] {
        &self.negative_soa
    }
}

/// A decimal octet in its one zone spelling: `0`-`255`, no leading zero, no sign.
fn octet_label(label: &[u8]) -> Option<u8> {
    if label.is_empty() || label.len() > 3 || (label.len() > 1 && label[0] == b'0') {
        return None;
    }
    if !label.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(label).ok()?.parse().ok()
}

/// The reverse owner name of an address, `D.C.B.A.in-addr.arpa`.
pub fn ptr_owner(a: Ipv4Addr) -> String {
    let [a, b, c, d] = a.octets();
    format!("{d}.{c}.{b}.{a}.in-addr.arpa")
}

fn name_rdata(out: &mut Vec<u8>, field: &'static str, name: &str) -> Result<(), ZoneViewError> {
    wire::push_name(out, name).ok_or_else(|| ZoneViewError::Name {
        field,
        name: name.to_string(),
    })
}

/// The apex SOA as an answer (owner: the question) and as a negative answer after its owner; the
/// forward zone's SOA fields and serial, so `dig SOA` of either zone tells the same generation.
fn soa(serial: u32, ttl: u32, soa: &Soa) -> Result<(Bytes, Bytes), ZoneViewError> {
    let mut rdata = Vec::with_capacity(64);
    name_rdata(&mut rdata, "SOA MNAME", &soa.mname)?;
    name_rdata(&mut rdata, "SOA RNAME", &soa.rname)?;
    for v in [serial, soa.refresh, soa.retry, soa.expire, soa.minimum] {
        wire::push_u32(&mut rdata, v);
    }
    let mut answer = PTR_QNAME.to_vec();
    wire::push_rr_after_owner(&mut answer, TYPE_SOA, ttl, &rdata);
    let mut negative = Vec::with_capacity(10 + rdata.len());
    wire::push_rr_after_owner(&mut negative, TYPE_SOA, ttl.min(soa.minimum), &rdata);
    Ok((answer.into_boxed_slice(), negative.into_boxed_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octet_labels_have_one_spelling() {
        for (l, want) in [
            ("0", Some(0)),
            ("9", Some(9)),
            ("10", Some(10)),
            ("255", Some(255)),
            ("256", None),
            ("010", None),
            ("00", None),
            ("", None),
            ("1a", None),
            ("+1", None),
            ("1000", None),
        ] {
            assert_eq!(octet_label(l.as_bytes()), want, "{l:?}");
        }
    }

    #[test]
    fn the_index_holds_the_canonical_names_of_the_fixture() {
        let v = crate::zone::view::fixtures::reverse::view();
        let r = v.reverse().expect("a reverse zone");
        assert_eq!(r.zone(), "10.10.10.in-addr.arpa");
        assert_eq!(r.ptr_count(), 2);
        assert_eq!(r.lookup(b"10.10.10.in-addr.arpa"), Some(ReverseNode::Apex));
        assert_eq!(
            r.lookup(b"10.10.10.10.in-addr.arpa"),
            Some(ReverseNode::Ptr(10))
        );
        assert_eq!(
            r.lookup(b"11.10.10.10.in-addr.arpa"),
            Some(ReverseNode::Ptr(11))
        );
        for nx in [
            "12.10.10.10.in-addr.arpa",
            "13.10.10.10.in-addr.arpa",
            "010.10.10.10.in-addr.arpa",
            "x.10.10.10.10.in-addr.arpa",
            "110.10.10.in-addr.arpa",
        ] {
            assert_eq!(r.lookup(nx.as_bytes()), None, "{nx}");
        }
        assert_eq!(
            ptr_owner([10, 10, 10, 11].into()),
            "11.10.10.10.in-addr.arpa"
        );
    }

    #[test]
    fn no_reverse_zone_without_ptrs() {
        use crate::zone::view::fixtures::view;
        assert!(view().reverse().is_none(), "a generation without ptr");
        let empty = crate::zone::view::ZoneView::empty(
            crate::dns::name::Zone::parse("pigsty.test").unwrap(),
        )
        .unwrap();
        assert!(empty.reverse().is_none());
    }
}
