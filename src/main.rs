//! The `pigsty-dns` command line: parse arguments, call the library, map errors to exit codes and to
//! `error:` / `next:` lines (or a JSON error object with `--json`).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

use pigsty_dns::commands::{self, ExportFormat, LoadOptions, ZoneOf};
use pigsty_dns::daemon::{self, ServeOptions};
use pigsty_dns::defaults::{
    ENV_LISTEN, ENV_LOG, ENV_ZONE, LISTEN_STR, NEGATIVE_TTL, TCP_IDLE_TIMEOUT_SECS,
    TCP_MAX_CONNECTIONS, TTL, ZONE,
};
use pigsty_dns::error::{AppError, Class, zone_arg};
use pigsty_dns::output::{Report, to_json};
use pigsty_dns::route::RouteCommand;
use pigsty_dns::store;

#[derive(Parser)]
#[command(
    name = "pigsty-dns",
    version,
    about = "Authoritative DNS for the pigsty.test sandbox zone on loopback"
)]
struct Cli {
    /// Machine-readable output (and errors as {"error", "message", "next"}).
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args)]
struct StateArgs {
    /// State directory [default: $PIGSTY_DNS_STATE_DIR, else the platform state dir]
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Answer the zone on loopback (UDP and TCP) from the newest good generation, swapping in new ones.
    Serve {
        /// Address to listen on, UDP and TCP; repeat for more (loopback only).
        #[arg(long, env = ENV_LISTEN, default_value = LISTEN_STR, value_delimiter = ',')]
        listen: Vec<SocketAddr>,
        /// Store FILE as a new generation first (as `load` does).
        #[arg(long, value_name = "FILE")]
        records: Option<PathBuf>,
        /// Also watch the --records file and load it again whenever it changes.
        #[arg(long)]
        follow: bool,
        #[arg(long, env = ENV_ZONE, default_value = ZONE)]
        zone: String,
        /// TTL for generations stored from --records.
        #[arg(long, default_value_t = TTL)]
        ttl: u32,
        /// Negative TTL for generations stored from --records.
        #[arg(long, default_value_t = NEGATIVE_TTL)]
        negative_ttl: u32,
        /// Close a TCP connection idle this many seconds (half that while more than half the slots are taken).
        #[arg(long, default_value_t = TCP_IDLE_TIMEOUT_SECS)]
        tcp_idle_timeout: u64,
        /// Concurrent TCP connections; at the cap a new one takes the slot of the one idle the longest.
        #[arg(long, default_value_t = TCP_MAX_CONNECTIONS)]
        tcp_max_connections: usize,
        #[arg(long, value_enum, default_value = "text")]
        log_format: LogFormat,
        /// Let this loopback address transfer the zones (AXFR/IXFR over TCP); repeat for more. Off by default.
        #[arg(long, value_name = "ADDR")]
        allow_transfer: Vec<std::net::IpAddr>,
        /// Send NOTIFY to this loopback secondary on every swap; repeat for more.
        #[arg(long, value_name = "ADDR:PORT")]
        notify: Vec<SocketAddr>,
        /// Require transfers to be signed with this TSIG key (hmac-sha256; a BIND or Knot key file, mode 0600).
        #[arg(long, value_name = "FILE")]
        tsig_key: Option<PathBuf>,
        #[command(flatten)]
        state: StateArgs,
    },
    /// Show the running server's serial, records, errors and counters, checked with a live SOA probe.
    Status {
        /// The server to probe [default: the address this state dir's server bound, else $PIGSTY_DNS_LISTEN, else 127.0.0.1:5354]
        #[arg(long)]
        server: Option<SocketAddr>,
        #[arg(long, env = ENV_ZONE, default_value = ZONE)]
        zone: String,
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
        /// Write to FILE (atomically) instead of stdout.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        state: StateArgs,
    },
    /// Validate a host-names.yml and show what would be served; writes nothing.
    Check {
        file: PathBuf,
        #[arg(long, env = ENV_ZONE, default_value = ZONE)]
        zone: String,
    },
    /// Validate a host-names.yml and store it as a new generation.
    Load {
        file: PathBuf,
        #[arg(long, env = ENV_ZONE, default_value = ZONE)]
        zone: String,
        /// TTL of served records, seconds.
        #[arg(long, default_value_t = TTL)]
        ttl: u32,
        /// Negative-caching TTL (SOA MINIMUM), seconds.
        #[arg(long, default_value_t = NEGATIVE_TTL)]
        negative_ttl: u32,
        /// Show the diff and stop before storing.
        #[arg(long)]
        dry_run: bool,
        /// The server to confirm with [default: the address this state dir's server bound, else $PIGSTY_DNS_LISTEN, else 127.0.0.1:5354]
        #[arg(long)]
        server: Option<SocketAddr>,
        /// Fail (exit 5) unless a server is serving the new serial within about 5 s.
        #[arg(long)]
        require_live: bool,
        /// Then poll this host's resolver (getent ahostsv4; macOS dscacheutil) for each changed name until it shows the new answer, at most the cache bound + 5 s; exit 5 if one does not.
        #[arg(long)]
        wait_visible: bool,
        #[command(flatten)]
        state: StateArgs,
    },
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
}

fn run(cli: &Cli) -> Result<Report, AppError> {
    match &cli.command {
        Command::Check { file, zone } => commands::check::run(file, &zone_arg(zone)?),
        Command::Load {
            file,
            zone,
            ttl,
            negative_ttl,
            dry_run,
            server,
            require_live,
            wait_visible,
            state,
        } => commands::load::run(&LoadOptions {
            path: file,
            zone: &zone_arg(zone)?,
            state_dir: state.state_dir.as_deref(),
            ttl: *ttl,
            negative_ttl: *negative_ttl,
            dry_run: *dry_run,
            server: *server,
            require_live: *require_live,
            wait_visible: *wait_visible,
        }),
        Command::Serve {
            listen,
            records,
            follow,
            zone,
            ttl,
            negative_ttl,
            tcp_idle_timeout,
            tcp_max_connections,
            log_format,
            allow_transfer,
            notify,
            tsig_key,
            state,
        } => {
            let zone = zone_arg(zone)?;
            init_logging(*log_format);
            daemon::run(ServeOptions {
                listen: listen.clone(),
                records: records.clone(),
                follow: *follow,
                state_dir: state.state_dir.clone(),
                zone,
                ttl: *ttl,
                negative_ttl: *negative_ttl,
                tcp_idle_timeout: Duration::from_secs(*tcp_idle_timeout),
                tcp_max_connections: *tcp_max_connections,
                allow_transfer: allow_transfer.clone(),
                notify: notify.clone(),
                tsig_key: tsig_key.clone(),
            })?;
            Ok(Report::same(""))
        }
        Command::Status {
            server,
            zone,
            state,
        } => {
            let root = store::resolve(state.state_dir.as_deref())?;
            commands::status::run(&root, *server, &zone_arg(zone)?)
        }
        Command::Export {
            serial,
            format,
            zone_of,
            output,
            state,
        } => commands::export::run(
            state.state_dir.as_deref(),
            *serial,
            *format,
            *zone_of,
            output.as_deref(),
        ),
        Command::History { state } => commands::history::run(state.state_dir.as_deref()),
        Command::Rollback {
            serial,
            dry_run,
            state,
        } => commands::rollback::run(*serial, state.state_dir.as_deref(), *dry_run),
        Command::Route { cmd } => pigsty_dns::route::run(cmd),
        Command::Service(cmd) => pigsty_dns::service::run(cmd),
    }
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env(ENV_LOG)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

fn report(e: &AppError, json: bool) -> ExitCode {
    if let Some(r) = e.report.as_ref().filter(|_| !json) {
        print!("{r}");
    }
    if json {
        print!("{}", to_json(e));
    } else {
        eprintln!("error: {}", e.message);
        eprintln!("next: {}", e.next);
    }
    ExitCode::from(e.class.exit_code() as u8)
}

fn main() -> ExitCode {
    let json_wanted = std::env::args().any(|a| a == "--json");
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                };
            }
            let text = e.to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ")
                .to_string();
            return report(
                &AppError::new(
                    Class::Usage,
                    first,
                    "run pigsty-dns --help (or pigsty-dns COMMAND --help)",
                ),
                json_wanted,
            );
        }
    };
    match run(&cli) {
        Ok(report) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error worth a message.
            // The text form is written from the report itself: at 100,000 names it is megabytes.
            let rendered;
            let out = if cli.json {
                rendered = report.render(true);
                rendered.as_bytes()
            } else {
                report.text.as_bytes()
            };
            let _ = stdout.write_all(out);
            // The process ends here: freeing a 100,000-name generation piece by piece only costs time.
            std::mem::forget(report);
            ExitCode::SUCCESS
        }
        Err(e) => report(&e, cli.json),
    }
}
