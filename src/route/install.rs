//! `route install`: plan → preflight (root, ownership, other resolvers, the journal, the daemon) →
//! confirm → journal `applying` → write → apply, enable, flush → verify → journal `installed`; any
//! failure after the first write goes through `roll_back`, which undoes this run's changes and puts
//! the previous journal back.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::adapter::{self, Family, Step};
use super::claim::{self, Seen};
use super::context::{Ctx, crash_point, needs_root};
use super::files::{self, Existing};
use super::hosts_view::{self, View};
use super::journal::{self, Journal, JournalFile, State};
use super::live::{self, Live, NoLive};
use super::plan::{self, Plan, Request};
use super::verify::{self, Check};
use crate::digest::sha256_hex;
use crate::error::{AppError, Class};
use crate::output::{FORMAT, Report, now_rfc3339};
use crate::route::hosts::Summary;
use crate::store::status_file;
use crate::sys::fs as sys_fs;

#[derive(Serialize)]
struct InstallReport<'a> {
    format: u32,
    result: &'a str,
    plan: &'a Plan,
    /// What answers before the zone (issue 23): the fields of `route status --json`'s `hosts`.
    hosts: &'a Summary,
    checks: &'a [Check],
}

fn report(result: &str, plan: &Plan, hosts: &View, checks: &[Check], text: String) -> Report {
    let json = InstallReport {
        format: FORMAT,
        result,
        plan,
        hosts: &hosts.summary,
        checks,
    };
    Report::new(text, &json)
}

fn journal_for(plan: &Plan, files: Vec<JournalFile>, dirs: Vec<String>, state: State) -> Journal {
    Journal {
        format: journal::FORMAT,
        state,
        adapter: plan.adapter,
        zone: plan.zone.clone(),
        zones: plan.zones.clone(),
        reverse_zone: plan.reverse_zone.clone(),
        server: plan.server.to_string(),
        variant: plan.variant,
        link: plan.link.clone(),
        link_address: plan.link_address.clone(),
        link_kind: plan.link_kind,
        root: plan.root.clone(),
        files,
        created_dirs: dirs,
        pre_undo: plan.render.pre_undo.clone(),
        undo: plan.render.undo.clone(),
        written_at: now_rfc3339(),
    }
}

/// A file this run wrote: where, through which temporary directory, and what was there before
/// (None: nothing).
struct WrittenFile {
    path: PathBuf,
    temp_dir: Option<PathBuf>,
    before: Option<Vec<u8>>,
}

type Written = Vec<WrittenFile>;

fn write_files(
    plan: &Plan,
    stale: &[JournalFile],
    written: &mut Written,
    dirs: &mut Vec<String>,
    out: &mut Vec<String>,
) -> Result<(), String> {
    // The previous install's files this one no longer needs; each comes back if the run is undone.
    for f in stale {
        let p = PathBuf::from(&f.path);
        match std::fs::read(&p) {
            Ok(b) if sha256_hex(&b) == f.sha256 => {
                sys_fs::remove(&p).map_err(|e| e.to_string())?;
                crash_point(&f.path);
                out.push(format!("removed {} (no longer routed)", f.path));
                written.push(WrittenFile {
                    path: p,
                    temp_dir: plan
                        .files
                        .first()
                        .and_then(|f| f.temp_dir.clone())
                        .map(PathBuf::from),
                    before: Some(b),
                });
            }
            Ok(_) => out.push(format!(
                "left alone: {} changed since pigsty-dns wrote it (remove it yourself)",
                f.path
            )),
            Err(_) => {}
        }
    }
    for f in &plan.files {
        if f.existing == Existing::OursIdentical {
            continue;
        }
        let p = PathBuf::from(&f.path);
        let before = std::fs::read(&p).ok();
        for d in files::make_parents(&p)? {
            dirs.push(d.display().to_string());
        }
        let temp_dir = f.temp_dir.as_ref().map(PathBuf::from);
        write_config(&p, temp_dir.as_deref(), f.content.as_bytes())?;
        crash_point(&f.path);
        written.push(WrittenFile {
            path: p,
            temp_dir,
            before,
        });
    }
    Ok(())
}

/// The temporary file goes where the adapter says (macOS: never into the live /etc/resolver).
fn write_config(p: &Path, temp_dir: Option<&Path>, content: &[u8]) -> Result<(), String> {
    sys_fs::write_atomic(p, content, &files::config(temp_dir)).map_err(|e| e.to_string())
}

/// macOS: the proof that a lookup reached the daemon is its answer counters, so its status file must
/// be there, of a running server on the route's address — checked before anything is written.
fn check_status_file(ctx: &Ctx<'_>, plan: &Plan) -> Result<(), AppError> {
    let bad = |why: String| {
        AppError::new(
            Class::Usage,
            format!("macos-resolver proves the route by the daemon's answer counters, but {why}"),
            format!(
                "give --state-dir DIR, the --state-dir of the pigsty-dns serve on {} (default: ~/Library/Application Support/pigsty-dns of the user who runs it)",
                plan.server
            ),
        )
    };
    let Some(file) = &ctx.status_file else {
        return Err(bad(
            "no status file was found (no --state-dir, no $SUDO_USER or $HOME)".into(),
        ));
    };
    let s = file.parent().and_then(status_file::read).ok_or_else(|| {
        bad(format!(
            "{} is not a pigsty-dns status file",
            file.display()
        ))
    })?;
    if !s.is_running() {
        return Err(bad(format!(
            "{} belongs to a server that is not running (pid {})",
            file.display(),
            s.pid
        )));
    }
    if !s.listen.contains(&plan.server) {
        return Err(bad(format!(
            "{} belongs to a server on {}, not on {}",
            file.display(),
            s.listen
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            plan.server
        )));
    }
    Ok(())
}

pub fn install(
    ctx: &mut Ctx<'_>,
    req: &Request,
    dry_run: bool,
    yes: bool,
) -> Result<Report, AppError> {
    let jpath = journal::path(&ctx.journal_dir);
    let zones: Vec<String> = req.zones.iter().map(|z| z.to_string()).collect();
    let live = live::for_zones(ctx.state_dir.as_deref(), &zones);
    let (mut plan, stale) = make_plan(ctx, req, &live, &jpath)?;
    let hosts = hosts_view::for_plan(ctx, &mut plan)?;
    let shown = plan::text(&plan);
    if dry_run {
        return Ok(report("plan", &plan, &hosts, &[], shown));
    }
    ctx.out.push(shown.trim_end().to_string());
    let Preflight { previous, serial } = preflight(ctx, req, &plan, &jpath)?;
    ctx.confirm(yes, "Apply this route plan?")?;
    // Again after the prompt, right before the first write: a link that appeared while the plan was
    // read would otherwise be deleted by this run's rollback (it undoes the link by name).
    not_someone_elses_link(ctx, &plan)?;
    // Journal first (state "applying"), so a crash half-way leaves something uninstall can read.
    let jfiles = journal_files(&plan, previous.as_ref());
    journal::write(
        &ctx.journal_dir,
        &journal_for(&plan, jfiles.clone(), vec![], State::Applying),
    )
    .map_err(io_error)?;
    let mut done = Applied::default();
    let checks = match apply_and_verify(ctx, &plan, &stale, &mut done, serial, live.as_ref().ok()) {
        Ok(checks) => checks,
        Err(why) => return Err(roll_back(ctx, &plan, &done, previous.as_ref(), &why)),
    };
    let prev_dirs = previous.map(|j| j.created_dirs).unwrap_or_default();
    let all_dirs: Vec<String> = prev_dirs.into_iter().chain(done.dirs).collect();
    journal::write(
        &ctx.journal_dir,
        &journal_for(&plan, jfiles, all_dirs, State::Installed),
    )
    .map_err(io_error)?;
    let text = installed_text(&plan, live.as_ref().err(), &checks, &jpath);
    Ok(report("installed", &plan, &hosts, &checks, text))
}

/// The plan, with the live generation's note and the previous install's files this one no longer
/// needs (read here for the plan; the journal is checked again in `preflight`).
fn make_plan(
    ctx: &mut Ctx<'_>,
    req: &Request,
    live: &Result<Live, NoLive>,
    jpath: &Path,
) -> Result<(Plan, Vec<JournalFile>), AppError> {
    let reverse = live.as_ref().ok().and_then(|l| l.reverse.clone());
    let mut plan = plan::build(&ctx.facts, req, reverse, &ctx.root, jpath, ctx.runner)?;
    not_someone_elses_link(ctx, &plan)?;
    if let Err(no) = live {
        plan.notes.push(no.note(&plan.zones));
    }
    let stale: Vec<JournalFile> = match journal::read(&ctx.journal_dir) {
        Ok(Some(j)) => j
            .files
            .into_iter()
            .filter(|f| !plan.files.iter().any(|p| p.path == f.path))
            .collect(),
        _ => vec![],
    };
    plan.remove = stale.iter().map(|f| f.path.clone()).collect();
    Ok((plan, stale))
}

/// `--link` names what uninstall, rollback and the boot unit's ExecStop delete: an interface that
/// exists and that no journal of ours records (lo, a VPN's, a bridge) is someone else's.
fn not_someone_elses_link(ctx: &Ctx<'_>, plan: &Plan) -> Result<(), AppError> {
    let Some(link) = plan.link.as_deref() else {
        return Ok(());
    };
    let exists = files::under(&ctx.root, &format!("/sys/class/net/{link}")).exists();
    let ours =
        matches!(journal::read(&ctx.journal_dir), Ok(Some(j)) if j.link.as_deref() == Some(link));
    if exists && !ours {
        return Err(AppError::new(
            Class::Conflict,
            format!(
                "--link {}: that interface exists and no route journal of pigsty-dns records creating it; uninstall would delete it",
                crate::output::text::shown(link)
            ),
            "give --link a name no interface has (the default is pigsty-dns0)",
        ));
    }
    Ok(())
}

/// What the checks before the first write found.
struct Preflight {
    previous: Option<Journal>,
    /// The zone's serial as the daemon answers it.
    serial: u32,
}

/// Everything that refuses before anything is written: root, ownership, other resolvers, another
/// route, the daemon, and (macOS) the daemon's status file.
fn preflight(
    ctx: &mut Ctx<'_>,
    req: &Request,
    plan: &Plan,
    jpath: &Path,
) -> Result<Preflight, AppError> {
    if !ctx.facts.is_root {
        return Err(needs_root());
    }
    refuse_not_ours(plan)?;
    refuse_claimants(plan)?;
    let previous = journal::read(&ctx.journal_dir)
        .map_err(|e| AppError::new(Class::Integrity, e, "inspect or remove the journal"))?;
    if let Some(j) = &previous {
        refuse_another_route(j, plan, jpath)?;
    }
    let serial = daemon_serial(ctx, req)?;
    if adapter::family(plan.adapter) == Family::Mdns {
        check_status_file(ctx, plan)?;
    }
    Ok(Preflight { previous, serial })
}

fn refuse_not_ours(plan: &Plan) -> Result<(), AppError> {
    match plan.files.iter().find(|f| f.existing == Existing::NotOurs) {
        Some(f) => Err(AppError::new(
            Class::Conflict,
            format!(
                "{} exists and pigsty-dns does not own it (no ownership marker)",
                f.path
            ),
            "move that file away yourself if it is stale, or route the zone by hand; pigsty-dns never overwrites it",
        )),
        None => Ok(()),
    }
}

/// The zone is never shared: another resolver that claims it (macOS) refuses the install.
fn refuse_claimants(plan: &Plan) -> Result<(), AppError> {
    if plan.claimants.is_empty() {
        return Ok(());
    }
    Err(AppError::new(
        Class::Conflict,
        format!(
            "another resolver claims {}: {}",
            plan::zones_shown(plan),
            plan.claimants
                .iter()
                .map(|c| c.what.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ),
        claim::advice(&plan.claimants, &plan.zones.join(", "), Seen::Install),
    ))
}

/// Installing again is fine (it is idempotent); a different route must be uninstalled first.
fn refuse_another_route(j: &Journal, plan: &Plan, jpath: &Path) -> Result<(), AppError> {
    // The same route when it shares a zone: an install of a release that routed one zone is
    // upgraded in place to the whole set (and a zone dropped from the set stops being routed).
    let same = j.adapter == plan.adapter
        && j.server == plan.server.to_string()
        && j.zones().iter().any(|z| plan.zones.contains(z))
        && j.link == plan.link;
    if same {
        return Ok(());
    }
    Err(AppError::new(
        Class::Conflict,
        format!(
            "a route is already installed ({} to {} for {}, journal {})",
            j.adapter,
            j.server,
            j.zones().join(", "),
            jpath.display()
        ),
        "run pigsty-dns route uninstall first",
    ))
}

/// The daemon must answer every zone at the route's address before anything is written: a zone it
/// does not serve would be routed to REFUSED. One serial per generation: the first zone's.
fn daemon_serial(ctx: &Ctx<'_>, req: &Request) -> Result<u32, AppError> {
    let mut serial = None;
    for zone in req.zones.iter() {
        let s = (ctx.preflight)(req.server, zone).map_err(|e| {
            AppError::new(
                Class::Runtime,
                format!(
                    "preflight: the daemon does not answer {zone} SOA over UDP and TCP at {}: {e}",
                    req.server
                ),
                start_hint(req),
            )
        })?;
        serial.get_or_insert(s);
    }
    Ok(serial.unwrap_or_default())
}

/// The preflight's `next:`: start the daemon serving the route's zones (its `--zone` flags unless they
/// are the defaults), or route only what it serves.
fn start_hint(req: &Request) -> String {
    let names: Vec<&str> = req.zones.iter().map(|z| z.as_str()).collect();
    let flags: String = if names == crate::defaults::ZONES {
        String::new()
    } else {
        names.iter().map(|z| format!(" --zone {z}")).collect()
    };
    let only = if names.len() > 1 {
        ", or route only the zones it serves (pigsty-dns route install --zone ZONE)"
    } else {
        ""
    };
    format!(
        "start it first, serving {} (pigsty-dns serve --listen {}{flags}), or give its address with --server{only}",
        names.join(", "),
        req.server
    )
}

/// The journal's record of the planned files.
fn journal_files(plan: &Plan, previous: Option<&Journal>) -> Vec<JournalFile> {
    let prior_files: &[JournalFile] = previous.map_or(&[], |j| &j.files);
    plan.files
        .iter()
        .map(|f| JournalFile {
            path: f.path.clone(),
            // Before the first install, not this one: a re-install must not claim its own file.
            existed_before: prior_files
                .iter()
                .find(|p| p.path == f.path)
                .map(|p| p.existed_before)
                .unwrap_or(f.existing != Existing::Absent),
            sha256: f.sha256.clone(),
        })
        .collect()
}

fn io_error(e: String) -> AppError {
    AppError::new(
        Class::Runtime,
        e,
        "check permissions and free space, then run it again",
    )
}

/// What this run changed so far: what `roll_back` undoes.
#[derive(Default)]
struct Applied {
    written: Written,
    /// Directories this run created, outermost first.
    dirs: Vec<String>,
}

/// Write the files, run the apply, enable and flush steps, verify: the checks, or why it failed.
fn apply_and_verify(
    ctx: &mut Ctx<'_>,
    plan: &Plan,
    stale: &[JournalFile],
    done: &mut Applied,
    serial: u32,
    live: Option<&Live>,
) -> Result<Vec<Check>, String> {
    write_files(plan, stale, &mut done.written, &mut done.dirs, &mut ctx.out)?;
    let steps: Vec<Step> = plan
        .apply
        .iter()
        .chain(plan.enable.iter())
        .chain(plan.flush.iter())
        .cloned()
        .collect();
    ctx.run_steps(&steps)?;
    let checks = verify::after_apply(ctx, plan.adapter, &plan.params, serial, live);
    let failed: Vec<String> = checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| format!("{}: {}", c.check, c.detail))
        .collect();
    if failed.is_empty() {
        Ok(checks)
    } else {
        Err(failed.join("; "))
    }
}

/// The one way out after the first write: undo this run's changes, and say why.
fn roll_back(
    ctx: &mut Ctx<'_>,
    plan: &Plan,
    done: &Applied,
    previous: Option<&Journal>,
    why: &str,
) -> AppError {
    let tail = undo(ctx, plan, &done.written, &done.dirs, previous);
    AppError::new(
        Class::Runtime,
        format!("route not installed, this run's changes were undone: {why}{tail}"),
        "read the checks above; pigsty-dns route install --dry-run shows the plan (or pick another --adapter)",
    )
}

/// What install prints once the route is verified and journaled.
fn installed_text(plan: &Plan, no_live: Option<&NoLive>, checks: &[Check], jpath: &Path) -> String {
    let mut s = format!(
        "installed: {} routes {}{} to {}\n",
        plan.adapter,
        plan.zones.join(", "),
        plan.reverse_zone
            .as_deref()
            .map(|r| format!(" and {r}"))
            .unwrap_or_default(),
        plan.server
    );
    if let Some(no) = no_live {
        s.push_str(&format!("  note: {}\n", no.note(&plan.zones)));
    }
    for c in checks {
        s.push_str(&format!("  ok  {}: {}\n", c.check, c.detail));
    }
    s.push_str(&format!(
        "journal: {}\nundo with: pigsty-dns route uninstall\n",
        jpath.display()
    ));
    s
}

/// Undoes what this run wrote, then the journal (the previous one comes back if there was one).
/// Returns what could not be undone, as a tail for the error message ("" when everything was).
fn undo(
    ctx: &mut Ctx<'_>,
    plan: &Plan,
    written: &Written,
    dirs: &[String],
    previous: Option<&Journal>,
) -> String {
    let mut notes = Vec::new();
    // Best effort: each group of steps runs even when the one before it failed.
    ctx.run_steps(&plan.render.pre_undo).ok();
    for w in written.iter().rev() {
        let r = match &w.before {
            Some(b) => write_config(&w.path, w.temp_dir.as_deref(), b),
            None => sys_fs::remove(&w.path).map_err(|e| e.to_string()),
        };
        if let Err(e) = r {
            notes.push(e);
        }
    }
    for d in dirs.iter().rev() {
        std::fs::remove_dir(d).ok();
    }
    ctx.run_steps(&plan.render.undo).ok();
    ctx.run_steps(&plan.flush).ok();
    let jr = match previous {
        Some(j) => journal::write(&ctx.journal_dir, j),
        None => journal::remove(&ctx.journal_dir),
    };
    if let Err(e) = jr {
        notes.push(e);
    }
    if notes.is_empty() {
        String::new()
    } else {
        format!(" (undo problems: {})", notes.join("; "))
    }
}
