//! `pigsty-dns history`.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use serde_json::json;

use crate::error::AppError;
use crate::input::records::{self, Ptr};
use crate::output::{FORMAT, Report};
use crate::store::status_file;
use crate::store::{self, StateDir};
use crate::zone::generation::Input;

#[derive(Serialize)]
struct HistoryRow {
    serial: u32,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// For a bad file: the command that fixes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
    newest_good: bool,
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    created: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    zone: Option<String>,
    /// Every zone, the first `zone`, for a generation of several (absent for one).
    #[serde(skip_serializing_if = "Option::is_none")]
    zones: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    served: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    record_digest: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input: Option<Input>,
    /// The reverse zone and its PTRs; absent for a generation sealed before reverse zones.
    #[serde(skip_serializing_if = "Option::is_none")]
    reverse_zone: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ptr: Option<Vec<Ptr>>,
}

/// `history`: the stored generations, newest first, each good or bad and why.
pub fn run(state_dir: Option<&Path>) -> Result<Report, AppError> {
    let root = store::resolve(state_dir)?;
    if !root.exists() {
        return Ok(Report::new(
            format!(
                "no generations yet in {}\n",
                crate::output::text::path(&root)
            ),
            json!({"format": FORMAT, "state_dir": root.display().to_string(), "generations": []}),
        ));
    }
    let dir = StateDir::open(&root, false)?;
    let entries = dir.scan()?;
    let newest_good = entries.iter().find(|e| e.status.is_ok()).map(|e| e.serial);
    let rows: Vec<HistoryRow> = entries.iter().map(|e| row(e, newest_good)).collect();
    // A running server whose generation file is gone still serves it: say so rather than list a
    // history that does not contain what is live.
    let live = status_file::running(&root).filter(|s| s.serial > 0);
    let live_file_gone = live.as_ref().is_some_and(|s| {
        !entries
            .iter()
            .any(|e| e.serial == s.serial && e.path.exists())
    });
    let json = json!({
        "format": FORMAT,
        "state_dir": root.display().to_string(),
        "generations": rows,
        "live_serial": live.as_ref().map(|s| s.serial),
        "live_file_gone": live_file_gone,
    });
    let note = match live.filter(|_| live_file_gone) {
        Some(s) => format!(
            "serial {} is live but its file is gone; load the input again to store it under a new serial\n",
            s.serial
        ),
        None => String::new(),
    };
    if rows.is_empty() {
        return Ok(Report::new(
            format!(
                "no generations yet in {}\n{note}",
                crate::output::text::path(&root)
            ),
            json,
        ));
    }
    let mut out = table(&rows);
    out.push_str(&note);
    Ok(Report::new(out, json))
}

/// One entry as `history` shows it.
fn row(e: &store::Entry, newest_good: Option<u32>) -> HistoryRow {
    let g = e.status.as_ref().ok();
    HistoryRow {
        serial: e.serial,
        status: if g.is_some() { "good" } else { "bad" },
        reason: e.status.as_ref().err().cloned(),
        next: e
            .status
            .as_ref()
            .err()
            .map(|why| store::fix_for(&e.path, why)),
        newest_good: Some(e.serial) == newest_good,
        path: e.path.display().to_string(),
        created: g.map(|g| g.created.clone()),
        zone: g.map(|g| g.zone.clone()),
        zones: g.filter(|g| !g.zones.is_empty()).map(|g| g.zones.clone()),
        served: g.map(|g| g.records.len()),
        record_digest: g.map(|g| g.record_digest.clone()),
        input: g.map(|g| g.input.clone()),
        reverse_zone: g
            .filter(|g| !g.ptr.is_empty())
            .and_then(|g| records::reverse_zone(&g.records)),
        ptr: g.filter(|g| !g.ptr.is_empty()).map(|g| g.ptr.clone()),
    }
}

/// The text table: one line per file, a bad one with its reason and fix.
fn table(rows: &[HistoryRow]) -> String {
    let mut out = format!(
        "{:>10}  {:20}  {:12}  {:>6}  {:16}  status\n",
        "serial", "created", "zone", "names", "record digest"
    );
    for r in rows {
        let status = match (&r.reason, r.newest_good) {
            (Some(why), _) => format!("bad: {why}; next: {}", r.next.as_deref().unwrap_or("-")),
            (None, true) => "good (newest)".into(),
            (None, false) => "good".into(),
        };
        let _ = writeln!(
            out,
            "{:>10}  {:20}  {:12}  {:>6}  {:16}  {status}",
            r.serial,
            r.created.as_deref().unwrap_or("-"),
            r.zones
                .as_ref()
                .map(|z| z.join(","))
                .or_else(|| r.zone.clone())
                .as_deref()
                .unwrap_or("-"),
            r.served
                .map(|n| n.to_string())
                .unwrap_or_else(|| "-".into()),
            r.record_digest
                .as_deref()
                .map(|d| &d[..16.min(d.len())])
                .unwrap_or("-"),
        );
    }
    out
}
