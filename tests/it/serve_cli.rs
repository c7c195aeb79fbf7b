//! `pigsty-dns serve` as a user runs it: the real binary, a real state dir, real sockets, hickory's
//! message codec as the client. Hot swap under load, live `load`, `--follow`, the server lock, bind
//! errors, signals, `status` and `export`.

use crate::util::*;

use std::fs;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hickory_proto::op::{Message, Query, ResponseCode};
use hickory_proto::rr::{Name, RData, RecordType};

/// A `serve` child that is killed (by PID) when dropped, so no test leaves a server behind.
pub(crate) struct Server {
    child: Child,
    pub(crate) addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        stop(&mut self.child, Duration::ZERO, false);
    }
}

fn spawn(state: &Path, extra: &[&str]) -> Child {
    Command::new(BIN)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--state-dir",
            state.to_str().unwrap(),
        ])
        .args(extra)
        .env_remove("PIGSTY_DNS_LISTEN")
        .env_remove("PIGSTY_DNS_STATE_DIR")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn serve")
}

/// Starts `serve` and waits (bounded) until its status file names a pid of this child and an address.
pub(crate) fn start(state: &Path, extra: &[&str]) -> Server {
    let mut child = spawn(state, extra);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(st) =
            status_file(state).filter(|st| st["pid"] == child.id() && st["state"] == "running")
        {
            let addr = st["listen"][0].as_str().unwrap().parse().unwrap();
            return Server { child, addr };
        }
        if let Ok(Some(code)) = child.try_wait() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("serve exited with {code}: {err}");
        }
        assert!(Instant::now() < deadline, "serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub(crate) fn status_file(state: &Path) -> Option<serde_json::Value> {
    serde_json::from_slice(&fs::read(state.join("status.json")).ok()?).ok()
}

/// One UDP query with hickory's codec; `None` on timeout.
pub(crate) fn ask(addr: SocketAddr, name: &str, rtype: RecordType) -> Option<Message> {
    let sock = UdpSocket::bind(if addr.is_ipv6() {
        "[::1]:0"
    } else {
        "127.0.0.1:0"
    })
    .unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut q = Message::query();
    q.metadata.id = rand_id();
    q.add_query(Query::query(Name::from_ascii(name).unwrap(), rtype));
    sock.send_to(&q.to_vec().unwrap(), addr).unwrap();
    let mut buf = [0u8; 4096];
    let (n, _) = sock.recv_from(&mut buf).ok()?;
    let m = Message::from_vec(&buf[..n]).unwrap();
    assert_eq!(m.metadata.id, q.metadata.id);
    Some(m)
}

fn rand_id() -> u16 {
    (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos()
        % 65_536) as u16
}

pub(crate) fn soa_serial(addr: SocketAddr) -> u32 {
    let m = ask(addr, "pigsty.test.", RecordType::SOA).expect("SOA answer");
    m.answers
        .iter()
        .find_map(|r| {
            if let RData::SOA(s) = &r.data {
                Some(s.serial)
            } else {
                None
            }
        })
        .expect("SOA record")
}

fn flip(dir: &Path, addr: u8) -> PathBuf {
    write(
        dir,
        &format!("h{addr}.yml"),
        &format!(
            "all:\n  hosts: {{10.10.10.{addr}: {{nodename: meta}}}}\n  vars: {{vm_hosts: [{{address: 10.10.10.{addr}, names: [pg-meta]}}]}}\n"
        ),
    )
}

#[test]
fn quickstart_serves_the_sample_and_a_load_goes_live() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/zones/pigsty.test.yml");
    let s = start(&state, &["--records", sample]);
    let m = ask(s.addr, "meta.pigsty.test.", RecordType::A).unwrap();
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.metadata.authoritative);
    assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 10)]);
    assert_eq!(soa_serial(s.addr), 1);
    // load a changed file: confirmed live by the SOA probe, then served.
    let r = load(&state, &flip(t.path(), 20), &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("live (serial 2)"), "{}", r.stdout);
    let m = ask(s.addr, "pg-meta.pigsty.test.", RecordType::A).unwrap();
    assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 20)]);
    // status agrees with the probe.
    let r = run(&["status", "--json", "--state-dir", state.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["running"], true);
    assert_eq!(v["probe"]["udp"]["serial"], 2);
    assert_eq!(v["probe"]["tcp"]["serial"], 2);
    assert_eq!(v["status"]["serial"], 2);
    assert_eq!(v["status"]["records"], 2);
    assert!(v["status"]["last_error"].is_null());
    // Counters reach the status file within a flush interval (1 s) of moving, not at every query: the
    // write at the swap may predate the probes above.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let r = run(&["status", "--json", "--state-dir", state.to_str().unwrap()]);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        if v["status"]["counters"]["noerror"].as_u64().unwrap() >= 3 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "counters never reached the status file: {v}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn hot_swap_under_load_never_mixes_or_fails_and_restart_after_kill_serves_last_good() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let (a, b) = (flip(t.path(), 20), flip(t.path(), 30));
    assert_eq!(load(&state, &a, &[]).code, 0);
    let mut s = start(&state, &[]);
    let addr = s.addr;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let client = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
            sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let mut seen = std::collections::BTreeMap::new();
            let mut buf = [0u8; 4096];
            // Bounded: at most 200,000 queries or until told to stop.
            for i in 0..200_000u32 {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                let mut q = Message::query();
                q.metadata.id = (i % 65_536) as u16;
                q.add_query(Query::query(
                    Name::from_ascii("pg-meta.pigsty.test.").unwrap(),
                    RecordType::A,
                ));
                sock.send_to(&q.to_vec().unwrap(), addr).unwrap();
                let (n, _) = sock
                    .recv_from(&mut buf)
                    .expect("an answer to every query (no timeout)");
                let m = Message::from_vec(&buf[..n]).unwrap();
                assert_eq!(m.metadata.id, q.metadata.id);
                assert_eq!(m.metadata.response_code, ResponseCode::NoError, "query {i}");
                let got = a_of(&m);
                assert_eq!(got.len(), 1, "query {i}: {got:?}");
                *seen.entry(got[0]).or_insert(0u32) += 1;
            }
            seen
        })
    };
    for i in 0..30 {
        let r = load(&state, if i % 2 == 0 { &b } else { &a }, &[]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        assert!(
            r.stdout.contains(&format!("live (serial {})", i + 2)),
            "{}",
            r.stdout
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let seen = client.join().expect("client saw only good answers");
    let allowed = [Ipv4Addr::new(10, 10, 10, 20), Ipv4Addr::new(10, 10, 10, 30)];
    assert!(seen.keys().all(|k| allowed.contains(k)), "{seen:?}");
    assert_eq!(seen.len(), 2, "both addresses were served: {seen:?}");
    // kill -9, restart: the last good generation (serial 31, address .20) is served again.
    s.child.kill().unwrap();
    s.child.wait().unwrap();
    let s2 = start(&state, &[]);
    assert_eq!(soa_serial(s2.addr), 31);
    assert_eq!(
        a_of(&ask(s2.addr, "pg-meta.pigsty.test.", RecordType::A).unwrap()),
        vec![allowed[0]]
    );
    drop(s);
}

#[test]
fn a_bad_generation_is_not_served_and_load_reports_why() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    assert_eq!(load(&state, &flip(t.path(), 20), &[]).code, 0);
    let s = start(&state, &[]);
    assert_eq!(soa_serial(s.addr), 1);
    // A forged serial 2: the bytes of serial 1 with another address, under serial 2's name.
    let gens = state.join("generations");
    let first = fs::read_dir(&gens).unwrap().next().unwrap().unwrap().path();
    let text = fs::read_to_string(&first)
        .unwrap()
        .replace("\"serial\": 1", "\"serial\": 2");
    let forged = gens.join("gen-0000000002-0000000000000000.json");
    let tmp = t.path().join("forged");
    fs::write(&tmp, text).unwrap();
    fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    fs::rename(&tmp, &forged).unwrap();
    // SIGHUP asks for an immediate rescan.
    Command::new("kill")
        .args(["-HUP", &s.child.id().to_string()])
        .status()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(6);
    loop {
        let st = status_file(&state).unwrap();
        if let Some(e) = st["last_error"].as_str() {
            assert!(e.contains("generation 2") && e.contains("digest"), "{e}");
            break;
        }
        assert!(Instant::now() < deadline, "no last_error recorded: {st}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        soa_serial(s.addr),
        1,
        "the forged generation must not be served"
    );
    // A generation sealed for another zone is refused too, and load says why it is not live.
    let r = load(&state, &flip(t.path(), 30), &["--zone", "other.test"]);
    assert_eq!(r.code, 5, "{}{}", r.stdout, r.stderr);
    let line = r.error_line();
    assert!(
        line.contains("does not serve zone other.test")
            && line.contains("sealed for zone other.test"),
        "{line}"
    );
    assert_eq!(soa_serial(s.addr), 1);
}

#[test]
fn follow_reloads_the_file_and_keeps_the_last_good_on_a_bad_edit() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let file = flip(t.path(), 20);
    let s = start(&state, &["--records", file.to_str().unwrap(), "--follow"]);
    assert_eq!(
        a_of(&ask(s.addr, "pg-meta.pigsty.test.", RecordType::A).unwrap()),
        vec![Ipv4Addr::new(10, 10, 10, 20)]
    );
    // Barn rewrites the projection: write a temp file and rename it over.
    let edit = |text: &str| {
        let tmp = t.path().join(".edit");
        fs::write(&tmp, text).unwrap();
        fs::rename(&tmp, &file).unwrap();
    };
    edit(&fs::read_to_string(flip(t.path(), 40)).unwrap());
    wait_for(|| soa_serial(s.addr) == 2, "the edit to go live");
    assert_eq!(
        a_of(&ask(s.addr, "pg-meta.pigsty.test.", RecordType::A).unwrap()),
        vec![Ipv4Addr::new(10, 10, 10, 40)]
    );
    edit("all:\n  hosts: {10.10.10.010: {}}\n");
    wait_for(
        || {
            status_file(&state).unwrap()["last_error"]
                .as_str()
                .is_some_and(|e| e.contains("leading zero"))
        },
        "the bad edit to be reported",
    );
    // A file with two problems: the log line and last_error give the first and say how many more.
    edit("all:\n  hosts: {10.10.10.10: {}, 10.10.11.10: {}, 10.10.12.10: {}}\n");
    wait_for(
        || {
            status_file(&state).unwrap()["last_error"]
                .as_str()
                .is_some_and(|e| {
                    e.contains("host 10.10.11.10 is outside")
                        && e.contains("(and 1 more problem: pigsty-dns check lists them all)")
                })
        },
        "both problems to be counted",
    );
    assert_eq!(soa_serial(s.addr), 2);
    assert_eq!(
        a_of(&ask(s.addr, "pg-meta.pigsty.test.", RecordType::A).unwrap()),
        vec![Ipv4Addr::new(10, 10, 10, 40)]
    );
}

fn wait_for(mut ok: impl FnMut() -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(8);
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn one_server_per_state_dir_and_a_stale_lock_does_not_block() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let mut s = start(&state, &[]);
    let r = run(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--state-dir",
        state.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 6);
    let line = r.error_line();
    assert!(
        line.contains(&format!("pid {}", s.child.id())) && line.contains("already serving"),
        "{line}"
    );
    s.child.kill().unwrap();
    s.child.wait().unwrap();
    let s2 = start(&state, &[]);
    assert_eq!(soa_serial(s2.addr), 0);
}

#[test]
fn with_no_generation_the_apex_is_served_and_status_says_so() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let s = start(&state, &[]);
    assert_eq!(soa_serial(s.addr), 0);
    let m = ask(s.addr, "pigsty.test.", RecordType::NS).unwrap();
    assert_eq!(m.answers.len(), 1);
    let m = ask(s.addr, "meta.pigsty.test.", RecordType::A).unwrap();
    assert_eq!(m.metadata.response_code, ResponseCode::NXDomain);
    let r = run(&["status", "--state-dir", state.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("none (serving only the apex)"),
        "{}",
        r.stdout
    );
}

#[test]
fn sigterm_stops_promptly_with_exit_0() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let mut s = start(&state, &[]);
    let began = Instant::now();
    Command::new("kill")
        .args(["-TERM", &s.child.id().to_string()])
        .status()
        .unwrap();
    let code = loop {
        if let Some(c) = s.child.try_wait().unwrap() {
            break c;
        }
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "serve did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(code.success(), "{code}");
    assert_eq!(status_file(&state).unwrap()["state"], "stopped");
    let r = run(&["status", "--state-dir", state.to_str().unwrap()]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("not running"), "{}", r.stderr);
}

#[test]
fn bind_errors_are_clear_and_quick() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let r = run(&[
        "serve",
        "--listen",
        "10.10.10.1:5353",
        "--state-dir",
        state.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2);
    assert!(r.error_line().contains("10.10.10.1"), "{}", r.stderr);
    let taken = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let began = Instant::now();
    let r = run(&[
        "serve",
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--state-dir",
        state.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 6, "{}", r.stderr);
    assert!(r.error_line().contains(&port.to_string()), "{}", r.stderr);
    assert!(r.stderr.contains("next: "), "{}", r.stderr);
    assert!(began.elapsed() < Duration::from_secs(5));
    // An invalid --records stops start-up with the input error.
    let bad = write(t.path(), "bad.yml", "all:\n  hosts: {10.10.10.10/24: {}}\n");
    let r = run(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--records",
        bad.to_str().unwrap(),
        "--state-dir",
        state.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 8);
    assert!(r.error_line().contains("CIDR"));
}

#[test]
fn load_without_a_server_is_stored_and_require_live_fails() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let free = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let server = free.to_string();
    let r = load(&state, &flip(t.path(), 20), &["--server", &server]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("stored; no answer over UDP from")
            && r.stdout
                .contains("will be served when pigsty-dns serve starts"),
        "{}",
        r.stdout
    );
    let r = load(
        &state,
        &flip(t.path(), 30),
        &["--server", &server, "--require-live"],
    );
    assert_eq!(r.code, 5);
    assert!(r.error_line().contains("not live"));
}

#[test]
fn export_formats() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/zones/ha.yml");
    assert_eq!(load(&state, Path::new(sample), &[]).code, 0);
    let s = state.to_str().unwrap();
    // Two zones and no --zone: a zone file holds one, so the error names both (exit 2, usage).
    let both = run(&["export", "--state-dir", s]);
    assert_eq!(both.code, 2, "{}", both.stderr);
    assert_eq!(
        both.error_line(),
        "error: generation 1 serves 2 zones (pigsty.test, pigsty), and a zone file holds one"
    );
    assert!(
        both.stderr
            .contains("next: give --zone pigsty.test or --zone pigsty, one file each"),
        "{}",
        both.stderr
    );
    let r = run(&["export", "--zone", "pigsty.cc", "--state-dir", s]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.error_line()
            .contains("--zone \"pigsty.cc\": generation 1 serves pigsty.test, pigsty"),
        "{}",
        r.stderr
    );
    // Each zone's file: its own $ORIGIN, SOA contact and names, nothing of the other zone.
    let pigsty = run(&["export", "--zone", "pigsty", "--state-dir", s]);
    assert_eq!(pigsty.code, 0, "{}", pigsty.stderr);
    assert!(
        pigsty.stdout.contains("$ORIGIN pigsty.\n")
            && pigsty
                .stdout
                .contains("@\t30\tIN\tSOA\tlocalhost. hostmaster.pigsty. 1 3600 900 604800 5\n")
            && pigsty.stdout.contains("\ni\t30\tIN\tA\t10.10.10.10\n")
            && !pigsty.stdout.contains("pg-meta"),
        "{}",
        pigsty.stdout
    );
    let zone = run(&["export", "--zone", "pigsty.test", "--state-dir", s]);
    assert_eq!(zone.code, 0, "{}", zone.stderr);
    assert!(!zone.stdout.contains("sss"), "{}", zone.stdout);
    assert!(
        zone.stdout.contains("$ORIGIN pigsty.test.\n$TTL 30\n"),
        "{}",
        zone.stdout
    );
    assert!(
        zone.stdout
            .contains("@\t30\tIN\tSOA\tlocalhost. hostmaster.pigsty.test. 1 3600 900 604800 5\n")
    );
    assert!(zone.stdout.contains("@\t30\tIN\tNS\tlocalhost.\n"));
    assert!(zone.stdout.contains("pg-meta-3\t30\tIN\tA\t10.10.10.12\n"));
    let hosts = run(&["export", "--format", "hosts", "--state-dir", s]);
    assert_eq!(
        hosts.stdout.lines().nth(1).unwrap(),
        "10.10.10.10\ti.pigsty m.pigsty minio-1.pigsty minio-1.pigsty.test pg-meta-1.pigsty.test pg-meta.pigsty.test",
        "{}",
        hosts.stdout
    );
    let json = run(&["export", "--format", "json", "--state-dir", s]);
    let gen_file = fs::read_dir(state.join("generations"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // The same generation as the file holds, as one JSON object (the file itself is format 2).
    let exported: pigsty_dns::zone::generation::Generation =
        serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(exported, pigsty_dns::store::check_file(&gen_file).unwrap());
    assert!(json.stdout.starts_with("{\n") && json.stdout.ends_with("}\n"));
    let out = t.path().join("pigsty.test.zone");
    assert_eq!(
        run(&[
            "export",
            "--zone",
            "pigsty.test",
            "--state-dir",
            s,
            "-o",
            out.to_str().unwrap()
        ])
        .code,
        0
    );
    assert_eq!(fs::read_to_string(&out).unwrap(), zone.stdout);
    assert_eq!(run(&["export", "--serial", "7", "--state-dir", s]).code, 2);
    if e2e() {
        let r = Command::new("named-checkzone")
            .args(["pigsty.test", out.to_str().unwrap()])
            .output()
            .expect("named-checkzone (bind9utils) must be installed");
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stdout));
        let r = Command::new("kzonecheck")
            .args(["-o", "pigsty.test", out.to_str().unwrap()])
            .output()
            .expect("kzonecheck (knot) must be installed");
        assert!(
            r.status.success(),
            "{}{}",
            String::from_utf8_lossy(&r.stdout),
            String::from_utf8_lossy(&r.stderr)
        );
    }
}

#[test]
fn listen_repeats_and_serves_ipv6_loopback_too() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/zones/pigsty.test.yml");
    let s = start(&state, &["--records", sample, "--listen", "[::1]:0"]);
    let listen = status_file(&state).unwrap()["listen"].clone();
    let v6: SocketAddr = listen[1].as_str().unwrap().parse().unwrap();
    assert!(v6.is_ipv6() && v6.ip().is_loopback(), "{listen}");
    for addr in [s.addr, v6] {
        let m = ask(addr, "meta.pigsty.test.", RecordType::A).unwrap();
        assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 10)], "{addr}");
    }
}

#[test]
fn load_never_reports_live_while_other_records_are_served() {
    // Serials only grow past what the server served; "live" means the exact serial and record digest;
    // "unchanged" compares with what is live; a missing live file is reported.
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let st = state.to_str().unwrap();
    let sample = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/zones/pigsty.test.yml"
    ));
    let ha = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/zones/ha.yml"));
    assert_eq!(load(&state, sample, &[]).code, 0);
    let s = start(&state, &[]);
    let r = load(&state, ha, &[]);
    assert!(
        r.stdout.contains("live (serial 2)"),
        "{}{}",
        r.stdout,
        r.stderr
    );

    // The live generation's file disappears: status and history say so.
    let live_file = status_file(&state).unwrap()["generation"]
        .as_str()
        .unwrap()
        .to_string();
    fs::remove_file(&live_file).unwrap();
    let r = run(&["status", "--state-dir", st]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("its file is gone"), "{}", r.stdout);
    let r = run(&["status", "--json", "--state-dir", st]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["live_file_gone"], true, "{v}");
    let r = run(&["history", "--state-dir", st]);
    assert!(
        r.stdout.contains("serial 2 is live but its file is gone"),
        "{}",
        r.stdout
    );

    // The records of serial 1 again: not "unchanged (serial 1)", since serial 2's records are served.
    let r = load(&state, sample, &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("live (serial 3)"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    assert_eq!(soa_serial(s.addr), 3);

    // Every generation gone: the next serial is still above the served one, and only it is "live".
    fs::remove_dir_all(state.join("generations")).unwrap();
    let r = load(&state, &flip(t.path(), 30), &[]);
    assert!(!r.stdout.contains("live (serial 1)"), "{}", r.stdout);
    assert!(
        r.stdout.contains("live (serial 4)"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    let m = ask(s.addr, "pg-meta.pigsty.test.", RecordType::A).unwrap();
    assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 30)]);
}

/// (inode, mtime in ns) of the status file: any rewrite changes one of them.
fn status_stamp(state: &Path) -> (u64, i128) {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(state.join("status.json")).unwrap();
    (
        m.ino(),
        m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
    )
}

#[test]
fn an_idle_server_writes_nothing_and_a_query_is_counted_soon() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/zones/pigsty.test.yml");
    let s = start(&state, &["--records", sample]);
    // Past start-up, then two rescan periods with no query and no change: not one rewrite.
    std::thread::sleep(Duration::from_millis(1500));
    let before = status_stamp(&state);
    std::thread::sleep(Duration::from_millis(4500));
    assert_eq!(
        status_stamp(&state),
        before,
        "the idle server rewrote its status file"
    );
    // A query moves the counters, and the status file shows it within a few seconds.
    let refused = status_file(&state).unwrap()["counters"]["refused"]
        .as_u64()
        .unwrap();
    assert_eq!(
        ask(s.addr, "example.com.", RecordType::A)
            .unwrap()
            .metadata
            .response_code,
        ResponseCode::Refused
    );
    wait_for(
        || status_file(&state).is_some_and(|v| v["counters"]["refused"] == refused + 1),
        "the REFUSED counter in the status file",
    );
    // A status file deleted under the server is written again, so clients still find it.
    fs::remove_file(state.join("status.json")).unwrap();
    wait_for(
        || status_file(&state).is_some_and(|v| v["state"] == "running"),
        "the status file written again",
    );
}

/// Runs pigsty-dns, failing the test (and killing the child by its PID) if it has not ended in 5 s.
fn run_bounded(args: &[&str]) -> Run {
    let mut child = Command::new(BIN)
        .args(args)
        .env_remove("PIGSTY_DNS_STATE_DIR")
        .env_remove("PIGSTY_DNS_LISTEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} did not end within 5 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    finish(child.wait_with_output().unwrap())
}

#[test]
fn input_that_is_not_a_regular_file_is_refused_at_once() {
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("host-names.yml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let state = t.path().join("state");
    let f = fifo.to_str().unwrap();
    let st = state.to_str().unwrap();
    for args in [
        vec!["check", f],
        vec!["load", f, "--state-dir", st],
        vec![
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--records",
            f,
            "--state-dir",
            st,
        ],
    ] {
        let r = run_bounded(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.error_line().contains("not a regular file"),
            "{args:?}: {}",
            r.stderr
        );
    }
}

#[test]
fn serve_right_after_kill_9_takes_over() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let mut s = start(&state, &[]);
    for _ in 0..5 {
        // SIGKILL, and no wait: the dying process may still hold the lock for a moment.
        s.child.kill().unwrap();
        let next = start(&state, &[]);
        let _ = s.child.wait();
        s = next;
    }
    assert_eq!(soa_serial(s.addr), 0);
}

#[test]
fn the_dns_and_llmnr_ports_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let st = t.path().join("state");
    for (port, word) in [(53, "DNS"), (5355, "LLMNR")] {
        let r = run_bounded(&[
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--state-dir",
            st.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 2, "{port}: {}", r.stderr);
        let line = r.error_line();
        assert!(
            line.contains(&port.to_string()) && line.contains(word),
            "{line}"
        );
    }
}

#[test]
fn serve_logs_a_dig_line_and_warns_on_the_mdns_port() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let s = start(&state, &[]);
    let mut s = s;
    stop(&mut s.child, Duration::from_secs(3), false);
    let mut err = String::new();
    use std::io::Read;
    s.child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let want = format!("try: dig @127.0.0.1 -p {} pigsty.test SOA", s.addr.port());
    assert!(err.contains(&want), "{err}");
    assert!(!err.contains("mDNS port"), "{err}");
    // 5353, where it is free: served, with a warning naming the conflict.
    if UdpSocket::bind("127.0.0.1:5353").is_ok()
        && std::net::TcpListener::bind("127.0.0.1:5353").is_ok()
    {
        let mut c = Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:5353", "--state-dir"])
            .arg(t.path().join("s2"))
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        wait_for(
            || status_file(&t.path().join("s2")).is_some_and(|v| v["state"] == "running"),
            "serve on 5353",
        );
        stop(&mut c, Duration::from_secs(3), false);
        let mut err = String::new();
        c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert!(err.contains("5353 is the mDNS port"), "{err}");
    }
}

// -------------------------------------------------------------------------------------------------------
// The reverse zone

const REVERSE_ONE: &str = "all:
  hosts: { 10.10.10.10: { nodename: meta } }
  vars:
    vm_hosts: [ { address: 10.10.10.20, names: [one, two] } ]
";
/// The same A records as [`REVERSE_ONE`]; the canonical name of .20 is now `two`.
const REVERSE_TWO: &str = "all:
  hosts: { 10.10.10.10: { nodename: meta } }
  vars:
    vm_hosts: [ { address: 10.10.10.20, names: [two, one] } ]
";

#[test]
fn load_shows_ptr_changes_and_history_and_export_the_reverse_zone() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let s = state.to_str().unwrap();
    let one = write(t.path(), "one.yml", REVERSE_ONE);
    let r = load(&state, &one, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("+ PTR 10.10.10.10 meta.pigsty.test\n+ PTR 10.10.10.20 one.pigsty.test\n"),
        "{}",
        r.stdout
    );
    // Only the PTR choice changes: a new generation, one diff line for it, no A lines.
    let two = write(t.path(), "two.yml", REVERSE_TWO);
    let r = load(&state, &two, &["--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["result"], "stored");
    assert_eq!(v["serial"], 2);
    assert_ne!(v["record_digest"], v["previous_record_digest"]);
    assert_eq!(v["reverse_zone"], "10.10.10.in-addr.arpa");
    assert_eq!(
        v["diff"],
        serde_json::json!({"added": [], "removed": [], "changed": [], "ptr": [
            {"address": "10.10.10.20", "old": "one.pigsty.test", "new": "two.pigsty.test"}
        ]})
    );
    let r = load(&state, &one, &["--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with("~ PTR 10.10.10.20 two.pigsty.test -> one.pigsty.test\ndry run"),
        "{}",
        r.stdout
    );

    let h = run(&["history", "--json", "--state-dir", s]);
    let v: serde_json::Value = serde_json::from_str(&h.stdout).unwrap();
    let newest = &v["generations"][0];
    assert_eq!(newest["serial"], 2);
    assert_eq!(newest["reverse_zone"], "10.10.10.in-addr.arpa");
    assert_eq!(
        newest["ptr"],
        serde_json::json!([
            {"address": "10.10.10.10", "name": "meta.pigsty.test"},
            {"address": "10.10.10.20", "name": "two.pigsty.test"}
        ])
    );
    assert_eq!(v["generations"][1]["ptr"][1]["name"], "one.pigsty.test");

    let zone = run(&["export", "--zone-of", "reverse", "--state-dir", s]);
    assert_eq!(zone.code, 0, "{}", zone.stderr);
    let digest = newest["record_digest"].as_str().unwrap();
    assert_eq!(
        zone.stdout,
        format!(
            "; pigsty-dns export: zone 10.10.10.in-addr.arpa (reverse of pigsty.test) serial 2 record \
             digest {digest}\n$ORIGIN 10.10.10.in-addr.arpa.\n$TTL 30\n\
             @\t30\tIN\tSOA\tlocalhost. hostmaster.pigsty.test. 2 3600 900 604800 5\n\
             @\t30\tIN\tNS\tlocalhost.\n\
             10\t30\tIN\tPTR\tmeta.pigsty.test.\n\
             20\t30\tIN\tPTR\ttwo.pigsty.test.\n"
        )
    );
    // The hosts lines are what they were: every name, no PTR notion.
    let hosts = run(&["export", "--format", "hosts", "--state-dir", s]);
    assert_eq!(
        hosts.stdout,
        "10.10.10.10\tmeta.pigsty.test\n10.10.10.20\tone.pigsty.test two.pigsty.test\n"
    );
    let r = run(&[
        "export",
        "--format",
        "hosts",
        "--zone-of",
        "reverse",
        "--state-dir",
        s,
    ]);
    assert_eq!(r.code, 2);
    assert!(r.error_line().contains("--zone-of reverse"), "{}", r.stderr);

    let out = t.path().join("10.10.10.in-addr.arpa.zone");
    let o = out.to_str().unwrap();
    assert_eq!(
        run(&["export", "--zone-of", "reverse", "--state-dir", s, "-o", o]).code,
        0
    );
    assert_eq!(fs::read_to_string(&out).unwrap(), zone.stdout);
    if e2e() {
        let r = Command::new("named-checkzone")
            .args(["10.10.10.in-addr.arpa", o])
            .output()
            .expect("named-checkzone (bind9utils) must be installed");
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stdout));
        let r = Command::new("kzonecheck")
            .args(["-o", "10.10.10.in-addr.arpa", o])
            .output()
            .expect("kzonecheck (knot) must be installed");
        assert!(
            r.status.success(),
            "{}{}",
            String::from_utf8_lossy(&r.stdout),
            String::from_utf8_lossy(&r.stderr)
        );
    }
    // A rollback re-seals the old PTR choice with the old records.
    let r = run(&["rollback", "1", "--state-dir", s]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with("~ PTR 10.10.10.20 two.pigsty.test -> one.pigsty.test\n"),
        "{}",
        r.stdout
    );
    let zone = run(&["export", "--zone-of", "reverse", "--state-dir", s]);
    assert!(
        zone.stdout.ends_with("20\t30\tIN\tPTR\tone.pigsty.test.\n"),
        "{}",
        zone.stdout
    );
}

/// A generation sealed before reverse zones (no `ptr`) still loads and serves its forward zone, serves
/// no reverse zone, cannot be exported as one, and loading the same input again seals the PTRs.
#[test]
fn a_generation_from_before_reverse_zones_serves_none_until_loaded_again() {
    use pigsty_dns::zone::generation::{Generation, record_digest};
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let s = state.to_str().unwrap();
    let one = write(t.path(), "one.yml", REVERSE_ONE);
    // Sealed as such a release did: one zone.
    assert_eq!(load(&state, &one, &["--zone", "pigsty.test"]).code, 0);
    let json = run(&["export", "--format", "json", "--state-dir", s]);
    let mut g: Generation = serde_json::from_str(&json.stdout).unwrap();
    g.ptr.clear();
    g.serial = 2;
    g.format = pigsty_dns::zone::generation::FORMAT_JSON;
    g.record_digest = record_digest(&g.zone, g.ttl, &g.soa, &g.ns, &g.records, &g.ptr);
    let bytes = g.encode();
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.contains("\"records\": [") && !text.contains("\"ptr\""),
        "the old format: {text}"
    );
    let path = state
        .join("generations")
        .join(pigsty_dns::store::file_name(2, &g.self_digest()));
    fs::write(&path, &bytes).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();

    let srv = start(&state, &[]);
    assert_eq!(soa_serial(srv.addr), 2);
    let m = ask(srv.addr, "meta.pigsty.test.", RecordType::A).unwrap();
    assert_eq!(a_of(&m), vec![Ipv4Addr::new(10, 10, 10, 10)]);
    let m = ask(srv.addr, "10.10.10.10.in-addr.arpa.", RecordType::PTR).unwrap();
    assert_eq!(m.metadata.response_code, ResponseCode::Refused);
    assert!(status_file(&state).unwrap()["reverse_zone"].is_null());
    let r = run(&["export", "--zone-of", "reverse", "--state-dir", s]);
    assert_eq!(r.code, 2);
    assert!(
        r.error_line().contains("generation 2 has no reverse zone"),
        "{}",
        r.stderr
    );

    // Same records, now with PTRs: a new generation, served at once.
    let r = load(&state, &one, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("+ PTR 10.10.10.20 one.pigsty.test\n"),
        "{}",
        r.stdout
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while soa_serial(srv.addr) != 3 {
        assert!(Instant::now() < deadline, "serial 3 never went live");
        std::thread::sleep(Duration::from_millis(50));
    }
    let m = ask(srv.addr, "20.10.10.10.in-addr.arpa.", RecordType::PTR).unwrap();
    assert_eq!(ptr_of(&m), ["one.pigsty.test."]);
}

#[test]
fn status_shows_and_probes_both_zones() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let one = write(t.path(), "one.yml", REVERSE_ONE);
    let srv = start(&state, &["--records", one.to_str().unwrap()]);
    let m = ask(srv.addr, "10.10.10.10.in-addr.arpa.", RecordType::PTR).unwrap();
    assert_eq!(ptr_of(&m), ["meta.pigsty.test."]);
    let r = run(&["status", "--state-dir", state.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("pigsty-dns: running\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!(
            "probe {} 10.10.10.in-addr.arpa: UDP serial 1; TCP serial 1\n",
            srv.addr
        )),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!(
            "probe {} pigsty: UDP serial 1; TCP serial 1\n",
            srv.addr
        )),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("  zones pigsty.test, pigsty  reverse zone 10.10.10.in-addr.arpa  serial 1"),
        "{}",
        r.stdout
    );
    let r = run(&["status", "--json", "--state-dir", state.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["status"]["reverse_zone"], "10.10.10.in-addr.arpa");
    assert_eq!(v["reverse_probe"]["tcp"]["serial"], 1);
    assert_eq!(v["zone_probes"][0]["zone"], "pigsty");
    assert_eq!(v["zone_probes"][0]["udp"]["serial"], 1);
    assert_eq!(
        v["status"]["zones"],
        serde_json::json!(["pigsty.test", "pigsty"])
    );
}
