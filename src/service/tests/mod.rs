//! install / uninstall / status against fakes: a recording command runner, a scripted route seam and
//! probe, and a temporary home and file-system root. Nothing here touches systemd or launchd.
//! Test-only and one concern: the lifecycle of one installed service through the same fakes, so the
//! install, uninstall and status cases share their set-up here.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use super::host::Host;
use super::install::check_program;
use super::route_seam::{RouteSeam, RouteState};
use super::*;
use crate::dns::name::Zone;
use crate::dns::probe::ProbeError;
use crate::error::{AppError, Class};
use crate::output::Report;
use crate::sys::runner::ScriptedRunner;
use crate::sys::{Os, Output};

/// The commands as the tests call them: rendered as `--json` would (or not).
fn install(h: &mut Host<'_>, a: &InstallArgs, json: bool) -> Result<String, AppError> {
    super::install::install(h, a).map(|r| r.render(json))
}

fn uninstall(h: &mut Host<'_>, a: &UninstallArgs, json: bool) -> Result<String, AppError> {
    super::uninstall::uninstall(h, a).map(|r| r.render(json))
}

fn status(h: &mut Host<'_>, a: &StatusArgs, json: bool) -> Result<String, AppError> {
    super::status::status(h, a).map(|r| r.render(json))
}

type Log = Rc<RefCell<Vec<String>>>;

struct FakeRoute {
    log: Log,
    /// Answers of successive `status()` calls; the last one repeats.
    states: VecDeque<RouteState>,
    uninstall_ok: bool,
}

impl RouteSeam for FakeRoute {
    fn status(&mut self) -> RouteState {
        self.log.borrow_mut().push("route status".into());
        if self.states.len() > 1 {
            self.states.pop_front().unwrap()
        } else {
            self.states
                .front()
                .cloned()
                .unwrap_or(RouteState::NotInstalled)
        }
    }
    fn uninstall(&mut self) -> Result<(), String> {
        self.log.borrow_mut().push("route uninstall".into());
        if self.uninstall_ok {
            Ok(())
        } else {
            Err("error: journal drifted".into())
        }
    }
}

struct Fixture {
    os: Os,
    is_root: bool,
    sudo_user: Option<String>,
    dir: tempfile::TempDir,
    log: Log,
    runner: ScriptedRunner,
    route: FakeRoute,
    /// Probe answers: Err until `probe_ok_after` calls have been made.
    probe_ok_after: usize,
}

impl Fixture {
    fn new(os: Os) -> Fixture {
        let log: Log = Rc::new(RefCell::new(Vec::new()));
        Fixture {
            os,
            is_root: false,
            sudo_user: None,
            dir: tempfile::tempdir().unwrap(),
            runner: ScriptedRunner::logging(log.clone())
                .on("systemctl --version", 0, "systemd 252 (252.38-1~deb12u1)\n")
                .on("systemctl is-enabled", 1, "disabled\n")
                .on("/bin/launchctl managername", 0, "Aqua\n")
                .on("/bin/launchctl print", 113, ""),
            route: FakeRoute {
                log: log.clone(),
                states: VecDeque::from([RouteState::NotInstalled]),
                uninstall_ok: true,
            },
            log,
            probe_ok_after: 0,
        }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }
    fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    fn with<T>(&mut self, f: impl FnOnce(&mut Host<'_>) -> T) -> T {
        let log = self.log.clone();
        let mut calls = 0usize;
        let ok_after = self.probe_ok_after;
        let mut probe = move |addr: SocketAddr, _z: &Zone, _t: Duration| {
            log.borrow_mut().push(format!("probe {addr}"));
            calls += 1;
            if calls > ok_after {
                Ok(7)
            } else {
                Err(ProbeError::Unreachable("connection refused".to_string()))
            }
        };
        let daemon_status = |d: &Path, _z: &crate::dns::name::Zones| {
            Ok(Report::text(format!("daemon status of {}\n", d.display())))
        };
        let (home, root) = (self.home(), self.root());
        let mut host = Host {
            os: self.os,
            uid: 501,
            user: "alice".into(),
            config_home: home.join(".config"),
            home,
            root,
            is_root: self.is_root,
            sudo_user: self.sudo_user.clone(),
            exe: std::env::current_exe().unwrap(),
            runner: &mut self.runner,
            route: &mut self.route,
            probe: &mut probe,
            daemon_status: &daemon_status,
        };
        f(&mut host)
    }

    fn calls(&self) -> Vec<String> {
        self.log.borrow().clone()
    }

    fn install_args(&self, listen: &str) -> InstallArgs {
        InstallArgs {
            common: Common {
                system: false,
                state_dir: Some(self.state()),
                zone: vec!["pigsty.test".into()],
            },
            listen: vec![listen.parse().unwrap()],
            user: None,
            program: None,
            wait: 2,
            dry_run: false,
        }
    }

    fn uninstall_args(&self) -> UninstallArgs {
        UninstallArgs {
            common: Common {
                system: false,
                state_dir: Some(self.state()),
                zone: vec!["pigsty.test".into()],
            },
            with_route: false,
            purge: false,
            dry_run: false,
        }
    }

    fn make_state_dir(&self) {
        std::fs::create_dir_all(self.state().join("generations")).unwrap();
    }
}

fn runs(calls: &[String]) -> Vec<&str> {
    calls
        .iter()
        .filter(|c| {
            !c.starts_with("run systemctl --version") && !c.starts_with("run systemctl is-enabled")
        })
        .map(|c| c.as_str())
        .collect()
}

#[test]
fn user_install_writes_reloads_enables_restarts_then_waits_for_the_soa() {
    let mut fx = Fixture::new(Os::Linux);
    fx.probe_ok_after = 2;
    let a = fx.install_args("127.0.0.1:5354");
    let out = fx.with(|h| install(h, &a, false)).unwrap();
    let unit = fx.home().join(".config/systemd/user/pigsty-dns.service");
    let text = std::fs::read_to_string(&unit).unwrap();
    assert!(
        text.contains(&format!("--state-dir {}", fx.state().display())),
        "{text}"
    );
    assert!(text.contains("ExecStart=/"), "absolute program: {text}");
    assert_eq!(
        runs(&fx.calls()),
        [
            "run systemctl --user daemon-reload",
            "run systemctl --user enable pigsty-dns.service",
            "run systemctl --user restart pigsty-dns.service",
            "probe 127.0.0.1:5354",
            "probe 127.0.0.1:5354",
            "probe 127.0.0.1:5354",
        ]
    );
    assert!(out.contains("answers pigsty.test SOA (serial 7)"), "{out}");
    assert!(out.contains("loginctl enable-linger alice"), "{out}");
    // Lingering already on: not mentioned.
    std::fs::create_dir_all(fx.root().join("var/lib/systemd/linger")).unwrap();
    std::fs::write(fx.root().join("var/lib/systemd/linger/alice"), "").unwrap();
    let out = fx.with(|h| install(h, &a, false)).unwrap();
    assert!(!out.contains("enable-linger"), "{out}");
}

#[test]
fn dry_run_writes_and_starts_nothing() {
    let mut fx = Fixture::new(Os::Linux);
    let mut a = fx.install_args("127.0.0.1:5354");
    a.dry_run = true;
    let out = fx.with(|h| install(h, &a, false)).unwrap();
    assert!(
        out.contains("run: systemctl --user restart pigsty-dns.service"),
        "{out}"
    );
    assert!(out.contains("Type=notify"), "shows the unit: {out}");
    assert!(!fx.home().join(".config").exists());
    assert!(runs(&fx.calls()).is_empty(), "{:?}", fx.calls());
    let json = fx.with(|h| install(h, &a, true)).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["steps"][0]["kind"], "write");
    assert!(v["steps"][0]["sha256_before"].is_null());
    assert_eq!(v["steps"][0]["sha256_after"].as_str().unwrap().len(), 64);
}

#[test]
fn no_answer_after_start_is_partial_and_bounded() {
    let mut fx = Fixture::new(Os::Linux);
    fx.probe_ok_after = usize::MAX;
    let mut a = fx.install_args("127.0.0.1:5354");
    a.wait = 1;
    let t = std::time::Instant::now();
    let e = fx.with(|h| install(h, &a, false)).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(3));
    assert_eq!(e.class, Class::Partial);
    assert!(e.message.contains("did not answer"), "{}", e.message);
    assert!(
        e.next.contains("journalctl --user -u pigsty-dns.service"),
        "{}",
        e.next
    );
}

#[test]
fn a_failing_systemctl_stops_the_install() {
    let mut fx = Fixture::new(Os::Linux);
    fx.runner = ScriptedRunner::logging(fx.log.clone())
        .on("systemctl --user enable", 1, "")
        .on("systemctl is-enabled", 1, "disabled\n");
    let a = fx.install_args("127.0.0.1:5354");
    let e = fx.with(|h| install(h, &a, false)).unwrap_err();
    assert_eq!(e.class, Class::Runtime);
    assert!(e.report.unwrap().contains("stopped at step 3 of 5"));
    assert!(!fx.calls().iter().any(|c| c.contains("restart")));
}

#[test]
fn port_5353_is_refused_where_mdns_runs() {
    let mut fx = Fixture::new(Os::Linux);
    fx.runner = ScriptedRunner::logging(fx.log.clone())
        .on("systemctl is-enabled avahi-daemon.service", 0, "enabled\n")
        .on("systemctl is-enabled", 1, "disabled\n");
    let a = fx.install_args("127.0.0.1:5353");
    let e = fx.with(|h| install(h, &a, false)).unwrap_err();
    assert_eq!(e.class, Class::Conflict);
    assert!(
        e.message.contains("avahi-daemon.service is enabled"),
        "{}",
        e.message
    );
    assert!(e.next.contains("127.0.0.1:5354"));
    assert!(!fx.home().join(".config").exists());

    // No mDNS stack on this (fake) host: 5353 is allowed on Linux.
    let mut fx = Fixture::new(Os::Linux);
    let a = fx.install_args("127.0.0.1:5353");
    fx.with(|h| install(h, &a, false)).unwrap();

    // macOS: never (exit 2), whatever else runs.
    let mut fx = Fixture::new(Os::Macos);
    let a = fx.install_args("127.0.0.1:5353");
    let e = fx.with(|h| install(h, &a, false)).unwrap_err();
    assert_eq!(e.class, Class::Usage);
    assert!(e.message.contains("mDNSResponder"), "{}", e.message);
    assert!(e.next.contains("127.0.0.1:5354"), "{}", e.next);
    assert!(!fx.home().join("Library").exists());
}

#[test]
fn system_install_needs_a_user_root_and_a_safe_binary() {
    let mut fx = Fixture::new(Os::Linux);
    let mut a = fx.install_args("127.0.0.1:5354");
    a.common.system = true;
    a.common.state_dir = None;
    a.program = Some("/bin/sh".into());
    let e = fx.with(|h| install(h, &a, false)).unwrap_err();
    assert!(e.message.contains("--user"), "{}", e.message);
    a.user = Some("root".into());
    assert_eq!(
        fx.with(|h| install(h, &a, false)).unwrap_err().class,
        Class::Usage
    );
    a.user = Some("nobody".into());
    a.dry_run = true;
    let out = fx.with(|h| install(h, &a, false)).unwrap();
    assert!(
        out.contains("User=nobody") && out.contains("StateDirectory=pigsty-dns"),
        "{out}"
    );
    assert!(out.contains("--state-dir /var/lib/pigsty-dns"), "{out}");
    // The only load instruction is as the unit's user into its state dir (a plain `pigsty-dns load` by
    // root would store where the service never reads; found by tests/lab/pid1-lab.sh).
    assert_eq!(out.matches(" load FILE").count(), 1, "{out}");
    assert!(
        out.contains("load records as that user: sudo -u nobody "),
        "{out}"
    );
    a.dry_run = false;
    let e = fx.with(|h| install(h, &a, false)).unwrap_err();
    assert_eq!(e.class, Class::Capability, "{}", e.message);
    a.common.state_dir = Some("/srv/dns".into());
    assert_eq!(
        fx.with(|h| install(h, &a, false)).unwrap_err().class,
        Class::Usage
    );
    fx.is_root = true;
    a.common.state_dir = None;
    fx.with(|h| install(h, &a, false)).unwrap();
    assert!(
        fx.root()
            .join("etc/systemd/system/pigsty-dns.service")
            .exists()
    );
    assert!(
        fx.calls()
            .contains(&"run systemctl restart pigsty-dns.service".to_string())
    );
}

#[test]
fn the_system_binary_must_be_root_owned_and_unwritable_by_others() {
    check_program(Path::new("/bin/sh"), true).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("pigsty-dns");
    std::fs::write(&f, "#!/bin/sh\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A user unit only needs an executable.
    assert!(check_program(&f, false).unwrap().is_absolute());
    // Under /tmp (world-writable) someone else could swap the file: refused.
    let e = check_program(&f, true).unwrap_err();
    assert_eq!(e.class, Class::Integrity);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(check_program(&f, false).unwrap_err().class, Class::Usage);
    assert!(check_program(Path::new("relative/none"), false).is_err());
}

#[test]
fn status_combines_the_unit_and_the_daemon() {
    let mut fx = Fixture::new(Os::Linux);
    fx.runner = ScriptedRunner::logging(fx.log.clone()).on(
        "systemctl --user show",
        0,
        "LoadState=loaded\nActiveState=active\nSubState=running\nUnitFileState=enabled\nMainPID=42\nNRestarts=1\nResult=success\n",
    );
    let a = StatusArgs {
        common: fx.uninstall_args().common,
    };
    let out = fx.with(|h| status(h, &a, false)).unwrap();
    assert!(
        out.contains("active (running), pid 42, restarts 1, enabled"),
        "{out}"
    );
    assert!(out.contains("daemon status of"), "{out}");
    fx.runner = ScriptedRunner::logging(fx.log.clone()).on(
        "systemctl --user show",
        0,
        "LoadState=loaded\nActiveState=failed\nSubState=failed\nMainPID=0\nNRestarts=10\n",
    );
    let e = fx.with(|h| status(h, &a, false)).unwrap_err();
    assert!(e.report.unwrap().contains("restarts 10"));

    let mut fx = Fixture::new(Os::Macos);
    fx.runner = ScriptedRunner::logging(fx.log.clone())
        .on(
            "/bin/launchctl print gui/501/io.pigsty.dns",
            0,
            "gui/501/io.pigsty.dns = {\n\tstate = running\n\truns = 2\n\tpid = 9\n}\n",
        )
        .on("/bin/launchctl print", 113, "");
    let out = fx.with(|h| status(h, &a, false)).unwrap();
    assert!(out.contains("running, pid 9, restarts 1"), "{out}");
}

#[test]
fn status_says_how_to_move_a_unit_still_on_5353() {
    let mut fx = Fixture::new(Os::Linux);
    let unit = fx.home().join(".config/systemd/user/pigsty-dns.service");
    std::fs::create_dir_all(unit.parent().unwrap()).unwrap();
    std::fs::write(
        &unit,
        "[Service]\nExecStart=/usr/local/bin/pigsty-dns serve --listen 127.0.0.1:5353 --state-dir /s\n",
    )
    .unwrap();
    fx.runner = ScriptedRunner::logging(fx.log.clone()).on(
        "systemctl --user show",
        0,
        "LoadState=loaded\nActiveState=active\nSubState=running\nUnitFileState=enabled\nMainPID=42\nNRestarts=0\n",
    );
    let a = StatusArgs {
        common: fx.uninstall_args().common,
    };
    let out = fx.with(|h| status(h, &a, false)).unwrap();
    assert!(
        out.contains("note: the unit listens on 127.0.0.1:5353"),
        "{out}"
    );
    assert!(
        out.contains("service install --listen 127.0.0.1:5354")
            && out.contains("route install --server 127.0.0.1:5354"),
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&fx.with(|h| status(h, &a, true)).unwrap()).unwrap();
    assert_eq!(json["notes"].as_array().unwrap().len(), 1, "{json}");
    std::fs::write(
        &unit,
        "[Service]\nExecStart=/usr/local/bin/pigsty-dns serve --listen 127.0.0.1:5354 --state-dir /s\n",
    )
    .unwrap();
    let out = fx.with(|h| status(h, &a, false)).unwrap();
    assert!(!out.contains("note:"), "{out}");
}

mod macos;
mod uninstall;
