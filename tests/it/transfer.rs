//! Zone transfer to real secondaries: Knot, NSD and BIND each run as a secondary of pigsty-dns on
//! loopback, learn of each swap through NOTIFY, transfer (AXFR first, then IXFR), and must then answer a
//! generated query set exactly as pigsty-dns does (the differential suite's normal form). A fourth
//! secondary (Knot) transfers from an address that is not allowed: it is refused and stays on the serial
//! it loaded from a file.
//!
//! Gated on `PIGSTY_DNS_E2E=1` (needs Debian's `knot`, `nsd` and `bind9`; `tests/install-peers.sh`
//! installs them). Every process runs under `timeout` in its own process group and is stopped by PID in
//! a Drop guard (the differential suite's [`Proc`]). Only 127.0.0.0/8 receives traffic.

use std::fmt::Write as _;
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hickory_proto::op::Message;
use hickory_proto::rr::{RData, RecordType};

use crate::differential::{
    Case, Norm, Proc, differing, find_program, free_port, normalize, udp_exchange,
};

pub(crate) const ZONE: &str = "pigsty.test.";
/// The runs here serve one zone, as the secondaries are set up for (`transfer_zones.rs` has a
/// secondary of each zone of the default set).
pub(crate) const ONE_ZONE: &[&str] = &["--zone", "pigsty.test"];
pub(crate) const REVERSE: &str = "10.10.10.in-addr.arpa.";
/// Swaps made under query load; each is waited for on every secondary.
const SWAPS: u32 = 30;
/// A secondary must serve a new serial within this after the swap.
pub(crate) const SYNC_WAIT: Duration = Duration::from_secs(20);
const START_WAIT: Duration = Duration::from_secs(20);

/// The records file of generation `n`: fixed hosts, a set that grows and shrinks with `n`, and a name
/// that moves every time (so every swap changes A and PTR records both ways).
pub(crate) fn yaml(n: u32) -> String {
    let mut y = String::from(
        "all:\n  hosts:\n    10.10.10.10: { nodename: meta }\n    10.10.10.11: { nodename: node-b }\n  vars:\n    vm_hosts:\n",
    );
    let dynamic = 3 + n % 7;
    for k in 0..dynamic {
        writeln!(y, "      - address: 10.10.10.{}", 100 + k).unwrap();
        writeln!(y, "        names: [dyn-{k}, dyn-{k}.svc.pigsty.test]").unwrap();
    }
    writeln!(y, "      - address: 10.10.10.{}", 200 + n % 40).unwrap();
    writeln!(y, "        names: [moving-{n}]").unwrap();
    y
}

/// The queries compared: every name any generation may hold (A, AAAA, ANY-free), both apexes' SOA
/// and NS, empty non-terminals, every PTR slot used, and names that never exist.
pub(crate) fn query_set() -> Vec<Case> {
    let mut names: Vec<(String, RecordType)> = Vec::new();
    for apex in [ZONE, REVERSE] {
        for t in [RecordType::SOA, RecordType::NS, RecordType::A] {
            names.push((apex.to_string(), t));
        }
    }
    let mut fwd = vec![
        "meta".to_string(),
        "node-b".into(),
        "svc".into(),
        "nope".into(),
    ];
    for k in 0..10 {
        fwd.push(format!("dyn-{k}"));
        fwd.push(format!("dyn-{k}.svc"));
    }
    for n in 0..=SWAPS + 1 {
        fwd.push(format!("moving-{n}"));
    }
    for rel in fwd {
        for t in [RecordType::A, RecordType::AAAA] {
            names.push((format!("{rel}.{ZONE}"), t));
        }
    }
    let mut octets: Vec<u32> = vec![10, 11, 12, 99];
    octets.extend(100..110);
    octets.extend(200..240);
    for o in octets {
        names.push((format!("{o}.{REVERSE}"), RecordType::PTR));
    }
    names.into_iter().map(|(n, t)| Case::plain(&n, t)).collect()
}

pub(crate) fn soa_serial(addr: SocketAddr, apex: &str) -> Option<u32> {
    let q = Case::plain(apex, RecordType::SOA).wire(4242);
    let reply = udp_exchange(addr, &q).ok()?;
    let m = Message::from_vec(&reply).ok()?;
    m.answers.iter().find_map(|r| match &r.data {
        RData::SOA(s) => Some(s.serial),
        _ => None,
    })
}

/// A TSIG key: name and base64 secret.
pub(crate) type Key<'a> = (&'a str, &'a str);

pub(crate) struct Secondary {
    pub(crate) name: &'static str,
    pub(crate) addr: SocketAddr,
    pub(crate) proc_: Proc,
}

impl Secondary {
    pub(crate) fn wait_serial(&mut self, serial: u32, wait: Duration) {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(st) = self.proc_.exited() {
                panic!(
                    "{} exited ({st}); log:\n{}",
                    self.name,
                    self.proc_.log_text()
                );
            }
            let fwd = soa_serial(self.addr, ZONE);
            let rev = soa_serial(self.addr, REVERSE);
            if fwd == Some(serial) && rev == Some(serial) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} not on serial {serial} within {wait:?} (forward {fwd:?}, reverse {rev:?}); log tail:\n{}",
                self.name,
                tail(&self.proc_.log_text(), 30)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

pub(crate) fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Every query of the set answered identically by pigsty-dns and the secondary.
pub(crate) fn compare(pigsty: SocketAddr, s: &Secondary, cases: &[Case]) -> Vec<String> {
    let mut diffs = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let q = c.wire(i as u16 + 1);
        let ask = |a| udp_exchange(a, &q).and_then(|r| normalize(&q, &r));
        let (p, t): (Result<Norm, String>, Result<Norm, String>) = (ask(pigsty), ask(s.addr));
        match (p, t) {
            (Ok(p), Ok(t)) if p == t => {}
            (Ok(p), Ok(t)) => diffs.push(format!(
                "{}: {} differs in {:?}\n  pigsty-dns: {p:?}\n  {}: {t:?}",
                c.describe(),
                s.name,
                differing(&p, &t),
                s.name
            )),
            (p, t) => diffs.push(format!("{}: pigsty {p:?}, {} {t:?}", c.describe(), s.name)),
        }
    }
    diffs
}

fn write_private(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

fn start_knot(
    dir: &Path,
    knotd: &Path,
    primary: SocketAddr,
    via: &str,
    zonefiles: Option<(&Path, &Path)>,
    key: Option<Key>,
) -> (SocketAddr, Proc) {
    std::fs::create_dir_all(dir.join("storage")).unwrap();
    // With a key, NOTIFY too is taken only signed with it.
    let (key_section, key_ref) = match key {
        Some((n, secret)) => (
            format!("key:\n  - id: {n}\n    algorithm: hmac-sha256\n    secret: {secret}\n"),
            format!("    key: {n}\n"),
        ),
        None => (String::new(), String::new()),
    };
    let port = free_port();
    let conf = dir.join("knot.conf");
    let (fwd_file, rev_file, load) = match zonefiles {
        Some((f, r)) => (f.display().to_string(), r.display().to_string(), "whole"),
        None => (
            format!("{}/pigsty.test.zone", dir.display()),
            format!("{}/reverse.zone", dir.display()),
            "none",
        ),
    };
    write_private(
        &conf,
        &format!(
            "server:\n    rundir: \"{k}\"\n    listen: 127.0.0.1@{port}\n    udp-workers: 1\n    \
             tcp-workers: 1\n    background-workers: 1\n\
             database:\n    storage: \"{k}/storage\"\n\
             control:\n    listen: \"{k}/knot.sock\"\n\
             log:\n  - target: stderr\n    any: info\n\
             {key_section}\
             remote:\n  - id: pigsty\n    address: {p}\n    via: {via}\n{key_ref}\
             acl:\n  - id: notify\n    address: 127.0.0.1\n    action: notify\n{key_ref}\
             template:\n  - id: default\n    storage: \"{k}\"\n    zonefile-sync: -1\n    \
             zonefile-load: {load}\n    journal-content: changes\n    master: pigsty\n    acl: notify\n\
             zone:\n  - domain: pigsty.test\n    file: \"{f}\"\n  - domain: 10.10.10.in-addr.arpa\n    \
             file: \"{r}\"\n",
            k = dir.display(),
            p = primary.to_string().replace(':', "@"),
            f = fwd_file,
            r = rev_file,
        ),
    );
    let p = Proc::start(
        "knotd",
        knotd,
        &["-c", conf.to_str().unwrap()],
        dir.join("knotd.log"),
    );
    (([127, 0, 0, 1], port).into(), p)
}

fn start_nsd(
    dir: &Path,
    nsd: &Path,
    primary: SocketAddr,
    via: &str,
    key: Option<Key>,
) -> (SocketAddr, Proc) {
    std::fs::create_dir_all(dir).unwrap();
    let (key_section, key_ref) = match key {
        Some((n, secret)) => (
            format!("key:\n    name: {n}\n    algorithm: hmac-sha256\n    secret: \"{secret}\"\n"),
            n.to_string(),
        ),
        None => (String::new(), "NOKEY".to_string()),
    };
    let port = free_port();
    let conf = dir.join("nsd.conf");
    let p = primary.to_string().replace(':', "@");
    let mut zones = String::new();
    for z in ["pigsty.test", "10.10.10.in-addr.arpa"] {
        write!(
            zones,
            "zone:\n    name: {z}\n    request-xfr: {p} {key_ref}\n    allow-notify: 127.0.0.1 {key_ref}\n    \
             outgoing-interface: {via}\n"
        )
        .unwrap();
    }
    write_private(
        &conf,
        &format!(
            "server:\n    ip-address: 127.0.0.1@{port}\n    server-count: 1\n    reuseport: no\n    \
             username: \"\"\n    chroot: \"\"\n    database: \"\"\n    zonesdir: \"{n}\"\n    \
             zonelistfile: \"{n}/zone.list\"\n    xfrdfile: \"{n}/xfrd.state\"\n    xfrdir: \"{n}\"\n    \
             pidfile: \"{n}/nsd.pid\"\n    rrl-ratelimit: 0\n    rrl-whitelist-ratelimit: 0\n    \
             verbosity: 2\n    zonefiles-write: 0\n    minimal-responses: yes\n\
             remote-control:\n    control-enable: no\n{key_section}{zones}",
            n = dir.display(),
        ),
    );
    let pr = Proc::start(
        "nsd",
        nsd,
        &["-d", "-c", conf.to_str().unwrap()],
        dir.join("nsd.log"),
    );
    (([127, 0, 0, 1], port).into(), pr)
}

fn start_named(
    dir: &Path,
    named: &Path,
    primary: SocketAddr,
    via: &str,
    key: Option<Key>,
) -> (SocketAddr, Proc) {
    std::fs::create_dir_all(dir).unwrap();
    let (key_section, key_ref) = match key {
        Some((n, secret)) => (
            format!("key \"{n}\" {{ algorithm hmac-sha256; secret \"{secret}\"; }};\n"),
            format!(" key \"{n}\""),
        ),
        None => (String::new(), String::new()),
    };
    let port = free_port();
    let conf = dir.join("named.conf");
    let mut zones = String::new();
    for z in ["pigsty.test", "10.10.10.in-addr.arpa"] {
        writeln!(
            zones,
            "zone \"{z}\" {{ type secondary; primaries {{ {ip} port {pp}{key_ref}; }}; file \"{z}.db\"; }};",
            ip = primary.ip(),
            pp = primary.port()
        )
        .unwrap();
    }
    write_private(
        &conf,
        &format!(
            "options {{\n  directory \"{b}\";\n  listen-on port {port} {{ 127.0.0.1; }};\n  \
             listen-on-v6 {{ none; }};\n  pid-file \"{b}/named.pid\";\n  session-keyfile \"{b}/session.key\";\n  \
             managed-keys-directory \"{b}\";\n  recursion no;\n  notify no;\n  dnssec-validation no;\n  \
             transfer-source {via};\n  allow-query {{ any; }};\n  minimal-responses yes;\n}};\n\
             controls {{ }};\n{key_section}{zones}",
            b = dir.display(),
        ),
    );
    let pr = Proc::start(
        "named",
        named,
        &["-g", "-n", "1", "-c", conf.to_str().unwrap()],
        dir.join("named.log"),
    );
    (([127, 0, 0, 1], port).into(), pr)
}

/// The `zone transfer` log lines of pigsty-dns for one peer address, by answer kind.
pub(crate) fn transfers_logged(log: &str, peer: &str) -> (usize, usize) {
    let mine = log
        .lines()
        .filter(|l| l.contains("zone transfer") && l.contains(&format!("peer={peer} ")));
    let (mut full, mut incremental) = (0, 0);
    for l in mine {
        if l.contains("answer=\"full zone\"") {
            full += 1;
        } else if l.contains("answer=incremental") || l.contains("answer=\"incremental\"") {
            incremental += 1;
        }
    }
    (full, incremental)
}

/// A state dir holding generation 1 of [`yaml`] and its two zones exported as files.
fn first_generation(
    dir: &Path,
) -> (
    std::path::PathBuf,
    std::path::PathBuf,
    (std::path::PathBuf, std::path::PathBuf),
) {
    let state = dir.join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let records = crate::util::write(dir, "host-names.yml", &yaml(1));
    let r = crate::util::load(&state, &records, ONE_ZONE);
    assert_eq!(r.code, 0, "load: {}{}", r.stdout, r.stderr);
    let files = (dir.join("fwd-1.zone"), dir.join("rev-1.zone"));
    for (zone_of, file) in [("forward", &files.0), ("reverse", &files.1)] {
        let r = crate::util::run(&[
            "export",
            "--format",
            "zone",
            "--zone-of",
            zone_of,
            "--state-dir",
            state.to_str().unwrap(),
            "-o",
            file.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 0, "export: {}{}", r.stdout, r.stderr);
    }
    (state, records, files)
}

/// Waits until `log` of `p` holds `needle` (case-insensitive), bounded.
pub(crate) fn wait_log(p: &Proc, needle: &str, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    while Instant::now() < deadline {
        if p.log_text().to_ascii_lowercase().contains(needle) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// The fourth secondary of a run: a Knot started from the exported files of serial 1 that
/// pigsty-dns must refuse (`dir` under the temp dir, `via` its source address).
pub(crate) struct Fourth {
    pub(crate) dir: &'static str,
    pub(crate) via: &'static str,
    pub(crate) name: &'static str,
    /// The key it signs with (`None`: unsigned).
    pub(crate) key: Option<Key<'static>>,
}

/// pigsty-dns serving generation 1 with Knot, NSD and BIND following it, and the refused fourth.
pub(crate) struct Run {
    pub(crate) state: std::path::PathBuf,
    pub(crate) records: std::path::PathBuf,
    pub(crate) primary: SocketAddr,
    pub(crate) pig: Proc,
    pub(crate) secondaries: Vec<Secondary>,
    pub(crate) fourth: Secondary,
}

/// Starts a [`Run`] in `dir`: the three secondaries transfer with `key` (if any), pigsty-dns gets
/// `extra` flags besides the transfer ACL and the NOTIFY targets; returns once pigsty-dns answers
/// on serial 1 and every secondary, the fourth too, holds serial 1.
pub(crate) fn start_run(dir: &Path, key: Option<Key>, extra: &[&str], fourth: Fourth) -> Run {
    let (knotd, nsd, named) = (
        find_program("knotd"),
        find_program("nsd"),
        find_program("named"),
    );
    let (state, records, (fwd1, rev1)) = first_generation(dir);
    // Ports first: pigsty-dns needs the secondaries' addresses for --notify, they need its address.
    let primary: SocketAddr = ([127, 0, 0, 1], free_port()).into();
    let (kaddr, kproc) = start_knot(&dir.join("knot"), &knotd, primary, "127.0.0.1", None, key);
    let (naddr, nproc) = start_nsd(&dir.join("nsd"), &nsd, primary, "127.0.0.2", key);
    let (baddr, bproc) = start_named(&dir.join("named"), &named, primary, "127.0.0.4", key);
    let (daddr, dproc) = start_knot(
        &dir.join(fourth.dir),
        &knotd,
        primary,
        fourth.via,
        Some((&fwd1, &rev1)),
        fourth.key,
    );
    let listen = primary.to_string();
    let mut args = vec![
        "serve",
        "--listen",
        &listen,
        "--state-dir",
        state.to_str().unwrap(),
        "--allow-transfer",
        "127.0.0.1",
        "--allow-transfer",
        "127.0.0.2",
        "--allow-transfer",
        "127.0.0.4",
    ];
    args.extend_from_slice(ONE_ZONE);
    args.extend_from_slice(extra);
    let notify: Vec<String> = [kaddr, naddr, baddr]
        .iter()
        .map(|a| a.to_string())
        .collect();
    for a in &notify {
        args.extend(["--notify", a.as_str()]);
    }
    let mut pig = Proc::start(
        "pigsty-dns",
        Path::new(crate::util::BIN),
        &args,
        dir.join("pigsty-dns.log"),
    );
    let deadline = Instant::now() + START_WAIT;
    while soa_serial(primary, ZONE) != Some(1) {
        if let Some(st) = pig.exited() {
            panic!("pigsty-dns exited ({st}): {}", pig.log_text());
        }
        assert!(
            Instant::now() < deadline,
            "pigsty-dns not up: {}",
            pig.log_text()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut secondaries = vec![
        Secondary {
            name: "knot",
            addr: kaddr,
            proc_: kproc,
        },
        Secondary {
            name: "nsd",
            addr: naddr,
            proc_: nproc,
        },
        Secondary {
            name: "bind",
            addr: baddr,
            proc_: bproc,
        },
    ];
    let mut fourth = Secondary {
        name: fourth.name,
        addr: daddr,
        proc_: dproc,
    };
    for s in &mut secondaries {
        s.wait_serial(1, START_WAIT);
    }
    fourth.wait_serial(1, START_WAIT);
    Run {
        state,
        records,
        primary,
        pig,
        secondaries,
        fourth,
    }
}

/// Asks the Knot behind control socket `sock` to refresh `zones` at once (not at its refresh timer).
pub(crate) fn knot_refresh(sock: &Path, zones: &[&str]) {
    for z in zones {
        let out = std::process::Command::new(find_program("knotc"))
            .args(["-s", sock.to_str().unwrap(), "zone-refresh", z])
            .output()
            .unwrap();
        assert!(out.status.success(), "knotc: {out:?}");
    }
}

/// Asks the Knot behind control socket `sock` to refresh the forward zone; true once its log
/// says `why` (the error it was answered with, within 10 s).
fn refresh_is_refused(sock: &Path, knot: &Proc, why: &str) -> bool {
    knot_refresh(sock, &["pigsty.test"]);
    wait_log(knot, why, Duration::from_secs(10))
}

/// pigsty-dns's transfer counters from its status file, once `ready` holds of them (bounded wait).
pub(crate) fn transfer_counters(
    state: &Path,
    ready: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let st: serde_json::Value = std::fs::read(state.join("status.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        if ready(&st) || Instant::now() > deadline {
            return st;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub(crate) fn count(st: &serde_json::Value, field: &str) -> u64 {
    st["transfers"][field].as_u64().unwrap_or(0)
}

#[test]
fn knot_nsd_and_bind_follow_every_swap() {
    if !crate::util::e2e() {
        eprintln!(
            "skipped: set PIGSTY_DNS_E2E=1 (needs knot, nsd and bind9: bash tests/install-peers.sh)"
        );
        return;
    }
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let Run {
        state,
        records,
        primary,
        pig,
        mut secondaries,
        fourth: denied,
    } = start_run(
        dir,
        None,
        &[],
        Fourth {
            dir: "denied",
            via: "127.0.0.9",
            name: "knot (not allowed)",
            key: None,
        },
    );
    let cases = query_set();
    let mut failures = Vec::new();
    for s in &secondaries {
        failures.extend(compare(primary, s, &cases));
    }
    let first_sync = started.elapsed();

    // Query load on pigsty-dns for the whole run of swaps: every query must be answered.
    let stop = Arc::new(AtomicBool::new(false));
    let (asked, answered) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let load = {
        let (stop, asked, answered) = (stop.clone(), asked.clone(), answered.clone());
        let cases = cases.clone();
        std::thread::spawn(move || {
            let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
            sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let mut buf = [0u8; 1500];
            let mut i = 0usize;
            while !stop.load(Ordering::Relaxed) && i < 2_000_000 {
                let q = cases[i % cases.len()].wire((i % 60_000) as u16 + 1);
                i += 1;
                asked.fetch_add(1, Ordering::Relaxed);
                if sock.send_to(&q, primary).is_ok()
                    && let Ok((n, _)) = sock.recv_from(&mut buf)
                    && n >= 2
                    && buf[..2] == q[..2]
                {
                    answered.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    let mut swap_times = Vec::new();
    for n in 2..=SWAPS + 1 {
        std::fs::write(&records, yaml(n)).unwrap();
        let t = Instant::now();
        let r = crate::util::load(&state, &records, ONE_ZONE);
        assert_eq!(r.code, 0, "load {n}: {}{}", r.stdout, r.stderr);
        for s in &mut secondaries {
            s.wait_serial(n, SYNC_WAIT);
        }
        swap_times.push(t.elapsed());
        // The full comparison after the first few and the last swap (each costs ~400 exchanges).
        if n <= 4 || n == SWAPS + 1 {
            for s in &secondaries {
                failures.extend(compare(primary, s, &cases));
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    load.join().unwrap();
    let last = SWAPS + 1;

    // The secondary that may not transfer: asked to refresh, it is refused and keeps serial 1.
    let refused = refresh_is_refused(&dir.join("denied/knot.sock"), &denied.proc_, "refused");
    let denied_log = denied.proc_.log_text();
    assert_eq!(
        soa_serial(denied.addr, ZONE),
        Some(1),
        "denied secondary moved: {denied_log}"
    );
    assert!(
        refused,
        "the denied secondary logged no refusal:\n{}",
        tail(&denied_log, 30)
    );

    let log = pig.log_text();
    let per_peer: Vec<(&str, (usize, usize))> = [
        ("knot", "127.0.0.1"),
        ("nsd", "127.0.0.2"),
        ("bind", "127.0.0.4"),
    ]
    .iter()
    .map(|(n, ip)| (*n, transfers_logged(&log, ip)))
    .collect();
    let mut sorted = swap_times.clone();
    sorted.sort();
    eprintln!(
        "transfer: first sync of 3 secondaries {:.2} s; {SWAPS} swaps, swap → all 3 on the new serial median {:?} max {:?}; \
         {} of {} load queries answered; transfers (full, incremental) {per_peer:?}; total {:.1} s",
        first_sync.as_secs_f64(),
        sorted[sorted.len() / 2],
        sorted[sorted.len() - 1],
        answered.load(Ordering::Relaxed),
        asked.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(
        answered.load(Ordering::Relaxed),
        asked.load(Ordering::Relaxed),
        "queries went unanswered during the swaps"
    );
    for (name, (full, incremental)) in &per_peer {
        // One full transfer of each zone to start with; every later one incremental.
        assert!(*full >= 2, "{name}: {full} full transfers");
        assert!(
            *incremental >= 2 * (last as usize - 1) * 9 / 10,
            "{name}: only {incremental} incremental transfers for {SWAPS} swaps of 2 zones"
        );
    }
    // Secondaries acknowledged the last NOTIFY: `status` says so.
    let want: Vec<String> = secondaries
        .iter()
        .map(|s| format!("secondary {}: acknowledged serial {last}", s.addr))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    let st = loop {
        let st = crate::util::run(&["status", "--state-dir", state.to_str().unwrap()]);
        if want.iter().all(|w| st.stdout.contains(w)) || Instant::now() > deadline {
            break st;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    for s in &secondaries {
        assert!(
            st.stdout.contains(&format!(
                "secondary {}: acknowledged serial {last},",
                s.addr
            )),
            "status does not show {} on {last}:\n{}",
            s.name,
            st.stdout
        );
    }
    // What the server counted: each secondary began with both zones whole, then followed every swap
    // of both zones incrementally (logged per transfer above; counted here).
    let want_ixfr = 3 * 2 * u64::from(SWAPS) * 9 / 10;
    let st = transfer_counters(&state, |st| count(st, "ixfr") >= want_ixfr);
    let t = &st["transfers"];
    assert!(count(&st, "ixfr") >= want_ixfr, "{t}");
    assert!(
        count(&st, "axfr") + count(&st, "ixfr_as_axfr") >= 3 * 2,
        "{t}"
    );
    // BIND keeps its zones in files across a restart (Knot here keeps only changes in its journal).
    let bind = secondaries.remove(2);
    pruned_serial_gets_the_full_zone(dir, &state, &records, &pig, bind, last);
    drop(secondaries);
    drop(denied);
    drop(pig);
}

/// BIND stopped on serial `last` misses [`pigsty_dns::store::KEEP`] + 1 swaps, so `last` is pruned from
/// the history; the NOTIFYs it misses are failures in `status` and the log. Restarted from its zone
/// files, its IXFR from `last` is answered with the whole zone (counted as such), and it is current again.
fn pruned_serial_gets_the_full_zone(
    dir: &Path,
    state: &Path,
    records: &Path,
    pig: &Proc,
    bind: Secondary,
    last: u32,
) {
    let addr = bind.addr;
    drop(bind);
    let before = transfer_counters(state, |_| true);
    let missed = last + pigsty_dns::store::KEEP as u32 + 1;
    let newest = missed;
    for n in last + 1..=newest {
        std::fs::write(records, yaml(n)).unwrap();
        let r = crate::util::load(state, records, ONE_ZONE);
        assert_eq!(r.code, 0, "load {n}: {}{}", r.stdout, r.stderr);
    }
    let bind_status = |st: &serde_json::Value| {
        st["secondaries"]
            .as_array()
            .and_then(|a| a.iter().find(|s| s["address"] == addr.to_string()))
            .cloned()
            .unwrap_or_default()
    };
    // Every try of the newest NOTIFY (15.5 s of back-off) unanswered: a failure.
    let deadline = Instant::now() + Duration::from_secs(40);
    let st = loop {
        let st = transfer_counters(state, |_| true);
        if bind_status(&st)["failures"].as_u64() >= Some(1) || Instant::now() > deadline {
            break st;
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    let ks = bind_status(&st);
    assert!(ks["failures"].as_u64() >= Some(1), "{ks}");
    assert!(
        ks["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("NOTIFY") && e.contains("5 tries")),
        "{ks}"
    );
    let text = crate::util::run(&["status", "--state-dir", state.to_str().unwrap()]);
    assert!(
        text.stdout
            .lines()
            .any(|l| l.contains(&format!("secondary {addr}:")) && l.contains("last error: NOTIFY")),
        "{}",
        text.stdout
    );
    assert!(
        pig.log_text().contains(&format!("secondary={addr}")),
        "no NOTIFY failure logged"
    );

    // Restarted, BIND loads serial `last` from its files; it refreshes by its files' age, so the next
    // swap's NOTIFY is what makes it ask.
    let bdir = dir.join("named");
    let conf = bdir.join("named.conf");
    let mut bind = Secondary {
        name: "bind (restarted)",
        addr,
        proc_: Proc::start(
            "named",
            &find_program("named"),
            &["-g", "-n", "1", "-c", conf.to_str().unwrap()],
            bdir.join("named-restarted.log"),
        ),
    };
    bind.wait_serial(last, START_WAIT);
    let newest = newest + 1;
    std::fs::write(records, yaml(newest)).unwrap();
    let r = crate::util::load(state, records, ONE_ZONE);
    assert_eq!(r.code, 0, "load {newest}: {}{}", r.stdout, r.stderr);
    bind.wait_serial(newest, SYNC_WAIT);
    let log = bind.proc_.log_text();
    assert!(
        log.contains(&format!("loaded serial {last}")),
        "{}",
        tail(&log, 30)
    );
    let after = transfer_counters(state, |st| {
        count(st, "ixfr_as_axfr") >= count(&before, "ixfr_as_axfr") + 2
    });
    assert!(
        count(&after, "ixfr_as_axfr") >= count(&before, "ixfr_as_axfr") + 2,
        "the IXFRs from pruned serial {last} were not answered whole: before {}, after {}",
        before["transfers"],
        after["transfers"]
    );
    eprintln!(
        "transfer: bind missed {} swaps, its NOTIFY failure shown in status; restarted on {last}, its IXFR answered with the whole zone; counters {}",
        missed - last,
        after["transfers"]
    );
}

#[test]
fn tsig_signed_transfers_and_a_secondary_without_the_key_is_refused() {
    if !crate::util::e2e() {
        eprintln!(
            "skipped: set PIGSTY_DNS_E2E=1 (needs knot, nsd and bind9: bash tests/install-peers.sh)"
        );
        return;
    }
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // A fixed 32-byte secret, in the BIND key file format `tsig-keygen` writes.
    let secret = "cGlnc3R5LWRucyB0c2lnIHRlc3Qga2V5IDMyIGJ5dGU=";
    let key: Key = ("pigsty-xfr", secret);
    let key_file = dir.join("pigsty-xfr.key");
    std::fs::write(
        &key_file,
        format!("key \"pigsty-xfr\" {{\n\talgorithm hmac-sha256;\n\tsecret \"{secret}\";\n}};\n"),
    )
    .unwrap();
    std::fs::set_permissions(
        &key_file,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let Run {
        state,
        records,
        primary,
        pig,
        mut secondaries,
        fourth: nokey,
    } = start_run(
        dir,
        Some(key),
        &["--tsig-key", key_file.to_str().unwrap()],
        // From an allowed address, but without the key.
        Fourth {
            dir: "nokey",
            via: "127.0.0.1",
            name: "knot without the key",
            key: None,
        },
    );
    let cases = query_set();
    let mut failures = Vec::new();
    // Two swaps: the signed IXFRs follow.
    for n in 2..=3 {
        std::fs::write(&records, yaml(n)).unwrap();
        let r = crate::util::load(&state, &records, ONE_ZONE);
        assert_eq!(r.code, 0, "load {n}: {}{}", r.stdout, r.stderr);
        for s in &mut secondaries {
            s.wait_serial(n, SYNC_WAIT);
        }
    }
    for s in &secondaries {
        failures.extend(compare(primary, s, &cases));
    }
    // Unsigned, its IXFR and AXFR are NOTAUTH.
    let refused = refresh_is_refused(&dir.join("nokey/knot.sock"), &nokey.proc_, "'notauth'");
    let log = nokey.proc_.log_text();
    assert!(
        refused,
        "no refusal logged by the secondary without the key:\n{}",
        tail(&log, 20)
    );
    assert_eq!(
        soa_serial(nokey.addr, ZONE),
        Some(1),
        "the secondary without the key moved"
    );
    let plog = pig.log_text();
    let incremental = transfers_logged(&plog, "127.0.0.1").1
        + transfers_logged(&plog, "127.0.0.2").1
        + transfers_logged(&plog, "127.0.0.4").1;
    eprintln!(
        "tsig: 3 keyed secondaries on serial 3 ({incremental} signed incremental transfers), the keyless one refused, in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        incremental >= 3 * 2 * 2,
        "{incremental} incremental transfers"
    );
    // The signed NOTIFY of serial 3 acknowledged by every secondary (Knot and NSD take none unsigned);
    // the keyless Knot's IXFR and AXFR counted as unsigned refusals.
    let st = transfer_counters(&state, |st| {
        count(st, "tsig_unsigned") >= 2
            && st["secondaries"]
                .as_array()
                .is_some_and(|a| a.iter().all(|s| s["acknowledged_serial"] == 3))
    });
    for s in st["secondaries"].as_array().unwrap() {
        assert_eq!(s["acknowledged_serial"], 3, "{s}");
        assert_eq!(s["failures"], 0, "{s}");
    }
    assert!(count(&st, "tsig_unsigned") >= 2, "{}", st["transfers"]);
    assert!(count(&st, "ixfr") >= 3 * 2 * 2, "{}", st["transfers"]);
    assert_eq!(count(&st, "tsig_badsig") + count(&st, "tsig_badkey"), 0);
    drop(secondaries);
    drop(nokey);
    drop(pig);
}
