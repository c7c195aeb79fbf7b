//! The seam between the service commands and the machine: `Host` carries everything install, uninstall
//! and status read from or do to the host (a command runner, the route seam, the SOA probe, the
//! daemon's status, a file-system prefix), so their logic is unit-tested against fakes. Also what the
//! common flags resolve to on a host, and the real host `run` builds.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::cli::Common;
use super::route_seam::{HostRoute, RouteSeam};
use super::{launchd, systemd};
use crate::dns::name::{Zone, Zones};
use crate::dns::probe::ProbeError;
use crate::error::{AppError, Class};
use crate::output::Report;
use crate::sys::{Os, Runner, SystemRunner, user};

/// A probe of the zone SOA at an address: the serial, or why not.
pub type Probe<'a> = dyn FnMut(SocketAddr, &Zone, Duration) -> Result<u32, ProbeError> + 'a;

/// The daemon's own status (`pigsty-dns status`) for a state dir; an error when it is not healthy.
pub type DaemonStatus<'a> = dyn Fn(&Path, &Zones) -> Result<Report, AppError> + 'a;

/// systemctl and launchctl may wait on a unit's start or stop; longer than this means they hang.
const COMMAND_LIMIT: Duration = Duration::from_secs(90);

/// Which service manager a host has: launchd on macOS, systemd everywhere else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Manager {
    Systemd,
    Launchd,
}

/// Everything install/uninstall/status read from or do to the host.
pub struct Host<'a> {
    pub os: Os,
    pub uid: u32,
    pub user: String,
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    pub config_home: PathBuf,
    /// Prefix of every system path read or written (`/` on a real host).
    pub root: PathBuf,
    pub is_root: bool,
    /// `$SUDO_USER` when run through sudo: a user unit then belongs to that user, not to root.
    pub sudo_user: Option<String>,
    /// This binary (default program, and the one whose `route` commands are printed).
    pub exe: PathBuf,
    pub runner: &'a mut dyn Runner,
    pub route: &'a mut dyn RouteSeam,
    pub probe: &'a mut Probe<'a>,
    pub daemon_status: &'a DaemonStatus<'a>,
}

/// The unit (or agent) file of this install, and where launchd has it loaded. systemd is not asked:
/// its unit is present when its file is.
pub struct UnitFile {
    pub path: PathBuf,
    pub loaded: Vec<launchd::Domain>,
}

/// The state dir the unit will use, absolute (the unit's view of it; the store's open one is
/// `store::StateDir`).
pub struct UnitStateDir {
    pub path: PathBuf,
    /// For the system unit: the same directory relative to /var/lib (its StateDirectory=).
    pub state_directory: Option<String>,
}

/// The system unit's records live under this (relative to `/`): systemd's StateDirectory= base.
const SYSTEM_STATE_BASE: &str = "var/lib";

impl Host<'_> {
    pub fn manager(&self) -> Manager {
        match self.os {
            Os::Macos => Manager::Launchd,
            Os::Linux | Os::Other => Manager::Systemd,
        }
    }

    pub fn logs_hint(&self) -> String {
        match self.manager() {
            Manager::Launchd => format!(
                "see {}/pigsty-dns.err.log and {} print {} (over SSH: {})",
                launchd::log_dir(&self.home).display(),
                launchd::LAUNCHCTL,
                launchd::Domain::Gui(self.uid).target(),
                launchd::Domain::User(self.uid).target()
            ),
            Manager::Systemd => format!(
                "see systemctl --user status {0} and journalctl --user -u {0} (for --system, without --user)",
                systemd::UNIT
            ),
        }
    }

    pub fn check_system_flag(&self, c: &Common) -> Result<(), AppError> {
        if c.system && self.manager() == Manager::Launchd {
            return Err(usage(
                "--system is for systemd; on macOS the service is a LaunchAgent in your login session",
                "run it again without --system",
            ));
        }
        Ok(())
    }

    pub fn unit_file(&mut self, system: bool) -> UnitFile {
        match self.manager() {
            Manager::Systemd => UnitFile {
                path: systemd::unit_path(system, &self.config_home, &self.root),
                loaded: Vec::new(),
            },
            Manager::Launchd => UnitFile {
                loaded: launchd::loaded_in(self.runner, self.uid),
                path: launchd::plist_path(&self.home),
            },
        }
    }

    /// macOS: a LaunchAgent belongs to the user who runs it; as root (sudo) launchctl would load it
    /// into root's domain, and the route commands that need root are separate.
    pub fn refuse_root_for_launchd(&self, command: &str) -> Result<(), AppError> {
        if self.manager() == Manager::Launchd && self.is_root {
            let who = self.sudo_user.as_deref().unwrap_or("the user it is for");
            return Err(usage(
                format!(
                    "`{command}` on macOS manages your own LaunchAgent, but it runs as root (sudo): launchd would put it in root's domain, not {who}'s"
                ),
                format!("run it again as {who}, without sudo: pigsty-dns {command}"),
            ));
        }
        Ok(())
    }
}

pub fn usage(message: impl Into<String>, next: impl Into<String>) -> AppError {
    AppError::new(Class::Usage, message, next)
}

/// The state dir the flags name: for the system unit one under /var/lib (systemd creates and owns
/// it), else `--state-dir`, `$PIGSTY_DNS_STATE_DIR` or the platform state dir, made absolute.
pub fn state_dir(c: &Common) -> Result<UnitStateDir, AppError> {
    if c.system {
        let base = Path::new("/").join(SYSTEM_STATE_BASE);
        let dir = c
            .state_dir
            .clone()
            .unwrap_or_else(|| base.join("pigsty-dns"));
        let rel = dir
            .strip_prefix(&base)
            .ok()
            .map(|r| r.display().to_string())
            .filter(|r| {
                !r.is_empty() && !r.split('/').any(|p| p == ".." || p == "." || p.is_empty())
            });
        return match rel {
            Some(rel) => Ok(UnitStateDir {
                path: dir,
                state_directory: Some(rel),
            }),
            None => Err(usage(
                format!(
                    "{}: the system unit keeps its records in a StateDirectory under /var/lib",
                    dir.display()
                ),
                "give --state-dir /var/lib/pigsty-dns (or leave it out)",
            )),
        };
    }
    let dir = crate::store::resolve(c.state_dir.as_deref())?;
    let dir = std::path::absolute(&dir).map_err(|e| {
        usage(
            format!("cannot make {} absolute: {e}", dir.display()),
            "give --state-dir an absolute path",
        )
    })?;
    Ok(UnitStateDir {
        path: dir,
        state_directory: None,
    })
}

/// Probes once, on a runtime of its own (the installer itself is synchronous).
fn real_probe(addr: SocketAddr, zone: &Zone, t: Duration) -> Result<u32, ProbeError> {
    crate::dns::probe::block_on(crate::dns::probe::soa(
        addr,
        crate::dns::transport::Transport::Udp,
        zone,
        t,
    ))
    .and_then(|r| r)
    .map(|a| a.serial)
}

/// `pigsty-dns status` of the state dir, in both forms. The status command renders one form per call,
/// so the healthy case asks twice; the first answer decides health.
fn real_daemon_status(dir: &Path, zone: &Zones) -> Result<Report, AppError> {
    crate::commands::status::run(dir, None, zone)
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// Runs `f` against this machine: the real runner, route seam, probe and daemon status.
pub fn with_real<T>(f: impl FnOnce(&mut Host<'_>) -> Result<T, AppError>) -> Result<T, AppError> {
    let exe = std::env::current_exe().map_err(|e| {
        AppError::new(
            Class::Runtime,
            format!("cannot find this program's path: {e}"),
            "give --program PATH",
        )
    })?;
    let home = env_path("HOME").ok_or_else(|| usage("HOME is not set", "set HOME"))?;
    let config_home = env_path("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config"));
    let uid = user::euid();
    let mut runner = SystemRunner::new(COMMAND_LIMIT);
    let mut route = HostRoute;
    let mut probe = real_probe;
    let mut host = Host {
        os: Os::this(),
        uid,
        user: user::user_name(uid),
        home,
        config_home,
        root: PathBuf::from("/"),
        is_root: uid == 0,
        sudo_user: std::env::var("SUDO_USER")
            .ok()
            .filter(|u| !u.is_empty() && uid == 0),
        exe,
        runner: &mut runner,
        route: &mut route,
        probe: &mut probe,
        daemon_status: &real_daemon_status,
    };
    f(&mut host)
}
