//! The life of an installed route after `route install` returned (issue 26): what `route status`
//! makes of a daemon that stopped, crashed or never ran, a route link that lost itself or its
//! address, another link (a VPN) that claims the zone or its reverse zone, a damaged journal, a file
//! changed by hand — each as a verdict and the one command that fixes it. Pure: the callers run the
//! commands and read the files; this file only classifies what they found.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use super::claim::{Claim, Scope};
use crate::store::status_file::{ServerState, Status};

/// A verdict and the one command (or action) that fixes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub verdict: String,
    pub next: String,
}

fn finding(verdict: impl Into<String>, next: impl Into<String>) -> Finding {
    Finding {
        verdict: verdict.into(),
        next: next.into(),
    }
}

// ---------------------------------------------------------------- the daemon

pub use crate::sys::systemd::{SHOW_PROPS as UNIT_PROPS, UnitState};

/// The unit's state from `systemctl show`; `None` when systemd has no such unit.
pub fn unit_state(show: &str) -> Option<UnitState> {
    Some(crate::sys::systemd::parse_show(show)).filter(UnitState::is_loaded)
}

/// A user unit (`~USER/.config/systemd/user/pigsty-dns.service`): whether the user lingers, and
/// whether their service manager runs now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserUnit {
    pub user: String,
    pub linger: bool,
    pub manager_running: bool,
}

/// What is known about a daemon that does not answer at `server`.
#[derive(Debug, Clone, Default)]
pub struct DaemonFacts {
    pub server: Option<SocketAddr>,
    /// The state dir whose status file names `server` (or the one given), and that file.
    pub state_dir: Option<PathBuf>,
    pub status: Option<Status>,
    /// The status file's pid is alive.
    pub pid_alive: bool,
    /// The system unit `pigsty-dns.service`, when systemd knows it.
    pub unit: Option<UnitState>,
    pub user_unit: Option<UserUnit>,
}

/// Why the daemon does not answer, and the one command that brings it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DownKind {
    /// It ran and exited cleanly (`systemctl stop`, SIGTERM).
    Stopped,
    /// It died without a clean stop (SIGKILL, a crash, a failed unit).
    Crashed,
    /// Nothing shows it ever ran.
    NeverStarted,
    /// A user unit whose user logged out and does not linger.
    UserLoggedOut,
    /// It runs, but not at the route's address, or does not answer there.
    NotAnswering,
    /// Starting right now.
    Starting,
    /// No status file and no unit to say why.
    Unknown,
}

impl DownKind {
    pub fn word(self) -> &'static str {
        match self {
            DownKind::Stopped => "stopped",
            DownKind::Crashed => "crashed",
            DownKind::NeverStarted => "never started",
            DownKind::UserLoggedOut => "stopped at logout (user unit without linger)",
            DownKind::NotAnswering => "not answering",
            DownKind::Starting => "starting",
            DownKind::Unknown => "not answering",
        }
    }
}

const UNIT: &str = "pigsty-dns.service";

pub fn down_kind(f: &DaemonFacts) -> DownKind {
    if let Some(u) = &f.unit {
        match u.active.as_str() {
            "failed" => return DownKind::Crashed,
            "activating" | "reloading" => return DownKind::Starting,
            "inactive" if !u.ever_started => return DownKind::NeverStarted,
            "inactive" => return DownKind::Stopped,
            _ => {}
        }
    }
    if let Some(uu) = &f.user_unit
        && !uu.linger
        && !uu.manager_running
    {
        return DownKind::UserLoggedOut;
    }
    match &f.status {
        None if f.state_dir.is_some() => DownKind::NeverStarted,
        None => DownKind::Unknown,
        Some(s) if s.state == ServerState::Stopped => DownKind::Stopped,
        Some(_) if !f.pid_alive => DownKind::Crashed,
        Some(_) => DownKind::NotAnswering,
    }
}

/// The verdict and the fix for a daemon that does not answer at `server` (`why`: the probe's error).
pub fn daemon_down(f: &DaemonFacts, server: SocketAddr, why: &str) -> Finding {
    let kind = down_kind(f);
    let dir = f
        .state_dir
        .as_deref()
        .map(|d| {
            format!(
                " --state-dir {}",
                crate::output::text::shell_quote(&d.display().to_string())
            )
        })
        .unwrap_or_default();
    let serve = format!("pigsty-dns serve --listen {server}{dir}");
    let base = format!(
        "{} at {server} ({why}); zone lookups fail (SERVFAIL) and nothing leaks: the route stays",
        kind.word()
    );
    let detail = match (&f.status, kind) {
        (Some(s), DownKind::Stopped) => format!(", last started {} (pid {})", s.started, s.pid),
        (Some(s), DownKind::Crashed) if f.unit.is_none() => format!(
            ": its status file still says running, but pid {} is gone (killed or crashed, no clean stop)",
            s.pid
        ),
        (Some(s), DownKind::NotAnswering) => format!(
            ": pid {} runs, listening on {}",
            s.pid,
            s.listen
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        (None, DownKind::NeverStarted) => match &f.state_dir {
            Some(d) => format!(": no status file in {}", d.display()),
            None => String::new(),
        },
        (_, DownKind::Unknown) => {
            ": no status file says why (give --state-dir DIR, the daemon's, to tell stopped from crashed)".into()
        }
        _ => String::new(),
    };
    let unit_note = f
        .unit
        .as_ref()
        .map(|u| format!(" [{UNIT}: {}/{}, result {}]", u.active, u.sub, u.result))
        .unwrap_or_default();
    let next = match (kind, &f.unit, &f.user_unit) {
        (DownKind::Starting, _, _) => format!("wait for it: systemctl status {UNIT}"),
        (DownKind::Crashed, Some(_), _) => {
            format!("sudo systemctl restart {UNIT} (why it died: journalctl -u {UNIT} -n 50)")
        }
        (DownKind::NeverStarted, Some(u), _) if u.enabled != "enabled" => {
            format!("sudo systemctl enable --now {UNIT}")
        }
        (DownKind::NotAnswering, Some(_), _) => format!(
            "systemctl cat {UNIT} must show --listen {server}; then sudo systemctl restart {UNIT}"
        ),
        (_, Some(_), _) => format!("sudo systemctl start {UNIT}"),
        (DownKind::UserLoggedOut, None, Some(uu)) => format!(
            "sudo loginctl enable-linger {} (the user unit then runs without a login)",
            uu.user
        ),
        (DownKind::NotAnswering, None, _) => format!(
            "the running pigsty-dns does not serve {server}: restart it with --listen {server}"
        ),
        (_, None, Some(_)) => format!("systemctl --user start {UNIT}"),
        (_, None, None) => format!("start it: {serve} (or pigsty-dns service install)"),
    };
    finding(format!("{base}{detail}{unit_note}"), next)
}

/// The state dirs to look in for the status file of a daemon at `server`, running or not: the one
/// given first, then the places `route` looks for a running daemon.
pub fn last_status(cands: &[PathBuf], server: SocketAddr) -> Option<(PathBuf, Status)> {
    let named = |d: &PathBuf| {
        crate::store::status_file::read(d)
            .filter(|s| s.listen.contains(&server))
            .map(|s| (d.clone(), s))
    };
    cands.iter().find_map(named)
}

// ---------------------------------------------------------------- the route's link

/// What `ip addr show dev LINK` (exit status, stdout, stderr) says of the resolved-link route's link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkState {
    Ok,
    Gone,
    Down,
    NoAddress,
    /// `ip` did not say (not installed, another error): not judged here.
    Unknown(String),
}

pub fn link_state(ok: bool, stdout: &str, stderr: &str, cidr: &str) -> LinkState {
    if !ok {
        if stderr.contains("does not exist") || stderr.contains("Cannot find device") {
            return LinkState::Gone;
        }
        return LinkState::Unknown(stderr.trim().chars().take(120).collect());
    }
    let mut lines = stdout.lines();
    let Some(head) = lines.next() else {
        return LinkState::Unknown("ip printed nothing".into());
    };
    let flags = head
        .split_once('<')
        .and_then(|(_, r)| r.split_once('>'))
        .map(|(f, _)| f)
        .unwrap_or("");
    if !flags.split(',').any(|f| f == "UP") {
        return LinkState::Down;
    }
    let has = lines.any(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        w.first() == Some(&"inet") && w.get(1) == Some(&cidr)
    });
    if has {
        LinkState::Ok
    } else {
        LinkState::NoAddress
    }
}

/// The link item's verdict for a state other than Ok; `repair` is the exact command that re-creates
/// it (an idempotent `route install`).
pub fn link_finding(
    state: &LinkState,
    link: &str,
    cidr: &str,
    zones: &str,
    repair: &str,
) -> Option<Finding> {
    let leak = format!(
        "resolved has no DNS scope for {zones} then, so their names leak to the default upstream"
    );
    let v = match state {
        LinkState::Ok | LinkState::Unknown(_) => return None,
        LinkState::Gone => format!("{link} is gone (deleted?): {leak}"),
        LinkState::Down => format!("{link} is down: {leak}"),
        LinkState::NoAddress => format!("{link} has lost its address {cidr}: {leak}"),
    };
    Some(finding(v, repair))
}

// ---------------------------------------------------------------- other links that claim the zone

/// Who holds a line of `resolvectl domain` output: `Global`, `Link 3 (vpn0)`, `Delegate corp`.
fn owner_of(label: &str) -> Option<(String, Option<String>)> {
    let label = label.trim();
    if label == "Global" {
        return Some(("the global settings".into(), None));
    }
    if let Some(rest) = label.strip_prefix("Link ") {
        let name = rest.split_once('(')?.1.strip_suffix(')')?;
        return Some((format!("link {name}"), Some(name.to_string())));
    }
    label
        .strip_prefix("Delegate ")
        .map(|d| (format!("delegate {}", d.trim()), None))
}

/// A routing domain (`~corp.pigsty.test.`) folded as configd's domains are.
fn norm(d: &str) -> String {
    super::dnsinfo::norm(d.trim_start_matches('~'))
}

/// The scopes of `resolvectl domain` output that claim one of `zones` or a subdomain of one (a `~.`
/// default route is no claim: resolved's longest match still picks our scope). `ours` is the owner
/// label of our own route (`link pigsty-dns0`, `delegate pigsty-dns`, `the global settings`).
pub fn claims<Z: AsRef<str>>(domain_out: &str, zones: &[Z], ours: &str) -> Vec<Claim> {
    let mut v = Vec::new();
    for line in domain_out.lines() {
        let Some((label, rest)) = line.split_once(':') else {
            continue;
        };
        let Some((owner, link)) = owner_of(label) else {
            continue;
        };
        if owner == ours {
            continue;
        }
        for d in rest.split_whitespace() {
            let n = norm(d);
            for z in zones {
                let z = norm(z.as_ref());
                if crate::dns::name::in_zone(&n, &z) {
                    let sub = n != z;
                    v.push(Claim::of_scope(Scope {
                        owner: owner.clone(),
                        link: link.clone(),
                        domain: d.to_string(),
                        zone: z.clone(),
                        subdomain: sub,
                    }));
                }
            }
        }
    }
    v
}

/// The links of `resolvectl domain` output routing `~.` (a VPN's default route): shown, not refused.
pub fn default_route_links(domain_out: &str) -> Vec<String> {
    domain_out
        .lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(_, r)| r.split_whitespace().any(|d| d == "~."))
        .filter_map(|(label, _)| owner_of(label).map(|(o, _)| o))
        .collect()
}

// ---------------------------------------------------------------- the journal

/// What is wrong with the journal file itself, before its content is trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JournalDamage {
    /// Owned by neither root nor the user reading it.
    Owner(u32),
    /// Writable by group or others: anyone could rewrite what uninstall removes.
    Mode(u32),
    Truncated(String),
    NotJson(String),
    NotAJournal(String),
}

/// Only root (or the reading user, for unprivileged test roots) may own it, and nobody else may
/// write it: uninstall deletes what it lists.
pub fn journal_meta(uid: u32, mode: u32, euid: u32) -> Option<JournalDamage> {
    if uid != 0 && uid != euid {
        return Some(JournalDamage::Owner(uid));
    }
    if mode & 0o022 != 0 {
        return Some(JournalDamage::Mode(mode & 0o7777));
    }
    None
}

pub fn journal_parse_error(e: &serde_json::Error) -> JournalDamage {
    use serde_json::error::Category;
    let s = e.to_string();
    match e.classify() {
        Category::Eof => JournalDamage::Truncated(s),
        Category::Syntax | Category::Io => JournalDamage::NotJson(s),
        Category::Data => JournalDamage::NotAJournal(s),
    }
}

pub fn journal_message(path: &Path, d: &JournalDamage) -> String {
    let p = path.display();
    match d {
        JournalDamage::Owner(uid) => format!(
            "{p} is owned by uid {uid}, not root: not trusted (uninstall removes what it lists)"
        ),
        JournalDamage::Mode(m) => format!(
            "{p} has mode {m:04o}: writable by others, not trusted (uninstall removes what it lists)"
        ),
        JournalDamage::Truncated(e) => format!("{p} is truncated (cut short: {e})"),
        JournalDamage::NotJson(e) => format!("{p} is not JSON ({e})"),
        JournalDamage::NotAJournal(e) => format!("{p} is JSON but not a route journal ({e})"),
    }
}

/// What to do about a damaged journal: never guess from it; the files' own markers remain.
pub fn journal_next(path: &Path, d: &JournalDamage) -> String {
    let p = path.display();
    match d {
        JournalDamage::Owner(_) | JournalDamage::Mode(_) => format!(
            "check who changed it; if its content is right: sudo chown root:root {p} && sudo chmod 0644 {p}; else sudo rm {p} and pigsty-dns route uninstall finds the files by their marker"
        ),
        _ => format!(
            "sudo rm {p}: pigsty-dns route uninstall then finds the files by their ownership marker (route install writes a new journal)"
        ),
    }
}

// ---------------------------------------------------------------- owned files

/// One journal file as found now: None when it is as written.
pub fn file_drift(path: &str, want_sha: &str, now: Option<&[u8]>) -> Option<String> {
    let b = match now {
        None => return Some(format!("{path} is missing")),
        Some(b) => b,
    };
    if crate::digest::sha256_hex(b) == want_sha {
        return None;
    }
    let text = String::from_utf8_lossy(b);
    Some(match super::files::owned(&text) {
        Some(_) => format!("{path} changed by hand (uninstall leaves it)"),
        None => format!(
            "{path} changed by hand, its ownership marker gone (no longer pigsty-dns's; uninstall leaves it)"
        ),
    })
}

/// The drift item's fix: changed files are never removed, so they must be put back or moved away.
pub fn drift_next(drift: &[String], reinstall: &str) -> String {
    if drift.iter().any(|d| d.contains("changed by hand")) {
        format!(
            "undo the hand edit (or move the file away), then {reinstall}; uninstall never removes a changed file"
        )
    } else {
        format!(
            "an uninstall cut short: sudo pigsty-dns route uninstall --yes finishes it; else {reinstall} writes them again"
        )
    }
}

/// An install the journal shows interrupted (state `applying`): which of its files are in place.
pub fn partial_install(written: &[String], missing: &[String]) -> String {
    format!(
        "an install was interrupted (journal state applying): written {}; not written {}",
        list(written),
        list(missing)
    )
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

#[cfg(test)]
mod tests;
