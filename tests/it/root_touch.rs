//! What root is told to touch (issue 33 item 3): values that reach units, journals and `ip link`
//! refused before anything is planned.

use crate::util::*;

/// A scope id cannot be rendered into the runtime variant's boot unit (systemd reads `%1` as a
/// specifier and the unit fails to load), so the route would vanish at the next boot: refused.
#[test]
fn a_server_with_an_ipv6_scope_id_is_refused() {
    for server in ["[::1%1]:5354", "[::1%lo]:5354"] {
        let r = run(&["route", "install", "--dry-run", "--server", server]);
        if server.contains("%lo") {
            // Not even an address to clap: refused as a usage error all the same.
            assert_eq!(r.code, 2, "{}", r.stderr);
            continue;
        }
        assert_eq!(r.code, 2, "{server}: {}{}", r.stdout, r.stderr);
        let e = r.error_line();
        assert!(
            e.contains("'[::1%1]:5354'") && e.contains("scope id"),
            "{e}"
        );
    }
}

/// `StateDirectory=` is a list of relative paths split at whitespace, `:` makes a symlink pair, and a
/// trailing `\` continues the line: a state dir systemd cannot take as one directory is refused.
#[test]
fn a_state_dir_systemd_cannot_take_is_refused() {
    for dir in [
        "/var/lib/foo bar\\",
        "/var/lib/a b",
        "/var/lib/a:b",
        "/var/lib/a\"b",
        "/var/lib/100%",
    ] {
        let r = run(&[
            "service",
            "install",
            "--system",
            "--user",
            "daemon",
            "--dry-run",
            "--state-dir",
            dir,
            // A root-owned program: the test binary may sit under a world-writable /tmp, which the
            // program check (before the state dir's) refuses.
            "--program",
            "/usr/bin/true",
        ]);
        assert_eq!(r.code, 2, "{dir}: {}{}", r.stdout, r.stderr);
        let e = r.error_line();
        assert!(e.contains("StateDirectory="), "{e}");
        assert!(!r.stdout.contains("StateDirectoryMode"), "{}", r.stdout);
    }
    // A plain one renders, and with PIGSTY_DNS_E2E=1 systemd-analyze verifies it.
    let r = run(&[
        "service",
        "install",
        "--system",
        "--user",
        "daemon",
        "--dry-run",
        "--state-dir",
        "/var/lib/pigsty-dns/a.b_c+d@e",
        "--program",
        "/usr/bin/true",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("StateDirectory=pigsty-dns/a.b_c+d@e\n"),
        "{}",
        r.stdout
    );
    // The suggested command quotes what it carries.
    let r = run(&[
        "service",
        "install",
        "--system",
        "--user",
        "daemon",
        "--dry-run",
        "--state-dir",
        "/var/lib/pigsty-dns",
        "--program",
        "/usr/bin/true",
    ]);
    assert!(
        r.stdout
            .contains("load FILE --state-dir /var/lib/pigsty-dns"),
        "{}",
        r.stdout
    );
    if e2e() {
        let unit = r
            .stdout
            .split("--- /etc/systemd/system/pigsty-dns.service ---\n")
            .nth(1)
            .expect("the unit in the dry run")
            .split("\nnote: ")
            .next()
            .unwrap();
        crate::service_units::verify_named(unit, "pigsty-dns.service", false);
    }
}

/// The system unit runs as a system account: a person's account (uid in login.defs' UID_MIN-UID_MAX,
/// or a shell listed in /etc/shells) is refused. A private /etc/passwd in a mount namespace.
#[test]
fn service_install_refuses_a_login_account_as_service_user() {
    if !e2e() {
        eprintln!("skipped: set PIGSTY_DNS_E2E=1 (needs root and unshare)");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let passwd = t.path().join("passwd");
    let home = t.path().join("home-ops");
    std::fs::create_dir(&home).unwrap();
    // ops: a system uid, but a login shell and a home someone lives in; pigsty-dns as
    // `useradd --system --no-create-home` makes it (/bin/sh, a home that does not exist).
    std::fs::write(
        &passwd,
        format!(
            "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000:Alice:/home/alice:/bin/bash\n\
             svc:x:998:998::/nonexistent:/usr/sbin/nologin\nops:x:997:997::{}:/bin/bash\n\
             pigsty-dns:x:996:996::/home/pigsty-dns-none:/bin/sh\n",
            home.display()
        ),
    )
    .unwrap();
    let install = |user: &str| {
        let out = std::process::Command::new("unshare")
            .args(["--mount", "--", "sh", "-c"])
            .arg(r#"mount --bind "$1" /etc/passwd && shift && exec "$@""#)
            .arg("sh")
            .arg(&passwd)
            .arg(BIN)
            .args([
                "service",
                "install",
                "--system",
                "--user",
                user,
                "--dry-run",
                "--program",
                "/usr/bin/true",
            ])
            .env_remove("PIGSTY_DNS_STATE_DIR")
            .env_remove("PIGSTY_DNS_LISTEN")
            .output()
            .expect("unshare");
        finish(out)
    };
    for (user, why) in [("alice", "uid 1000"), ("ops", "/bin/bash")] {
        let r = install(user);
        assert_eq!(r.code, 2, "{user}: {}{}", r.stdout, r.stderr);
        let e = r.error_line();
        assert!(
            e.contains(&format!("--user {user}")) && e.contains(why),
            "{e}"
        );
    }
    for user in ["svc", "pigsty-dns"] {
        let r = install(user);
        assert_eq!(r.code, 0, "{user}: {}", r.stderr);
        assert!(r.stdout.contains(&format!("User={user}")), "{}", r.stdout);
    }
}

/// The journal decides what root deletes: it is opened once without following a symlink, never
/// waited on (a FIFO), and read only from a directory others cannot write.
#[test]
fn the_journal_is_read_only_from_a_trusted_file_in_a_trusted_directory() {
    use pigsty_dns::route::journal;
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("journal");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = dir.join(journal::FILE);
    std::fs::write(&file, "{}").unwrap();
    // A plain file in a plain dir: read (and found not to be a journal).
    let e = journal::read(&dir).unwrap_err();
    assert!(!e.contains("directory"), "{e}");
    // A directory others can write: anyone could have put the file there.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = journal::read(&dir).unwrap_err();
    assert!(e.contains("directory") && e.contains("0777"), "{e}");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A symlink to a file of ours elsewhere: not followed.
    let elsewhere = t.path().join("elsewhere.json");
    std::fs::rename(&file, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
    let e = journal::read(&dir).unwrap_err();
    assert!(e.contains("symlink"), "{e}");
    std::fs::remove_file(&file).unwrap();
    // A FIFO: refused at once, never waited on.
    let c = std::ffi::CString::new(file.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let (tx, rx) = std::sync::mpsc::channel();
    let d = dir.clone();
    std::thread::spawn(move || tx.send(journal::read(&d)).unwrap());
    let r = rx
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("journal::read hung on a FIFO");
    let e = r.unwrap_err();
    assert!(e.contains("not a regular file"), "{e}");
}

/// `--link NAME` names the link uninstall and the boot unit's ExecStop delete: an interface that
/// exists and that no journal of ours records (`lo`, a VPN's, a bridge) is refused before any plan.
/// `route install` of the resolved-link runtime variant on `--link link`, on a scripted host whose
/// daemon answers; `confirm` stands in for the `[y/N]` prompt (None: no terminal).
fn install_on_link<'a>(
    root: &std::path::Path,
    runner: &'a mut pigsty_dns::sys::runner::ScriptedRunner,
    facts: &pigsty_dns::route::detect::Facts,
    (link, server): (&str, &str),
    dry_run: bool,
    confirm: Option<&'a mut dyn FnMut(&str) -> bool>,
) -> Result<pigsty_dns::output::Report, pigsty_dns::error::AppError> {
    use pigsty_dns::route::adapter::{AdapterName, Variant};
    use pigsty_dns::route::plan::Request;
    use pigsty_dns::route::{self, Ctx};
    fn up(_: std::net::SocketAddr, _: &pigsty_dns::dns::name::Zone) -> Result<u32, String> {
        Ok(7)
    }
    fn lookup(_: std::net::SocketAddr, _: &str) -> Result<Option<std::net::Ipv4Addr>, String> {
        Ok(None)
    }
    let mut ctx = Ctx {
        root: root.to_path_buf(),
        journal_dir: link_journal_dir(root),
        runner,
        facts: facts.clone(),
        preflight: &up,
        lookup_a: &lookup,
        confirm,
        settle: std::time::Duration::ZERO,
        status_wait: std::time::Duration::ZERO,
        check_name: None,
        status_file: None,
        state_dir: None,
        out: vec![],
    };
    let req = Request {
        zones: pigsty_dns::dns::name::Zones::parse(&["pigsty.test"]).unwrap(),
        server: server.parse().unwrap(),
        adapter: Some(AdapterName::ResolvedLink),
        variant: Some(Variant::Runtime),
        link: link.into(),
        link_address: "198.18.53.53/32".into(),
        link_kind: None,
    };
    route::install(&mut ctx, &req, dry_run, false)
}

fn link_journal_dir(root: &std::path::Path) -> std::path::PathBuf {
    use pigsty_dns::route::journal;
    root.join(journal::default_dir(pigsty_dns::sys::Os::Linux).trim_start_matches('/'))
}

/// A runner under which every command succeeds with no output.
fn all_succeed() -> pigsty_dns::sys::runner::ScriptedRunner {
    let mut runner = pigsty_dns::sys::runner::ScriptedRunner::new();
    runner.fallback = Some(pigsty_dns::sys::runner::Output::ok_with(""));
    runner
}

/// `--link NAME` names the link uninstall and the boot unit's ExecStop delete: an interface that
/// exists and that no journal of ours records (`lo`, a VPN's, a bridge) is refused before any plan.
#[test]
fn route_install_refuses_a_link_it_did_not_create() {
    let root = crate::route_adapters::host_root();
    let facts = crate::route_adapters::facts("systemd 252 (252.38-1~deb12u1)");
    let plan_with = |link: &str, server: &str, facts: &pigsty_dns::route::detect::Facts| {
        install_on_link(
            root.path(),
            &mut all_succeed(),
            facts,
            (link, server),
            true,
            None,
        )
        .map(|r| r.render(false))
    };
    let plan = |link: &str| plan_with(link, "127.0.0.1:5354", &facts);
    let net = root.path().join("sys/class/net");
    std::fs::create_dir_all(net.join("lo")).unwrap();
    let e = plan("lo").unwrap_err();
    assert!(
        e.message.contains("--link lo") && e.message.contains("exists"),
        "{}",
        e.message
    );
    assert!(!e.next.is_empty());
    // A link that does not exist yet is planned.
    let text = plan("pigsty-dns0").unwrap();
    assert!(text.contains("link del pigsty-dns0"), "{text}");
    // A scope id never reaches the boot unit, whoever builds the plan.
    let e = plan_with("pigsty-dns0", "[::1%1]:5354", &facts).unwrap_err();
    assert!(e.message.contains("scope id"), "{}", e.message);
    // The boot unit the runtime variant renders passes systemd-analyze verify (IPv6 server too);
    // resolvectl is not installed on every test machine, so an executable stands in for its path.
    if e2e() {
        let mut f = facts.clone();
        f.resolvectl_path = "/bin/true".into();
        for server in ["127.0.0.1:5354", "[::1]:5354"] {
            let text = plan_with("pigsty-dns0", server, &f).unwrap();
            let unit: String = text
                .lines()
                .skip_while(|l| !(l.starts_with("file ") && l.contains("pigsty-dns-route.service")))
                .skip(1)
                .map_while(|l| {
                    l.strip_prefix("  |")
                        .map(|l| l.strip_prefix(' ').unwrap_or(l))
                })
                .map(|l| format!("{l}\n"))
                .collect();
            assert!(unit.contains("[Service]"), "{text}");
            crate::service_units::verify_named(&unit, "pigsty-dns-route.service", false);
        }
    }
    // Even our default name, when no journal records it: someone else made it.
    std::fs::create_dir_all(net.join("pigsty-dns0")).unwrap();
    assert!(plan("pigsty-dns0").is_err());
}

/// A link that appears while the plan is read (between the plan and the `[y/N]` answer) is someone
/// else's too: install checks again right before its first write, so its rollback (which deletes the
/// link by name) never runs. Before, the check was made only when planning.
#[test]
fn route_install_checks_the_link_again_after_the_prompt() {
    let root = crate::route_adapters::host_root();
    let facts = crate::route_adapters::facts("systemd 252 (252.38-1~deb12u1)");
    let mut runner = all_succeed();
    let net = root.path().join("sys/class/net/pigsty-dns0");
    let mut appears = |_: &str| {
        std::fs::create_dir_all(&net).unwrap();
        true
    };
    let jdir = link_journal_dir(root.path());
    let e = install_on_link(
        root.path(),
        &mut runner,
        &facts,
        ("pigsty-dns0", "127.0.0.1:5354"),
        false,
        Some(&mut appears),
    )
    .unwrap_err();
    assert!(
        e.message.contains("--link pigsty-dns0") && e.message.contains("exists"),
        "{}",
        e.message
    );
    let link_calls: Vec<String> = runner
        .calls
        .iter()
        .map(|c| c.join(" "))
        .filter(|c| c.contains(" link "))
        .collect();
    assert!(link_calls.is_empty(), "ran {link_calls:?}");
    assert!(
        !pigsty_dns::route::journal::path(&jdir).exists(),
        "a journal was written before the refusal"
    );
}

/// Suggested commands quote the paths they carry: a state dir or root with a space stays one word
/// when the `next:` line is pasted into a shell.
#[test]
fn suggested_commands_quote_root_and_state_dir() {
    use pigsty_dns::route::lifecycle::{DaemonFacts, daemon_down};
    use std::path::PathBuf;
    // The reinstall command of route status is checked beside it (src/route/status/mod.rs).
    let f = DaemonFacts {
        server: None,
        state_dir: Some(PathBuf::from("/srv/my state")),
        status: None,
        pid_alive: false,
        unit: None,
        user_unit: None,
    };
    let d = daemon_down(&f, "127.0.0.1:5354".parse().unwrap(), "no answer");
    assert!(d.next.contains("--state-dir '/srv/my state'"), "{}", d.next);
}
