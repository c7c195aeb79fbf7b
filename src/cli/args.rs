//! The clap definitions of the `pigsty-dns` command line (binary-only): every command, flag and help
//! text. The completions and man pages (`docs`) are generated from these, so they cannot drift.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use pigsty_dns::commands::{ExportFormat, ZoneOf};
use pigsty_dns::defaults::{
    ENV_LISTEN, ENV_ZONE, LISTEN_STR, NEGATIVE_TTL, TCP_IDLE_TIMEOUT_SECS, TCP_MAX_CONNECTIONS,
    TTL, ZONES,
};
use pigsty_dns::route::RouteCommand;

#[derive(Parser)]
#[command(
    name = "pigsty-dns",
    // the version, and the commit when built from git (build.rs)
    version = env!("PIGSTY_DNS_VERSION"),
    about = "Authoritative DNS for the sandbox zones (pigsty.test, pigsty) on loopback"
)]
pub struct Cli {
    /// Machine-readable output (and errors as {"error", "message", "next"}).
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(clap::Args)]
pub struct StateArgs {
    /// State directory [default: $PIGSTY_DNS_STATE_DIR, else the platform state dir]
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
pub enum Command {
    /// Answer the zone on loopback (UDP and TCP) from the newest good generation, swapping in new ones.
    Serve(ServeArgs),
    /// Show the running server's serial, records, errors and counters, checked with a live SOA probe.
    Status {
        /// The server to probe [default: the address this state dir's server bound, else $PIGSTY_DNS_LISTEN, else 127.0.0.1:5354]
        #[arg(long)]
        server: Option<SocketAddr>,
        /// A served zone; repeat it (or list them comma-separated) for several. The first takes single labels.
        #[arg(long, env = ENV_ZONE, value_delimiter = ',', default_values = ZONES, value_name = "ZONE")]
        zone: Vec<String>,
        #[command(flatten)]
        state: StateArgs,
    },
    /// Write the live (or given) generation as a zone file, hosts lines or JSON.
    Export {
        #[arg(long)]
        serial: Option<u32>,
        #[arg(long, value_enum, default_value = "zone")]
        format: ExportFormat,
        /// With --format zone: the forward zone, or the reverse zone of the managed /24.
        #[arg(long, value_enum, default_value = "forward")]
        zone_of: ZoneOf,
        /// With --format zone: the served zone to write (needed when the generation serves several;
        /// a zone file holds one).
        #[arg(long, value_name = "ZONE")]
        zone: Option<String>,
        /// Write to FILE (atomically) instead of stdout.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        state: StateArgs,
    },
    /// Validate a host-names.yml and show what would be served; writes nothing.
    Check {
        file: PathBuf,
        /// A served zone; repeat it (or list them comma-separated) for several. The first takes single labels.
        #[arg(long, env = ENV_ZONE, value_delimiter = ',', default_values = ZONES, value_name = "ZONE")]
        zone: Vec<String>,
        /// Read only the VM identities and vm_hosts, even from a Pigsty config.
        #[arg(long)]
        identity_only: bool,
        /// In a Pigsty config with several infra nodes that would publish differently: the one whose
        /// DNS and portal the host uses, by its name (nodename, else <pg_cluster>-<pg_seq>, else
        /// node-<last octet>) or its address.
        #[arg(long, value_name = "NODE", conflicts_with = "identity_only")]
        entry: Option<String>,
    },
    /// Validate a host-names.yml and store it as a new generation.
    Load(LoadArgs),
    /// List the stored generations, newest first, with their status.
    History {
        #[command(flatten)]
        state: StateArgs,
    },
    /// Re-seal the records of SERIAL as a new, higher serial.
    Rollback {
        serial: u32,
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        state: StateArgs,
    },
    /// Route the zone from the system resolver to the daemon: install, uninstall, status.
    Route {
        #[command(subcommand)]
        cmd: RouteCommand,
    },
    /// Run the server as a systemd or launchd service: install, uninstall, status.
    #[command(subcommand)]
    Service(pigsty_dns::service::ServiceCommand),
    /// Print the shell completion script for SHELL (e.g. `pigsty-dns completions bash`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write the man pages (pigsty-dns.1 and one per subcommand) into DIR; packaging runs it.
    Man {
        /// Directory to write the pages into (created if missing).
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
}

// `serve`'s flags (a plain comment: a doc comment here would become help text).
#[derive(clap::Args)]
pub struct ServeArgs {
    /// Address to listen on, UDP and TCP; repeat for more (loopback only).
    #[arg(long, env = ENV_LISTEN, default_value = LISTEN_STR, value_delimiter = ',')]
    pub listen: Vec<SocketAddr>,
    /// Store FILE as a new generation first (as `load` does).
    #[arg(long, value_name = "FILE")]
    pub records: Option<PathBuf>,
    /// Also watch the --records file and load it again whenever it changes.
    #[arg(long)]
    pub follow: bool,
    /// A served zone; repeat it (or list them comma-separated) for several. The first takes single labels.
    #[arg(long, env = ENV_ZONE, value_delimiter = ',', default_values = ZONES, value_name = "ZONE")]
    pub zone: Vec<String>,
    /// TTL for generations stored from --records.
    #[arg(long, default_value_t = TTL)]
    pub ttl: u32,
    /// Negative TTL for generations stored from --records.
    #[arg(long, default_value_t = NEGATIVE_TTL)]
    pub negative_ttl: u32,
    /// Read only the VM identities and vm_hosts of --records, even from a Pigsty config.
    #[arg(long)]
    pub identity_only: bool,
    /// In a Pigsty config with several infra nodes that would publish differently: the one whose DNS
    /// and portal the host uses, by its name (nodename, else <pg_cluster>-<pg_seq>, else
    /// node-<last octet>) or its address.
    #[arg(long, value_name = "NODE", conflicts_with = "identity_only")]
    pub entry: Option<String>,
    /// Close a TCP connection idle this many seconds (half that while more than half the slots are taken).
    #[arg(long, default_value_t = TCP_IDLE_TIMEOUT_SECS)]
    pub tcp_idle_timeout: u64,
    /// Concurrent TCP connections; at the cap a new one takes the slot of the one idle the longest.
    #[arg(long, default_value_t = TCP_MAX_CONNECTIONS)]
    pub tcp_max_connections: usize,
    #[arg(long, value_enum, default_value = "text")]
    pub log_format: LogFormat,
    /// Let this loopback address transfer the zones (AXFR/IXFR over TCP); repeat for more. Off by default.
    #[arg(long, value_name = "ADDR")]
    pub allow_transfer: Vec<std::net::IpAddr>,
    /// Send NOTIFY to this loopback secondary on every swap; repeat for more.
    #[arg(long, value_name = "ADDR:PORT")]
    pub notify: Vec<SocketAddr>,
    /// Require transfers to be signed with this TSIG key (hmac-sha256; a BIND or Knot key file, mode 0600).
    #[arg(long, value_name = "FILE")]
    pub tsig_key: Option<PathBuf>,
    #[command(flatten)]
    pub state: StateArgs,
}

// `load`'s flags.
#[derive(clap::Args)]
pub struct LoadArgs {
    pub file: PathBuf,
    /// A served zone; repeat it (or list them comma-separated) for several. The first takes single labels.
    #[arg(long, env = ENV_ZONE, value_delimiter = ',', default_values = ZONES, value_name = "ZONE")]
    pub zone: Vec<String>,
    /// TTL of served records, seconds.
    #[arg(long, default_value_t = TTL)]
    pub ttl: u32,
    /// Negative-caching TTL (SOA MINIMUM), seconds.
    #[arg(long, default_value_t = NEGATIVE_TTL)]
    pub negative_ttl: u32,
    /// Read only the VM identities and vm_hosts, even from a Pigsty config.
    #[arg(long)]
    pub identity_only: bool,
    /// In a Pigsty config with several infra nodes that would publish differently: the one whose DNS
    /// and portal the host uses, by its name (nodename, else <pg_cluster>-<pg_seq>, else
    /// node-<last octet>) or its address.
    #[arg(long, value_name = "NODE", conflicts_with = "identity_only")]
    pub entry: Option<String>,
    /// Show the diff and stop before storing.
    #[arg(long)]
    pub dry_run: bool,
    /// The server to confirm with [default: the address this state dir's server bound, else $PIGSTY_DNS_LISTEN, else 127.0.0.1:5354]
    #[arg(long)]
    pub server: Option<SocketAddr>,
    /// Fail (exit 5) unless a server is serving the new serial within about 5 s.
    #[arg(long)]
    pub require_live: bool,
    /// Then poll this host's resolver (getent ahostsv4; macOS dscacheutil) for each changed name until it shows the new answer, at most the cache bound + 5 s; exit 5 if one does not.
    #[arg(long)]
    pub wait_visible: bool,
    #[command(flatten)]
    pub state: StateArgs,
}
