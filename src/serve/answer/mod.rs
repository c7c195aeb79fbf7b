//! The answering core: a pure function from (zone view, query bytes, transport, limits) to response
//! bytes. No I/O, no clock, no globals. Like NSD's `answer_query`, it is three steps: `parse` reads
//! the query, `decide` applies the answering rules, `encode` writes the response (and truncates it).
//!
//! The query is parsed by a small strict wire walker and the response is written by hand rather than
//! through hickory-proto's `Message`: the hot path (A hit / NXDOMAIN) then costs no allocation besides the
//! caller's reusable output buffer, the question is echoed byte for byte (0x20 case kept), a FORMERR can
//! still carry the question and the OPT when they were readable, and truncation is exact
//! (hickory-server 0.26.3 leaves junk bytes after a rolled-back record in truncated UDP replies). Tests
//! decode every response with hickory-proto, so the encoder is checked against an independent decoder.

mod decide;
mod edns;
mod encode;
mod parse;
#[cfg(test)]
mod tests;

use hickory_proto::op::ResponseCode;

use crate::dns::transport::Transport;
use crate::zone::view::ZoneView;

/// Our own EDNS UDP payload size (DNS flag day 2020).
pub const OWN_UDP_PAYLOAD: u16 = 1232;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Our EDNS maximum: advertised in every OPT and the ceiling of every EDNS UDP response.
    pub udp_max_payload: u16,
    /// A hard limit on UDP response size below the protocol one, for tests (one-address answers never
    /// reach 512 bytes). `None` in production.
    pub udp_cap: Option<usize>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            udp_max_payload: OWN_UDP_PAYLOAD,
            udp_cap: None,
        }
    }
}

/// A response and what the counters need to know about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    pub bytes: Vec<u8>,
    pub rcode: ResponseCode,
    pub truncated: bool,
}

/// What [`answer_into`] wrote, without the bytes (they are in the caller's buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub rcode: ResponseCode,
    pub truncated: bool,
}

/// Answers one query. `None` means: drop it silently (too short, or a response — never answer those).
pub fn answer(
    zone: &ZoneView,
    query: &[u8],
    transport: Transport,
    limits: &Limits,
) -> Option<Answered> {
    let mut bytes = Vec::with_capacity(128);
    let s = answer_into(zone, query, transport, limits, &mut bytes)?;
    Some(Answered {
        bytes,
        rcode: s.rcode,
        truncated: s.truncated,
    })
}

/// Like [`answer`], writing into `out` (cleared first) so a server loop can reuse one buffer. Inline, so
/// the loops' copy does not depend on which codegen unit the compiler puts this module in.
#[inline]
pub fn answer_into(
    zone: &ZoneView,
    query: &[u8],
    transport: Transport,
    limits: &Limits,
    out: &mut Vec<u8>,
) -> Option<Summary> {
    out.clear();
    if !parse::is_query(query) {
        return None;
    }
    let parsed = parse::parse(query);
    let plan = decide::decide(zone, &parsed);
    Some(encode::encode(zone, &parsed, &plan, transport, limits, out))
}
