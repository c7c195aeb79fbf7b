//! The real end-to-end route test: tests/lab/route-lab.sh runs systemd-resolved + networkd 252 from
//! Debian's packages in a private namespace and checks `route install`/`uninstall` (resolved-link,
//! networkd and runtime variants) against the real `pigsty-dns serve`, and what an installed route
//! survives (issue 26: the daemon down, resolved/networkd restarts, the link lost, a VPN, a crash
//! mid-install, hand edits, reinstall). Runs only with PIGSTY_DNS_E2E=1; then every missing prerequisite
//! (root, the server command, the lab's tools) is a failure, never a skip.

use crate::{lab_turn, run_script, run_script_with};

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
    // Issue 26, what the route survives: each row ran where the lab runs it.
    for line in [
        "networkd: row 2: daemon stopped -> nothing reaches the upstream",
        "networkd: row 2: route status says the daemon crashed",
        "networkd: row 3: networkctl reload -> the route survives",
        "networkd: row 4: after the renewal meta.pigsty.test still via the daemon",
        "networkd: row 4: the uplink's new domain goes to the uplink's server",
        "networkd: row 5: networkctl reload re-creates the deleted link",
        "networkd: row 5: address removed -> route status fails on the link, naming the leak",
        "networkd: row 6: vpn0 claims ~corp.pigsty.test -> route install refuses (exit 4, naming vpn0)",
        "networkd: row 6: vpn0 claims ~10.10.10.in-addr.arpa -> route status names the link",
        "runtime: row 3: resolved restarted -> the route survives",
        "runtime: row 5: that command (an idempotent route install) repairs the route, verified",
        "runtime: row 6: with a ~. VPN link, meta.pigsty.test still via the daemon",
        "runtime: row 8: journal owner -> uninstall refuses (exit 7), nothing removed",
        "runtime: row 9: byte-identical files",
        "runtime: row 7: route status reports the interrupted install from the journal",
        "runtime: row 7: route uninstall again completes",
    ] {
        let line = format!("PASS: {line}");
        assert!(stdout.contains(&line), "missing {line:?} in:\n{stdout}");
    }
    // Issue 37: both zones journaled, and nothing under .pigsty leaks while the daemon is down.
    if pigsty_served() {
        for v in ["networkd", "runtime"] {
            for w in [
                "the journal records both zones",
                "daemon down -> no *.pigsty query reaches the upstream",
            ] {
                let line = format!("PASS: {v}: {w}");
                assert!(stdout.contains(&line), "missing {line:?} in:\n{stdout}");
            }
        }
    }
}

/// Issue 31's journey: a stock Pigsty config served with --follow, routed, and resolved by getent, a
/// real psql, curl and Python; a cluster added live; a broken edit keeping the last good.
#[test]
fn route_lab_pigsty_journey() {
    let Some(_turn) = lab_turn(
        "route_lab_pigsty_journey",
        "root, Debian 12 apt sources, psql, curl",
    ) else {
        return;
    };
    let stdout = run_script_with("route-lab.sh", &["pigsty"]);
    for w in [
        "route install (verified with pg-meta.pigsty.test)",
        "getent ahostsv4 pg-meta.pigsty.test",
        "psql -h pg-meta.pigsty.test connects to 10.10.10.10 (its error names it)",
        "curl resolves pg-meta.pigsty.test to 10.10.10.10",
        "Python's socket.getaddrinfo",
        "a cluster added to the config is live without a restart",
        "a broken edit keeps the last good (pg-test still answers)",
        "the server logged the refusal naming the value",
        "an unrelated name still goes to the upstream",
        "route uninstall",
    ] {
        let line = format!("PASS: pigsty: {w}");
        assert!(stdout.contains(&line), "missing {line:?} in:\n{stdout}");
    }
    // Issue 37's names under .pigsty, unless the daemon serves pigsty.test alone (LAB_PIGSTY_SERVED=0).
    if pigsty_served() {
        for w in [
            "getent ahostsv4 i.pigsty",
            "Python's socket.getaddrinfo of i.pigsty",
            "curl -v https://i.pigsty/ tries 10.10.10.10 (the portal's name, resolved)",
            "route status: every served zone is routed",
            "daemon down -> no *.pigsty query reaches the upstream",
        ] {
            let line = format!("PASS: pigsty: {w}");
            assert!(stdout.contains(&line), "missing {line:?} in:\n{stdout}");
        }
    }
}

/// The daemon serves pigsty beside pigsty.test (issue 37) unless LAB_PIGSTY_SERVED=0.
fn pigsty_served() -> bool {
    std::env::var("LAB_PIGSTY_SERVED").as_deref() != Ok("0")
}
