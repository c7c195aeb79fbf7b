//! `pigsty-dns load FILE`: validate, store as the next serial (or say `unchanged`), then confirm with the
//! state dir's server that the new serial is live.

use std::net::SocketAddr;
use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

use crate::dns::name::{Zone, Zones};
use crate::dns::probe::{self, ProbeError, SoaAnswer};
use crate::dns::transport::Transport;
use crate::error::{AppError, Class};
use crate::input::inventory::View;
use crate::input::records::{Change, Diff};
use crate::input::{self, ViewInfo};
use crate::output::Report;
use crate::route::visible;
use crate::store::status_file;
use crate::store::{self, StateDir};
use crate::zone::generation::{self, DiffBase, Generation};

use super::report;

pub struct LoadOptions<'a> {
    pub path: &'a Path,
    pub zone: &'a Zones,
    pub state_dir: Option<&'a Path>,
    pub ttl: u32,
    pub negative_ttl: u32,
    /// How the file is read (`--identity-only`, `--entry`).
    pub reading: crate::input::inventory::Reading,
    pub dry_run: bool,
    /// `--server`: the server to confirm with.
    pub server: Option<SocketAddr>,
    /// `--require-live`: exit 5 unless a server serves the new serial.
    pub require_live: bool,
    /// `--wait-visible`: poll this host's native path for every changed name (route/visible.rs).
    pub wait_visible: bool,
}

/// What a store hands on: the report, the generation when one was stored, and the names it changed
/// (for `--wait-visible`; empty without it).
type Stored = (Report, Option<Rc<Generation>>, Vec<Change>);

/// Validates and stores.
pub fn store(o: &LoadOptions<'_>) -> Result<Stored, AppError> {
    check_ttls(o.ttl, o.negative_ttl)?;
    let (set, input, info) = input::read_as(o.path, o.zone, &o.reading)?;
    let dir = StateDir::open(&store::resolve(o.state_dir)?, !o.dry_run)?;
    let outcome = dir.commit(set, o.ttl, o.negative_ttl, input, o.dry_run)?;
    let changes = if o.wait_visible {
        changed_names(&outcome)
    } else {
        vec![]
    };
    let (mut report, stored) = report::outcome(outcome, dir.root());
    name_the_view(&mut report, &info);
    note_passed_over(&mut report, &dir.passed_over()?);
    Ok((report, stored, changes))
}

/// The names a store changed, as `--wait-visible` polls them, taken from the typed outcome (not from
/// the report, whose JSON is tens of megabytes at 100,000 names).
fn changed_names(outcome: &store::Outcome) -> Vec<Change> {
    let (store::Outcome::Stored {
        generation,
        previous,
        ..
    }
    | store::Outcome::WouldStore {
        generation,
        previous,
    }) = outcome
    else {
        return vec![];
    };
    let diff = Diff::of(
        previous.iter().flat_map(DiffBase::records),
        generation
            .records
            .iter()
            .map(|r| (r.name.as_str(), r.address)),
    );
    visible::changes(&diff)
}

/// A Pigsty config's view is named first, with its notes (a projection's output stays as it was).
fn name_the_view(report: &mut Report, info: &ViewInfo) {
    if info.view != View::HostAccess {
        return;
    }
    let mut head = format!("view: {}\n", info.view.as_str());
    for n in &info.notes {
        head.push_str(&format!(
            "note: {}\n",
            crate::output::text::shown_message(n)
        ));
    }
    report.text.insert_str(0, &head);
    report.set_json_fields(vec![
        ("view", serde_json::Value::from(info.view.as_str())),
        ("notes", serde_json::Value::from(info.notes.clone())),
    ]);
}

/// Names each file that did not set the serial (never served: junk, forged, a jump past RFC 1982's
/// bound), why, and the command that fixes it.
fn note_passed_over(report: &mut Report, files: &[store::PassedOver]) {
    if files.is_empty() {
        return;
    }
    let mut rows = Vec::new();
    for f in files {
        report.text.push_str(&format!(
            "note: generation file {} {}; it is never served and did not set the serial\nnext: {}\n",
            crate::output::text::path(&f.path),
            f.reason,
            f.fix()
        ));
        rows.push(serde_json::json!({
            "serial": f.serial,
            "path": f.path.display().to_string(),
            "reason": f.reason,
            "next": f.fix(),
        }));
    }
    report.set_json_fields(vec![("passed_over", serde_json::Value::from(rows))]);
}

/// The whole command: store, then confirm live.
pub fn run(o: &LoadOptions<'_>) -> Result<Report, AppError> {
    let (report, stored, changes) = store(o)?;
    let Some(g) = stored else { return Ok(report) };
    let root = store::resolve(o.state_dir)?;
    let addr = status_file::server_addr(o.server, Some(&root));
    // Without --server, only a server recorded as running for this state dir can serve it.
    let known = o.server.is_some() || status_file::running(&root).is_some();
    let (mut report, live) = confirm_live(
        report,
        &g,
        addr,
        &root,
        o.zone.first(),
        known,
        o.require_live,
    )?;
    visible::after_live(&mut report, &g, live);
    if o.wait_visible {
        return visible::wait_visible(report, &g, &changes);
    }
    Ok(report)
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
    /// The server answers with a newer serial: another load came after this one.
    Superseded(u32),
    /// The server answers with this serial, but its status file reports other records (this record
    /// digest): the serial was reused, and what is served is not what was stored.
    OtherRecords(String),
    /// A server answers, but not with this zone's SOA (it serves another zone).
    NotThisZone(String),
}

/// The generation `load` waits for.
pub struct Wanted<'a> {
    pub serial: u32,
    pub record_digest: &'a str,
    /// The state dir whose server's status file tells the record digest it serves.
    pub state_dir: Option<&'a Path>,
}

/// What the state dir's running server at `addr` says it serves (serial, record digest), if that is
/// the server being probed.
fn reported(state_dir: Option<&Path>, addr: SocketAddr) -> Option<(u32, Option<String>)> {
    status_file::running(state_dir?)
        .filter(|s| s.listen.contains(&addr))
        .map(|s| (s.serial, s.record_digest))
}

/// Asks the server for the zone SOA until it serves exactly the wanted serial — and, when its status
/// file is at hand, the wanted record digest — for at most `budget`.
pub fn wait_live(
    addr: SocketAddr,
    zone: &Zone,
    want: &Wanted<'_>,
    budget: Duration,
) -> Result<Liveness, AppError> {
    probe::block_on(async {
        let deadline = tokio::time::Instant::now() + budget;
        let mut last = None;
        // A small swap takes about a millisecond, a 100,000-name one about a hundred: ask again after
        // 1 ms, then back off by half each time up to 25 ms (a probe costs the server microseconds).
        let mut pause = Duration::from_millis(1);
        loop {
            match probe::soa(addr, Transport::Udp, zone, Duration::from_millis(700)).await {
                Ok(SoaAnswer { serial: s, .. }) if s == want.serial => {
                    match reported(want.state_dir, addr) {
                        // No status file of this server: the serial is all there is to compare.
                        None => return Liveness::Live,
                        Some((rs, Some(d))) if rs == s && d == want.record_digest => {
                            return Liveness::Live;
                        }
                        Some((rs, d)) if rs == s => {
                            return Liveness::OtherRecords(d.unwrap_or_else(|| "none".into()));
                        }
                        // The status file lags the swap by a moment.
                        Some(_) => last = Some(Liveness::Stale(s)),
                    }
                }
                Ok(SoaAnswer { serial: s, .. }) if s > want.serial => {
                    return Liveness::Superseded(s);
                }
                Ok(SoaAnswer { serial: s, .. }) => last = Some(Liveness::Stale(s)),
                Err(ProbeError::Answered(refusal)) => last = Some(Liveness::NotThisZone(refusal)),
                Err(ProbeError::Unreachable(e)) if last.is_none() => return Liveness::NoServer(e),
                Err(ProbeError::Unreachable(_)) => {}
            }
            if tokio::time::Instant::now() >= deadline {
                return last.unwrap_or(Liveness::Stale(0));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 3 / 2).min(Duration::from_millis(25));
        }
    })
    .map_err(|e| AppError::new(Class::Runtime, e.to_string(), "try again"))
}

/// After a store: ask the server until it serves the new serial (bounded), and say what happened;
/// the report, and whether the serial is live.
fn confirm_live(
    mut report: Report,
    g: &Generation,
    addr: SocketAddr,
    root: &Path,
    zone: &Zone,
    probe: bool,
    require_live: bool,
) -> Result<(Report, bool), AppError> {
    let liveness = if probe {
        let want = Wanted {
            serial: g.serial,
            record_digest: &g.record_digest,
            state_dir: Some(root),
        };
        wait_live(addr, zone, &want, Duration::from_secs(5))?
    } else {
        Liveness::NoServer(format!(
            "no pigsty-dns serve is running for {}",
            crate::output::text::path(root)
        ))
    };
    let (word, line) = describe(&liveness, g.serial, addr, zone);
    report.set_json_fields(vec![
        ("live", serde_json::Value::from(word)),
        ("server", serde_json::Value::from(addr.to_string())),
    ]);
    report.text.push_str(&line);
    match liveness {
        Liveness::Live => Ok((report, true)),
        Liveness::NoServer(why) if require_live => Err(AppError::new(
            Class::Partial,
            format!("serial {} is stored but not live: {why}", g.serial),
            "start it: pigsty-dns serve (or give --server)",
        )
        .with_report(report)),
        Liveness::NoServer(_) => Ok((report, false)),
        _ => Err(not_live(&liveness, g.serial, addr, root, zone).with_report(report)),
    }
}

/// The `live` word and the line `load` prints for `liveness`.
fn describe(
    liveness: &Liveness,
    serial: u32,
    addr: SocketAddr,
    zone: &Zone,
) -> (&'static str, String) {
    match liveness {
        Liveness::Live => ("live", format!("live (serial {}) at {addr}\n", serial)),
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
        Liveness::Superseded(seen) => (
            "superseded",
            format!("the server at {addr} already serves a newer serial, {seen}\n"),
        ),
        Liveness::OtherRecords(digest) => (
            "other-records",
            format!(
                "the server at {addr} serves serial {} with other records (record digest {digest})\n",
                serial
            ),
        ),
    }
}

/// The error of a store the server at `addr` does not serve (stale, superseded, other records or
/// another zone), with the reason the server gave.
fn not_live(
    liveness: &Liveness,
    serial: u32,
    addr: SocketAddr,
    root: &Path,
    zone: &Zone,
) -> AppError {
    let still = match &liveness {
        Liveness::Stale(seen) => format!("still serves serial {seen}"),
        Liveness::Superseded(seen) => format!("serves a newer serial, {seen}"),
        Liveness::OtherRecords(d) => format!("serves other records (record digest {d})"),
        _ => format!("does not serve zone {zone}"),
    };
    let reason = match &liveness {
        Liveness::Superseded(_) => "another load stored a newer generation after this one".into(),
        Liveness::OtherRecords(_) => {
            "the serial was used twice (was the state dir replaced under a running server?)".into()
        }
        _ => status_file::read(root)
            .and_then(|s| s.last_error)
            .unwrap_or_else(|| {
                "the server gave no reason (is it serving another state dir?)".into()
            }),
    };
    AppError::new(
        Class::Partial,
        format!("serial {serial} is stored, but the server at {addr} {still}: {reason}"),
        "see pigsty-dns status; fix the cause and load again",
    )
}
