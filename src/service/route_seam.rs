//! The seam to the route installer (`pigsty-dns route …`, built separately): `service uninstall` only
//! needs to know whether a route is installed, remove it, and check it is gone. The real seam runs the
//! same binary's `route status --json` / `route uninstall --yes`; tests use a fake.

use std::fmt;
use std::path::PathBuf;

use super::steps::CommandFailed;
use crate::sys::Runner;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteState {
    /// Installed: what it is (e.g. `adapter dns-delegate`) and the server it routes to (from its
    /// journal; `None` when the status does not say).
    Installed {
        what: String,
        server: Option<String>,
    },
    NotInstalled,
    /// The route command answered something we cannot read; nothing is assumed.
    Unknown(String),
}

impl fmt::Display for RouteState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RouteState::Installed { what, .. } => f.write_str(what),
            RouteState::NotInstalled => f.write_str("not installed"),
            RouteState::Unknown(why) => write!(f, "unknown: {why}"),
        }
    }
}

pub trait RouteSeam {
    fn status(&mut self) -> RouteState;
    fn uninstall(&mut self) -> Result<(), CommandFailed>;
}

/// Runs `<exe> route …`. Contract: `route status --json` prints a JSON object with a boolean
/// `installed`; a binary without the `route` command (clap usage error, exit 2) has none installed.
pub struct ShellRoute<R: Runner> {
    pub exe: PathBuf,
    pub runner: R,
}

impl<R: Runner> ShellRoute<R> {
    fn argv(&self, args: &[&str]) -> Vec<String> {
        let mut v = vec![self.exe.display().to_string()];
        v.extend(args.iter().map(|a| a.to_string()));
        v
    }
}

pub fn parse_status(code: Option<i32>, stdout: &str, stderr: &str) -> RouteState {
    let text = format!("{stdout}{stderr}");
    if code == Some(2) && text.contains("unrecognized subcommand") {
        return RouteState::NotInstalled;
    }
    // `status` may exit non-zero for a broken route and still describe it.
    match serde_json::from_str::<serde_json::Value>(stdout.trim()) {
        Ok(v) => match v.get("installed").and_then(|i| i.as_bool()) {
            Some(true) => RouteState::Installed {
                what: v
                    .get("adapter")
                    .and_then(|a| a.as_str())
                    .map(|a| format!("adapter {a}"))
                    .unwrap_or_else(|| "installed".into()),
                server: v.get("server").and_then(|s| s.as_str()).map(String::from),
            },
            Some(false) => RouteState::NotInstalled,
            None => RouteState::Unknown("route status --json has no boolean \"installed\"".into()),
        },
        Err(_) => RouteState::Unknown(format!(
            "route status --json exited {} without JSON: {}",
            code.map_or("by a signal".into(), |c| c.to_string()),
            text.trim()
        )),
    }
}

impl<R: Runner> RouteSeam for ShellRoute<R> {
    fn status(&mut self) -> RouteState {
        let argv = self.argv(&["route", "status", "--json"]);
        let o = self.runner.run(&argv);
        // No exit code and nothing printed: it never ran (or hung and was killed).
        if o.code.is_none() && o.stdout.trim().is_empty() {
            return RouteState::Unknown(CommandFailed { argv, output: o }.to_string());
        }
        parse_status(o.code, &o.stdout, &o.stderr)
    }

    fn uninstall(&mut self) -> Result<(), CommandFailed> {
        let argv = self.argv(&["route", "uninstall", "--yes"]);
        CommandFailed::check(&argv, self.runner.run(&argv)).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_route_status_contract() {
        assert_eq!(
            parse_status(
                Some(0),
                r#"{"installed": true, "adapter": "dns-delegate"}"#,
                ""
            ),
            RouteState::Installed {
                what: "adapter dns-delegate".into(),
                server: None
            }
        );
        assert_eq!(
            parse_status(
                Some(0),
                r#"{"installed": true, "adapter": "resolved-link", "server": "127.0.0.1:5399"}"#,
                ""
            ),
            RouteState::Installed {
                what: "adapter resolved-link".into(),
                server: Some("127.0.0.1:5399".into())
            }
        );
        assert_eq!(
            parse_status(Some(0), r#"{"installed": false}"#, ""),
            RouteState::NotInstalled
        );
        assert_eq!(
            parse_status(
                Some(2),
                "",
                "error: unrecognized subcommand 'route'\nnext: run pigsty-dns --help"
            ),
            RouteState::NotInstalled
        );
        assert!(matches!(
            parse_status(Some(1), "boom", ""),
            RouteState::Unknown(_)
        ));
        assert!(matches!(
            parse_status(Some(0), r#"{"adapter": "x"}"#, ""),
            RouteState::Unknown(_)
        ));
    }
}
