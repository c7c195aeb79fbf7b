//! Carrying out a list of actions against the `Host`, in order, stopping at the first failure.

use std::path::Path;
use std::time::{Duration, Instant};

use super::host::Host;
use super::route_seam::RouteState;
use super::steps::{Action, CommandFailed};
use crate::error::{AppError, Class};
use crate::sys::fs::{self, WriteOptions};

/// One probe's own limit while waiting for the SOA, and the pause between probes.
const PROBE_TIMEOUT: Duration = Duration::from_millis(700);
const PROBE_PAUSE: Duration = Duration::from_millis(200);

/// Why one step failed: the error's class, message and `next:` (the step's place is added by `execute`).
struct Failed(Class, String, String);

/// What a step that ran says: `None` is the plain "done: …" line.
type Done = Result<Option<String>, Failed>;

/// Carries out `steps` in order and stops at the first failure. Each done step is one line of the
/// returned text; on failure the error's report holds the lines of the steps that did run.
pub fn execute(host: &mut Host<'_>, steps: &[Action]) -> Result<String, AppError> {
    let mut out = String::new();
    for (i, step) in steps.iter().enumerate() {
        // Described before it runs, so a write shows the file's digest before and after.
        let line = step.describe();
        match one(host, step) {
            Ok(Some(said)) => out.push_str(&said),
            Ok(None) => out.push_str(&format!("done: {line}\n")),
            Err(Failed(class, message, next)) => {
                let mut e = AppError::new(class, message, next);
                e.report = Some(format!(
                    "{out}stopped at step {} of {}: {}\n",
                    i + 1,
                    steps.len(),
                    line
                ));
                return Err(e);
            }
        }
    }
    Ok(out)
}

fn one(host: &mut Host<'_>, step: &Action) -> Done {
    let perms = || "check the directory's permissions".to_string();
    match step {
        Action::Write {
            path,
            content,
            mode,
        } => {
            let opts = WriteOptions {
                create_parents: true,
                ..WriteOptions::mode(*mode)
            };
            fs::write_atomic(path, content.as_bytes(), &opts).map_err(|e| {
                Failed(
                    Class::Runtime,
                    format!("cannot write {}: {}", path.display(), e.source),
                    perms(),
                )
            })?;
        }
        Action::Remove { path } => {
            fs::remove(path).map_err(|e| Failed(Class::Runtime, e.to_string(), perms()))?;
        }
        Action::Run { argv, may_fail } => run(host, argv, *may_fail)?,
        Action::WaitSoa { addr, zone, budget } => {
            return wait_soa(host, *addr, zone, *budget).map(Some);
        }
        Action::WaitFails { argv, budget, what } => wait_fails(host, argv, *budget, what)?,
        Action::RouteUninstall => {
            host.route.uninstall().map_err(|e| {
                Failed(
                    Class::Partial,
                    format!("route uninstall failed: {e}"),
                    "fix the route first (pigsty-dns route status); the service is untouched"
                        .into(),
                )
            })?;
        }
        Action::RouteVerifyGone => match host.route.status() {
            RouteState::NotInstalled => {}
            other => {
                return Err(Failed(
                    Class::Partial,
                    format!(
                        "the route is still there after route uninstall ({other}); the service was not stopped"
                    ),
                    "see pigsty-dns route status; remove the route, then uninstall the service"
                        .into(),
                ));
            }
        },
        Action::Purge { path } => purge(path)?,
    }
    Ok(None)
}

fn run(host: &mut Host<'_>, argv: &[String], may_fail: bool) -> Result<(), Failed> {
    let Err(f) = CommandFailed::check(argv, host.runner.run(argv)) else {
        return Ok(());
    };
    if may_fail {
        if f.did_not_run() {
            tracing::debug!("{f}");
        }
        return Ok(());
    }
    let next = if f.did_not_run() {
        format!(
            "is {} installed and on PATH?",
            argv.first().map_or("", |s| s)
        )
    } else {
        "fix what it says and run the same command again".into()
    };
    Err(Failed(Class::Runtime, f.to_string(), next))
}

fn wait_soa(
    host: &mut Host<'_>,
    addr: std::net::SocketAddr,
    zone: &crate::dns::name::Zone,
    budget: Duration,
) -> Result<String, Failed> {
    let deadline = Instant::now() + budget;
    let mut last = None;
    // Bounded: each probe is bounded, and the loop ends at the deadline.
    while Instant::now() < deadline {
        match (host.probe)(addr, zone, PROBE_TIMEOUT) {
            Ok(serial) => return Ok(format!("{addr} answers {zone} SOA (serial {serial})\n")),
            Err(e) => last = Some(e),
        }
        std::thread::sleep(PROBE_PAUSE);
    }
    Err(Failed(
        Class::Partial,
        format!(
            "the service was started, but {addr} did not answer {zone} SOA within {} s: {}",
            budget.as_secs(),
            last.map(|e| e.to_string()).unwrap_or_default()
        ),
        host.logs_hint(),
    ))
}

fn wait_fails(
    host: &mut Host<'_>,
    argv: &[String],
    budget: Duration,
    what: &str,
) -> Result<(), Failed> {
    let deadline = Instant::now() + budget;
    // Bounded: the runner bounds each call, and the loop ends at the deadline.
    while host.runner.run(argv).ok() {
        if Instant::now() >= deadline {
            return Err(Failed(
                Class::Runtime,
                format!(
                    "`{}` still succeeds {} s later: not yet {what}",
                    argv.join(" "),
                    budget.as_secs()
                ),
                "wait a moment and run the same command again".into(),
            ));
        }
        std::thread::sleep(PROBE_PAUSE);
    }
    Ok(())
}

fn purge(path: &Path) -> Result<(), Failed> {
    if let Some(s) = crate::store::status_file::running(path) {
        return Err(Failed(
            Class::Partial,
            format!(
                "a pigsty-dns serve (pid {}) still runs from {}; not removing it",
                s.pid,
                path.display()
            ),
            "stop that server, then remove the directory".into(),
        ));
    }
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Failed(
            Class::Runtime,
            format!("cannot remove {}: {e}", path.display()),
            "remove it by hand".into(),
        )),
    }
}
