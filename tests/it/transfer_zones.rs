//! Zone transfer of every zone of the default set (issue 37): one real Knot is a secondary of
//! `pigsty.test`, `pigsty` and the reverse zone, learns of each swap through a NOTIFY per zone,
//! transfers each (AXFR, then IXFR), and then answers a query set of both forward zones exactly as
//! pigsty-dns does. A zone's transfer holds its own names only (read with dig's AXFR too).
//!
//! Gated on `PIGSTY_DNS_E2E=1` (Debian's `knot`, and `dig`). Every process runs in its own process
//! group and is stopped by PID in a Drop guard ([`Proc`]); only 127.0.0.1 receives traffic.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use hickory_proto::rr::RecordType;

use crate::differential::{Case, Proc, find_program, free_port};
use crate::transfer::{SYNC_WAIT, Secondary, compare, soa_serial, tail};

const APEXES: [&str; 3] = ["pigsty.test.", "pigsty.", "10.10.10.in-addr.arpa."];

fn records(extra: &str) -> String {
    format!(
        "all:\n  hosts:\n    10.10.10.10: {{ nodename: meta }}\n    10.10.10.11: {{ nodename: node-b }}\n  vars:\n    vm_hosts:\n      - address: 10.10.10.10\n        names: [i.pigsty, sss.pigsty, pg-meta.pigsty.test]\n      - address: 10.10.10.12\n        names: [a.b.pigsty{extra}]\n"
    )
}

fn start_knot(dir: &Path, primary: SocketAddr) -> (SocketAddr, Proc) {
    std::fs::create_dir_all(dir.join("storage")).unwrap();
    let port = free_port();
    let conf = dir.join("knot.conf");
    let mut zones = String::new();
    for z in APEXES {
        let z = z.trim_end_matches('.');
        zones.push_str(&format!(
            "  - domain: {z}\n    file: \"{}/{z}.zone\"\n",
            dir.display()
        ));
    }
    std::fs::write(
        &conf,
        format!(
            "server:\n    rundir: \"{k}\"\n    listen: 127.0.0.1@{port}\n    udp-workers: 1\n    \
             tcp-workers: 1\n    background-workers: 1\n\
             database:\n    storage: \"{k}/storage\"\n\
             control:\n    listen: \"{k}/knot.sock\"\n\
             log:\n  - target: stderr\n    any: info\n\
             remote:\n  - id: pigsty\n    address: {p}\n\
             acl:\n  - id: notify\n    address: 127.0.0.1\n    action: notify\n\
             template:\n  - id: default\n    storage: \"{k}\"\n    zonefile-sync: -1\n    \
             zonefile-load: none\n    journal-content: changes\n    master: pigsty\n    acl: notify\n\
             zone:\n{zones}",
            k = dir.display(),
            p = primary.to_string().replace(':', "@"),
        ),
    )
    .unwrap();
    let p = Proc::start(
        "knotd",
        &find_program("knotd"),
        &["-c", conf.to_str().unwrap()],
        dir.join("knotd.log"),
    );
    (([127, 0, 0, 1], port).into(), p)
}

/// Waits until `knot` serves `serial` in every zone.
fn wait_all(knot: &mut Secondary, serial: u32) {
    let deadline = Instant::now() + SYNC_WAIT;
    loop {
        if let Some(st) = knot.proc_.exited() {
            panic!("knot exited ({st}): {}", knot.proc_.log_text());
        }
        let got: Vec<Option<u32>> = APEXES.iter().map(|a| soa_serial(knot.addr, a)).collect();
        if got.iter().all(|s| *s == Some(serial)) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "knot not on serial {serial} in every zone ({got:?}); log tail:\n{}",
            tail(&knot.proc_.log_text(), 30)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The owner names of `dig AXFR zone` from pigsty-dns.
fn axfr_owners(primary: SocketAddr, zone: &str) -> Vec<String> {
    let out = std::process::Command::new(find_program("dig"))
        .args([
            "@127.0.0.1",
            "-p",
            &primary.port().to_string(),
            "+nocmd",
            "+nostats",
            "+noall",
            "+answer",
            "AXFR",
            zone,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "dig: {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

fn query_set() -> Vec<Case> {
    let mut cases = Vec::new();
    for apex in APEXES {
        for t in [RecordType::SOA, RecordType::NS] {
            cases.push(Case::plain(apex, t));
        }
    }
    for n in [
        "meta.pigsty.test.",
        "node-b.pigsty.test.",
        "pg-meta.pigsty.test.",
        "nope.pigsty.test.",
        "i.pigsty.",
        "sss.pigsty.",
        "a.b.pigsty.",
        "b.pigsty.",
        "c.b.pigsty.",
        "nope.pigsty.",
    ] {
        for t in [RecordType::A, RecordType::AAAA] {
            cases.push(Case::plain(n, t));
        }
    }
    for o in [10, 11, 12, 13] {
        cases.push(Case::plain(
            &format!("{o}.10.10.10.in-addr.arpa."),
            RecordType::PTR,
        ));
    }
    cases
}

#[test]
fn knot_follows_each_zone_of_the_set() {
    if !crate::util::e2e() {
        eprintln!(
            "skipped: set PIGSTY_DNS_E2E=1 (needs knot and dig: bash tests/install-peers.sh)"
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let state = dir.join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let file = crate::util::write(dir, "host-names.yml", &records(""));
    let r = crate::util::load(&state, &file, &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let primary: SocketAddr = ([127, 0, 0, 1], free_port()).into();
    let (kaddr, kproc) = start_knot(&dir.join("knot"), primary);
    let listen = primary.to_string();
    let notify = kaddr.to_string();
    let mut pig = Proc::start(
        "pigsty-dns",
        Path::new(crate::util::BIN),
        &[
            "serve",
            "--listen",
            &listen,
            "--state-dir",
            state.to_str().unwrap(),
            "--allow-transfer",
            "127.0.0.1",
            "--notify",
            &notify,
        ],
        dir.join("pigsty-dns.log"),
    );
    let deadline = Instant::now() + SYNC_WAIT;
    while soa_serial(primary, "pigsty.") != Some(1) {
        if let Some(st) = pig.exited() {
            panic!("pigsty-dns exited ({st}): {}", pig.log_text());
        }
        assert!(Instant::now() < deadline, "pigsty-dns not up");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Each zone's transfer: its own names only.
    let pigsty = axfr_owners(primary, "pigsty");
    assert!(
        pigsty.contains(&"i.pigsty.".to_string())
            && pigsty.iter().all(|n| !n.ends_with("pigsty.test.")),
        "{pigsty:?}"
    );
    let test = axfr_owners(primary, "pigsty.test");
    assert!(
        test.contains(&"pg-meta.pigsty.test.".to_string())
            && test.iter().all(|n| n.ends_with("pigsty.test.")),
        "{test:?}"
    );
    let mut knot = Secondary {
        name: "knot",
        addr: kaddr,
        proc_: kproc,
    };
    wait_all(&mut knot, 1);
    let cases = query_set();
    let diffs = compare(primary, &knot, &cases);
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    // A change in zone pigsty only: NOTIFY for each zone, every zone on serial 2 (IXFR).
    std::fs::write(&file, records(", c.b.pigsty")).unwrap();
    let r = crate::util::load(&state, &file, &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    wait_all(&mut knot, 2);
    let diffs = compare(primary, &knot, &cases);
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    let log = knot.proc_.log_text();
    assert!(
        !log.to_ascii_lowercase().contains("out-of-zone"),
        "knot saw a record outside a zone: {}",
        tail(&log, 30)
    );
}
