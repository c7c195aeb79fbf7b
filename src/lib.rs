//! pigsty-dns: an authoritative DNS server for one private zone on loopback, and the tools around it.
//!
//! # Where things live, and which way the data flows
//!
//! ```text
//! host-names.yml ─input─▶ yaml ─▶ inventory ─▶ records (RecordSet) ─▶ generation (sealed, digested)
//!                ─▶ store (state dir, atomic, never overwritten) ─▶ reload (watch, verify, swap)
//!                ─▶ zone_view (index + encoded apex) ─▶ server (UDP/TCP loops) ─▶ answer (pure)
//! ```
//!
//! - Input and records: [`input`] reads the file (bounded, regular files only), [`yaml`] is the strict
//!   streaming YAML reader, [`inventory`] Barn's inventory rules, [`name`] DNS name rules and the zone
//!   mapping, [`records`] address rules, conflicts and diffs.
//! - Generations: [`generation`] the sealed on-disk format and its digests, [`store`] the state
//!   directory (locks, history, pruning, and `store::place`, the one rule for where it is),
//!   [`zone_view`] the read-only view answered from (holding
//!   [`reverse_view`], the reverse zone of the same generation; [`view_error`] is why either refuses a
//!   generation), [`wire`] the
//!   DNS wire numbers shared by the view and the answering core.
//! - Serving: [`daemon`] the `serve` command (lock, bind, status file, signals), [`reload`] the hot swap,
//!   [`server`] sockets and loops, [`answer`] every answering rule as one pure function, [`sd_notify`]
//!   the systemd readiness protocol, [`transfer`] zone transfer to real secondaries (AXFR, IXFR from the
//!   history, NOTIFY, TSIG), which the loops route transfer requests to before the query rules.
//! - Commands that run and stop: [`commands`] (`check`, `load`, `history`, `rollback`, `export`,
//!   `status`), each returning an [`output::Report`].
//! - Installers: [`route`] (OS resolver → daemon) and [`service`] (systemd / launchd). They talk to the
//!   daemon only over DNS ([`probe`]) and through its status file ([`status_file`]); route also reads
//!   its stored generations for the reverse zone, and [`hosts`] (the hosts file and nsswitch.conf: what
//!   answers a name before the zone). `service uninstall` calls the route in this process.
//! - Shared by all: [`defaults`] (listen address, zone, TTLs, limits, environment names), [`output`]
//!   (the JSON format number, stable JSON, reports), [`error`] (classes and exit codes), [`digest`],
//!   [`transport`], [`resolved_conf`] (systemd-resolved's settings as systemd reads them), [`text`]
//!   (values quoted in messages, cut to a bound), and [`sys`], the host layer (atomic writes, users,
//!   locks, the platform, systemd's version and unit state, running programs).
//!
//! The surface: the modules the binary (`src/main.rs`), the integration tests (`tests/it`,
//! `tests/labs`) and the fuzz targets (`tests/fuzz`) use are `pub`; [`hosts`], [`input`],
//! [`resolved_conf`], [`reverse_view`], [`sd_notify`], [`transfer`], [`view_error`] and `wire` are
//! the crate's own.
//!
//! Unit tests sit inline in a `#[cfg(test)] mod tests` up to about 150 lines; a longer test module is
//! its own file, the child `tests` of the module it tests (`x/tests.rs`, `x/tests/` when it has parts).

pub mod answer;
pub mod commands;
pub mod daemon;
pub mod defaults;
pub mod digest;
pub mod error;
pub mod generation;
mod hosts;
mod input;
pub mod inventory;
pub mod name;
pub mod output;
pub mod probe;
pub mod records;
pub mod reload;
mod resolved_conf;
mod reverse_view;
pub mod route;
mod sd_notify;
pub mod server;
pub mod service;
pub mod status_file;
pub mod store;
pub mod sys;
pub mod text;
mod transfer;
pub mod transport;
mod view_error;
mod wire;
pub mod yaml;
pub mod zone_view;
