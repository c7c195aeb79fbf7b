//! What the route commands touch outside their own logic — the command runner, the detected facts,
//! the DNS probes at the daemon, the prompt, the clock's patience — gathered in `Ctx` so tests can
//! replace each; plus the real probes and the steps and confirmations every command shares, and the
//! test-only crash hook (`PIGSTY_DNS_TEST_CRASH_AFTER`) each change they make passes, which proves an
//! interrupted install or uninstall is recoverable.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use super::adapter::Step;
use super::cli::Where;
use super::detect::Facts;
use super::{files, journal};
use crate::dns::name::Zone;
use crate::dns::probe;
use crate::dns::transport::Transport;
use crate::error::{AppError, Class};
use crate::store::place;
use crate::store::status_file;
use crate::sys::{Os, Runner};

/// The zone's SOA over UDP and TCP at the address; Ok(serial).
pub type PreflightFn = dyn Fn(SocketAddr, &Zone) -> Result<u32, String>;

/// A direct A lookup at the daemon: Ok(None) when it has no address for the name.
pub type LookupFn = dyn Fn(SocketAddr, &str) -> Result<Option<Ipv4Addr>, String>;

/// How long one probe at the daemon may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Everything the route commands touch outside their own logic, so tests can replace it.
pub struct Ctx<'a> {
    pub root: PathBuf,
    pub journal_dir: PathBuf,
    pub runner: &'a mut dyn Runner,
    pub facts: Facts,
    pub preflight: &'a PreflightFn,
    pub lookup_a: &'a LookupFn,
    /// Asks the user; `None` when there is no terminal.
    pub confirm: Option<&'a mut dyn FnMut(&str) -> bool>,
    /// How long verification waits for resolved to show a change.
    pub settle: Duration,
    /// How long to wait for the server's status file after the unrelated lookup.
    pub status_wait: Duration,
    pub check_name: Option<String>,
    /// The daemon's status file: `<state dir>/status.json` (`status_file::FILE`).
    pub status_file: Option<PathBuf>,
    /// The daemon's state dir, whose newest good generation names the reverse zone to route.
    pub state_dir: Option<PathBuf>,
    /// Progress lines (plan first); printed by `run`, inspected by tests.
    pub out: Vec<String>,
}

impl Ctx<'_> {
    /// Runs `steps` in order, each logged to `out`; stops at the first failure of a step that may not
    /// fail.
    pub fn run_steps(&mut self, steps: &[Step]) -> Result<(), String> {
        for s in steps {
            let out = self.runner.run(&s.argv);
            self.out.push(format!(
                "ran: {} -> {}",
                s.argv.join(" "),
                if out.ok() { "ok".into() } else { out.summary() }
            ));
            crash_point(&s.argv.join(" "));
            if !out.ok() && !s.may_fail {
                return Err(format!("`{}` failed: {}", s.argv.join(" "), out.summary()));
            }
        }
        Ok(())
    }

    /// Ok when `--yes` was given or the user says yes; without a terminal `--yes` is required.
    pub fn confirm(&mut self, yes: bool, question: &str) -> Result<(), AppError> {
        if yes {
            return Ok(());
        }
        match self.confirm.as_mut().map(|ask| ask(question)) {
            Some(true) => Ok(()),
            Some(false) => Err(AppError::new(
                Class::Cancelled,
                "cancelled: nothing was written",
                "run it again and answer y, or pass --yes",
            )),
            None => Err(AppError::new(
                Class::Usage,
                "no terminal to confirm on: pass --yes (after reading the plan from --dry-run)",
                "pigsty-dns route install --dry-run, then the same with --yes",
            )),
        }
    }
}

pub fn needs_root() -> AppError {
    AppError::new(
        Class::Capability,
        "needs root: run it again with sudo",
        "sudo pigsty-dns route ... (nothing was written)",
    )
}

/// macOS, without `--state-dir`: the status file of the daemon's default state dir — the first of
/// the state-dir rule's candidates (`$PIGSTY_DNS_STATE_DIR`, else that of the user who ran sudo, else
/// of `$HOME`).
pub fn default_status_file() -> Option<PathBuf> {
    place::candidates_here(Os::Macos)
        .into_iter()
        .next()
        .map(|d| d.join(status_file::FILE))
}

/// Without `--state-dir`: the state dir of the daemon at `server`, among the state-dir rule's
/// candidates — the first whose status file says its server runs there.
pub fn default_state_dir(os: Os, server: SocketAddr) -> Option<PathBuf> {
    place::candidates_here(os).into_iter().find(|d| {
        status_file::read(d).is_some_and(|s| s.is_running() && s.listen.contains(&server))
    })
}

pub fn journal_dir(place: &Where, os: Os) -> PathBuf {
    place
        .journal_dir
        .clone()
        .unwrap_or_else(|| files::under(&place.root, journal::default_dir(os)))
}

/// The real preflight: the daemon must answer the zone's SOA authoritatively over UDP and TCP.
pub fn preflight(addr: SocketAddr, zone: &Zone) -> Result<u32, String> {
    probe::block_on(async {
        let udp = probe::soa(addr, Transport::Udp, zone, PROBE_TIMEOUT).await;
        let tcp = probe::soa(addr, Transport::Tcp, zone, PROBE_TIMEOUT).await;
        let (udp, tcp) = (
            udp.map_err(|e| e.to_string())?,
            tcp.map_err(|e| e.to_string())?,
        );
        if !udp.authoritative || !tcp.authoritative {
            return Err(format!(
                "{addr} answers {zone} SOA but not authoritatively: is it pigsty-dns?"
            ));
        }
        Ok(udp.serial.max(tcp.serial))
    })
    .map_err(|e| e.to_string())?
}

/// The real lookup: one A query over UDP at the daemon.
pub fn lookup_a(addr: SocketAddr, name: &str) -> Result<Option<Ipv4Addr>, String> {
    probe::block_on(probe::a(addr, Transport::Udp, name, PROBE_TIMEOUT))
        .and_then(|r| r)
        .map_err(|e| e.to_string())
}

// ---------------------------------------------------------------- the test hook

/// Test hook, read from the environment: `PIGSTY_DNS_TEST_CRASH_AFTER=N` kills this process with
/// SIGKILL right after the N-th change an install or uninstall makes (a file written or removed, a
/// command run), as a power cut would. For the lab and the integration tests only, compiled only into
/// test builds; unset, it costs a lookup of an environment variable per change.
#[cfg(any(test, feature = "test-support"))]
pub const CRASH_ENV: &str = "PIGSTY_DNS_TEST_CRASH_AFTER";

pub fn crash_point(what: &str) {
    // Only in test builds (`test-support`, which the integration tests' dev-dependency turns on): the
    // release binary and the Debian package never read the variable.
    #[cfg(any(test, feature = "test-support"))]
    {
        static CHANGES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let Some(n) = std::env::var(CRASH_ENV)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
        else {
            return;
        };
        let done = CHANGES.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        if done >= n {
            eprintln!("{CRASH_ENV}={n}: SIGKILL after change {done} ({what})");
            // SAFETY: kill(2) on our own pid has no memory-safety preconditions.
            unsafe {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
        }
    }
    #[cfg(not(any(test, feature = "test-support")))]
    let _ = what;
}
