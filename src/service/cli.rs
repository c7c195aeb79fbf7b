//! The command line of `pigsty-dns service`: the subcommands and their flags, nothing else.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::defaults::{ENV_LISTEN, ENV_ZONE, LISTEN_STR, ZONES};

#[derive(clap::Subcommand)]
pub enum ServiceCommand {
    /// Install the unit (systemd user unit, or launchd LaunchAgent), start it, wait until it answers.
    Install(InstallArgs),
    /// Stop and remove the unit (a route must go first: --with-route); the records stay unless --purge.
    Uninstall(UninstallArgs),
    /// The unit's state, PID and restarts, and the daemon's own status.
    Status(StatusArgs),
}

#[derive(clap::Args)]
pub struct Common {
    /// The systemd system unit (with User=) instead of the user unit; needs root. Linux only.
    #[arg(long)]
    pub system: bool,
    /// State directory [user unit: $PIGSTY_DNS_STATE_DIR, else the platform state dir; system unit: /var/lib/pigsty-dns]
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// A served zone; repeat it (or list them comma-separated) for several. The first takes single labels.
    #[arg(long, env = ENV_ZONE, value_delimiter = ',', default_values = ZONES, value_name = "ZONE")]
    pub zone: Vec<String>,
}

#[derive(clap::Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub common: Common,
    /// Address the service listens on, UDP and TCP (loopback; never 5353 on macOS, nor on Linux where
    /// an mDNS stack runs).
    #[arg(long, env = ENV_LISTEN, default_value = LISTEN_STR, value_delimiter = ',')]
    pub listen: Vec<SocketAddr>,
    /// The system unit's User= (an existing account; not root).
    #[arg(long, value_name = "NAME")]
    pub user: Option<String>,
    /// The binary the unit runs [default: this one]; made absolute.
    #[arg(long, value_name = "PATH")]
    pub program: Option<PathBuf>,
    /// Seconds to wait for the started service to answer the zone SOA.
    #[arg(long, default_value_t = 20)]
    pub wait: u64,
    /// Print what would be written and run, and stop.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(clap::Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub common: Common,
    /// If a route is installed, remove it first (and check it is gone) before stopping the server.
    #[arg(long)]
    pub with_route: bool,
    /// Also remove the state directory (the stored records).
    #[arg(long)]
    pub purge: bool,
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub common: Common,
}
