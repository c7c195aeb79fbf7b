//! The real end-to-end test of the resolved-delegate adapter: tests/lab/delegate-lab.sh runs
//! systemd-resolved >= 258 from a Debian sid root (debootstrap, cached under
//! `${TMPDIR:-/tmp}/pigsty-dns-sid-lab`, or `$SID_CACHE`) in a private namespace and checks
//! `route install --adapter resolved-delegate` / `uninstall` against the real `pigsty-dns serve`, and
//! what the route survives (issue 26: the daemon down, resolved restarted, a VPN, a hand edit, reinstall).
//! Runs only with PIGSTY_DNS_E2E=1; then every missing prerequisite (root, debootstrap, a Debian
//! archive in the apt sources, the lab's tools) is a failure, never a skip.

use crate::{lab_turn, run_script};

#[test]
fn route_lab_resolved_delegate_end_to_end() {
    let Some(_turn) = lab_turn(
        "route_delegate_lab",
        "root, debootstrap and a Debian archive in the apt sources",
    ) else {
        return;
    };
    // Per-run state only; the sid root stays cached at its stable place (SID_CACHE is inherited).
    let stdout = run_script("delegate-lab.sh");
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
        "PASS: delegate file: DNS, Domains (the zone and the live /24's reverse zone)",
        "PASS: a reverse lookup outside the /24 (10.10.11.10) never reaches the daemon",
        "PASS: route status: the reverse zone matches the live generation",
        "PASS: moved /24: route status reports the routed reverse zone as drift",
        "PASS: moved /24: that command re-routes (install again, verified)",
        "PASS: moved /24: the delegate routes the new reverse zone",
        // Issue 26, what the route survives.
        "PASS: row 9: a byte-identical delegate file",
        "PASS: row 9: an equivalent journal",
        "PASS: row 3: resolved restarted -> the delegate route survives",
        "PASS: row 2: daemon stopped -> stub SERVFAIL, fast",
        "PASS: row 2: route status says the daemon stopped",
        "PASS: row 2: route status says the daemon crashed",
        "PASS: row 2: ... nothing reached the upstream",
        "PASS: row 6: with a ~. VPN link, meta.pigsty.test still via the daemon",
        "PASS: row 6: vpn0 claims ~corp.pigsty.test -> route install refuses (exit 4, naming vpn0)",
        "PASS: row 6: vpn0 claims ~10.10.10.in-addr.arpa -> route status names the link",
        "PASS: row 8: a hand-edited delegate file -> route status names it",
        "PASS: row 8: uninstall leaves the changed file (exit 5)",
    ] {
        assert!(stdout.contains(want), "missing {want:?} in:\n{stdout}");
    }
    // The PTR answers (issue 12's serving half) are checked unless LAB_REVERSE_SERVED=0.
    if std::env::var("LAB_REVERSE_SERVED").as_deref() != Ok("0") {
        for want in [
            "PASS: getent hosts 10.10.10.10 -> the canonical name",
            "PASS: resolvectl query 10.10.10.10 -> the canonical name",
            "PASS: moved /24: resolvectl query 10.10.12.10 -> the canonical name",
        ] {
            assert!(stdout.contains(want), "missing {want:?} in:\n{stdout}");
        }
    }
}
