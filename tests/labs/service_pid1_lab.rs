//! The whole `service` + `route` journey under a real systemd as PID 1: tests/lab/pid1-lab.sh boots a
//! debootstrapped Debian root (cached under `${TMPDIR:-/tmp}/pigsty-dns-pid1-lab`, or `$PID1_CACHE`)
//! with systemd-nspawn in its own network namespace, copies this build's binary in as
//! /usr/local/bin/pigsty-dns and, inside, does what a user would: `service install --system` (READY=1,
//! every hardening directive read back from the running process, `systemd-analyze security`), `load`,
//! `kill -9` and a taken port (exit 6, back-off or start limit), the user unit through
//! `systemctl --user` with lingering, `route install` with the real resolved of the suite, a container
//! restart (unit, route and the lingering user unit come back; a boot probe times the first good
//! answer through resolved's stub and an upstream stand-in up before resolved sees no zone name;
//! bookworm reboots once more with the route's runtime variant), `service uninstall --with-route`
//! after the reboot (route first, /etc byte-identical). Then the Debian package built in the same run (`$PIGSTY_DNS_DEB`, from
//! deploy/debian/build-deb.sh; .ci/run builds it first): `dpkg -i`, `man -w`, bash completion, the
//! journey again with /usr/bin/pigsty-dns and the package's account, `dpkg -r` (prerm: route first,
//! then the unit) and `dpkg -P`, with what policy keeps (the account; the records on -r). Both suites:
//! bookworm (systemd 252, resolved-link with networkd) and sid (systemd >= 258, resolved-delegate).
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
    "PASS: before the restart: the user unit installed again and kept (lingering)",
    "PASS: reboot: the boot probe ran and ended by itself",
    "PASS: reboot: no ordering cycle in this boot's journal",
    "PASS: reboot: the probe asked before pigsty-dns was READY",
    "PASS: reboot: a good answer through resolved's stub",
    "PASS: reboot: before the first good answer only refused, timeout or SERVFAIL",
    "PASS: reboot: the probe never got NXDOMAIN or another answer",
    "PASS: reboot: the upstream stand-in and the uplink were up before resolved started",
    "PASS: reboot: the upstream stand-in saw no question for pigsty.test",
    "PASS: reboot: ... and it saw the control name",
    "PASS: after the restart: user@1000.service runs by itself (lingering)",
    "PASS: after the restart: the user unit is active by itself (no login: linger)",
    "PASS: after the restart: user unit: service uninstall",
    "PASS: service uninstall --system --with-route",
    "PASS: resolved's state over time (sampled every 50 ms): route gone before the unit stopped",
    "PASS: journal: the route's removal",
    "PASS: /etc byte-identical to before the install",
    "PASS: a second uninstall is harmless",
    "PASS: host:",
    "PASS: the cached",
    "PASS: package: dpkg -i pigsty-dns.deb",
    "PASS: package: the bare name is the package's binary",
    "PASS: package: postinst made the system account",
    "PASS: package: no unit installed, enabled or started by installing",
    "PASS: package: man -w pigsty-dns [/usr/share/man/man1/pigsty-dns.1.gz]",
    "PASS: package: bash completion, loaded on demand by bash-completion",
    "PASS: package: bash completes 'pigsty-dns rou' to route",
    "PASS: package (no-unit): a route to a hand-run server (no unit of the package serves it)",
    "PASS: package (no-unit): with a FIFO as the account's status.json, prerm decides at once",
    "PASS: package (no-unit): dpkg -r refused by prerm (route with no unit of ours), saying what to run",
    "PASS: package (no-unit): after the refusal: still installed, the route (and the unit) still there",
    "PASS: package (no-unit): the route removed as prerm said",
    "PASS: package (beside-unit): a route to a hand-run server (no unit of the package serves it)",
    "PASS: package (beside-unit): dpkg -r refused by prerm (route with no unit of ours), saying what to run",
    "PASS: package (beside-unit): after the refusal: still installed, the route (and the unit) still there",
    "PASS: package (beside-unit): the route removed as prerm said",
    "PASS: package: service install --system --user pigsty-dns",
    "PASS: package: the unit runs /usr/bin/pigsty-dns",
    "PASS: package: sudo -u pigsty-dns pigsty-dns load FILE",
    "PASS: package: route install --server",
    "PASS: package: getent ahostsv4 meta.pigsty.test through the route [10.10.10.10]",
    "PASS: package: route status all ok",
    "PASS: package: the search for leftovers finds the binary, the unit, the records and the route journal",
    "PASS: package: dpkg -r pigsty-dns (prerm takes down the route, then the unit)",
    "PASS: package: prerm removed the route before the unit",
    "PASS: package -r: no route in resolved",
    "PASS: package -r: no unit (file and systemd)",
    "PASS: package -r: no pigsty-dns process",
    "PASS: package -r: no journal of ours",
    "PASS: package -r: policy keeps the account and the records",
    "PASS: package -r: /etc as after dpkg -i",
    "PASS: package: dpkg -P pigsty-dns",
    "PASS: package -P: the records are gone",
    "PASS: package -P: policy keeps the account",
    "PASS: package -P: nothing named *pigsty* left",
    "PASS: package -P: /etc as before dpkg -i, but for the account files",
];

/// Runs the journey on one suite; `Err` with the script's output when anything failed.
fn run_suite(
    script: &Path,
    bin: &Path,
    records: &Path,
    deb: &Path,
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
        .env("PIGSTY_DNS_DEB", deb)
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
    // The package is built before the tests (it takes a release build): a missing one is a failure.
    let deb = std::env::var_os("PIGSTY_DNS_DEB").map(PathBuf::from);
    let deb = deb.filter(|d| d.is_file()).unwrap_or_else(|| {
        panic!(
            "PIGSTY_DNS_E2E=1: set PIGSTY_DNS_DEB to the package: PIGSTY_DNS_DEB=$(deploy/debian/build-deb.sh) (got {:?})",
            std::env::var_os("PIGSTY_DNS_DEB")
        )
    });
    // Both suites run, one after the other (the restart timings are measured), even if one fails.
    let results = [
        run_suite(
            &script,
            &bin,
            &records,
            &deb,
            "bookworm",
            &[
                "PASS: route status: the adapter for systemd 252",
                "PASS: systemd-networkd runs as a unit",
                "PASS: 252: after the burst the unit gave up (failed, 'Start request repeated too quickly')",
                "PASS: 252: fixed interval",
                "PASS: 252: the start limit allowed 10 starts (StartLimitBurst=10)",
                "PASS: route uninstall, route install --link-variant runtime",
                "PASS: reboot (runtime variant): the route is back (its boot unit ran)",
                "PASS: reboot (runtime variant): a good answer through resolved's stub",
                "PASS: route uninstall, route install --link-variant networkd",
            ],
        ),
        run_suite(
            &script,
            &bin,
            &records,
            &deb,
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
