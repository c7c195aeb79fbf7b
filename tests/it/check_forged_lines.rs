//! A newline in a value from the file never starts a line of ours: not in `error:`/`next:`, not in
//! the text log of `serve --follow`. Each case is a value an author could write to forge a line.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::*;

/// No line of `out` starts with `forged`: the value's newline was shown, not written.
fn no_forged_line(out: &str, forged: &str) {
    assert!(
        !out.lines().any(|l| l.starts_with(forged)),
        "a line starting {forged:?} was forged:\n{out}"
    );
}

#[test]
fn a_group_name_with_a_newline_stays_in_its_error_line() {
    let r = check_text("all:\n  children:\n    \"x\\nnext: rm -rf /\":\n      children: [a]\n");
    assert_eq!(r.code, 8, "{}", r.stderr);
    r.error_line();
    no_forged_line(&r.stderr, "next: rm");
    assert!(r.stderr.contains("x\\nnext: rm -rf /"), "{}", r.stderr);
}

#[test]
fn a_host_key_hint_does_not_repeat_the_value_raw() {
    let r = check_text("all:\n  hosts:\n    \"10.10.10.10\\nnext: forged/24\": {nodename: meta}\n");
    assert_eq!(r.code, 8, "{}", r.stderr);
    r.error_line();
    no_forged_line(&r.stderr, "next: forged");
}

#[test]
fn a_pg_dns_target_hint_does_not_repeat_the_value_raw() {
    let text = "all:\n  children:\n    infra: {hosts: {10.10.10.10: {infra_seq: 1}}}\n    pg-x:\n      hosts:\n        10.10.10.10: {pg_seq: 1, pg_role: primary}\n      vars: {pg_cluster: pg-x, pg_dns_target: \"10.10.10.50\\nnext: forged/24\"}\n  vars: {admin_ip: 10.10.10.10}\n";
    let r = check_text(text);
    assert_eq!(r.code, 8, "{}", r.stderr);
    r.error_line();
    no_forged_line(&r.stderr, "next: forged");
}

#[test]
fn the_follow_log_in_text_keeps_a_forged_entry_inside_its_line() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    let file = write(
        t.path(),
        "host-names.yml",
        "all:\n  hosts: {10.10.10.10: {nodename: meta}}\n",
    );
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--follow", "--records"])
        .arg(&file)
        .arg("--state-dir")
        .arg(&state)
        .env_remove("PIGSTY_DNS_LISTEN")
        .env_remove("PIGSTY_DNS_STATE_DIR")
        .env_remove("PIGSTY_DNS_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let status = state.join("status.json");
    let running = |want: &dyn Fn(&serde_json::Value) -> bool| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(v) = std::fs::read(&status)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .filter(|v| want(v))
            {
                return Some(v);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    };
    let up = running(&|v| v["state"] == "running");
    let forged = "2026-01-01T00:00:00Z  INFO pigsty_dns::daemon: swapped in serial 999";
    let tmp = t.path().join(".edit");
    std::fs::write(
        &tmp,
        format!("all:\n  children:\n    \"x\\n{forged}\":\n      children: [a]\n"),
    )
    .unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    let reported = running(&|v| v["last_error"].is_string());
    stop(&mut child, Duration::from_secs(5), false);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(up.is_some(), "serve did not start: {err}");
    assert!(reported.is_some(), "the bad edit was not reported: {err}");
    assert!(err.contains("not loaded"), "{err}");
    no_forged_line(&err, "2026-01-01T00:00:00Z");
}
