//! `pigsty-dns export`: hand the records (a forward zone, or with `--zone-of reverse` the reverse
//! zone) to any other server.
//!
//! A zone file holds one zone, so with several served zones `--format zone` needs `--zone Z`: written
//! without it, it is refused with the zones to choose from, never one zone silently for all (a
//! secondary fed it would answer NXDOMAIN for the others' names). `hosts` and `json` hold every zone.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::{AppError, Class};
use crate::input::records;
use crate::output::Report;
use crate::store::status_file;
use crate::store::{self, StateDir};
use crate::sys::fs::{WriteOptions, write_atomic};
use crate::zone::generation::Generation;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// RFC 1035 master file ($ORIGIN, $TTL, SOA, NS, A).
    Zone,
    /// `address<TAB>names` lines, the body of a hosts block.
    Hosts,
    /// The generation as one JSON object (its fields: zone, serial, SOA, records with their sources,
    /// PTRs, …), whatever the format of the file on disk.
    Json,
}

/// Which zone of the generation `--format zone` writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ZoneOf {
    /// The forward zone (`pigsty.test`: SOA, NS, A).
    #[default]
    Forward,
    /// The reverse zone of the managed /24 (`C.B.A.in-addr.arpa`: SOA, NS, PTR).
    Reverse,
}

/// The generation `export` means: `--serial`, else the one a running server of this state dir serves,
/// else the newest good one.
fn pick_generation(dir: &StateDir, serial: Option<u32>) -> Result<Generation, AppError> {
    let entries = dir.scan()?;
    let want = serial.or_else(|| {
        status_file::running(dir.root())
            .map(|s| s.serial)
            .filter(|s| *s > 0)
    });
    let entry = match want {
        Some(s) => entries.iter().find(|e| e.serial == s).ok_or_else(|| {
            AppError::new(
                Class::Usage,
                format!(
                    "serial {s} is not in {}",
                    crate::output::text::path(&dir.generations_dir())
                ),
                "run pigsty-dns history to see the serials kept",
            )
        })?,
        None => entries.iter().find(|e| e.status.is_ok()).ok_or_else(|| {
            AppError::new(
                Class::Usage,
                format!(
                    "no good generation in {}",
                    crate::output::text::path(&dir.generations_dir())
                ),
                "store one first: pigsty-dns load host-names.yml",
            )
        })?,
    };
    entry.status.clone().map_err(|why| {
        AppError::new(
            Class::Integrity,
            format!(
                "generation {} ({}) {why}",
                entry.serial,
                crate::output::text::path(&entry.path)
            ),
            "export a serial that history lists as good",
        )
    })
}

/// The apex of a zone: the one SOA (same serial, same MINIMUM; `rname` the zone's contact) and the NS
/// set.
fn apex(out: &mut String, g: &Generation, rname: &str) {
    let s = &g.soa;
    let _ = writeln!(
        out,
        "@\t{}\tIN\tSOA\t{} {} {} {} {} {} {}",
        g.ttl, s.mname, rname, g.serial, s.refresh, s.retry, s.expire, s.minimum
    );
    for ns in &g.ns {
        let _ = writeln!(out, "@\t{}\tIN\tNS\t{ns}", g.ttl);
    }
}

/// An RFC 1035 master file of the generation's first zone, names relative to `$ORIGIN`, sorted.
pub fn zone_file(g: &Generation) -> String {
    zone_file_of(g, &g.zone)
}

/// An RFC 1035 master file of one served zone of the generation: its apex and its own names only.
pub fn zone_file_of(g: &Generation, zone: &str) -> String {
    let mut out = format!(
        "; pigsty-dns export: zone {} serial {} record digest {}\n$ORIGIN {}.\n$TTL {}\n",
        zone, g.serial, g.record_digest, zone, g.ttl
    );
    apex(&mut out, g, &format!("hostmaster.{zone}."));
    let suffix = format!(".{zone}");
    for r in g
        .records
        .iter()
        .filter(|r| crate::dns::name::in_zone(&r.name, zone))
    {
        let owner = if r.name == zone {
            "@"
        } else {
            r.name.strip_suffix(&suffix).unwrap_or(&r.name)
        };
        let _ = writeln!(out, "{owner}\t{}\tIN\tA\t{}", g.ttl, r.address);
    }
    out
}

/// The reverse zone as an RFC 1035 master file: the forward zone's SOA (same serial, same MINIMUM) and
/// NS, one PTR per address by last octet. `None` for a generation without PTRs.
pub fn reverse_zone_file(g: &Generation) -> Option<String> {
    let zone = records::reverse_zone(&g.records).filter(|_| !g.ptr.is_empty())?;
    let mut out = format!(
        "; pigsty-dns export: zone {zone} (reverse of {}) serial {} record digest {}\n$ORIGIN {zone}.\n$TTL {}\n",
        g.zone, g.serial, g.record_digest, g.ttl
    );
    apex(&mut out, g, &g.soa.rname);
    for p in &g.ptr {
        let _ = writeln!(
            out,
            "{}\t{}\tIN\tPTR\t{}.",
            p.address.octets()[3],
            g.ttl,
            p.name
        );
    }
    Some(out)
}

/// The served zone `--format zone` writes: `--zone`, which must be one of the generation's, else its
/// only zone; with several and no `--zone`, the error names them.
fn forward_zone(g: &Generation, asked: Option<&str>) -> Result<String, AppError> {
    let zones = g.zone_list();
    let choose = || {
        zones
            .iter()
            .map(|z| format!("--zone {z}"))
            .collect::<Vec<_>>()
            .join(" or ")
    };
    match asked {
        Some(a) => {
            let folded = a.trim_end_matches('.').to_ascii_lowercase();
            match zones.iter().find(|z| **z == folded) {
                Some(z) => Ok(z.to_string()),
                None => Err(AppError::new(
                    Class::Usage,
                    format!(
                        "--zone {}: generation {} serves {}",
                        crate::output::text::quote(a),
                        g.serial,
                        zones.join(", ")
                    ),
                    format!("give {}", choose()),
                )),
            }
        }
        None if zones.len() == 1 => Ok(zones[0].to_string()),
        None => Err(AppError::new(
            Class::Usage,
            format!(
                "generation {} serves {} zones ({}), and a zone file holds one",
                g.serial,
                zones.len(),
                zones.join(", ")
            ),
            format!(
                "give {}, one file each (--format hosts or json holds every zone)",
                choose()
            ),
        )),
    }
}

/// `address<TAB>names`, one line per address in numeric order, names sorted.
pub fn hosts_lines(g: &Generation) -> String {
    let mut by_addr: std::collections::BTreeMap<std::net::Ipv4Addr, Vec<&str>> =
        std::collections::BTreeMap::new();
    for r in &g.records {
        by_addr.entry(r.address).or_default().push(&r.name);
    }
    let mut out = String::new();
    for (a, names) in by_addr {
        let _ = writeln!(out, "{a}\t{}", names.join(" "));
    }
    out
}

/// `export`: the live (or given) generation as a zone file, hosts lines or the generation JSON, to
/// stdout or atomically to `-o FILE`.
pub fn run(
    state_dir: Option<&Path>,
    serial: Option<u32>,
    format: ExportFormat,
    zone_of: ZoneOf,
    zone: Option<&str>,
    output: Option<&Path>,
) -> Result<Report, AppError> {
    if zone.is_some() && (format != ExportFormat::Zone || zone_of == ZoneOf::Reverse) {
        return Err(AppError::new(
            Class::Usage,
            "--zone picks the forward zone of a zone file; it goes with --format zone only",
            "run pigsty-dns export --format zone --zone ZONE (hosts and json hold every zone)",
        ));
    }
    if zone_of == ZoneOf::Reverse && format != ExportFormat::Zone {
        return Err(AppError::new(
            Class::Usage,
            "--zone-of reverse is a zone file; it goes with --format zone only",
            "run pigsty-dns export --format zone --zone-of reverse",
        ));
    }
    let dir = StateDir::open(&store::resolve(state_dir)?, false)?;
    let g = pick_generation(&dir, serial)?;
    let text = match (format, zone_of) {
        (ExportFormat::Zone, ZoneOf::Reverse) => reverse_zone_file(&g).ok_or_else(|| {
            AppError::new(
                Class::Usage,
                format!(
                    "generation {} has no reverse zone (it was sealed before reverse zones existed)",
                    g.serial
                ),
                "load the input again to seal it with its PTRs: pigsty-dns load host-names.yml",
            )
        })?,
        (ExportFormat::Zone, ZoneOf::Forward) => zone_file_of(&g, &forward_zone(&g, zone)?),
        (ExportFormat::Hosts, _) => hosts_lines(&g),
        // Format-2 files are a JSON header plus lines, so JSON is rendered from the generation itself.
        (ExportFormat::Json, _) => {
            let mut text = serde_json::to_string_pretty(&g).unwrap_or_default();
            text.push('\n');
            // The same JSON to a reader; inert if it reaches a terminal (the input's path, sources).
            crate::output::text::json_inert(text)
        }
    };
    let Some(out) = output else {
        return Ok(Report::same(text));
    };
    // Atomic replace, so a server reading the file never sees half of it.
    write_atomic(out, text.as_bytes(), &WriteOptions::mode(0o644)).map_err(|e| {
        AppError::new(
            Class::Runtime,
            format!(
                "cannot write {}: {}",
                crate::output::text::path(out),
                e.source
            ),
            "check the output path",
        )
    })?;
    eprintln!(
        "wrote {} (serial {}, {} records)",
        crate::output::text::path(out),
        g.serial,
        g.records.len()
    );
    Ok(Report::same(String::new()))
}
