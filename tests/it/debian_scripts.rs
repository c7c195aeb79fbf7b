//! The Debian maintainer scripts run for real (issue 33): postinst against a private /etc/passwd (a
//! mount namespace, so the machine's accounts are never touched), prerm's calls bounded in time. Root
//! only: `PIGSTY_DNS_E2E=1`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use crate::util::e2e;

fn manifest(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn root_or_skip() -> bool {
    if !e2e() {
        eprintln!("skipped: set PIGSTY_DNS_E2E=1 (needs root and unshare)");
        return false;
    }
    // SAFETY: geteuid has no preconditions.
    assert_eq!(unsafe { libc::geteuid() }, 0, "PIGSTY_DNS_E2E=1 needs root");
    true
}

/// `postinst configure` with `passwd_line` as the only account besides root, in a private mount
/// namespace; `adduser` is a stub that records its arguments.
fn postinst_with(passwd_line: &str) -> (Output, String) {
    let t = tempfile::tempdir().unwrap();
    let passwd = t.path().join("passwd");
    std::fs::write(
        &passwd,
        format!("root:x:0:0:root:/root:/bin/bash\n{passwd_line}"),
    )
    .unwrap();
    let bin = t.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let log = t.path().join("adduser.log");
    let stub = bin.join("adduser");
    std::fs::write(
        &stub,
        format!("#!/bin/sh\necho \"$@\" >> {}\n", log.display()),
    )
    .unwrap();
    std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new("unshare")
        .args(["--mount", "--", "sh", "-c"])
        .arg(r#"mount --bind "$1" /etc/passwd && PATH="$2:$PATH" exec sh "$3" configure"#)
        .arg("sh")
        .arg(&passwd)
        .arg(&bin)
        .arg(manifest("deploy/debian/postinst"))
        .output()
        .expect("unshare");
    (out, std::fs::read_to_string(&log).unwrap_or_default())
}

#[test]
fn postinst_refuses_a_login_account_named_pigsty_dns() {
    if !root_or_skip() {
        return;
    }
    // A human account of that name: not the service account, even though it exists.
    let (out, adduser) = postinst_with("pigsty-dns:x:1500:1500:Pat:/home/pigsty-dns:/bin/bash\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("uid 1500") && stderr.contains("not a system account"),
        "{stderr}"
    );
    assert!(stderr.contains("next: "), "{stderr}");
    assert!(adduser.is_empty(), "{adduser}");
    // A system account (adduser's default range 100-999): kept, adduser not run.
    let (out, adduser) =
        postinst_with("pigsty-dns:x:998:998:pigsty-dns:/nonexistent:/usr/sbin/nologin\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(adduser.is_empty(), "{adduser}");
    // None yet: adduser --system makes one.
    let (out, adduser) = postinst_with("");
    assert!(out.status.success());
    assert!(adduser.contains("--system"), "{adduser}");
}

/// `prerm remove` with a binary that never answers (as `route status` did on a FIFO status file): it
/// must end within its bounds instead of hanging `apt remove`. The stub is laid over /usr/bin by an
/// overlay in a private mount namespace.
#[test]
fn prerm_does_not_wait_forever_on_the_binary() {
    if !root_or_skip() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let stub_dir = t.path().join("stub");
    std::fs::create_dir(&stub_dir).unwrap();
    let stub = stub_dir.join("pigsty-dns");
    std::fs::write(&stub, "#!/bin/sh\nexec sleep 1000\n").unwrap();
    std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
    let t0 = std::time::Instant::now();
    let out = Command::new("timeout")
        .args(["-k", "5", "300", "unshare", "--mount", "--", "sh", "-c"])
        .arg(
            r#"mount -t overlay overlay -o "lowerdir=$1:/usr/bin" /usr/bin && exec sh "$2" remove"#,
        )
        .arg("sh")
        .arg(&stub_dir)
        .arg(manifest("deploy/debian/prerm"))
        .output()
        .expect("unshare");
    let took = t0.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(124), "prerm hung: {stderr}");
    assert!(took.as_secs() < 120, "prerm took {took:?}: {stderr}");
    // A call that timed out decided nothing: removal is refused, never taken as "no route".
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("did not answer within 30 s"), "{stderr}");
    assert!(stderr.contains("next: "), "{stderr}");
}

/// The crash hook of the route lifecycle tests (`PIGSTY_DNS_TEST_CRASH_AFTER`) is compiled only into
/// test builds (feature `test-support`): the release binary the package ships (`$PIGSTY_DNS_DEB`'s, else
/// `target/release/pigsty-dns` as deploy/debian/build-deb.sh builds it) does not know the variable.
#[test]
fn the_release_binary_has_no_crash_hook() {
    if !root_or_skip() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let bin = match std::env::var_os("PIGSTY_DNS_DEB") {
        Some(deb) => {
            let out = Command::new("sh")
                .args([
                    "-c",
                    r#"dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" ./usr/bin/pigsty-dns"#,
                ])
                .arg("sh")
                .arg(&deb)
                .arg(t.path())
                .output()
                .expect("dpkg-deb");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            t.path().join("usr/bin/pigsty-dns")
        }
        None => Path::new(crate::util::BIN)
            .parent()
            .and_then(Path::parent)
            .unwrap()
            .join("release/pigsty-dns"),
    };
    let bytes = std::fs::read(&bin).unwrap_or_else(|e| {
        panic!(
            "PIGSTY_DNS_E2E=1: {} ({e}): build it first (deploy/debian/build-deb.sh, or cargo build --release)",
            bin.display()
        )
    });
    let needle = b"PIGSTY_DNS_TEST_CRASH_AFTER";
    assert!(
        !bytes.windows(needle.len()).any(|w| w == needle),
        "{} still reads PIGSTY_DNS_TEST_CRASH_AFTER",
        bin.display()
    );
}
