//! The labs: real systemd-resolved (and more) booted in private network namespaces, driven by the
//! scripts in `tests/lab/`. Each runs only with `PIGSTY_DNS_E2E=1` (then every missing prerequisite is
//! a failure, never a skip), and one at a time: they share the machine's CPU and apt caches.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

mod nm_lab;
mod route_delegate_lab;
mod route_lab;
mod service_pid1_lab;

pub const BIN: &str = env!("CARGO_BIN_EXE_pigsty-dns");

/// Stops a booted lab container (`SCRIPT stop`: a clean poweroff, SIGKILL of nspawn after 30 s) when
/// dropped, whatever failed.
pub struct Container<'a> {
    pub script: &'a Path,
    pub suite: &'a str,
    pub lab: PathBuf,
}

impl Drop for Container<'_> {
    fn drop(&mut self) {
        let _ = Command::new(self.script)
            .arg("stop")
            .env("SUITE", self.suite)
            .env("LAB", &self.lab)
            .status();
    }
}

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// None without `PIGSTY_DNS_E2E=1` (the lab is not run); else the lab's turn, after checking for root.
pub fn lab_turn(name: &str, needs: &str) -> Option<MutexGuard<'static, ()>> {
    if std::env::var("PIGSTY_DNS_E2E").as_deref() != Ok("1") {
        eprintln!("{name}: set PIGSTY_DNS_E2E=1 to run (needs {needs})");
        return None;
    }
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "PIGSTY_DNS_E2E=1: the {name} lab needs root"
    );
    Some(ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Runs `tests/lab/SCRIPT` (bounded at 600 s, with the binary, the sample records and a fresh `LAB`
/// dir) and returns its stdout after checking it passed every check it printed.
pub fn run_script(script: &str) -> String {
    run_script_with(script, &[])
}

/// [`run_script`] with arguments for the script.
pub fn run_script_with(script: &str, args: &[&str]) -> String {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lab = manifest.join("tests/lab").join(script);
    let work = tempfile::tempdir().expect("tempdir");
    let t0 = Instant::now();
    let out = Command::new("timeout")
        .args(["-k", "5", "600"])
        .arg(&lab)
        .args(args)
        .env("PIGSTY_DNS_BIN", BIN)
        .env("PIGSTY_DNS_RECORDS", manifest.join("zones/pigsty.test.yml"))
        .env("LAB", work.path())
        .output()
        .unwrap_or_else(|e| panic!("run tests/lab/{script}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    println!("# {script} took {} s", t0.elapsed().as_secs());
    assert!(out.status.success(), "{script} failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
    assert!(!stdout.lines().any(|l| l.starts_with("FAIL")), "{stdout}");
    stdout
}
