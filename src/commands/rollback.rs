//! `pigsty-dns rollback SERIAL`.

use std::path::Path;

use super::report;
use crate::error::{AppError, Class};
use crate::input::records::RecordSet;
use crate::output::Report;
use crate::store::{self, StateDir};
use crate::zone::generation::Input;

/// Re-seals the records of `serial` as a new, higher serial.
pub fn run(serial: u32, state_dir: Option<&Path>, dry_run: bool) -> Result<Report, AppError> {
    let root = store::resolve(state_dir)?;
    let dir = StateDir::open(&root, false)?;
    let entries = dir.scan()?;
    let Some(entry) = entries.iter().find(|e| e.serial == serial) else {
        return Err(AppError::new(
            Class::Usage,
            format!(
                "serial {serial} is not in {}",
                crate::output::text::path(&dir.generations_dir())
            ),
            "run pigsty-dns history to see the serials kept",
        ));
    };
    let old = entry.status.as_ref().map_err(|why| {
        AppError::new(
            Class::Integrity,
            format!(
                "generation {serial} ({}) {why}",
                crate::output::text::path(&entry.path)
            ),
            "roll back to a serial that history lists as good",
        )
    })?;
    let zones = old.served_zones().map_err(|e| {
        AppError::new(
            Class::Integrity,
            format!("generation {serial} {e}"),
            "roll back to another serial",
        )
    })?;
    let set = RecordSet {
        zones,
        records: old.records.clone(),
        ptr: old.ptr.clone(),
        not_served: old.not_served.clone(),
        skipped_hosts: old.skipped_hosts.clone(),
    };
    let input = Input {
        path: format!("rollback to serial {serial} of {}", old.input.path),
        sha256: old.input.sha256.clone(),
    };
    let outcome = dir.commit(set, old.ttl, old.soa.minimum, input, dry_run)?;
    Ok(report::outcome(outcome, dir.root()).0)
}
