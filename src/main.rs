//! The `pigsty-dns` command line: parse arguments, call the library, map errors to exit codes and to
//! `error:` / `next:` lines (or a JSON error object with `--json`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use pigsty_dns::commands::{self, LoadOptions};
use pigsty_dns::error::{AppError, Class};
use pigsty_dns::generation::{DEFAULT_NEGATIVE_TTL, DEFAULT_TTL};
use pigsty_dns::name::DEFAULT_ZONE;
use pigsty_dns::route::RouteCommand;

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

#[derive(Subcommand)]
enum Command {
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
            commands::load(&opts, cli.json).map(|(text, _)| text)
        }
        Command::History { state } => commands::history(state.state_dir.as_deref(), cli.json),
        Command::Rollback {
            serial,
            dry_run,
            state,
        } => commands::rollback(*serial, state.state_dir.as_deref(), *dry_run, cli.json)
            .map(|(text, _)| text),
        Command::Route { cmd } => pigsty_dns::route::run(cmd, cli.json),
    }
}

fn report(e: &AppError, json: bool) -> ExitCode {
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
