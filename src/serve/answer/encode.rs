//! Writing the response a [`Plan`] describes: header, echoed question, the answer and authority records
//! (copied from the zone view, which encoded them when it was built), the OPT, and truncation to the
//! transport's limit.

use hickory_proto::op::ResponseCode;

use super::decide::{Plan, Section};
use super::edns::{self, push_opt};
use super::parse::{Parsed, Question};
use super::{Limits, Summary};
use crate::dns::transport::Transport;
use crate::dns::wire::{HEADER_LEN, PTR_QNAME, push_u16};
use crate::zone::view::ZoneView;

/// The largest message a TCP frame can carry (2-byte length).
const MAX_TCP: usize = 65_535;

/// Header (counts zero, set last) and, when echoed, the question as the client spelled it.
fn write_head(
    out: &mut Vec<u8>,
    query: &Parsed,
    question: Option<&Question>,
    plan: &Plan,
    tc: bool,
) {
    out.clear();
    out.extend_from_slice(&query.id);
    let opcode = query.flags[0] & 0x78;
    let rd = if plan.clear_rd_cd {
        0
    } else {
        query.flags[0] & 0x01
    };
    let cd = if plan.clear_rd_cd {
        0
    } else {
        query.flags[1] & 0x10
    };
    // QR=1, AA as planned, RA=0, Z=0, AD=0.
    out.push(0x80 | opcode | (u8::from(plan.aa) << 2) | (u8::from(tc) << 1) | rd);
    out.push(cd | plan.rcode.low());
    out.extend_from_slice(&[0; 8]);
    if let Some(q) = question {
        out.extend_from_slice(&q.wire[..q.wire_len]);
        push_u16(out, q.qtype);
        push_u16(out, q.qclass);
    }
}

/// Writes answer and authority; returns (ancount, nscount).
fn push_sections(out: &mut Vec<u8>, zone: &ZoneView, q: &Question, plan: &Plan) -> (u16, u16) {
    let reverse = zone.reverse().filter(|_| plan.reverse);
    let an = match plan.answer {
        Section::None => 0,
        Section::A(addr) => {
            out.extend_from_slice(zone.a_head());
            out.extend_from_slice(&addr.octets());
            1
        }
        Section::Ptr(octet) => match reverse {
            Some(r) => {
                out.extend_from_slice(&PTR_QNAME);
                out.extend_from_slice(r.ptr_after_owner(octet));
                1
            }
            None => 0,
        },
        Section::Soa => {
            out.extend_from_slice(reverse.map_or(zone.soa_answer(plan.zone), |r| r.soa_answer()));
            1
        }
        Section::Ns => {
            let (records, count) = reverse.map_or(zone.ns_answer(plan.zone), |r| r.ns_answer());
            out.extend_from_slice(records);
            count
        }
    };
    let mut ns = 0u16;
    if plan.negative_soa {
        // The apex is the suffix of the question name; point at it (byte i of `lower` is wire offset i).
        let (apex_len, soa) = match reverse {
            Some(r) => (r.zone().len(), r.negative_soa_after_owner()),
            None => (
                zone.zones()
                    .iter()
                    .nth(plan.zone)
                    .map_or(0, |z| z.as_str().len()),
                zone.negative_soa_after_owner(plan.zone),
            ),
        };
        let apex_at = HEADER_LEN + q.lower_len - apex_len;
        push_u16(out, 0xC000 | apex_at as u16);
        out.extend_from_slice(soa);
        ns = 1;
    }
    (an, ns)
}

fn set_counts(out: &mut [u8], qd: u16, an: u16, ns: u16, ar: u16) {
    for (i, v) in [qd, an, ns, ar].into_iter().enumerate() {
        out[4 + 2 * i..6 + 2 * i].copy_from_slice(&v.to_be_bytes());
    }
}

/// Writes the response into `out` and, when it is over the transport's limit, the truncated form.
pub(super) fn encode(
    zone: &ZoneView,
    query: &Parsed,
    plan: &Plan,
    transport: Transport,
    limits: &Limits,
    out: &mut Vec<u8>,
) -> Summary {
    let limit = match transport {
        Transport::Tcp => MAX_TCP,
        Transport::Udp => edns::udp_limit(query.edns.as_ref(), limits),
    };
    let question = query.question.as_ref().filter(|_| plan.echo_question);
    let qd = u16::from(question.is_some());
    let ar = u16::from(query.edns.is_some());

    write_head(out, query, question, plan, false);
    let (an, ns) = match question {
        Some(q) => push_sections(out, zone, q, plan),
        None => (0, 0),
    };
    if let Some(e) = &query.edns {
        push_opt(out, e, plan.rcode, limits);
    }
    set_counts(out, qd, an, ns, ar);

    if out.len() <= limit {
        return Summary {
            rcode: plan.rcode,
            truncated: false,
        };
    }
    let mut plan = *plan;
    if limit == MAX_TCP {
        // Cannot happen with this zone's record shapes; never send an unframable message.
        plan = Plan::error(ResponseCode::ServFail, question.is_some());
    }
    // Too big for UDP: TC=1 with header, question and OPT only (RFC 6891 §7), never a partial section.
    let tc = limit != MAX_TCP;
    write_head(out, query, question, &plan, tc);
    if let Some(e) = &query.edns {
        push_opt(out, e, plan.rcode, limits);
    }
    set_counts(out, qd, 0, 0, ar);
    Summary {
        rcode: plan.rcode,
        truncated: tc,
    }
}
