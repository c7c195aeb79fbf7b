//! The `pigsty-dns` command line: parse arguments, call the library, map errors to exit codes and to
//! `error:` / `next:` lines (or a JSON error object with `--json`).

mod args;
mod docs;

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use args::{Cli, Command, LoadArgs, LogFormat, ServeArgs};
use pigsty_dns::commands::{self, LoadOptions};
use pigsty_dns::defaults::ENV_LOG;
use pigsty_dns::dns::name::zones_arg;
use pigsty_dns::error::{AppError, Class};
use pigsty_dns::input::inventory::Reading;
use pigsty_dns::output::{Report, to_json};
use pigsty_dns::serve::daemon::{self, ServeOptions};
use pigsty_dns::store;

fn run(cli: &Cli) -> Result<Report, AppError> {
    match &cli.command {
        Command::Check {
            file,
            zone,
            identity_only,
            entry,
        } => commands::check::run(
            file,
            &zones_arg(zone)?,
            reading(*identity_only, entry.as_deref()),
        ),
        Command::Load(a) => load(a),
        Command::Serve(a) => serve(a),
        Command::Status {
            server,
            zone,
            state,
        } => {
            let root = store::resolve(state.state_dir.as_deref())?;
            commands::status::run(&root, *server, &zones_arg(zone)?)
        }
        Command::Export {
            serial,
            format,
            zone_of,
            zone,
            output,
            state,
        } => commands::export::run(
            state.state_dir.as_deref(),
            *serial,
            *format,
            *zone_of,
            zone.as_deref(),
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
        Command::Completions { shell } => Ok(docs::completions(*shell)),
        Command::Man { dir } => docs::man(dir),
    }
}

/// `load`: its flags as the library's options.
fn load(a: &LoadArgs) -> Result<Report, AppError> {
    commands::load::run(&LoadOptions {
        path: &a.file,
        zone: &zones_arg(&a.zone)?,
        state_dir: a.state.state_dir.as_deref(),
        ttl: a.ttl,
        negative_ttl: a.negative_ttl,
        reading: reading(a.identity_only, a.entry.as_deref()),
        dry_run: a.dry_run,
        server: a.server,
        require_live: a.require_live,
        wait_visible: a.wait_visible,
    })
}

/// `--identity-only` or `--entry` as the way a file is read (clap keeps the two apart).
fn reading(identity_only: bool, entry: Option<&str>) -> Reading {
    match (identity_only, entry) {
        (true, _) => Reading::IdentityOnly,
        (false, Some(e)) => Reading::Entry(e.to_string()),
        (false, None) => Reading::Auto,
    }
}

/// `serve`: logging on, then the daemon until it stops.
fn serve(a: &ServeArgs) -> Result<Report, AppError> {
    let zone = zones_arg(&a.zone)?;
    init_logging(a.log_format);
    daemon::run(ServeOptions {
        listen: a.listen.clone(),
        records: a.records.clone(),
        follow: a.follow,
        state_dir: a.state.state_dir.clone(),
        zone,
        ttl: a.ttl,
        negative_ttl: a.negative_ttl,
        reading: reading(a.identity_only, a.entry.as_deref()),
        tcp_idle_timeout: Duration::from_secs(a.tcp_idle_timeout),
        tcp_max_connections: a.tcp_max_connections,
        allow_transfer: a.allow_transfer.clone(),
        notify: a.notify.clone(),
        tsig_key: a.tsig_key.clone(),
    })?;
    Ok(Report::same(""))
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env(ENV_LOG)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| pigsty_dns::output::text::LogLines(std::io::stderr()))
        .with_ansi(ansi);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

fn report(e: &AppError, json: bool) -> ExitCode {
    use pigsty_dns::output::text::{for_terminal, json_inert, one_line};
    if let Some(r) = e.report.as_ref().filter(|_| !json) {
        print!("{}", for_terminal(r));
    }
    if json {
        print!("{}", json_inert(to_json(&e.json())));
    } else {
        // One line each, whatever a value in them holds; a file's problems each get their pair.
        for p in e.problems() {
            eprintln!("error: {}", one_line(&p.message));
            eprintln!("next: {}", one_line(&p.next));
        }
    }
    ExitCode::from(e.class.exit_code() as u8)
}

fn main() -> ExitCode {
    let json_wanted = std::env::args_os().any(|a| a == "--json");
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
            // Both forms pass the terminal gate (text::for_terminal, text::json_inert): a value that
            // was not escaped where it was quoted still cannot act on the terminal.
            let rendered;
            let out = if cli.json {
                rendered = report.render(true);
                std::borrow::Cow::Borrowed(rendered.as_str())
            } else {
                pigsty_dns::output::text::for_terminal(&report.text)
            };
            let _ = stdout.write_all(out.as_bytes());
            // The process ends here: freeing a 100,000-name generation piece by piece only costs time.
            std::mem::forget(report);
            ExitCode::SUCCESS
        }
        Err(e) => report(&e, cli.json),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_names_the_version_and_the_commit_when_built_from_git() {
        let e = Cli::try_parse_from(["pigsty-dns", "--version"])
            .err()
            .expect("--version stops the parse");
        assert_eq!(e.kind(), clap::error::ErrorKind::DisplayVersion);
        let shown = e.to_string();
        let head = std::process::Command::new("git")
            .args(["-C", env!("CARGO_MANIFEST_DIR")])
            .args(["rev-parse", "--short=12", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        let want = match head {
            Some(commit) => format!("pigsty-dns {} (git {commit})\n", env!("CARGO_PKG_VERSION")),
            None => format!("pigsty-dns {}\n", env!("CARGO_PKG_VERSION")),
        };
        assert_eq!(shown, want);
    }
}
