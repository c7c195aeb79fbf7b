//! The answering core: a pure function from (zone view, query bytes, transport, limits) to response bytes.
//! No I/O, no clock, no globals — every RFC rule of DESIGN.md "Answering rules" lives here.
//!
//! The query is parsed by a small strict wire walker and the response is written by hand rather than
//! through hickory-proto's `Message`: the hot path (A hit / NXDOMAIN) then costs no allocation besides the
//! caller's reusable output buffer, the question is echoed byte for byte (0x20 case kept), a FORMERR can
//! still carry the question and the OPT when they were readable, and truncation is exact (hickory 0.26.3
//! leaves junk bytes after a rolled-back record, HICKORY.md §1.6). Tests decode every response with
//! hickory-proto, so the encoder is checked against an independent decoder.

use std::net::Ipv4Addr;

use hickory_proto::op::ResponseCode;

use crate::generation::{Node, ZoneView};

/// Our own EDNS UDP payload size (DNS flag day 2020).
pub const OWN_UDP_PAYLOAD: u16 = 1232;
/// RFC 1035 §4.2.1 / RFC 6891 §6.2.3: the floor for any UDP response limit.
const MIN_UDP: usize = 512;
/// The largest message a TCP frame can carry (2-byte length).
const MAX_TCP: usize = 65_535;
/// RFC 1035 §2.3.4: a name is at most 255 octets on the wire.
const MAX_NAME_WIRE: usize = 255;
const HEADER_LEN: usize = 12;

const TYPE_A: u16 = 1;
const TYPE_NS: u16 = 2;
const TYPE_SOA: u16 = 6;
const TYPE_OPT: u16 = 41;
const TYPE_IXFR: u16 = 251;
const TYPE_AXFR: u16 = 252;
const TYPE_ANY: u16 = 255;
const CLASS_IN: u16 = 1;
/// Compression pointer to the question name, which always starts right after the header.
const PTR_QNAME: [u8; 2] = [0xC0, 0x0C];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Udp,
    Tcp,
}

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
pub struct Outcome {
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
    let o = answer_into(zone, query, transport, limits, &mut bytes)?;
    Some(Answered {
        bytes,
        rcode: o.rcode,
        truncated: o.truncated,
    })
}

/// Like [`answer`], writing into `out` (cleared first) so a server loop can reuse one buffer.
pub fn answer_into(
    zone: &ZoneView,
    query: &[u8],
    transport: Transport,
    limits: &Limits,
    out: &mut Vec<u8>,
) -> Option<Outcome> {
    out.clear();
    if query.len() < HEADER_LEN || query[2] & 0x80 != 0 {
        return None;
    }
    let parsed = parse(query);
    let plan = decide(zone, query, &parsed);
    let limit = match transport {
        Transport::Tcp => MAX_TCP,
        Transport::Udp => udp_limit(parsed.edns.as_ref(), limits),
    };
    Some(emit(zone, query, &parsed, &plan, limits, limit, out))
}

/// The UDP response limit: min(client payload clamped to ≥ 512, own max) with EDNS, 512 without, then
/// lowered by the test cap.
fn udp_limit(edns: Option<&EdnsInfo>, limits: &Limits) -> usize {
    let own = usize::from(limits.udp_max_payload).max(MIN_UDP);
    let proto = match edns {
        Some(e) => usize::from(e.payload).max(MIN_UDP).min(own),
        None => MIN_UDP,
    };
    limits.udp_cap.map_or(proto, |cap| proto.min(cap))
}

// ---------------------------------------------------------------------------------------------------------
// Parsing

#[derive(Debug, Clone, Copy)]
struct EdnsInfo {
    payload: u16,
    version: u8,
    dnssec_ok: bool,
}

/// The first question, decompressed.
struct Question {
    /// Wire form as the client spelled it (case kept), uncompressed, root label included.
    wire: [u8; MAX_NAME_WIRE],
    wire_len: usize,
    /// Lowercase presentation form without the trailing dot. A '.' inside a label is stored as 0 so it
    /// can neither match a served name nor fake a label boundary; byte i here is the length byte of the
    /// label starting at wire offset i, which lets the SOA owner point into the question name.
    lower: [u8; MAX_NAME_WIRE],
    lower_len: usize,
    qtype: u16,
    qclass: u16,
}

impl Question {
    fn new() -> Question {
        Question {
            wire: [0; MAX_NAME_WIRE],
            wire_len: 0,
            lower: [0; MAX_NAME_WIRE],
            lower_len: 0,
            qtype: 0,
            qclass: 0,
        }
    }

    fn push_label(&mut self, label: &[u8]) {
        // read_name has checked the total length, so these slices fit.
        let w = self.wire_len;
        self.wire[w] = label.len() as u8;
        self.wire[w + 1..w + 1 + label.len()].copy_from_slice(label);
        self.wire_len += 1 + label.len();
        let mut l = self.lower_len;
        if l > 0 {
            self.lower[l] = b'.';
            l += 1;
        }
        for &b in label {
            self.lower[l] = if b == b'.' { 0 } else { b.to_ascii_lowercase() };
            l += 1;
        }
        self.lower_len = l;
    }

    fn finish(&mut self) {
        self.wire[self.wire_len] = 0;
        self.wire_len += 1;
    }

    fn lower(&self) -> &[u8] {
        &self.lower[..self.lower_len]
    }
}

struct Parsed {
    qdcount: u16,
    /// The first question, when it could be read (even if something after it could not).
    question: Option<Question>,
    /// The OPT, when one could be read (even if something after it could not).
    edns: Option<EdnsInfo>,
    /// The message as a whole is malformed.
    malformed: bool,
}

fn u16_at(msg: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*msg.get(at)?, *msg.get(at + 1)?]))
}

/// Reads a name at `pos`, following compression pointers, and returns the offset just after it.
/// Pointers must point strictly before everything read so far for this name, so loops and forward
/// references are malformed; the total wire length is capped at 255.
fn read_name(msg: &[u8], pos: usize, mut sink: Option<&mut Question>) -> Option<usize> {
    let mut p = pos;
    let mut lowest = pos;
    let mut after: Option<usize> = None;
    let mut total = 0usize;
    loop {
        let len = *msg.get(p)?;
        match len & 0xC0 {
            0x00 if len == 0 => {
                if let Some(q) = sink.as_deref_mut() {
                    q.finish();
                }
                return Some(after.unwrap_or(p + 1));
            }
            0x00 => {
                let l = usize::from(len);
                let label = msg.get(p + 1..p + 1 + l)?;
                total += 1 + l;
                // Leave room for the root label.
                if total + 1 > MAX_NAME_WIRE {
                    return None;
                }
                if let Some(q) = sink.as_deref_mut() {
                    q.push_label(label);
                }
                p += 1 + l;
            }
            0xC0 => {
                let target = usize::from(u16_at(msg, p)? & 0x3FFF);
                if target >= lowest {
                    return None;
                }
                after.get_or_insert(p + 2);
                lowest = target;
                p = target;
            }
            // 0x40 and 0x80: extended/obsolete label types (RFC 6891 §5), not accepted.
            _ => return None,
        }
    }
}

/// Walks the whole message. Structural checks only: names, lengths, OPT placement and shape; rdata of
/// other records is not interpreted (a query has no business carrying any we would use).
fn parse(msg: &[u8]) -> Parsed {
    let qdcount = u16_at(msg, 4).unwrap_or(0);
    let records = [
        u16_at(msg, 6).unwrap_or(0),
        u16_at(msg, 8).unwrap_or(0),
        u16_at(msg, 10).unwrap_or(0),
    ];
    let mut parsed = Parsed {
        qdcount,
        question: None,
        edns: None,
        malformed: false,
    };
    let mut pos = HEADER_LEN;

    for i in 0..qdcount {
        let mut q = (i == 0).then(Question::new);
        let Some(end) = read_name(msg, pos, q.as_mut()) else {
            parsed.malformed = true;
            return parsed;
        };
        let (Some(qtype), Some(qclass)) = (u16_at(msg, end), u16_at(msg, end + 2)) else {
            parsed.malformed = true;
            return parsed;
        };
        if let Some(mut q) = q {
            q.qtype = qtype;
            q.qclass = qclass;
            parsed.question = Some(q);
        }
        pos = end + 4;
    }

    for (section, &count) in records.iter().enumerate() {
        let additional = section == 2;
        for _ in 0..count {
            let owner = pos;
            let Some(end) = read_name(msg, pos, None) else {
                parsed.malformed = true;
                return parsed;
            };
            let fixed = (
                u16_at(msg, end),
                u16_at(msg, end + 2),
                u16_at(msg, end + 4),
                u16_at(msg, end + 6),
            );
            let (Some(rtype), Some(class), Some(ttl_hi), Some(ttl_lo)) = fixed else {
                parsed.malformed = true;
                return parsed;
            };
            let Some(rdlen) = u16_at(msg, end + 8) else {
                parsed.malformed = true;
                return parsed;
            };
            let rdata_start = end + 10;
            let rdata_end = rdata_start + usize::from(rdlen);
            if rdata_end > msg.len() {
                parsed.malformed = true;
                return parsed;
            }
            if rtype == TYPE_OPT {
                // RFC 6891 §6.1.1: only in the additional section, owner is the root, at most one.
                let root_owner = msg.get(owner) == Some(&0);
                if !additional
                    || !root_owner
                    || parsed.edns.is_some()
                    || !options_ok(&msg[rdata_start..rdata_end])
                {
                    parsed.malformed = true;
                    return parsed;
                }
                parsed.edns = Some(EdnsInfo {
                    payload: class,
                    version: (ttl_hi & 0xFF) as u8,
                    dnssec_ok: ttl_lo & 0x8000 != 0,
                });
            }
            pos = rdata_end;
        }
    }
    // Trailing bytes after the last record are ignored, as most servers do.
    parsed
}

/// EDNS options must be well-formed TLVs filling the rdata exactly; their contents are ignored.
fn options_ok(mut rdata: &[u8]) -> bool {
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

// ---------------------------------------------------------------------------------------------------------
// Deciding

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    None,
    A(Ipv4Addr),
    Soa,
    Ns,
}

#[derive(Debug, Clone, Copy)]
struct Plan {
    rcode: ResponseCode,
    aa: bool,
    /// NOTIMP: the meaning of RD/CD is unknown for other opcodes, so they are not echoed.
    clear_rd_cd: bool,
    echo_question: bool,
    answer: Section,
    /// Negative answer: zone SOA in the authority section.
    negative_soa: bool,
}

impl Plan {
    fn error(rcode: ResponseCode, echo_question: bool) -> Plan {
        Plan {
            rcode,
            aa: false,
            clear_rd_cd: false,
            echo_question,
            answer: Section::None,
            negative_soa: false,
        }
    }
}

fn in_zone(name: &[u8], zone: &[u8]) -> bool {
    name == zone
        || (name.len() > zone.len()
            && name.ends_with(zone)
            && name[name.len() - zone.len() - 1] == b'.')
}

fn decide(zone: &ZoneView, query: &[u8], parsed: &Parsed) -> Plan {
    let one_question = parsed.qdcount == 1 && parsed.question.is_some();
    if parsed.malformed {
        return Plan::error(ResponseCode::FormErr, one_question);
    }
    // Like BIND and hickory's Catalog, an unsupported EDNS version is reported before anything else.
    if parsed.edns.is_some_and(|e| e.version > 0) {
        return Plan::error(ResponseCode::BADVERS, one_question);
    }
    let opcode = (query[2] >> 3) & 0x0F;
    if opcode != 0 {
        return Plan {
            clear_rd_cd: true,
            ..Plan::error(ResponseCode::NotImp, one_question)
        };
    }
    let Some(q) = parsed.question.as_ref().filter(|_| parsed.qdcount == 1) else {
        // RFC 9619: QUERY with QDCOUNT ≠ 1.
        return Plan::error(ResponseCode::FormErr, false);
    };
    if q.qclass != CLASS_IN {
        return Plan::error(ResponseCode::Refused, true);
    }
    let zone_name = zone.zone.as_str().as_bytes();
    let name = q.lower();
    if !in_zone(name, zone_name) {
        return Plan::error(ResponseCode::Refused, true);
    }
    if q.qtype == TYPE_AXFR || q.qtype == TYPE_IXFR {
        return Plan::error(ResponseCode::Refused, true);
    }
    let apex = name.len() == zone_name.len();
    // A name that is not UTF-8 (or holds a dotted label, stored as 0) cannot be a served name.
    let node = std::str::from_utf8(name).ok().and_then(|n| zone.lookup(n));
    let found = Plan {
        rcode: ResponseCode::NoError,
        aa: true,
        clear_rd_cd: false,
        echo_question: true,
        answer: Section::None,
        negative_soa: false,
    };
    let Some(node) = node else {
        return Plan {
            rcode: ResponseCode::NXDomain,
            negative_soa: true,
            ..found
        };
    };
    // ANY (RFC 8482): one RRset, never the whole node — the SOA at the apex, else the A if there is one,
    // else NODATA.
    let section = match (q.qtype, node) {
        (TYPE_SOA, _) | (TYPE_ANY, _) if apex => Section::Soa,
        (TYPE_NS, _) if apex => Section::Ns,
        (TYPE_A | TYPE_ANY, Node::Address(addr)) => Section::A(addr),
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

// ---------------------------------------------------------------------------------------------------------
// Writing

fn push_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

fn push_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Writes a presentation-form name (trailing dot optional) uncompressed. `None` if it is not a valid
/// name; the zone data is then broken and the caller answers SERVFAIL.
fn push_name(out: &mut Vec<u8>, name: &str) -> Option<()> {
    let name = name.strip_suffix('.').unwrap_or(name);
    let start = out.len();
    if !name.is_empty() {
        for label in name.split('.') {
            if label.is_empty() || label.len() > 63 {
                return None;
            }
            out.push(label.len() as u8);
            out.extend_from_slice(label.as_bytes());
        }
    }
    out.push(0);
    (out.len() - start <= MAX_NAME_WIRE).then_some(())
}

/// Record header with a compressed owner; returns the offset of RDLENGTH for patching.
fn push_rr_header(out: &mut Vec<u8>, owner_ptr: u16, rtype: u16, ttl: u32) -> usize {
    push_u16(out, 0xC000 | owner_ptr);
    push_u16(out, rtype);
    push_u16(out, CLASS_IN);
    push_u32(out, ttl);
    let at = out.len();
    push_u16(out, 0);
    at
}

fn patch_rdlen(out: &mut [u8], at: usize) {
    let len = (out.len() - at - 2) as u16;
    out[at..at + 2].copy_from_slice(&len.to_be_bytes());
}

fn push_soa(out: &mut Vec<u8>, zone: &ZoneView, owner_ptr: u16, ttl: u32) -> Option<()> {
    let at = push_rr_header(out, owner_ptr, TYPE_SOA, ttl);
    push_name(out, &zone.soa.mname)?;
    push_name(out, &zone.soa.rname)?;
    for v in [
        zone.serial,
        zone.soa.refresh,
        zone.soa.retry,
        zone.soa.expire,
        zone.soa.minimum,
    ] {
        push_u32(out, v);
    }
    patch_rdlen(out, at);
    Some(())
}

/// Writes answer and authority; returns (ancount, nscount), or `None` when the zone data cannot be encoded.
fn push_sections(
    out: &mut Vec<u8>,
    zone: &ZoneView,
    q: &Question,
    plan: &Plan,
) -> Option<(u16, u16)> {
    let qname_ptr = HEADER_LEN as u16;
    let mut an = 0u16;
    match plan.answer {
        Section::None => {}
        Section::A(addr) => {
            out.extend_from_slice(&PTR_QNAME);
            push_u16(out, TYPE_A);
            push_u16(out, CLASS_IN);
            push_u32(out, zone.ttl);
            push_u16(out, 4);
            out.extend_from_slice(&addr.octets());
            an = 1;
        }
        Section::Soa => {
            push_soa(out, zone, qname_ptr, zone.ttl)?;
            an = 1;
        }
        Section::Ns => {
            for ns in &zone.ns {
                let at = push_rr_header(out, qname_ptr, TYPE_NS, zone.ttl);
                push_name(out, ns)?;
                patch_rdlen(out, at);
                an = an.checked_add(1)?;
            }
        }
    }
    let mut ns = 0u16;
    if plan.negative_soa {
        // The apex is the suffix of the question name; point at it (byte i of `lower` is wire offset i).
        let apex_at = q.lower_len - zone.zone.as_str().len();
        push_soa(
            out,
            zone,
            (HEADER_LEN + apex_at) as u16,
            zone.negative_ttl(),
        )?;
        ns = 1;
    }
    Some((an, ns))
}

fn push_opt(out: &mut Vec<u8>, edns: &EdnsInfo, rcode: ResponseCode, limits: &Limits) {
    // A fresh OPT: version 0, our payload, DO copied; unknown flags and options are not echoed.
    out.push(0);
    push_u16(out, TYPE_OPT);
    push_u16(out, limits.udp_max_payload.max(MIN_UDP as u16));
    out.push(rcode.high());
    out.push(0);
    push_u16(out, if edns.dnssec_ok { 0x8000 } else { 0 });
    push_u16(out, 0);
}

fn set_counts(out: &mut [u8], qd: u16, an: u16, ns: u16, ar: u16) {
    for (i, v) in [qd, an, ns, ar].into_iter().enumerate() {
        out[4 + 2 * i..6 + 2 * i].copy_from_slice(&v.to_be_bytes());
    }
}

fn emit(
    zone: &ZoneView,
    query: &[u8],
    parsed: &Parsed,
    plan: &Plan,
    limits: &Limits,
    limit: usize,
    out: &mut Vec<u8>,
) -> Outcome {
    let mut plan = *plan;
    let question = parsed.question.as_ref().filter(|_| plan.echo_question);
    let write_head = |out: &mut Vec<u8>, plan: &Plan, tc: bool| {
        out.clear();
        out.extend_from_slice(&query[0..2]);
        let opcode = query[2] & 0x78;
        let rd = if plan.clear_rd_cd { 0 } else { query[2] & 0x01 };
        let cd = if plan.clear_rd_cd { 0 } else { query[3] & 0x10 };
        // QR=1, AA as planned, RA=0, Z=0, AD=0.
        out.push(0x80 | opcode | (u8::from(plan.aa) << 2) | (u8::from(tc) << 1) | rd);
        out.push(cd | plan.rcode.low());
        out.extend_from_slice(&[0; 8]);
        if let Some(q) = question {
            out.extend_from_slice(&q.wire[..q.wire_len]);
            push_u16(out, q.qtype);
            push_u16(out, q.qclass);
        }
    };
    let qd = u16::from(question.is_some());
    let ar = u16::from(parsed.edns.is_some());

    write_head(out, &plan, false);
    let sections = match question {
        Some(q) => push_sections(out, zone, q, &plan),
        None => Some((0, 0)),
    };
    let (an, ns) = match sections {
        Some(counts) => counts,
        None => {
            // The zone data cannot be encoded (a broken SOA/NS name): SERVFAIL rather than a wrong answer.
            plan = Plan::error(ResponseCode::ServFail, question.is_some());
            write_head(out, &plan, false);
            (0, 0)
        }
    };
    if let Some(e) = &parsed.edns {
        push_opt(out, e, plan.rcode, limits);
    }
    set_counts(out, qd, an, ns, ar);

    if out.len() <= limit {
        return Outcome {
            rcode: plan.rcode,
            truncated: false,
        };
    }
    if limit == MAX_TCP {
        // Cannot happen with this zone's record shapes; never send an unframable message.
        plan = Plan::error(ResponseCode::ServFail, question.is_some());
    }
    // Too big for UDP: TC=1 with header, question and OPT only (RFC 6891 §7), never a partial section.
    let tc = limit != MAX_TCP;
    write_head(out, &plan, tc);
    if let Some(e) = &parsed.edns {
        push_opt(out, e, plan.rcode, limits);
    }
    set_counts(out, qd, 0, 0, ar);
    Outcome {
        rcode: plan.rcode,
        truncated: tc,
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use hickory_proto::op::{Edns, Message, MessageType, OpCode, Query};
    use hickory_proto::rr::rdata::opt::EdnsOption;
    use hickory_proto::rr::{DNSClass, Name, RData, RecordType};

    use super::*;
    use crate::generation::{Generation, Input};
    use crate::name::Zone;
    use crate::records::{Record, RecordSet};

    const TTL: u32 = 30;
    const NEG: u32 = 5;

    fn view_with(records: &[(&str, [u8; 4])], serial: u32) -> ZoneView {
        let zone = Zone::parse("pigsty.test").unwrap();
        let set = RecordSet {
            zone,
            records: records
                .iter()
                .map(|(n, a)| Record {
                    name: n.to_string(),
                    address: Ipv4Addr::from(*a),
                    sources: vec!["test".into()],
                })
                .collect(),
            not_served: vec![],
            skipped_hosts: vec![],
        };
        let g = Generation::seal(
            &set,
            TTL,
            NEG,
            serial,
            "2026-01-01T00:00:00Z".into(),
            Input {
                path: "test".into(),
                sha256: String::new(),
            },
        );
        ZoneView::from_generation(&g).unwrap()
    }

    fn view() -> ZoneView {
        view_with(
            &[
                ("a.b.pigsty.test", [10, 10, 10, 11]),
                ("meta.pigsty.test", [10, 10, 10, 10]),
            ],
            7,
        )
    }

    fn query(name: &str, rtype: RecordType) -> Message {
        let mut m = Message::query();
        m.metadata.id = 0x1234;
        m.metadata.recursion_desired = true;
        m.add_query(Query::query(Name::from_ascii(name).unwrap(), rtype));
        m
    }

    fn with_edns(mut m: Message, payload: u16, dnssec_ok: bool) -> Message {
        let mut e = Edns::new();
        e.set_max_payload(payload);
        e.set_dnssec_ok(dnssec_ok);
        m.set_edns(e);
        m
    }

    /// Answers over UDP with default limits and decodes the response with hickory (an independent
    /// decoder: this also checks our encoder).
    fn ask_with(
        zone: &ZoneView,
        bytes: &[u8],
        transport: Transport,
        limits: &Limits,
    ) -> (Message, Answered) {
        let a = answer(zone, bytes, transport, limits).expect("an answer");
        let m = Message::from_vec(&a.bytes).expect("response decodes");
        assert_eq!(m.metadata.message_type, MessageType::Response);
        assert_eq!(m.metadata.id, u16::from_be_bytes([bytes[0], bytes[1]]));
        assert!(!m.metadata.recursion_available, "RA is never set");
        assert!(!m.metadata.authentic_data, "AD is never set");
        assert_eq!(a.bytes[3] & 0x40, 0, "Z is never set");
        (m, a)
    }

    fn ask(zone: &ZoneView, m: &Message) -> (Message, Answered) {
        ask_with(
            zone,
            &m.to_vec().unwrap(),
            Transport::Udp,
            &Limits::default(),
        )
    }

    fn rcode16(m: &Message) -> u16 {
        u16::from(m.metadata.response_code)
    }

    fn assert_negative_soa(m: &Message, serial: u32) {
        assert!(m.answers.is_empty(), "{m}");
        assert_eq!(m.authorities.len(), 1, "{m}");
        let soa = &m.authorities[0];
        assert_eq!(soa.name.to_ascii().to_ascii_lowercase(), "pigsty.test.");
        assert_eq!(soa.ttl, NEG.min(TTL), "RFC 2308 §5: min(SOA TTL, MINIMUM)");
        let RData::SOA(s) = &soa.data else {
            panic!("not an SOA: {soa}")
        };
        assert_eq!(s.serial, serial);
        assert_eq!(s.mname.to_ascii(), "localhost.");
        assert_eq!(s.rname.to_ascii(), "hostmaster.pigsty.test.");
    }

    /// A query assembled by hand: header fields and a body.
    fn raw(flags: [u8; 2], counts: [u16; 4], body: &[u8]) -> Vec<u8> {
        let mut v = vec![0xAB, 0xCD, flags[0], flags[1]];
        for c in counts {
            v.extend_from_slice(&c.to_be_bytes());
        }
        v.extend_from_slice(body);
        v
    }

    fn qname_wire(name: &str) -> Vec<u8> {
        let mut v = Vec::new();
        for l in name.split('.').filter(|l| !l.is_empty()) {
            v.push(l.len() as u8);
            v.extend_from_slice(l.as_bytes());
        }
        v.push(0);
        v
    }

    const OPT_RR: [u8; 11] = [0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0];

    #[test]
    fn drops_short_packets_and_responses() {
        let z = view();
        for n in 0..12 {
            assert!(
                answer(&z, &vec![0u8; n], Transport::Udp, &Limits::default()).is_none(),
                "{n} bytes"
            );
        }
        let mut m = query("meta.pigsty.test.", RecordType::A);
        m.metadata.message_type = MessageType::Response;
        assert!(answer(&z, &m.to_vec().unwrap(), Transport::Udp, &Limits::default()).is_none());
        assert!(answer(&z, &m.to_vec().unwrap(), Transport::Tcp, &Limits::default()).is_none());
    }

    #[test]
    fn a_hit_is_one_authoritative_record() {
        let z = view();
        let (m, a) = ask(&z, &query("meta.pigsty.test.", RecordType::A));
        assert_eq!(a.rcode, ResponseCode::NoError);
        assert!(!a.truncated);
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert!(m.metadata.authoritative);
        assert!(m.metadata.recursion_desired, "RD copied");
        assert!(!m.metadata.truncation);
        assert_eq!(m.answers.len(), 1);
        assert!(m.authorities.is_empty() && m.additionals.is_empty() && m.edns.is_none());
        let r = &m.answers[0];
        assert_eq!(r.ttl, TTL);
        assert_eq!(r.dns_class, DNSClass::IN);
        assert_eq!(r.data, RData::A(Ipv4Addr::new(10, 10, 10, 10).into()));
        assert_eq!(
            m.queries,
            vec![Query::query(
                Name::from_str("meta.pigsty.test.").unwrap(),
                RecordType::A
            )]
        );
    }

    #[test]
    fn rd_and_cd_are_copied_and_flags_in_the_query_ignored() {
        let z = view();
        let q = query("meta.pigsty.test.", RecordType::A);
        let mut bytes = q.to_vec().unwrap();
        bytes[2] &= !0x01; // RD=0
        bytes[2] |= 0x06; // AA and TC set in the query: meaningless, ignored
        bytes[3] |= 0x80 | 0x40 | 0x20 | 0x10; // RA, Z, AD, CD
        let (m, _) = ask_with(&z, &bytes, Transport::Udp, &Limits::default());
        assert!(!m.metadata.recursion_desired);
        assert!(m.metadata.checking_disabled);
        assert!(!m.metadata.truncation);
        assert!(m.metadata.authoritative);
        assert_eq!(m.answers.len(), 1);
    }

    #[test]
    fn mixed_case_question_is_echoed_byte_for_byte_and_matched_case_insensitively() {
        let z = view();
        let q = query("MeTa.PiGsTy.TeSt.", RecordType::A);
        let bytes = q.to_vec().unwrap();
        let (m, a) = ask(&z, &q);
        let qlen = qname_wire("MeTa.PiGsTy.TeSt").len() + 4;
        assert_eq!(&a.bytes[12..12 + qlen], &bytes[12..12 + qlen]);
        assert_eq!(m.queries[0].name().to_ascii(), "MeTa.PiGsTy.TeSt.");
        assert_eq!(m.answers.len(), 1);
        assert_eq!(
            m.answers[0].data,
            RData::A(Ipv4Addr::new(10, 10, 10, 10).into())
        );
    }

    #[test]
    fn other_types_at_an_existing_name_are_nodata() {
        let z = view();
        for t in [
            RecordType::AAAA,
            RecordType::MX,
            RecordType::TXT,
            RecordType::NS,
            RecordType::SOA,
            RecordType::Unknown(666),
        ] {
            let (m, a) = ask(&z, &query("meta.pigsty.test.", t));
            assert_eq!(a.rcode, ResponseCode::NoError, "{t}");
            assert!(m.metadata.authoritative);
            assert_negative_soa(&m, 7);
        }
    }

    #[test]
    fn nonexistent_name_is_nxdomain_with_soa() {
        let z = view();
        for t in [RecordType::A, RecordType::AAAA] {
            let (m, a) = ask(&z, &query("nope.pigsty.test.", t));
            assert_eq!(a.rcode, ResponseCode::NXDomain);
            assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
            assert!(m.metadata.authoritative);
            assert_negative_soa(&m, 7);
        }
        // Below an existing name: nothing there either.
        let (m, _) = ask(&z, &query("x.meta.pigsty.test.", RecordType::A));
        assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
    }

    #[test]
    fn negative_ttl_is_the_smaller_of_soa_ttl_and_minimum() {
        let mut z = view();
        z.ttl = 3;
        z.soa.minimum = 60;
        let (m, _) = ask(&z, &query("nope.pigsty.test.", RecordType::A));
        assert_eq!(m.authorities[0].ttl, 3);
        z.ttl = 600;
        let (m, _) = ask(&z, &query("nope.pigsty.test.", RecordType::A));
        assert_eq!(m.authorities[0].ttl, 60);
    }

    #[test]
    fn empty_non_terminal_is_nodata() {
        let z = view();
        let (m, a) = ask(&z, &query("b.pigsty.test.", RecordType::A));
        assert_eq!(a.rcode, ResponseCode::NoError);
        assert!(m.metadata.authoritative);
        assert_negative_soa(&m, 7);
        let (m, _) = ask(&z, &query("a.b.pigsty.test.", RecordType::A));
        assert_eq!(
            m.answers[0].data,
            RData::A(Ipv4Addr::new(10, 10, 10, 11).into())
        );
    }

    #[test]
    fn apex_soa_ns_and_address() {
        let z = view();
        let (m, _) = ask(&z, &query("Pigsty.Test.", RecordType::SOA));
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert!(m.metadata.authoritative);
        assert_eq!(m.answers.len(), 1);
        assert!(m.authorities.is_empty());
        let RData::SOA(s) = &m.answers[0].data else {
            panic!()
        };
        assert_eq!(m.answers[0].ttl, TTL);
        assert_eq!(
            (s.serial, s.refresh, s.retry, s.expire, s.minimum),
            (7, 3600, 900, 604_800, NEG)
        );
        assert_eq!(s.mname.to_ascii(), "localhost.");

        let (m, _) = ask(&z, &query("pigsty.test.", RecordType::NS));
        assert_eq!(m.answers.len(), 1);
        assert_eq!(m.answers[0].ttl, TTL);
        let RData::NS(ns) = &m.answers[0].data else {
            panic!()
        };
        assert_eq!(ns.0.to_ascii(), "localhost.");

        // No A at this apex: NODATA.
        let (m, _) = ask(&z, &query("pigsty.test.", RecordType::A));
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert_negative_soa(&m, 7);

        let z = view_with(&[("pigsty.test", [10, 10, 10, 9])], 3);
        let (m, _) = ask(&z, &query("pigsty.test.", RecordType::A));
        assert_eq!(
            m.answers[0].data,
            RData::A(Ipv4Addr::new(10, 10, 10, 9).into())
        );
        let (m, _) = ask(&z, &query("pigsty.test.", RecordType::SOA));
        let RData::SOA(s) = &m.answers[0].data else {
            panic!()
        };
        assert_eq!(s.serial, 3);
    }

    #[test]
    fn empty_zone_has_serial_zero_and_nothing_below_the_apex() {
        let z = ZoneView::empty(Zone::parse("pigsty.test").unwrap());
        let (m, _) = ask(&z, &query("pigsty.test.", RecordType::SOA));
        let RData::SOA(s) = &m.answers[0].data else {
            panic!()
        };
        assert_eq!(s.serial, 0);
        let (m, _) = ask(&z, &query("meta.pigsty.test.", RecordType::A));
        assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
    }

    #[test]
    fn any_is_answered_minimally() {
        let z = view();
        let (m, _) = ask(&z, &query("meta.pigsty.test.", RecordType::ANY));
        assert_eq!(m.answers.len(), 1);
        assert_eq!(m.answers[0].record_type(), RecordType::A);
        let (m, _) = ask(&z, &query("pigsty.test.", RecordType::ANY));
        assert_eq!(m.answers.len(), 1);
        assert_eq!(m.answers[0].record_type(), RecordType::SOA);
        let (m, _) = ask(&z, &query("b.pigsty.test.", RecordType::ANY));
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert_negative_soa(&m, 7);
        let (m, _) = ask(&z, &query("nope.pigsty.test.", RecordType::ANY));
        assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
        // An apex with an address still answers ANY with the SOA only.
        let z = view_with(&[("pigsty.test", [10, 10, 10, 9])], 3);
        let (m, _) = ask(&z, &query("pigsty.test.", RecordType::ANY));
        assert_eq!(m.answers.len(), 1);
        assert_eq!(m.answers[0].record_type(), RecordType::SOA);
    }

    fn assert_refused(m: &Message, a: &Answered) {
        assert_eq!(a.rcode, ResponseCode::Refused);
        assert_eq!(m.metadata.response_code, ResponseCode::Refused);
        assert!(!m.metadata.authoritative);
        assert!(m.answers.is_empty() && m.authorities.is_empty());
        assert_eq!(m.queries.len(), 1, "question echoed");
    }

    #[test]
    fn zone_transfers_are_refused() {
        let z = view();
        for t in [RecordType::AXFR, RecordType::IXFR] {
            let (m, a) = ask(&z, &query("pigsty.test.", t));
            assert_refused(&m, &a);
            assert!(m.edns.is_none());
            let (m, a) = ask(&z, &with_edns(query("pigsty.test.", t), 1232, false));
            assert_refused(&m, &a);
            assert!(m.edns.is_some(), "OPT echoed on REFUSED");
        }
    }

    #[test]
    fn outside_the_zone_is_refused() {
        let z = view();
        for name in [
            "example.com.",
            "xpigsty.test.",
            "test.",
            ".",
            "meta.pigsty.test.example.",
        ] {
            let (m, a) = ask(&z, &query(name, RecordType::A));
            assert_refused(&m, &a);
        }
        let (m, a) = ask(
            &z,
            &with_edns(query("example.com.", RecordType::A), 4096, false),
        );
        assert_refused(&m, &a);
        assert_eq!(m.edns.as_ref().map(|e| e.max_payload()), Some(1232));
    }

    #[test]
    fn classes_other_than_in_are_refused() {
        let z = view();
        for class in [DNSClass::CH, DNSClass::HS, DNSClass::ANY] {
            let mut m = Message::query();
            let mut q = Query::query(Name::from_str("version.bind.").unwrap(), RecordType::TXT);
            q.set_query_class(class);
            m.add_query(q);
            let (r, a) = ask(&z, &m);
            assert_refused(&r, &a);
            let mut m = Message::query();
            let mut q = Query::query(Name::from_str("meta.pigsty.test.").unwrap(), RecordType::A);
            q.set_query_class(class);
            m.add_query(q);
            let (r, a) = ask(&z, &m);
            assert_refused(&r, &a);
        }
    }

    #[test]
    fn other_opcodes_are_notimp_with_rd_cd_cleared() {
        let z = view();
        for op in [
            OpCode::Status,
            OpCode::Notify,
            OpCode::Update,
            OpCode::Unknown(3),
            OpCode::Unknown(15),
        ] {
            let mut q = with_edns(query("meta.pigsty.test.", RecordType::A), 1232, true);
            q.metadata.op_code = op;
            q.metadata.checking_disabled = true;
            let (m, a) = ask(&z, &q);
            assert_eq!(a.rcode, ResponseCode::NotImp, "{op}");
            assert_eq!(m.metadata.op_code, op, "opcode copied");
            assert!(!m.metadata.recursion_desired && !m.metadata.checking_disabled);
            assert!(!m.metadata.authoritative);
            assert!(m.answers.is_empty() && m.authorities.is_empty());
            let e = m.edns.as_ref().expect("OPT on NOTIMP");
            assert!(e.flags().dnssec_ok);
        }
    }

    #[test]
    fn qdcount_other_than_one_is_formerr() {
        let z = view();
        let zero = raw([0x01, 0], [0, 0, 0, 0], &[]);
        let (m, a) = ask_with(&z, &zero, Transport::Udp, &Limits::default());
        assert_eq!(a.rcode, ResponseCode::FormErr);
        assert!(m.queries.is_empty() && !m.metadata.authoritative);
        let mut two = query("meta.pigsty.test.", RecordType::A);
        two.add_query(Query::query(
            Name::from_str("a.b.pigsty.test.").unwrap(),
            RecordType::A,
        ));
        let two = with_edns(two, 1232, false);
        let (m, a) = ask(&z, &two);
        assert_eq!(a.rcode, ResponseCode::FormErr);
        assert!(m.queries.is_empty() && m.answers.is_empty());
        assert!(m.edns.is_some(), "OPT echoed on FORMERR");
    }

    #[test]
    fn malformed_rest_is_formerr_echoing_what_could_be_read() {
        let z = view();
        let q = qname_wire("Meta.pigsty.test");
        let mut body = q.clone();
        body.extend_from_slice(&[0, 1, 0, 1]);
        // A readable OPT, then a second one: RFC 6891 §6.1.1 FORMERR, with question and OPT.
        let mut two_opt = body.clone();
        two_opt.extend_from_slice(&OPT_RR);
        two_opt.extend_from_slice(&OPT_RR);
        let (m, a) = ask_with(
            &z,
            &raw([0x01, 0], [1, 0, 0, 2], &two_opt),
            Transport::Udp,
            &Limits::default(),
        );
        assert_eq!(a.rcode, ResponseCode::FormErr);
        assert_eq!(m.queries.len(), 1);
        assert_eq!(m.queries[0].name().to_ascii(), "Meta.pigsty.test.");
        assert!(m.edns.is_some());
        assert!(m.answers.is_empty() && m.authorities.is_empty() && !m.metadata.authoritative);

        // ARCOUNT claims a record that is not there: question echoed, no OPT.
        let (m, a) = ask_with(
            &z,
            &raw([0x01, 0], [1, 0, 0, 1], &body),
            Transport::Udp,
            &Limits::default(),
        );
        assert_eq!(a.rcode, ResponseCode::FormErr);
        assert_eq!(m.queries.len(), 1);
        assert!(m.edns.is_none());

        // Header only, claiming a question: FORMERR with no question.
        let (m, a) = ask_with(
            &z,
            &raw([0x01, 0], [1, 0, 0, 0], &[]),
            Transport::Udp,
            &Limits::default(),
        );
        assert_eq!(a.rcode, ResponseCode::FormErr);
        assert!(m.queries.is_empty());

        // Huge QDCOUNT with one question's worth of bytes.
        let (m, a) = ask_with(
            &z,
            &raw([0x01, 0], [65535, 0, 0, 0], &body),
            Transport::Udp,
            &Limits::default(),
        );
        assert_eq!(a.rcode, ResponseCode::FormErr);
        assert!(m.queries.is_empty());

        // OPT in the answer section, OPT with a non-root owner, OPT with a bad option length.
        let mut in_answer = body.clone();
        in_answer.extend_from_slice(&OPT_RR);
        let (_, a) = ask_with(
            &z,
            &raw([0, 0], [1, 1, 0, 0], &in_answer),
            Transport::Udp,
            &Limits::default(),
        );
        assert_eq!(a.rcode, ResponseCode::FormErr);
        let mut owner = body.clone();
        owner.extend_from_slice(&[1, b'x', 0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0]);
        let (m, a) = ask_with(
            &z,
            &raw([0, 0], [1, 0, 0, 1], &owner),
            Transport::Udp,
            &Limits::default(),
        );
        assert_eq!(a.rcode, ResponseCode::FormErr);
        assert!(m.edns.is_none());
        let mut bad_opt = body.clone();
        bad_opt.extend_from_slice(&[0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 5, 0, 10, 0, 9, 1]);
        let (_, a) = ask_with(
            &z,
            &raw([0, 0], [1, 0, 0, 1], &bad_opt),
            Transport::Udp,
            &Limits::default(),
        );
        assert_eq!(a.rcode, ResponseCode::FormErr);
    }

    #[test]
    fn bad_names_are_formerr() {
        let z = view();
        let cases: Vec<Vec<u8>> = vec![
            vec![0xC0, 0x0C, 0, 1, 0, 1],          // pointer to itself
            vec![1, b'a', 0xC0, 0x0C, 0, 1, 0, 1], // loop through an earlier label
            vec![0xC0, 0x20, 0, 1, 0, 1],          // forward pointer
            vec![0x41, 0, 0, 1, 0, 1],             // extended label type
            vec![0x81, 0, 0, 1, 0, 1],             // reserved label type
            vec![5, b'a', b'b'],                   // label runs off the end
            vec![1, b'a', 1, b'b'],                // no root label
        ];
        for body in cases {
            let (m, a) = ask_with(
                &z,
                &raw([0, 0], [1, 0, 0, 0], &body),
                Transport::Udp,
                &Limits::default(),
            );
            assert_eq!(a.rcode, ResponseCode::FormErr, "{body:?}");
            assert!(m.queries.is_empty());
        }
        // Over 255 octets.
        let mut long = Vec::new();
        for _ in 0..5 {
            long.push(60);
            long.extend_from_slice(&[b'a'; 60]);
        }
        long.extend_from_slice(&[0, 0, 1, 0, 1]);
        let (_, a) = ask_with(
            &z,
            &raw([0, 0], [1, 0, 0, 0], &long),
            Transport::Udp,
            &Limits::default(),
        );
        assert_eq!(a.rcode, ResponseCode::FormErr);
    }

    #[test]
    fn compressed_names_in_other_sections_are_followed() {
        let z = view();
        // An answer-section record in the query whose owner points at the question name (offset 12).
        let mut body = qname_wire("meta.pigsty.test");
        body.extend_from_slice(&[0, 1, 0, 1]);
        // An answer-section record whose owner points at the question name (offset 12).
        body.extend_from_slice(&[0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4]);
        let (m, a) = ask_with(
            &z,
            &raw([0, 0], [1, 1, 0, 0], &body),
            Transport::Udp,
            &Limits::default(),
        );
        assert_eq!(a.rcode, ResponseCode::NoError);
        assert_eq!(m.answers.len(), 1);
        assert_eq!(
            m.answers[0].data,
            RData::A(Ipv4Addr::new(10, 10, 10, 10).into())
        );
    }

    #[test]
    fn a_dot_inside_a_label_matches_nothing() {
        let z = view();
        // One label "a.b" followed by pigsty.test: in the zone, but not the name a.b.pigsty.test.
        let mut body = vec![3, b'a', b'.', b'b'];
        body.extend_from_slice(&qname_wire("pigsty.test"));
        body.extend_from_slice(&[0, 1, 0, 1]);
        let (m, a) = ask_with(
            &z,
            &raw([0, 0], [1, 0, 0, 0], &body),
            Transport::Udp,
            &Limits::default(),
        );
        assert_eq!(a.rcode, ResponseCode::NXDomain);
        assert!(m.answers.is_empty());
        // "x.pigsty" as one label then "test": outside the zone.
        let mut body = vec![8];
        body.extend_from_slice(b"x.pigsty");
        body.extend_from_slice(&qname_wire("test"));
        body.extend_from_slice(&[0, 1, 0, 1]);
        let (_, a) = ask_with(
            &z,
            &raw([0, 0], [1, 0, 0, 0], &body),
            Transport::Udp,
            &Limits::default(),
        );
        assert_eq!(a.rcode, ResponseCode::Refused);
        // Non-UTF-8 label in the zone: NXDOMAIN, no panic.
        let mut body = vec![2, 0xC3, 0x28];
        body.extend_from_slice(&qname_wire("pigsty.test"));
        body.extend_from_slice(&[0, 1, 0, 1]);
        let (_, a) = ask_with(
            &z,
            &raw([0, 0], [1, 0, 0, 0], &body),
            Transport::Udp,
            &Limits::default(),
        );
        assert_eq!(a.rcode, ResponseCode::NXDomain);
    }

    #[test]
    fn edns_is_echoed_fresh() {
        let z = view();
        let mut q = with_edns(query("meta.pigsty.test.", RecordType::A), 4096, true);
        let e = q.edns.as_mut().unwrap();
        e.options_mut()
            .insert(EdnsOption::Unknown(65001, vec![1, 2, 3]));
        e.flags_mut().z = 0x1234;
        let (m, a) = ask(&z, &q);
        assert_eq!(a.rcode, ResponseCode::NoError);
        assert_eq!(m.answers.len(), 1);
        let e = m.edns.as_ref().expect("OPT echoed");
        assert_eq!(e.version(), 0);
        assert_eq!(e.max_payload(), 1232, "our own payload");
        assert!(e.flags().dnssec_ok, "DO copied");
        assert_eq!(e.flags().z, 0, "unknown flags not echoed");
        assert!(
            e.options().as_ref().is_empty(),
            "unknown options not echoed"
        );
        // Exactly one OPT, 11 bytes, at the end.
        assert_eq!(
            &a.bytes[a.bytes.len() - 11..],
            &[0, 0, 41, 0x04, 0xD0, 0, 0, 0x80, 0, 0, 0]
        );

        let (m, _) = ask(
            &z,
            &with_edns(query("meta.pigsty.test.", RecordType::A), 512, false),
        );
        assert!(!m.edns.as_ref().unwrap().flags().dnssec_ok);
        // Negative answers carry the OPT too.
        let (m, _) = ask(
            &z,
            &with_edns(query("nope.pigsty.test.", RecordType::A), 1232, false),
        );
        assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
        assert!(m.edns.is_some());
        assert_negative_soa(&m, 7);
    }

    #[test]
    fn edns_version_above_zero_is_badvers() {
        let z = view();
        let mut q = with_edns(query("meta.pigsty.test.", RecordType::A), 1232, true);
        q.edns.as_mut().unwrap().set_version(1);
        let (m, a) = ask(&z, &q);
        assert_eq!(a.rcode, ResponseCode::BADVERS);
        // hickory decodes extended rcode 16 as BADSIG (same number): compare the number.
        assert_eq!(rcode16(&m), 16);
        assert_eq!(a.bytes[3] & 0x0F, 0, "low 4 bits in the header");
        let e = m.edns.as_ref().expect("OPT on BADVERS");
        assert_eq!(e.version(), 0);
        assert_eq!(e.rcode_high(), 1);
        assert!(e.flags().dnssec_ok);
        assert!(m.answers.is_empty() && m.authorities.is_empty());
        assert!(!m.metadata.authoritative);
        assert_eq!(m.queries.len(), 1);
    }

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

    #[test]
    fn oversized_udp_is_truncated_to_question_and_opt_and_tcp_is_complete() {
        let z = view();
        let q = with_edns(query("meta.pigsty.test.", RecordType::A), 1232, true);
        let bytes = q.to_vec().unwrap();
        let full = answer(&z, &bytes, Transport::Udp, &Limits::default()).unwrap();
        let cap = Limits {
            udp_cap: Some(full.bytes.len() - 1),
            ..Limits::default()
        };
        let (m, a) = ask_with(&z, &bytes, Transport::Udp, &cap);
        assert!(a.truncated);
        assert_eq!(a.rcode, ResponseCode::NoError);
        assert!(m.metadata.truncation && m.metadata.authoritative);
        assert_eq!(m.queries.len(), 1);
        assert!(m.answers.is_empty() && m.authorities.is_empty());
        assert!(m.edns.as_ref().unwrap().flags().dnssec_ok);
        // Exactly header + question + OPT: no junk after it.
        assert_eq!(
            a.bytes.len(),
            12 + qname_wire("meta.pigsty.test").len() + 4 + 11
        );

        let (m, a) = ask_with(&z, &bytes, Transport::Tcp, &cap);
        assert!(!a.truncated && !m.metadata.truncation);
        assert_eq!(m.answers.len(), 1);
        assert_eq!(a.bytes, full.bytes);

        // Negative answers truncate the same way; exactly at the limit is not truncated.
        let nx = query("nope.pigsty.test.", RecordType::A).to_vec().unwrap();
        let full = answer(&z, &nx, Transport::Udp, &Limits::default()).unwrap();
        let at = Limits {
            udp_cap: Some(full.bytes.len()),
            ..Limits::default()
        };
        assert!(!answer(&z, &nx, Transport::Udp, &at).unwrap().truncated);
        let under = Limits {
            udp_cap: Some(full.bytes.len() - 1),
            ..Limits::default()
        };
        let (m, a) = ask_with(&z, &nx, Transport::Udp, &under);
        assert!(a.truncated && m.metadata.truncation);
        assert_eq!(a.rcode, ResponseCode::NXDomain);
        assert!(m.authorities.is_empty() && m.edns.is_none());
    }

    #[test]
    fn broken_zone_names_give_servfail() {
        let mut z = view();
        z.soa.mname = "a..b".into();
        let (m, a) = ask(
            &z,
            &with_edns(query("nope.pigsty.test.", RecordType::A), 1232, false),
        );
        assert_eq!(a.rcode, ResponseCode::ServFail);
        assert!(m.answers.is_empty() && m.authorities.is_empty() && m.edns.is_some());
        // The A path does not need the SOA.
        let (_, a) = ask(&z, &query("meta.pigsty.test.", RecordType::A));
        assert_eq!(a.rcode, ResponseCode::NoError);
    }

    #[test]
    fn answer_into_reuses_the_buffer() {
        let z = view();
        let mut out = Vec::with_capacity(512);
        let q1 = query("meta.pigsty.test.", RecordType::A).to_vec().unwrap();
        let q2 = query("nope.pigsty.test.", RecordType::A).to_vec().unwrap();
        let o = answer_into(&z, &q1, Transport::Udp, &Limits::default(), &mut out).unwrap();
        assert_eq!(o.rcode, ResponseCode::NoError);
        let o = answer_into(&z, &q2, Transport::Udp, &Limits::default(), &mut out).unwrap();
        assert_eq!(o.rcode, ResponseCode::NXDomain);
        assert_eq!(
            out,
            answer(&z, &q2, Transport::Udp, &Limits::default())
                .unwrap()
                .bytes
        );
    }

    #[test]
    fn trailing_bytes_are_ignored() {
        let z = view();
        let mut bytes = query("meta.pigsty.test.", RecordType::A).to_vec().unwrap();
        bytes.extend_from_slice(&[1, 2, 3]);
        let (m, _) = ask_with(&z, &bytes, Transport::Udp, &Limits::default());
        assert_eq!(m.answers.len(), 1);
    }

    /// A bounded deterministic fuzz: no panic, every response decodes, and whatever hickory cannot
    /// decode as a QUERY with one question we never answer with data.
    #[test]
    fn random_and_mutated_packets_never_panic() {
        let z = view();
        let base = with_edns(query("meta.pigsty.test.", RecordType::A), 1232, false)
            .to_vec()
            .unwrap();
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for i in 0..20_000 {
            let mut p = if i % 2 == 0 {
                base.clone()
            } else {
                (0..(next() % 80) as usize).map(|_| next() as u8).collect()
            };
            for _ in 0..(next() % 4) {
                if !p.is_empty() {
                    let at = (next() as usize) % p.len();
                    p[at] = next() as u8;
                }
            }
            if i % 3 == 0 {
                p.truncate((next() as usize) % (p.len() + 1));
            }
            if let Some(a) = answer(&z, &p, Transport::Udp, &Limits::default()) {
                let m = Message::from_vec(&a.bytes).unwrap_or_else(|e| panic!("{p:?}: {e}"));
                assert_eq!(m.metadata.message_type, MessageType::Response);
                if !m.answers.is_empty() {
                    // Data only for a well-formed single question, which hickory must read the same.
                    // (Other records are only checked structurally here; hickory is stricter, e.g. it
                    // refuses empty rdata outside UPDATE, which RFC 3597 allows.)
                    let mut only_q = p.clone();
                    only_q[6..12].fill(0);
                    let q = Message::from_vec(&only_q)
                        .unwrap_or_else(|e| panic!("answered undecodable {p:?}: {e}"));
                    assert_eq!(q.queries.len(), 1);
                    assert_eq!(q.queries, m.queries);
                }
            }
        }
    }
}
