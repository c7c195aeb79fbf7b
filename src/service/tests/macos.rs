//! macOS: the LaunchAgent's launchd domain (one session type, every domain it is loaded in), sudo,
//! the program path, and what `--purge` removes beside the records.

use std::time::Duration;

use super::*;

#[test]
fn launchd_install_bootstraps_into_the_gui_domain() {
    let mut fx = Fixture::new(Os::Macos);
    let a = fx.install_args("127.0.0.1:5354");
    fx.with(|h| install(h, &a, false)).unwrap();
    let plist = fx.home().join("Library/LaunchAgents/io.pigsty.dns.plist");
    let text = std::fs::read_to_string(&plist).unwrap();
    assert!(
        text.contains("<string>--log-format</string>\n\t\t<string>text</string>"),
        "{text}"
    );
    assert!(text.contains(&format!(
        "{}/Library/Logs/pigsty-dns.err.log",
        fx.home().display()
    )));
    assert_eq!(
        runs(&fx.calls()),
        [
            "run /bin/launchctl managername",
            "run /bin/launchctl print gui/501/io.pigsty.dns",
            "run /bin/launchctl print user/501/io.pigsty.dns",
            "run /bin/launchctl enable gui/501/io.pigsty.dns",
            &format!("run /bin/launchctl bootstrap gui/501 {}", plist.display()),
            "probe 127.0.0.1:5354",
        ]
    );
    // Loaded already (an upgrade): booted out first, then bootstrapped again once launchd let go.
    fx.runner = ScriptedRunner::logging(fx.log.clone())
        .on("/bin/launchctl managername", 0, "Aqua\n")
        .on("/bin/launchctl print", 113, "");
    fx.runner
        .once("/bin/launchctl print", Output::ok_with("state = running\n"));
    fx.log.borrow_mut().clear();
    fx.with(|h| install(h, &a, false)).unwrap();
    // (Both domains asked first: it may be loaded in either, or both.)
    assert_eq!(
        runs(&fx.calls())[3],
        "run /bin/launchctl bootout gui/501/io.pigsty.dns"
    );
    let mut s = fx.install_args("127.0.0.1:5354");
    s.common.system = true;
    assert_eq!(
        fx.with(|h| install(h, &s, false)).unwrap_err().class,
        Class::Usage
    );
}

fn mac_runner(log: &Log, manager: &str) -> ScriptedRunner {
    ScriptedRunner::logging(log.clone())
        .on("/bin/launchctl managername", 0, manager)
        .on("/bin/launchctl print", 113, "")
}

#[test]
fn over_ssh_the_agent_goes_to_the_user_domain() {
    let mut fx = Fixture::new(Os::Macos);
    fx.runner = mac_runner(&fx.log, "Background\n");
    let a = fx.install_args("127.0.0.1:5354");
    let out = fx.with(|h| install(h, &a, false)).unwrap();
    let plist = fx.home().join("Library/LaunchAgents/io.pigsty.dns.plist");
    let calls = fx.calls();
    assert!(
        calls.contains(&"run /bin/launchctl enable user/501/io.pigsty.dns".to_string())
            && calls.contains(&format!(
                "run /bin/launchctl bootstrap user/501 {}",
                plist.display()
            )),
        "{calls:?}"
    );
    assert!(!calls.iter().any(|c| c.contains("gui/501 ")), "{calls:?}");
    assert!(out.contains("the agent loads into user/501"), "{out}");
    // A session with no per-user domain: refused before anything is written.
    let mut fx = Fixture::new(Os::Macos);
    fx.runner = mac_runner(&fx.log, "LoginWindow\n");
    let e = fx.with(|h| install(h, &a, false)).unwrap_err();
    assert_eq!(e.class, Class::Capability);
    assert!(e.message.contains("LoginWindow"), "{}", e.message);
    assert!(!fx.home().join("Library").exists());
}

#[test]
fn an_upgrade_bootstraps_only_after_launchd_let_go_of_the_label() {
    let mut fx = Fixture::new(Os::Macos);
    fx.runner = mac_runner(&fx.log, "Aqua\n");
    // Loaded (the loaded check), still there after bootout (one poll), then gone.
    for _ in 0..2 {
        fx.runner.once(
            "/bin/launchctl print gui/501/io.pigsty.dns",
            Output::ok_with("state = running\n"),
        );
    }
    let a = fx.install_args("127.0.0.1:5354");
    fx.with(|h| install(h, &a, false)).unwrap();
    let calls = runs(&fx.calls())
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    let at = |c: &str| {
        calls
            .iter()
            .position(|l| l.starts_with(c))
            .unwrap_or_else(|| panic!("{c} not run: {calls:?}"))
    };
    let bootout = at("run /bin/launchctl bootout gui/501/io.pigsty.dns");
    let prints: Vec<usize> = calls
        .iter()
        .enumerate()
        .filter(|(i, l)| *i > bootout && l.starts_with("run /bin/launchctl print gui/501"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(prints.len(), 2, "polled until print failed: {calls:?}");
    assert!(
        prints[1] < at("run /bin/launchctl bootstrap gui/501"),
        "{calls:?}"
    );
    // Bounded: a label that never goes away stops the install with the command that still succeeds.
    let mut fx = Fixture::new(Os::Macos);
    fx.runner = ScriptedRunner::logging(fx.log.clone()).on("/bin/launchctl print", 0, "");
    let step = super::steps::Action::WaitFails {
        argv: crate::sys::argv(&["/bin/launchctl", "print", "gui/501/io.pigsty.dns"]),
        budget: Duration::from_millis(300),
        what: "launchd has unloaded gui/501/io.pigsty.dns".into(),
    };
    let t = std::time::Instant::now();
    let e = fx
        .with(|h| super::execute::execute(h, std::slice::from_ref(&step)))
        .unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(3));
    assert_eq!(e.class, Class::Runtime);
    assert!(e.message.contains("still succeeds"), "{}", e.message);
}

#[test]
fn sudo_is_refused_on_macos_with_the_command_to_run_instead() {
    let mut fx = Fixture::new(Os::Macos);
    fx.is_root = true;
    fx.sudo_user = Some("alice".into());
    let mut a = fx.install_args("127.0.0.1:5354");
    for dry_run in [false, true] {
        a.dry_run = dry_run;
        let e = fx.with(|h| install(h, &a, false)).unwrap_err();
        assert_eq!(e.class, Class::Usage);
        assert!(e.message.contains("root"), "{}", e.message);
        assert!(
            e.next.contains("as alice, without sudo") && e.next.contains("service install"),
            "{}",
            e.next
        );
    }
    assert!(runs(&fx.calls()).is_empty(), "{:?}", fx.calls());
    assert!(!fx.home().join("Library").exists());
    let u = fx.uninstall_args();
    let e = fx.with(|h| uninstall(h, &u, false)).unwrap_err();
    assert_eq!(e.class, Class::Usage);
}

#[test]
fn the_agent_keeps_the_stable_link_it_was_run_by() {
    use std::os::unix::fs::PermissionsExt;
    let mut fx = Fixture::new(Os::Macos);
    // Homebrew's layout: bin/pigsty-dns -> ../Cellar/pigsty-dns/0.1.0/bin/pigsty-dns
    let brew = fx.dir.path().join("brew");
    let cellar = brew.join("Cellar/pigsty-dns/0.1.0/bin");
    std::fs::create_dir_all(&cellar).unwrap();
    std::fs::create_dir_all(brew.join("bin")).unwrap();
    let real = cellar.join("pigsty-dns");
    std::fs::write(&real, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).unwrap();
    let link = brew.join("bin/pigsty-dns");
    std::os::unix::fs::symlink("../Cellar/pigsty-dns/0.1.0/bin/pigsty-dns", &link).unwrap();
    let mut a = fx.install_args("127.0.0.1:5354");
    a.program = Some(link.clone());
    let out = fx.with(|h| install(h, &a, false)).unwrap();
    let plist = std::fs::read_to_string(fx.home().join("Library/LaunchAgents/io.pigsty.dns.plist"))
        .unwrap();
    assert!(
        plist.contains(&format!("<string>{}</string>", link.display())),
        "{plist}"
    );
    assert!(!plist.contains("Cellar"), "{plist}");
    assert!(
        out.contains(&format!("the agent runs {} (a link", link.display())),
        "{out}"
    );
    // The file itself: its own path, said so.
    a.program = Some(real.clone());
    let out = fx.with(|h| install(h, &a, false)).unwrap();
    let real = std::fs::canonicalize(&real).unwrap();
    assert!(
        out.contains(&format!("the agent runs {}\n", real.display())),
        "{out}"
    );
    // systemd keeps resolving links, as before.
    let mut fx = Fixture::new(Os::Linux);
    let mut a = fx.install_args("127.0.0.1:5354");
    a.program = Some(link);
    fx.with(|h| install(h, &a, false)).unwrap();
    let unit =
        std::fs::read_to_string(fx.home().join(".config/systemd/user/pigsty-dns.service")).unwrap();
    assert!(
        unit.contains("Cellar/pigsty-dns/0.1.0/bin/pigsty-dns serve"),
        "{unit}"
    );
}

/// Loaded in both domains (a plist of an older release listed both session types): status reports
/// both and is unhealthy, install and uninstall boot out both; the plist names one session type.
#[test]
fn an_agent_loaded_in_both_domains_is_reported_and_booted_out_of_both() {
    let both = |log: &Log, manager: &str| {
        ScriptedRunner::logging(log.clone())
            .on("/bin/launchctl managername", 0, manager)
            .on(
                "/bin/launchctl print gui/501/io.pigsty.dns",
                0,
                "gui/501/io.pigsty.dns = {\n\tstate = running\n\truns = 1\n\tpid = 9\n}\n",
            )
            .on(
                "/bin/launchctl print user/501/io.pigsty.dns",
                0,
                "user/501/io.pigsty.dns = {\n\tstate = spawn scheduled\n\truns = 40\n\tpid = 0\n\tlast exit code = 1\n}\n",
            )
    };
    let mut fx = Fixture::new(Os::Macos);
    fx.runner = both(&fx.log, "Aqua\n");
    let a = StatusArgs {
        common: fx.uninstall_args().common,
    };
    let e = fx.with(|h| status(h, &a, false)).unwrap_err();
    let report = e.report.unwrap_or_default();
    assert!(
        report.contains("agent gui/501/io.pigsty.dns: running, pid 9")
            && report.contains(
                "agent user/501/io.pigsty.dns: spawn scheduled, pid 0, restarts 39, last exit 1"
            )
            && report.contains("loaded in 2 domains"),
        "{report}"
    );
    // Uninstall: out of both, then the plist.
    let u = fx.uninstall_args();
    fx.log.borrow_mut().clear();
    fx.with(|h| uninstall(h, &u, false)).unwrap();
    let all = fx.calls();
    let calls = runs(&all);
    for d in ["gui/501", "user/501"] {
        assert!(
            calls.contains(&format!("run /bin/launchctl bootout {d}/io.pigsty.dns").as_str()),
            "{calls:?}"
        );
    }
    // Install over SSH: out of both (each waited for), then into user/501 only, as Background.
    let mut fx = Fixture::new(Os::Macos);
    fx.runner = both(&fx.log, "Background\n");
    let mut i = fx.install_args("127.0.0.1:5354");
    i.dry_run = true;
    let out = fx.with(|h| install(h, &i, false)).unwrap();
    for d in ["gui/501", "user/501"] {
        assert!(
            out.contains(&format!("/bin/launchctl bootout {d}/io.pigsty.dns")),
            "{out}"
        );
    }
    assert!(out.contains("/bin/launchctl bootstrap user/501 "), "{out}");
    assert!(!out.contains("bootstrap gui/501"), "{out}");
    fx.runner = mac_runner(&fx.log, "Background\n");
    i.dry_run = false;
    fx.with(|h| install(h, &i, false)).unwrap();
    let plist = std::fs::read_to_string(fx.home().join("Library/LaunchAgents/io.pigsty.dns.plist"))
        .unwrap();
    assert!(
        plist.contains("<key>LimitLoadToSessionType</key>\n\t<string>Background</string>"),
        "{plist}"
    );
    assert!(!plist.contains("<string>Aqua</string>"), "{plist}");
}

/// `--purge` takes the agent's two log files with the records; without it they stay.
#[test]
fn purge_removes_the_agent_logs_too() {
    let mut fx = Fixture::new(Os::Macos);
    fx.make_state_dir();
    let logs = super::super::launchd::log_files(&fx.home());
    std::fs::create_dir_all(logs[0].parent().unwrap()).unwrap();
    for l in &logs {
        std::fs::write(l, "log\n").unwrap();
    }
    let other = logs[0].parent().unwrap().join("other.log");
    std::fs::write(&other, "").unwrap();
    let mut a = fx.uninstall_args();
    fx.with(|h| uninstall(h, &a, false)).unwrap();
    assert!(logs.iter().all(|l| l.exists()), "kept without --purge");
    a.purge = true;
    let out = fx.with(|h| uninstall(h, &a, false)).unwrap();
    assert!(
        logs.iter().all(|l| !l.exists()) && !fx.state().exists(),
        "{out}"
    );
    assert!(out.contains("pigsty-dns.err.log"), "{out}");
    assert!(other.exists());
}
