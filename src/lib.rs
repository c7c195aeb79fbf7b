//! pigsty-dns: an authoritative DNS server for one private zone on loopback, and the tools around it.

pub mod answer;
pub mod commands;
pub mod defaults;
pub mod digest;
pub mod error;
pub mod generation;
pub mod inventory;
pub mod name;
pub mod notify;
pub mod output;
pub mod probe;
pub mod records;
pub mod route;
pub mod serve;
pub mod server;
pub mod service;
pub mod status;
pub mod status_file;
pub mod store;
pub mod sys;
pub mod transport;
pub mod watch;
mod wire;
pub mod yaml;
pub mod zone_view;
