//! The offline commands (`check`, `load`, `history`, `rollback`): read, validate, store, and report in
//! text or in sorted, stable JSON.

use std::fmt::Write as _;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use crate::error::{AppError, Class};
use crate::generation::{self, Generation, Input};
use crate::inventory::{self, MAX_INPUT_BYTES};
use crate::name::Zone;
use crate::records::{Diff, RecordSet};
use crate::store::{self, Outcome, StateDir};

/// Schema version of every `--json` document.
pub const JSON_FORMAT: u32 = 1;

pub use crate::error::zone_arg as parse_zone;

/// Reads and validates an input file; returns the record set and what to record as its input.
pub fn validate(path: &Path, zone: &Zone) -> Result<(RecordSet, Input), AppError> {
    let shown = path.display().to_string();
    let mut f = File::open(path).map_err(|e| {
        let class = if e.kind() == std::io::ErrorKind::NotFound {
            Class::Usage
        } else {
            Class::Runtime
        };
        AppError::new(
            class,
            format!("cannot read {shown:?}: {e}"),
            "give the path of Barn's host-names.yml",
        )
    })?;
    let mut bytes = Vec::new();
    (&mut f)
        .take(MAX_INPUT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            AppError::new(
                Class::Runtime,
                format!("cannot read {shown:?}: {e}"),
                "check the file",
            )
        })?;
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(AppError::new(
            Class::Invalid,
            format!("{shown}: is larger than {MAX_INPUT_BYTES} bytes (4 MiB), the inventory limit"),
            "split the records or remove what pigsty-dns does not read",
        ));
    }
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        AppError::new(
            Class::Invalid,
            format!("{shown}: is not UTF-8 text (byte {})", e.valid_up_to()),
            "save the file as UTF-8",
        )
    })?;
    let inv = inventory::parse(text).map_err(|e| AppError::input(&shown, e))?;
    let set = RecordSet::build(&inv, zone).map_err(|e| AppError::input(&shown, e))?;
    let abs = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
    Ok((
        set,
        Input {
            path: abs.display().to_string(),
            sha256: generation::sha256_of(&bytes),
        },
    ))
}

fn served_report(
    set_records: &[crate::records::Record],
    not_served: &[crate::records::NotServed],
    skipped: &[crate::records::SkippedHost],
    out: &mut String,
) {
    let width = set_records
        .iter()
        .map(|r| r.name.len())
        .chain(not_served.iter().map(|n| n.name.len()))
        .max()
        .unwrap_or(0);
    let _ = writeln!(out, "served ({}):", set_records.len());
    for r in set_records {
        let _ = writeln!(
            out,
            "  {:width$}  {:15}  {}",
            r.name,
            r.address.to_string(),
            r.sources.join(", ")
        );
    }
    if !not_served.is_empty() {
        let _ = writeln!(out, "not served ({}):", not_served.len());
        for n in not_served {
            let _ = writeln!(
                out,
                "  {:width$}  {:15}  {} ({})",
                n.name,
                n.address.to_string(),
                n.reason,
                n.sources.join(", ")
            );
        }
    }
    for s in skipped {
        let _ = writeln!(
            out,
            "not managed: host {} (vm_skip: true at {})",
            s.address, s.source
        );
    }
}

pub fn check(path: &Path, zone: &Zone, json: bool) -> Result<String, AppError> {
    let (set, input) = validate(path, zone)?;
    let g = Generation::seal(
        &set,
        generation::DEFAULT_TTL,
        generation::DEFAULT_NEGATIVE_TTL,
        0,
        String::new(),
        input,
    );
    if json {
        return Ok(to_json(&json!({
            "format": JSON_FORMAT,
            "valid": true,
            "zone": g.zone,
            "input": g.input,
            "record_digest": g.record_digest,
            "served": g.records,
            "not_served": g.not_served,
            "skipped_hosts": g.skipped_hosts,
        })));
    }
    let mut out = format!("{}: valid for zone {}\n", path.display(), g.zone);
    served_report(&g.records, &g.not_served, &g.skipped_hosts, &mut out);
    let _ = writeln!(out, "record digest {}", g.record_digest);
    Ok(out)
}

pub struct LoadOptions<'a> {
    pub path: &'a Path,
    pub zone: &'a Zone,
    pub state_dir: Option<&'a Path>,
    pub ttl: u32,
    pub negative_ttl: u32,
    pub dry_run: bool,
}

pub fn load(o: &LoadOptions<'_>, json: bool) -> Result<(String, Option<Generation>), AppError> {
    check_ttls(o.ttl, o.negative_ttl)?;
    let (set, input) = validate(o.path, o.zone)?;
    let dir = StateDir::open(&store::resolve(o.state_dir)?, !o.dry_run)?;
    let outcome = dir.commit(&set, o.ttl, o.negative_ttl, input, o.dry_run)?;
    Ok(report_outcome(&outcome, dir.root(), json))
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

/// Text or JSON for a load or rollback, and the generation that was stored (if any).
fn report_outcome(outcome: &Outcome, root: &Path, json: bool) -> (String, Option<Generation>) {
    let (result, generation, previous, path) = match outcome {
        Outcome::Unchanged { serial } => {
            let text = if json {
                to_json(
                    &json!({"format": JSON_FORMAT, "result": "unchanged", "serial": serial, "state_dir": root.display().to_string()}),
                )
            } else {
                format!("unchanged (serial {serial})\n")
            };
            return (text, None);
        }
        Outcome::WouldStore {
            generation,
            previous,
        } => ("dry-run", generation, previous, None),
        Outcome::Stored {
            generation,
            path,
            previous,
        } => ("stored", generation, previous, Some(path)),
    };
    let diff = Diff::between(
        previous
            .as_ref()
            .map(|p| p.records.as_slice())
            .unwrap_or(&[]),
        &generation.records,
    );
    if json {
        let text = to_json(&json!({
            "format": JSON_FORMAT,
            "result": result,
            "serial": generation.serial,
            "previous_serial": previous.as_ref().map(|p| p.serial),
            "previous_record_digest": previous.as_ref().map(|p| p.record_digest.clone()),
            "record_digest": generation.record_digest,
            "state_dir": root.display().to_string(),
            "path": path.map(|p| p.display().to_string()),
            "diff": diff,
            "served": generation.records.len(),
            "not_served": generation.not_served,
        }));
        return (text, Some(generation.clone()).filter(|_| path.is_some()));
    }
    let mut out = String::new();
    for c in &diff.added {
        let _ = writeln!(
            out,
            "+ {} {}",
            c.name,
            c.new.map(|a| a.to_string()).unwrap_or_default()
        );
    }
    for c in &diff.removed {
        let _ = writeln!(
            out,
            "- {} {}",
            c.name,
            c.old.map(|a| a.to_string()).unwrap_or_default()
        );
    }
    for c in &diff.changed {
        let (old, new) = (
            c.old.map(|a| a.to_string()).unwrap_or_default(),
            c.new.map(|a| a.to_string()).unwrap_or_default(),
        );
        let _ = writeln!(out, "~ {} {old} -> {new}", c.name);
    }
    if diff.is_empty() {
        let _ = writeln!(out, "no name changes (zone settings changed)");
    }
    for n in &generation.not_served {
        let _ = writeln!(out, "not served: {} {} ({})", n.name, n.address, n.reason);
    }
    let served = generation.records.len();
    match path {
        None => {
            let _ = writeln!(
                out,
                "dry run: would store serial {} ({served} names served)",
                generation.serial
            );
        }
        Some(p) => {
            let _ = writeln!(
                out,
                "stored serial {} ({served} names served, record digest {}) in {}",
                generation.serial,
                &generation.record_digest[..16],
                p.display()
            );
        }
    }
    (out, Some(generation.clone()).filter(|_| path.is_some()))
}

#[derive(Serialize)]
struct HistoryRow {
    serial: u32,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    newest_good: bool,
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    created: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    zone: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    served: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    record_digest: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input: Option<Input>,
}

pub fn history(state_dir: Option<&Path>, json: bool) -> Result<String, AppError> {
    let root = store::resolve(state_dir)?;
    if !root.exists() {
        return Ok(if json {
            to_json(
                &json!({"format": JSON_FORMAT, "state_dir": root.display().to_string(), "generations": []}),
            )
        } else {
            format!("no generations yet in {}\n", root.display())
        });
    }
    let dir = StateDir::open(&root, false)?;
    let entries = dir.scan()?;
    let newest_good = entries.iter().find(|e| e.status.is_ok()).map(|e| e.serial);
    let rows: Vec<HistoryRow> = entries
        .iter()
        .map(|e| {
            let g = e.status.as_ref().ok();
            HistoryRow {
                serial: e.serial,
                status: if g.is_some() { "good" } else { "bad" },
                reason: e.status.as_ref().err().cloned(),
                newest_good: Some(e.serial) == newest_good,
                path: e.path.display().to_string(),
                created: g.map(|g| g.created.clone()),
                zone: g.map(|g| g.zone.clone()),
                served: g.map(|g| g.records.len()),
                record_digest: g.map(|g| g.record_digest.clone()),
                input: g.map(|g| g.input.clone()),
            }
        })
        .collect();
    if json {
        return Ok(to_json(
            &json!({"format": JSON_FORMAT, "state_dir": root.display().to_string(), "generations": rows}),
        ));
    }
    if rows.is_empty() {
        return Ok(format!("no generations yet in {}\n", root.display()));
    }
    let mut out = format!(
        "{:>10}  {:20}  {:12}  {:>6}  {:16}  status\n",
        "serial", "created", "zone", "names", "record digest"
    );
    for r in &rows {
        let status = match (&r.reason, r.newest_good) {
            (Some(why), _) => format!("bad: {why}"),
            (None, true) => "good (newest)".into(),
            (None, false) => "good".into(),
        };
        let _ = writeln!(
            out,
            "{:>10}  {:20}  {:12}  {:>6}  {:16}  {status}",
            r.serial,
            r.created.as_deref().unwrap_or("-"),
            r.zone.as_deref().unwrap_or("-"),
            r.served
                .map(|n| n.to_string())
                .unwrap_or_else(|| "-".into()),
            r.record_digest
                .as_deref()
                .map(|d| &d[..16.min(d.len())])
                .unwrap_or("-"),
        );
    }
    Ok(out)
}

/// Re-seals the records of `serial` as a new, higher serial.
pub fn rollback(
    serial: u32,
    state_dir: Option<&Path>,
    dry_run: bool,
    json: bool,
) -> Result<(String, Option<Generation>), AppError> {
    let root = store::resolve(state_dir)?;
    let dir = StateDir::open(&root, false)?;
    let entries = dir.scan()?;
    let Some(entry) = entries.iter().find(|e| e.serial == serial) else {
        return Err(AppError::new(
            Class::Usage,
            format!(
                "serial {serial} is not in {}",
                dir.generations_dir().display()
            ),
            "run pigsty-dns history to see the serials kept",
        ));
    };
    let old = entry.status.as_ref().map_err(|why| {
        AppError::new(
            Class::Integrity,
            format!("generation {serial} ({}) {why}", entry.path.display()),
            "roll back to a serial that history lists as good",
        )
    })?;
    let zone = Zone::parse(&old.zone).map_err(|e| {
        AppError::new(
            Class::Integrity,
            format!("generation {serial} has zone {e}"),
            "roll back to another serial",
        )
    })?;
    let set = RecordSet {
        zone,
        records: old.records.clone(),
        not_served: old.not_served.clone(),
        skipped_hosts: old.skipped_hosts.clone(),
    };
    let input = Input {
        path: format!("rollback to serial {serial} of {}", old.input.path),
        sha256: old.input.sha256.clone(),
    };
    let outcome = dir.commit(&set, old.ttl, old.soa.minimum, input, dry_run)?;
    Ok(report_outcome(&outcome, dir.root(), json))
}

/// Pretty, deterministic JSON (serde_json keeps struct order; `json!` objects are sorted maps).
pub fn to_json<T: Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// RFC 1035 master file ($ORIGIN, $TTL, SOA, NS, A).
    Zone,
    /// `address<TAB>names` lines, the body of a hosts block.
    Hosts,
    /// The canonical generation file.
    Json,
}

/// The generation `export` means: `--serial`, else the one a running server of this state dir serves,
/// else the newest good one.
fn pick_generation(dir: &StateDir, serial: Option<u32>) -> Result<Generation, AppError> {
    let entries = dir.scan()?;
    let want = serial.or_else(|| {
        crate::status::running(dir.root())
            .map(|s| s.serial)
            .filter(|s| *s > 0)
    });
    let entry = match want {
        Some(s) => entries.iter().find(|e| e.serial == s).ok_or_else(|| {
            AppError::new(
                Class::Usage,
                format!("serial {s} is not in {}", dir.generations_dir().display()),
                "run pigsty-dns history to see the serials kept",
            )
        })?,
        None => entries.iter().find(|e| e.status.is_ok()).ok_or_else(|| {
            AppError::new(
                Class::Usage,
                format!("no good generation in {}", dir.generations_dir().display()),
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
                entry.path.display()
            ),
            "export a serial that history lists as good",
        )
    })
}

/// An RFC 1035 master file of the generation, names relative to `$ORIGIN`, sorted.
pub fn zone_file(g: &Generation) -> String {
    let mut out = format!(
        "; pigsty-dns export: zone {} serial {} record digest {}\n$ORIGIN {}.\n$TTL {}\n",
        g.zone, g.serial, g.record_digest, g.zone, g.ttl
    );
    let s = &g.soa;
    let _ = writeln!(
        out,
        "@\t{}\tIN\tSOA\t{} {} {} {} {} {} {}",
        g.ttl, s.mname, s.rname, g.serial, s.refresh, s.retry, s.expire, s.minimum
    );
    for ns in &g.ns {
        let _ = writeln!(out, "@\t{}\tIN\tNS\t{ns}", g.ttl);
    }
    let suffix = format!(".{}", g.zone);
    for r in &g.records {
        let owner = if r.name == g.zone {
            "@"
        } else {
            r.name.strip_suffix(&suffix).unwrap_or(&r.name)
        };
        let _ = writeln!(out, "{owner}\t{}\tIN\tA\t{}", g.ttl, r.address);
    }
    out
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

pub fn export(
    state_dir: Option<&Path>,
    serial: Option<u32>,
    format: ExportFormat,
    output: Option<&Path>,
) -> Result<String, AppError> {
    let dir = StateDir::open(&store::resolve(state_dir)?, false)?;
    let g = pick_generation(&dir, serial)?;
    let text = match format {
        ExportFormat::Zone => zone_file(&g),
        ExportFormat::Hosts => hosts_lines(&g),
        ExportFormat::Json => String::from_utf8_lossy(&g.encode()).into_owned(),
    };
    let Some(out) = output else { return Ok(text) };
    // Atomic replace, so a server reading the file never sees half of it.
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = parent.join(format!(
        ".{}.tmp-{}",
        out.file_name().and_then(|n| n.to_str()).unwrap_or("export"),
        std::process::id()
    ));
    let written = std::fs::write(&tmp, text.as_bytes()).and_then(|_| std::fs::rename(&tmp, out));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(AppError::new(
            Class::Runtime,
            format!("cannot write {}: {e}", out.display()),
            "check the output path",
        ));
    }
    eprintln!(
        "wrote {} (serial {}, {} records)",
        out.display(),
        g.serial,
        g.records.len()
    );
    Ok(String::new())
}
