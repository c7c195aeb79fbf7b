//! The real end-to-end route test: tests/lab/route-lab.sh runs systemd-resolved + networkd 252 from
//! Debian's packages in a private namespace and checks `route install`/`uninstall` (resolved-link,
//! networkd and runtime variants) against the real `pigsty-dns serve`. Runs only with PIGSTY_DNS_E2E=1; then every missing prerequisite
//! (root, the server command, the lab's tools) is a failure, never a skip.

use crate::{lab_turn, run_script};

#[test]
fn route_lab_resolved_link_end_to_end() {
    let Some(_turn) = lab_turn("route_lab", "root and Debian 12 apt sources") else {
        return;
    };
    let stdout = run_script("route-lab.sh");
    // Both variants ran their checks.
    assert!(
        stdout.contains("PASS: networkd: route uninstall")
            && stdout.contains("PASS: runtime: route uninstall"),
        "{stdout}"
    );
}
