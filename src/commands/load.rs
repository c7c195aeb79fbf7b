//! `pigsty-dns load FILE`: validate, store as the next serial (or say `unchanged`), then confirm with the
//! state dir's server that the new serial is live.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use crate::error::{AppError, Class};
use crate::generation::{self, Generation};
use crate::input;
use crate::name::Zone;
use crate::output::Report;
use crate::probe::{self, ProbeError, SoaAnswer};
use crate::status_file;
use crate::store::{self, StateDir};
use crate::transport::Transport;

use super::report;

pub struct LoadOptions<'a> {
    pub path: &'a Path,
    pub zone: &'a Zone,
    pub state_dir: Option<&'a Path>,
    pub ttl: u32,
    pub negative_ttl: u32,
    pub dry_run: bool,
    /// `--server`: the server to confirm with.
    pub server: Option<SocketAddr>,
    /// `--require-live`: exit 5 unless a server serves the new serial.
    pub require_live: bool,
}

/// Validates and stores; the report, and the generation when one was stored.
pub fn store(o: &LoadOptions<'_>) -> Result<(Report, Option<Generation>), AppError> {
    check_ttls(o.ttl, o.negative_ttl)?;
    let (set, input) = input::read(o.path, o.zone)?;
    let dir = StateDir::open(&store::resolve(o.state_dir)?, !o.dry_run)?;
    let outcome = dir.commit(&set, o.ttl, o.negative_ttl, input, o.dry_run)?;
    Ok(report::outcome(&outcome, dir.root()))
}

/// The whole command: store, then confirm live.
pub fn run(o: &LoadOptions<'_>) -> Result<Report, AppError> {
    let (report, stored) = store(o)?;
    let Some(g) = stored else { return Ok(report) };
    let root = store::resolve(o.state_dir)?;
    let addr = status_file::server_addr(o.server, Some(&root));
    // Without --server, only a server recorded as running for this state dir can serve it.
    let known = o.server.is_some() || status_file::running(&root).is_some();
    confirm_live(report, &g, addr, &root, o.zone, known, o.require_live)
}

fn check_ttls(ttl: u32, negative: u32) -> Result<(), AppError> {
    if ttl == 0 || ttl > generation::MAX_TTL {
        return Err(AppError::new(
            Class::Usage,
            format!("--ttl {ttl} is outside 1-{}", generation::MAX_TTL),
            "give a TTL in seconds, e.g. --ttl 30",
        ));
    }
    if negative > generation::MAX_TTL {
        return Err(AppError::new(
            Class::Usage,
            format!("--negative-ttl {negative} is above {}", generation::MAX_TTL),
            "give a TTL in seconds, e.g. --negative-ttl 5",
        ));
    }
    Ok(())
}

/// How `load` ended up, as seen from the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    Live,
    /// Nobody answered the zone SOA at the address.
    NoServer(String),
    /// The server answers, but with this older serial until the deadline.
    Stale(u32),
    /// A server answers, but not with this zone's SOA (it serves another zone).
    NotThisZone(String),
}

/// Asks the server for the zone SOA until its serial reaches `serial`, for at most `budget`.
pub fn wait_live(
    addr: SocketAddr,
    zone: &Zone,
    serial: u32,
    budget: Duration,
) -> Result<Liveness, AppError> {
    probe::block_on(async {
        let deadline = tokio::time::Instant::now() + budget;
        let mut last = None;
        loop {
            match probe::soa(addr, Transport::Udp, zone, Duration::from_millis(700)).await {
                Ok(SoaAnswer { serial: s, .. }) if s >= serial => return Liveness::Live,
                Ok(SoaAnswer { serial: s, .. }) => last = Some(Liveness::Stale(s)),
                Err(ProbeError::Answered(refusal)) => last = Some(Liveness::NotThisZone(refusal)),
                Err(ProbeError::Unreachable(e)) if last.is_none() => return Liveness::NoServer(e),
                Err(ProbeError::Unreachable(_)) => {}
            }
            if tokio::time::Instant::now() >= deadline {
                return last.unwrap_or(Liveness::Stale(0));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .map_err(|e| AppError::new(Class::Runtime, e.to_string(), "try again"))
}

/// After a store: ask the server until it serves the new serial (bounded), and say what happened.
fn confirm_live(
    mut report: Report,
    g: &Generation,
    addr: SocketAddr,
    root: &Path,
    zone: &Zone,
    probe: bool,
    require_live: bool,
) -> Result<Report, AppError> {
    let liveness = if probe {
        wait_live(addr, zone, g.serial, Duration::from_secs(5))?
    } else {
        Liveness::NoServer(format!(
            "no pigsty-dns serve is running for {}",
            root.display()
        ))
    };
    let (word, line) = match &liveness {
        Liveness::Live => ("live", format!("live (serial {}) at {addr}\n", g.serial)),
        Liveness::NoServer(why) => (
            "not-running",
            format!("stored; {why}: it will be served when pigsty-dns serve starts\n"),
        ),
        Liveness::Stale(seen) => (
            "stale",
            format!("the server at {addr} still serves serial {seen}\n"),
        ),
        Liveness::NotThisZone(why) => (
            "other-zone",
            format!("the server at {addr} does not serve zone {zone}: {why}\n"),
        ),
    };
    report.json["live"] = serde_json::Value::from(word);
    report.json["server"] = serde_json::Value::from(addr.to_string());
    report.text.push_str(&line);
    match liveness {
        Liveness::Live => Ok(report),
        Liveness::NoServer(why) if require_live => Err(AppError::new(
            Class::Partial,
            format!("serial {} is stored but not live: {why}", g.serial),
            "start it: pigsty-dns serve (or give --server)",
        )
        .with_report(report)),
        Liveness::NoServer(_) => Ok(report),
        Liveness::Stale(_) | Liveness::NotThisZone(_) => {
            let still = match &liveness {
                Liveness::Stale(seen) => format!("still serves serial {seen}"),
                _ => format!("does not serve zone {zone}"),
            };
            let reason = status_file::read(root)
                .and_then(|s| s.last_error)
                .unwrap_or_else(|| {
                    "the server gave no reason (is it serving another state dir?)".into()
                });
            Err(AppError::new(
                Class::Partial,
                format!(
                    "serial {} is stored, but the server at {addr} {still}: {reason}",
                    g.serial
                ),
                "see pigsty-dns status; fix the cause and load again",
            )
            .with_report(report))
        }
    }
}
