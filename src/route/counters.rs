//! What the daemon counted, as its status file tells it: how verification proves that a lookup
//! reached the daemon (or stayed away), and the random probe names those lookups ask for.

use std::path::Path;
use std::time::Duration;

use crate::store::status_file::{self, CountersSnapshot, Status};

/// The server's status, from `file` (`<state dir>/status.json`, as `Ctx::status_file` holds it).
fn server_status(file: &Path) -> Result<Status, String> {
    file.parent().and_then(status_file::read).ok_or_else(|| {
        format!(
            "cannot read {}: not a pigsty-dns status file (format {})",
            file.display(),
            status_file::FORMAT
        )
    })
}

/// A label no one has asked for before (time and process id).
pub fn random_label() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("pigsty-dns-route-check-{:x}{:x}", t, std::process::id())
}

/// The status file's `updated` stamp (the server rewrites it every couple of seconds).
fn status_stamp(status_file: &Path) -> Option<String> {
    server_status(status_file).ok().map(|s| s.updated)
}

/// The status as of a write that happened after this call: waits (up to `wait`) for the server to
/// rewrite the file, so it includes every query answered before the call.
pub fn fresh_status(status_file: &Path, wait: Duration) -> Result<Status, String> {
    let first = status_stamp(status_file);
    let deadline = std::time::Instant::now() + wait;
    while std::time::Instant::now() < deadline && status_stamp(status_file) == first {
        std::thread::sleep(Duration::from_millis(100));
    }
    server_status(status_file)
}

fn fresh_counters(status_file: &Path, wait: Duration) -> Result<CountersSnapshot, String> {
    fresh_status(status_file, wait).map(|s| s.counters)
}

pub fn fresh_refused_count(status_file: &Path, wait: Duration) -> Result<u64, String> {
    fresh_counters(status_file, wait).map(|c| c.refused)
}
