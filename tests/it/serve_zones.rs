//! A daemon of several zones (issue 37) through the real binary and real sockets: `pigsty.test` and
//! `pigsty` served side by side, each a complete zone (its own SOA and NS, its own SOA in negative
//! answers), names in neither refused; the `--zone` set refused as a usage error; and a state dir
//! written by the one-zone release served after the upgrade with no load by hand.

use std::fs;
use std::net::Ipv4Addr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{RData, RecordType};

use crate::serve_cli::{ask, soa_serial, start, status_file};
use crate::util::*;

const STOCK_META: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/pigsty-conf/meta.yml"
);

/// The SOA of an answer's authority section (negative answers) or answer section (the apex).
fn soa_of(m: &Message) -> Option<(String, String, u32)> {
    m.answers
        .iter()
        .chain(&m.authorities)
        .find_map(|r| match &r.data {
            RData::SOA(s) => Some((r.name.to_ascii(), s.rname.to_ascii(), s.serial)),
            _ => None,
        })
}

fn rcode(m: &Message) -> ResponseCode {
    m.metadata.response_code
}

#[test]
fn both_default_zones_answer_each_with_its_own_apex() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    // Stock Pigsty conf/meta.yml beside a Pigsty config's sibling files, as check reads it.
    let conf = t.path().join("pigsty.yml");
    fs::copy(STOCK_META, &conf).unwrap();
    let r = load(&state, &conf, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let srv = start(&state, &[]);
    for (name, want) in [
        ("i.pigsty.", [10, 10, 10, 10]),
        ("sss.pigsty.", [10, 10, 10, 10]),
        ("pg-meta.pigsty.test.", [10, 10, 10, 10]),
        ("pg-meta-1.pigsty.test.", [10, 10, 10, 10]),
    ] {
        let m = ask(srv.addr, name, RecordType::A).unwrap();
        assert_eq!(rcode(&m), ResponseCode::NoError, "{name}");
        assert!(m.metadata.authoritative, "{name}");
        assert_eq!(a_of(&m), vec![Ipv4Addr::from(want)], "{name}");
    }
    // Each apex: its own SOA (its own contact), one serial for both.
    for (apex, rname) in [
        ("pigsty.test.", "hostmaster.pigsty.test."),
        ("pigsty.", "hostmaster.pigsty."),
    ] {
        let m = ask(srv.addr, apex, RecordType::SOA).unwrap();
        assert_eq!(soa_of(&m), Some((apex.into(), rname.into(), 1)), "{apex}");
        let m = ask(srv.addr, apex, RecordType::NS).unwrap();
        assert_eq!(m.answers.len(), 1, "{apex} NS");
        assert_eq!(m.answers[0].name.to_ascii(), apex);
    }
    // NXDOMAIN and NODATA carry the zone's own SOA.
    let m = ask(srv.addr, "nope.pigsty.", RecordType::A).unwrap();
    assert_eq!(rcode(&m), ResponseCode::NXDomain);
    assert_eq!(
        soa_of(&m),
        Some(("pigsty.".into(), "hostmaster.pigsty.".into(), 1))
    );
    let m = ask(srv.addr, "i.pigsty.", RecordType::AAAA).unwrap();
    assert_eq!(rcode(&m), ResponseCode::NoError);
    assert!(m.answers.is_empty());
    assert_eq!(
        soa_of(&m),
        Some(("pigsty.".into(), "hostmaster.pigsty.".into(), 1))
    );
    let m = ask(srv.addr, "nope.pigsty.test.", RecordType::A).unwrap();
    assert_eq!(rcode(&m), ResponseCode::NXDomain);
    assert_eq!(
        soa_of(&m),
        Some(("pigsty.test.".into(), "hostmaster.pigsty.test.".into(), 1))
    );
    // Outside every zone (a public domain, a near miss): REFUSED.
    for name in ["www.pigsty.cc.", "xpigsty.", "test."] {
        let m = ask(srv.addr, name, RecordType::A).unwrap();
        assert_eq!(rcode(&m), ResponseCode::Refused, "{name}");
    }
    // The reverse zone as before: the PTR names the VM identity.
    let m = ask(srv.addr, "10.10.10.10.in-addr.arpa.", RecordType::PTR).unwrap();
    assert_eq!(ptr_of(&m), ["pg-meta-1.pigsty.test."]);
    let st = status_file(&state).unwrap();
    assert_eq!(st["zones"], serde_json::json!(["pigsty.test", "pigsty"]));
}

#[test]
fn an_empty_non_terminal_of_the_second_zone_is_nodata() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let file = write(
        t.path(),
        "h.yml",
        "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n  vars: {vm_hosts: [{address: 10.10.10.10, names: [a.b.pigsty]}]}\n",
    );
    let srv = start(&state, &["--records", file.to_str().unwrap()]);
    let m = ask(srv.addr, "b.pigsty.", RecordType::A).unwrap();
    assert_eq!(rcode(&m), ResponseCode::NoError);
    assert!(m.answers.is_empty());
    assert_eq!(soa_of(&m).unwrap().0, "pigsty.");
    let m = ask(srv.addr, "a.b.pigsty.", RecordType::A).unwrap();
    assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 10)]);
}

#[test]
fn a_refused_zone_set_is_one_usage_error() {
    let t = tempfile::tempdir().unwrap();
    let file = write(
        t.path(),
        "h.yml",
        "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n",
    );
    let f = file.to_str().unwrap();
    for (args, env, says) in [
        (
            vec!["--zone", "pigsty.local"],
            None,
            "--zone \"pigsty.local\" is under local",
        ),
        (
            vec!["--zone", "pigsty", "--zone", "a.pigsty"],
            None,
            "overlaps the served zone pigsty",
        ),
        (vec!["--zone", "10.in-addr.arpa"], None, "is under arpa"),
        (vec![], Some("pigsty.test,pigsty.test"), "is given twice"),
    ] {
        let mut a = vec!["check", f];
        a.extend(args.iter().copied());
        let r = match env {
            Some(v) => run_env(&a, &[("PIGSTY_DNS_ZONE", v)]),
            None => run(&a),
        };
        assert_eq!(r.code, 2, "{a:?}: {}", r.stderr);
        assert!(r.error_line().contains(says), "{a:?}: {}", r.stderr);
        assert_eq!(
            r.stderr.lines().filter(|l| l.starts_with("error:")).count(),
            1
        );
        assert!(r.stderr.contains("\nnext: "), "{}", r.stderr);
    }
    // The environment variable lists several; the first takes single labels.
    let r = run_env(
        &["check", "--json", f],
        &[("PIGSTY_DNS_ZONE", "pigsty,pigsty.test")],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["served"][0]["name"], "meta.pigsty");
    assert_eq!(v["zones"], serde_json::json!(["pigsty", "pigsty.test"]));
}

/// A copy of `tests/data/state-one-zone`, a state dir written by the release before zone sets (one
/// zone, `pigsty.test`; its generation file as that release wrote it), with the modes a state dir has.
fn old_state_dir(into: &Path) -> std::path::PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/state-one-zone");
    let state = into.join("state");
    fs::create_dir_all(state.join("generations")).unwrap();
    for e in fs::read_dir(from.join("generations")).unwrap() {
        let e = e.unwrap();
        let to = state.join("generations").join(e.file_name());
        fs::copy(e.path(), &to).unwrap();
        fs::set_permissions(&to, fs::Permissions::from_mode(0o600)).unwrap();
    }
    for d in [&state, &state.join("generations")] {
        fs::set_permissions(d, fs::Permissions::from_mode(0o700)).unwrap();
    }
    state
}

#[test]
fn a_state_dir_of_the_one_zone_release_keeps_serving_after_the_upgrade() {
    let t = tempfile::tempdir().unwrap();
    let state = old_state_dir(t.path());
    let file = fs::read_dir(state.join("generations"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let before = fs::read(&file).unwrap();
    // Read as it was written: the same bytes, the same record digest.
    let g = pigsty_dns::store::check_file(&file).unwrap();
    assert_eq!(g.encode(), before);
    assert!(g.zones.is_empty());
    assert_eq!(
        g.record_digest,
        "5a14d0f03b4c86e65ad7ee5d184ee40f4e2caa08300dacc4a923c28aaca57d94"
    );
    // The upgraded daemon (both zones by default) serves it at once.
    let srv = start(&state, &[]);
    assert_eq!(soa_serial(srv.addr), 1);
    let m = ask(srv.addr, "pg-meta.pigsty.test.", RecordType::A).unwrap();
    assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 10)]);
    let m = ask(srv.addr, "10.10.10.10.in-addr.arpa.", RecordType::PTR).unwrap();
    assert_eq!(ptr_of(&m), ["meta.pigsty.test."]);
    // The zone it did not serve is an apex with nothing under it until the next load: authoritative
    // (nothing leaks upstream), never REFUSED.
    let m = ask(srv.addr, "pigsty.", RecordType::SOA).unwrap();
    assert_eq!(soa_of(&m).map(|s| s.2), Some(1));
    let m = ask(srv.addr, "i.pigsty.", RecordType::A).unwrap();
    assert_eq!(rcode(&m), ResponseCode::NXDomain);
    let st = status_file(&state).unwrap();
    assert_eq!(st["serial"], 1);
    assert!(st["last_error"].is_null(), "{st}");
    let r = run(&["status", "--state-dir", state.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.starts_with("pigsty-dns: running\n"),
        "{}",
        r.stdout
    );
    // The next load seals both zones, and i.pigsty is served.
    let input = t.path().join("host-names.yml");
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("zones/pigsty.test.yml"),
        &input,
    )
    .unwrap();
    let r = load(&state, &input, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("+ i.pigsty 10.10.10.10\n"),
        "{}",
        r.stdout
    );
    let m = ask(srv.addr, "i.pigsty.", RecordType::A).unwrap();
    assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 10)]);
    // The old file is untouched and still listed good.
    assert_eq!(fs::read(&file).unwrap(), before);
    let r = run(&["history", "--state-dir", state.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// A unit rendered by the release before zone sets runs `serve --zone pigsty.test`; a `load` with the
/// new default seals both zones. That server serves what it has (its zone goes live, `pigsty` stays
/// outside: REFUSED) rather than nothing; a server whose first zone differs refuses the generation.
#[test]
fn a_one_zone_server_serves_its_zone_of_a_two_zone_generation() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let input = t.path().join("host-names.yml");
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("zones/pigsty.test.yml"),
        &input,
    )
    .unwrap();
    let srv = start(&state, &["--zone", "pigsty.test"]);
    let r = load(&state, &input, &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("live (serial 1)"), "{}", r.stdout);
    let m = ask(srv.addr, "meta.pigsty.test.", RecordType::A).unwrap();
    assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 10)]);
    let m = ask(srv.addr, "i.pigsty.", RecordType::A).unwrap();
    assert_eq!(rcode(&m), ResponseCode::Refused);
    // It holds and counts what it answers: the 3 pigsty.test names, not the 3 of pigsty.
    assert_eq!(status_file(&state).unwrap()["records"], 3);
    drop(srv);
    // First zone pigsty: single labels would be other names, so the generation is not served.
    let srv = start(&state, &["--zone", "pigsty,pigsty.test"]);
    assert_eq!(
        soa_of(&ask(srv.addr, "pigsty.", RecordType::SOA).unwrap()).map(|s| s.2),
        Some(0)
    );
    let st = status_file(&state).unwrap();
    let why = st["last_error"].as_str().unwrap_or_default().to_string();
    assert!(why.contains("their first zones"), "{st}");
}
