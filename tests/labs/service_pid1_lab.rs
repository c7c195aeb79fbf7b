//! The whole `service` + `route` journey under a real systemd as PID 1: tests/lab/pid1-lab.sh boots a
//! debootstrapped Debian root (cached under `${TMPDIR:-/tmp}/pigsty-dns-pid1-lab`, or `$PID1_CACHE`)
//! with systemd-nspawn in its own network namespace, copies this build's binary in as
//! /usr/local/bin/pigsty-dns and, inside, does what a user would: `service install --system` (READY=1,
//! every hardening directive read back from the running process, `systemd-analyze security`), `load`,
//! `kill -9` and a taken port (exit 6, back-off or start limit), the user unit through
//! `systemctl --user` with lingering, `route install` with the real resolved of the suite, a container
//! restart (unit and route come back), `service uninstall --with-route` (route first, /etc
//! byte-identical). Both suites: bookworm (systemd 252, resolved-link with networkd) and sid
//! (systemd >= 258, resolved-delegate).
//!
//! The binary is this test build's, or `$PIGSTY_DNS_LAB_BIN` (e.g. target/release/pigsty-dns).
//!
//! Runs only with PIGSTY_DNS_E2E=1; then every missing prerequisite (root, systemd-nspawn,
//! debootstrap, a Debian archive in the apt sources) is a failure, never a skip. The container is
//! stopped by the script's own EXIT trap and again by a guard here, whatever fails.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::{BIN, Container, lab_turn};

/// The checks every suite must have passed (the script prints one `PASS:` line per check).
const EVERY_SUITE: &[&str] = &[
    "PASS: service install --system --user pigsty-dns",
    "PASS: unit: Type=notify, active (running), enabled, User=pigsty-dns",
    "PASS: StatusText is what the daemon sends with READY=1",
    "PASS: process: NoNewPrivs [1]",
    "PASS: process: Seccomp (filter mode) [2]",
    "PASS: process: more seccomp filters than the container's own",
    "PASS: process: CapEff/CapPrm/CapBnd all empty",
    "PASS: ProtectSystem=strict",
    "PASS: ProtectHome=yes",
    "PASS: PrivateTmp=yes",
    "PASS: StateDirectory=pigsty-dns",
    "PASS: systemd-analyze security: exposure",
    "PASS: install's load instructions all name the service user and state dir",
    "PASS: the printed command, sudo -u pigsty-dns /usr/local/bin/pigsty-dns load FILE",
    "PASS: service status: the unit line",
    "PASS: kill -9 of the main PID -> systemd restarted it",
    "PASS: NRestarts counts the restart",
    "PASS: after the restart: the same generation is served",
    "PASS: the daemon exited with the documented exit 6 (port in use)",
    "PASS: no spinning",
    "PASS: user unit: Type=notify, active (running), enabled (systemctl --user)",
    "PASS: user unit: StatusText from READY=1",
    "PASS: user unit process: NoNewPrivs",
    "PASS: control: the user unit with ProtectHome=yes never becomes active",
    "PASS: control: the daemon could not reach the notify socket",
    "PASS: route install --server",
    "PASS: getent ahostsv4 meta.pigsty.test",
    "PASS: after the restart: the system unit is active by itself",
    "PASS: after the restart: the route is back in resolved",
    "PASS: after the restart: the newest good generation is served",
    "PASS: service uninstall --system --with-route",
    "PASS: resolved's state over time (sampled every 50 ms): route gone before the unit stopped",
    "PASS: journal: the route's removal",
    "PASS: /etc byte-identical to before the install",
    "PASS: a second uninstall is harmless",
    "PASS: host:",
    "PASS: the cached",
];

/// Runs the journey on one suite; `Err` with the script's output when anything failed.
fn run_suite(
    script: &Path,
    bin: &Path,
    records: &Path,
    suite: &str,
    specific: &[&str],
) -> Result<(), String> {
    let work = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let guard = Container {
        script,
        suite,
        lab: work.path().join("lab"),
    };
    let t0 = Instant::now();
    // Hard limit: a cold build of the root is bounded at 900 s by the script, the journey at ~4 min.
    let out = Command::new("timeout")
        .args(["-k", "60", "1260"])
        .arg(script)
        .arg("test")
        .env("SUITE", suite)
        .env("LAB", &guard.lab)
        .env("PIGSTY_DNS_BIN", bin)
        .env("PIGSTY_DNS_RECORDS", records)
        .output()
        .map_err(|e| format!("run {}: {e}", script.display()))?;
    drop(guard);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    println!("# pid1 lab ({suite}) took {} s", t0.elapsed().as_secs());
    if !stderr.trim().is_empty() {
        println!("# stderr ({suite}):\n{stderr}");
    }
    let mut missing: Vec<&str> = EVERY_SUITE
        .iter()
        .chain(specific)
        .copied()
        .filter(|w| !stdout.contains(w))
        .collect();
    if !stdout.contains(" passed, 0 failed") {
        missing.push("N passed, 0 failed");
    }
    if out.status.success() && missing.is_empty() && !stdout.lines().any(|l| l.starts_with("FAIL"))
    {
        return Ok(());
    }
    // The container is stopped; its logs (and overlay) stay for a look.
    let kept = work.keep();
    Err(format!(
        "pid1 lab ({suite}) failed: exit {:?}, missing {missing:?}; logs kept in {}/lab/logs",
        out.status.code(),
        kept.display()
    ))
}

#[test]
fn service_and_route_under_systemd_as_pid1() {
    let Some(_turn) = lab_turn(
        "service_pid1_lab",
        "root, systemd-nspawn, debootstrap and a Debian archive in the apt sources",
    ) else {
        return;
    };
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = manifest.join("tests/lab/pid1-lab.sh");
    let records = manifest.join("zones/pigsty.test.yml");
    let bin =
        std::env::var_os("PIGSTY_DNS_LAB_BIN").map_or_else(|| PathBuf::from(BIN), PathBuf::from);
    // Both suites run, one after the other (the restart timings are measured), even if one fails.
    let results = [
        run_suite(
            &script,
            &bin,
            &records,
            "bookworm",
            &[
                "PASS: route status: the adapter for systemd 252",
                "PASS: systemd-networkd runs as a unit",
                "PASS: 252: after the burst the unit gave up (failed, 'Start request repeated too quickly')",
                "PASS: 252: fixed interval",
                "PASS: 252: the start limit allowed 10 starts (StartLimitBurst=10)",
            ],
        ),
        run_suite(
            &script,
            &bin,
            &records,
            "sid",
            &[
                "[resolved-delegate]",
                "PASS: >= 254: the delays grow (RestartSteps back-off)",
            ],
        ),
    ];
    let failed: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(failed.is_empty(), "{failed:#?}");
}
