//! The answering rules in the reverse zone (`10.10.10.in-addr.arpa` of the fixture): the same rules as
//! the forward zone, with PTR where the forward zone has A. The view is built from a `host-names.yml`
//! text, so the PTR targets come from the real canonical-name rule.

use super::*;
use crate::zone::view::fixtures::reverse::{view as reverse_view, view_from};

const APEX: &str = "10.10.10.in-addr.arpa.";
const SERIAL: u32 = 9;

fn ptr_target(m: &Message) -> String {
    assert_eq!(m.answers.len(), 1, "{m}");
    let RData::PTR(p) = &m.answers[0].data else {
        panic!("not a PTR: {m}")
    };
    p.0.to_ascii()
}

fn assert_reverse_negative(m: &Message, rcode: ResponseCode) {
    assert_eq!(m.metadata.response_code, rcode, "{m}");
    assert!(m.metadata.authoritative, "{m}");
    assert!(m.answers.is_empty(), "{m}");
    assert_eq!(m.authorities.len(), 1, "{m}");
    let soa = &m.authorities[0];
    assert_eq!(soa.name.to_ascii().to_ascii_lowercase(), APEX);
    assert_eq!(soa.ttl, NEG.min(TTL));
    let RData::SOA(s) = &soa.data else {
        panic!("not an SOA: {soa}")
    };
    assert_eq!((s.serial, s.minimum), (SERIAL, NEG));
    assert_eq!(s.mname.to_ascii(), "localhost.");
}

#[test]
fn ptr_is_the_canonical_name_authoritatively() {
    let z = reverse_view();
    let (m, a) = ask(&z, &query("10.10.10.10.in-addr.arpa.", RecordType::PTR));
    assert_eq!(a.rcode, ResponseCode::NoError);
    assert!(m.metadata.authoritative && m.metadata.recursion_desired);
    assert!(m.authorities.is_empty() && m.additionals.is_empty());
    assert_eq!(
        ptr_target(&m),
        "meta.pigsty.test.",
        "the node name, not the alias"
    );
    assert_eq!(m.answers[0].ttl, TTL);
    assert_eq!(m.answers[0].dns_class, DNSClass::IN);
    assert_eq!(
        m.answers[0].name.to_ascii(),
        "10.10.10.10.in-addr.arpa.",
        "owner points at the question"
    );
    // No node name at .11: the first served name of its vm_hosts entry (`x.other` is not served).
    let (m, _) = ask(&z, &query("11.10.10.10.in-addr.arpa.", RecordType::PTR));
    assert_eq!(ptr_target(&m), "b.pigsty.test.");
}

#[test]
fn the_forward_zone_still_answers_beside_it() {
    let z = reverse_view();
    let (m, _) = ask(&z, &query("b.pigsty.test.", RecordType::A));
    assert_eq!(
        m.answers[0].data,
        RData::A(Ipv4Addr::new(10, 10, 10, 11).into())
    );
    let (m, _) = ask(&z, &query("nope.pigsty.test.", RecordType::A));
    assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
    assert_eq!(m.authorities[0].name.to_ascii(), "pigsty.test.");
}

#[test]
fn a_0x20_question_is_echoed_and_matched() {
    let z = reverse_view();
    let name = "10.10.10.10.In-AdDr.ArPa.";
    let q = query(name, RecordType::PTR);
    let bytes = q.to_vec().unwrap();
    let (m, a) = ask(&z, &q);
    let qlen = qname_wire(name).len() + 4;
    assert_eq!(&a.bytes[12..12 + qlen], &bytes[12..12 + qlen]);
    assert_eq!(ptr_target(&m), "meta.pigsty.test.");
    // The negative SOA's owner points into the question: it keeps the client's spelling.
    let (m, _) = ask(&z, &query("99.10.10.10.IN-ADDR.arpa.", RecordType::PTR));
    assert_eq!(m.authorities[0].name.to_ascii(), "10.10.10.IN-ADDR.arpa.");
}

#[test]
fn addresses_without_names_and_names_below_an_address_are_nxdomain() {
    let z = reverse_view();
    for name in [
        // .12 has only names outside the zone: no PTR.
        "12.10.10.10.in-addr.arpa.",
        "13.10.10.10.in-addr.arpa.",
        "0.10.10.10.in-addr.arpa.",
        "1.10.10.10.in-addr.arpa.",
        "255.10.10.10.in-addr.arpa.",
        // Not an octet as the zone spells it.
        "010.10.10.10.in-addr.arpa.",
        "256.10.10.10.in-addr.arpa.",
        "meta.10.10.10.in-addr.arpa.",
        // Below an address label, with or without a PTR there.
        "x.10.10.10.10.in-addr.arpa.",
        "1.12.10.10.10.in-addr.arpa.",
    ] {
        for t in [RecordType::PTR, RecordType::A, RecordType::ANY] {
            let (m, a) = ask(&z, &query(name, t));
            assert_eq!(a.rcode, ResponseCode::NXDomain, "{name} {t}");
            assert_reverse_negative(&m, ResponseCode::NXDomain);
        }
    }
}

#[test]
fn other_types_at_an_address_and_at_the_apex_are_nodata() {
    let z = reverse_view();
    for t in [
        RecordType::A,
        RecordType::AAAA,
        RecordType::TXT,
        RecordType::SOA,
        RecordType::NS,
        RecordType::CNAME,
        RecordType::Unknown(666),
    ] {
        let (m, _) = ask(&z, &query("10.10.10.10.in-addr.arpa.", t));
        assert_reverse_negative(&m, ResponseCode::NoError);
    }
    for t in [RecordType::PTR, RecordType::A, RecordType::AAAA] {
        let (m, _) = ask(&z, &query(APEX, t));
        assert_reverse_negative(&m, ResponseCode::NoError);
    }
}

#[test]
fn apex_soa_and_ns_share_the_forward_serial_and_minimum() {
    let z = reverse_view();
    let soa_of = |name: &str| {
        let (m, _) = ask(&z, &query(name, RecordType::SOA));
        assert!(m.metadata.authoritative && m.authorities.is_empty(), "{m}");
        assert_eq!(m.answers.len(), 1);
        assert_eq!(m.answers[0].ttl, TTL);
        let RData::SOA(s) = &m.answers[0].data else {
            panic!("{m}")
        };
        s.clone()
    };
    let (reverse, forward) = (soa_of(APEX), soa_of("pigsty.test."));
    assert_eq!(reverse, forward, "one generation, one SOA");
    assert_eq!((reverse.serial, reverse.minimum), (SERIAL, NEG));

    let (m, _) = ask(&z, &query(APEX, RecordType::NS));
    assert_eq!(m.answers.len(), 1);
    assert_eq!(m.answers[0].name.to_ascii(), APEX);
    let RData::NS(ns) = &m.answers[0].data else {
        panic!("{m}")
    };
    assert_eq!(ns.0.to_ascii(), "localhost.");
}

#[test]
fn any_is_answered_minimally() {
    let z = reverse_view();
    let (m, _) = ask(&z, &query("10.10.10.10.in-addr.arpa.", RecordType::ANY));
    assert_eq!(ptr_target(&m), "meta.pigsty.test.");
    let (m, _) = ask(&z, &query(APEX, RecordType::ANY));
    assert_eq!(m.answers.len(), 1);
    assert_eq!(m.answers[0].record_type(), RecordType::SOA);
}

#[test]
fn other_reverse_zones_and_ip6_arpa_are_refused() {
    let z = reverse_view();
    for name in [
        "11.10.10.in-addr.arpa.",
        "10.11.10.10.in-addr.arpa.",
        "10.in-addr.arpa.",
        "10.10.in-addr.arpa.",
        "in-addr.arpa.",
        "arpa.",
        "1.0.0.127.in-addr.arpa.",
        "x10.10.10.in-addr.arpa.",
        "10.10.10.10.in-addr.arpa.example.",
        "ip6.arpa.",
        "a.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.e.f.ip6.arpa.",
    ] {
        for t in [RecordType::PTR, RecordType::SOA] {
            let (m, a) = ask(&z, &query(name, t));
            assert_refused(&m, &a);
        }
    }
    for t in [RecordType::AXFR, RecordType::IXFR] {
        let (m, a) = ask(&z, &query(APEX, t));
        assert_refused(&m, &a);
    }
    let mut m = Message::query();
    let mut q = Query::query(
        Name::from_str("10.10.10.10.in-addr.arpa.").unwrap(),
        RecordType::PTR,
    );
    q.set_query_class(DNSClass::CH);
    m.add_query(q);
    let (r, a) = ask(&z, &m);
    assert_refused(&r, &a);
}

#[test]
fn no_reverse_zone_for_the_empty_zone_or_a_generation_without_ptrs() {
    let empty = ZoneView::empty(Zone::parse("pigsty.test").unwrap()).unwrap();
    // An old generation: records, no `ptr`.
    let old = view();
    for z in [&empty, &old] {
        for name in ["10.10.10.10.in-addr.arpa.", APEX] {
            let (m, a) = ask(z, &query(name, RecordType::PTR));
            assert_refused(&m, &a);
        }
    }
}

#[test]
fn edns_is_handled_as_in_the_forward_zone() {
    let z = reverse_view();
    let q = with_edns(
        query("10.10.10.10.in-addr.arpa.", RecordType::PTR),
        4096,
        true,
    );
    let (m, _) = ask(&z, &q);
    assert_eq!(ptr_target(&m), "meta.pigsty.test.");
    let e = m.edns.as_ref().expect("OPT echoed");
    assert_eq!(e.max_payload(), 1232);
    assert!(e.flags().dnssec_ok, "DO copied");

    let (m, _) = ask(
        &z,
        &with_edns(
            query("99.10.10.10.in-addr.arpa.", RecordType::PTR),
            512,
            false,
        ),
    );
    assert_reverse_negative(&m, ResponseCode::NXDomain);
    assert!(m.edns.is_some(), "OPT on NXDOMAIN");

    let mut q = with_edns(query(APEX, RecordType::SOA), 1232, false);
    q.edns.as_mut().unwrap().set_version(1);
    let (m, a) = ask(&z, &q);
    assert_eq!(a.rcode, ResponseCode::BADVERS);
    assert!(m.answers.is_empty());
}

#[test]
fn truncation_and_tcp_as_in_the_forward_zone() {
    let z = reverse_view();
    let bytes = with_edns(
        query("10.10.10.10.in-addr.arpa.", RecordType::PTR),
        1232,
        false,
    )
    .to_vec()
    .unwrap();
    let full = answer(&z, &bytes, Transport::Udp, &Limits::default()).unwrap();
    let cap = Limits {
        udp_cap: Some(full.bytes.len() - 1),
        ..Limits::default()
    };
    let (m, a) = ask_with(&z, &bytes, Transport::Udp, &cap);
    assert!(a.truncated && m.metadata.truncation && m.metadata.authoritative);
    assert!(m.answers.is_empty() && m.authorities.is_empty());
    assert_eq!(
        a.bytes.len(),
        12 + qname_wire("10.10.10.10.in-addr.arpa").len() + 4 + 11,
        "header, question and OPT only"
    );
    let (m, a) = ask_with(&z, &bytes, Transport::Tcp, &cap);
    assert!(!a.truncated);
    assert_eq!(a.bytes, full.bytes);
    assert_eq!(ptr_target(&m), "meta.pigsty.test.");
}

#[test]
fn a_vm_hosts_address_takes_the_first_served_name_in_input_order() {
    let z = view_from(
        "all:
  children:
    meta: { hosts: { 10.10.10.10: { nodename: meta } } }
  vars:
    vm_hosts:
      - { address: 10.10.10.20, names: [zz.pigsty.test, aa] }
      - { address: 10.10.10.10, names: [a-first-vm-name] }
",
        3,
    );
    let (m, _) = ask(&z, &query("20.10.10.10.in-addr.arpa.", RecordType::PTR));
    assert_eq!(ptr_target(&m), "zz.pigsty.test.", "input order, not sorted");
    let (m, _) = ask(&z, &query("10.10.10.10.in-addr.arpa.", RecordType::PTR));
    assert_eq!(ptr_target(&m), "meta.pigsty.test.", "the node name wins");
}
