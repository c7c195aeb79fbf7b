use super::*;
use crate::dns::name::Zone;
use crate::input::inventory;
use crate::zone::generation::{Soa, record_digest};

fn build(yaml: &str) -> RecordSet {
    let inv = inventory::parse(yaml).unwrap();
    RecordSet::build(&inv, &Zone::parse("pigsty.test").unwrap()).unwrap()
}

fn ptrs(set: &RecordSet) -> Vec<(String, String)> {
    set.ptr
        .iter()
        .map(|p| (p.address.to_string(), p.name.clone()))
        .collect()
}

fn digest(set: &RecordSet) -> String {
    let soa = Soa::for_zone(set.zones.first(), 5);
    let ns = ["localhost.".to_string()];
    record_digest(
        set.zones.first().as_str(),
        30,
        &soa,
        &ns,
        &set.records,
        &set.ptr,
    )
}

#[test]
fn the_canonical_name_is_the_node_name_else_the_first_served_vm_hosts_name() {
    let set = build(
        "all:
  children:
    pg-meta:
      hosts:
        10.10.10.10: { pg_cluster: pg-meta, pg_seq: 1, vm_alias: [a-alias, meta] }
        10.10.10.11: { vm_alias: [aaa] }
      vars: {}
  vars:
    vm_hosts:
      - { address: 10.10.10.10, names: [aaa-vm] }
      - { address: 10.10.10.30, names: [I.Pigsty, Zed.Pigsty.Test, abc] }
      - { address: 10.10.10.31, names: [outside.example] }
",
    );
    assert_eq!(
        ptrs(&set),
        [
            (
                "10.10.10.10".to_string(),
                "pg-meta-1.pigsty.test".to_string()
            ),
            ("10.10.10.11".into(), "node-11.pigsty.test".into()),
            // Lowercased; `i.pigsty` is outside the zone, so never a target.
            ("10.10.10.30".into(), "zed.pigsty.test".into()),
        ]
    );
    check_ptr(&set.records, &set.ptr).unwrap();
}

#[test]
fn check_ptr_refuses_what_a_crafted_generation_could_hold() {
    let set = build(
        "all:
  hosts: { 10.10.10.10: { nodename: meta }, 10.10.10.11: { nodename: two } }
",
    );
    let (r, p) = (&set.records, &set.ptr);
    assert!(check_ptr(r, p).is_ok());
    assert!(check_ptr(r, &[]).is_ok(), "a generation from before PTRs");
    let edit = |f: &dyn Fn(&mut Vec<Ptr>)| {
        let mut p = p.clone();
        f(&mut p);
        check_ptr(r, &p).unwrap_err()
    };
    assert!(edit(&|p| p.swap(0, 1)).contains("out of order"));
    assert!(edit(&|p| p.push(p[1].clone())).contains("out of order or twice"));
    assert!(edit(&|p| p[0].name = "two.pigsty.test".into()).contains("whose A is 10.10.10.11"));
    assert!(edit(&|p| p[0].name = "x.pigsty.test".into()).contains("does not serve"));
    assert!(
        edit(&|p| {
            p.pop();
        })
        .contains("names at 10.10.10.11 but no PTR")
    );
    assert!(
        edit(&|p| p.push(Ptr {
            address: [10, 10, 10, 12].into(),
            name: "meta.pigsty.test".into()
        }))
        .contains("whose A is 10.10.10.10")
    );
    // A record outside the first PTR's /24 is looked up in the list itself.
    let mut moved = r.clone();
    moved[1].address = [10, 10, 11, 11].into();
    assert!(
        check_ptr(&moved, &p[..1])
            .unwrap_err()
            .contains("names at 10.10.11.11 but no PTR")
    );
    let mut other = p.clone();
    other[1].address = [10, 10, 11, 11].into();
    assert!(check_ptr(&moved, &other).is_ok());
}

#[test]
fn the_record_digest_covers_the_ptr_choice() {
    let a = build(
        "all:
  hosts: { 10.10.10.10: { nodename: meta } }
  vars:
    vm_hosts: [ { address: 10.10.10.20, names: [one, two] } ]
",
    );
    // The same records from a differently written input: same digest.
    let same = build(
        "all:
  vars:
    vm_hosts: [ { address: 10.10.10.20, names: [One, two.pigsty.test] } ]
  hosts: { 10.10.10.10: { nodename: meta } }
",
    );
    let served = |s: &RecordSet| -> Vec<(String, Ipv4Addr)> {
        s.records
            .iter()
            .map(|r| (r.name.clone(), r.address))
            .collect()
    };
    assert_eq!(served(&a), served(&same), "sources differ, records do not");
    assert_eq!(a.ptr, same.ptr);
    assert_eq!(digest(&a), digest(&same));
    // The same A records, another canonical name at .20: another digest.
    let swapped = build(
        "all:
  hosts: { 10.10.10.10: { nodename: meta } }
  vars:
    vm_hosts: [ { address: 10.10.10.20, names: [two, one] } ]
",
    );
    assert_eq!(served(&a), served(&swapped));
    assert_ne!(a.ptr, swapped.ptr);
    assert_ne!(digest(&a), digest(&swapped));
    // Without PTRs the digest is the one from before reverse zones: a different text.
    let mut old = a.clone();
    old.ptr.clear();
    assert_ne!(digest(&a), digest(&old));
}

#[test]
fn a_stored_generation_with_a_forged_ptr_is_refused() {
    use crate::zone::generation::{Generation, Input};
    let set = build("all:\n  hosts: { 10.10.10.10: { nodename: meta }, 10.10.10.11: {} }\n");
    let input = Input {
        path: "/x".into(),
        sha256: "0".repeat(64),
    };
    let g = Generation::seal(&set, 30, 5, 7, "2026-12-01T00:00:00Z".into(), input);
    assert_eq!(g.ptr.len(), 2);
    assert_eq!(Generation::decode(&g.encode()).unwrap(), g);
    // Digests re-made to match: only the PTR check can refuse it.
    let mut forged = g.clone();
    forged.ptr[1].name = "meta.pigsty.test".into();
    forged.record_digest = record_digest(
        &forged.zone,
        forged.ttl,
        &forged.soa,
        &forged.ns,
        &forged.records,
        &forged.ptr,
    );
    let e = Generation::decode(&forged.encode()).unwrap_err();
    assert!(e.contains("PTR 10.10.10.11 -> meta.pigsty.test"), "{e}");
}

/// Barn-style inventories with every way to name a host (nodename, pg_cluster/pg_seq, the octet
/// default, aliases in and outside the zone, vm_hosts entries beside or apart from hosts, vm_skip):
/// every PTR is forward-confirmed and every address with names has exactly one.
#[test]
fn every_ptr_of_a_generated_corpus_is_forward_confirmed() {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut rand = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut built = 0;
    for case in 0..400 {
        let mut y = String::from("all:\n  children:\n    g:\n      hosts:\n");
        let hosts = 1 + rand(12);
        let mut used = std::collections::BTreeSet::new();
        for h in 0..hosts {
            let octet = 9 + rand(40);
            if !used.insert(octet) {
                continue;
            }
            let mut vars = Vec::new();
            match rand(3) {
                0 => vars.push(format!("nodename: n{case}-{h}")),
                1 => vars.push(format!("pg_cluster: pg-{case}, pg_seq: {h}")),
                _ => {}
            }
            if rand(3) == 0 {
                vars.push(format!(
                    "vm_alias: [al-{h}, x{h}.outside, Up-{h}.Pigsty.Test]"
                ));
            }
            if h > 0 && rand(6) == 0 {
                vars.push("vm_skip: true".into());
            }
            y.push_str(&format!(
                "        10.10.10.{octet}: {{ {} }}\n",
                vars.join(", ")
            ));
        }
        y.push_str("  vars:\n    vm_hosts:\n");
        let mut vm_used = std::collections::BTreeSet::new();
        for v in 0..rand(8) {
            let octet = 9 + rand(60);
            if !vm_used.insert(octet) {
                continue;
            }
            let names: Vec<String> = (0..1 + rand(4))
                .map(|i| match rand(3) {
                    0 => format!("v{v}-{i}.far.away"),
                    1 => format!("V{v}-{i}"),
                    _ => format!("v{v}-{i}.svc.pigsty.test"),
                })
                .collect();
            y.push_str(&format!(
                "      - {{ address: 10.10.10.{octet}, names: [{}] }}\n",
                names.join(", ")
            ));
        }
        let Ok(inv) = inventory::parse(&y) else {
            continue;
        };
        let Ok(set) = RecordSet::build(&inv, &Zone::parse("pigsty.test").unwrap()) else {
            continue;
        };
        built += 1;
        check_ptr(&set.records, &set.ptr).unwrap_or_else(|e| panic!("{e}\n{y}"));
        assert_eq!(set.ptr.is_empty(), set.records.is_empty(), "{y}");
    }
    assert!(
        built > 300,
        "only {built} of 400 generated inventories built"
    );
}

/// The merge order reads only a 16-byte prefix of most keys: names that share it, or end inside
/// it, still sort, merge and repeat by the whole key, with the sources of each mention. (Over 80
/// lines: the expected records are one table, each row of it five lines once formatted.)
#[test]
fn keys_past_their_prefix_sort_merge_and_repeat_by_the_whole_key() {
    let set = build(
            "all:
  hosts: { 10.10.10.10: { nodename: abcdefghijklmnop, vm_alias: [abcdefghijklmnopq, abcdefgh] } }
  vars:
    vm_hosts:
      - { address: 10.10.10.10, names: [Abcdefghijklmnop.pigsty.test, abcdefghijklmno, a.b, x.pigsty.test] }
      - { address: 10.10.10.11, names: [abcdefghijklmnoq, abcdefghijklmnop.x, A.B.Pigsty.Test] }
",
        );
    let got: Vec<(&str, String, Vec<&str>)> = set
        .records
        .iter()
        .map(|r| {
            let s = r.sources.iter().map(String::as_str).collect();
            (r.name.as_str(), r.address.to_string(), s)
        })
        .collect();
    let h = "all.hosts[10.10.10.10]";
    let v = "all.vars.vm_hosts";
    assert_eq!(
        got,
        [
            (
                "a.b.pigsty.test",
                "10.10.10.11".into(),
                vec![&format!("{v}[1].names[2]") as &str]
            ),
            (
                "abcdefgh.pigsty.test",
                "10.10.10.10".into(),
                vec![&format!("{h}.vm_alias[1]")]
            ),
            (
                "abcdefghijklmno.pigsty.test",
                "10.10.10.10".into(),
                vec![&format!("{v}[0].names[1]")]
            ),
            (
                "abcdefghijklmnop.pigsty.test",
                "10.10.10.10".into(),
                vec![&format!("{h}.nodename"), &format!("{v}[0].names[0]")]
            ),
            (
                "abcdefghijklmnopq.pigsty.test",
                "10.10.10.10".into(),
                vec![&format!("{h}.vm_alias[0]")]
            ),
            (
                "abcdefghijklmnoq.pigsty.test",
                "10.10.10.11".into(),
                vec![&format!("{v}[1].names[0]")]
            ),
            (
                "x.pigsty.test",
                "10.10.10.10".into(),
                vec![&format!("{v}[0].names[3]")]
            ),
        ]
    );
    let outside: Vec<&str> = set.not_served.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(outside, ["a.b", "abcdefghijklmnop.x"]);
    let refused = |yaml: &str| {
        let inv = inventory::parse(yaml).unwrap();
        RecordSet::build(&inv, &Zone::parse("pigsty.test").unwrap()).unwrap_err()
    };
    let e = refused(
            "all:
  hosts: { 10.10.10.10: {} }
  vars: { vm_hosts: [ { address: 10.10.10.11, names: [abcdefghijklmnopqrs, abcdefghijklmnopqr, Abcdefghijklmnopqrs] } ] }
",
        );
    assert_eq!(e.at, "all.vars.vm_hosts[0].names[2]");
    assert_eq!(
        e.message,
        "\"Abcdefghijklmnopqrs\" repeats all.vars.vm_hosts[0].names[0]"
    );
    let e = refused(
        "all:
  hosts: { 10.10.10.10: {} }
  vars:
    vm_hosts:
      - { address: 10.10.10.11, names: [abcdefghijklmnopqrs.pigsty.test] }
      - { address: 10.10.10.12, names: [abcdefghijklmnopqr, abcdefghijklmnopqrs] }
",
    );
    assert_eq!(e.at, "all.vars.vm_hosts[1].names[1]");
    assert!(
        e.message
            .contains("maps to both 10.10.10.11 (all.vars.vm_hosts[0].names[0]) and 10.10.10.12"),
        "{}",
        e.message
    );
}

#[test]
fn reverse_zone_is_the_24_of_the_records_in_reverse_label_order() {
    let r = |a: [u8; 4]| Record {
        name: "meta.pigsty.test".into(),
        address: a.into(),
        sources: vec![],
    };
    assert_eq!(reverse_zone(&[]), None);
    assert_eq!(
        reverse_zone(&[r([10, 10, 10, 10])]).as_deref(),
        Some("10.10.10.in-addr.arpa")
    );
    assert_eq!(
        reverse_zone(&[r([192, 168, 7, 20])]).as_deref(),
        Some("7.168.192.in-addr.arpa")
    );
}
