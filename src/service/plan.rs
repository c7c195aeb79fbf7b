//! What install and uninstall do, as a list of steps: printed by `--dry-run` (text or JSON, with the
//! sha256 of each file before and after), and carried out one by one otherwise.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::Host;
use crate::error::{AppError, Class};
use crate::name::Zone;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Written atomically (temp file, then rename); parent directories created.
    Write {
        path: PathBuf,
        content: String,
        mode: u32,
    },
    Remove {
        path: PathBuf,
    },
    /// `may_fail`: a non-zero exit is expected in some states (e.g. stopping what is not loaded).
    Run {
        argv: Vec<String>,
        may_fail: bool,
    },
    WaitSoa {
        addr: SocketAddr,
        zone: Zone,
        budget: Duration,
    },
    RouteUninstall,
    /// Fails unless the route seam reports no route.
    RouteVerifyGone,
    /// Removes the state directory (the records).
    Purge {
        path: PathBuf,
    },
}

fn sha256_file(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(hex(&Sha256::digest(&bytes)))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Step {
    pub fn describe(&self) -> String {
        match self {
            Step::Write {
                path,
                mode,
                content,
            } => format!(
                "write {} (mode {mode:o}; sha256 {} -> {})",
                path.display(),
                sha256_file(path)
                    .as_deref()
                    .map_or("none", |s| &s[..12.min(s.len())]),
                &hex(&Sha256::digest(content.as_bytes()))[..12]
            ),
            Step::Remove { path } => format!("remove {}", path.display()),
            Step::Run { argv, may_fail } => format!(
                "run: {}{}",
                argv.join(" "),
                if *may_fail {
                    "  (a failure here is fine)"
                } else {
                    ""
                }
            ),
            Step::WaitSoa { addr, zone, budget } => format!(
                "wait up to {} s until {addr} answers {zone} SOA",
                budget.as_secs()
            ),
            Step::RouteUninstall => "run: pigsty-dns route uninstall --yes".into(),
            Step::RouteVerifyGone => "check: pigsty-dns route status shows no route".into(),
            Step::Purge { path } => format!(
                "remove the state directory {} (the records)",
                path.display()
            ),
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            Step::Write {
                path,
                content,
                mode,
            } => json!({
                "kind": "write",
                "path": path.display().to_string(),
                "mode": format!("{mode:o}"),
                "sha256_before": sha256_file(path),
                "sha256_after": hex(&Sha256::digest(content.as_bytes())),
                "content": content,
            }),
            Step::Remove { path } => json!({
                "kind": "remove",
                "path": path.display().to_string(),
                "sha256_before": sha256_file(path),
                "sha256_after": null,
            }),
            Step::Run { argv, may_fail } => {
                json!({"kind": "run", "argv": argv, "may_fail": may_fail})
            }
            Step::WaitSoa { addr, zone, budget } => json!({
                "kind": "wait-soa", "server": addr.to_string(), "zone": zone.to_string(),
                "budget_secs": budget.as_secs(),
            }),
            Step::RouteUninstall => json!({"kind": "route-uninstall"}),
            Step::RouteVerifyGone => json!({"kind": "route-verify-gone"}),
            Step::Purge { path } => json!({"kind": "purge", "path": path.display().to_string()}),
        }
    }
}

/// The dry-run text: every step, and the full content of every file that would be written.
pub fn render_text(action: &str, steps: &[Step], notes: &[String]) -> String {
    let mut out = format!("{action} would:\n");
    for (i, s) in steps.iter().enumerate() {
        out.push_str(&format!("  {}. {}\n", i + 1, s.describe()));
    }
    for s in steps {
        if let Step::Write { path, content, .. } = s {
            out.push_str(&format!("\n--- {} ---\n{content}", path.display()));
            if !content.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    for n in notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

pub fn render_json(
    action: &str,
    dry_run: bool,
    steps: &[Step],
    notes: &[String],
    done: usize,
) -> String {
    crate::commands::to_json(&json!({
        "format": crate::commands::JSON_FORMAT,
        "action": action,
        "dry_run": dry_run,
        "steps": steps.iter().map(Step::to_json).collect::<Vec<_>>(),
        "done": done,
        "notes": notes,
    }))
}

fn write_atomic(path: &Path, content: &str, mode: u32) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let parent = path
        .parent()
        .ok_or_else(|| std::io::Error::other("no parent directory"))?;
    std::fs::create_dir_all(parent)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(&tmp)?;
    f.write_all(content.as_bytes())?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)
}

/// Carries out `steps` in order and stops at the first failure. Each done step is one line of the
/// returned text; on failure the error's report holds the lines of the steps that did run.
pub fn execute(host: &mut Host<'_>, steps: &[Step]) -> Result<String, AppError> {
    let mut out = String::new();
    for (i, step) in steps.iter().enumerate() {
        // Described before it runs, so a write shows the file's digest before and after.
        let line = step.describe();
        let fail = |out: &str, message: String, next: String| {
            let mut e = AppError::new(Class::Runtime, message, next);
            e.report = Some(format!(
                "{out}stopped at step {} of {}: {}\n",
                i + 1,
                steps.len(),
                line
            ));
            e
        };
        match step {
            Step::Write {
                path,
                content,
                mode,
            } => {
                write_atomic(path, content, *mode).map_err(|e| {
                    fail(
                        &out,
                        format!("cannot write {}: {e}", path.display()),
                        "check the directory's permissions".into(),
                    )
                })?;
            }
            Step::Remove { path } => match std::fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(fail(
                        &out,
                        format!("cannot remove {}: {e}", path.display()),
                        "check the directory's permissions".into(),
                    ));
                }
            },
            Step::Run { argv, may_fail } => {
                let r = host.runner.run(argv);
                match r {
                    Ok(o) if o.ok() || *may_fail => {}
                    Ok(o) => {
                        return Err(fail(
                            &out,
                            format!(
                                "{} exited {}: {}",
                                argv.join(" "),
                                o.code.map_or("by a signal".into(), |c| c.to_string()),
                                o.stderr.trim()
                            ),
                            "fix what it says and run the same command again".into(),
                        ));
                    }
                    Err(e) if *may_fail => {
                        tracing::debug!("{}: {e}", argv.join(" "));
                    }
                    Err(e) => {
                        return Err(fail(
                            &out,
                            format!("cannot run {}: {e}", argv.join(" ")),
                            format!(
                                "is {} installed and on PATH?",
                                argv.first().map_or("", |s| s)
                            ),
                        ));
                    }
                }
            }
            Step::WaitSoa { addr, zone, budget } => {
                let deadline = Instant::now() + *budget;
                let mut last = String::new();
                let mut answered = None;
                // Bounded: each probe is bounded, and the loop ends at the deadline.
                while Instant::now() < deadline {
                    match (host.probe)(*addr, zone, Duration::from_millis(700)) {
                        Ok(serial) => {
                            answered = Some(serial);
                            break;
                        }
                        Err(e) => last = e,
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
                match answered {
                    Some(serial) => {
                        out.push_str(&format!("{addr} answers {zone} SOA (serial {serial})\n"));
                        continue;
                    }
                    None => {
                        let mut e = fail(
                            &out,
                            format!(
                                "the service was started, but {addr} did not answer {zone} SOA within {} s: {last}",
                                budget.as_secs()
                            ),
                            host.logs_hint(),
                        );
                        e.class = Class::Partial;
                        return Err(e);
                    }
                }
            }
            Step::RouteUninstall => {
                host.route.uninstall().map_err(|e| {
                    let mut err = fail(
                        &out,
                        format!("route uninstall failed: {e}"),
                        "fix the route first (pigsty-dns route status); the service is untouched"
                            .into(),
                    );
                    err.class = Class::Partial;
                    err
                })?;
            }
            Step::RouteVerifyGone => {
                match host.route.status() {
                    super::route::RouteState::NotInstalled => {}
                    other => {
                        let mut err = fail(
                        &out,
                        format!("the route is still there after route uninstall ({other:?}); the service was not stopped"),
                        "see pigsty-dns route status; remove the route, then uninstall the service".into(),
                    );
                        err.class = Class::Partial;
                        return Err(err);
                    }
                }
            }
            Step::Purge { path } => {
                if let Some(s) = crate::status::running(path) {
                    let mut err = fail(
                        &out,
                        format!(
                            "a pigsty-dns serve (pid {}) still runs from {}; not removing it",
                            s.pid,
                            path.display()
                        ),
                        "stop that server, then remove the directory".into(),
                    );
                    err.class = Class::Partial;
                    return Err(err);
                }
                match std::fs::remove_dir_all(path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(fail(
                            &out,
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
