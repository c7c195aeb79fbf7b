//! The `pigsty-dns` command line: parse arguments, call the library, map errors to exit codes and to
//! `error:` / `next:` lines (or a JSON error object with `--json`).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

use pigsty_dns::commands::{self, ExportFormat, LoadOptions};
use pigsty_dns::error::{AppError, Class};
use pigsty_dns::generation::{DEFAULT_NEGATIVE_TTL, DEFAULT_TTL};
use pigsty_dns::name::DEFAULT_ZONE;
use pigsty_dns::route::RouteCommand;
use pigsty_dns::serve::{self, ServeOptions};
use pigsty_dns::status::{self, Liveness};
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
        #[arg(
            long,
            env = "PIGSTY_DNS_LISTEN",
            default_value = "127.0.0.1:5353",
            value_delimiter = ','
        )]
        listen: Vec<SocketAddr>,
        /// Store FILE as a new generation first (as `load` does).
        #[arg(long, value_name = "FILE")]
        records: Option<PathBuf>,
        /// Also watch the --records file and load it again whenever it changes.
        #[arg(long)]
        follow: bool,
        #[arg(long, env = "PIGSTY_DNS_ZONE", default_value = DEFAULT_ZONE)]
        zone: String,
        /// TTL for generations stored from --records.
        #[arg(long, default_value_t = DEFAULT_TTL)]
        ttl: u32,
        /// Negative TTL for generations stored from --records.
        #[arg(long, default_value_t = DEFAULT_NEGATIVE_TTL)]
        negative_ttl: u32,
        /// Close a TCP connection idle this many seconds.
        #[arg(long, default_value_t = 10)]
        tcp_idle_timeout: u64,
        /// Concurrent TCP connections; more are closed at once.
        #[arg(long, default_value_t = 128)]
        tcp_max_connections: usize,
        #[arg(long, value_enum, default_value = "text")]
        log_format: LogFormat,
        #[command(flatten)]
        state: StateArgs,
    },
    /// Show the running server's serial, records, errors and counters, checked with a live SOA probe.
    Status {
        /// The server to probe [default: the address this state dir's server bound, else $PIGSTY_DNS_LISTEN, else 127.0.0.1:5353]
        #[arg(long)]
        server: Option<SocketAddr>,
        #[arg(long, env = "PIGSTY_DNS_ZONE", default_value = DEFAULT_ZONE)]
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
        /// Write to FILE (atomically) instead of stdout.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        state: StateArgs,
    },
    /// Validate a host-names.yml and show what would be served; writes nothing.
    Check {
        file: PathBuf,
        #[arg(long, env = "PIGSTY_DNS_ZONE", default_value = DEFAULT_ZONE)]
        zone: String,
    },
    /// Validate a host-names.yml and store it as a new generation.
    Load {
        file: PathBuf,
        #[arg(long, env = "PIGSTY_DNS_ZONE", default_value = DEFAULT_ZONE)]
        zone: String,
        /// TTL of served records, seconds.
        #[arg(long, default_value_t = DEFAULT_TTL)]
        ttl: u32,
        /// Negative-caching TTL (SOA MINIMUM), seconds.
        #[arg(long, default_value_t = DEFAULT_NEGATIVE_TTL)]
        negative_ttl: u32,
        /// Show the diff and stop before storing.
        #[arg(long)]
        dry_run: bool,
        /// The server to confirm with [default: the address this state dir's server bound, else $PIGSTY_DNS_LISTEN, else 127.0.0.1:5353]
        #[arg(long)]
        server: Option<SocketAddr>,
        /// Fail (exit 5) unless a server is serving the new serial within about 5 s.
        #[arg(long)]
        require_live: bool,
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

fn run(cli: &Cli) -> Result<String, AppError> {
    match &cli.command {
        Command::Check { file, zone } => {
            commands::check(file, &commands::parse_zone(zone)?, cli.json)
        }
        Command::Load {
            file,
            zone,
            ttl,
            negative_ttl,
            dry_run,
            server,
            require_live,
            state,
        } => {
            let zone = commands::parse_zone(zone)?;
            let opts = LoadOptions {
                path: file,
                zone: &zone,
                state_dir: state.state_dir.as_deref(),
                ttl: *ttl,
                negative_ttl: *negative_ttl,
                dry_run: *dry_run,
            };
            let (text, stored) = commands::load(&opts, cli.json)?;
            let Some(g) = stored else { return Ok(text) };
            let root = store::resolve(state.state_dir.as_deref())?;
            let addr = status::server_addr(*server, Some(&root));
            // Without --server, only a server recorded as running for this state dir can serve it.
            let known = server.is_some() || status::running(&root).is_some();
            confirm_live(text, &g, addr, &root, &zone, known, *require_live, cli.json)
        }
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
            state,
        } => {
            init_logging(*log_format);
            serve::run(ServeOptions {
                listen: listen.clone(),
                records: records.clone(),
                follow: *follow,
                state_dir: state.state_dir.clone(),
                zone: commands::parse_zone(zone)?,
                ttl: *ttl,
                negative_ttl: *negative_ttl,
                tcp_idle_timeout: Duration::from_secs(*tcp_idle_timeout),
                tcp_max_connections: *tcp_max_connections,
            })?;
            Ok(String::new())
        }
        Command::Status {
            server,
            zone,
            state,
        } => {
            let root = store::resolve(state.state_dir.as_deref())?;
            status::command(&root, *server, &commands::parse_zone(zone)?, cli.json)
        }
        Command::Export {
            serial,
            format,
            output,
            state,
        } => commands::export(
            state.state_dir.as_deref(),
            *serial,
            *format,
            output.as_deref(),
        ),
        Command::History { state } => commands::history(state.state_dir.as_deref(), cli.json),
        Command::Rollback {
            serial,
            dry_run,
            state,
        } => commands::rollback(*serial, state.state_dir.as_deref(), *dry_run, cli.json)
            .map(|(text, _)| text),
        Command::Route { cmd } => pigsty_dns::route::run(cmd, cli.json),
        Command::Service(cmd) => pigsty_dns::service::run(cmd).map(|r| r.render(cli.json)),
    }
}

/// After a store: ask the server until it serves the new serial (bounded), and say what happened.
#[allow(clippy::too_many_arguments)]
fn confirm_live(
    text: String,
    g: &pigsty_dns::generation::Generation,
    addr: SocketAddr,
    root: &std::path::Path,
    zone: &pigsty_dns::name::Zone,
    probe: bool,
    require_live: bool,
    json: bool,
) -> Result<String, AppError> {
    let liveness = if probe {
        status::wait_live(addr, zone, g.serial, Duration::from_secs(5))?
    } else {
        Liveness::NoServer(format!(
            "no pigsty-dns serve is running for {}",
            root.display()
        ))
    };
    let (word, line) = match &liveness {
        Liveness::Live => ("live", format!("live (serial {}) at {addr}\n", g.serial)),
        Liveness::NoServer(why) => (
            "not-running",
            format!("stored; {why}: it will be served when pigsty-dns serve starts\n"),
        ),
        Liveness::Stale(seen) => (
            "stale",
            format!("the server at {addr} still serves serial {seen}\n"),
        ),
        Liveness::NotThisZone(why) => (
            "other-zone",
            format!("the server at {addr} does not serve zone {zone}: {why}\n"),
        ),
    };
    let text = if json {
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        v["live"] = serde_json::Value::from(word);
        v["server"] = serde_json::Value::from(addr.to_string());
        commands::to_json(&v)
    } else {
        format!("{text}{line}")
    };
    match liveness {
        Liveness::Live => Ok(text),
        Liveness::NoServer(why) if require_live => {
            let mut e = AppError::new(
                Class::Partial,
                format!("serial {} is stored but not live: {why}", g.serial),
                "start it: pigsty-dns serve (or give --server)",
            );
            e.report = Some(text);
            Err(e)
        }
        Liveness::NoServer(_) => Ok(text),
        Liveness::Stale(_) | Liveness::NotThisZone(_) => {
            let still = match &liveness {
                Liveness::Stale(seen) => format!("still serves serial {seen}"),
                _ => format!("does not serve zone {zone}"),
            };
            let reason = status::read(root)
                .and_then(|s| s.last_error)
                .unwrap_or_else(|| {
                    "the server gave no reason (is it serving another state dir?)".into()
                });
            let mut e = AppError::new(
                Class::Partial,
                format!(
                    "serial {} is stored, but the server at {addr} {still}: {reason}",
                    g.serial
                ),
                "see pigsty-dns status; fix the cause and load again",
            );
            e.report = Some(text);
            Err(e)
        }
    }
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PIGSTY_DNS_LOG")
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
        print!("{}", commands::to_json(e));
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
        Ok(text) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) is not an error worth a message.
            let _ = stdout.write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => report(&e, cli.json),
    }
}
