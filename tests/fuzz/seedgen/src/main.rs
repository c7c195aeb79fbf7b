//! Writes the committed seed corpus, tests/fuzz/seeds/TARGET/, from the test suites' material:
//! - packet: queries built with hickory-proto (names of both samples, the apex, an empty non-terminal,
//!   NXDOMAIN, out of zone, every type the rules distinguish, EDNS sizes and versions, opcodes) and the
//!   hand-made malformed messages of src/serve/answer/tests/mod.rs, with IDs that pick every zone and limit;
//! - tcp_frames: pipelines of those queries under each way of cutting reads, a zero-length close, an
//!   incomplete message and the largest frame (65,535 bytes);
//! - check: zones/*.yml, ../shared/reference/sample-*.yml when present, and every inline inventory and
//!   YAML document of the test suites (string literals of tests/*.rs and src/**/*.rs);
//! - generation: both samples sealed as `load` seals them, and forged variants behind valid digests.
//!
//! Run from the repository root: `cargo run --manifest-path tests/fuzz/Cargo.toml -p seedgen`. It
//! replaces the seed directories; the output is deterministic.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use hickory_proto::op::{Edns, Message, OpCode, Query};
use hickory_proto::rr::{DNSClass, Name, RecordType};
use pigsty_dns::defaults;
use pigsty_dns::dns::name::Zone;
use pigsty_dns::input::inventory;
use pigsty_dns::input::records::RecordSet;
use pigsty_dns::zone::generation::{Generation, Input, record_digest};

fn main() {
    let root = std::env::current_dir().expect("cwd");
    assert!(
        root.join("tests/fuzz/Cargo.toml").exists(),
        "run from the repository root"
    );
    let seeds = root.join("tests/fuzz/seeds");
    let packets = packet_seeds();
    write(&seeds.join("packet"), &packets);
    write(&seeds.join("tcp_frames"), &tcp_seeds(&packets));
    write(&seeds.join("check"), &check_seeds(&root));
    write(&seeds.join("generation"), &generation_seeds(&root));
}

fn write(dir: &Path, seeds: &BTreeMap<String, Vec<u8>>) {
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir).expect("seed dir");
    let mut seen = std::collections::HashSet::new();
    for (name, bytes) in seeds {
        if seen.insert(bytes.clone()) {
            fs::write(dir.join(name), bytes).expect("seed written");
        }
    }
    println!("{}: {} seeds", dir.display(), seen.len());
}

fn query(id: u16, name: &str, t: RecordType) -> Message {
    let mut m = Message::query();
    m.metadata.id = id;
    m.metadata.recursion_desired = true;
    m.add_query(Query::query(Name::from_ascii(name).unwrap(), t));
    m
}

fn edns(mut m: Message, payload: u16, dnssec_ok: bool, version: u8) -> Message {
    let mut e = Edns::new();
    e.set_max_payload(payload);
    e.set_dnssec_ok(dnssec_ok);
    e.set_version(version);
    m.set_edns(e);
    m
}

fn raw(id: [u8; 2], flags: [u8; 2], counts: [u16; 4], body: &[u8]) -> Vec<u8> {
    let mut v = vec![id[0], id[1], flags[0], flags[1]];
    for c in counts {
        v.extend_from_slice(&c.to_be_bytes());
    }
    v.extend_from_slice(body);
    v
}

/// An uncompressed name.
fn wire(name: &str) -> Vec<u8> {
    let mut v = Vec::new();
    for l in name
        .trim_end_matches('.')
        .split('.')
        .filter(|l| !l.is_empty())
    {
        v.push(l.len() as u8);
        v.extend_from_slice(l.as_bytes());
    }
    v.push(0);
    v
}

fn packet_seeds() -> BTreeMap<String, Vec<u8>> {
    let mut s = BTreeMap::new();
    let names = [
        ("meta", "meta.pigsty.test."),
        ("mixedcase", "MeTa.PiGsTy.TeSt."),
        ("apex", "pigsty.test."),
        ("ent", "pigsty.pigsty.test."),
        ("alias", "i.pigsty.pigsty.test."),
        ("ha", "minio-1.pigsty.test."),
        ("nx", "nope.pigsty.test."),
        ("deep-nx", "a.b.c.d.e.f.pigsty.test."),
        ("outside", "example.com."),
        ("root", "."),
        ("parent", "test."),
        // The samples' reverse zone: apex, a PTR, an address without one (ha's .9), another /24.
        ("rev-apex", "10.10.10.in-addr.arpa."),
        ("rev-ptr", "10.10.10.10.in-addr.arpa."),
        ("rev-nx", "9.10.10.10.in-addr.arpa."),
        ("rev-other", "11.10.10.in-addr.arpa."),
    ];
    let types = [
        ("a", RecordType::A),
        ("aaaa", RecordType::AAAA),
        ("soa", RecordType::SOA),
        ("ns", RecordType::NS),
        ("any", RecordType::ANY),
        ("mx", RecordType::MX),
        ("txt", RecordType::TXT),
        ("axfr", RecordType::AXFR),
        ("ixfr", RecordType::IXFR),
        ("ptr", RecordType::PTR),
    ];
    // ID[1] & 3 picks the zone (0/1 meta, 2 ha, 3 empty); an odd ID[0] turns on the test UDP cap.
    let ids: [u16; 4] = [0x1200, 0x3402, 0x5603, 0x0140];
    for (i, (nk, name)) in names.iter().enumerate() {
        for (j, (tk, t)) in types.iter().enumerate() {
            // Every name with every type; a third of them with EDNS too.
            let id = ids[(i + j) % ids.len()];
            let q = query(id, name, *t);
            s.insert(format!("q-{nk}-{tk}"), q.to_vec().unwrap());
            if (i + j) % 3 == 0 {
                let e = edns(q, [512, 1232, 4096, 100][(i + j) % 4], j % 2 == 0, 0);
                s.insert(format!("q-{nk}-{tk}-edns"), e.to_vec().unwrap());
            }
        }
    }
    let meta = || query(0x2000, "meta.pigsty.test.", RecordType::A);
    s.insert(
        "edns-version1".into(),
        edns(meta(), 1232, false, 1).to_vec().unwrap(),
    );
    let mut opts = edns(meta(), 1232, true, 0);
    if let Some(e) = opts.edns.as_mut() {
        e.options_mut()
            .insert(hickory_proto::rr::rdata::opt::EdnsOption::Unknown(
                10,
                vec![1, 2, 3, 4, 5, 6, 7, 8],
            ));
    }
    s.insert("edns-cookie".into(), opts.to_vec().unwrap());
    for (k, op) in [
        ("notify", OpCode::Notify),
        ("update", OpCode::Update),
        ("status", OpCode::Status),
    ] {
        let mut m = meta();
        m.metadata.op_code = op;
        m.metadata.checking_disabled = true;
        s.insert(format!("opcode-{k}"), m.to_vec().unwrap());
    }
    let mut ch = query(0x2001, "meta.pigsty.test.", RecordType::TXT);
    ch.queries[0].set_query_class(DNSClass::CH);
    s.insert("class-ch".into(), ch.to_vec().unwrap());
    let mut two = meta();
    two.add_query(Query::query(
        Name::from_ascii("pigsty.test.").unwrap(),
        RecordType::SOA,
    ));
    s.insert("two-questions-compressed".into(), two.to_vec().unwrap());
    // Long names: 63-octet labels up to 255 octets on the wire.
    let l63 = "x".repeat(63);
    let long = format!("{l63}.{l63}.{l63}.{}.pigsty.test.", "y".repeat(49));
    s.insert(
        "long-name-255".into(),
        query(0x2002, &long, RecordType::A).to_vec().unwrap(),
    );

    // Hand-made and malformed (the shapes of src/serve/answer/tests/mod.rs).
    let q = wire("meta.pigsty.test");
    let mut body = q.clone();
    body.extend_from_slice(&[0, 1, 0, 1]);
    s.insert(
        "raw-plain".into(),
        raw([0xAB, 0xCD], [1, 0], [1, 0, 0, 0], &body),
    );
    s.insert(
        "raw-qr1".into(),
        raw([0xAB, 0xCD], [0x81, 0], [1, 0, 0, 0], &body),
    );
    s.insert(
        "raw-header-only".into(),
        raw([0, 0], [0, 0], [0, 0, 0, 0], &[]),
    );
    s.insert(
        "raw-short".into(),
        vec![0xAB, 0xCD, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    );
    s.insert(
        "raw-qdcount0".into(),
        raw([1, 2], [1, 0], [0, 0, 0, 0], &[]),
    );
    s.insert(
        "raw-truncated-question".into(),
        raw([1, 3], [1, 0], [1, 0, 0, 0], &q[..7]),
    );
    s.insert(
        "raw-pointer-loop".into(),
        raw([1, 4], [1, 0], [1, 0, 0, 0], &[0xC0, 12, 0, 1, 0, 1]),
    );
    s.insert(
        "raw-forward-pointer".into(),
        raw([1, 5], [1, 0], [1, 0, 0, 0], &[0xC0, 14, 0, 0, 1, 0, 1]),
    );
    s.insert(
        "raw-label-0x40".into(),
        raw([1, 6], [1, 0], [1, 0, 0, 0], &[0x41, 0, 0, 1, 0, 1]),
    );
    let mut dotted = vec![3, b'a', b'.', b'b'];
    dotted.extend_from_slice(&wire("pigsty.test"));
    dotted.extend_from_slice(&[0, 1, 0, 1]);
    s.insert(
        "raw-dotted-label".into(),
        raw([1, 7], [1, 0], [1, 0, 0, 0], &dotted),
    );
    // OPT records: good, in the answer section, twice, with a non-root owner, with a bad option.
    let opt = |payload: u16, rdata: &[u8]| {
        let mut v = vec![0, 0, 41];
        v.extend_from_slice(&payload.to_be_bytes());
        v.extend_from_slice(&[0, 0, 0x80, 0]);
        v.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
        v.extend_from_slice(rdata);
        v
    };
    let with = |counts: [u16; 4], extra: &[u8]| {
        let mut b = body.clone();
        b.extend_from_slice(extra);
        raw([0x10, 0x00], [1, 0], counts, &b)
    };
    s.insert("raw-opt".into(), with([1, 0, 0, 1], &opt(4096, &[])));
    s.insert(
        "raw-opt-small-payload".into(),
        with([1, 0, 0, 1], &opt(100, &[])),
    );
    s.insert(
        "raw-opt-in-answer".into(),
        with([1, 1, 0, 0], &opt(4096, &[])),
    );
    let mut twice = opt(4096, &[]);
    twice.extend_from_slice(&opt(1232, &[]));
    s.insert("raw-two-opts".into(), with([1, 0, 0, 2], &twice));
    let mut owned = vec![0xC0, 12];
    owned.extend_from_slice(&opt(4096, &[])[1..]);
    s.insert("raw-opt-owner".into(), with([1, 0, 0, 1], &owned));
    s.insert(
        "raw-opt-bad-option".into(),
        with([1, 0, 0, 1], &opt(4096, &[0, 10, 0, 9, 1])),
    );
    s.insert(
        "raw-trailing-bytes".into(),
        with([1, 0, 0, 0], &[0xde, 0xad, 0xbe, 0xef]),
    );
    // A record in the answer section (compressed owner), then the OPT.
    let mut rr = vec![0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, 10, 10, 10, 10];
    rr.extend_from_slice(&opt(1232, &[]));
    s.insert("raw-answer-then-opt".into(), with([1, 1, 0, 1], &rr));
    // The test UDP cap: ID[0] odd, cap 12 + 2 × ID[1] bytes.
    let mut capped = edns(
        query(0x0110, "nope.pigsty.test.", RecordType::A),
        4096,
        false,
        0,
    )
    .to_vec()
    .unwrap();
    capped[0] = 0x01;
    capped[1] = 0x30;
    s.insert("cap-truncates".into(), capped);
    s
}

fn framed(msgs: &[&[u8]]) -> Vec<u8> {
    let mut v = Vec::new();
    for m in msgs {
        v.extend_from_slice(&(m.len() as u16).to_be_bytes());
        v.extend_from_slice(m);
    }
    v
}

fn tcp_seeds(packets: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    let p = |k: &str| packets[k].as_slice();
    let pipeline = framed(&[
        p("q-meta-a"),
        p("q-meta-a-edns"),
        p("q-apex-soa"),
        p("q-nx-a"),
        p("raw-qr1"),
    ]);
    let mut s = BTreeMap::new();
    // The seed byte: % 4 picks the read bound (1, 7, 300, 4096); below 8 every read is that size.
    for seed in [0u8, 1, 2, 3, 9, 10, 11, 0xFF] {
        let mut v = vec![seed];
        v.extend_from_slice(&pipeline);
        s.insert(format!("pipeline-{seed:02x}"), v);
    }
    let mut close = vec![3u8];
    close.extend_from_slice(&framed(&[p("q-meta-a")]));
    close.extend_from_slice(&[0, 0]);
    close.extend_from_slice(&framed(&[p("q-nx-a")]));
    s.insert("zero-length-close".into(), close);
    let mut partial = vec![2u8];
    partial.extend_from_slice(&framed(&[p("q-meta-a")]));
    partial.extend_from_slice(&[0x01, 0x00, 0xAB, 0xCD]);
    s.insert("incomplete-rest".into(), partial);
    let mut short = vec![1u8];
    short.extend_from_slice(&framed(&[p("raw-short"), p("raw-header-only")]));
    s.insert("short-messages".into(), short);
    s.insert("half-length".into(), vec![0, 0x01]);
    // The largest frame: a query padded to 65,535 bytes (trailing bytes are ignored), then another.
    let mut big = p("q-meta-a").to_vec();
    big.resize(65_535, 0xAA);
    let mut max = vec![3u8];
    max.extend_from_slice(&framed(&[&big, p("q-nx-a")]));
    s.insert("max-frame".into(), max);
    s
}

/// Rust string literals (plain ones, with the escapes the tests use) in a source file.
fn string_literals(src: &str) -> Vec<String> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'\'' => {
                // A char literal ('"' included) or a lifetime: skip a quoted char when there is one.
                if b.get(i + 2) == Some(&b'\'') {
                    i += 3;
                    continue;
                }
                if b.get(i + 1) == Some(&b'\\') && b.get(i + 3) == Some(&b'\'') {
                    i += 4;
                    continue;
                }
                i += 1;
            }
            b'"' => {
                let mut s = String::new();
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                        match b.get(i) {
                            Some(b'n') => s.push('\n'),
                            Some(b't') => s.push('\t'),
                            Some(b'0') => s.push('\0'),
                            Some(b'\n') => {
                                while i + 1 < b.len() && b[i + 1].is_ascii_whitespace() {
                                    i += 1;
                                }
                            }
                            Some(&c) => s.push(c as char),
                            None => break,
                        }
                        i += 1;
                    } else {
                        let ch = src[i..].chars().next().unwrap();
                        s.push(ch);
                        i += ch.len_utf8();
                    }
                }
                i += 1;
                out.push(s);
            }
            _ => i += 1,
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() && !p.ends_with("fuzz") {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn check_seeds(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut s = BTreeMap::new();
    for (k, p) in [
        ("pigsty.test.yml", "zones/pigsty.test.yml"),
        ("ha.yml", "zones/ha.yml"),
        ("sample-meta.yml", "../shared/reference/sample-meta.yml"),
        ("sample-ha.yml", "../shared/reference/sample-ha.yml"),
    ] {
        if let Ok(b) = fs::read(root.join(p)) {
            s.insert(k.to_string(), b);
        }
    }
    let mut files = Vec::new();
    rust_files(&root.join("tests"), &mut files);
    rust_files(&root.join("src"), &mut files);
    for f in files {
        let text = fs::read_to_string(&f).unwrap_or_default();
        let yaml_file = f.ends_with("src/input/yaml/mod.rs");
        // A module's `mod.rs` is named for its folder, so seeds keep the module's name.
        let stem = match f.file_stem().unwrap().to_string_lossy().into_owned() {
            s if s == "mod" => f
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned(),
            s => s,
        };
        for (n, lit) in string_literals(&text).into_iter().enumerate() {
            let inventory = lit.starts_with("all:") || lit.contains("\nall:");
            let document = yaml_file && lit.contains('\n') && lit.contains(':');
            if (inventory || document) && lit.len() > 8 {
                s.insert(format!("{stem}-{n:03}.yml"), lit.into_bytes());
            }
        }
    }
    // The documented refusals the suites exercise only through files: an alias bomb, deep nesting.
    let mut bomb = String::from("all:\n  vars:\n    a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..8 {
        let p = i - 1;
        bomb.push_str(&format!(
            "    a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    bomb.push_str("  hosts: {10.10.10.10: {nodename: meta}}\n");
    s.insert("alias-bomb.yml".into(), bomb.into_bytes());
    s.insert(
        "deep.yml".into(),
        format!("all: {}1{}\n", "[".repeat(70), "]".repeat(70)).into_bytes(),
    );
    s.insert("empty.yml".into(), Vec::new());
    s.insert(
        "not-utf8.yml".into(),
        b"all:\n  hosts: {\xff: {}}\n".to_vec(),
    );
    s
}

fn seal(text: &str, serial: u32) -> Generation {
    let zone = Zone::parse(defaults::ZONES[0]).unwrap();
    let set = RecordSet::build(&inventory::parse(text).unwrap(), &zone).unwrap();
    Generation::seal(
        &set,
        defaults::TTL,
        defaults::NEGATIVE_TTL,
        serial,
        "2026-01-01T00:00:00Z".into(),
        Input {
            path: "/fuzz/host-names.yml".into(),
            sha256: "0".repeat(64),
        },
    )
}

fn generation_seeds(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let meta = fs::read_to_string(root.join("zones/pigsty.test.yml")).unwrap();
    let ha = fs::read_to_string(root.join("zones/ha.yml")).unwrap();
    let mut s = BTreeMap::new();
    let g = seal(&meta, 1);
    s.insert("meta".into(), g.encode());
    s.insert("ha".into(), seal(&ha, 2).encode());
    // Forged behind valid digests: only the content checks can refuse these.
    let forged = |edit: &dyn Fn(&mut Generation)| {
        let mut g = g.clone();
        edit(&mut g);
        g.record_digest = record_digest(&g.zone, g.ttl, &g.soa, &g.ns, &g.records, &g.ptr);
        g.encode()
    };
    s.insert(
        "forged-outside-address".into(),
        forged(&|g| g.records[0].address = [8, 8, 8, 8].into()),
    );
    s.insert(
        "forged-uppercase".into(),
        forged(&|g| g.records[0].name = g.records[0].name.to_uppercase()),
    );
    s.insert(
        "forged-out-of-order".into(),
        forged(&|g| g.records.swap(0, 1)),
    );
    s.insert("forged-ttl".into(), forged(&|g| g.ttl = 86_401));
    s.insert(
        "forged-zone".into(),
        forged(&|g| g.zone = "Pigsty.Test".into()),
    );
    s.insert("forged-format".into(), forged(&|g| g.format = 3));
    // A generation sealed before format 2, as older state dirs hold it.
    s.insert(
        "meta-format1".into(),
        forged(&|g| g.format = pigsty_dns::zone::generation::FORMAT_JSON),
    );
    s.insert(
        "forged-soa-name".into(),
        forged(&|g| g.soa.mname = format!("{}.", "x".repeat(64))),
    );
    s.insert(
        "forged-outside-zone".into(),
        forged(&|g| g.records[0].name = "meta.other.test".into()),
    );
    let mut digest_only = g.encode();
    let at = digest_only.len() - 5;
    digest_only[at] ^= 1;
    s.insert("bad-self-digest".into(), digest_only);
    s.insert("truncated".into(), g.encode()[..200].to_vec());
    s
}
