//! `service status`: the unit's state as its manager reports it, and the daemon's own status; healthy
//! only when both are.

use serde_json::{Value, json};

use super::cli::StatusArgs;
use super::host::{Host, Manager, state_dir};
use super::{launchd, ports, systemd};
use crate::dns::name::zones_arg;
use crate::error::{AppError, Class};
use crate::output::{FORMAT, Report};

/// One line and the JSON of what the service manager says of the unit, and whether it runs.
struct UnitReport {
    line: String,
    json: Value,
    ok: bool,
}

pub fn status(host: &mut Host<'_>, a: &StatusArgs) -> Result<Report, AppError> {
    let c = &a.common;
    host.check_system_flag(c)?;
    let zone = zones_arg(&c.zone)?;
    let dir = state_dir(c)?.path;
    let path = host.unit_file(c.system).path;
    let unit = match host.manager() {
        Manager::Systemd => systemd_unit(host, c.system),
        Manager::Launchd => launchd_agent(host),
    };
    // Unhealthy, the daemon's status is text for the error's report (JSON output is the error alone).
    let daemon = (host.daemon_status)(&dir, &zone)
        .map_err(|e| e.report.unwrap_or_else(|| format!("{}\n", e.message)));
    let installed = path.exists();
    let old_port = std::fs::read_to_string(&path).ok().and_then(|t| {
        ports::old_default_note(&ports::listen_in_unit(&t), &host.exe.display().to_string())
    });
    let text = format!(
        "{}unit file {}{}\n{}{}",
        unit.line,
        path.display(),
        if installed { "" } else { " (missing)" },
        old_port
            .as_ref()
            .map(|n| format!("note: {n}\n"))
            .unwrap_or_default(),
        match &daemon {
            Ok(r) => &r.text,
            Err(text) => text,
        }
    );
    if let (true, Ok(d)) = (unit.ok, &daemon) {
        let json = json!({
            "format": FORMAT,
            "unit_file": path.display().to_string(),
            "installed": installed,
            "unit": unit.json,
            "daemon": d.json_value(),
            "notes": old_port.into_iter().collect::<Vec<_>>(),
        });
        return Ok(Report::new(text, json));
    }
    let mut e = AppError::new(
        Class::Runtime,
        if unit.ok {
            "the service runs, but the daemon does not answer as it should"
        } else {
            "the service is not running"
        },
        host.logs_hint(),
    );
    e.report = Some(text);
    Err(e)
}

fn systemd_unit(host: &mut Host<'_>, system: bool) -> UnitReport {
    match systemd::show(host.runner, system) {
        Ok(s) => UnitReport {
            line: format!(
                "unit {} ({}): {}, {} ({}), pid {}, restarts {}, {}\n",
                systemd::UNIT,
                if system { "system" } else { "user" },
                s.load,
                s.active,
                s.sub,
                s.pid,
                s.restarts,
                if s.enabled.is_empty() {
                    "not installed"
                } else {
                    &s.enabled
                }
            ),
            ok: s.is_active(),
            json: json!(s),
        },
        Err(e) => UnitReport {
            line: format!("unit {}: {e}\n", systemd::UNIT),
            json: json!({"error": e.to_string()}),
            ok: false,
        },
    }
}

/// The agent in every domain it is loaded in: healthy only when it runs in exactly one (in two, one
/// instance holds the port and the other restarts every 10 s).
fn launchd_agent(host: &mut Host<'_>) -> UnitReport {
    let states = launchd::agent_states(host.runner, host.uid);
    let line = |d: launchd::Domain, s: &launchd::AgentState| {
        format!(
            "agent {}: {}, pid {}, restarts {}, last exit {}\n",
            d.target(),
            s.state,
            s.pid,
            s.runs.saturating_sub(1),
            if s.last_exit.is_empty() {
                "-"
            } else {
                &s.last_exit
            }
        )
    };
    match states.as_slice() {
        [] => UnitReport {
            line: format!(
                "agent {}: not loaded (nor in {})\n",
                launchd::Domain::Gui(host.uid).target(),
                launchd::Domain::User(host.uid).name()
            ),
            json: json!({"state": "not loaded"}),
            ok: false,
        },
        [(d, s)] => UnitReport {
            line: line(*d, s),
            ok: s.is_running(),
            json: json!(s),
        },
        many => UnitReport {
            line: format!(
                "{}the agent is loaded in {} domains: only one instance can hold the port; pigsty-dns service install boots out all of them and loads it into this session's only\n",
                many.iter().map(|(d, s)| line(*d, s)).collect::<String>(),
                many.len()
            ),
            json: json!(
                many.iter()
                    .map(|(d, s)| json!({"domain": d.name(), "agent": s}))
                    .collect::<Vec<_>>()
            ),
            ok: false,
        },
    }
}
