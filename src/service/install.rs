//! `service install`: check the listen addresses and the program, render the unit from `deploy/`, put it
//! in place, (re)start it and wait until it answers the zone SOA.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::cli::InstallArgs;
use super::execute::execute;
use super::host::{Host, Manager, UnitStateDir, state_dir, usage};
use super::render::{RenderError, UnitSpec};
use super::steps::{self, Action};
use super::{launchd, ports, render, systemd};
use crate::defaults::MDNS_PORT;
use crate::dns::name::zones_arg;
use crate::error::{AppError, Class};
use crate::output::Report;
use crate::sys::user;

const COMMAND: &str = "service install";

pub fn install(host: &mut Host<'_>, a: &InstallArgs) -> Result<Report, AppError> {
    let c = &a.common;
    host.check_system_flag(c)?;
    host.refuse_root_for_launchd(COMMAND)?;
    let zones = zones_arg(&c.zone)?;
    let zone = zones.first().clone();
    let mdns = match host.manager() {
        Manager::Systemd if a.listen.iter().any(|l| l.port() == MDNS_PORT) => {
            ports::detect_mdns(&host.root, host.runner)
        }
        _ => Vec::new(),
    };
    ports::check_listen(host.os, &a.listen, &mdns)?;
    let mut notes = Vec::new();
    let asked = a.program.as_deref().unwrap_or(&host.exe);
    let program = match host.manager() {
        Manager::Launchd => agent_program(asked, &mut notes)?,
        Manager::Systemd => check_program(asked, c.system)?,
    };
    let dir = state_dir(c)?;
    let spec = UnitSpec {
        program,
        listen: a.listen.clone(),
        state_dir: dir.path.clone(),
        // `--zone a,b`: serve reads a comma-separated list as the zones in order.
        zone: zones
            .iter()
            .map(|z| z.as_str())
            .collect::<Vec<_>>()
            .join(","),
        // launchd writes the log to files a person reads; journald stores JSON fields.
        log_format: match host.manager() {
            Manager::Launchd => "text",
            Manager::Systemd => "json",
        },
    };
    let mut steps = match host.manager() {
        Manager::Systemd => systemd_steps(host, a, &spec, &dir, &mut notes)?,
        Manager::Launchd => launchd_steps(host, a, &spec, &mut notes)?,
    };
    if let Some(first) = a.listen.first() {
        steps.push(Action::WaitSoa {
            addr: *first,
            zone: zone.clone(),
            budget: Duration::from_secs(a.wait),
        });
    }
    // The system unit's own note says how to load (as its user, into its state dir): a plain
    // `pigsty-dns load FILE` by root would store into root's state dir, which the service never reads.
    if !c.system {
        notes.push(format!(
            "the records stay in {}; load them with pigsty-dns load FILE",
            dir.path.display()
        ));
    }
    if a.dry_run {
        return Ok(steps::dry_run_report(COMMAND, &steps, &notes));
    }
    if c.system && !host.is_root {
        return Err(AppError::new(
            Class::Capability,
            "the system unit needs root",
            "run it again with sudo (or leave out --system for a user unit)",
        ));
    }
    let done = execute(host, &steps)?;
    Ok(steps::done_report(COMMAND, done, &steps, &notes))
}

/// The LaunchAgent, in the domain of this session, and the launchctl calls that (re)load it there.
fn launchd_steps(
    host: &mut Host<'_>,
    a: &InstallArgs,
    spec: &UnitSpec,
    notes: &mut Vec<String>,
) -> Result<Vec<Action>, AppError> {
    if a.user.is_some() {
        return Err(usage(
            "--user is for --system (systemd)",
            "leave out --user",
        ));
    }
    let session = launchd::session_domain(host.runner, host.uid).map_err(|why| {
        AppError::new(
            Class::Capability,
            format!("cannot tell which launchd domain this session loads agents into: {why}"),
            "run it from Terminal in your login session (gui domain) or over ssh (user domain), as yourself",
        )
    })?;
    let path = launchd::plist_path(&host.home);
    let content = render::launchd(spec, &launchd::log_dir(&host.home), session.session_type())
        .map_err(render_err)?;
    let loaded = launchd::loaded_in(host.runner, host.uid);
    notes.push(format!(
        "the agent loads into {} (launchctl managername)",
        session.name()
    ));
    Ok(launchd::install_steps(session, &path, content, &loaded))
}

/// The systemd unit (user, or system with `--user`) and the systemctl calls that install it.
fn systemd_steps(
    host: &mut Host<'_>,
    a: &InstallArgs,
    spec: &UnitSpec,
    dir: &UnitStateDir,
    notes: &mut Vec<String>,
) -> Result<Vec<Action>, AppError> {
    let system = a.common.system;
    let version = systemd::version(host.runner);
    let path = systemd::unit_path(system, &host.config_home, &host.root);
    let content = if let Some(sd) = &dir.state_directory {
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
        if !a.dry_run && !user::user_exists(user) {
            return Err(usage(
                format!("--user {user}: no such account"),
                format!("sudo useradd --system --no-create-home {user}"),
            ));
        }
        // The account owns the state dir whose status file root reads later: a person's account
        // would make root read what that person writes.
        if let Some(why) = user::login_account(user) {
            return Err(usage(
                format!(
                    "--user {user}: {why}, a login account; the system unit runs as a system account"
                ),
                "sudo useradd --system --no-create-home pigsty-dns, then give --user pigsty-dns",
            ));
        }
        notes.push(format!(
            "load records as that user: sudo -u {user} {} load FILE --state-dir {}",
            crate::output::text::shell_quote(&spec.program.display().to_string()),
            crate::output::text::shell_quote(&dir.path.display().to_string())
        ));
        render::systemd_system(spec, user, sd, version).map_err(render_err)?
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
        render::systemd_user(spec, version).map_err(render_err)?
    };
    Ok(systemd::install_steps(system, &path, content))
}

fn render_err(e: RenderError) -> AppError {
    let next = match e {
        RenderError::StateDirectory(_) => {
            "give a --state-dir under /var/lib such as /var/lib/pigsty-dns"
        }
        _ => "use paths and names without control characters",
    };
    usage(format!("cannot render the unit: {e}"), next)
}

/// The LaunchAgent's program: the path as given, made absolute but with its links kept, when it
/// leads to an executable — a Homebrew `bin/pigsty-dns` link stays valid across upgrades, while the
/// versioned `Cellar/…` file it points to disappears with the next one. The note says which it is.
pub fn agent_program(path: &Path, notes: &mut Vec<String>) -> Result<PathBuf, AppError> {
    let canonical = check_program(path, false)?;
    let asked = std::path::absolute(path).map_err(|e| {
        usage(
            format!("program {}: {e}", path.display()),
            "give --program the absolute path of the pigsty-dns binary",
        )
    })?;
    if asked == canonical {
        notes.push(format!("the agent runs {}", canonical.display()));
        return Ok(canonical);
    }
    notes.push(format!(
        "the agent runs {} (a link, now to {}): it keeps working when an upgrade replaces what it points to",
        asked.display(),
        canonical.display()
    ));
    Ok(asked)
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
