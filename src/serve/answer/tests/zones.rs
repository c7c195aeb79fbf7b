//! The rules over a view of two forward zones (`pigsty.test` first, `pigsty`): each apex answers its
//! own SOA and NS, each negative answer carries the SOA of the zone the question is in, names in
//! neither are REFUSED; and a one-zone generation served in a two-zone view (the upgrade) answers the
//! zone it does not know as an apex with nothing below.

use hickory_proto::op::ResponseCode;
use hickory_proto::rr::{RData, RecordType};

use super::{ask, query};
use crate::dns::name::Zones;
use crate::zone::view::ZoneView;
use crate::zone::view::fixtures::{self, NEG, TTL, generation};

fn two_zones() -> Zones {
    Zones::parse(&["pigsty.test", "pigsty"]).unwrap()
}

fn view() -> ZoneView {
    ZoneView::from_generation(&fixtures::two_zones(9)).unwrap()
}

/// (owner, rname, serial) of the one SOA in the answer or authority section.
fn soa(m: &hickory_proto::op::Message) -> (String, String, u32) {
    let r = m
        .answers
        .iter()
        .chain(&m.authorities)
        .find(|r| matches!(r.data, RData::SOA(_)));
    let r = r.unwrap_or_else(|| panic!("no SOA: {m}"));
    let RData::SOA(s) = &r.data else {
        unreachable!()
    };
    (r.name.to_ascii(), s.rname.to_ascii(), s.serial)
}

#[test]
fn each_apex_answers_its_own_soa_and_ns() {
    let z = view();
    for (apex, rname) in [
        ("pigsty.test.", "hostmaster.pigsty.test."),
        ("Pigsty.", "hostmaster.pigsty."),
    ] {
        let (m, _) = ask(&z, &query(apex, RecordType::SOA));
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert!(m.metadata.authoritative);
        assert_eq!(m.answers.len(), 1, "{m}");
        assert_eq!(soa(&m), (apex.into(), rname.into(), 9));
        let (m, _) = ask(&z, &query(apex, RecordType::NS));
        assert_eq!(m.answers.len(), 1, "{m}");
        assert_eq!(m.answers[0].name.to_ascii(), apex);
    }
}

#[test]
fn negative_answers_carry_the_soa_of_the_questions_zone() {
    let z = view();
    for (name, rcode, apex) in [
        ("nope.pigsty.", ResponseCode::NXDomain, "pigsty."),
        ("b.pigsty.", ResponseCode::NoError, "pigsty."),
        ("i.PIGSTY.", ResponseCode::NoError, "PIGSTY."),
        ("nope.pigsty.test.", ResponseCode::NXDomain, "pigsty.test."),
    ] {
        // AAAA: NODATA at an existing name (i.pigsty), an empty non-terminal (b.pigsty) too.
        let (m, _) = ask(&z, &query(name, RecordType::AAAA));
        assert_eq!(m.metadata.response_code, rcode, "{name}");
        assert!(m.answers.is_empty(), "{name}: {m}");
        let want_rname = format!("hostmaster.{}", apex.to_ascii_lowercase());
        assert_eq!(soa(&m), (apex.into(), want_rname, 9), "{name}");
    }
    let (m, _) = ask(&z, &query("a.b.pigsty.", RecordType::A));
    assert_eq!(m.answers.len(), 1, "{m}");
    let (m, _) = ask(&z, &query("12.10.10.10.in-addr.arpa.", RecordType::PTR));
    assert_eq!(m.answers.len(), 1, "{m}");
}

#[test]
fn names_in_neither_zone_are_refused() {
    let z = view();
    for name in ["pigsty.cc.", "www.pigsty.cc.", "xpigsty.", "test.", "."] {
        let (m, _) = ask(&z, &query(name, RecordType::A));
        assert_eq!(m.metadata.response_code, ResponseCode::Refused, "{name}");
        assert!(!m.metadata.authoritative, "{name}");
    }
}

#[test]
fn a_one_zone_generation_in_a_two_zone_view_has_the_other_apex_only() {
    let g = generation(&[("meta.pigsty.test", [10, 10, 10, 10])], 4, TTL, NEG);
    let z = ZoneView::from_generation_in(&g, &two_zones()).unwrap();
    let (m, _) = ask(&z, &query("pigsty.", RecordType::SOA));
    assert_eq!(soa(&m), ("pigsty.".into(), "hostmaster.pigsty.".into(), 4));
    let (m, _) = ask(&z, &query("i.pigsty.", RecordType::A));
    assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
    assert_eq!(soa(&m).0, "pigsty.");
    let (m, _) = ask(&z, &query("meta.pigsty.test.", RecordType::A));
    assert_eq!(m.answers.len(), 1, "{m}");
    // With no generation at all, both apexes answer serial 0.
    let empty = ZoneView::empty(two_zones()).unwrap();
    for apex in ["pigsty.test.", "pigsty."] {
        let (m, _) = ask(&empty, &query(apex, RecordType::SOA));
        assert_eq!(soa(&m).2, 0, "{apex}");
    }
}
