//! The text both `check` and `load`/`rollback` print: what is served (name, address, sources), the
//! reverse zone's PTRs, what is not served and why, and the outcome of a store with its diff (PTRs
//! included) against the previous generation.

use std::fmt::Write as _;
use std::path::Path;
use std::rc::Rc;

use serde_json::json;

use crate::generation::Generation;
use crate::output::{FORMAT, Report};
use crate::records::{self, Diff, NotServed, Ptr, Record, SkippedHost};
use crate::store::Outcome;

/// The served / not served / not managed lines.
pub fn served(
    set_records: &[Record],
    not_served: &[NotServed],
    skipped: &[SkippedHost],
    out: &mut String,
) {
    let width = set_records
        .iter()
        .map(|r| r.name.len())
        .chain(not_served.iter().map(|n| n.name.len()))
        .max()
        .unwrap_or(0);
    let _ = writeln!(out, "served ({}):", set_records.len());
    // `"  {name:width$}  {address:15}  {sources}"`, written without the formatting machinery: it is
    // one line per served name.
    out.reserve(set_records.len() * (width + 64));
    let mut address = Vec::with_capacity(15);
    for r in set_records {
        out.push_str("  ");
        pad(out, &r.name, width);
        out.push_str("  ");
        address.clear();
        crate::generation::push_ipv4(&mut address, r.address);
        pad(out, std::str::from_utf8(&address).unwrap_or(""), 15);
        out.push_str("  ");
        for (i, s) in r.sources.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(s);
        }
        out.push('\n');
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

/// `text` left-aligned in `width` characters, as `{:width$}` writes it.
fn pad(out: &mut String, text: &str, width: usize) {
    out.push_str(text);
    for _ in text.chars().count()..width {
        out.push(' ');
    }
}

/// The reverse zone's lines: its name and one `address  name` line per PTR.
pub fn reverse(records: &[Record], ptr: &[Ptr], out: &mut String) {
    let Some(zone) = records::reverse_zone(records).filter(|_| !ptr.is_empty()) else {
        return;
    };
    let _ = writeln!(out, "reverse zone {zone} ({} PTR):", ptr.len());
    for p in ptr {
        let _ = writeln!(out, "  {:15}  {}", p.address.to_string(), p.name);
    }
}

/// The report of a load or rollback, and the generation that was stored (if any).
pub fn outcome(outcome: Outcome, root: &Path) -> (Report, Option<Rc<Generation>>) {
    let state_dir = root.display().to_string();
    let (result, generation, previous, path) = match outcome {
        Outcome::Unchanged { serial } => {
            let json = json!({"format": FORMAT, "result": "unchanged", "serial": serial, "state_dir": state_dir});
            return (
                Report::new(format!("unchanged (serial {serial})\n"), json),
                None,
            );
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
    )
    .with_ptr(
        previous.as_ref().map(|p| p.ptr.as_slice()).unwrap_or(&[]),
        &generation.ptr,
    );
    let out = outcome_text(&diff, &generation, path.as_deref());
    let generation = Rc::new(generation);
    let stored = path.is_some().then(|| generation.clone());
    let previous = previous.map(|p| (p.serial, p.record_digest));
    let path = path.map(|p| p.display().to_string());
    // Built only for --json: at 100,000 names the diff alone is tens of megabytes of JSON.
    let report = Report::lazy_value(out, move || {
        json!({
            "format": FORMAT,
            "result": result,
            "serial": generation.serial,
            "previous_serial": previous.as_ref().map(|p| p.0),
            "previous_record_digest": previous.as_ref().map(|p| p.1.clone()),
            "record_digest": generation.record_digest,
            "state_dir": state_dir,
            "path": path,
            "diff": diff,
            "served": generation.records.len(),
            "reverse_zone": records::reverse_zone(&generation.records).filter(|_| !generation.ptr.is_empty()),
            "ptr": generation.ptr,
            "not_served": generation.not_served,
        })
    });
    (report, stored)
}

/// The diff lines, the not-served lines and the closing line of a load or rollback.
fn outcome_text(diff: &Diff, generation: &Generation, path: Option<&Path>) -> String {
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
    for p in &diff.ptr {
        let _ = match (&p.old, &p.new) {
            (None, Some(n)) => writeln!(out, "+ PTR {} {n}", p.address),
            (Some(o), None) => writeln!(out, "- PTR {} {o}", p.address),
            (Some(o), Some(n)) => writeln!(out, "~ PTR {} {o} -> {n}", p.address),
            (None, None) => Ok(()),
        };
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
    out
}
