//! `pigsty-dns service install | uninstall | status`: render the unit from `deploy/`, put it in place,
//! start it and wait until it answers; remove it in the safe order (route first); report its state.
//! Every host effect goes through `Host` (a command runner, the route seam, the SOA probe, a file-system
//! prefix), so the logic is unit-tested without touching systemd or launchd.

pub mod launchd;
pub mod plan;
pub mod ports;
pub mod render;
pub mod route;
pub mod runner;
pub mod systemd;

use std::net::SocketAddr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::commands::{JSON_FORMAT, to_json};
use crate::error::{AppError, Class};
use crate::name::{DEFAULT_ZONE, Zone};
use plan::Step;
use ports::Os;
use render::UnitSpec;
use route::{RouteSeam, RouteState, ShellRoute};
use runner::{Runner, SystemRunner};

#[derive(clap::Subcommand)]
pub enum ServiceCommand {
    /// Install the unit (systemd user unit, or launchd LaunchAgent), start it, wait until it answers.
    Install(InstallArgs),
    /// Stop and remove the unit (a route must go first: --with-route); the records stay unless --purge.
    Uninstall(UninstallArgs),
    /// The unit's state, PID and restarts, and the daemon's own status.
    Status(StatusArgs),
}

#[derive(clap::Args)]
pub struct Common {
    /// The systemd system unit (with User=) instead of the user unit; needs root. Linux only.
    #[arg(long)]
    pub system: bool,
    /// State directory [user unit: $PIGSTY_DNS_STATE_DIR, else the platform state dir; system unit: /var/lib/pigsty-dns]
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    #[arg(long, env = "PIGSTY_DNS_ZONE", default_value = DEFAULT_ZONE)]
    pub zone: String,
}

#[derive(clap::Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub common: Common,
    /// Address the service listens on, UDP and TCP (loopback; not 5353 where mDNS runs).
    #[arg(
        long,
        env = "PIGSTY_DNS_LISTEN",
        default_value = "127.0.0.1:5353",
        value_delimiter = ','
    )]
    pub listen: Vec<SocketAddr>,
    /// The system unit's User= (an existing account; not root).
    #[arg(long, value_name = "NAME")]
    pub user: Option<String>,
    /// The binary the unit runs [default: this one]; made absolute.
    #[arg(long, value_name = "PATH")]
    pub program: Option<PathBuf>,
    /// Seconds to wait for the started service to answer the zone SOA.
    #[arg(long, default_value_t = 20)]
    pub wait: u64,
    /// Print what would be written and run, and stop.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(clap::Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub common: Common,
    /// If a route is installed, remove it first (and check it is gone) before stopping the server.
    #[arg(long)]
    pub with_route: bool,
    /// Also remove the state directory (the stored records).
    #[arg(long)]
    pub purge: bool,
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub common: Common,
}

/// A probe of the zone SOA at an address: the serial, or why not.
pub type Probe<'a> = dyn FnMut(SocketAddr, &Zone, Duration) -> Result<u32, String> + 'a;

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
    /// The daemon's own status (`pigsty-dns status`), for `service status`.
    pub daemon_status: &'a dyn Fn(&Path, &Zone, bool) -> Result<String, AppError>,
}

impl Host<'_> {
    fn logs_hint(&self) -> String {
        match self.os {
            Os::Macos => format!(
                "see {}/pigsty-dns.err.log and launchctl print {}",
                launchd::log_dir(&self.home).display(),
                launchd::target(self.uid)
            ),
            Os::Linux => format!(
                "see systemctl --user status {0} and journalctl --user -u {0} (for --system, without --user)",
                systemd::UNIT
            ),
        }
    }
}

fn uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

fn user_name(uid: u32) -> String {
    // SAFETY: getpwuid returns NULL or a pointer to a static entry whose pw_name is NUL-terminated;
    // it is copied out at once, before any other passwd call.
    let from_db = unsafe {
        let pw = libc::getpwuid(uid);
        if pw.is_null() || (*pw).pw_name.is_null() {
            None
        } else {
            Some(
                std::ffi::CStr::from_ptr((*pw).pw_name)
                    .to_string_lossy()
                    .into_owned(),
            )
        }
    };
    from_db
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| uid.to_string())
}

fn user_exists(name: &str) -> bool {
    let Ok(c) = std::ffi::CString::new(name) else {
        return false;
    };
    // SAFETY: getpwnam reads a NUL-terminated name; we only test the result for NULL.
    !unsafe { libc::getpwnam(c.as_ptr()) }.is_null()
}

/// Probes once, on a runtime of its own (the installer itself is synchronous).
fn real_probe(addr: SocketAddr, zone: &Zone, t: Duration) -> Result<u32, String> {
    crate::probe::block_on(crate::probe::soa(
        addr,
        crate::transport::Transport::Udp,
        zone,
        t,
    ))
    .and_then(|r| r)
    .map(|a| a.serial)
    .map_err(|e| e.to_string())
}

pub fn run(cmd: &ServiceCommand, json: bool) -> Result<String, AppError> {
    let exe = std::env::current_exe().map_err(|e| {
        AppError::new(
            Class::Runtime,
            format!("cannot find this program's path: {e}"),
            "give --program PATH",
        )
    })?;
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| AppError::new(Class::Usage, "HOME is not set", "set HOME"))?;
    let config_home = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".config"));
    let uid = uid();
    let mut runner = SystemRunner::default();
    let mut route = ShellRoute {
        exe: exe.clone(),
        runner: SystemRunner::default(),
    };
    let mut probe = real_probe;
    let daemon_status =
        |dir: &Path, zone: &Zone, json: bool| crate::status::command(dir, None, zone, json);
    let mut host = Host {
        os: Os::this(),
        uid,
        user: user_name(uid),
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
        daemon_status: &daemon_status,
    };
    match cmd {
        ServiceCommand::Install(a) => install(&mut host, a, json),
        ServiceCommand::Uninstall(a) => uninstall(&mut host, a, json),
        ServiceCommand::Status(a) => status(&mut host, a, json),
    }
}

fn usage(message: impl Into<String>, next: impl Into<String>) -> AppError {
    AppError::new(Class::Usage, message, next)
}

fn check_system_flag(host: &Host<'_>, c: &Common) -> Result<(), AppError> {
    if c.system && host.os == Os::Macos {
        return Err(usage(
            "--system is for systemd; on macOS the service is a LaunchAgent in your login session",
            "run it again without --system",
        ));
    }
    Ok(())
}

const SYSTEM_STATE_BASE: &str = "var/lib";

/// The state dir the unit will use, absolute; for the system unit also its StateDirectory= name.
fn state_dir(host: &Host<'_>, c: &Common) -> Result<(PathBuf, Option<String>), AppError> {
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
            Some(rel) => Ok((dir, Some(rel))),
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
    let _ = host;
    Ok((dir, None))
}

/// The program path, absolute with symlinks resolved, an executable file. For the system unit: owned by
/// root and writable by no one else, and so is every directory above it (else someone could swap it).
pub fn check_program(path: &Path, system: bool) -> Result<PathBuf, AppError> {
    let p = std::fs::canonicalize(path).map_err(|e| {
        usage(
            format!("program {}: {e}", path.display()),
            "give --program the absolute path of the pigsty-dns binary",
        )
    })?;
    let m = std::fs::metadata(&p).map_err(|e| {
        usage(
            format!("program {}: {e}", p.display()),
            "give --program PATH",
        )
    })?;
    if !m.is_file() || m.mode() & 0o111 == 0 {
        return Err(usage(
            format!("program {} is not an executable file", p.display()),
            "give --program the pigsty-dns binary",
        ));
    }
    if system {
        let mut at = Some(p.as_path());
        while let Some(x) = at {
            let m = std::fs::metadata(x)
                .map_err(|e| usage(format!("{}: {e}", x.display()), "give --program PATH"))?;
            if m.uid() != 0 || m.mode() & 0o022 != 0 {
                return Err(AppError::new(
                    Class::Integrity,
                    format!(
                        "the system unit would run {} as a service, but {} is owned by uid {} with mode {:o}: someone other than root could replace what runs",
                        p.display(),
                        x.display(),
                        m.uid(),
                        m.mode() & 0o7777
                    ),
                    "install the binary root-owned and not group/world-writable, e.g. sudo install -o root -g root -m 0755 pigsty-dns /usr/local/bin/, and give --program /usr/local/bin/pigsty-dns",
                ));
            }
            at = x.parent();
        }
    }
    Ok(p)
}

fn render_err(e: String) -> AppError {
    usage(
        format!("cannot render the unit: {e}"),
        "use paths and names without control characters",
    )
}

pub fn install(host: &mut Host<'_>, a: &InstallArgs, json: bool) -> Result<String, AppError> {
    let c = &a.common;
    check_system_flag(host, c)?;
    let zone = crate::commands::parse_zone(&c.zone)?;
    let mdns = match host.os {
        Os::Linux if a.listen.iter().any(|l| l.port() == 5353) => {
            ports::detect_mdns(&host.root, host.runner)
        }
        _ => Vec::new(),
    };
    ports::check_listen(host.os, &a.listen, &mdns)?;
    let program = check_program(a.program.as_deref().unwrap_or(&host.exe), c.system)?;
    let (dir, state_directory) = state_dir(host, c)?;
    let spec = UnitSpec {
        program,
        listen: a.listen.clone(),
        state_dir: dir.clone(),
        zone: zone.to_string(),
        log_format: if host.os == Os::Macos { "text" } else { "json" },
    };
    let mut notes = Vec::new();
    let mut steps = match host.os {
        Os::Linux => {
            let version = systemd::version(host.runner);
            let path = systemd::unit_path(c.system, &host.config_home, &host.root);
            let content = if let Some(sd) = &state_directory {
                let user = a.user.as_deref().ok_or_else(|| {
                    usage(
                        "the system unit needs --user NAME (the account it runs as)",
                        "create one (sudo useradd --system --no-create-home pigsty-dns) and give --user pigsty-dns",
                    )
                })?;
                if user == "root"
                    || !user
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
                {
                    return Err(usage(
                        format!("--user {user:?}: give an unprivileged account name"),
                        "give --user pigsty-dns (sudo useradd --system --no-create-home pigsty-dns)",
                    ));
                }
                if !a.dry_run && !user_exists(user) {
                    return Err(usage(
                        format!("--user {user}: no such account"),
                        format!("sudo useradd --system --no-create-home {user}"),
                    ));
                }
                notes.push(format!(
                    "load records as that user: sudo -u {user} {} load FILE --state-dir {}",
                    spec.program.display(),
                    dir.display()
                ));
                render::systemd_system(&spec, user, sd, version).map_err(render_err)?
            } else {
                if a.user.is_some() {
                    return Err(usage(
                        "--user is for --system",
                        "add --system, or leave out --user",
                    ));
                }
                let lingering = host
                    .root
                    .join("var/lib/systemd/linger")
                    .join(&host.user)
                    .exists();
                if !lingering {
                    notes.push(format!(
                        "a user unit runs only while you are logged in; to start it at boot and keep it after logout: loginctl enable-linger {}",
                        host.user
                    ));
                }
                render::systemd_user(&spec, version).map_err(render_err)?
            };
            systemd::install_steps(c.system, &path, content)
        }
        Os::Macos => {
            if a.user.is_some() {
                return Err(usage(
                    "--user is for --system (systemd)",
                    "leave out --user",
                ));
            }
            let path = launchd::plist_path(&host.home);
            let content =
                render::launchd(&spec, &launchd::log_dir(&host.home)).map_err(render_err)?;
            let is_loaded = launchd::loaded(host.runner, host.uid);
            launchd::install_steps(host.uid, &path, content, is_loaded)
        }
    };
    if let Some(first) = a.listen.first() {
        steps.push(Step::WaitSoa {
            addr: *first,
            zone: zone.clone(),
            budget: Duration::from_secs(a.wait),
        });
    }
    notes.push(format!(
        "the records stay in {}; load them with pigsty-dns load FILE",
        dir.display()
    ));
    if a.dry_run {
        return Ok(if json {
            plan::render_json("service install", true, &steps, &notes, 0)
        } else {
            plan::render_text("service install", &steps, &notes)
        });
    }
    if c.system && !host.is_root {
        return Err(AppError::new(
            Class::Capability,
            "the system unit needs root",
            "run it again with sudo (or leave out --system for a user unit)",
        ));
    }
    let done = plan::execute(host, &steps)?;
    Ok(if json {
        plan::render_json("service install", false, &steps, &notes, steps.len())
    } else {
        let mut out = done;
        for n in &notes {
            out.push_str(&format!("note: {n}\n"));
        }
        out
    })
}

/// What this install looks like on disk: the unit file, and whether the manager has it loaded.
fn unit_file(host: &mut Host<'_>, system: bool) -> (PathBuf, bool) {
    match host.os {
        Os::Linux => (
            systemd::unit_path(system, &host.config_home, &host.root),
            false,
        ),
        Os::Macos => {
            let loaded = launchd::loaded(host.runner, host.uid);
            (launchd::plist_path(&host.home), loaded)
        }
    }
}

/// Only a directory that looks like a pigsty-dns state dir is ever purged.
fn purge_target(dir: &Path) -> Result<Option<PathBuf>, AppError> {
    let Ok(m) = std::fs::symlink_metadata(dir) else {
        return Ok(None);
    };
    let ours = m.is_dir()
        && ["generations", "status.json", "serve.lock", "writer.lock"]
            .iter()
            .any(|n| dir.join(n).exists());
    if !ours || dir.parent().is_none() {
        return Err(AppError::new(
            Class::Conflict,
            format!(
                "{} does not look like a pigsty-dns state directory; not purging it",
                dir.display()
            ),
            "check --state-dir; remove it by hand if it really is one",
        ));
    }
    Ok(Some(dir.to_path_buf()))
}

fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._:,@+=-".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

pub fn uninstall(host: &mut Host<'_>, a: &UninstallArgs, json: bool) -> Result<String, AppError> {
    let c = &a.common;
    check_system_flag(host, c)?;
    let (dir, _) = state_dir(host, c)?;
    let mut steps = Vec::new();
    let mut notes = Vec::new();
    // The route goes first, and is verified gone, so no lookup is ever sent to a stopped server.
    match host.route.status() {
        RouteState::NotInstalled => {}
        RouteState::Unknown(why) => {
            return Err(AppError::new(
                Class::Runtime,
                format!("cannot tell whether a route to this server is installed: {why}"),
                "check pigsty-dns route status; remove any route first (pigsty-dns route uninstall), then uninstall the service",
            ));
        }
        RouteState::Installed(what) if !a.with_route => {
            return Err(AppError::new(
                Class::Conflict,
                format!(
                    "a resolver route to this server is installed ({what}); stopping the server first would send lookups of the zone to a dead server"
                ),
                "add --with-route to remove the route first, or run pigsty-dns route uninstall first",
            ));
        }
        // Root is needed for the route, but `systemctl --user` under sudo would talk to root's own
        // user manager: for a user unit under sudo the two steps are split as well.
        RouteState::Installed(_)
            if !a.dry_run && (!host.is_root || (!c.system && host.sudo_user.is_some())) =>
        {
            let exe = shell_word(&host.exe.display().to_string());
            let mut again = vec![exe.clone(), "service".into(), "uninstall".into()];
            if c.system {
                again.push("--system".into());
            }
            if let Some(d) = &c.state_dir {
                again.push("--state-dir".into());
                again.push(shell_word(&d.display().to_string()));
            }
            if a.purge {
                again.push("--purge".into());
            }
            let first = format!("sudo {exe} route uninstall --yes");
            let second = if c.system {
                format!("sudo {}", again.join(" "))
            } else {
                again.join(" ")
            };
            let mut e = AppError::new(
                Class::Capability,
                if host.is_root {
                    "the route needs root but the user unit belongs to the user who ran sudo; nothing was changed"
                } else {
                    "removing the resolver route needs root; nothing was changed"
                },
                format!("run these two commands, in this order: {first}  then: {second}"),
            );
            e.report = Some(format!(
                "the route must go before the server stops; run, in this order:\n  1. {first}\n  2. {second}\n"
            ));
            return Err(e);
        }
        RouteState::Installed(_) => {
            steps.push(Step::RouteUninstall);
            steps.push(Step::RouteVerifyGone);
        }
    }
    let (path, loaded) = unit_file(host, c.system);
    let present = path.exists() || loaded;
    if present {
        steps.extend(match host.os {
            Os::Linux => systemd::uninstall_steps(c.system, &path),
            Os::Macos => launchd::uninstall_steps(host.uid, &path, loaded),
        });
    } else {
        notes.push(format!("no unit at {}: nothing to stop", path.display()));
        let other = systemd::unit_path(!c.system, &host.config_home, &host.root);
        if host.os == Os::Linux && other.exists() {
            notes.push(format!(
                "there is a {} unit at {}: {}",
                if c.system { "user" } else { "system" },
                other.display(),
                if c.system {
                    "leave out --system"
                } else {
                    "add --system"
                }
            ));
        }
    }
    if a.purge {
        if let Some(p) = purge_target(&dir)? {
            steps.push(Step::Purge { path: p });
        }
    } else if dir.exists() {
        notes.push(format!(
            "kept the records in {} (--purge removes them)",
            dir.display()
        ));
    }
    if a.dry_run {
        return Ok(if json {
            plan::render_json("service uninstall", true, &steps, &notes, 0)
        } else {
            plan::render_text("service uninstall", &steps, &notes)
        });
    }
    if c.system && !host.is_root && present {
        return Err(AppError::new(
            Class::Capability,
            "removing the system unit needs root",
            "run it again with sudo",
        ));
    }
    let done = plan::execute(host, &steps)?;
    Ok(if json {
        plan::render_json("service uninstall", false, &steps, &notes, steps.len())
    } else {
        let mut out = done;
        for n in &notes {
            out.push_str(&format!("note: {n}\n"));
        }
        out
    })
}

pub fn status(host: &mut Host<'_>, a: &StatusArgs, json: bool) -> Result<String, AppError> {
    let c = &a.common;
    check_system_flag(host, c)?;
    let zone = crate::commands::parse_zone(&c.zone)?;
    let (dir, _) = state_dir(host, c)?;
    let (path, _) = unit_file(host, c.system);
    let (unit_json, unit_line, unit_ok) = match host.os {
        Os::Linux => match systemd::show(host.runner, c.system) {
            Ok(s) => {
                let ok = s.active == "active";
                let line = format!(
                    "unit {} ({}): {}, {} ({}), pid {}, restarts {}, {}\n",
                    systemd::UNIT,
                    if c.system { "system" } else { "user" },
                    s.load,
                    s.active,
                    s.sub,
                    s.pid,
                    s.restarts,
                    if s.enabled.is_empty() {
                        "not installed".into()
                    } else {
                        s.enabled.clone()
                    }
                );
                (json!(s), line, ok)
            }
            Err(e) => (
                json!({"error": e}),
                format!("unit {}: {e}\n", systemd::UNIT),
                false,
            ),
        },
        Os::Macos => {
            let argv = vec![
                "launchctl".to_string(),
                "print".into(),
                launchd::target(host.uid),
            ];
            match host.runner.run(&argv) {
                Ok(o) if o.ok() => {
                    let s = launchd::parse_print(&o.stdout);
                    let ok = s.state == "running";
                    let line = format!(
                        "agent {}: {}, pid {}, restarts {}, last exit {}\n",
                        launchd::target(host.uid),
                        s.state,
                        s.pid,
                        s.runs.saturating_sub(1),
                        if s.last_exit.is_empty() {
                            "-"
                        } else {
                            &s.last_exit
                        }
                    );
                    (json!(s), line, ok)
                }
                _ => (
                    json!({"state": "not loaded"}),
                    format!("agent {}: not loaded\n", launchd::target(host.uid)),
                    false,
                ),
            }
        }
    };
    let daemon = (host.daemon_status)(&dir, &zone, json);
    let (daemon_text, daemon_ok) = match &daemon {
        Ok(t) => (t.clone(), true),
        Err(e) => (
            e.report
                .clone()
                .unwrap_or_else(|| format!("{}\n", e.message)),
            false,
        ),
    };
    let text = if json {
        to_json(&json!({
            "format": JSON_FORMAT,
            "unit_file": path.display().to_string(),
            "installed": path.exists(),
            "unit": unit_json,
            "daemon": serde_json::from_str::<serde_json::Value>(&daemon_text).unwrap_or(json!(daemon_text)),
        }))
    } else {
        format!(
            "{unit_line}unit file {}{}\n{daemon_text}",
            path.display(),
            if path.exists() { "" } else { " (missing)" }
        )
    };
    if unit_ok && daemon_ok {
        Ok(text)
    } else {
        let mut e = AppError::new(
            Class::Runtime,
            if unit_ok {
                "the service runs, but the daemon does not answer as it should".to_string()
            } else {
                "the service is not running".to_string()
            },
            host.logs_hint(),
        );
        e.report = Some(text);
        Err(e)
    }
}

#[cfg(test)]
mod tests;
