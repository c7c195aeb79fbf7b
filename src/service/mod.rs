//! `pigsty-dns service install | uninstall | status`: render the unit from `deploy/`, put it in place,
//! start it and wait until it answers; remove it in the safe order (route first); report its state.
//! Every host effect goes through `host::Host` (a command runner, the route seam, the SOA probe, a
//! file-system prefix), so the logic is unit-tested without touching systemd or launchd.
//!
//! The rooms: `cli` (flags) → `install` / `uninstall` / `status` (one command each), which build
//! `steps` (what would be done, for `--dry-run`) from `systemd` / `launchd` / `render` / `ports`, and
//! hand them to `execute`; all of them see the machine only through `host` and `route_seam`.

pub mod cli;
pub mod execute;
pub mod host;
pub mod install;
pub mod launchd;
pub mod ports;
pub mod render;
pub mod route_seam;
pub mod status;
pub mod steps;
pub mod systemd;
pub mod uninstall;

pub use cli::{Common, InstallArgs, ServiceCommand, StatusArgs, UninstallArgs};

use crate::error::AppError;
use crate::output::Report;

pub fn run(cmd: &ServiceCommand) -> Result<Report, AppError> {
    host::with_real(|host| match cmd {
        ServiceCommand::Install(a) => install::install(host, a),
        ServiceCommand::Uninstall(a) => uninstall::uninstall(host, a),
        ServiceCommand::Status(a) => status::status(host, a),
    })
}

#[cfg(test)]
mod tests;
