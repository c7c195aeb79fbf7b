//! The status file a running server rewrites atomically in its state dir, the address clients should
//! ask, and the `status` command, which cross-checks the file with a live SOA probe.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::net::SocketAddr;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::commands::{JSON_FORMAT, to_json};
use crate::defaults::LISTEN_STR as DEFAULT_LISTEN;
use crate::error::{AppError, Class};
use crate::name::Zone;
use crate::probe::{self, ProbeError, SoaAnswer};
use crate::status_file::CountersSnapshot;
use crate::transport::Transport;

/// Version of the status file format.
pub const FORMAT: u32 = 1;
pub const FILE: &str = "status.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    pub format: u32,
    /// `running`, or `stopped` after a clean exit. A killed server leaves `running` with a dead pid.
    pub state: String,
    pub pid: u32,
    pub started: String,
    pub started_unix: u64,
    pub updated: String,
    /// The addresses actually bound (UDP and TCP on each).
    pub listen: Vec<SocketAddr>,
    pub zone: String,
    /// The live serial; 0 when no generation is served yet.
    pub serial: u32,
    pub record_digest: Option<String>,
    pub records: usize,
    /// The generation file served.
    pub generation: Option<String>,
    pub loaded_at: Option<String>,
    /// The input file (or rollback) the live generation was made from.
    pub loaded_from: Option<String>,
    /// The file `serve --follow` watches.
    pub follow: Option<String>,
    /// Why the newest generation or the followed file is not live, if it is not.
    pub last_error: Option<String>,
    pub counters: CountersSnapshot,
}

/// temp file (0600) → rename: a reader sees the old or the new status, never half of one.
pub fn write(state_dir: &Path, s: &Status) -> std::io::Result<()> {
    let tmp = state_dir.join(format!(".{FILE}.tmp-{}", std::process::id()));
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(to_json(s).as_bytes())?;
    drop(f);
    fs::rename(&tmp, state_dir.join(FILE))
}

pub fn read(state_dir: &Path) -> Option<Status> {
    let bytes = fs::read(state_dir.join(FILE)).ok()?;
    serde_json::from_slice::<Status>(&bytes)
        .ok()
        .filter(|s| s.format == FORMAT)
}

pub fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists; it sends nothing.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

/// A status file of a server that is still alive.
pub fn running(state_dir: &Path) -> Option<Status> {
    read(state_dir).filter(|s| s.state == "running" && pid_alive(s.pid))
}

/// The address a client asks: `--server`, else what this state dir's server bound (running, or last
/// running), else `$PIGSTY_DNS_LISTEN`, else 127.0.0.1:5353.
pub fn server_addr(flag: Option<SocketAddr>, state_dir: Option<&Path>) -> SocketAddr {
    if let Some(a) = flag {
        return a;
    }
    if let Some(a) = state_dir
        .and_then(read)
        .and_then(|s| s.listen.first().copied())
    {
        return a;
    }
    std::env::var("PIGSTY_DNS_LISTEN")
        .ok()
        .and_then(|v| v.split(',').next().and_then(|a| a.trim().parse().ok()))
        .or_else(|| DEFAULT_LISTEN.parse().ok())
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 5353)))
}

/// A client runtime that could not start is a runtime error of the command.
fn block_on<F: std::future::Future>(f: F) -> Result<F::Output, AppError> {
    probe::block_on(f).map_err(|e| AppError::new(Class::Runtime, e.to_string(), "try again"))
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
    block_on(async {
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
}

/// `pigsty-dns status`: the status file, cross-checked with a live SOA probe over UDP and TCP.
pub fn command(
    state_dir: &Path,
    server: Option<SocketAddr>,
    zone: &Zone,
    json: bool,
) -> Result<String, AppError> {
    let file = read(state_dir);
    let alive = file
        .as_ref()
        .is_some_and(|s| s.state == "running" && pid_alive(s.pid));
    let addr = server_addr(server, Some(state_dir));
    let zone = file
        .as_ref()
        .and_then(|s| Zone::parse(&s.zone).ok())
        .unwrap_or_else(|| zone.clone());
    let (udp, tcp) = block_on(async {
        let t = Duration::from_millis(1500);
        (
            probe::soa(addr, Transport::Udp, &zone, t).await,
            probe::soa(addr, Transport::Tcp, &zone, t).await,
        )
    })?;
    let answering = udp.is_ok() && tcp.is_ok();
    let verdict = match (&file, alive, answering) {
        (Some(s), true, true) if udp.as_ref().is_ok_and(|a| a.serial == s.serial) => "running",
        (Some(_), true, true) => "running, but the probe saw another serial than the status file",
        (_, false, true) => {
            "something answers at this address, but no pigsty-dns serve of this state dir is running"
        }
        (Some(_), true, false) => "running, but not answering the zone SOA",
        _ => "not running",
    };
    let probe_json = |r: &Result<SoaAnswer, ProbeError>| match r {
        Ok(a) => json!({"serial": a.serial, "authoritative": a.authoritative}),
        Err(e) => json!({"error": e.to_string()}),
    };
    if json {
        let text = to_json(&json!({
            "format": JSON_FORMAT,
            "verdict": verdict,
            "running": alive && answering,
            "state_dir": state_dir.display().to_string(),
            "server": addr.to_string(),
            "probe": {"udp": probe_json(&udp), "tcp": probe_json(&tcp)},
            "status": file,
        }));
        return if alive && answering {
            Ok(text)
        } else {
            Err(not_running(verdict, addr, Some(text)))
        };
    }
    let mut out = format!("pigsty-dns: {verdict}\n");
    let probe_text = |r: &Result<SoaAnswer, ProbeError>| match r {
        Ok(a) => format!("serial {}", a.serial),
        Err(e) => e.to_string(),
    };
    out.push_str(&format!(
        "probe {addr}: UDP {}; TCP {}\n",
        probe_text(&udp),
        probe_text(&tcp)
    ));
    if let Some(s) = &file {
        let uptime = now_unix().saturating_sub(s.started_unix);
        out.push_str(&format!(
            "status file ({}, pid {}, updated {}):\n  zone {}  serial {}  records {}  record digest {}\n",
            s.state,
            s.pid,
            s.updated,
            s.zone,
            s.serial,
            s.records,
            s.record_digest.as_deref().unwrap_or("-")
        ));
        out.push_str(&format!(
            "  listen {}  uptime {uptime} s\n  generation {}\n  loaded {} from {}\n",
            s.listen
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            s.generation
                .as_deref()
                .unwrap_or("none (serving only the apex)"),
            s.loaded_at.as_deref().unwrap_or("-"),
            s.loaded_from.as_deref().unwrap_or("-"),
        ));
        if let Some(f) = &s.follow {
            out.push_str(&format!("  following {f}\n"));
        }
        out.push_str(&format!(
            "  last error: {}\n",
            s.last_error.as_deref().unwrap_or("none")
        ));
        let c = &s.counters;
        out.push_str(&format!(
            "  answers: noerror {} nxdomain {} refused {} formerr {} notimp {} servfail {} badvers {} other {}; dropped {} truncated {}; tcp accepted {} refused {}\n",
            c.noerror, c.nxdomain, c.refused, c.formerr, c.notimp, c.servfail, c.badvers, c.other, c.dropped, c.truncated, c.tcp_accepted, c.tcp_refused
        ));
    } else {
        out.push_str(&format!("no status file in {}\n", state_dir.display()));
    }
    if alive && answering {
        Ok(out)
    } else {
        Err(not_running(verdict, addr, Some(out)))
    }
}

/// The report still goes to stdout; the error says what to do.
fn not_running(verdict: &str, addr: SocketAddr, report: Option<String>) -> AppError {
    let mut e = AppError::new(
        Class::Runtime,
        format!("pigsty-dns at {addr}: {verdict}"),
        "start it with pigsty-dns serve (or check --server / --state-dir)",
    );
    e.report = report;
    e
}

pub fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
