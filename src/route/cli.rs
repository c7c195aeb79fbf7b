//! The `route` command line: its subcommands and the flag groups they share.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::adapter::link::{DEFAULT_LINK, DEFAULT_LINK_ADDRESS};
use super::adapter::{AdapterName, LinkKind, Variant};
use crate::defaults::{ENV_LISTEN, ENV_ZONE, LISTEN_STR, ZONES};

#[derive(Args, Debug, Clone)]
pub struct Where {
    /// Prefix for every path read or written (tests and the lab); the system sees /.
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub root: PathBuf,
    /// Journal directory [default: <root>/var/lib/pigsty-dns-route, on macOS
    /// <root>/Library/Application Support/pigsty-dns-route].
    #[arg(long, value_name = "DIR")]
    pub journal_dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct Checks {
    /// A name the daemon serves; verification resolves it through resolvectl and getent (macOS:
    /// dscacheutil).
    #[arg(long, value_name = "NAME")]
    pub check_name: Option<String>,
    /// The daemon's state dir: its status.json counters prove unrelated names stay away, and on macOS
    /// that zone lookups reach it [macOS default: $PIGSTY_DNS_STATE_DIR, else ~/Library/Application
    /// Support/pigsty-dns of the user who ran sudo].
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

#[derive(Subcommand, Debug, Clone)]
pub enum RouteCommand {
    /// Route the zone from the system resolver to the daemon (shows the plan first).
    Install {
        /// The daemon's address (the one `serve --listen` uses; never 5353 on macOS); recorded in the
        /// journal.
        #[arg(long, env = ENV_LISTEN, default_value = LISTEN_STR, value_parser = server_addr)]
        server: SocketAddr,
        /// A zone the daemon serves, each routed (repeat it, or list them comma-separated in the
        /// environment variable); the same set as `serve --zone`.
        #[arg(long, env = ENV_ZONE, value_delimiter = ',', default_values = ZONES)]
        zone: Vec<String>,
        /// Override detection. resolved-global sends every other name to the daemon too.
        #[arg(long, value_enum)]
        adapter: Option<AdapterName>,
        /// resolved-link: networkd files, or ip + resolvectl now plus a boot-time unit.
        #[arg(long, value_enum)]
        link_variant: Option<Variant>,
        /// resolved-link: the dedicated link's name.
        #[arg(long, default_value = DEFAULT_LINK)]
        link: String,
        /// resolved-link: the link's non-link-local address (refused if already in use).
        #[arg(long, default_value = DEFAULT_LINK_ADDRESS)]
        link_address: String,
        /// resolved-link: link driver [default: dummy, ifb where dummy is missing].
        #[arg(long, value_enum)]
        link_kind: Option<LinkKind>,
        /// Show the plan (every file and command) and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Do not ask (required without a terminal).
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        checks: Checks,
        #[command(flatten)]
        place: Where,
    },
    /// Remove what `route install` wrote (only what the journal lists and still matches).
    Uninstall {
        #[arg(long)]
        dry_run: bool,
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        place: Where,
    },
    /// Adapter, journal, drift, scope, daemon and an end-to-end lookup, each with a verdict.
    Status {
        #[command(flatten)]
        checks: Checks,
        #[command(flatten)]
        place: Where,
    },
}

impl RouteCommand {
    /// Where the command reads and writes, and (install, status) what it verifies with.
    pub fn place_and_checks(&self) -> (&Where, Option<&Checks>) {
        match self {
            RouteCommand::Install { place, checks, .. }
            | RouteCommand::Status { place, checks } => (place, Some(checks)),
            RouteCommand::Uninstall { place, .. } => (place, None),
        }
    }
}

/// `--server`: a socket address without an IPv6 scope id. The boot unit of the runtime variant would
/// carry `%1`, which systemd reads as a specifier and refuses: the route would work now and be gone
/// after the next reboot.
fn server_addr(s: &str) -> Result<SocketAddr, String> {
    let a: SocketAddr = s.parse().map_err(|e| format!("{e}"))?;
    match a {
        SocketAddr::V6(v6) if v6.scope_id() != 0 => Err(format!(
            "a scope id (%{}) is not taken; give the loopback address without it, e.g. [::1]:{}",
            v6.scope_id(),
            v6.port()
        )),
        _ => Ok(a),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::RouteCommand;
    use crate::route::zones_arg;

    #[derive(Parser)]
    struct Route {
        #[command(subcommand)]
        cmd: RouteCommand,
    }

    fn zones(args: &[&str]) -> Vec<String> {
        let argv = ["route", "install"].iter().chain(args).copied();
        match Route::try_parse_from(argv).unwrap().cmd {
            RouteCommand::Install { zone, .. } => zone,
            _ => unreachable!(),
        }
    }

    #[test]
    fn zone_repeats_takes_a_comma_list_and_defaults_to_both_zones() {
        assert_eq!(zones(&[]), ["pigsty.test", "pigsty"]);
        assert_eq!(zones(&["--zone", "pigsty"]), ["pigsty"]);
        assert_eq!(
            zones(&["--zone", "pigsty.test", "--zone", "corp.test"]),
            ["pigsty.test", "corp.test"]
        );
        // The environment variable's form.
        assert_eq!(zones(&["--zone", "a.test,pigsty"]), ["a.test", "pigsty"]);
        let set = zones_arg(&zones(&["--zone", "pigsty.test, pigsty"])).unwrap();
        assert_eq!(set.to_string(), "pigsty.test, pigsty");
        let e = zones_arg(&zones(&["--zone", "pigsty,pigsty"])).unwrap_err();
        assert!(
            e.message.starts_with("--zone (or PIGSTY_DNS_ZONE) ") && e.message.contains("pigsty"),
            "{}",
            e.message
        );
        assert_eq!(e.class.exit_code(), 2);
    }
}
