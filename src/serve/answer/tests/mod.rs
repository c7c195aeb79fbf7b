//! The answering rules end to end: queries built with hickory-proto (or by hand, for malformed ones)
//! go through [`answer`], and every response is decoded with hickory-proto.
//! One file of tests for the one pure rule family in `decide.rs`: each test is a query and the response
//! the rules give, so they are read in the order of the rules; the message-level ones (malformed past
//! the header, EDNS, truncation, random packets) are in `tests/message.rs`, the reverse zone's in
//! `tests/reverse.rs`, several zones' in `tests/zones.rs`.

use std::net::Ipv4Addr;
use std::str::FromStr;

use hickory_proto::op::{Edns, Message, MessageType, OpCode, Query, ResponseCode};
use hickory_proto::rr::rdata::opt::EdnsOption;
use hickory_proto::rr::{DNSClass, Name, RData, RecordType};

use super::*;
use crate::dns::name::Zone;
use crate::zone::view::fixtures::{NEG, TTL, generation, view, view_with};

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

/// [`ask_with`] over UDP with the default limits: what most cases send.
fn ask_udp(zone: &ZoneView, bytes: &[u8]) -> (Message, Answered) {
    ask_with(zone, bytes, Transport::Udp, &Limits::default())
}

fn ask(zone: &ZoneView, m: &Message) -> (Message, Answered) {
    ask_udp(zone, &m.to_vec().unwrap())
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
    let with_ttls =
        |ttl, minimum| ZoneView::from_generation(&generation(&[], 7, ttl, minimum)).unwrap();
    let z = with_ttls(3, 60);
    let (m, _) = ask(&z, &query("nope.pigsty.test.", RecordType::A));
    assert_eq!(m.authorities[0].ttl, 3);
    let z = with_ttls(600, 60);
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
    let z = ZoneView::empty(Zone::parse("pigsty.test").unwrap()).unwrap();
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

/// What the rules do with a message malformed past its header, with EDNS, and with a size limit.
mod message;
mod reverse;

/// Several forward zones in one view.
mod zones;
