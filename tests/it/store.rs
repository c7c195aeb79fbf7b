//! Generations in a real state directory: atomic, never overwritten, checked before use, pruned,
//! and safe under concurrent writers.

use crate::util::*;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

const META: &str = "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n";

fn gens(state: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(state.join("generations"))
        .map(|rd| rd.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn history(state: &Path) -> serde_json::Value {
    let r = run(&["history", "--json", "--state-dir", state.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

/// The reason `history` gives for the newest generation file.
fn newest_reason(state: &Path) -> String {
    history(state)["generations"][0]["reason"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Loads new records (`c.yml` in `dir`) into a state dir of serials 1 and 2 whose newest file is bad:
/// the new generation still gets serial 3, higher than any file present.
fn load_is_serial_3(state: &Path, dir: &Path) {
    let c = write(
        dir,
        "c.yml",
        "all:\n  hosts: {10.10.10.14: {nodename: meta}}\n",
    );
    let r = load(state, &c, &[]);
    assert!(r.stdout.contains("stored serial 3"), "{}", r.stdout);
}

#[test]
fn load_stores_private_files_and_same_records_are_a_no_op() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let f = write(t.path(), "h.yml", META);
    let r = load(&state, &f, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("+ meta.pigsty.test 10.10.10.10"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("stored serial 1"), "{}", r.stdout);
    assert_eq!(
        fs::metadata(&state).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert_eq!(
        fs::metadata(state.join("generations"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o700
    );
    let files = gens(&state);
    assert_eq!(files.len(), 1);
    assert_eq!(
        fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(
        files[0]
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("gen-0000000001-")
    );
    // Same records from a file that differs only in comments: unchanged, nothing written.
    let f2 = write(t.path(), "h2.yml", &format!("# a comment\n{META}"));
    let r = load(&state, &f2, &[]);
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, "unchanged (serial 1)\n");
    assert_eq!(gens(&state).len(), 1);
    // A changed address is shown old -> new and becomes serial 2.
    let f3 = write(
        t.path(),
        "h3.yml",
        "all:\n  hosts: {10.10.10.11: {nodename: meta}}\n",
    );
    let r = load(&state, &f3, &[]);
    assert!(
        r.stdout
            .contains("~ meta.pigsty.test 10.10.10.10 -> 10.10.10.11"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("stored serial 2"), "{}", r.stdout);
    // A TTL change is a change of served data.
    let r = load(&state, &f3, &["--ttl", "60"]);
    assert!(r.stdout.contains("stored serial 3"), "{}", r.stdout);
    let h = history(&state);
    assert_eq!(h["generations"][0]["serial"], 3);
    assert_eq!(h["generations"][0]["newest_good"], true);
    assert_eq!(h["generations"][2]["input"]["path"], f.to_str().unwrap());
}

#[test]
fn dry_run_and_invalid_input_store_nothing() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let f = write(t.path(), "h.yml", META);
    let r = load(&state, &f, &["--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("dry run: would store serial 1"),
        "{}",
        r.stdout
    );
    assert!(!state.exists(), "dry run created the state dir");
    assert_eq!(load(&state, &f, &[]).code, 0);
    let before: Vec<(PathBuf, Vec<u8>)> = gens(&state)
        .into_iter()
        .map(|p| (p.clone(), fs::read(&p).unwrap()))
        .collect();
    let bad = write(
        t.path(),
        "bad.yml",
        "all:\n  hosts: {10.10.10.10: {nodename: meta}, 10.10.10.11: {nodename: meta}}\n",
    );
    let r = load(&state, &bad, &[]);
    assert_eq!(r.code, 8);
    r.error_line();
    let after: Vec<(PathBuf, Vec<u8>)> = gens(&state)
        .into_iter()
        .map(|p| (p.clone(), fs::read(&p).unwrap()))
        .collect();
    assert_eq!(before, after, "an invalid file changed the state");
    let r = load(&state, &f, &["--ttl", "0"]);
    assert_eq!(r.code, 2);
    assert!(r.error_line().contains("--ttl 0"));
}

#[test]
fn state_dir_must_be_private_and_ours() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let f = write(t.path(), "h.yml", META);
    assert_eq!(load(&state, &f, &[]).code, 0);
    fs::set_permissions(&state, fs::Permissions::from_mode(0o770)).unwrap();
    let r = load(&state, &f, &[]);
    assert_eq!(r.code, 7, "{}", r.stderr);
    assert!(r.error_line().contains("mode 770"), "{}", r.stderr);
    assert!(r.stderr.contains("next: chmod 700"), "{}", r.stderr);
    fs::set_permissions(&state, fs::Permissions::from_mode(0o700)).unwrap();
    // The env variable is honoured when no flag is given.
    let r = run_env(
        &["history"],
        &[("PIGSTY_DNS_STATE_DIR", state.to_str().unwrap())],
    );
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("good (newest)"), "{}", r.stdout);
}

#[test]
fn foreign_owned_state_and_generations_are_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        assert!(
            std::env::var("PIGSTY_DNS_E2E").is_err(),
            "PIGSTY_DNS_E2E=1 needs root for the ownership tests"
        );
        eprintln!("skipped: needs root to chown");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let f = write(t.path(), "h.yml", META);
    assert_eq!(load(&state, &f, &[]).code, 0);
    let f2 = write(
        t.path(),
        "h2.yml",
        "all:\n  hosts: {10.10.10.12: {nodename: meta}}\n",
    );
    assert_eq!(load(&state, &f2, &[]).code, 0);
    let newest = gens(&state).pop().unwrap();
    std::os::unix::fs::chown(&newest, Some(65534), None).unwrap();
    let h = history(&state);
    assert_eq!(h["generations"][0]["status"], "bad");
    assert!(
        h["generations"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("owned by uid 65534")
    );
    assert_eq!(h["generations"][1]["newest_good"], true);
    std::os::unix::fs::chown(&state, Some(65534), None).unwrap();
    let r = load(&state, &f, &[]);
    assert_eq!(r.code, 7);
    assert!(r.error_line().contains("owned by uid 65534"));
}

#[test]
fn a_tampered_generation_is_never_the_newest_good() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    assert_eq!(load(&state, &write(t.path(), "a.yml", META), &[]).code, 0);
    assert_eq!(
        load(
            &state,
            &write(
                t.path(),
                "b.yml",
                "all:\n  hosts: {10.10.10.12: {nodename: meta}}\n"
            ),
            &[]
        )
        .code,
        0
    );
    let newest = gens(&state).pop().unwrap();
    let text = fs::read_to_string(&newest).unwrap();
    fs::write(&newest, text.replace("10.10.10.12", "10.10.10.13")).unwrap();
    let h = history(&state);
    assert_eq!(h["generations"][0]["status"], "bad");
    assert!(
        h["generations"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("digest"),
        "{h}"
    );
    assert_eq!(h["generations"][1]["serial"], 1);
    assert_eq!(h["generations"][1]["newest_good"], true);
    // Mode and symlink checks.
    fs::write(&newest, text).unwrap();
    assert_eq!(history(&state)["generations"][0]["status"], "good");
    fs::set_permissions(&newest, fs::Permissions::from_mode(0o644)).unwrap();
    assert!(newest_reason(&state).contains("mode 644"));
    fs::set_permissions(&newest, fs::Permissions::from_mode(0o600)).unwrap();
    let moved = t.path().join("elsewhere.json");
    fs::rename(&newest, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &newest).unwrap();
    assert!(newest_reason(&state).contains("symlink"));
    // A new load after a bad newest file still gets a higher serial than any file present.
    load_is_serial_3(&state, t.path());
    // Temp files of a crashed writer are never read as generations and are cleaned by the next writer.
    fs::write(state.join("generations/.tmp-99-1"), "junk").unwrap();
    assert_eq!(history(&state)["generations"].as_array().unwrap().len(), 3);
    assert_eq!(
        load(
            &state,
            &write(
                t.path(),
                "d.yml",
                "all:\n  hosts: {10.10.10.15: {nodename: meta}}\n"
            ),
            &[]
        )
        .code,
        0
    );
    assert!(!state.join("generations/.tmp-99-1").exists());
}

#[test]
fn rollback_reseals_old_records_as_a_new_serial() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let s = state.to_str().unwrap();
    assert_eq!(
        load(&state, &write(t.path(), "a.yml", META), &["--ttl", "45"]).code,
        0
    );
    assert_eq!(
        load(
            &state,
            &write(
                t.path(),
                "b.yml",
                "all:\n  hosts: {10.10.10.12: {nodename: meta}}\n"
            ),
            &[]
        )
        .code,
        0
    );
    let r = run(&["rollback", "1", "--state-dir", s]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("~ meta.pigsty.test 10.10.10.12 -> 10.10.10.10"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("stored serial 3"), "{}", r.stdout);
    let h = history(&state);
    assert_eq!(
        h["generations"][0]["record_digest"],
        h["generations"][2]["record_digest"]
    );
    assert!(
        h["generations"][0]["input"]["path"]
            .as_str()
            .unwrap()
            .starts_with("rollback to serial 1")
    );
    let r = run(&["rollback", "1", "--state-dir", s]);
    assert_eq!(r.stdout, "unchanged (serial 3)\n");
    let r = run(&["rollback", "9", "--state-dir", s]);
    assert_eq!(r.code, 2);
    assert!(r.error_line().contains("serial 9"));
}

#[test]
fn history_is_pruned_to_the_newest_50() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    for i in 0..53 {
        let f = write(
            t.path(),
            "h.yml",
            &format!("all:\n  hosts: {{10.10.10.10: {{nodename: n{i}}}}}\n"),
        );
        assert_eq!(load(&state, &f, &[]).code, 0);
    }
    let files = gens(&state);
    assert_eq!(files.len(), 50);
    assert!(
        files[0].to_str().unwrap().contains("gen-0000000004-"),
        "{files:?}"
    );
    assert!(files[49].to_str().unwrap().contains("gen-0000000053-"));
}

#[test]
fn concurrent_loads_lose_nothing_and_never_share_a_serial() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let n = 12;
    let files: Vec<PathBuf> = (0..n)
        .map(|i| {
            write(
                t.path(),
                &format!("h{i}.yml"),
                &format!(
                    "all:\n  hosts: {{10.10.10.{}: {{nodename: n{i}}}}}\n",
                    10 + i
                ),
            )
        })
        .collect();
    let children: Vec<std::process::Child> = files
        .iter()
        .map(|f| {
            std::process::Command::new(BIN)
                .args([
                    "load",
                    f.to_str().unwrap(),
                    "--state-dir",
                    state.to_str().unwrap(),
                ])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let h = history(&state);
    let gens = h["generations"].as_array().unwrap();
    assert_eq!(gens.len(), n);
    let mut serials: Vec<u64> = gens.iter().map(|g| g["serial"].as_u64().unwrap()).collect();
    serials.sort();
    assert_eq!(serials, (1..=n as u64).collect::<Vec<_>>());
    let mut inputs: Vec<String> = gens
        .iter()
        .map(|g| g["input"]["path"].as_str().unwrap().to_string())
        .collect();
    inputs.sort();
    let mut want: Vec<String> = files
        .iter()
        .map(|f| f.to_str().unwrap().to_string())
        .collect();
    want.sort();
    assert_eq!(inputs, want, "every load is kept once");
    assert!(gens.iter().all(|g| g["status"] == "good"));
    let _ = fs::metadata(&state).unwrap().uid();
}

#[test]
fn load_without_a_running_server_says_so_at_once() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let r = load(&state, &write(t.path(), "a.yml", META), &[]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout
            .contains("stored; no pigsty-dns serve is running for"),
        "{}",
        r.stdout
    );
    let r = load(
        &state,
        &write(
            t.path(),
            "b.yml",
            "all:\n  hosts: {10.10.10.12: {nodename: meta}}\n",
        ),
        &["--require-live"],
    );
    assert_eq!(r.code, 5);
    assert!(
        r.error_line()
            .contains("not live: no pigsty-dns serve is running"),
        "{}",
        r.stderr
    );
}

/// Peak resident memory (KiB) of a pigsty-dns run, from the kernel's rusage of the child.
// The child is reaped by wait4 below, which std cannot see.
#[allow(clippy::zombie_processes)]
fn peak_kib(args: &[&str]) -> (i32, i64) {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let mut cmd = std::process::Command::new(BIN);
    cmd.args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // A child spawned with vfork runs on this test process's memory until it execs, and the kernel
    // carries that memory's peak into the child's rusage: under the whole suite that peak was the test
    // binary's (231 MiB), not the command's. With pre_exec std forks instead, and the child resets its
    // own peak to its current size (clear_refs 5) before exec.
    // SAFETY: only open, write and close (async-signal-safe) run between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let fd = libc::open(c"/proc/self/clear_refs".as_ptr(), libc::O_WRONLY);
            if fd >= 0 {
                libc::write(fd, b"5".as_ptr().cast(), 1);
                libc::close(fd);
            }
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; status and usage are valid out-pointers.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    let code = std::process::ExitStatus::from_raw(status)
        .code()
        .unwrap_or(-1);
    (code, usage.ru_maxrss)
}

#[test]
fn a_generation_of_millions_of_tiny_strings_is_refused_before_it_costs_memory() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let f = write(t.path(), "h.yml", META);
    assert_eq!(load(&state, &f, &[]).code, 0);
    // A well-formed generation body whose one record carries 12 M one-letter sources (about 48 MB),
    // under a generation file name: parsing it naively costs well over a gigabyte.
    let mut body = String::from(
        "{\n  \"generation\": {\n    \"format\": 1,\n    \"zone\": \"pigsty.test\",\n    \"serial\": 9,\n    \"created\": \"2026-12-01T00:00:00Z\",\n    \"input\": {\"path\": \"x\", \"sha256\": \"x\"},\n    \"ttl\": 30,\n    \"soa\": {\"mname\": \"localhost.\", \"rname\": \"hostmaster.pigsty.test.\", \"refresh\": 3600, \"retry\": 900, \"expire\": 604800, \"minimum\": 5},\n    \"ns\": [\"localhost.\"],\n    \"records\": [{\"name\": \"a.pigsty.test\", \"address\": \"10.10.10.10\", \"sources\": [",
    );
    body.push_str(&"\"a\",".repeat(12_000_000));
    body.push_str("\"a\"]}],\n    \"not_served\": [],\n    \"skipped_hosts\": [],\n    \"record_digest\": \"x\"\n  },\n  \"self_digest\": \"x\"\n}\n");
    let bad = state.join("generations/gen-0000000009-0123456789abcdef.json");
    fs::write(&bad, body).unwrap();
    fs::set_permissions(&bad, fs::Permissions::from_mode(0o600)).unwrap();
    let (code, kib) = peak_kib(&["history", "--state-dir", state.to_str().unwrap()]);
    assert_eq!(code, 0);
    // The file itself is read (48 MB); everything past that must stay small.
    assert!(kib < 160 * 1024, "history peaked at {} MiB", kib / 1024);
    let h = history(&state);
    let g = &h["generations"][0];
    assert_eq!(g["serial"], 9);
    assert_eq!(g["status"], "bad");
    assert!(
        g["reason"].as_str().unwrap().contains("strings"),
        "{}",
        g["reason"]
    );
}

/// A format-1 generation (one pretty JSON document, as every release before format 2 wrote it), sealed
/// by the library and written where `load` would have put it.
fn write_format_1(state: &Path, serial: u32, records: &[(&str, [u8; 4])]) -> PathBuf {
    use pigsty_dns::zone::generation::{FORMAT_JSON, record_digest};
    let mut g = pigsty_dns::zone::view::fixtures::generation(records, serial, 30, 5);
    g.format = FORMAT_JSON;
    g.ptr = vec![pigsty_dns::input::records::Ptr {
        address: records[0].1.into(),
        name: records[0].0.into(),
    }];
    g.record_digest = record_digest(&g.zone, g.ttl, &g.soa, &g.ns, &g.records, &g.ptr);
    let bytes = g.encode();
    assert!(bytes.starts_with(b"{\n  \"generation\": {\n    \"format\": 1,"));
    let gens = state.join("generations");
    fs::create_dir_all(&gens).unwrap();
    for d in [state, gens.as_path()] {
        fs::set_permissions(d, fs::Permissions::from_mode(0o700)).unwrap();
    }
    let path = gens.join(pigsty_dns::store::file_name(serial, &g.self_digest()));
    fs::write(&path, bytes).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// A `serve` child on an ephemeral loopback port, killed by PID when dropped.
struct Serving {
    child: std::process::Child,
    addr: std::net::SocketAddr,
}

impl Drop for Serving {
    fn drop(&mut self) {
        stop(&mut self.child, std::time::Duration::ZERO, false);
    }
}

fn serve(state: &Path) -> Serving {
    use std::time::{Duration, Instant};
    let child = std::process::Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--state-dir"])
        .arg(state)
        .env_remove("PIGSTY_DNS_LISTEN")
        .env_remove("PIGSTY_DNS_STATE_DIR")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut s = Serving {
        child,
        addr: "127.0.0.1:1".parse().unwrap(),
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let st: Option<serde_json::Value> = fs::read(state.join("status.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        if let Some(st) = st.filter(|st| st["pid"] == s.child.id() && st["state"] == "running") {
            s.addr = st["listen"][0].as_str().unwrap().parse().unwrap();
            return s;
        }
        assert!(s.child.try_wait().unwrap().is_none(), "serve exited");
        assert!(Instant::now() < deadline, "serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The A addresses the server answers for `name`, over UDP with hickory's codec.
fn served_a(addr: std::net::SocketAddr, name: &str) -> Vec<std::net::Ipv4Addr> {
    use hickory_proto::op::{Message, Query};
    use hickory_proto::rr::{Name, RecordType};
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(std::time::Duration::from_secs(2)))
        .unwrap();
    let mut q = Message::query();
    q.metadata.id = 4242;
    q.add_query(Query::query(Name::from_ascii(name).unwrap(), RecordType::A));
    sock.send_to(&q.to_vec().unwrap(), addr).unwrap();
    let mut buf = [0u8; 4096];
    let (n, _) = sock.recv_from(&mut buf).expect("an answer");
    a_of(&Message::from_vec(&buf[..n]).unwrap())
}

#[test]
fn a_format_1_generation_is_listed_served_and_restored_by_rollback() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let old = write_format_1(&state, 1, &[("meta.pigsty.test", [10, 10, 10, 10])]);
    let h = history(&state);
    assert_eq!(h["generations"][0]["status"], "good", "{h}");
    assert_eq!(h["generations"][0]["served"], 1);
    let s = serve(&state);
    assert_eq!(
        served_a(s.addr, "meta.pigsty.test."),
        vec![std::net::Ipv4Addr::new(10, 10, 10, 10)]
    );
    // A new load is written in format 2 beside it, and is live.
    let f = write(
        t.path(),
        "b.yml",
        "all:\n  hosts: {10.10.10.12: {nodename: meta}}\n",
    );
    let addr = s.addr.to_string();
    let r = load(&state, &f, &["--server", &addr, "--require-live"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let newest = gens(&state).pop().unwrap();
    assert!(
        fs::read_to_string(&newest)
            .unwrap()
            .starts_with("{\n  \"format\": 2,")
    );
    assert_eq!(
        served_a(s.addr, "meta.pigsty.test."),
        vec![std::net::Ipv4Addr::new(10, 10, 10, 12)]
    );
    // Rolling back to the format-1 serial re-seals its records (and PTRs) as serial 3, live.
    let r = run(&["rollback", "1", "--state-dir", state.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("stored serial 3"), "{}", r.stdout);
    let h = history(&state);
    assert_eq!(
        h["generations"][0]["record_digest"],
        h["generations"][2]["record_digest"]
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while served_a(s.addr, "meta.pigsty.test.") != vec![std::net::Ipv4Addr::new(10, 10, 10, 10)] {
        assert!(std::time::Instant::now() < deadline, "serial 3 never live");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The old file is untouched: still good, still format 1.
    assert!(
        fs::read_to_string(&old)
            .unwrap()
            .starts_with("{\n  \"generation\"")
    );
    assert_eq!(history(&state)["generations"][2]["status"], "good");
}

/// A stored format-2 file changed on disk is refused by every reader with the store's reasons (the
/// server keeps the last good serial); each edit below is undone before the next.
#[test]
fn a_changed_format_2_file_is_refused_with_the_same_reasons() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    assert_eq!(load(&state, &write(t.path(), "a.yml", META), &[]).code, 0);
    let f = write(
        t.path(),
        "b.yml",
        "all:\n  hosts: {10.10.10.12: {nodename: meta}}\n  vars:\n    vm_hosts:\n      - {address: 10.10.10.20, names: [x1, x2]}\n",
    );
    assert_eq!(load(&state, &f, &[]).code, 0);
    let newest = gens(&state).pop().unwrap();
    let good = fs::read(&newest).unwrap();
    let reason = |bytes: &[u8]| -> String {
        fs::write(&newest, bytes).unwrap();
        let h = history(&state);
        assert_eq!(h["generations"][0]["status"], "bad", "{h}");
        assert_eq!(h["generations"][1]["newest_good"], true);
        h["generations"][0]["reason"].as_str().unwrap().to_string()
    };
    let text = String::from_utf8(good.clone()).unwrap();
    // Flipped byte, truncated, two lines swapped, a line dropped.
    let mut flipped = good.clone();
    let at = text.find("a x1 ").unwrap() + 3;
    flipped[at] ^= 1;
    assert!(reason(&flipped).contains("self-digest"));
    assert!(reason(&good[..good.len() - 30]).contains("not a generation file"));
    let (x1, x2) = ("a x1 10.10.10.20 1[0]\n", "a x2 10.10.10.20 1[1]\n");
    assert!(text.contains(&format!("{x1}{x2}")), "{text}");
    assert!(
        reason(
            text.replace(&format!("{x1}{x2}"), &format!("{x2}{x1}"))
                .as_bytes()
        )
        .contains("self-digest")
    );
    // The same edits behind a self-digest recomputed with sha256sum's arithmetic: the content checks.
    let forge = |edit: &dyn Fn(&str) -> String| -> Vec<u8> {
        let body = &text[..text.rfind("self_digest ").unwrap()];
        let body = edit(body);
        format!(
            "{body}self_digest {}\n",
            pigsty_dns::zone::generation::sha256_of(body.as_bytes())
        )
        .into_bytes()
    };
    assert!(
        reason(&forge(
            &|b| b.replace(&format!("{x1}{x2}"), &format!("{x2}{x1}"))
        ))
        .contains("out of order")
    );
    assert!(reason(&forge(&|b| b.replace(x2, ""))).contains("header counts"));
    // Every address moved, A lines and PTR alike: only the record digest can tell.
    assert!(reason(&forge(&|b| b.replace("10.10.10.20", "10.10.10.21"))).contains("record digest"));
    assert!(
        reason(&forge(&|b| b.replace("10.10.10.20 1[", "10.10.10.020 1[")))
            .contains("canonical form")
    );
    // A forgery that passes every content check (another creation time) no longer matches the digest
    // in its file name.
    assert!(
        reason(&forge(
            &|b| b.replace("\"created\": \"20", "\"created\": \"19")
        ))
        .contains("does not match its file name")
    );
    // Owner-independent checks: mode and size.
    fs::write(&newest, &good).unwrap();
    assert_eq!(history(&state)["generations"][0]["status"], "good");
    fs::set_permissions(&newest, fs::Permissions::from_mode(0o640)).unwrap();
    assert!(newest_reason(&state).contains("mode 640"));
    fs::set_permissions(&newest, fs::Permissions::from_mode(0o600)).unwrap();
    let big = fs::OpenOptions::new().write(true).open(&newest).unwrap();
    big.set_len(pigsty_dns::store::MAX_GENERATION_BYTES + 1)
        .unwrap();
    assert!(newest_reason(&state).contains("byte limit"));
    // load refuses a state dir whose newest file is bad only by skipping it: the next serial is still 3.
    load_is_serial_3(&state, t.path());
}

/// `load` reads the newest file only as a diff base (not each record against its rules); saying
/// `unchanged` rests on a file that checks out in full. A newest file with the same records, both
/// digests recomputed, and a source table the encoder never writes must not be the one it points to.
#[test]
fn unchanged_rests_on_a_fully_checked_generation() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let a = write(t.path(), "a.yml", META);
    assert_eq!(load(&state, &a, &[]).code, 0);
    let first = gens(&state).pop().unwrap();
    let text = fs::read_to_string(&first).unwrap();
    let body = text[..text.rfind("self_digest ").unwrap()]
        .replace("\"serial\": 1,", "\"serial\": 2,")
        .replace(
            "\"all.hosts[10.10.10.10].nodename\"\n",
            "\"all.hosts[10.10.10.10].nodename\",\n    \"unused\"\n",
        );
    assert!(body.contains("\"unused\""), "{body}");
    let digest = pigsty_dns::zone::generation::sha256_of(body.as_bytes());
    let forged = state
        .join("generations")
        .join(pigsty_dns::store::file_name(2, &digest));
    fs::write(&forged, format!("{body}self_digest {digest}\n")).unwrap();
    fs::set_permissions(&forged, fs::Permissions::from_mode(0o600)).unwrap();
    assert!(newest_reason(&state).contains("lists 2 sources"));
    let r = load(&state, &a, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("unchanged (serial 1)"), "{}", r.stdout);
}
