//! `pigsty-dns check FILE`.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;

use super::report;
use crate::defaults;
use crate::error::AppError;
use crate::generation::Generation;
use crate::input;
use crate::name::Zone;
use crate::output::{FORMAT, Report};
use crate::records;

/// `check FILE`: validate only; print what would be served and what not. Writes nothing.
pub fn run(path: &Path, zone: &Zone) -> Result<Report, AppError> {
    let (set, input) = input::read(path, zone)?;
    let g = Generation::seal_set(
        set,
        defaults::TTL,
        defaults::NEGATIVE_TTL,
        0,
        String::new(),
        input,
    );
    let mut out = format!("{}: valid for zone {}\n", path.display(), g.zone);
    report::served(&g.records, &g.not_served, &g.skipped_hosts, &mut out);
    report::reverse(&g.records, &g.ptr, &mut out);
    let _ = writeln!(out, "record digest {}", g.record_digest);
    // Built only for --json: at 100,000 names it is tens of megabytes.
    Ok(Report::lazy(out, move || {
        json!({
            "format": FORMAT,
            "valid": true,
            "zone": g.zone,
            "input": g.input,
            "record_digest": g.record_digest,
            "served": g.records,
            "reverse_zone": records::reverse_zone(&g.records),
            "ptr": g.ptr,
            "not_served": g.not_served,
            "skipped_hosts": g.skipped_hosts,
        })
    }))
}
