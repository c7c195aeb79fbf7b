//! What install and uninstall do, as a list of actions: described for `--dry-run` (text or JSON, with the
//! sha256 of each file before and after) and for the log of what was done. `execute` carries them out.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::digest::{sha256_file, sha256_hex};
use crate::dns::name::Zone;
use crate::output::{FORMAT, Report};
use crate::sys::Output;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Written atomically (temp file, then rename, both fsynced); parent directories created.
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
    /// Runs `argv` until it fails (e.g. `launchctl print` once launchd let go of a label), at most for
    /// `budget`; `what` says what its failure means.
    WaitFails {
        argv: Vec<String>,
        budget: Duration,
        what: String,
    },
    RouteUninstall,
    /// Fails unless the route seam reports no route.
    RouteVerifyGone,
    /// Removes the state directory (the records).
    Purge {
        path: PathBuf,
    },
}

impl Action {
    pub fn describe(&self) -> String {
        match self {
            Action::Write {
                path,
                mode,
                content,
            } => format!(
                "write {} (mode {mode:o}; sha256 {} -> {})",
                path.display(),
                sha256_file(path)
                    .as_deref()
                    .map_or("none", |s| &s[..12.min(s.len())]),
                &sha256_hex(content.as_bytes())[..12]
            ),
            Action::Remove { path } => format!("remove {}", path.display()),
            Action::Run { argv, may_fail } => format!(
                "run: {}{}",
                argv.join(" "),
                if *may_fail {
                    "  (a failure here is fine)"
                } else {
                    ""
                }
            ),
            Action::WaitSoa { addr, zone, budget } => format!(
                "wait up to {} s until {addr} answers {zone} SOA",
                budget.as_secs()
            ),
            Action::WaitFails { argv, budget, what } => format!(
                "wait up to {} s until {what} ({} fails)",
                budget.as_secs(),
                argv.join(" ")
            ),
            Action::RouteUninstall => "run: pigsty-dns route uninstall --yes".into(),
            Action::RouteVerifyGone => "check: pigsty-dns route status shows no route".into(),
            Action::Purge { path } => format!(
                "remove the state directory {} (the records)",
                path.display()
            ),
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            Action::Write {
                path,
                content,
                mode,
            } => json!({
                "kind": "write",
                "path": path.display().to_string(),
                "mode": format!("{mode:o}"),
                "sha256_before": sha256_file(path),
                "sha256_after": sha256_hex(content.as_bytes()),
                "content": content,
            }),
            Action::Remove { path } => json!({
                "kind": "remove",
                "path": path.display().to_string(),
                "sha256_before": sha256_file(path),
                "sha256_after": null,
            }),
            Action::Run { argv, may_fail } => {
                json!({"kind": "run", "argv": argv, "may_fail": may_fail})
            }
            Action::WaitSoa { addr, zone, budget } => json!({
                "kind": "wait-soa", "server": addr.to_string(), "zone": zone.to_string(),
                "budget_secs": budget.as_secs(),
            }),
            Action::WaitFails { argv, budget, what } => json!({
                "kind": "wait-fails", "argv": argv, "budget_secs": budget.as_secs(), "until": what,
            }),
            Action::RouteUninstall => json!({"kind": "route-uninstall"}),
            Action::RouteVerifyGone => json!({"kind": "route-verify-gone"}),
            Action::Purge { path } => json!({"kind": "purge", "path": path.display().to_string()}),
        }
    }
}

/// What `--dry-run` prints: the actions, and in text also the content of every file to be written.
pub fn dry_run_report(command: &str, steps: &[Action], notes: &[String]) -> Report {
    Report::new(
        render_text(command, steps, notes),
        render_json(command, true, steps, notes, 0),
    )
}

/// After `execute` succeeded: its log of done steps, then the notes. The JSON is rendered now, so
/// each write's digest "before" is that of the file now in place.
pub fn done_report(command: &str, log: String, steps: &[Action], notes: &[String]) -> Report {
    Report::new(
        log + &render_notes(notes),
        render_json(command, false, steps, notes, steps.len()),
    )
}

/// The dry-run text: every action, and the full content of every file that would be written.
fn render_text(command: &str, steps: &[Action], notes: &[String]) -> String {
    let mut out = format!("{command} would:\n");
    for (i, s) in steps.iter().enumerate() {
        out.push_str(&format!("  {}. {}\n", i + 1, s.describe()));
    }
    for s in steps {
        if let Action::Write { path, content, .. } = s {
            out.push_str(&format!("\n--- {} ---\n{content}", path.display()));
            if !content.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out.push_str(&render_notes(notes));
    out
}

/// The JSON of the actions, and how many of them were done (0 for a dry run).
fn render_json(
    command: &str,
    dry_run: bool,
    steps: &[Action],
    notes: &[String],
    done: usize,
) -> Value {
    json!({
        "format": FORMAT,
        "action": command,
        "dry_run": dry_run,
        "steps": steps.iter().map(Action::to_json).collect::<Vec<_>>(),
        "done": done,
        "notes": notes,
    })
}

fn render_notes(notes: &[String]) -> String {
    notes.iter().map(|n| format!("note: {n}\n")).collect()
}

/// A program that did not succeed: no exit code means it could not be run (or did not finish).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandFailed {
    pub argv: Vec<String>,
    pub output: Output,
}

impl CommandFailed {
    /// `Ok` when `output` is a success, else the failure.
    pub fn check(argv: &[String], output: Output) -> Result<Output, CommandFailed> {
        if output.ok() {
            Ok(output)
        } else {
            Err(CommandFailed {
                argv: argv.to_vec(),
                output,
            })
        }
    }

    /// The program could not be started or did not finish (rather than exiting non-zero).
    pub fn did_not_run(&self) -> bool {
        self.output.code.is_none()
    }
}

impl fmt::Display for CommandFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line = self.argv.join(" ");
        let why = self.output.stderr.trim();
        match self.output.code {
            Some(c) => write!(f, "{line} exited {c}: {why}"),
            None => write!(f, "cannot run {line}: {why}"),
        }
    }
}

impl std::error::Error for CommandFailed {}
