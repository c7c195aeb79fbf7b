//! launchd: the LaunchAgent's path, the launchctl calls that load / remove it in the user's GUI domain,
//! and reading its state from `launchctl print`.

use std::path::{Path, PathBuf};

use super::steps::Action;
use crate::sys::Runner;

pub const LABEL: &str = "io.pigsty.dns";

pub fn plist_path(home: &Path) -> PathBuf {
    home.join("Library/LaunchAgents")
        .join(format!("{LABEL}.plist"))
}

pub fn log_dir(home: &Path) -> PathBuf {
    home.join("Library/Logs")
}

pub fn domain(uid: u32) -> String {
    format!("gui/{uid}")
}

pub fn target(uid: u32) -> String {
    format!("gui/{uid}/{LABEL}")
}

fn run(args: &[&str], may_fail: bool) -> Action {
    let mut argv = vec!["launchctl".to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    Action::Run { argv, may_fail }
}

fn print_argv(uid: u32) -> Vec<String> {
    vec!["launchctl".to_string(), "print".to_string(), target(uid)]
}

/// Whether the agent is loaded now (`launchctl print` succeeds).
pub fn loaded(runner: &mut dyn Runner, uid: u32) -> bool {
    runner.run(&print_argv(uid)).ok()
}

/// The loaded agent's state; `None` when it is not loaded (or launchctl cannot tell).
pub fn agent_state(runner: &mut dyn Runner, uid: u32) -> Option<AgentState> {
    Some(runner.run(&print_argv(uid)))
        .filter(|o| o.ok())
        .map(|o| parse_print(&o.stdout))
}

/// A loaded agent is booted out first: bootstrap refuses a label that is already loaded, and this is
/// also how an upgrade restarts it. `enable` clears a disabled override left by an earlier uninstall.
pub fn install_steps(uid: u32, path: &Path, content: String, is_loaded: bool) -> Vec<Action> {
    let mut steps = vec![Action::Write {
        path: path.to_path_buf(),
        content,
        mode: 0o644,
    }];
    if is_loaded {
        steps.push(run(&["bootout", &target(uid)], true));
    }
    let p = path.display().to_string();
    steps.push(run(&["enable", &target(uid)], false));
    steps.push(run(&["bootstrap", &domain(uid), &p], false));
    steps
}

pub fn uninstall_steps(uid: u32, path: &Path, is_loaded: bool) -> Vec<Action> {
    let mut steps = Vec::new();
    if is_loaded {
        steps.push(run(&["bootout", &target(uid)], false));
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

/// The top-level `key = value` lines of `launchctl print gui/<uid>/<label>` (nested blocks skipped).
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
    fn parses_launchctl_print() {
        let text = "gui/501/io.pigsty.dns = {\n\tactive count = 1\n\tpath = /Users/a/Library/LaunchAgents/io.pigsty.dns.plist\n\tstate = running\n\n\tprogram = /usr/local/bin/pigsty-dns\n\targuments = {\n\t\t/usr/local/bin/pigsty-dns\n\t\tstate = nested\n\t}\n\n\truns = 3\n\tpid = 812\n\tlast exit code = 1\n}\n";
        let s = parse_print(text);
        assert_eq!(s.state, "running");
        assert_eq!((s.pid, s.runs), (812, 3));
        assert_eq!(s.last_exit, "1");
    }
}
