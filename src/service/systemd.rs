//! systemd: where the unit goes, the systemctl calls that install / remove it, and reading its state.

use std::path::{Path, PathBuf};

use super::steps::{Action, CommandFailed};
use crate::sys::Runner;
use crate::sys::systemd::SystemdVersion;

pub const UNIT: &str = "pigsty-dns.service";

/// `~/.config/systemd/user` (or `$XDG_CONFIG_HOME/systemd/user`) for the user unit;
/// `/etc/systemd/system` under `root` for the system unit.
pub fn unit_path(system: bool, config_home: &Path, root: &Path) -> PathBuf {
    if system {
        root.join("etc/systemd/system").join(UNIT)
    } else {
        config_home.join("systemd/user").join(UNIT)
    }
}

pub fn ctl(system: bool, args: &[&str]) -> Vec<String> {
    let mut v = vec!["systemctl".to_string()];
    if !system {
        v.push("--user".into());
    }
    v.extend(args.iter().map(|a| a.to_string()));
    v
}

/// `systemd 252 (252.38-1~deb12u1)` → 252 (the unit templates depend on the major version only).
pub fn parse_version(stdout: &str) -> Option<u32> {
    SystemdVersion::parse(stdout).map(|v| v.major)
}

/// The host's systemd version; 0 when unknown (then nothing version-dependent is rendered).
pub fn version(runner: &mut dyn Runner) -> u32 {
    Some(runner.run(&crate::sys::argv(&["systemctl", "--version"])))
        .filter(|o| o.ok())
        .and_then(|o| parse_version(&o.stdout))
        .unwrap_or(0)
}

/// Write, reload, enable, then restart (not `enable --now`: an upgrade must restart a running daemon).
pub fn install_steps(system: bool, path: &Path, content: String) -> Vec<Action> {
    vec![
        Action::Write {
            path: path.to_path_buf(),
            content,
            mode: 0o644,
        },
        Action::Run {
            argv: ctl(system, &["daemon-reload"]),
            may_fail: false,
        },
        Action::Run {
            argv: ctl(system, &["enable", UNIT]),
            may_fail: false,
        },
        Action::Run {
            argv: ctl(system, &["restart", UNIT]),
            may_fail: false,
        },
    ]
}

pub fn uninstall_steps(system: bool, path: &Path) -> Vec<Action> {
    vec![
        Action::Run {
            argv: ctl(system, &["disable", "--now", UNIT]),
            may_fail: false,
        },
        Action::Remove {
            path: path.to_path_buf(),
        },
        Action::Run {
            argv: ctl(system, &["daemon-reload"]),
            may_fail: false,
        },
        // Forget a failed state so the unit name is clean; nothing to reset is fine.
        Action::Run {
            argv: ctl(system, &["reset-failed", UNIT]),
            may_fail: true,
        },
    ]
}

pub use crate::sys::systemd::{SHOW_PROPS, UnitState, parse_show};

pub fn show(runner: &mut dyn Runner, system: bool) -> Result<UnitState, CommandFailed> {
    let argv = ctl(system, &["show", UNIT, "-p", SHOW_PROPS]);
    CommandFailed::check(&argv, runner.run(&argv)).map(|o| parse_show(&o.stdout))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_version_and_show() {
        assert_eq!(
            parse_version("systemd 252 (252.38-1~deb12u1)\n+PAM"),
            Some(252)
        );
        assert_eq!(parse_version("systemd 257.1\n"), Some(257));
        assert_eq!(parse_version("nope"), None);
        let s = parse_show(
            "LoadState=loaded\nActiveState=active\nSubState=running\nUnitFileState=enabled\nMainPID=42\nNRestarts=3\nResult=success\n",
        );
        assert_eq!(
            (
                s.load.as_str(),
                s.active.as_str(),
                s.sub.as_str(),
                s.pid,
                s.restarts
            ),
            ("loaded", "active", "running", 42, 3)
        );
        assert_eq!(s.enabled, "enabled");
    }
}
