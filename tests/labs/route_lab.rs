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
    // Both variants ran their checks, the reverse zone's included.
    for v in ["networkd", "runtime"] {
        let mut want = vec![
            "route uninstall",
            "the link also routes the reverse zone of the live /24",
            "a reverse lookup outside the /24 (10.10.11.10) never reaches the daemon",
            "route status: the reverse zone matches the live generation",
            "moved /24: route status reports the routed reverse zone as drift",
            "moved /24: that command re-routes (install again, verified)",
            "moved /24: the link routes the new reverse zone",
        ];
        // The PTR answers (issue 12's serving half) are checked unless LAB_REVERSE_SERVED=0.
        if std::env::var("LAB_REVERSE_SERVED").as_deref() != Ok("0") {
            want.extend([
                "getent hosts 10.10.10.10 -> the canonical name",
                "resolvectl query 10.10.10.10 -> the canonical name",
                "moved /24: resolvectl query 10.10.12.10 -> the canonical name",
            ]);
        }
        for w in want {
            let line = format!("PASS: {v}: {w}");
            assert!(stdout.contains(&line), "missing {line:?} in:\n{stdout}");
        }
    }
}
