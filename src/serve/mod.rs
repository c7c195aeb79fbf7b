//! `pigsty-dns serve`: the daemon (lock, bind, status file, signals), the hot swap of generations, the
//! sockets and loops, the pure answering rules, zone transfer, and the systemd readiness protocol.
//!
//! The rooms: `daemon` (the command) → `reload` (watch, verify, swap) and `net` (the UDP and TCP loops),
//! which hand each query to `answer` (every answering rule, one pure function) or, for a transfer
//! request, to `transfer` (AXFR, IXFR from the history, NOTIFY, TSIG); `sd_notify` tells systemd.

pub mod answer;
pub mod daemon;
pub mod net;
pub mod pass_budget;
pub mod reload;
mod sd_notify;
pub(crate) mod transfer;
