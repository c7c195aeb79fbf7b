//! The answering rules as one pure function from the zone view and a parsed query to a [`Plan`]: which
//! rcode, which flags, and what goes in the answer and authority sections. Nothing here writes bytes.
//! The forward zone and the reverse zone of the view answer under the same rules; only what a name
//! can hold differs (an A in one, a PTR in the other).

use std::net::Ipv4Addr;

use hickory_proto::op::ResponseCode;

use super::parse::{Parsed, Question};
use crate::dns::name::in_zone_bytes;
use crate::dns::wire::{
    CLASS_IN, TYPE_A, TYPE_ANY, TYPE_AXFR, TYPE_IXFR, TYPE_NS, TYPE_PTR, TYPE_SOA,
};
use crate::zone::reverse::ReverseNode;
use crate::zone::view::{Node, ZoneView};

/// The answer section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Section {
    None,
    A(Ipv4Addr),
    Soa,
    Ns,
    /// The PTR of the address with this last octet, in the reverse zone.
    Ptr(u8),
}

/// What a name holds, in either zone.
#[derive(Clone, Copy)]
enum Held {
    Nothing,
    A(Ipv4Addr),
    Ptr(u8),
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Plan {
    pub rcode: ResponseCode,
    pub aa: bool,
    /// NOTIMP: the meaning of RD/CD is unknown for other opcodes, so they are not echoed.
    pub clear_rd_cd: bool,
    pub echo_question: bool,
    pub answer: Section,
    /// Negative answer: zone SOA in the authority section.
    pub negative_soa: bool,
    /// The question is in the reverse zone: its SOA and NS, not the forward zone's.
    pub reverse: bool,
    /// Which forward zone of the view the question is in (its SOA and NS), when not `reverse`.
    pub zone: usize,
}

impl Plan {
    pub fn error(rcode: ResponseCode, echo_question: bool) -> Plan {
        Plan {
            rcode,
            aa: false,
            clear_rd_cd: false,
            echo_question,
            answer: Section::None,
            negative_soa: false,
            reverse: false,
            zone: 0,
        }
    }
}

/// The rules in the order they apply: the header and the question, then where the name is (the zone,
/// the reverse zone, or outside), then what it holds, then what the question asks of it.
pub(super) fn decide(zone: &ZoneView, parsed: &Parsed) -> Plan {
    let q = match question(parsed) {
        Ok(q) => q,
        Err(plan) => return plan,
    };
    let name = q.lower();
    // Any other reverse zone (another /24, `10.in-addr.arpa`, `ip6.arpa`) is outside: REFUSED.
    let forward = zone.zone_index(name);
    let reverse = zone
        .reverse()
        .filter(|r| forward.is_none() && in_zone_bytes(name, r.zone().as_bytes()));
    if forward.is_none() && reverse.is_none() {
        return Plan::error(ResponseCode::Refused, true);
    }
    if q.qtype == TYPE_AXFR || q.qtype == TYPE_IXFR {
        return Plan::error(ResponseCode::Refused, true);
    }
    let (apex, node) = match reverse {
        Some(r) => match r.lookup(name) {
            Some(ReverseNode::Apex) => (true, Some(Held::Nothing)),
            Some(ReverseNode::Ptr(octet)) => (false, Some(Held::Ptr(octet))),
            None => (false, None),
        },
        None => {
            let i = forward.unwrap_or(0);
            let apex = name.len() == zone.zones().iter().nth(i).map_or(0, |z| z.as_str().len());
            (apex, forward_node(zone, name))
        }
    };
    Plan {
        zone: forward.unwrap_or(0),
        ..answer(q.qtype, apex, node, reverse.is_some())
    }
}

/// The one question of a well-formed QUERY of class IN, or the error answer: FORMERR, BADVERS, NOTIMP
/// (other opcodes), FORMERR (QDCOUNT ≠ 1), REFUSED (another class), in that order.
fn question(parsed: &Parsed) -> Result<&Question, Plan> {
    let one_question = parsed.qdcount == 1 && parsed.question.is_some();
    if parsed.malformed {
        return Err(Plan::error(ResponseCode::FormErr, one_question));
    }
    // Like BIND and hickory's Catalog, an unsupported EDNS version is reported before anything else.
    if parsed.edns.is_some_and(|e| e.version > 0) {
        return Err(Plan::error(ResponseCode::BADVERS, one_question));
    }
    if parsed.opcode() != 0 {
        return Err(Plan {
            clear_rd_cd: true,
            ..Plan::error(ResponseCode::NotImp, one_question)
        });
    }
    let Some(q) = parsed.question.as_ref().filter(|_| parsed.qdcount == 1) else {
        // RFC 9619: QUERY with QDCOUNT ≠ 1.
        return Err(Plan::error(ResponseCode::FormErr, false));
    };
    if q.qclass != CLASS_IN {
        return Err(Plan::error(ResponseCode::Refused, true));
    }
    Ok(q)
}

/// What a name of the forward zone holds; `None` when it is not in the zone.
fn forward_node(zone: &ZoneView, name: &[u8]) -> Option<Held> {
    // A name that is not UTF-8 (or holds a dotted label, stored as 0) cannot be a served name.
    std::str::from_utf8(name)
        .ok()
        .and_then(|n| zone.lookup(n))
        .map(|n| match n {
            Node::Address(a) => Held::A(a),
            Node::Empty => Held::Nothing,
        })
}

/// The authoritative answer for a name in one of the zones: NXDOMAIN for a name that is not there, else
/// the asked RRset or NODATA, negative answers with the zone's SOA.
fn answer(qtype: u16, apex: bool, node: Option<Held>, reverse: bool) -> Plan {
    let found = Plan {
        rcode: ResponseCode::NoError,
        aa: true,
        clear_rd_cd: false,
        echo_question: true,
        answer: Section::None,
        negative_soa: false,
        reverse,
        zone: 0,
    };
    let Some(node) = node else {
        return Plan {
            rcode: ResponseCode::NXDomain,
            negative_soa: true,
            ..found
        };
    };
    // ANY (RFC 8482): one RRset, never the whole node — the SOA at the apex, else the A or PTR if there
    // is one, else NODATA.
    let section = match (qtype, node) {
        (TYPE_SOA, _) | (TYPE_ANY, _) if apex => Section::Soa,
        (TYPE_NS, _) if apex => Section::Ns,
        (TYPE_A | TYPE_ANY, Held::A(addr)) => Section::A(addr),
        (TYPE_PTR | TYPE_ANY, Held::Ptr(octet)) => Section::Ptr(octet),
        _ => Section::None,
    };
    match section {
        Section::None => Plan {
            negative_soa: true,
            ..found
        },
        s => Plan { answer: s, ..found },
    }
}
