use super::fixtures::{NEG, TTL, generation, view};
use super::*;

/// Slots between each name's home slot and where it sits, over the whole table.
fn probe_lengths(ix: &Index) -> (usize, usize) {
    let mask = ix.slots.len() - 1;
    let (mut total, mut most) = (0, 0);
    for (i, &n) in ix.slots.iter().enumerate() {
        if n != 0 {
            let at = home(hash(ix.name(&ix.entries[n as usize - 1])), ix.slots.len());
            let d = i.wrapping_sub(at) & mask;
            total += d;
            most = most.max(d);
        }
    }
    (total, most)
}

/// The bench's names (`host-N` below the apex) spread over the table: a lookup is about one probe.
#[test]
fn names_that_differ_only_in_their_first_word_do_not_crowd_the_table() {
    let names: Vec<String> = (0..100_000)
        .map(|i| format!("host-{i}.pigsty.test"))
        .collect();
    let mut ix = Index::with_capacity(names.len(), 0);
    for n in &names {
        assert!(ix.insert(n, Node::Empty, false));
    }
    let (total, most) = probe_lengths(&ix);
    assert!(
        total < names.len() && most < 40,
        "mean probe {} slots, longest {most}",
        total as f64 / names.len() as f64
    );
    assert!(
        names
            .iter()
            .all(|n| ix.get(n.as_bytes()) == Some(Node::Empty))
    );
    assert_eq!(ix.get(b"host-100000.pigsty.test"), None);
}

#[test]
fn records_out_of_order_repeated_or_at_the_apex_are_indexed_once_the_last_one_winning() {
    // Never in a checked generation; the placing without compares must not be used for them.
    let v = super::fixtures::view_with(
        &[
            ("b.pigsty.test", [10, 10, 10, 1]),
            ("a.pigsty.test", [10, 10, 10, 2]),
            ("b.pigsty.test", [10, 10, 10, 3]),
            ("pigsty.test", [10, 10, 10, 4]),
            ("c.pigsty.test", [10, 10, 10, 5]),
        ],
        7,
    );
    assert_eq!(v.record_count(), 4);
    for (name, last) in [("b", 3), ("a", 2), ("c", 5)] {
        let want = Some(Node::Address([10, 10, 10, last].into()));
        assert_eq!(v.lookup(&format!("{name}.pigsty.test")), want, "{name}");
    }
    assert_eq!(
        v.lookup("pigsty.test"),
        Some(Node::Address([10, 10, 10, 4].into()))
    );
}

#[test]
fn the_index_has_empty_non_terminals_and_the_apex() {
    let v = view();
    assert_eq!(
        v.lookup("meta.pigsty.test"),
        Some(Node::Address([10, 10, 10, 10].into()))
    );
    assert_eq!(v.lookup("b.pigsty.test"), Some(Node::Empty));
    assert_eq!(v.lookup("pigsty.test"), Some(Node::Empty));
    assert_eq!(v.lookup("c.pigsty.test"), None);
    assert_eq!(v.lookup("test"), None);
    assert_eq!(v.record_count(), 2);
    assert_eq!(v.negative_ttl(), 5);
}

/// The arena index against a plain map of the same names: every name, every parent, and names
/// that differ only in their last bytes, past the point where the table grows.
#[test]
fn the_index_finds_exactly_what_a_map_would() {
    use std::collections::BTreeMap;
    let mut names: Vec<(String, [u8; 4])> = (0..5000u32)
        .map(|i| {
            let name = match i % 3 {
                0 => format!("n{i}.pigsty.test"),
                1 => format!("x.y{}.d{}.pigsty.test", i % 7, i),
                _ => format!("{}.pigsty.test", "a".repeat(1 + (i as usize % 60))),
            };
            (name, [10, 10, 10, 9 + (i % 246) as u8])
        })
        .collect();
    names.sort();
    names.dedup_by(|a, b| a.0 == b.0);
    let refs: Vec<(&str, [u8; 4])> = names.iter().map(|(n, a)| (n.as_str(), *a)).collect();
    let v = super::fixtures::view_with(&refs, 3);
    let mut want: BTreeMap<String, Node> = BTreeMap::new();
    want.insert("pigsty.test".into(), Node::Empty);
    for (n, _) in &names {
        let mut rest = n.as_str();
        while let Some((_, parent)) = rest.split_once('.') {
            if parent.len() < "pigsty.test".len() {
                break;
            }
            want.entry(parent.to_string()).or_insert(Node::Empty);
            rest = parent;
        }
    }
    for (n, a) in &names {
        want.insert(n.clone(), Node::Address((*a).into()));
    }
    for (n, node) in &want {
        assert_eq!(v.lookup(n), Some(*node), "{n}");
        assert_eq!(
            v.lookup(&format!("{n}x")),
            want.get(&format!("{n}x")).copied()
        );
        assert_eq!(
            v.lookup(&format!("z.{n}")),
            want.get(&format!("z.{n}")).copied()
        );
    }
    assert_eq!(v.lookup("test"), None);
    assert_eq!(v.lookup(""), None);
    assert_eq!(v.record_count(), names.len());
    // The apex can hold an A too.
    let v = super::fixtures::view_with(&[("pigsty.test", [10, 10, 10, 9])], 1);
    assert_eq!(
        v.lookup("pigsty.test"),
        Some(Node::Address([10, 10, 10, 9].into()))
    );
    assert_eq!(v.record_count(), 1);
}

/// An SOA or NS name that cannot be encoded used to give SERVFAIL at query time (while the A path,
/// which does not need the SOA, still answered); now the view refuses such a generation when it is
/// built, so the last good one keeps being served.
#[test]
fn broken_zone_names_are_refused_when_the_view_is_built() {
    let records = [("meta.pigsty.test", [10, 10, 10, 10])];
    let mut g = generation(&records, 7, TTL, NEG);
    g.soa.mname = "a..b".into();
    let e = ZoneView::from_generation(&g).unwrap_err();
    assert_eq!(
        e,
        ZoneViewError::Name {
            field: "SOA MNAME",
            name: "a..b".into()
        }
    );
    assert!(e.to_string().contains("cannot be encoded"), "{e}");

    let mut g = generation(&records, 7, TTL, NEG);
    g.ns = vec!["x".repeat(64)];
    assert!(matches!(
        ZoneView::from_generation(&g),
        Err(ZoneViewError::Name {
            field: "NS name",
            ..
        })
    ));

    let long = format!("{}.test", vec!["a".repeat(60); 4].join("."));
    let zone = Zone::parse(&long).unwrap();
    let e = ZoneView::empty(zone).unwrap_err();
    assert!(
        matches!(
            e,
            ZoneViewError::Name {
                field: "SOA RNAME",
                ..
            }
        ),
        "{e}"
    );
}
