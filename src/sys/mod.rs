//! The host layer: the few operating-system primitives everything else uses, each written once —
//! atomic file writes (always fsync file and directory), the effective user, advisory locks, the
//! platform, systemd's version, and running programs through a `Runner` that tests can script.

pub mod exec;
pub mod fs;
pub mod lock;
pub mod os;
pub(crate) mod resolved_conf;
pub mod runner;
pub mod systemd;
pub mod user;

pub use os::Os;
pub use runner::{Output, Runner, SystemRunner, argv};
