//! A generation of several zones: the `zones` header, names of the other zones written in full, the
//! record digest that covers the set, and what a forged set gets.

use super::super::*;
use super::{body_of, resealed};

fn two_zones() -> Generation {
    crate::zone::view::fixtures::two_zones(7)
}

#[test]
fn two_zones_round_trip_with_the_others_names_in_full() {
    let g = two_zones();
    assert_eq!(g.zone, "pigsty.test");
    assert_eq!(g.zones, ["pigsty.test", "pigsty"]);
    let bytes = g.encode();
    let text = std::str::from_utf8(&bytes).unwrap();
    assert!(
        text.contains("  \"zone\": \"pigsty.test\",\n  \"zones\": [\n    \"pigsty.test\",\n    \"pigsty\"\n  ],\n"),
        "{text}"
    );
    assert!(
        text.contains("\na a.b.pigsty. 10.10.10.12 0\na i.pigsty. 10.10.10.10 0\na meta 10.10.10.10 0\nptr 10.10.10.10 meta\nptr 10.10.10.12 a.b.pigsty.\n"),
        "{text}"
    );
    assert_eq!(Generation::decode(&bytes).unwrap(), g);
    assert_eq!(
        Generation::decode_to_serve(&bytes).unwrap().0.records.len(),
        3
    );
    let (base, _) = Generation::decode_diff_base(&bytes).unwrap();
    assert_eq!(base, DiffBase::from(&g));
    assert_eq!(g.served_zones().unwrap().to_string(), "pigsty.test, pigsty");
    // The set is in the record digest: the same records under one zone digest otherwise.
    let one = record_digest(&g.zone, g.ttl, &g.soa, &g.ns, &g.records, &g.ptr);
    assert_ne!(one, g.record_digest);
}

#[test]
fn a_one_zone_generation_has_no_zones_key_and_its_old_digest() {
    let g = super::sample();
    assert!(g.zones.is_empty());
    let text = String::from_utf8(g.encode()).unwrap();
    assert!(!text.contains("\"zones\""), "{text}");
    assert_eq!(
        g.record_digest,
        record_digest(&g.zone, g.ttl, &g.soa, &g.ns, &g.records, &g.ptr)
    );
    assert_eq!(g.served_zones().unwrap().to_string(), "pigsty.test");
}

#[test]
fn a_forged_zone_set_or_name_form_is_refused() {
    let g = two_zones();
    let body = body_of(&g);
    let refused = |bytes: &[u8], why: &str| {
        let e = Generation::decode(bytes).unwrap_err();
        assert!(e.contains(why), "{e} (wanted {why:?})");
    };
    // A name of the first zone written in full is not what the writer writes.
    refused(
        &resealed(&body.replace("a meta 10.10.10.10", "a meta.pigsty.test. 10.10.10.10")),
        "not a canonical name",
    );
    // A full name in no zone of the set.
    refused(
        &resealed(&body.replace("a i.pigsty. 10", "a i.pigsty.cc. 10")),
        "not a canonical name",
    );
    // Sets the writer never writes, digests recomputed: nested, first zone not `zone`, one zone listed.
    let reseal = |edit: &dyn Fn(&mut Generation)| {
        let mut f = two_zones();
        edit(&mut f);
        f.record_digest = f.computed_record_digest();
        Generation::decode(&f.encode())
    };
    let nested = reseal(&|f| f.zones.push("b.pigsty".into())).unwrap_err();
    assert!(nested.contains("overlaps"), "{nested}");
    let order = reseal(&|f| f.zones.reverse()).unwrap_err();
    assert!(order.contains("not written as load writes it"), "{order}");
    let single = reseal(&|f| {
        f.zones.truncate(1);
        f.records.retain(|r| r.name.ends_with(".pigsty.test"));
        f.ptr.truncate(1);
    })
    .unwrap_err();
    assert!(single.contains("not written as load writes it"), "{single}");
    let mdns = reseal(&|f| f.zones.push("local".into())).unwrap_err();
    assert!(mdns.contains("mDNS"), "{mdns}");
    // Without the set, a name of the second zone is no longer canonical.
    let dropped = reseal(&|f| f.zones.clear()).unwrap_err();
    assert!(dropped.contains("not a canonical name"), "{dropped}");
}
