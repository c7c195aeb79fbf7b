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
        analyze_verify(unit);
    }
}

/// `systemd-analyze verify` on a system unit's text: any line about the file fails.
pub fn analyze_verify(unit: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pigsty-dns.service");
    std::fs::write(&path, unit).unwrap();
    let out = std::process::Command::new("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .output()
        .expect("PIGSTY_DNS_E2E=1 needs systemd-analyze (Debian: systemd)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(
        !text.contains("pigsty-dns.service"),
        "systemd-analyze verify:\n{text}\n{unit}"
    );
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
    std::fs::write(
        &passwd,
        "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000:Alice:/home/alice:/bin/bash\n\
         svc:x:998:998::/nonexistent:/usr/sbin/nologin\nops:x:997:997::/home/ops:/bin/bash\n",
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
    let r = install("svc");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("User=svc"), "{}", r.stdout);
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
