//! `route uninstall`: remove only what the journal lists and still matches its sha256 (without a
//! journal: the files found by their ownership marker whose body is intact), run the adapter's undo
//! steps, and check the route is gone; the journal goes last, only when nothing was left behind.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::adapter::{AdapterName, Params, Step, render};
use super::context::{Ctx, crash_point, needs_root};
use super::family;
use super::files;
use super::installed::{orphans, params_from, params_from_markers, stale_temps};
use super::journal::{self, Journal};
use super::verify::{self, Check};
use crate::digest::sha256_hex;
use crate::error::{AppError, Class};
use crate::output::{FORMAT, Report};
use crate::sys::fs as sys_fs;

/// When a file is still exactly what pigsty-dns wrote, so uninstall may remove it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expect {
    /// The sha256 the journal recorded.
    Sha256(String),
    /// No journal: the body still matches its own marker digest.
    OwnDigest,
    /// A temporary file an interrupted write left (it may be cut short): it starts with the marker.
    Marker,
}

impl Expect {
    fn holds(&self, bytes: &[u8]) -> bool {
        match self {
            Expect::Sha256(h) => &sha256_hex(bytes) == h,
            Expect::OwnDigest => {
                files::owned(&String::from_utf8_lossy(bytes)).is_some_and(|o| o.intact)
            }
            Expect::Marker => bytes.starts_with(files::MARKER.as_bytes()),
        }
    }

    fn describe(&self) -> String {
        match self {
            Expect::Sha256(h) => format!("if it still has sha256 {h}"),
            Expect::OwnDigest => "if it still has sha256 its own marker digest".into(),
            Expect::Marker => {
                "a temporary file an interrupted write left; it carries the ownership marker".into()
            }
        }
    }

    fn sha256(&self) -> Option<&str> {
        match self {
            Expect::Sha256(h) => Some(h),
            _ => None,
        }
    }
}

/// What uninstall works from.
struct UndoSet {
    targets: Vec<(PathBuf, Expect)>,
    adapter: Option<AdapterName>,
    params: Option<Params>,
    pre_undo: Vec<Step>,
    undo: Vec<Step>,
    /// Directories the install created, outermost first.
    dirs: Vec<String>,
}

impl UndoSet {
    fn from_journal(j: &Journal, ctx: &Ctx<'_>) -> UndoSet {
        UndoSet {
            targets: j
                .files
                .iter()
                .map(|f| (PathBuf::from(&f.path), Expect::Sha256(f.sha256.clone())))
                .chain(stale(&ctx.root))
                .collect(),
            adapter: Some(j.adapter),
            params: Some(params_from(j, &ctx.facts)),
            pre_undo: j.pre_undo.clone(),
            undo: j.undo.clone(),
            dirs: j.created_dirs.clone(),
        }
    }

    /// No journal: the marked files, and the undo steps their adapter would render for them.
    fn from_markers(ctx: &Ctx<'_>) -> UndoSet {
        let found = orphans(&ctx.root);
        let adapter = found
            .first()
            .and_then(|(_, o)| AdapterName::parse(&o.adapter));
        let (pre_undo, undo, params) = match adapter {
            Some(a) => {
                let p = params_from_markers(&found, &ctx.facts);
                let r = render(a, &p);
                (r.pre_undo, r.undo, Some(p))
            }
            None => (vec![], vec![], None),
        };
        UndoSet {
            targets: {
                let stale: Vec<_> = stale(&ctx.root).collect();
                let mut t: Vec<(PathBuf, Expect)> = found
                    .into_iter()
                    .filter(|(p, o)| o.intact && !stale.iter().any(|(s, _)| s == p))
                    .map(|(p, _)| (p, Expect::OwnDigest))
                    .collect();
                t.extend(stale);
                t
            },
            adapter,
            params,
            pre_undo,
            undo,
            dirs: vec![],
        }
    }
}

/// The stale temporary files of the macOS resolver file (see `installed::stale_temps`).
fn stale(root: &Path) -> impl Iterator<Item = (PathBuf, Expect)> {
    stale_temps(root).into_iter().map(|p| (p, Expect::Marker))
}

#[derive(Serialize)]
struct UninstallReport {
    format: u32,
    result: &'static str,
    removed: Vec<String>,
    left_alone: Vec<String>,
    checks: Vec<Check>,
}

impl UninstallReport {
    fn report(self, text: String) -> Report {
        Report::new(text, &self)
    }
}

/// `--dry-run --json`: the same plan as the text.
#[derive(Serialize)]
struct UninstallPlan<'a> {
    format: u32,
    result: &'static str,
    from_journal: bool,
    remove: Vec<PlannedRemoval<'a>>,
    run: Vec<&'a Step>,
}

#[derive(Serialize)]
struct PlannedRemoval<'a> {
    path: String,
    /// None: removed if its body still matches its own marker digest (or, a stale temporary file, if it
    /// starts with the marker).
    sha256: Option<&'a str>,
}

pub fn uninstall(ctx: &mut Ctx<'_>, dry_run: bool, yes: bool) -> Result<Report, AppError> {
    let j = journal::read(&ctx.journal_dir).map_err(|e| {
        AppError::new(
            Class::Integrity,
            e,
            "inspect the journal; remove it to fall back to marker search",
        )
    })?;
    let set = match &j {
        Some(j) => UndoSet::from_journal(j, ctx),
        None => UndoSet::from_markers(ctx),
    };
    if set.targets.is_empty() && j.is_none() {
        return Ok(nothing());
    }
    let from_journal = j.is_some();
    let plan_text = plan_text(&set, from_journal);
    if dry_run {
        return Ok(dry_run_report(&set, from_journal, plan_text));
    }
    ctx.out.push(plan_text.trim_end().to_string());
    if !ctx.facts.is_root {
        return Err(needs_root());
    }
    ctx.confirm(yes, "Remove this route?")?;
    let (removed, left) = take_down(ctx, &set);
    let mut checks = Vec::new();
    if let (Some(a), Some(p), true) = (set.adapter, &set.params, left.is_empty()) {
        checks.push(verify::gone(ctx, a, p));
    }
    if !left.is_empty() || checks.iter().any(|c| !c.ok) {
        return Err(partial(&removed, &left, &checks));
    }
    if from_journal {
        journal::remove(&ctx.journal_dir)
            .map_err(|e| AppError::new(Class::Runtime, e, "remove the journal by hand"))?;
    }
    Ok(done(removed, left, checks))
}

fn nothing() -> Report {
    let text =
        "nothing to uninstall: no journal and no file of pigsty-dns's at the places it writes\n";
    UninstallReport {
        format: FORMAT,
        result: "nothing",
        removed: vec![],
        left_alone: vec![],
        checks: vec![],
    }
    .report(text.into())
}

/// Every file to remove (and on what condition), every step to run.
fn plan_text(set: &UndoSet, from_journal: bool) -> String {
    let mut lines = Vec::new();
    for (p, want) in &set.targets {
        lines.push(format!("remove {} ({})", p.display(), want.describe()));
    }
    for s in set.pre_undo.iter().chain(set.undo.iter()) {
        lines.push(format!("run: {}    # {}", s.argv.join(" "), s.why));
    }
    format!(
        "route uninstall plan ({}):\n{}\n",
        if from_journal {
            "from the journal"
        } else {
            "no journal: files found by their ownership marker"
        },
        lines.join("\n")
    )
}

fn dry_run_report(set: &UndoSet, from_journal: bool, text: String) -> Report {
    let plan = UninstallPlan {
        format: FORMAT,
        result: "plan",
        from_journal,
        remove: set
            .targets
            .iter()
            .map(|(p, want)| PlannedRemoval {
                path: p.display().to_string(),
                sha256: want.sha256(),
            })
            .collect(),
        run: set.pre_undo.iter().chain(set.undo.iter()).collect(),
    };
    Report::new(text, &plan)
}

/// The undo steps around the removal of the files that are still as written: what was removed, and
/// what was left (and why). Undo steps are best effort: a link already gone must not keep its files
/// in place.
fn take_down(ctx: &mut Ctx<'_>, set: &UndoSet) -> (Vec<String>, Vec<String>) {
    ctx.run_steps(&set.pre_undo).ok();
    let mut removed = Vec::new();
    let mut left = Vec::new();
    for (p, want) in &set.targets {
        match remove_if_ours(p, want) {
            Ok(Some(r)) => removed.push(r),
            Ok(None) => {}
            Err(why) => left.push(why),
        }
    }
    // Only the empty ones go: anything else put there since is not ours to remove.
    for d in set.dirs.iter().rev() {
        std::fs::remove_dir(d).ok();
    }
    ctx.run_steps(&set.undo).ok();
    if let Some(a) = set.adapter {
        ctx.run_steps(&family::of_adapter(a).flush()).ok();
    }
    (removed, left)
}

/// Ok(Some(path)) when removed, Ok(None) when already gone, Err(why) when left in place.
fn remove_if_ours(p: &Path, want: &Expect) -> Result<Option<String>, String> {
    match std::fs::read(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: cannot read: {e}", p.display())),
        Ok(bytes) if want.holds(&bytes) => match sys_fs::remove(p) {
            Ok(()) => {
                crash_point(&p.display().to_string());
                Ok(Some(p.display().to_string()))
            }
            Err(e) => Err(e.to_string()),
        },
        Ok(_) => Err(format!(
            "{}: changed since pigsty-dns wrote it; left alone",
            p.display()
        )),
    }
}

fn partial(removed: &[String], left: &[String], checks: &[Check]) -> AppError {
    let mut why = left.to_vec();
    why.extend(
        checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| format!("{}: {}", c.check, c.detail)),
    );
    AppError::new(
        Class::Partial,
        format!(
            "partial: removed {} file(s); {}",
            removed.len(),
            why.join("; ")
        ),
        "look at the files named above; the journal stays until they are resolved (run uninstall again after)",
    )
}

fn done(removed: Vec<String>, left: Vec<String>, checks: Vec<Check>) -> Report {
    let mut s = String::from("uninstalled: the route is gone\n");
    for r in &removed {
        s.push_str(&format!("  removed {r}\n"));
    }
    for c in &checks {
        s.push_str(&format!("  ok  {}: {}\n", c.check, c.detail));
    }
    UninstallReport {
        format: FORMAT,
        result: "uninstalled",
        removed,
        left_alone: left,
        checks,
    }
    .report(s)
}
