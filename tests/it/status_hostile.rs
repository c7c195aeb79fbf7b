//! The status file is written by the server but read by every command, root's included, from state
//! dirs other users own (issue 33): a FIFO, a symlink to `/dev/zero` or a file full of terminal escapes
//! in its place must neither hang nor exhaust the reader nor reach the terminal raw.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use crate::util::*;

/// Every string the status file carries, each with a title change, a screen clear, OSC 52 (clipboard),
/// a C1 CSI and a bidi override.
const HOSTILE: &str = "\\u001b]0;OWNED\\u0007\\u001b[2J\\u001b]52;c;aGk=\\u0007\\u009b31m\\u202e";

fn hostile_status(pid: u32) -> String {
    let h = HOSTILE;
    format!(
        r#"{{"format": 1, "state": "running", "pid": {pid}, "started": "s{h}", "started_unix": 1,
  "updated": "u{h}", "listen": ["127.0.0.1:9"], "zone": "pigsty.test", "reverse_zone": null,
  "serial": 1, "secondaries": [{{"address": "127.0.0.1:53", "acknowledged_serial": null,
  "pending_serial": null, "last_error": "se{h}", "failures": 1}}],
  "record_digest": "d{h}", "records": 1, "generation": "/g{h}", "loaded_at": "la{h}",
  "loaded_from": "lf{h}", "follow": "f{h}", "last_error": "le{h}",
  "counters": {{"noerror": 0, "nxdomain": 0, "refused": 0, "formerr": 0, "notimp": 0, "servfail": 0,
  "badvers": 0, "other": 0, "dropped": 0, "truncated": 0, "tcp_accepted": 0, "tcp_refused": 0}},
  "nxdomain_names": ["n{h}"]}}"#
    )
}

/// `pigsty-dns ARGS`, killed after 20 s: a reader stuck on the status file shows as rc 124.
fn bounded(args: &[&str]) -> Run {
    let out = Command::new("timeout")
        .args(["-k", "2", "20", BIN])
        .args(args)
        .env_remove("PIGSTY_DNS_STATE_DIR")
        .env_remove("PIGSTY_DNS_LISTEN")
        .output()
        .expect("run timeout pigsty-dns");
    finish(out)
}

fn status_of(state: &Path, json: bool) -> Run {
    let s = state.to_str().unwrap();
    let mut args = vec!["status", "--state-dir", s, "--server", "127.0.0.1:9"];
    if json {
        args.push("--json");
    }
    bounded(&args)
}

fn private_state(t: &Path) -> std::path::PathBuf {
    let state = t.join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    state
}

#[test]
fn a_fifo_as_status_file_does_not_hang_the_readers() {
    let t = tempfile::tempdir().unwrap();
    let state = private_state(t.path());
    let fifo = state.join("status.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for json in [false, true] {
        let r = status_of(&state, json);
        assert_ne!(r.code, 124, "status hung on a FIFO: {}", r.stderr);
        if !json {
            assert!(
                r.stdout.contains("status file") && r.stdout.contains("not a regular file"),
                "{}",
                r.stdout
            );
        }
    }
}

#[test]
fn a_symlink_to_dev_zero_as_status_file_is_not_followed() {
    let t = tempfile::tempdir().unwrap();
    let state = private_state(t.path());
    std::os::unix::fs::symlink("/dev/zero", state.join("status.json")).unwrap();
    let r = status_of(&state, false);
    assert_ne!(r.code, 124, "status read /dev/zero: {}", r.stderr);
    assert!(r.stdout.contains("is a symlink"), "{}", r.stdout);
}

#[test]
fn an_oversized_status_file_is_refused_unread() {
    let t = tempfile::tempdir().unwrap();
    let state = private_state(t.path());
    let f = state.join("status.json");
    let file = std::fs::File::create(&f).unwrap();
    file.set_len(64 * 1024 * 1024).unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    let r = status_of(&state, false);
    assert!(r.stdout.contains("above the"), "{}", r.stdout);
}

/// The status file's strings are shown escaped, in text and in JSON, for the user who owns it.
#[test]
fn escapes_in_the_status_file_reach_the_terminal_inert() {
    let t = tempfile::tempdir().unwrap();
    let state = private_state(t.path());
    let f = write(&state, "status.json", &hostile_status(std::process::id()));
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    for json in [false, true] {
        let r = status_of(&state, json);
        assert_inert("status stdout", &r.stdout);
        assert_inert("status stderr", &r.stderr);
        // Read, not refused: the fields are there, escaped (`--json` prints only the error here).
        assert!(json || r.stdout.contains("OWNED"), "{}", r.stdout);
    }
    let r = status_of(&state, false);
    assert!(
        r.stdout.contains("last error: le\\u{1b}]0;OWNED\\u{7}"),
        "{}",
        r.stdout
    );
}

/// Root reading a state dir another user owns: a status file of that user is read (escaped); one of a
/// third user, or one in a directory others may write, is refused.
#[test]
fn root_reads_another_users_status_file_only_as_its_dirs_owner_wrote_it() {
    if !e2e() {
        eprintln!("skipped: set PIGSTY_DNS_E2E=1 (needs root to chown)");
        return;
    }
    // SAFETY: geteuid has no preconditions.
    assert_eq!(unsafe { libc::geteuid() }, 0, "PIGSTY_DNS_E2E=1 needs root");
    let t = tempfile::tempdir().unwrap();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let state = private_state(t.path());
    let f = write(&state, "status.json", &hostile_status(std::process::id()));
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::chown(&state, Some(65534), Some(65534)).unwrap();
    std::os::unix::fs::chown(&f, Some(65534), Some(65534)).unwrap();
    for json in [false, true] {
        let r = status_of(&state, json);
        assert_inert("root's status stdout", &r.stdout);
        assert_inert("root's status stderr", &r.stderr);
        assert!(json || r.stdout.contains("OWNED"), "{}", r.stdout);
    }
    // Another user's file in that dir: not the server's.
    std::os::unix::fs::chown(&f, Some(65533), None).unwrap();
    let r = status_of(&state, false);
    assert!(r.stdout.contains("owned by uid 65533"), "{}", r.stdout);
    assert!(!r.stdout.contains("OWNED"), "{}", r.stdout);
    std::os::unix::fs::chown(&f, Some(65534), None).unwrap();
    // A group-writable file: anyone in the group could have written it.
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o620)).unwrap();
    let r = status_of(&state, false);
    assert!(r.stdout.contains("has mode 620"), "{}", r.stdout);
    assert_eq!(std::fs::metadata(&f).unwrap().uid(), 65534);
}

/// Inventory group keys reach the source column of `check` and `load` escaped (issue 33 item 2).
#[test]
fn group_keys_with_escapes_reach_the_source_column_inert() {
    let t = tempfile::tempdir().unwrap();
    let f = write(
        t.path(),
        "g.yml",
        "all:\n  children:\n    \"\\e]0;OWNED\\a\\e[31mgrp\\x9b\":\n      hosts:\n        10.10.10.10: {nodename: meta, vm_alias: [m]}\n        10.10.10.11: {vm_skip: true}\n",
    );
    let r = run(&["check", f.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_inert("check", &r.stdout);
    assert!(
        r.stdout
            .contains("all.children.\"\\u{1b}]0;OWNED\\u{7}\\u{1b}[31mgrp\\u{9b}\".hosts"),
        "{}",
        r.stdout
    );
    let state = t.path().join("state");
    let r = load(&state, &f, &[]);
    assert_inert("load stdout", &r.stdout);
    assert_inert("load stderr", &r.stderr);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// The escape walk over the commands outside `route`: an input file whose name, group keys and
/// aliases' sources carry terminal escapes, loaded, then `check`, `load`, `history`, `export` (every
/// format) and `status` (with an escape-laden status file) in text and JSON: nothing reaches the
/// terminal raw. (The route commands' walk comes with the escaping of their own output.)
#[test]
fn escape_walk_over_check_load_history_export_and_status() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join(format!("in{ESCAPES}"));
    std::fs::create_dir(&dir).unwrap();
    let yaml = "all:\n  children:\n    \"g\\e]0;OWNED\\a\\e[2J\\x9b31m\\u202e\":\n      hosts:\n        10.10.10.10: {nodename: meta, vm_alias: [m]}\n        10.10.10.11: {vm_skip: true}\n  vars: {vm_hosts: [{address: 10.10.10.12, names: [a, i.pigsty]}]}\n";
    let f = write(&dir, &format!("h{ESCAPES}.yml"), yaml);
    let fs = f.to_str().unwrap();
    let state = private_state(t.path());
    let sd = state.to_str().unwrap();
    for json in [false, true] {
        let j: &[&str] = if json { &["--json"] } else { &[] };
        let r = run(&[&["check", fs][..], j].concat());
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_run_inert("check", &r);
        let r = run(&[&["load", fs, "--state-dir", sd][..], j].concat());
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_run_inert("load", &r);
        let r = run(&[&["history", "--state-dir", sd][..], j].concat());
        assert_run_inert("history", &r);
    }
    for format in ["zone", "hosts", "json"] {
        // A zone file holds one of the two zones.
        let zone: &[&str] = if format == "zone" {
            &["--zone", "pigsty.test"]
        } else {
            &[]
        };
        let r = run(&[&["export", "--state-dir", sd, "--format", format][..], zone].concat());
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_run_inert(&format!("export --format {format}"), &r);
    }
    let s = write(&state, "status.json", &hostile_status(std::process::id()));
    std::fs::set_permissions(&s, std::fs::Permissions::from_mode(0o600)).unwrap();
    for json in [false, true] {
        assert_run_inert("status", &status_of(&state, json));
    }
}

/// Errors name the offending value escaped, in text and in JSON: a missing input whose name carries
/// escapes, and an inventory whose bad value does.
#[test]
fn error_lines_name_hostile_values_inert() {
    let t = tempfile::tempdir().unwrap();
    let missing = t.path().join(format!("gone{ESCAPES}.yml"));
    let bad = write(
        t.path(),
        "bad.yml",
        "all:\n  hosts:\n    10.10.10.10: {nodename: \"x\\e]0;OWNED\\a\\x9by\"}\n",
    );
    for f in [missing.to_str().unwrap(), bad.to_str().unwrap()] {
        for json in [false, true] {
            let j: &[&str] = if json { &["--json"] } else { &[] };
            let r = run(&[&["check", f][..], j].concat());
            assert_ne!(r.code, 0, "{}", r.stdout);
            assert_run_inert("check (refused)", &r);
        }
    }
}
