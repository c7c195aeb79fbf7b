//! The real end-to-end route test: tests/lab/route-lab.sh runs systemd-resolved + networkd 252 from
//! Debian's packages in a private namespace and checks `route install`/`uninstall` (resolved-link,
//! networkd and runtime variants) against the real `pigsty-dns serve`. Runs only with PIGSTY_DNS_E2E=1; then every missing prerequisite
//! (root, the server command, the lab's tools) is a failure, never a skip.

use std::path::Path;
use std::process::Command;

use crate::{BIN, lab_turn};

#[test]
fn route_lab_resolved_link_end_to_end() {
    let Some(_turn) = lab_turn("route_lab", "root and Debian 12 apt sources") else {
        return;
    };
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lab = manifest.join("tests/lab/route-lab.sh");
    let work = tempfile::tempdir().expect("tempdir");
    let out = Command::new("timeout")
        .args(["-k", "5", "300"])
        .arg(&lab)
        .env("PIGSTY_DNS_BIN", BIN)
        .env("PIGSTY_DNS_RECORDS", manifest.join("zones/pigsty.test.yml"))
        .env("LAB", work.path())
        .output()
        .expect("run tests/lab/route-lab.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "route lab failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
    assert!(!stdout.lines().any(|l| l.starts_with("FAIL")), "{stdout}");
    // Both variants ran their checks.
    assert!(
        stdout.contains("PASS: networkd: route uninstall")
            && stdout.contains("PASS: runtime: route uninstall"),
        "{stdout}"
    );
}
