//! pigsty-dns: an authoritative DNS server for one private zone on loopback, and the tools around it.

pub mod answer;
pub mod commands;
pub mod daemon;
pub mod defaults;
pub mod digest;
pub mod error;
pub mod generation;
pub mod input;
pub mod inventory;
pub mod name;
pub mod output;
pub mod probe;
pub mod records;
pub mod reload;
pub mod route;
pub mod sd_notify;
pub mod server;
pub mod service;
pub mod status_file;
pub mod store;
pub mod sys;
pub mod transport;
pub mod yaml;

/// Transitional: the installers' old path to the status command and file (removed at the merge).
#[doc(hidden)]
pub mod status {
    pub use crate::status_file::{read, running};
    pub fn command(
        dir: &std::path::Path,
        server: Option<std::net::SocketAddr>,
        zone: &crate::name::Zone,
        json: bool,
    ) -> Result<String, crate::error::AppError> {
        crate::commands::status::run(dir, server, zone).map(|r| r.render(json))
    }
}
