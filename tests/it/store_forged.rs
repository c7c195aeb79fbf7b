//! Forged and junk generation files in a real state directory: they never set the next serial, are
//! named with their fix in `load`'s report and in `history`, and no serial steps more than 2^31 − 1
//! past the live one (RFC 1982 §3.1), whether `load` chooses it or `serve` is handed it.

use crate::util::*;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn yml(dir: &Path, n: u32) -> PathBuf {
    write(
        dir,
        &format!("in-{n}.yml"),
        &format!(
            "all:\n  hosts: {{10.10.10.{}: {{nodename: meta}}}}\n",
            10 + n
        ),
    )
}

fn history(state: &Path) -> serde_json::Value {
    let r = run(&["history", "--json", "--state-dir", state.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

/// Writes a generation file as a store does: complete and 0600 before it appears under its name (a
/// server rescans the directory meanwhile).
fn place(path: &Path, bytes: &[u8]) {
    let tmp = path.with_file_name(".forging");
    fs::write(&tmp, bytes).unwrap();
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o600)).unwrap();
    fs::rename(&tmp, path).unwrap();
}

/// A file of junk under a generation's name, mode 0600 as a sealed file is.
fn junk(state: &Path, serial: u32) -> PathBuf {
    let p = state
        .join("generations")
        .join(pigsty_dns::store::file_name(serial, "0123456789abcdef"));
    place(&p, b"junk\n");
    p
}

/// The stored file of `serial`, re-sealed as `to` with both digests valid and written under the name
/// of `to`: a generation that checks out in full, which no `load` made.
pub(crate) fn resealed_copy(state: &Path, serial: u32, to: u32) -> PathBuf {
    let gens = state.join("generations");
    let prefix = format!("gen-{serial:010}-");
    let from = fs::read_dir(&gens)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with(&prefix)
        })
        .unwrap();
    let mut g =
        pigsty_dns::zone::generation::Generation::parse_unverified(&fs::read(from).unwrap())
            .unwrap();
    g.serial = to;
    let p = gens.join(pigsty_dns::store::file_name(to, &g.self_digest()));
    place(&p, &g.encode());
    p
}

/// A junk `gen-3000000000-…` or `gen-4294967295-…` never served does not move the next serial: `load`
/// stores 3, names the file and how to remove it; `history` says the same.
#[test]
fn a_junk_file_with_a_huge_serial_does_not_set_the_next_serial() {
    for serial in [3_000_000_000u32, u32::MAX] {
        let t = tempfile::tempdir().unwrap();
        let state = t.path().join("state");
        for n in 1..=2 {
            assert_eq!(load(&state, &yml(t.path(), n), &[]).code, 0);
        }
        let bad = junk(&state, serial);
        let r = load(&state, &yml(t.path(), 3), &[]);
        assert_eq!(r.code, 0, "junk {serial}: {}", r.stderr);
        assert!(r.stdout.contains("stored serial 3 ("), "{}", r.stdout);
        let fix = format!("rm {}", bad.display());
        assert!(
            r.stdout.contains(&bad.display().to_string()) && r.stdout.contains(&fix),
            "load names the junk file and its fix: {}",
            r.stdout
        );
        let h = history(&state);
        let row = &h["generations"][0];
        assert_eq!(row["serial"], serial);
        assert_eq!(row["status"], "bad");
        assert_eq!(row["next"], fix, "{row}");
        assert_eq!(h["generations"][1]["serial"], 3);
        assert_eq!(h["generations"][1]["newest_good"], true);
        let text = run(&["history", "--state-dir", state.to_str().unwrap()]);
        assert!(text.stdout.contains(&fix), "{}", text.stdout);
        // Removing it, as told, leaves the history whole.
        fs::remove_file(&bad).unwrap();
        let r = load(&state, &yml(t.path(), 4), &[]);
        assert!(r.stdout.contains("stored serial 4 ("), "{}", r.stdout);
    }
}

/// A bad file right above the newest good one is stepped over, so no two files share a serial.
#[test]
fn a_bad_file_in_the_way_is_stepped_over() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    assert_eq!(load(&state, &yml(t.path(), 1), &[]).code, 0);
    junk(&state, 2);
    let r = load(&state, &yml(t.path(), 2), &[]);
    assert!(r.stdout.contains("stored serial 3 ("), "{}", r.stdout);
}

/// A generation that checks out in full but is more than 2^31 − 1 after the live serial is older
/// under serial arithmetic: `serve` refuses to swap to it (and says why), `load` goes on from the live
/// serial, and `history` calls it bad with the same reason.
#[test]
fn a_forged_serial_jump_past_2_31_is_never_served_nor_followed() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    for n in 1..=2 {
        assert_eq!(load(&state, &yml(t.path(), n), &[]).code, 0);
    }
    let mut child = std::process::Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--state-dir"])
        .arg(&state)
        .env_remove("PIGSTY_DNS_LISTEN")
        .env_remove("PIGSTY_DNS_STATE_DIR")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let status = || -> serde_json::Value {
        fs::read(state.join("status.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    };
    let wait = |what: &str, ok: &dyn Fn(&serde_json::Value) -> bool| {
        let deadline = Instant::now() + Duration::from_secs(15);
        while !ok(&status()) {
            assert!(Instant::now() < deadline, "{what}: {}", status());
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    wait("serving 2", &|s| {
        s["state"] == "running" && s["serial"] == 2
    });
    let far = resealed_copy(&state, 2, (1u32 << 31) + 100);
    wait("the jump refused", &|s| {
        s["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("2147483748") && e.contains("RFC 1982"))
    });
    assert_eq!(status()["serial"], 2);
    let r = load(&state, &yml(t.path(), 3), &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("stored serial 3 ("), "{}", r.stdout);
    assert!(
        r.stdout.contains(&format!("rm {}", far.display())),
        "{}",
        r.stdout
    );
    wait("serving 3", &|s| s["serial"] == 3);
    let h = history(&state);
    assert_eq!(h["generations"][0]["status"], "bad", "{h}");
    assert!(
        h["generations"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("RFC 1982"),
        "{h}"
    );
    stop(&mut child, Duration::from_secs(2), false);
}

/// A forged generation whose first name is 4 MB is refused with the name cut (its first bytes, an
/// ellipsis, its length): `history`, `load`'s note, the server's log and its status file stay small.
#[test]
fn a_forged_huge_name_is_quoted_cut_everywhere() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    assert_eq!(load(&state, &yml(t.path(), 1), &[]).code, 0);
    let gens = state.join("generations");
    let first = fs::read_dir(&gens).unwrap().next().unwrap().unwrap().path();
    let mut g =
        pigsty_dns::zone::generation::Generation::parse_unverified(&fs::read(first).unwrap())
            .unwrap();
    let huge = "a".repeat(4 << 20);
    g.serial = 2;
    g.records[0].name = format!("{huge}.pigsty.test");
    const SMALL: usize = 16 * 1024;

    // Written under a running server: refused, its log and status file stay small.
    let log = t.path().join("serve.log");
    let mut child = std::process::Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--state-dir"])
        .arg(&state)
        .env_remove("PIGSTY_DNS_LISTEN")
        .env_remove("PIGSTY_DNS_STATE_DIR")
        .stdout(std::process::Stdio::null())
        .stderr(fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let forged = gens.join(pigsty_dns::store::file_name(2, &g.self_digest()));
    place(&forged, &g.encode());
    let h = run(&["history", "--json", "--state-dir", state.to_str().unwrap()]);
    assert!(
        h.stdout.len() < SMALL,
        "history --json: {} bytes",
        h.stdout.len()
    );
    let v: serde_json::Value = serde_json::from_str(&h.stdout).unwrap();
    let reason = v["generations"][0]["reason"].as_str().unwrap();
    let cut = format!("\"{}\"…({} bytes)", "a".repeat(80), huge.len() + 12);
    assert!(reason.contains(&cut), "{reason}");
    assert!(reason.contains(" bytes)") && reason.len() < 300, "{reason}");
    let h = run(&["history", "--state-dir", state.to_str().unwrap()]);
    assert!(h.stdout.len() < SMALL, "history: {} bytes", h.stdout.len());

    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        let b = fs::read(state.join("status.json")).unwrap_or_default();
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap_or_default();
        if v["state"] == "running" && v["last_error"].is_string() {
            break b;
        }
        assert!(Instant::now() < deadline, "no last_error: {v}");
        std::thread::sleep(Duration::from_millis(50));
    };
    stop(&mut child, Duration::from_secs(2), false);
    assert!(status.len() < SMALL, "status.json: {} bytes", status.len());
    let log = fs::read(&log).unwrap();
    assert!(log.len() < SMALL, "serve log: {} bytes", log.len());
    let st = run(&["status", "--state-dir", state.to_str().unwrap()]);
    assert!(st.stdout.len() < SMALL, "status: {} bytes", st.stdout.len());

    // load passes over it and says so, briefly.
    let r = load(&state, &yml(t.path(), 2), &[]);
    assert!(
        r.stdout.contains("stored serial 3 ("),
        "{}",
        &r.stdout[..r.stdout.len().min(400)]
    );
    assert!(r.stdout.len() < SMALL, "load: {} bytes", r.stdout.len());
}

/// A generation forged with another apex (SOA or NS), both digests valid: `history` and `serve` give
/// it one verdict, with one reason, and `load` goes on above it.
#[test]
fn a_forged_apex_gets_one_verdict_from_history_and_serve() {
    use pigsty_dns::zone::generation::{Generation, record_digest};
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    assert_eq!(load(&state, &yml(t.path(), 1), &[]).code, 0);
    let gens = state.join("generations");
    let first = fs::read_dir(&gens).unwrap().next().unwrap().unwrap().path();
    let good = Generation::parse_unverified(&fs::read(first).unwrap()).unwrap();
    type Edit = fn(&mut Generation);
    let edits: [(&str, Edit); 6] = [
        ("a..b.", |g| g.soa.mname = "a..b.".into()),
        ("evil.example.", |g| g.soa.mname = "evil.example.".into()),
        ("ns.evil.example.", |g| {
            g.ns = vec!["ns.evil.example.".into()]
        }),
        ("(0 names)", |g| g.ns = vec![]),
        ("SOA", |g| g.soa.refresh = 0),
        ("SOA", |g| g.soa.expire = u32::MAX),
    ];
    let mut child = None;
    for (serial, (needle, edit)) in (2..).zip(edits) {
        let mut g = good.clone();
        g.serial = serial;
        edit(&mut g);
        g.record_digest = record_digest(&g.zone, g.ttl, &g.soa, &g.ns, &g.records, &g.ptr);
        let forged = gens.join(pigsty_dns::store::file_name(serial, &g.self_digest()));
        place(&forged, &g.encode());
        let h = history(&state);
        let row = &h["generations"][0];
        assert_eq!(row["status"], "bad", "{needle}: {row}");
        let reason = row["reason"].as_str().unwrap().to_string();
        assert!(reason.contains(needle), "{reason}");
        // The server, started on the first, is handed each in turn and refuses it with that reason.
        let c = child.get_or_insert_with(|| {
            std::process::Command::new(BIN)
                .args(["serve", "--listen", "127.0.0.1:0", "--state-dir"])
                .arg(&state)
                .env_remove("PIGSTY_DNS_LISTEN")
                .env_remove("PIGSTY_DNS_STATE_DIR")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        });
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let st: serde_json::Value = fs::read(state.join("status.json"))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default();
            let e = st["last_error"].as_str().unwrap_or("");
            if st["pid"] == c.id() && e.contains(&format!("generation {serial} ")) {
                assert!(e.contains(&reason), "serve: {e}\nhistory: {reason}");
                assert_eq!(st["serial"], 1);
                break;
            }
            assert!(Instant::now() < deadline, "{needle}: {st}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    if let Some(c) = child.as_mut() {
        stop(c, Duration::from_secs(2), false);
    }
    let r = load(&state, &yml(t.path(), 2), &[]);
    assert!(r.stdout.contains("stored serial 8 ("), "{}", r.stdout);
}

/// The state dir is checked on every rescan (risk 10): a `generations` symlink swapped in under a
/// running server, to a directory anyone may write, is refused as `load` and `history` refuse it,
/// and the server keeps serving what it served.
#[test]
fn a_generations_symlink_swapped_in_later_is_refused_by_the_rescan() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    assert_eq!(load(&state, &yml(t.path(), 1), &[]).code, 0);
    // Elsewhere, a valid newer generation in a directory writable by all.
    let other = t.path().join("other");
    for n in 1..=2 {
        assert_eq!(load(&other, &yml(t.path(), n), &[]).code, 0);
    }
    let mut child = std::process::Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--state-dir"])
        .arg(&state)
        .env_remove("PIGSTY_DNS_LISTEN")
        .env_remove("PIGSTY_DNS_STATE_DIR")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let status = || -> serde_json::Value {
        fs::read(state.join("status.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    while !(status()["state"] == "running" && status()["serial"] == 1) {
        assert!(Instant::now() < deadline, "{}", status());
        std::thread::sleep(Duration::from_millis(50));
    }
    fs::set_permissions(other.join("generations"), fs::Permissions::from_mode(0o777)).unwrap();
    fs::rename(state.join("generations"), state.join("old")).unwrap();
    std::os::unix::fs::symlink(other.join("generations"), state.join("generations")).unwrap();
    let h = run(&["history", "--state-dir", state.to_str().unwrap()]);
    assert_eq!(h.code, 7, "history refuses it: {}{}", h.stdout, h.stderr);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let st = status();
        assert_eq!(st["serial"], 1, "the server followed the symlink: {st}");
        if st["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("is not a directory"))
        {
            break;
        }
        assert!(Instant::now() < deadline, "no error for the symlink: {st}");
        std::thread::sleep(Duration::from_millis(100));
    }
    stop(&mut child, Duration::from_secs(2), false);
}
