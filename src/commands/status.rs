//! `pigsty-dns status`: the running server's status file, cross-checked with a live SOA probe over UDP
//! and TCP of each served zone and of the reverse zone.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::dns::name::{Zone, Zones};
use crate::dns::probe::{self, ProbeError, SoaAnswer};
use crate::dns::transport::Transport;
use crate::error::{AppError, Class};
use crate::output::{FORMAT, Report};
use crate::store::status_file::{self, Status};

type Probe = Result<SoaAnswer, ProbeError>;

/// The SOA probes over UDP and TCP of the first zone, of every other served zone and (when the
/// status file names one) of the reverse zone.
struct Probes {
    udp: Probe,
    tcp: Probe,
    others: Vec<(Zone, Probe, Probe)>,
    reverse: Option<(Probe, Probe)>,
}

impl Probes {
    fn answering(&self) -> bool {
        self.udp.is_ok() && self.tcp.is_ok()
    }
}

/// The zones the status file says are served (else the `--zone` set).
fn served_zones(file: Option<&Status>, given: &Zones) -> Zones {
    file.and_then(|s| Zones::parse(&s.zones()).ok())
        .unwrap_or_else(|| given.clone())
}

/// `pigsty-dns status`: the status file, cross-checked with a live SOA probe over UDP and TCP.
pub fn run(state_dir: &Path, server: Option<SocketAddr>, zone: &Zones) -> Result<Report, AppError> {
    // A refused status file reads as none, and the report says why.
    let checked = status_file::read_checked(state_dir);
    let refused = checked.as_ref().err().cloned();
    let file = checked.ok().flatten();
    let alive = file.as_ref().is_some_and(Status::is_running);
    let addr = status_file::server_addr(server, Some(state_dir));
    let zones = served_zones(file.as_ref(), zone);
    // The reverse zone the status file names is probed too: both zones come from one generation.
    let reverse = file
        .as_ref()
        .filter(|_| alive)
        .and_then(|s| s.reverse_zone.as_deref())
        .and_then(|z| Zone::parse(z).ok());
    let probes = probe_all(addr, &zones, reverse.as_ref())?;
    let verdict = verdict(file.as_ref(), alive, &probes);
    // The served records stay in memory; only a new load can store them again.
    let live_file_gone = file
        .as_ref()
        .and_then(|s| s.generation.as_deref())
        .is_some_and(|g| !Path::new(g).exists());
    let json = json!({
            "format": FORMAT,
            "live_file_gone": live_file_gone,
            "verdict": verdict,
            "running": alive && probes.answering(),
            "state_dir": state_dir.display().to_string(),
            "server": addr.to_string(),
            "probe": {"udp": probe_json(&probes.udp), "tcp": probe_json(&probes.tcp)},
            "zone_probes": probes.others.iter().map(|(z, u, t)| json!({"zone": z.as_str(), "udp": probe_json(u), "tcp": probe_json(t)})).collect::<Vec<_>>(),
            "reverse_probe": probes.reverse.as_ref().map(|(u, t)| json!({"udp": probe_json(u), "tcp": probe_json(t)})),
            "status": file,
    });
    let mut json = json;
    // Only when refused: the report of a readable status file keeps its shape.
    if let Some(why) = &refused {
        json["status_file_refused"] = json!(why);
    }
    let mut out = format!("pigsty-dns: {verdict}\n");
    out.push_str(&probes_text(addr, reverse.as_ref(), &probes));
    match &file {
        Some(s) => out.push_str(&file_text(s, live_file_gone)),
        None => match &refused {
            Some(why) => out.push_str(&format!(
                "status file {} not read: it {why}\n",
                crate::output::text::shown(&crate::output::text::path(
                    &state_dir.join(status_file::FILE)
                ))
            )),
            None => out.push_str(&format!(
                "no status file in {}\n",
                crate::output::text::path(state_dir)
            )),
        },
    }
    let report = Report::new(out, json);
    if alive && probes.answering() {
        Ok(report)
    } else {
        Err(not_running(verdict, addr, report))
    }
}

fn probe_all(addr: SocketAddr, zones: &Zones, reverse: Option<&Zone>) -> Result<Probes, AppError> {
    probe::block_on(async {
        let t = Duration::from_millis(1500);
        let mut others = Vec::new();
        for z in zones.iter().skip(1) {
            let udp = probe::soa(addr, Transport::Udp, z, t).await;
            let tcp = probe::soa(addr, Transport::Tcp, z, t).await;
            others.push((z.clone(), udp, tcp));
        }
        let reverse = match reverse {
            Some(r) => Some((
                probe::soa(addr, Transport::Udp, r, t).await,
                probe::soa(addr, Transport::Tcp, r, t).await,
            )),
            None => None,
        };
        Probes {
            udp: probe::soa(addr, Transport::Udp, zones.first(), t).await,
            tcp: probe::soa(addr, Transport::Tcp, zones.first(), t).await,
            others,
            reverse,
        }
    })
    .map_err(|e| AppError::new(Class::Runtime, e.to_string(), "try again"))
}

/// One line of what the status file and the probes say together.
fn verdict(file: Option<&Status>, alive: bool, p: &Probes) -> &'static str {
    let serial_of = |r: &Probe| r.as_ref().ok().map(|a| a.serial);
    let reverse_ok = p.reverse.as_ref().is_none_or(|(u, t)| {
        serial_of(u).is_some() && serial_of(u) == serial_of(t) && serial_of(u) == serial_of(&p.udp)
    });
    let others_ok = p.others.iter().all(|(_, u, t)| {
        serial_of(u).is_some() && serial_of(u) == serial_of(t) && serial_of(u) == serial_of(&p.udp)
    });
    let live_serial = |s: &Status| p.udp.as_ref().is_ok_and(|a| a.serial == s.serial);
    match (file, alive, p.answering()) {
        (Some(s), true, true) if live_serial(s) && reverse_ok && others_ok => "running",
        (Some(s), true, true) if live_serial(s) && reverse_ok => {
            "running, but a served zone does not answer its SOA with the live serial"
        }
        (Some(s), true, true) if live_serial(s) => {
            "running, but the reverse zone does not answer its SOA with the live serial"
        }
        (Some(_), true, true) => "running, but the probe saw another serial than the status file",
        (_, false, true) => {
            "something answers at this address, but no pigsty-dns serve of this state dir is running"
        }
        (Some(_), true, false) => "running, but not answering the zone SOA",
        _ => "not running",
    }
}

fn probe_json(r: &Probe) -> serde_json::Value {
    match r {
        Ok(a) => json!({"serial": a.serial, "authoritative": a.authoritative}),
        Err(e) => json!({"error": e.to_string()}),
    }
}

fn probes_text(addr: SocketAddr, reverse: Option<&Zone>, p: &Probes) -> String {
    let probe_text = |r: &Probe| match r {
        Ok(a) => format!("serial {}", a.serial),
        Err(e) => e.to_string(),
    };
    let mut out = format!(
        "probe {addr}: UDP {}; TCP {}\n",
        probe_text(&p.udp),
        probe_text(&p.tcp)
    );
    for (z, u, t) in &p.others {
        out.push_str(&format!(
            "probe {addr} {z}: UDP {}; TCP {}\n",
            probe_text(u),
            probe_text(t)
        ));
    }
    if let (Some(z), Some((u, t))) = (reverse, &p.reverse) {
        out.push_str(&format!(
            "probe {addr} {z}: UDP {}; TCP {}\n",
            probe_text(u),
            probe_text(t)
        ));
    }
    out
}

/// What the status file says: the live generation, where it came from, secondaries, transfers and
/// answer counters.
fn file_text(s: &Status, live_file_gone: bool) -> String {
    let uptime = status_file::now_unix().saturating_sub(s.started_unix);
    let mut out = format!(
        "status file ({}, pid {}, updated {}):\n  {} {}  reverse zone {}  serial {}  records {}  record digest {}\n",
        s.state,
        s.pid,
        s.updated,
        if s.zones.len() > 1 { "zones" } else { "zone" },
        s.zones().join(", "),
        s.reverse_zone.as_deref().unwrap_or("none"),
        s.serial,
        s.records,
        s.record_digest.as_deref().unwrap_or("-")
    );
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
    if live_file_gone {
        out.push_str(
            "  the live generation is still served, but its file is gone: load the input again to store it\n",
        );
    }
    if let Some(f) = &s.follow {
        out.push_str(&format!("  following {f}\n"));
    }
    out.push_str(&format!(
        "  last error: {}\n",
        s.last_error.as_deref().unwrap_or("none")
    ));
    out.push_str(&secondaries_text(s));
    out.push_str(&counters_text(s));
    out
}

fn secondaries_text(s: &Status) -> String {
    let mut out = String::new();
    for n in &s.secondaries {
        out.push_str(&format!(
            "  secondary {}: acknowledged serial {}, failed NOTIFYs {}{}{}\n",
            n.address,
            n.acknowledged_serial
                .map_or("none".into(), |v| v.to_string()),
            n.failures,
            n.pending_serial
                .map_or(String::new(), |v| format!(", notifying serial {v}")),
            n.last_error
                .as_deref()
                .map_or(String::new(), |e| format!(", last error: {e}")),
        ));
    }
    out
}

/// The transfer counters (when the server has any) and the answer counters.
fn counters_text(s: &Status) -> String {
    let mut out = String::new();
    if let Some(t) = &s.transfers {
        out.push_str(&format!(
            "  transfers: axfr {} ixfr {} ixfr answered with the full zone {} ixfr already current {} signed soa {}; \
             refused (TSIG) unsigned {} badkey {} badsig {} badtime {}; failed {}\n",
            t.axfr,
            t.ixfr,
            t.ixfr_as_axfr,
            t.ixfr_current,
            t.signed_soa,
            t.tsig_unsigned,
            t.tsig_badkey,
            t.tsig_badsig,
            t.tsig_badtime,
            t.failed
        ));
    }
    let c = &s.counters;
    out.push_str(&format!(
        "  answers: noerror {} nxdomain {} refused {} formerr {} notimp {} servfail {} badvers {} other {}; dropped {} truncated {}; tcp accepted {} evicted {} refused {}\n",
        c.noerror, c.nxdomain, c.refused, c.formerr, c.notimp, c.servfail, c.badvers, c.other, c.dropped, c.truncated, c.tcp_accepted, c.tcp_evicted, c.tcp_refused
    ));
    out
}

/// The report still goes to stdout; the error says what to do.
fn not_running(verdict: &str, addr: SocketAddr, report: Report) -> AppError {
    AppError::new(
        Class::Runtime,
        format!("pigsty-dns at {addr}: {verdict}"),
        "start it with pigsty-dns serve (or check --server / --state-dir)",
    )
    .with_full_report(report)
}
