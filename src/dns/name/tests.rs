use super::*;

#[test]
fn folds_case_and_accepts_ldh() {
    assert_eq!(
        fold_host_name("PG-Meta.Pigsty.TEST").unwrap(),
        "pg-meta.pigsty.test"
    );
    assert_eq!(fold_host_name("a1-b2").unwrap(), "a1-b2");
}

#[test]
fn refuses_each_bad_shape_naming_the_value() {
    for (bad, needle) in [
        ("", "empty"),
        ("meta.", "trailing dot"),
        ("*.pigsty.test", "wildcard"),
        ("_sip.pigsty.test", "\"_\""),
        ("bücher", "non-ASCII"),
        ("a..b", "empty label"),
        (".a", "empty label"),
        ("-a", "starts or ends"),
        ("a-", "starts or ends"),
        ("a b", "contains ' '"),
    ] {
        let e = fold_host_name(bad).unwrap_err();
        assert!(e.to_string().contains(needle), "{bad:?}: {e}");
        assert!(e.to_string().starts_with(&format!("{bad:?}")), "{e}");
    }
    let long_label = "a".repeat(64);
    assert!(
        fold_host_name(&long_label)
            .unwrap_err()
            .reason
            .contains("at most 63")
    );
    assert!(fold_host_name(&"a".repeat(63)).is_ok());
    let long_name = vec!["a".repeat(50); 6].join(".");
    assert!(long_name.len() > 253);
    assert!(
        fold_host_name(&long_name)
            .unwrap_err()
            .reason
            .contains("at most 253")
    );
    let ok_name = [
        &"a".repeat(63)[..],
        &"b".repeat(63),
        &"c".repeat(63),
        &"d".repeat(61),
    ]
    .join(".");
    assert_eq!(ok_name.len(), 253);
    assert!(fold_host_name(&ok_name).is_ok());
}

#[test]
fn node_names_are_single_lowercase_labels() {
    assert!(check_node_name("pg-meta-1").is_ok());
    assert!(
        check_node_name("Meta")
            .unwrap_err()
            .reason
            .contains("upper case")
    );
    assert!(
        check_node_name("pigsty.cc")
            .unwrap_err()
            .reason
            .contains("single label")
    );
    assert!(check_node_name("-x").is_err());
}

#[test]
fn places_names_into_the_zone() {
    let z = Zones::one(Zone::parse("pigsty.test").unwrap());
    assert_eq!(
        z.place("meta"),
        Placement::Served("meta.pigsty.test".into())
    );
    assert_eq!(
        z.place("a.pigsty.test"),
        Placement::Served("a.pigsty.test".into())
    );
    assert_eq!(
        z.place("pigsty.test"),
        Placement::Served("pigsty.test".into())
    );
    assert_eq!(z.place("i.pigsty"), Placement::OutsideZone);
    assert_eq!(z.place("xpigsty.test"), Placement::OutsideZone);
    assert_eq!(Zone::parse("Pigsty.Test.").unwrap().as_str(), "pigsty.test");
}

#[test]
fn fold_and_place_and_is_canonical_served_agree_with_fold_then_place() {
    let z = Zones::one(Zone::parse("pigsty.test").unwrap());
    for raw in [
        "Meta",
        "a.Pigsty.Test",
        "pigsty.test",
        "i.pigsty",
        "xpigsty.test",
        "A.B",
    ] {
        let folded = fold_host_name(raw).unwrap();
        let (key, served) = z.fold_and_place(raw);
        assert_eq!(
            z.fold_and_place_owned(raw.to_string()),
            (key.clone(), served)
        );
        match z.place(&folded) {
            Placement::Served(fqdn) => assert_eq!((key.as_str(), served), (&*fqdn, true)),
            Placement::OutsideZone => assert_eq!((key, served), (folded.clone(), false)),
        }
        let canonical = matches!(z.place(&folded), Placement::Served(n) if n == raw);
        assert_eq!(z.is_canonical_served(raw), canonical, "{raw}");
    }
    assert!(z.is_canonical_served("a.pigsty.test"));
    assert!(!z.is_canonical_served("meta"));
    assert!(!z.is_canonical_served("a_b.pigsty.test"));
}

/// The one-pass check accepts exactly what the rule-by-rule check accepts.
#[test]
fn the_fast_name_check_agrees_with_the_rules() {
    let long = [
        "a".repeat(63),
        "b".repeat(63),
        "c".repeat(63),
        "d".repeat(61),
    ]
    .join(".");
    let mut cases: Vec<String> = [
        "", "a", "A-b.C", "a.", ".a", "a..b", "-a", "a-", "a-.b", "a.-b", "a_b", "*.a", "a b",
        "bücher", "1", "0-0", "a.b-c.d", "x/y", "é",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    cases.push(long.clone());
    cases.push(format!("{long}a"));
    cases.push("a".repeat(64));
    cases.push("a".repeat(63));
    let z = Zones::one(Zone::parse("pigsty.test").unwrap());
    for c in [
        "a.pigsty.test",
        "A.pigsty.test",
        "a.Pigsty.test",
        "-.pigsty.test",
        "a-.pigsty.test",
    ] {
        cases.push(c.to_string());
    }
    cases.push(format!("{}.pigsty.test", "a".repeat(63)));
    cases.push(format!("{}.pigsty.test", "a".repeat(64)));
    for c in &cases {
        assert_eq!(
            is_ldh_name(c.as_bytes()),
            explain_host_name(c).is_ok(),
            "{c:?}"
        );
        // The one-pass served check is the rule-by-rule definition: valid, lowercase, in the zone.
        let defined = explain_host_name(c).is_ok()
            && !c.bytes().any(|b| b.is_ascii_uppercase())
            && in_zone(c, z.first().as_str());
        assert_eq!(z.is_canonical_served(c), defined, "{c:?}");
    }
    // Every single byte, alone and inside a label.
    for b in 0..=255u8 {
        for c in [
            vec![b],
            vec![b'a', b, b'a'],
            vec![b'a', b'.', b],
            vec![b, b'.', b'a'],
        ] {
            let s = String::from_utf8_lossy(&c);
            assert_eq!(
                is_ldh_name(s.as_bytes()),
                explain_host_name(&s).is_ok(),
                "{s:?}"
            );
            let lower = scan_ldh(s.as_bytes(), true);
            let defined =
                explain_host_name(&s).is_ok() && !s.bytes().any(|b| b.is_ascii_uppercase());
            assert_eq!(lower, defined, "{s:?}");
        }
    }
}
