//! EDNS alone (RFC 6891): what a query's OPT says, whether its options are well-formed, the OPT every
//! EDNS response carries, and the UDP size limit that follows from them.

use hickory_proto::op::ResponseCode;

use super::Limits;
use crate::dns::wire::{TYPE_OPT, push_u16, u16_at};

/// RFC 1035 §4.2.1 / RFC 6891 §6.2.3: the floor for any UDP response limit.
pub(super) const MIN_UDP: usize = 512;

/// The query's OPT, as far as answering needs it.
#[derive(Debug, Clone, Copy)]
pub(super) struct EdnsInfo {
    pub payload: u16,
    pub version: u8,
    pub dnssec_ok: bool,
}

impl EdnsInfo {
    /// From an OPT's CLASS (the requestor's payload size) and the two halves of its TTL (extended
    /// rcode and version; DO and the other flags).
    pub fn from_opt(class: u16, ttl: [u16; 2]) -> EdnsInfo {
        EdnsInfo {
            payload: class,
            version: (ttl[0] & 0xFF) as u8,
            dnssec_ok: ttl[1] & 0x8000 != 0,
        }
    }
}

/// EDNS options must be well-formed TLVs filling the rdata exactly; their contents are ignored.
pub(super) fn options_ok(mut rdata: &[u8]) -> bool {
    while !rdata.is_empty() {
        let Some(len) = u16_at(rdata, 2) else {
            return false;
        };
        let end = 4 + usize::from(len);
        if end > rdata.len() {
            return false;
        }
        rdata = &rdata[end..];
    }
    true
}

/// The UDP response limit: min(client payload clamped to ≥ 512, own max) with EDNS, 512 without, then
/// lowered by the test cap.
pub(super) fn udp_limit(edns: Option<&EdnsInfo>, limits: &Limits) -> usize {
    let own = usize::from(limits.udp_max_payload).max(MIN_UDP);
    let proto = match edns {
        Some(e) => usize::from(e.payload).max(MIN_UDP).min(own),
        None => MIN_UDP,
    };
    limits.udp_cap.map_or(proto, |cap| proto.min(cap))
}

/// A fresh OPT: version 0, our payload, the rcode's upper bits, DO copied; unknown flags and options
/// are not echoed.
pub(super) fn push_opt(out: &mut Vec<u8>, edns: &EdnsInfo, rcode: ResponseCode, limits: &Limits) {
    out.push(0);
    push_u16(out, TYPE_OPT);
    push_u16(out, limits.udp_max_payload.max(MIN_UDP as u16));
    out.push(rcode.high());
    out.push(0);
    push_u16(out, if edns.dnssec_ok { 0x8000 } else { 0 });
    push_u16(out, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_limit_follows_the_client_payload() {
        let l = Limits::default();
        let e = |payload| EdnsInfo {
            payload,
            version: 0,
            dnssec_ok: false,
        };
        assert_eq!(udp_limit(None, &l), 512);
        assert_eq!(udp_limit(Some(&e(100)), &l), 512);
        assert_eq!(udp_limit(Some(&e(800)), &l), 800);
        assert_eq!(udp_limit(Some(&e(4096)), &l), 1232);
        let capped = Limits {
            udp_cap: Some(40),
            ..l
        };
        assert_eq!(udp_limit(Some(&e(4096)), &capped), 40);
        assert_eq!(udp_limit(None, &capped), 40);
    }
}
