//! `service uninstall`, in the safe order: the resolver route first (and checked gone), so no lookup is
//! ever sent to a stopped server; then the unit; the records only with `--purge`.

use std::path::{Path, PathBuf};

use super::cli::UninstallArgs;
use super::execute::execute;
use super::host::{Host, Manager, state_dir};
use super::route_seam::RouteState;
use super::steps::{self, Action};
use super::{launchd, systemd};
use crate::error::{AppError, Class};
use crate::output::Report;

const COMMAND: &str = "service uninstall";

pub fn uninstall(host: &mut Host<'_>, a: &UninstallArgs) -> Result<Report, AppError> {
    let c = &a.common;
    host.check_system_flag(c)?;
    let dir = state_dir(c)?.path;
    let mut notes = Vec::new();
    let (mut steps, elsewhere) = route_steps(host, a, &mut notes)?;
    host.refuse_root_for_launchd(COMMAND)?;
    let present = unit_steps(host, c.system, &mut steps, &mut notes);
    if a.purge {
        if let Some(p) = purge_target(&dir)? {
            steps.push(Action::Purge { path: p });
        }
        if host.manager() == Manager::Launchd {
            let logs = launchd::log_files(&host.home);
            steps.extend(
                logs.into_iter()
                    .filter(|l| l.symlink_metadata().is_ok())
                    .map(|path| Action::Remove { path }),
            );
        }
    } else if dir.exists() {
        notes.push(format!(
            "kept the records in {} (--purge removes them)",
            dir.display()
        ));
    }
    // deploy/debian/prerm reads this field (not a note's words) to refuse before any change.
    let elsewhere = ("route_elsewhere", serde_json::Value::Bool(elsewhere));
    if a.dry_run {
        let mut r = steps::dry_run_report(COMMAND, &steps, &notes);
        r.set_json_fields(vec![elsewhere]);
        return Ok(r);
    }
    if c.system && !host.is_root && present {
        return Err(AppError::new(
            Class::Capability,
            "removing the system unit needs root",
            "run it again with sudo",
        ));
    }
    let done = execute(host, &steps)?;
    let mut r = steps::done_report(COMMAND, done, &steps, &notes);
    r.set_json_fields(vec![elsewhere]);
    Ok(r)
}

/// The route's steps: none when no route is installed, its removal (and the check that it went) with
/// `--with-route`; an error when it is there without `--with-route` or cannot be removed in this run.
/// And whether a route is installed to another server than this unit's (then left in place).
fn route_steps(
    host: &mut Host<'_>,
    a: &UninstallArgs,
    notes: &mut Vec<String>,
) -> Result<(Vec<Action>, bool), AppError> {
    let c = &a.common;
    let mut steps = Vec::new();
    let mut elsewhere = false;
    match host.route.status() {
        RouteState::NotInstalled => {}
        // A route to another server (another unit's port) does not depend on this one: left alone.
        RouteState::Installed {
            what,
            server: Some(s),
        } if routes_elsewhere(host, c.system, &s) => {
            notes.push(format!(
                "the resolver route ({what}) goes to {s}, not to this unit: left in place"
            ));
            elsewhere = true;
        }
        RouteState::Unknown(why) => {
            return Err(AppError::new(
                Class::Runtime,
                format!("cannot tell whether a route to this server is installed: {why}"),
                "check pigsty-dns route status; remove any route first (pigsty-dns route uninstall), then uninstall the service",
            ));
        }
        RouteState::Installed { what, .. } if !a.with_route => {
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
        RouteState::Installed { .. }
            if !a.dry_run && (!host.is_root || (!c.system && host.sudo_user.is_some())) =>
        {
            return Err(two_commands(host, a));
        }
        RouteState::Installed { .. } => {
            steps.push(Action::RouteUninstall);
            steps.push(Action::RouteVerifyGone);
        }
    }
    Ok((steps, elsewhere))
}

/// Whether this unit (system or user) listens on addresses that do not include `server`, the route's.
/// Unknown (no unit file, no `--listen` in it, a server we cannot read) is never "elsewhere": then
/// the route is treated as this unit's.
fn routes_elsewhere(host: &mut Host<'_>, system: bool, server: &str) -> bool {
    let Ok(server) = server.parse::<std::net::SocketAddr>() else {
        return false;
    };
    let path = host.unit_file(system).path;
    let listen = std::fs::read_to_string(path)
        .map(|t| super::ports::listen_in_unit(&t))
        .unwrap_or_default();
    !listen.is_empty()
        && !listen
            .iter()
            .any(|l| *l == server || (l.ip().is_unspecified() && l.port() == server.port()))
}

/// The unit's removal steps, or the notes saying there is none here (and where another one is);
/// whether a unit is present.
fn unit_steps(
    host: &mut Host<'_>,
    system: bool,
    steps: &mut Vec<Action>,
    notes: &mut Vec<String>,
) -> bool {
    let unit = host.unit_file(system);
    let present = unit.path.exists() || !unit.loaded.is_empty();
    if present {
        steps.extend(match host.manager() {
            Manager::Systemd => systemd::uninstall_steps(system, &unit.path),
            Manager::Launchd => launchd::uninstall_steps(&unit.path, &unit.loaded),
        });
    } else {
        notes.push(format!(
            "no unit at {}: nothing to stop",
            unit.path.display()
        ));
        let other = systemd::unit_path(!system, &host.config_home, &host.root);
        if host.manager() == Manager::Systemd && other.exists() {
            notes.push(format!(
                "there is a {} unit at {}: {}",
                if system { "user" } else { "system" },
                other.display(),
                if system {
                    "leave out --system"
                } else {
                    "add --system"
                }
            ));
        }
    }
    present
}

/// The route needs root and the unit must not be stopped as root (or the other way round): nothing is
/// changed, and the error prints the two commands to run, in order.
fn two_commands(host: &Host<'_>, a: &UninstallArgs) -> AppError {
    let c = &a.common;
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
    e
}

/// Only a directory that looks like a pigsty-dns state dir is ever purged.
fn purge_target(dir: &Path) -> Result<Option<PathBuf>, AppError> {
    let Ok(m) = std::fs::symlink_metadata(dir) else {
        return Ok(None);
    };
    let ours = m.is_dir()
        && [
            "generations",
            crate::store::status_file::FILE,
            "serve.lock",
            "writer.lock",
        ]
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

/// One word for a POSIX shell: bare when plainly safe, else single-quoted.
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
