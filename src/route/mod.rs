//! `pigsty-dns route install | uninstall | status`: route the zone — and only the zone — from the
//! operating system's resolver to the daemon. detect → plan → (preflight, confirm) → apply → flush →
//! verify (undo on failure) → journal; uninstall removes only what the journal lists and still matches.

pub mod delegate;
pub mod detect;
pub mod files;
pub mod global;
pub mod journal;
pub mod link;
pub mod macos;
pub mod nm;
pub mod plan;
pub mod runner;
pub mod verify;

use std::io::IsTerminal;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand};
use serde::Serialize;

use crate::defaults::LISTEN_STR as DEFAULT_LISTEN;
use crate::error::{AppError, Class};
use crate::generation::sha256_of;
use crate::name::{DEFAULT_ZONE, Zone};
use detect::Facts;
use journal::{Journal, JournalFile};
use plan::{AdapterName, LinkKind, Params, Plan, Request, Step, Variant};
use runner::{Runner, SystemRunner};
use verify::Check;

#[derive(Args, Debug, Clone)]
pub struct Where {
    /// Prefix for every path read or written (tests and the lab); the system sees /.
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
    /// Journal directory [default: <root>/var/lib/pigsty-dns-route, on macOS
    /// <root>/Library/Application Support/pigsty-dns-route].
    #[arg(long, value_name = "DIR")]
    pub journal_dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct Checks {
    /// A name the daemon serves; verification resolves it through resolvectl and getent.
    #[arg(long, value_name = "NAME")]
    pub check_name: Option<String>,
    /// The daemon's state dir: its status.json REFUSED counter proves unrelated names stay away.
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

#[derive(Subcommand, Debug, Clone)]
pub enum RouteCommand {
    /// Route the zone from the system resolver to the daemon (shows the plan first).
    Install {
        /// The daemon's address (the one `serve --listen` uses); recorded in the journal.
        #[arg(long, env = "PIGSTY_DNS_LISTEN", default_value = DEFAULT_LISTEN)]
        server: SocketAddr,
        #[arg(long, env = "PIGSTY_DNS_ZONE", default_value = DEFAULT_ZONE)]
        zone: String,
        /// Override detection. resolved-global sends every other name to the daemon too.
        #[arg(long, value_enum)]
        adapter: Option<AdapterName>,
        /// resolved-link: networkd files, or ip + resolvectl now plus a boot-time unit.
        #[arg(long, value_enum)]
        link_variant: Option<Variant>,
        /// resolved-link: the dedicated link's name.
        #[arg(long, default_value = plan::DEFAULT_LINK)]
        link: String,
        /// resolved-link: the link's non-link-local address (refused if already in use).
        #[arg(long, default_value = plan::DEFAULT_LINK_ADDRESS)]
        link_address: String,
        /// resolved-link: link driver [default: dummy, ifb where dummy is missing].
        #[arg(long, value_enum)]
        link_kind: Option<LinkKind>,
        /// Show the plan (every file and command) and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Do not ask (required without a terminal).
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        checks: Checks,
        #[command(flatten)]
        place: Where,
    },
    /// Remove what `route install` wrote (only what the journal lists and still matches).
    Uninstall {
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        place: Where,
    },
    /// Adapter, journal, drift, scope, daemon and an end-to-end lookup, each with a verdict.
    Status {
        #[command(flatten)]
        checks: Checks,
        #[command(flatten)]
        place: Where,
    },
}

/// A direct A lookup at the daemon: Ok(None) when it has no address for the name.
pub type LookupFn = dyn Fn(SocketAddr, &str) -> Result<Option<Ipv4Addr>, String>;

/// What uninstall works from: the files (with their expected sha256, or None for "intact by its
/// own marker digest"), the adapter, its params, the undo steps, and directories to remove.
type UndoSet = (
    Vec<(PathBuf, Option<String>)>,
    Option<AdapterName>,
    Option<Params>,
    Vec<Step>,
    Vec<Step>,
    Vec<String>,
);

/// Everything the route commands touch outside their own logic, so tests can replace it.
pub struct Ctx<'a> {
    pub root: PathBuf,
    pub journal_dir: PathBuf,
    pub runner: &'a mut dyn Runner,
    pub facts: Facts,
    /// The zone's SOA over UDP and TCP at the address; Ok(serial).
    pub preflight: &'a dyn Fn(SocketAddr, &Zone) -> Result<u32, String>,
    /// A direct A lookup at the daemon.
    pub lookup_a: &'a LookupFn,
    /// Asks the user; `None` when there is no terminal.
    pub confirm: Option<&'a mut dyn FnMut(&str) -> bool>,
    /// How long verification waits for resolved to show a change.
    pub settle: Duration,
    /// How long to wait for the server's status file after the unrelated lookup.
    pub status_wait: Duration,
    pub check_name: Option<String>,
    pub status_file: Option<PathBuf>,
    /// Progress lines (plan first); printed by `run`, inspected by tests.
    pub out: Vec<String>,
}

pub fn journal_dir(place: &Where, os: detect::Os) -> PathBuf {
    place
        .journal_dir
        .clone()
        .unwrap_or_else(|| files::under(&place.root, journal::default_dir(os)))
}

fn real_preflight(addr: SocketAddr, zone: &Zone) -> Result<u32, String> {
    use crate::transport::Transport;
    crate::probe::block_on(async {
        let t = Duration::from_secs(2);
        let udp = crate::probe::soa(addr, Transport::Udp, zone, t).await;
        let tcp = crate::probe::soa(addr, Transport::Tcp, zone, t).await;
        let (udp, tcp) = (
            udp.map_err(|e| e.to_string())?,
            tcp.map_err(|e| e.to_string())?,
        );
        if !udp.authoritative || !tcp.authoritative {
            return Err(format!(
                "{addr} answers {zone} SOA but not authoritatively: is it pigsty-dns?"
            ));
        }
        Ok(udp.serial.max(tcp.serial))
    })
    .map_err(|e| e.to_string())?
}

fn real_lookup(addr: SocketAddr, name: &str) -> Result<Option<Ipv4Addr>, String> {
    let t = Duration::from_secs(2);
    crate::probe::block_on(crate::probe::a(
        addr,
        crate::transport::Transport::Udp,
        name,
        t,
    ))
    .and_then(|r| r)
    .map_err(|e| e.to_string())
}

/// The CLI entry: real runner, real probes, a terminal prompt if there is one.
pub fn run(cmd: &RouteCommand, json: bool) -> Result<String, AppError> {
    let mut runner = SystemRunner::default();
    let (place, checks) = match cmd {
        RouteCommand::Install { place, checks, .. } | RouteCommand::Status { place, checks } => {
            (place.clone(), Some(checks.clone()))
        }
        RouteCommand::Uninstall { place, .. } => (place.clone(), None),
    };
    let facts = detect::detect(&place.root, &mut runner);
    let mut prompt = |q: &str| {
        eprint!("{q} [y/N] ");
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).is_ok() && matches!(line.trim(), "y" | "Y" | "yes")
    };
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let mut ctx = Ctx {
        root: place.root.clone(),
        journal_dir: journal_dir(&place, facts.os),
        runner: &mut runner,
        facts,
        preflight: &real_preflight,
        lookup_a: &real_lookup,
        confirm: if interactive { Some(&mut prompt) } else { None },
        settle: Duration::from_secs(10),
        // Longer than two of the server's status writes (every 2 s), see verify::fresh_refused_count.
        status_wait: Duration::from_millis(4500),
        check_name: checks.as_ref().and_then(|c| c.check_name.clone()),
        status_file: checks
            .and_then(|c| c.state_dir)
            .map(|d| d.join("status.json")),
        out: Vec::new(),
    };
    let res = match cmd {
        RouteCommand::Install {
            server,
            zone,
            adapter,
            link_variant,
            link,
            link_address,
            link_kind,
            dry_run,
            yes,
            ..
        } => {
            let req = Request {
                zone: crate::commands::parse_zone(zone)?,
                server: *server,
                adapter: *adapter,
                variant: *link_variant,
                link: link.clone(),
                link_address: link_address.clone(),
                link_kind: *link_kind,
            };
            install(&mut ctx, &req, *dry_run, *yes, json)
        }
        RouteCommand::Uninstall { dry_run, yes, .. } => uninstall(&mut ctx, *dry_run, *yes, json),
        RouteCommand::Status { .. } => status(&mut ctx, json),
    };
    // Progress goes to stderr so stdout stays the result (and valid JSON with --json).
    for l in &ctx.out {
        eprintln!("{l}");
    }
    res
}

fn run_steps(ctx: &mut Ctx<'_>, steps: &[Step]) -> Result<(), String> {
    for s in steps {
        let out = ctx.runner.run(&s.argv);
        ctx.out.push(format!(
            "ran: {} -> {}",
            s.argv.join(" "),
            if out.ok() { "ok".into() } else { out.summary() }
        ));
        if !out.ok() && !s.may_fail {
            return Err(format!("`{}` failed: {}", s.argv.join(" "), out.summary()));
        }
    }
    Ok(())
}

fn needs_root() -> AppError {
    AppError::new(
        Class::Capability,
        "needs root: run it again with sudo",
        "sudo pigsty-dns route ... (nothing was written)",
    )
}

fn confirm(ctx: &mut Ctx<'_>, yes: bool, question: &str) -> Result<(), AppError> {
    if yes {
        return Ok(());
    }
    match ctx.confirm.as_mut() {
        Some(ask) => {
            if ask(question) {
                Ok(())
            } else {
                Err(AppError::new(
                    Class::Cancelled,
                    "cancelled: nothing was written",
                    "run it again and answer y, or pass --yes",
                ))
            }
        }
        None => Err(AppError::new(
            Class::Usage,
            "no terminal to confirm on: pass --yes (after reading the plan from --dry-run)",
            "pigsty-dns route install --dry-run, then the same with --yes",
        )),
    }
}

fn now() -> String {
    crate::output::now_rfc3339()
}

fn journal_for(plan: &Plan, files: Vec<JournalFile>, dirs: Vec<String>, state: &str) -> Journal {
    Journal {
        format: journal::FORMAT,
        state: state.into(),
        adapter: plan.adapter.as_str().into(),
        zone: plan.zone.clone(),
        server: plan.server.to_string(),
        variant: plan.variant.map(|v| format!("{v:?}").to_lowercase()),
        link: plan.link.clone(),
        link_address: plan.link_address.clone(),
        link_kind: plan.link_kind.map(|k| k.as_str().to_string()),
        root: plan.root.clone(),
        files,
        created_dirs: dirs,
        pre_undo: plan.render.pre_undo.clone(),
        undo: plan.render.undo.clone(),
        written_at: now(),
    }
}

#[derive(Serialize)]
struct InstallReport<'a> {
    format: u32,
    result: &'a str,
    plan: &'a Plan,
    checks: Vec<Check>,
}

pub fn install(
    ctx: &mut Ctx<'_>,
    req: &Request,
    dry_run: bool,
    yes: bool,
    json: bool,
) -> Result<String, AppError> {
    let jpath = journal::path(&ctx.journal_dir);
    let plan = plan::build(&ctx.facts, req, &ctx.root, &jpath, ctx.runner)?;
    let shown = if json {
        crate::commands::to_json(&InstallReport {
            format: 1,
            result: "plan",
            plan: &plan,
            checks: vec![],
        })
    } else {
        plan::text(&plan)
    };
    if dry_run {
        return Ok(shown);
    }
    ctx.out.push(shown.trim_end().to_string());
    if !ctx.facts.is_root {
        return Err(needs_root());
    }
    if let Some(f) = plan
        .files
        .iter()
        .find(|f| f.existing == files::Existing::NotOurs)
    {
        return Err(AppError::new(
            Class::Conflict,
            format!(
                "{} exists and pigsty-dns does not own it (no ownership marker)",
                f.path
            ),
            "move that file away yourself if it is stale, or route the zone by hand; pigsty-dns never overwrites it",
        ));
    }
    let previous = journal::read(&ctx.journal_dir)
        .map_err(|e| AppError::new(Class::Integrity, e, "inspect or remove the journal"))?;
    if let Some(j) = &previous {
        let same = j.adapter == plan.adapter.as_str()
            && j.server == plan.server.to_string()
            && j.zone == plan.zone
            && j.link == plan.link;
        if !same {
            return Err(AppError::new(
                Class::Conflict,
                format!(
                    "a route is already installed ({} to {} for {}, journal {})",
                    j.adapter,
                    j.server,
                    j.zone,
                    jpath.display()
                ),
                "run pigsty-dns route uninstall first",
            ));
        }
    }
    // Preflight: the daemon must answer the zone at the route's address before anything is written.
    let zone = req.zone.clone();
    let serial = (ctx.preflight)(req.server, &zone).map_err(|e| {
        AppError::new(
            Class::Runtime,
            format!(
                "preflight: the daemon does not answer {zone} SOA over UDP and TCP at {}: {e}",
                req.server
            ),
            format!(
                "start it first (pigsty-dns serve --listen {}), or give its address with --server",
                req.server
            ),
        )
    })?;
    confirm(ctx, yes, "Apply this route plan?")?;

    // Journal first (state "applying"), so a crash half-way leaves something uninstall can read.
    let mut written: Vec<(PathBuf, Option<Vec<u8>>)> = Vec::new();
    let mut jfiles = Vec::new();
    let mut dirs = Vec::new();
    let prior_files: Vec<JournalFile> = previous
        .as_ref()
        .map(|j| j.files.clone())
        .unwrap_or_default();
    for f in &plan.files {
        let existed = prior_files
            .iter()
            .find(|p| p.path == f.path)
            .map(|p| p.existed_before)
            .unwrap_or(f.existing != files::Existing::Absent);
        jfiles.push(JournalFile {
            path: f.path.clone(),
            existed_before: existed,
            sha256: f.sha256.clone(),
        });
    }
    let io = |e: String| {
        AppError::new(
            Class::Runtime,
            e,
            "check permissions and free space, then run it again",
        )
    };
    journal::write(
        &ctx.journal_dir,
        &journal_for(&plan, jfiles.clone(), vec![], "applying"),
    )
    .map_err(io)?;
    let write_all = |written: &mut Vec<(PathBuf, Option<Vec<u8>>)>,
                     dirs: &mut Vec<String>|
     -> Result<(), String> {
        for f in &plan.files {
            if f.existing == files::Existing::OursIdentical {
                continue;
            }
            let p = PathBuf::from(&f.path);
            let before = std::fs::read(&p).ok();
            for d in files::make_parents(&p)? {
                dirs.push(d.display().to_string());
            }
            files::write_atomic(&p, f.content.as_bytes())?;
            written.push((p, before));
        }
        Ok(())
    };
    let mut result = write_all(&mut written, &mut dirs);
    if result.is_ok() {
        let steps: Vec<Step> = plan
            .apply
            .iter()
            .chain(plan.enable.iter())
            .chain(plan.flush.iter())
            .cloned()
            .collect();
        result = run_steps(ctx, &steps);
    }
    let checks = if result.is_ok() {
        verify::after_apply(ctx, plan.adapter, &plan.params, serial)
    } else {
        vec![]
    };
    let failed: Vec<&Check> = checks.iter().filter(|c| !c.ok).collect();
    if result.is_ok() && !failed.is_empty() {
        result = Err(failed
            .iter()
            .map(|c| format!("{}: {}", c.check, c.detail))
            .collect::<Vec<_>>()
            .join("; "));
    }
    if let Err(why) = result {
        // Undo what this run wrote, then the journal (the previous one comes back if there was one).
        let mut undo_notes = Vec::new();
        let undo: Vec<Step> = plan.render.pre_undo.clone();
        let _ = run_steps(ctx, &undo);
        for (p, before) in written.iter().rev() {
            let r = match before {
                Some(b) => files::write_atomic(p, b),
                None => files::remove(p),
            };
            if let Err(e) = r {
                undo_notes.push(e);
            }
        }
        for d in dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
        let _ = run_steps(ctx, &plan.render.undo);
        let _ = run_steps(ctx, &plan.flush);
        let jr = match &previous {
            Some(j) => journal::write(&ctx.journal_dir, j),
            None => journal::remove(&ctx.journal_dir),
        };
        if let Err(e) = jr {
            undo_notes.push(e);
        }
        let tail = if undo_notes.is_empty() {
            String::new()
        } else {
            format!(" (undo problems: {})", undo_notes.join("; "))
        };
        return Err(AppError::new(
            Class::Runtime,
            format!("route not installed, this run's changes were undone: {why}{tail}"),
            "read the checks above; pigsty-dns route install --dry-run shows the plan (or pick another --adapter)",
        ));
    }
    let prev_dirs = previous.map(|j| j.created_dirs).unwrap_or_default();
    let all_dirs: Vec<String> = prev_dirs.into_iter().chain(dirs).collect();
    journal::write(
        &ctx.journal_dir,
        &journal_for(&plan, jfiles, all_dirs, "installed"),
    )
    .map_err(io)?;
    if json {
        return Ok(crate::commands::to_json(&InstallReport {
            format: 1,
            result: "installed",
            plan: &plan,
            checks,
        }));
    }
    let mut s = format!(
        "installed: {} routes {} to {}\n",
        plan.adapter.as_str(),
        plan.zone,
        plan.server
    );
    for c in &checks {
        s.push_str(&format!("  ok  {}: {}\n", c.check, c.detail));
    }
    s.push_str(&format!(
        "journal: {}\nundo with: pigsty-dns route uninstall\n",
        jpath.display()
    ));
    Ok(s)
}

/// Params good enough for undo and "is it gone" checks, from the journal.
fn params_from(j: &Journal, f: &Facts) -> Params {
    let (address, prefix) = j
        .link_address
        .as_deref()
        .and_then(|a| a.split_once('/'))
        .and_then(|(a, p)| Some((a.parse().ok()?, p.parse().ok()?)))
        .unwrap_or((Ipv4Addr::new(198, 18, 53, 53), 32));
    Params {
        zone: j.zone.clone(),
        server: j
            .server
            .parse()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 5353))),
        link: j.link.clone().unwrap_or_else(|| plan::DEFAULT_LINK.into()),
        address,
        prefix,
        kind: if j.link_kind.as_deref() == Some("ifb") {
            LinkKind::Ifb
        } else {
            LinkKind::Dummy
        },
        variant: if j.variant.as_deref() == Some("networkd") {
            Variant::Networkd
        } else {
            Variant::Runtime
        },
        ip: f.ip_path.clone(),
        resolvectl: f.resolvectl_path.clone(),
        systemd_booted: f.systemd_booted,
        nm_running: f.nm_dns_mode.is_some(),
    }
}

/// Without a journal: pigsty-dns's files at the places it writes, found by their marker.
fn orphans(ctx: &Ctx<'_>) -> Vec<(PathBuf, files::Owned)> {
    let mut cands: Vec<String> = vec![
        delegate::PATH.into(),
        nm::PATH.into(),
        global::PATH.into(),
        link::UNIT_PATH.into(),
        format!("/etc/resolver/{DEFAULT_ZONE}"),
    ];
    for dir in ["/etc/systemd/network", "/etc/resolver"] {
        if let Ok(rd) = std::fs::read_dir(files::under(&ctx.root, dir)) {
            for e in rd.flatten() {
                cands.push(format!("{dir}/{}", e.file_name().to_string_lossy()));
            }
        }
    }
    cands.sort();
    cands.dedup();
    cands
        .into_iter()
        .filter_map(|c| {
            let p = files::under(&ctx.root, &c);
            let text = std::fs::read_to_string(&p).ok()?;
            files::owned(&text).map(|o| (p, o))
        })
        .collect()
}

#[derive(Serialize)]
struct UninstallReport {
    format: u32,
    result: String,
    removed: Vec<String>,
    left_alone: Vec<String>,
    checks: Vec<Check>,
}

pub fn uninstall(
    ctx: &mut Ctx<'_>,
    dry_run: bool,
    yes: bool,
    json: bool,
) -> Result<String, AppError> {
    let j = journal::read(&ctx.journal_dir).map_err(|e| {
        AppError::new(
            Class::Integrity,
            e,
            "inspect the journal; remove it to fall back to marker search",
        )
    })?;
    // (path, expected sha256 or None = "intact by its own digest")
    let (targets, adapter, params, pre_undo, undo, dirs): UndoSet = match &j {
        Some(j) => {
            let p = params_from(j, &ctx.facts);
            (
                j.files
                    .iter()
                    .map(|f| (PathBuf::from(&f.path), Some(f.sha256.clone())))
                    .collect(),
                AdapterName::parse(&j.adapter),
                Some(p),
                j.pre_undo.clone(),
                j.undo.clone(),
                j.created_dirs.clone(),
            )
        }
        None => {
            let found = orphans(ctx);
            let first = found.first().map(|(_, o)| o.clone());
            let adapter = first.as_ref().and_then(|o| AdapterName::parse(&o.adapter));
            let (pre, und, params) = match (adapter, &first) {
                (Some(a), Some(o)) => {
                    let mut p = params_from(
                        &Journal {
                            format: journal::FORMAT,
                            state: String::new(),
                            adapter: o.adapter.clone(),
                            zone: DEFAULT_ZONE.into(),
                            server: DEFAULT_LISTEN.into(),
                            variant: Some(
                                if found
                                    .iter()
                                    .any(|(p, _)| p.extension().is_some_and(|e| e == "netdev"))
                                {
                                    "networkd".into()
                                } else {
                                    "runtime".into()
                                },
                            ),
                            link: o.link.clone(),
                            link_address: None,
                            link_kind: None,
                            root: String::new(),
                            files: vec![],
                            created_dirs: vec![],
                            pre_undo: vec![],
                            undo: vec![],
                            written_at: String::new(),
                        },
                        &ctx.facts,
                    );
                    p.link = o.link.clone().unwrap_or_else(|| plan::DEFAULT_LINK.into());
                    let r = plan::render(a, &p);
                    (r.pre_undo, r.undo, Some(p))
                }
                _ => (vec![], vec![], None),
            };
            let targets = found
                .into_iter()
                .filter(|(_, o)| o.intact)
                .map(|(p, _)| (p, None))
                .collect();
            (targets, adapter, params, pre, und, vec![])
        }
    };
    let mut lines = Vec::new();
    for (p, want) in &targets {
        lines.push(format!(
            "remove {} (if it still has sha256 {})",
            p.display(),
            want.as_deref().unwrap_or("its own marker digest")
        ));
    }
    for s in pre_undo.iter().chain(undo.iter()) {
        lines.push(format!("run: {}    # {}", s.argv.join(" "), s.why));
    }
    if targets.is_empty() && j.is_none() {
        let msg =
            "nothing to uninstall: no journal and no file of pigsty-dns's at the places it writes"
                .to_string();
        return Ok(if json {
            crate::commands::to_json(&UninstallReport {
                format: 1,
                result: "nothing".into(),
                removed: vec![],
                left_alone: vec![],
                checks: vec![],
            })
        } else {
            format!("{msg}\n")
        });
    }
    let plan_text = format!(
        "route uninstall plan ({}):\n{}\n",
        if j.is_some() {
            "from the journal"
        } else {
            "no journal: files found by their ownership marker"
        },
        lines.join("\n")
    );
    if dry_run {
        return Ok(plan_text);
    }
    ctx.out.push(plan_text.trim_end().to_string());
    if !ctx.facts.is_root {
        return Err(needs_root());
    }
    confirm(ctx, yes, "Remove this route?")?;
    let _ = run_steps(ctx, &pre_undo);
    let mut removed = Vec::new();
    let mut left = Vec::new();
    for (p, want) in &targets {
        match std::fs::read(p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => left.push(format!("{}: cannot read: {e}", p.display())),
            Ok(bytes) => {
                let ok = match want {
                    Some(h) => &sha256_of(&bytes) == h,
                    None => {
                        files::owned(&String::from_utf8_lossy(&bytes)).is_some_and(|o| o.intact)
                    }
                };
                if ok {
                    match files::remove(p) {
                        Ok(()) => removed.push(p.display().to_string()),
                        Err(e) => left.push(e),
                    }
                } else {
                    left.push(format!(
                        "{}: changed since pigsty-dns wrote it; left alone",
                        p.display()
                    ));
                }
            }
        }
    }
    for d in dirs.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
    let _ = run_steps(ctx, &undo);
    if let Some(a) = adapter {
        let _ = run_steps(ctx, &plan::flush_steps(a));
    }
    let mut checks = Vec::new();
    if let (Some(a), Some(p), true) = (adapter, &params, left.is_empty()) {
        checks.push(verify::gone(ctx, a, p));
    }
    let gone_failed = checks.iter().any(|c| !c.ok);
    if !left.is_empty() || gone_failed {
        let mut why = left.clone();
        why.extend(
            checks
                .iter()
                .filter(|c| !c.ok)
                .map(|c| format!("{}: {}", c.check, c.detail)),
        );
        return Err(AppError::new(
            Class::Partial,
            format!(
                "partial: removed {} file(s); {}",
                removed.len(),
                why.join("; ")
            ),
            "look at the files named above; the journal stays until they are resolved (run uninstall again after)",
        ));
    }
    if j.is_some() {
        journal::remove(&ctx.journal_dir)
            .map_err(|e| AppError::new(Class::Runtime, e, "remove the journal by hand"))?;
    }
    if json {
        return Ok(crate::commands::to_json(&UninstallReport {
            format: 1,
            result: "uninstalled".into(),
            removed,
            left_alone: left,
            checks,
        }));
    }
    let mut s = String::from("uninstalled: the route is gone\n");
    for r in &removed {
        s.push_str(&format!("  removed {r}\n"));
    }
    for c in &checks {
        s.push_str(&format!("  ok  {}: {}\n", c.check, c.detail));
    }
    Ok(s)
}

#[derive(Serialize, Debug)]
pub struct Item {
    pub item: String,
    pub ok: bool,
    pub verdict: String,
    pub next: String,
}

fn item(i: &str, ok: bool, verdict: impl Into<String>, next: impl Into<String>) -> Item {
    Item {
        item: i.into(),
        ok,
        verdict: verdict.into(),
        next: next.into(),
    }
}

pub fn status_items(ctx: &mut Ctx<'_>) -> Vec<Item> {
    let mut v = Vec::new();
    let detected = plan::choose(&ctx.facts);
    let j = match journal::read(&ctx.journal_dir) {
        Ok(j) => j,
        Err(e) => {
            v.push(item("journal", false, e, "inspect the journal file"));
            return v;
        }
    };
    let Some(j) = j else {
        v.push(match detected {
            Ok((a, why)) => item(
                "adapter",
                true,
                format!(
                    "no route installed; install would use {} ({why})",
                    a.as_str()
                ),
                "pigsty-dns route install --dry-run",
            ),
            Err(e) => item("adapter", false, e.message, e.next),
        });
        let orphans = orphans(ctx);
        v.push(if orphans.is_empty() {
            item(
                "journal",
                true,
                format!(
                    "no journal at {}",
                    journal::path(&ctx.journal_dir).display()
                ),
                "nothing to do",
            )
        } else {
            item(
                "journal",
                false,
                format!(
                    "no journal, but pigsty-dns files exist: {}",
                    orphans
                        .iter()
                        .map(|(p, _)| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                "pigsty-dns route uninstall removes the unchanged ones",
            )
        });
        return v;
    };
    let adapter = AdapterName::parse(&j.adapter);
    v.push(item(
        "adapter",
        adapter.is_some(),
        format!("{} routes {} to {}", j.adapter, j.zone, j.server),
        "none",
    ));
    v.push(item(
        "journal",
        j.state == "installed",
        format!(
            "{} ({}, written {})",
            journal::path(&ctx.journal_dir).display(),
            j.state,
            j.written_at
        ),
        if j.state == "installed" {
            "none".into()
        } else {
            "an install was interrupted: run pigsty-dns route uninstall, then install again"
                .to_string()
        },
    ));
    let mut drift = Vec::new();
    for f in &j.files {
        match std::fs::read(&f.path) {
            Ok(b) if sha256_of(&b) == f.sha256 => {}
            Ok(_) => drift.push(format!("{} changed", f.path)),
            Err(_) => drift.push(format!("{} is missing", f.path)),
        }
    }
    v.push(if drift.is_empty() {
        item(
            "drift",
            true,
            format!("all {} file(s) are as written", j.files.len()),
            "none",
        )
    } else {
        item(
            "drift",
            false,
            drift.join("; "),
            "pigsty-dns route uninstall, then install again",
        )
    });
    let p = params_from(&j, &ctx.facts);
    let Some(a) = adapter else { return v };
    let settle = Duration::ZERO;
    v.push(match verify::scope(ctx, a, &p, settle) {
        Ok(d) => item("scope", true, d, "none"),
        Err(e) => item("scope", false, e, "pigsty-dns route uninstall && pigsty-dns route install (re-creates the link and its address)"),
    });
    let zone = Zone::parse(&j.zone).ok();
    let serial = zone.as_ref().map(|z| (ctx.preflight)(p.server, z));
    match serial {
        Some(Ok(s)) => {
            v.push(item(
                "daemon",
                true,
                format!(
                    "answers {} SOA over UDP and TCP at {} (serial {s})",
                    j.zone, p.server
                ),
                "none",
            ));
            let checks = verify::after_apply(ctx, a, &p, s);
            for c in checks.into_iter().skip(1) {
                v.push(item(
                    &format!("lookup: {}", c.check),
                    c.ok,
                    c.detail,
                    if c.ok {
                        "none"
                    } else {
                        "check the scope item; resolvectl flush-caches"
                    },
                ));
            }
        }
        Some(Err(e)) => {
            v.push(item(
                "daemon",
                false,
                format!("not answering at {}: {e}", p.server),
                format!("start it: pigsty-dns serve --listen {}", p.server),
            ));
            v.push(item(
                "lookup",
                false,
                "zone lookups fail while the daemon is down (nothing leaks: the route stays)",
                "start the daemon",
            ));
        }
        None => v.push(item(
            "daemon",
            false,
            format!("journal zone {:?} is not a valid zone", j.zone),
            "pigsty-dns route uninstall",
        )),
    }
    v
}

#[derive(Serialize)]
struct StatusReport {
    format: u32,
    ok: bool,
    /// Whether anything of a route is in place (a journal, or files with the ownership marker): what
    /// `service uninstall` asks before it stops the daemon.
    installed: bool,
    adapter: Option<String>,
    items: Vec<Item>,
}

pub fn status(ctx: &mut Ctx<'_>, json: bool) -> Result<String, AppError> {
    let items = status_items(ctx);
    let ok = items.iter().all(|i| i.ok);
    if json {
        // An unreadable journal counts as installed: never let a teardown assume the route is gone.
        let (installed, adapter) = match journal::read(&ctx.journal_dir) {
            Ok(Some(j)) => (true, Some(j.adapter)),
            Ok(None) => (!orphans(ctx).is_empty(), None),
            Err(_) => (true, None),
        };
        return Ok(crate::commands::to_json(&StatusReport {
            format: 1,
            ok,
            installed,
            adapter,
            items,
        }));
    }
    let mut s = String::new();
    for i in &items {
        s.push_str(&format!(
            "{} {}: {}\n",
            if i.ok { "ok  " } else { "FAIL" },
            i.item,
            i.verdict
        ));
        if !i.ok {
            s.push_str(&format!("     next: {}\n", i.next));
        }
    }
    Ok(s)
}

/// Used by tests that want the journal path for a root.
pub fn default_journal_dir(root: &Path) -> PathBuf {
    files::under(root, journal::default_dir(detect::current_os()))
}
