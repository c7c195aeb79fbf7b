//! pigsty-dns: an authoritative DNS server for the sandbox's private zones on loopback, and the tools
//! around it.
//!
//! # Where things live, and which way the data flows
//!
//! ```text
//! host-names.yml ─input─▶ input::yaml ─▶ input::inventory ─▶ input::records (RecordSet)
//!   ─▶ zone::generation (sealed, digested) ─▶ store (state dir, atomic, never overwritten)
//!   ─▶ serve::reload (watch, verify, swap) ─▶ zone::view (index + encoded apex)
//!   ─▶ serve::net (UDP/TCP loops) ─▶ serve::answer (pure)
//! ```
//!
//! The wings, each a folder whose `mod.rs` names its rooms:
//! - [`input`]: what a user gives — reading the file (bounded, regular files only), the strict streaming
//!   YAML reader, the inventory rules (Barn's and the Pigsty host-access view), the record rules
//!   (addresses, conflicts, limits, diffs).
//! - [`zone`]: the sealed on-disk generation and its digests, and the read-only views answered from
//!   (the forward view, the reverse zone of the same generation, and why either refuses one).
//! - [`store`]: the state directory (locks, history, pruning, serials, `store::place` — the one rule for
//!   where it is — and the daemon's status file).
//! - [`serve`]: the `serve` command (lock, bind, status file, signals), the hot swap, the sockets and
//!   loops, every answering rule as one pure function, zone transfer to real secondaries (AXFR, IXFR
//!   from the history, NOTIFY, TSIG) and the systemd readiness protocol.
//! - [`commands`]: the commands that run and stop (`check`, `load`, `history`, `rollback`, `export`,
//!   `status`), each returning an [`output::Report`].
//! - [`route`] (OS resolver → daemon, including the hosts file and nsswitch.conf: what answers a name
//!   before the zone) and [`service`] (systemd / launchd). They talk to the daemon only over DNS
//!   ([`dns::probe`]) and through its status file ([`store::status_file`]); route also reads the stored
//!   generations for the reverse zone. `service uninstall` calls the route in this process.
//! - [`dns`]: name rules and the zone mapping, the wire numbers, the client transport, the SOA probe.
//! - Shared by all: [`defaults`] (listen address, zone, TTLs, limits, environment names), [`output`]
//!   (the JSON format number, stable JSON, reports, and `output::text`: values quoted in messages, cut
//!   to a bound), [`error`] (classes and exit codes; a leaf: each wing turns its own errors into an
//!   `AppError` at its edge), [`digest`], and [`sys`], the host layer (atomic writes, users, locks, the
//!   platform, systemd's version and unit state, systemd-resolved's settings as systemd reads them,
//!   running programs).
//!
//! The binary is `src/cli/` (`main.rs`, the argument grammar in `args.rs`, the help pages in `docs/`).
//!
//! The surface: the modules the binary, the integration tests (`tests/it`, `tests/labs`) and the fuzz
//! targets (`tests/fuzz`) use are `pub`; the rest (`serve::transfer`, `serve::sd_notify`,
//! `zone::reverse`, `zone::view_error`, `dns::wire`, `route`'s hosts reading, `sys::resolved_conf`) is
//! the crate's own.
//!
//! Modules with children are folders with a `mod.rs`. Unit tests sit inline in a `#[cfg(test)] mod
//! tests` up to about 150 lines; a longer test module is its own file, the child `tests` of the module
//! it tests (`x/tests.rs`, or `x/tests/mod.rs` when it has parts).

pub mod commands;
pub mod defaults;
pub mod digest;
pub mod dns;
pub mod error;
pub mod input;
pub mod output;
pub mod route;
pub mod serve;
pub mod service;
pub mod store;
pub mod sys;
pub mod zone;
