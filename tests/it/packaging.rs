//! The packaging files checked without a package manager: the Homebrew formula parses (`ruby -c`; with
//! `PIGSTY_DNS_E2E=1` a missing ruby is a failure), names this version, and its `test do` sample passes
//! `check` with the real binary as the block asserts; the Debian maintainer scripts parse (`sh -n`).
//! The .deb itself is built by deploy/debian/build-deb.sh and installed for real in the pid1 lab.

use std::path::Path;
use std::process::Command;

use crate::util::{BIN, e2e};

fn manifest(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn formula() -> String {
    std::fs::read_to_string(manifest("deploy/homebrew/pigsty-dns.rb")).expect("read the formula")
}

#[test]
fn homebrew_formula_parses_with_ruby() {
    let path = manifest("deploy/homebrew/pigsty-dns.rb");
    let out = match Command::new("ruby").arg("-c").arg(&path).output() {
        Ok(out) => out,
        Err(e) if !e2e() => {
            eprintln!("skipped: no ruby ({e}); PIGSTY_DNS_E2E=1 makes this a failure");
            return;
        }
        Err(e) => panic!("PIGSTY_DNS_E2E=1: ruby -c needs ruby (apt-get install ruby): {e}"),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("Syntax OK"),
        "ruby -c {}: {stdout}{}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn homebrew_formula_builds_with_cargo_and_installs_what_the_binary_generates() {
    let f = formula();
    for want in [
        "class PigstyDns < Formula",
        &format!("pigsty-dns-{}.tar.gz\"", env!("CARGO_PKG_VERSION")),
        "depends_on \"rust\" => :build",
        "system \"cargo\", \"install\", *std_cargo_args",
        "generate_completions_from_executable(bin/\"pigsty-dns\", \"completions\")",
        "system bin/\"pigsty-dns\", \"man\", buildpath/\"man1\"",
        "man1.install",
        "pigsty-dns service install\n",
        "sudo pigsty-dns route install\n",
        "Not `brew services`",
    ] {
        assert!(f.contains(want), "the formula lacks {want:?}");
    }
}

/// The `test do` block's sample, and what it asserts, hold for the real binary.
#[test]
fn homebrew_test_block_sample_passes_check() {
    let f = formula();
    let start = f.find("<<~YAML\n").expect("the test block's sample") + "<<~YAML\n".len();
    let end = start + f[start..].find("    YAML\n").expect("its end");
    // <<~ strips the common indentation (six spaces here)
    let sample: String = f[start..end]
        .lines()
        .map(|l| format!("{}\n", l.strip_prefix("      ").unwrap_or(l)))
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("host-names.yml");
    std::fs::write(&path, &sample).expect("write the sample");
    let out = Command::new(BIN)
        .arg("check")
        .arg(&path)
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{sample}\n{text}");
    assert!(
        text.contains("valid for zones pigsty.test, pigsty"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("meta.pigsty.test"));
    assert!(
        line.is_some_and(|l| l.split_whitespace().nth(1) == Some("10.10.10.10")),
        "{text}"
    );
    let v = Command::new(BIN).arg("--version").output().expect("run");
    assert!(String::from_utf8_lossy(&v.stdout).contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn debian_maintainer_scripts_parse_and_leave_upgrades_alone() {
    for name in ["postinst", "prerm", "postrm"] {
        let path = manifest("deploy/debian").join(name);
        let out = Command::new("sh")
            .arg("-n")
            .arg(&path)
            .output()
            .expect("sh -n");
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.starts_with("#!/bin/sh\n"), "{name}");
        assert!(text.contains("set -e\n"), "{name}");
    }
    // prerm acts on `remove` only: `upgrade` must not stop the unit or take the route away.
    let prerm = std::fs::read_to_string(manifest("deploy/debian/prerm")).expect("read");
    let upgrade = prerm
        .lines()
        .find(|l| l.trim_start().starts_with("upgrade"))
        .expect("an upgrade case");
    assert_eq!(upgrade.trim(), "upgrade | deconfigure | failed-upgrade) ;;");
}
