//! launchd: the LaunchAgent's path, the launchd domain of this session (`launchctl managername`: gui/UID
//! at the console, user/UID over SSH), the launchctl calls that load / remove the agent there, and
//! reading its state from `launchctl print`. launchctl is called by its absolute path.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::steps::Action;
use crate::sys::{Output, Runner};

pub const LABEL: &str = "io.pigsty.dns";
pub const LAUNCHCTL: &str = "/bin/launchctl";
/// How long install waits, after `bootout`, for launchd to let go of the label: `bootstrap` right
/// after `bootout` can fail with "Input/output error" while the old instance is still being torn down.
pub const BOOTOUT_WAIT: Duration = Duration::from_secs(10);

pub fn plist_path(home: &Path) -> PathBuf {
    home.join("Library/LaunchAgents")
        .join(format!("{LABEL}.plist"))
}

pub fn log_dir(home: &Path) -> PathBuf {
    home.join("Library/Logs")
}

/// The agent's stdout and stderr files (the plist's `StandardOutPath`, `StandardErrorPath`), which
/// `uninstall --purge` removes with the records.
pub fn log_files(home: &Path) -> [PathBuf; 2] {
    let d = log_dir(home);
    [d.join("pigsty-dns.out.log"), d.join("pigsty-dns.err.log")]
}

/// A per-user launchd domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    /// `gui/UID`: the login session at the console (Aqua).
    Gui(u32),
    /// `user/UID`: the user's background session (an SSH login).
    User(u32),
}

impl Domain {
    pub fn name(self) -> String {
        match self {
            Domain::Gui(uid) => format!("gui/{uid}"),
            Domain::User(uid) => format!("user/{uid}"),
        }
    }

    /// The agent in this domain: `gui/501/io.pigsty.dns`.
    pub fn target(self) -> String {
        format!("{}/{LABEL}", self.name())
    }

    /// The plist's one `LimitLoadToSessionType`: the session type of this domain's launchd (as
    /// `launchctl managername` names it). One only: with both, launchd may load the agent in both
    /// domains (the second instance cannot bind the port and restarts every 10 s), and bootstrapping
    /// such a plist into `user/UID` has been seen to fail with "Input/output error".
    pub fn session_type(self) -> &'static str {
        match self {
            Domain::Gui(_) => "Aqua",
            Domain::User(_) => "Background",
        }
    }

    /// Both domains of `uid`, the console's first.
    pub fn both(uid: u32) -> [Domain; 2] {
        [Domain::Gui(uid), Domain::User(uid)]
    }
}

fn launchctl(args: &[&str]) -> Vec<String> {
    std::iter::once(LAUNCHCTL)
        .chain(args.iter().copied())
        .map(str::to_string)
        .collect()
}

fn run(args: &[&str], may_fail: bool) -> Action {
    Action::Run {
        argv: launchctl(args),
        may_fail,
    }
}

/// `launchctl managername`'s answer as a domain: Aqua (the console) → `gui/UID`, Background (an SSH
/// login; StandardIO on older releases) → `user/UID`. Anything else (System: root; LoginWindow) has no
/// domain a LaunchAgent of this user belongs in.
pub fn domain_of_manager(out: &Output, uid: u32) -> Result<Domain, String> {
    let name = out.stdout.trim();
    match name {
        "Aqua" if out.ok() => Ok(Domain::Gui(uid)),
        "Background" | "StandardIO" if out.ok() => Ok(Domain::User(uid)),
        _ if !out.ok() => Err(format!("launchctl managername failed: {}", out.summary())),
        other => Err(format!(
            "launchctl managername says {other:?}, a session without a per-user domain for a LaunchAgent"
        )),
    }
}

/// The domain this session's agents load into.
pub fn session_domain(runner: &mut dyn Runner, uid: u32) -> Result<Domain, String> {
    domain_of_manager(&runner.run(&launchctl(&["managername"])), uid)
}

fn print_argv(d: Domain) -> Vec<String> {
    launchctl(&["print", &d.target()])
}

/// Every domain the agent is loaded in now (`launchctl print` succeeds), the console's first: both
/// are asked, as a plist with two session types (older releases) may be loaded in both.
pub fn loaded_in(runner: &mut dyn Runner, uid: u32) -> Vec<Domain> {
    agent_states(runner, uid)
        .into_iter()
        .map(|(d, _)| d)
        .collect()
}

/// The agent's state in every domain it is loaded in; empty when in neither.
pub fn agent_states(runner: &mut dyn Runner, uid: u32) -> Vec<(Domain, AgentState)> {
    Domain::both(uid)
        .into_iter()
        .filter_map(|d| {
            let o = runner.run(&print_argv(d));
            o.ok().then(|| (d, parse_print(&o.stdout)))
        })
        .collect()
}

/// A loaded agent is booted out first, in every domain it is in (bootstrap refuses a label that is
/// already loaded, and this is also how an upgrade restarts it), and launchd is given time to let go
/// of it. `enable` clears a disabled override left by an earlier uninstall.
pub fn install_steps(
    session: Domain,
    path: &Path,
    content: String,
    loaded: &[Domain],
) -> Vec<Action> {
    let mut steps = vec![Action::Write {
        path: path.to_path_buf(),
        content,
        mode: 0o644,
    }];
    for &d in loaded {
        steps.push(run(&["bootout", &d.target()], true));
        steps.push(Action::WaitFails {
            argv: print_argv(d),
            budget: BOOTOUT_WAIT,
            what: format!("launchd has unloaded {}", d.target()),
        });
    }
    let p = path.display().to_string();
    steps.push(run(&["enable", &session.target()], false));
    steps.push(run(&["bootstrap", &session.name(), &p], false));
    steps
}

/// Booted out of every domain it is loaded in, then the plist removed.
pub fn uninstall_steps(path: &Path, loaded: &[Domain]) -> Vec<Action> {
    let mut steps = Vec::new();
    for d in loaded {
        steps.push(run(&["bootout", &d.target()], false));
    }
    steps.push(Action::Remove {
        path: path.to_path_buf(),
    });
    steps
}

/// What `launchctl print` says of the agent, in launchd's own words (passed through to the report).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct AgentState {
    pub state: String,
    pub pid: u32,
    pub runs: u32,
    pub last_exit: String,
}

impl AgentState {
    pub fn is_running(&self) -> bool {
        self.state == "running"
    }
}

/// The top-level `key = value` lines of `launchctl print <domain>/<label>` (nested blocks skipped).
pub fn parse_print(text: &str) -> AgentState {
    let mut s = AgentState::default();
    let mut depth = 0usize;
    for line in text.lines() {
        let l = line.trim();
        if l.ends_with('{') {
            depth += 1;
            continue;
        }
        if l == "}" {
            depth = depth.saturating_sub(1);
            continue;
        }
        if depth != 1 {
            continue;
        }
        let Some((k, v)) = l.split_once(" = ") else {
            continue;
        };
        match k {
            "state" => s.state = v.to_string(),
            "pid" => s.pid = v.parse().unwrap_or(0),
            "runs" => s.runs = v.parse().unwrap_or(0),
            "last exit code" => s.last_exit = v.to_string(),
            _ => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manager_name_picks_the_domain() {
        let ok = |s: &str| Output::ok_with(s);
        assert_eq!(domain_of_manager(&ok("Aqua\n"), 501), Ok(Domain::Gui(501)));
        assert_eq!(
            domain_of_manager(&ok("Background\n"), 501),
            Ok(Domain::User(501))
        );
        assert_eq!(
            domain_of_manager(&ok("StandardIO\n"), 501),
            Ok(Domain::User(501))
        );
        for bad in ["System\n", "LoginWindow\n", ""] {
            assert!(domain_of_manager(&ok(bad), 501).is_err(), "{bad:?}");
        }
        assert!(
            domain_of_manager(&Output::fail(1, "Unknown job manager!"), 501)
                .unwrap_err()
                .contains("Unknown job manager")
        );
        assert_eq!(Domain::User(501).target(), "user/501/io.pigsty.dns");
        assert_eq!(Domain::Gui(501).name(), "gui/501");
        assert_eq!(Domain::Gui(501).session_type(), "Aqua");
        assert_eq!(Domain::User(501).session_type(), "Background");
    }

    #[test]
    fn parses_launchctl_print() {
        let text = "gui/501/io.pigsty.dns = {\n\tactive count = 1\n\tpath = /Users/a/Library/LaunchAgents/io.pigsty.dns.plist\n\tstate = running\n\n\tprogram = /usr/local/bin/pigsty-dns\n\targuments = {\n\t\t/usr/local/bin/pigsty-dns\n\t\tstate = nested\n\t}\n\n\truns = 3\n\tpid = 812\n\tlast exit code = 1\n}\n";
        let s = parse_print(text);
        assert_eq!(s.state, "running");
        assert_eq!((s.pid, s.runs), (812, 3));
        assert_eq!(s.last_exit, "1");
    }
}
