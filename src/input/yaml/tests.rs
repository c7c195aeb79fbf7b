use super::*;

#[test]
fn reads_scalars_lists_and_maps() {
    let y = parse("a: 1\nb: [x, 'y']\nc: {d: true}\ne: ~\nf: 1.5\ng: '1'\n").unwrap();
    assert_eq!(y.get("a"), Some(&Yaml::Int(1, Written::default())));
    assert_eq!(
        y.get("b"),
        Some(&Yaml::Seq(vec![
            Yaml::Str("x".into()),
            Yaml::Str("y".into())
        ]))
    );
    assert_eq!(
        y.get("c").and_then(|c| c.get("d")),
        Some(&Yaml::Bool(true, Written::default()))
    );
    assert_eq!(y.get("e"), Some(&Yaml::Null));
    assert_eq!(y.get("f"), Some(&Yaml::Float(1.5, Written::default())));
    assert_eq!(y.get("g"), Some(&Yaml::Str("1".into())));
}

/// Issue 24, defect 6: `1e0` was printed as `1` (and by `{:?}` as `1.0`) in errors.
#[test]
fn scalars_keep_their_text_where_printing_would_change_it() {
    let y = parse("[1e0, 1.0, 1.5, 0x1, +1, 007, -0, 1, -3, True, true, .inf, ~, 1_0]").unwrap();
    let Yaml::Seq(items) = &y else { panic!() };
    let shown: Vec<String> = items.iter().map(|i| i.to_string()).collect();
    let want = "1e0 1.0 1.5 0x1 +1 007 -0 1 -3 True true .inf null \"1_0\"";
    assert_eq!(shown.join(" "), want);
    let kept: Vec<bool> = items
            .iter()
            .map(|i| matches!(i, Yaml::Int(_, w) | Yaml::Float(_, w) | Yaml::Bool(_, w) if w.text().is_some()))
            .collect();
    let want = [
        true, true, false, true, true, true, true, false, false, true, false, true,
    ];
    assert_eq!(kept[..12], want);
    // One value however written: equal, and one key.
    assert_eq!(items[3], items[7]);
    assert!(
        parse("1: a\n0x1: b\n")
            .unwrap_err()
            .contains("key 0x1 twice")
    );
    let long = format!("1{}.0", "0".repeat(200));
    assert_eq!(
        parse(&long).unwrap().to_string(),
        format!("1{}…(203 bytes)", "0".repeat(79))
    );
}

#[test]
fn refuses_duplicate_keys() {
    let e = parse("a: 1\nb: 2\na: 3\n").unwrap_err();
    assert!(e.contains("mapping key \"a\" twice"), "{e}");
    assert!(parse("x:\n  y: 1\n  y: 1\n").is_err());
}

#[test]
fn merge_keys_explicit_wins_then_first_merged() {
    let y =
        parse("b: &b {k: from-b, m: b}\nc: &c {k: from-c, n: c}\nx:\n  <<: [*b, *c]\n  k: own\n")
            .unwrap();
    let x = y.get("x").unwrap();
    assert_eq!(x.get("k"), Some(&Yaml::Str("own".into())));
    assert_eq!(x.get("m"), Some(&Yaml::Str("b".into())));
    assert_eq!(x.get("n"), Some(&Yaml::Str("c".into())));
    let y = parse("b: &b {k: from-b}\nc: &c {k: from-c}\nx: {<<: [*b, *c]}\n").unwrap();
    assert_eq!(
        y.get("x").unwrap().get("k"),
        Some(&Yaml::Str("from-b".into()))
    );
    assert!(parse("x: {<<: 3}\n").unwrap_err().contains("merge key"));
}

#[test]
fn aliases_expand() {
    let y = parse("a: &v [1, 2]\nb: *v\n").unwrap();
    assert_eq!(y.get("b"), y.get("a"));
}

#[test]
fn refuses_alias_bombs_and_deep_nesting() {
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        bomb.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    let e = parse(&bomb).unwrap_err();
    assert!(e.contains("too many values"), "{e}");
    let deep = format!("{}1{}", "[".repeat(100), "]".repeat(100));
    let e = parse(&deep).unwrap_err();
    assert!(e.contains("deeper") || e.contains("recursion"), "{e}");
}

/// Found by the `check` fuzz target: an alias cost one node whatever its text, so a long string
/// copied 10,000 times fit the node budget (675 bytes held 7 MB; a 4 MiB file could ask for TBs).
#[test]
fn refuses_aliases_that_multiply_text() {
    let mut doc = format!("a0: &a0 {}\n", "x".repeat(300));
    for i in 1..5 {
        let p = i - 1;
        let list = vec![format!("*a{p}"); 10].join(", ");
        doc.push_str(&format!("a{i}: &a{i} [{list}]\n"));
    }
    let e = parse(&doc).unwrap_err();
    assert!(e.contains("copies too much"), "{e}");
    let one_string = format!(
        "s: &a \"{}\"\nt: [{}]\n",
        "x".repeat(20_000),
        vec!["*a"; 2_000].join(",")
    );
    assert!(parse(&one_string).unwrap_err().contains("copies too much"));
    // Copies within the file's size are fine.
    let few = format!("s: &a \"{}\"\nt: [*a, *a]\n", "x".repeat(20_000));
    assert_eq!(
        parse(&few).unwrap().get("t").map(|t| t.to_string()),
        Some("[...]".into())
    );
}

/// An anchor keeps a copy of its value: 60 nested anchors around one large list held 60 copies of
/// it (a 200 KB file took 230 MB) without a single alias.
#[test]
fn refuses_nested_anchors_that_multiply_a_value() {
    let depth = 60;
    let opens: String = (0..depth).map(|i| format!("&n{i} [")).collect();
    let doc = format!(
        "x: {opens}{}{}\n",
        vec!["a"; 20_000].join(","),
        "]".repeat(depth)
    );
    let e = parse(&doc).unwrap_err();
    assert!(e.contains("copies too much"), "{e}");
    // One anchor on a large value is fine.
    let one = format!("x: &n [{}]\ny: 1\n", vec!["a"; 20_000].join(","));
    assert!(parse(&one).is_ok());
}

/// saphyr-parser reads a flow collection in key position whole before any event: bounded by
/// MAX_LOOKAHEAD instead of by the file (a 4 MiB `- [a,a,...]` took 700 MB and 4 s).
#[test]
fn bounds_what_the_parser_reads_ahead() {
    let long = format!("x:\n  - [{}]\n", vec!["a"; 200_000].join(","));
    let e = parse(&long).unwrap_err();
    assert!(e.starts_with("line 2: ") && e.contains("read whole"), "{e}");
    let nested = format!("x: [[{}]]\n", vec!["a"; 200_000].join(","));
    assert!(parse(&nested).unwrap_err().contains("read whole"));
    // Below the limit both read as before, and so does a long value elsewhere in the file.
    let fits = format!("x:\n  - [{}]\n", vec!["a"; 50_000].join(","));
    assert!(parse(&fits).is_ok());
    let scalar = format!("a: '{}'\nb: 1\n", "x".repeat(250_000));
    assert!(parse(&scalar).is_ok());
}

#[test]
fn refuses_two_documents_and_keeps_tagged_values() {
    assert!(
        parse("a: 1\n---\nb: 2\n")
            .unwrap_err()
            .contains("exactly one YAML document")
    );
    assert_eq!(
        parse("a: !unsafe 'x{{y'\n").unwrap().get("a"),
        Some(&Yaml::Str("x{{y".into()))
    );
}
