//! What answers before the zone: the hosts file and the NSS `hosts:` order, read-only (issue 23).
//!
//! pigsty-dns never writes the hosts file. It reads it the way glibc's `files` backend does, sorts its
//! lines into Barn's block, the old Pigsty sandbox section and everything else, and compares them with
//! the live generation, so `route status` and `route install` can say which names and addresses the
//! hosts file answers in the zone's place and what removes them.
//!
//! - [`file`]: the safe read ([`read`]) and the pure parse ([`file::parse`]) with each line's class.
//! - [`nss`]: the `hosts:` line of `/etc/nsswitch.conf` with its `[STATUS=action]` items, the questions
//!   the route needs answered from it, and the check of `/etc/resolv.conf` for resolved's stub.
//! - [`findings`]: the comparison with the zone ([`ZoneAnswers`]), each finding's `next:`, and the
//!   stable JSON summary for `route status --json`.
//!
//! Everything here is pure except [`read`] (and the thin file readers the caller brings for
//! nsswitch.conf and resolv.conf).

pub mod file;
pub mod findings;
pub mod nss;

pub use file::{HostsLine, read};
pub use findings::{EmptyZone, Finding, FindingKind, NssSummary, Summary, ZoneAnswers, summary};
pub use nss::{
    NssError, NssHosts, RouteEffect, resolv_conf_points_at_stub, resolv_target_is_stub,
    resolved_reads_etc_hosts,
};
