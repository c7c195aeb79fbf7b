//! Carrying out a list of actions against the `Host`, in order, stopping at the first failure.

use std::time::{Duration, Instant};

use super::host::Host;
use super::route_seam::RouteState;
use super::steps::{Action, CommandFailed};
use crate::error::{AppError, Class};
use crate::sys::fs::{self, WriteOptions};

/// One probe's own limit while waiting for the SOA, and the pause between probes.
const PROBE_TIMEOUT: Duration = Duration::from_millis(700);
const PROBE_PAUSE: Duration = Duration::from_millis(200);

/// Carries out `steps` in order and stops at the first failure. Each done step is one line of the
/// returned text; on failure the error's report holds the lines of the steps that did run.
pub fn execute(host: &mut Host<'_>, steps: &[Action]) -> Result<String, AppError> {
    let mut out = String::new();
    for (i, step) in steps.iter().enumerate() {
        // Described before it runs, so a write shows the file's digest before and after.
        let line = step.describe();
        let fail = |out: &str, class: Class, message: String, next: String| {
            let mut e = AppError::new(class, message, next);
            e.report = Some(format!(
                "{out}stopped at step {} of {}: {}\n",
                i + 1,
                steps.len(),
                line
            ));
            e
        };
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
                    fail(
                        &out,
                        Class::Runtime,
                        format!("cannot write {}: {}", path.display(), e.source),
                        "check the directory's permissions".into(),
                    )
                })?;
            }
            Action::Remove { path } => {
                fs::remove(path).map_err(|e| {
                    fail(
                        &out,
                        Class::Runtime,
                        e.to_string(),
                        "check the directory's permissions".into(),
                    )
                })?;
            }
            Action::Run { argv, may_fail } => {
                if let Err(f) = CommandFailed::check(argv, host.runner.run(argv)) {
                    if *may_fail {
                        if f.did_not_run() {
                            tracing::debug!("{f}");
                        }
                    } else {
                        let next = if f.did_not_run() {
                            format!(
                                "is {} installed and on PATH?",
                                argv.first().map_or("", |s| s)
                            )
                        } else {
                            "fix what it says and run the same command again".into()
                        };
                        return Err(fail(&out, Class::Runtime, f.to_string(), next));
                    }
                }
            }
            Action::WaitSoa { addr, zone, budget } => {
                let deadline = Instant::now() + *budget;
                let mut last = None;
                let mut answered = None;
                // Bounded: each probe is bounded, and the loop ends at the deadline.
                while Instant::now() < deadline {
                    match (host.probe)(*addr, zone, PROBE_TIMEOUT) {
                        Ok(serial) => {
                            answered = Some(serial);
                            break;
                        }
                        Err(e) => last = Some(e),
                    }
                    std::thread::sleep(PROBE_PAUSE);
                }
                let Some(serial) = answered else {
                    return Err(fail(
                        &out,
                        Class::Partial,
                        format!(
                            "the service was started, but {addr} did not answer {zone} SOA within {} s: {}",
                            budget.as_secs(),
                            last.map(|e| e.to_string()).unwrap_or_default()
                        ),
                        host.logs_hint(),
                    ));
                };
                out.push_str(&format!("{addr} answers {zone} SOA (serial {serial})\n"));
                continue;
            }
            Action::WaitFails { argv, budget, what } => {
                let deadline = Instant::now() + *budget;
                // Bounded: the runner bounds each call, and the loop ends at the deadline.
                while host.runner.run(argv).ok() {
                    if Instant::now() >= deadline {
                        return Err(fail(
                            &out,
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
            }
            Action::RouteUninstall => {
                host.route.uninstall().map_err(|e| {
                    fail(
                        &out,
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
                    return Err(fail(
                        &out,
                        Class::Partial,
                        format!(
                            "the route is still there after route uninstall ({other}); the service was not stopped"
                        ),
                        "see pigsty-dns route status; remove the route, then uninstall the service"
                            .into(),
                    ));
                }
            },
            Action::Purge { path } => {
                if let Some(s) = crate::status_file::running(path) {
                    return Err(fail(
                        &out,
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
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(fail(
                            &out,
                            Class::Runtime,
                            format!("cannot remove {}: {e}", path.display()),
                            "remove it by hand".into(),
                        ));
                    }
                }
            }
        }
        out.push_str(&format!("done: {line}\n"));
    }
    Ok(out)
}
