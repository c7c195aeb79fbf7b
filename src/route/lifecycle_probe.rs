//! What `route status` and `route install` run and read to feed `lifecycle`'s verdicts: the daemon's
//! last status file and its systemd unit, the route link as `ip` shows it, the routing domains of
//! every resolved scope (`resolvectl domain`). Read-only; every command goes through the runner.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use super::claim::Claim;
use super::context::Ctx;
use super::files::under;
use super::lifecycle::{self, DaemonFacts, LinkState, UNIT_PROPS, UserUnit};
use crate::store::place;
use crate::sys::{Os, Runner, argv, user};

/// The state dirs a daemon at `server` may have written its status file to: the given one first,
/// then the state-dir rule's candidates.
fn candidates(given: Option<&Path>, os: Os) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = given.map(Path::to_path_buf).into_iter().collect();
    v.extend(place::candidates_here(os));
    v
}

/// The invoking user's unit (`sudo` keeps `$SUDO_USER`), if they installed one: do they linger, does
/// their manager run?
fn user_unit(root: &Path) -> Option<UserUnit> {
    let name = std::env::var("SUDO_USER").ok().filter(|u| !u.is_empty())?;
    let home = user::home_of(&name)?;
    if !home
        .join(".config/systemd/user/pigsty-dns.service")
        .is_file()
    {
        return None;
    }
    let linger = under(root, &format!("/var/lib/systemd/linger/{name}")).exists();
    let uid = std::env::var("SUDO_UID")
        .ok()
        .and_then(|u| u.parse::<u32>().ok());
    let manager_running =
        uid.is_some_and(|u| under(root, &format!("/run/user/{u}/systemd/private")).exists());
    Some(UserUnit {
        user: name,
        linger,
        manager_running,
    })
}

/// Everything known about a daemon that does not answer at `server`.
pub fn daemon_facts(ctx: &mut Ctx<'_>, server: SocketAddr) -> DaemonFacts {
    let cands = candidates(ctx.state_dir.as_deref(), ctx.facts.os);
    let last = lifecycle::last_status(&cands, server);
    let unit = if ctx.facts.systemd_booted {
        let out = ctx.runner.run(&argv(&[
            "systemctl",
            "show",
            "pigsty-dns.service",
            "-p",
            UNIT_PROPS,
        ]));
        out.ok()
            .then(|| lifecycle::unit_state(&out.stdout))
            .flatten()
    } else {
        None
    };
    let (state_dir, status) = match last {
        Some((d, s)) => (Some(d), Some(s)),
        None => (ctx.state_dir.clone(), None),
    };
    DaemonFacts {
        server: Some(server),
        pid_alive: status.as_ref().is_some_and(|s| user::pid_alive(s.pid)),
        state_dir,
        status,
        unit,
        user_unit: user_unit(&ctx.root),
    }
}

/// The resolved-link route's link as `ip addr show dev LINK` shows it.
pub fn link_state(runner: &mut dyn Runner, link: &str, cidr: &str) -> LinkState {
    let out = runner.run(&argv(&["ip", "addr", "show", "dev", link]));
    lifecycle::link_state(out.ok(), &out.stdout, &out.stderr, cidr)
}

/// Which other resolved scopes claim `zones` (Err: `resolvectl domain` could not say).
pub fn resolved_claims<Z: AsRef<str>>(
    runner: &mut dyn Runner,
    zones: &[Z],
    ours: &str,
) -> Result<(Vec<Claim>, Vec<String>), String> {
    let out = runner.run(&argv(&["resolvectl", "--no-pager", "domain"]));
    if !out.ok() {
        return Err(format!("resolvectl domain: {}", out.summary()));
    }
    Ok((
        lifecycle::claims(&out.stdout, zones, ours),
        lifecycle::default_route_links(&out.stdout),
    ))
}

/// Other resolved scopes that claim `zones`, as install's claimants (none when `resolvectl domain`
/// cannot say: the scope check after apply still sees a route that does not work).
pub fn resolved_claimants(runner: &mut dyn Runner, zones: &[&str], ours: &str) -> Vec<Claim> {
    resolved_claims(runner, zones, ours)
        .map(|(claims, _)| claims)
        .unwrap_or_default()
}
