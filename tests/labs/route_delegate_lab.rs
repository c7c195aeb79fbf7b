//! The real end-to-end test of the resolved-delegate adapter: tests/lab/delegate-lab.sh runs
//! systemd-resolved >= 258 from a Debian sid root (debootstrap, cached under
//! `${TMPDIR:-/tmp}/pigsty-dns-sid-lab`, or `$SID_CACHE`) in a private namespace and checks
//! `route install --adapter resolved-delegate` / `uninstall` against the real `pigsty-dns serve`.
//! Runs only with PIGSTY_DNS_E2E=1; then every missing prerequisite (root, debootstrap, a Debian
//! archive in the apt sources, the lab's tools) is a failure, never a skip.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::{BIN, lab_turn};

#[test]
fn route_lab_resolved_delegate_end_to_end() {
    let Some(_turn) = lab_turn(
        "route_delegate_lab",
        "root, debootstrap and a Debian archive in the apt sources",
    ) else {
        return;
    };
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lab = manifest.join("tests/lab/delegate-lab.sh");
    // Per-run state only; the sid root stays cached at its stable place (SID_CACHE is inherited).
    let work = tempfile::tempdir().expect("tempdir");
    let t0 = Instant::now();
    // Hard limit: building the root is bounded at 200 s, the namespace part at 90 s.
    let out = Command::new("timeout")
        .args(["-k", "5", "300"])
        .arg(&lab)
        .env("PIGSTY_DNS_BIN", BIN)
        .env("PIGSTY_DNS_RECORDS", manifest.join("zones/pigsty.test.yml"))
        .env("LAB", work.path())
        .output()
        .expect("run tests/lab/delegate-lab.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    println!("# delegate lab took {} s", t0.elapsed().as_secs());
    assert!(
        out.status.success(),
        "delegate lab failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
    assert!(!stdout.lines().any(|l| l.starts_with("FAIL")), "{stdout}");
    // The whole cycle ran, against a resolved new enough for delegates, picked by detection.
    for want in [
        "PASS: detect: install --dry-run picks resolved-delegate",
        "PASS: route install (verified",
        "PASS: unrelated name never reaches the daemon",
        "PASS: daemon down -> nothing reached the default upstream",
        "PASS: route uninstall [0]",
        "PASS: --root files and directories byte-identical to before",
        "PASS: uninstall twice is harmless",
        "PASS: host:",
    ] {
        assert!(stdout.contains(want), "missing {want:?} in:\n{stdout}");
    }
}
