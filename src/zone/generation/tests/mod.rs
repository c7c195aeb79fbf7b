use super::*;

fn sample() -> Generation {
    let zone = Zone::parse("pigsty.test").unwrap();
    let rec = |name: &str, a: [u8; 4]| Record {
        name: name.into(),
        address: a.into(),
        sources: vec!["t".into()],
    };
    let set = RecordSet {
        zones: zone.into(),
        records: vec![
            rec("a.b.pigsty.test", [10, 10, 10, 11]),
            rec("meta.pigsty.test", [10, 10, 10, 10]),
        ],
        ptr: vec![],
        not_served: vec![],
        skipped_hosts: vec![],
    };
    let input = Input {
        path: "/x".into(),
        sha256: "0".repeat(64),
    };
    Generation::seal(&set, 30, 5, 7, "2026-12-01T00:00:00Z".into(), input)
}

/// Re-seals a modified generation so its digests match: only the content checks can refuse it.
fn forged(edit: impl FnOnce(&mut Generation)) -> Result<Generation, String> {
    let mut g = sample();
    edit(&mut g);
    g.record_digest = record_digest(&g.zone, g.ttl, &g.soa, &g.ns, &g.records, &g.ptr);
    Generation::decode(&g.encode())
}

#[test]
fn decode_round_trips_and_rechecks_contents_behind_valid_digests() {
    let g = sample();
    assert_eq!(Generation::decode(&g.encode()).unwrap(), g);
    assert!(
        forged(|g| g.records[0].address = [8, 8, 8, 8].into())
            .unwrap_err()
            .contains("outside")
    );
    assert!(
        forged(|g| g.records[1].address = [10, 10, 10, 3].into())
            .unwrap_err()
            .contains("outside")
    );
    assert!(
        forged(|g| g.records[0].name = "x.other.test".into())
            .unwrap_err()
            .contains("not a canonical name")
    );
    assert!(
        forged(|g| g.records[0].name = "A.b.pigsty.test".into())
            .unwrap_err()
            .contains("not a canonical name")
    );
    // Not a host name at all: the host-name rule names the problem first.
    for bad in ["a_b.pigsty.test", "-a.pigsty.test", "a-.b.pigsty.test"] {
        let e = forged(|g| g.records[0].name = bad.into()).unwrap_err();
        assert!(e.contains("invalid record name"), "{bad}: {e}");
    }
    assert!(
        forged(|g| g.records.swap(0, 1))
            .unwrap_err()
            .contains("out of order")
    );
    assert!(forged(|g| g.ttl = 86_401).unwrap_err().contains("TTL"));
    let mut bytes = g.encode();
    let at = bytes.len() - 5;
    bytes[at] ^= 1;
    assert!(Generation::decode(&bytes).is_err());
}

/// The apex's SOA and NS are exactly what `load` derives (issue 24's forged values each refused).
#[test]
fn a_forged_soa_or_ns_is_refused_behind_valid_digests() {
    type Edit = fn(&mut Generation);
    let cases: [(&str, Edit); 9] = [
        ("NS", |g| g.ns = vec!["ns.evil.example.".into()]),
        ("NS", |g| g.ns = vec![]),
        ("NS", |g| g.ns.push("localhost.".into())),
        ("SOA", |g| g.soa.mname = "evil.example.".into()),
        ("SOA", |g| g.soa.mname = "a..b.".into()),
        ("SOA", |g| g.soa.rname = "root.evil.example.".into()),
        ("SOA", |g| g.soa.refresh = 0),
        ("SOA", |g| g.soa.expire = u32::MAX),
        ("SOA", |g| g.soa.retry = 4_000),
    ];
    for (what, edit) in cases {
        let e = forged(edit).unwrap_err();
        assert!(e.contains(what), "{e}");
    }
    // The negative TTL is load's --negative-ttl: any up to one day, 0 included.
    assert!(forged(|g| g.soa.minimum = 0).is_ok());
    assert!(forged(|g| g.soa.minimum = 86_400).is_ok());
    assert!(forged(|g| g.ttl = 0).unwrap_err().contains("TTL"));
}

/// A format-2 body with a self-digest line computed over it, as a forger with sha256sum would write.
fn resealed(body: &str) -> Vec<u8> {
    format!("{body}self_digest {}\n", sha256_of(body.as_bytes())).into_bytes()
}

fn body_of(g: &Generation) -> String {
    let text = String::from_utf8(g.encode()).unwrap();
    let cut = text.rfind("self_digest ").unwrap();
    text[..cut].to_string()
}

#[test]
fn format_2_is_lines_under_a_header_and_its_digest_is_over_the_raw_bytes() {
    let g = sample();
    assert_eq!(g.format, FORMAT);
    let bytes = g.encode();
    let text = std::str::from_utf8(&bytes).unwrap();
    assert!(
        text.contains("\"sources\": [\n    \"t\"\n  ],\n")
            && text.contains("\na a.b 10.10.10.11 0\na meta 10.10.10.10 0\nself_digest ")
    );
    let body = body_of(&g);
    assert_eq!(
        resealed(&body),
        bytes,
        "the digest line is sha256 of the bytes above it"
    );
    assert_eq!(g.self_digest(), sha256_of(body.as_bytes()));
    let (back, digest) = Generation::decode_with_digest(&bytes).unwrap();
    assert_eq!((back, digest), (g.clone(), g.self_digest()));

    // Any flipped byte is caught, whether it breaks the layout or only the digest.
    for at in 0..bytes.len() {
        let mut b = bytes.clone();
        b[at] ^= 0x20;
        assert!(
            Generation::decode(&b).is_err(),
            "byte {at} flipped was accepted"
        );
    }
    // Truncated anywhere.
    for len in 0..bytes.len() {
        assert!(
            Generation::decode(&bytes[..len]).is_err(),
            "truncated to {len}"
        );
    }
}

#[test]
fn format_2_forged_behind_a_recomputed_self_digest_is_refused() {
    let g = sample();
    let body = body_of(&g);
    let refused = |body: String, why: &str| {
        let e = Generation::decode(&resealed(&body)).unwrap_err();
        assert!(e.contains(why), "{e} (wanted {why:?}) for\n{body}");
        // The server's read, which does not keep the sources, refuses it for the same reason.
        let bytes = resealed(&body);
        assert_eq!(Generation::decode_to_serve(&bytes).unwrap_err(), e);
    };
    let (served, _) = Generation::decode_to_serve(&g.encode()).unwrap();
    assert!(served.records.iter().all(|r| r.sources.is_empty()));
    assert_eq!(served.record_digest, g.record_digest);
    // Lines swapped: each is canonical, the order is not.
    let a = "a a.b 10.10.10.11 0\n";
    let m = "a meta 10.10.10.10 0\n";
    refused(
        body.replace(&format!("{a}{m}"), &format!("{m}{a}")),
        "out of order",
    );
    // An address changed without the record digest: only the record digest can tell.
    refused(
        body.replace("10.10.10.11 0", "10.10.10.12 0"),
        "record digest",
    );
    // Not the encoder's bytes: a double space, a leading zero, a source written another way, a name
    // written in full, pretty spacing.
    refused(body.replace("10.10.10.11 0", "10.10.10.11  0"), "line");
    refused(body.replace("10.10.10.11 0", "10.10.10.011 0"), "line");
    refused(body.replace("10.10.10.11 0", "10.10.10.11 00"), "line");
    refused(body.replace("10.10.10.11 0", "10.10.10.11 t"), "line");
    refused(body.replace("10.10.10.11 0", "10.10.10.11 1"), "first use");
    refused(
        body.replace("a a.b ", "a a.b.pigsty.test. "),
        "not a canonical name",
    );
    // Written in full without the dot it is another name, a.b.pigsty.test.pigsty.test.
    refused(
        body.replace("a a.b ", "a a.b.pigsty.test "),
        "record digest",
    );
    // The source table: an entry unused, listed twice, or one that the encoder would have split.
    refused(
        body.replace("\"t\"\n", "\"t\",\n    \"u\"\n"),
        "lists 2 sources",
    );
    refused(body.replace("\"t\"\n", "\"t\",\n    \"t\"\n"), "twice");
    refused(body.replace("\"t\"\n", "\"t[1]\"\n"), "not split");
    refused(body.replace("\"ttl\": 30", "\"ttl\":30"), "canonical form");
    // A line dropped (the header's count says so), an unknown line, a record after the PTRs.
    refused(body.replace(a, ""), "header counts");
    refused(body.replace(a, &format!("{a}x y\n")), "neither a record");
    refused(
        body.replace(m, "ptr 10.10.10.11 a.b.pigsty.test\n") + m,
        "after the PTR",
    );
    // A format this build does not know, and a hand-made header field.
    refused(
        body.replace("\"format\": 2", "\"format\": 3"),
        "has format 3",
    );
    refused(
        body.replace("\"ttl\": 30,", "\"ttl\": 30,\n  \"extra\": 1,"),
        "not a generation file",
    );
    // The digest line itself: missing, short, upper case.
    let e = Generation::decode(body.as_bytes()).unwrap_err();
    assert!(e.contains("self_digest"), "{e}");
    let upper = format!(
        "{body}self_digest {}\n",
        sha256_of(body.as_bytes()).to_uppercase()
    );
    assert!(Generation::decode(upper.as_bytes()).is_err());
}

#[test]
fn any_source_the_apex_and_ptr_lines_round_trip() {
    let mut g = sample();
    g.records[0].sources = vec![
        "a b".into(),
        "\"q\"".into(),
        String::new(),
        "tab\there".into(),
        "é".into(),
        "x[3]".into(),
        "x[3][4]".into(),
        "x".into(),
        "[5]".into(),
        "y[07]".into(),
        "z[]".into(),
    ];
    g.records.push(Record {
        name: "pigsty.test".into(),
        address: [10, 10, 10, 11].into(),
        sources: vec!["x[3][5]".into()],
    });
    g.ptr = vec![
        Ptr {
            address: [10, 10, 10, 10].into(),
            name: "meta.pigsty.test".into(),
        },
        Ptr {
            address: [10, 10, 10, 11].into(),
            name: "a.b.pigsty.test".into(),
        },
    ];
    g.record_digest = record_digest(&g.zone, g.ttl, &g.soa, &g.ns, &g.records, &g.ptr);
    let bytes = g.encode();
    let text = std::str::from_utf8(&bytes).unwrap();
    assert!(
        text.contains("\nptr 10.10.10.10 meta\nptr 10.10.10.11 a.b\nself_digest "),
        "{text}"
    );
    assert!(
        text.contains(" 10.10.10.11 0 1 2 3 4 5[3] 6[4] 5 7 8 9\n"),
        "{text}"
    );
    assert!(text.contains("\na @ 10.10.10.11 6[5]\n"), "{text}");
    // The writer's count from the generation is the readers' count from the lines.
    let from_lines = lines::count(&bytes).unwrap();
    let sources: usize = g.records.iter().map(|r| r.sources.len()).sum();
    let from_g = lines::header_strings(&bytes).unwrap() + g.records.len() + sources + g.ptr.len();
    assert_eq!(from_lines, from_g);
    assert!(g.check_string_count(&bytes).is_ok());
    assert_eq!(Generation::decode(&bytes).unwrap(), g);
    assert_eq!(Generation::parse_unverified(&bytes).unwrap(), g);
}

/// One long table entry referred to by thousands of two-byte tokens would copy it thousands of
/// times: refused by the source budget before the copies are made.
#[test]
fn a_diff_base_checks_both_digests_and_the_layout_but_not_the_rules() {
    let g = sample();
    let (base, digest) = Generation::decode_diff_base(&g.encode()).unwrap();
    assert_eq!(digest, g.self_digest());
    assert_eq!(base, DiffBase::from(&g));
    assert_eq!(
        base.records().next(),
        Some((g.records[0].name.as_str(), g.records[0].address))
    );
    // A name `load` refuses, behind both digests recomputed: a diff base, never served.
    let mut bad = sample();
    bad.records[0].name = "A.b.pigsty.test".into();
    bad.record_digest = bad.computed_record_digest();
    assert!(Generation::decode(&bad.encode()).is_err());
    assert!(Generation::decode_diff_base(&bad.encode()).is_ok());
    // What only the self-digest, the layout or the record digest can tell is refused all the same.
    let body = body_of(&g);
    let refused = |bytes: &[u8], why: &str| {
        let e = Generation::decode_diff_base(bytes).unwrap_err();
        assert!(e.contains(why), "{e} (wanted {why:?})");
    };
    refused(
        &String::from_utf8(g.encode())
            .unwrap()
            .replace("10.10.10.11 0", "10.10.10.12 0")
            .into_bytes(),
        "self-digest",
    );
    refused(
        &resealed(&body.replace("10.10.10.11 0", "10.10.10.12 0")),
        "record digest",
    );
    refused(
        &resealed(&body.replace("10.10.10.11 0", "10.10.10.011 0")),
        "line",
    );
    refused(
        &resealed(&body.replace("a a.b 10.10.10.11 0\n", "")),
        "header counts",
    );
    refused(
        &resealed(&body.replace("\"ttl\": 30", "\"ttl\":30")),
        "canonical form",
    );
}

#[test]
fn a_claim_holds_only_behind_the_self_digest() {
    let g = sample();
    let bytes = g.encode();
    let claim = HeaderClaim {
        serial: g.serial,
        record_digest: g.record_digest.clone(),
    };
    assert_eq!(
        Generation::decode_claim(&bytes),
        Ok((claim, g.self_digest()))
    );
    for at in 0..bytes.len() {
        let mut b = bytes.clone();
        b[at] ^= 0x01;
        assert!(Generation::decode_claim(&b).is_err(), "byte {at} flipped");
        assert!(
            Generation::decode_claim(&bytes[..at]).is_err(),
            "cut at {at}"
        );
    }
}

/// The diff-base reader accepts exactly the files that the whole decode without the sources and
/// a record digest check accepted (what it was before it kept the names in one buffer), and reads
/// the same names, addresses and PTRs from them.
#[test]
fn a_diff_base_reads_what_the_full_decoder_without_sources_reads() {
    let old_way = |bytes: &[u8]| {
        let (g, digest) = lines::decode(bytes, true, SourceLines::Skip)?;
        if g.computed_record_digest() != g.record_digest {
            return Err("fails its record digest".to_string());
        }
        Ok((DiffBase::from(&g), digest))
    };
    let mut g = sample();
    g.records.push(Record {
        name: "pigsty.test".into(),
        address: [10, 10, 10, 12].into(),
        sources: vec!["x[3]".into()],
    });
    g.records.sort_by(|a, b| a.name.cmp(&b.name));
    g.ptr = vec![Ptr {
        address: [10, 10, 10, 10].into(),
        name: "meta.pigsty.test".into(),
    }];
    g.record_digest = g.computed_record_digest();
    let bytes = g.encode();
    let body = body_of(&g);
    let mut cases = vec![bytes.clone()];
    for at in 0..bytes.len() {
        for bit in [0x01, 0x20] {
            let mut b = bytes.clone();
            b[at] ^= bit;
            cases.push(b);
        }
        cases.push(bytes[..at].to_vec());
    }
    // Edits behind a recomputed self-digest, as a forger would make them.
    for (from, to) in [
        ("10.10.10.11 0", "10.10.10.12 0"),
        ("10.10.10.11 0", "10.10.10.11  0"),
        ("10.10.10.11 0", "10.10.10.11 zz"),
        ("a a.b ", "a a.b. "),
        ("a a.b ", "a  a.b "),
        ("a a.b 10.10.10.11 0\n", ""),
        ("ptr 10.10.10.10 meta\n", ""),
        ("ptr 10.10.10.10 meta\n", "ptr 10.10.10.10 meta x\n"),
        ("ptr 10.10.10.10 meta\n", "ptr 10.10.10.10 @\n"),
        ("a @ ", "a A "),
        ("\"x\"\n", "\"x\",\n    \"x\"\n"),
        ("\"ttl\": 30", "\"ttl\":30"),
        ("\"format\": 2", "\"format\": 3"),
    ] {
        assert!(body.contains(from), "{from:?}");
        cases.push(resealed(&body.replacen(from, to, 1)));
    }
    let mut accepted = 0;
    for c in &cases {
        let (new, old) = (Generation::decode_diff_base(c), old_way(c));
        assert_eq!(new.is_ok(), old.is_ok(), "{new:?} {old:?}");
        // `load` decides on the claim what it would have decided on the base.
        if let Ok((base, digest)) = &new {
            let claim = HeaderClaim {
                serial: base.serial,
                record_digest: base.record_digest.clone(),
            };
            assert_eq!(Generation::decode_claim(c), Ok((claim, digest.clone())));
        }
        if let (Ok(new), Ok(old)) = (new, old) {
            assert_eq!(new, old);
            accepted += 1;
        }
    }
    assert!(accepted > 2, "{accepted}");
}

#[test]
fn a_source_table_entry_referred_to_too_often_is_refused() {
    let mut g = sample();
    let long = "s".repeat(20_000);
    let many = |n: usize| {
        let mut g = g.clone();
        g.records[0].sources = vec![long.clone(); n];
        g.encode()
    };
    // A few copies fit; 5,000 copies of 20 KB from a file of about 30 KB do not.
    assert!(Generation::parse_unverified(&many(4)).is_ok());
    let e = Generation::parse_unverified(&many(5_000)).unwrap_err();
    assert!(e.contains("copy more text"), "{e}");
    g.records[0].sources = vec!["all.vars.vm_hosts[0].names[1]".into(); 1000];
    assert!(Generation::parse_unverified(&g.encode()).is_ok());
}

/// Generations sealed before format 2 are read, re-encode to their exact bytes, and keep their digest.
#[test]
fn format_1_files_still_decode_and_re_encode_byte_for_byte() {
    let mut g = sample();
    g.format = FORMAT_JSON;
    let bytes = g.encode();
    assert!(bytes.starts_with(b"{\n  \"generation\": {\n    \"format\": 1,"));
    let (back, digest) = Generation::decode_with_digest(&bytes).unwrap();
    assert_eq!(back, g);
    assert_eq!(back.encode(), bytes);
    assert_eq!(digest, back.self_digest());
    let mut b = bytes.clone();
    let at = b.len() - 5;
    b[at] ^= 1;
    assert!(Generation::decode(&b).is_err());
    // A format-1 layout that claims format 2 is refused.
    let text = String::from_utf8(bytes)
        .unwrap()
        .replace("\"format\": 1", "\"format\": 2");
    assert!(
        Generation::decode(text.as_bytes())
            .unwrap_err()
            .contains("format 2")
    );
}

/// Generations of several zones.
mod zones;
