//! The labs: real systemd-resolved (and more) booted in private network namespaces, driven by the
//! scripts in `tests/lab/`. Each runs only with `PIGSTY_DNS_E2E=1` (then every missing prerequisite is
//! a failure, never a skip), and one at a time: they share the machine's CPU and apt caches.

use std::sync::{Mutex, MutexGuard};

mod route_delegate_lab;
mod route_lab;
mod service_pid1_lab;

pub const BIN: &str = env!("CARGO_BIN_EXE_pigsty-dns");

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
