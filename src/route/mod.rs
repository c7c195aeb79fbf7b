//! `pigsty-dns route install | uninstall | status`: route the served zones (by default `pigsty.test`
//! and `pigsty`, each with its own route) and the reverse zone — and only those — from the operating
//! system's resolver to the daemon. detect → plan → (preflight, confirm) → apply → flush →
//! verify (undo on failure) → journal; uninstall removes only what the journal lists and still matches.
//!
//! The rooms: `cli` (the command line), `context` (what the commands touch outside themselves),
//! `detect` (facts about the host), `adapter` (one file per way of routing, and their vocabulary;
//! each says which resolver family answers for it), `family` (one file per resolver family —
//! systemd-resolved, mDNSResponder, NetworkManager's dnsmasq — holding its scope check, lookups,
//! caching rule, flush and hints), `plan` (choosing an adapter, the full plan), `files` (the ownership
//! marker and how files are written), `journal` (what an install wrote), `installed` (what is in
//! place, journal or not), `claim` (another resolver that claims the zone, and the one advice for
//! it), `lifecycle` (what status makes of a route's later life: a daemon down, a lost link, a VPN's
//! claim, a damaged journal, a hand edit) and `lifecycle_probe` (what it runs and reads to get
//! there), `live` (the reverse zone and canonical names of the daemon's live generation),
//! `hosts_view` (the hosts file and nsswitch.conf as they bear on the zone), `verify` (the list of
//! checks through the native path), `check` (a check's result and polling), `counters` (what the
//! daemon counted, from its status file), `dnsinfo` (macOS: `scutil --dns` and
//! `/etc/resolver` as configd and mDNSResponder read them, and the other resolvers that claim the
//! zone), `visible` (when a change `load` made is visible through this host's route), and one file
//! per command (`status` a folder: one function per item, in `routed` and `unrouted`). Route talks to
//! the daemon only over DNS and through its status file, and reads (never writes) its stored
//! generations.

pub mod adapter;
pub(crate) mod check;
pub mod claim;
pub(crate) mod cli;
pub(crate) mod context;
pub(crate) mod counters;
pub mod detect;
pub mod dnsinfo;
pub(crate) mod family;
pub mod files;
mod hosts;
pub(crate) mod hosts_view;
pub(crate) mod install;
pub mod installed;
pub mod journal;
pub mod lifecycle;
pub(crate) mod lifecycle_probe;
pub(crate) mod live;
pub mod plan;
pub(crate) mod status;
pub(crate) mod uninstall;
pub(crate) mod verify;
pub(crate) mod visible;

use std::io::IsTerminal;
use std::time::Duration;

pub use cli::RouteCommand;
pub use context::Ctx;
pub use install::install;
pub use status::status;
pub use uninstall::uninstall;

use crate::dns::name::Zones;
use crate::error::{AppError, Class};
use crate::output::Report;
use crate::store::status_file;
use crate::sys::{Os, SystemRunner};
use plan::Request;

/// The CLI entry: real runner, real probes, a terminal prompt if there is one. Progress goes to
/// stderr once the command is done, so stdout stays the report (and valid JSON with --json).
pub fn run(cmd: &RouteCommand) -> Result<Report, AppError> {
    let (res, out) = run_quiet(cmd);
    for l in &out {
        eprintln!("{}", crate::output::text::for_terminal(l));
    }
    res
}

/// What of a route is in place on this host (the default root and journal): `service uninstall`'s
/// question, answered in this process.
pub fn presence_here() -> installed::Presence {
    let place = cli::Where {
        root: "/".into(),
        journal_dir: None,
    };
    installed::presence(&place.root, &context::journal_dir(&place, Os::this()))
}

/// `route uninstall --yes` on this host, in this process (`service uninstall --with-route`): Err
/// carries the progress lines and the error, which the service reports.
pub fn uninstall_here() -> Result<(), String> {
    let cmd = RouteCommand::Uninstall {
        dry_run: false,
        yes: true,
        place: cli::Where {
            root: "/".into(),
            journal_dir: None,
        },
    };
    let (res, out) = run_quiet(&cmd);
    res.map(drop).map_err(|e| {
        use crate::output::text::one_line;
        let mut lines = out;
        lines.push(format!("error: {}", one_line(&e.message)));
        lines.push(format!("next: {}", one_line(&e.next)));
        lines.join("\n")
    })
}

/// `run`, with its progress lines handed back rather than printed.
fn run_quiet(cmd: &RouteCommand) -> (Result<Report, AppError>, Vec<String>) {
    let mut runner = SystemRunner::default();
    let (place, checks) = cmd.place_and_checks();
    let facts = detect::detect(&place.root, &mut runner);
    let mut prompt = |q: &str| {
        eprint!("{} [y/N] ", crate::output::text::for_terminal(q));
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).is_ok() && matches!(line.trim(), "y" | "Y" | "yes")
    };
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let journal_dir = context::journal_dir(place, facts.os);
    let (status_file, state_dir) = daemon_files(cmd, checks, facts.os, &journal_dir);
    let mut ctx = Ctx {
        root: place.root.clone(),
        journal_dir,
        runner: &mut runner,
        facts,
        preflight: &context::preflight,
        lookup_a: &context::lookup_a,
        confirm: if interactive { Some(&mut prompt) } else { None },
        settle: Duration::from_secs(10),
        // Longer than two of the server's status writes (every 2 s), see counters::fresh_refused_count.
        status_wait: Duration::from_millis(4500),
        check_name: checks.and_then(|c| c.check_name.clone()),
        status_file,
        state_dir,
        out: Vec::new(),
    };
    let res = dispatch(&mut ctx, cmd);
    (res, ctx.out)
}

/// The daemon's status file and state dir the command reads: `--state-dir`, else (macOS always
/// proves the route by the daemon's counters) the default state dir, and for the state dir the one
/// whose daemon runs at the route's server (install's --server, else the installed route's).
fn daemon_files(
    cmd: &RouteCommand,
    checks: Option<&cli::Checks>,
    os: Os,
    journal_dir: &std::path::Path,
) -> (Option<std::path::PathBuf>, Option<std::path::PathBuf>) {
    let status_file = match checks.and_then(|c| c.state_dir.as_ref()) {
        Some(d) => Some(d.join(status_file::FILE)),
        None if os == Os::Macos && checks.is_some() => context::default_status_file(),
        None => None,
    };
    let route_server = match cmd {
        RouteCommand::Install { server, .. } => Some(*server),
        _ => journal::read(journal_dir)
            .ok()
            .flatten()
            .and_then(|j| j.server.parse().ok()),
    };
    let state_dir = match (checks, route_server) {
        (Some(c), Some(server)) => c
            .state_dir
            .clone()
            .or_else(|| context::default_state_dir(os, server)),
        (Some(c), None) => c.state_dir.clone(),
        (None, _) => None,
    };
    (status_file, state_dir)
}

fn dispatch(ctx: &mut Ctx<'_>, cmd: &RouteCommand) -> Result<Report, AppError> {
    match cmd {
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
                zones: zones_arg(zone)?,
                server: *server,
                adapter: *adapter,
                variant: *link_variant,
                link: link.clone(),
                link_address: link_address.clone(),
                link_kind: *link_kind,
            };
            install(ctx, &req, *dry_run, *yes)
        }
        RouteCommand::Uninstall { dry_run, yes, .. } => uninstall(ctx, *dry_run, *yes),
        RouteCommand::Status { .. } => status(ctx),
    }
}

/// `--zone` (repeated) or `PIGSTY_DNS_ZONE` (comma-separated) as a checked zone set.
pub fn zones_arg(raw: &[String]) -> Result<Zones, AppError> {
    let raw: Vec<&str> = raw.iter().map(|z| z.trim()).collect();
    Zones::parse(&raw).map_err(|e| {
        AppError::new(
            Class::Usage,
            format!("--zone (or {}) {e}", crate::defaults::ENV_ZONE),
            "give the zones the daemon serves, such as --zone pigsty.test --zone pigsty",
        )
    })
}
